#!/usr/bin/env python3
"""The mutation experiment on a real stream file: the console demo streams a trace, then
single bytes of it are changed one at a time (every byte of the fixed header, and a fixed
random sample of the rest: header, context table, packets and their CRCs) and each mutant is decoded by `emb trace`.
No mutant may decode silently: each must either exit non-zero or print exactly what the
original printed. (On a version-1 file with no CRCs, most single-byte changes decoded
with exit 0 and changed values.) A snapshot dump is checked the same way, more sparsely.

usage: test_trace_mutations.py EMB CONSOLE WORKDIR
"""
import os
import random
import shutil
import struct
import subprocess
import sys

emb, console, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failed = 0
n = 0


def ok(cond, what):
    global failed, n
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what))
    if not cond:
        failed += 1


def decode(path):
    p = subprocess.run([emb, "trace", "-f", "ndjson", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def experiment(name, console_args, sample):
    path = os.path.join(work, name + ".embt")
    subprocess.run([console] + console_args + ["-o", path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    original = open(path, "rb").read()
    rc, out, err = decode(path)
    ok(rc == 0 and out, "%s: the original decodes (%d bytes, exit %d)" % (name, len(original), rc))
    ok(struct.unpack_from("<H", original, 4)[0] == 2,
       "%s: the port wrote a sealed file (version 2, docs/formats/trace.md)" % name)
    first = set(range(112))  # the fixed header (EMB_TSF_FIXED_SIZE)
    rng = random.Random(14)
    rest = [i for i in range(len(original)) if i not in first]
    offsets = sorted(first | set(rng.sample(rest, min(sample, len(rest)))))
    mutant = os.path.join(work, name + ".mutant.embt")
    silent = []
    refused = 0
    for i in offsets:
        data = bytearray(original)
        data[i] ^= 1 << rng.randrange(8) if i % 2 else 0xFF
        open(mutant, "wb").write(data)
        rc, mout, merr = decode(mutant)
        if rc != 0:
            refused += 1
            if b"byte" not in merr:
                silent.append((i, "exit %d with no byte offset: %s" % (rc, merr[:120])))
        elif mout != out:
            silent.append((i, "exit 0 with changed output"))
    # A damaged packet is named by its own offset in the file: header size + k (P + 4).
    header = struct.unpack_from("<H", original, 6)[0]
    packet = struct.unpack_from("<I", original, 12)[0]
    start = header + 3 * (packet + 4)
    data = bytearray(original)
    data[start + 100] ^= 0x10
    open(mutant, "wb").write(data)
    rc, mout, merr = decode(mutant)
    ok(rc == 2 and (b"byte %d: packet CRC-32" % start) in merr,
       "%s: a change inside packet 3 is reported at byte %d, the packet's start: %s"
       % (name, start, merr.splitlines()[0][:160] if merr else b""))
    for i, why in silent[:10]:
        print("# byte %d: %s" % (i, why))
    ok(not silent, "%s: %d single-byte mutations, %d refused with an offset, %d silent"
       % (name, len(offsets), refused, len(silent)))


experiment("stream", ["--frames", "40"], 700)
experiment("dump", ["--mode", "snapshot", "--frames", "40"], 250)
print("%d passed, %d failed" % (n - failed, failed))
sys.exit(1 if failed else 0)
