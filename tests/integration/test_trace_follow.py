#!/usr/bin/env python3
"""`emb trace --follow` against a writer that appends while it reads: trace_known's stream
(the native port's library, several contexts) written to a file in chunks of random size,
cut anywhere (inside the header, inside packets), while `emb trace --follow` prints NDJSON
and text; every record of the finished file's own decoding arrives exactly once, each
context's in order, the first ones before the writer has finished; then the same through a
pipe, which ends at its end.

usage: test_trace_follow.py EMB TRACE_KNOWN SCRATCH_DIR"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

emb, known, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)
passed = failed = 0


def ok(cond, what):
    global passed, failed
    n = passed + failed + 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what))
    if cond:
        passed += 1
    else:
        failed += 1


src = os.path.join(tmp, "known.embt")
subprocess.run([known, src, "400", "300"], check=True)
whole = open(src, "rb").read()


def reference(fmt):
    return subprocess.run([emb, "trace", "-f", fmt, src], capture_output=True, check=True).stdout.splitlines()


def follow_while_writing(fmt, seed):
    """The reader's lines, how many it had printed when the writer finished, its status."""
    path = os.path.join(tmp, "growing-%s.embt" % fmt)
    rng = random.Random(seed)
    with open(path, "wb") as f:
        f.write(whole[:rng.randint(1, 300)])   # the header, cut short or not
    reader = subprocess.Popen([emb, "trace", "--follow", "-f", fmt, path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    lines = []
    pump = threading.Thread(target=lambda: lines.extend(reader.stdout))
    pump.start()
    with open(path, "ab") as f:
        pos = f.tell()
        waited = False
        while pos < len(whole):
            if pos > len(whole) // 2 and not waited:
                # Half written: the rest only once the reader has printed what arrived, so
                # the order proves it prints as the file grows (20 s at most).
                for _ in range(400):
                    if lines:
                        break
                    time.sleep(0.05)
                waited = True
            n = rng.randint(1, 6000)
            f.write(whole[pos:pos + n])
            f.flush()
            pos += n
            time.sleep(0.005)
    before_end = len(lines)
    # The end at once: the reader takes a last look at the file after the signal, so
    # whatever it had not printed yet (the last packet, cut short as a dump ends) comes now.
    reader.send_signal(signal.SIGINT)
    pump.join(timeout=20)
    reader.wait(timeout=20)
    return [l.rstrip(b"\n") for l in lines], before_end, reader.returncode, reader.stderr.read()


def per_context(lines):
    by = {}
    for l in lines:
        r = json.loads(l)
        by.setdefault(r["context"], []).append(l)
    return by


ref = reference("ndjson")
got, before_end, rc, err = follow_while_writing("ndjson", 1)
ok(rc == 0 and err == b"", "emb trace --follow -f ndjson ends at SIGINT with status 0 (%d, %r)" % (rc, err[:200]))
ok(len(got) == len(ref) and sorted(got) == sorted(ref),
   "every record exactly once: %d of %d" % (len(got), len(ref)))
ok(per_context(got) == per_context(ref) and len(per_context(ref)) > 1,
   "each of the %d contexts' records in its own order" % len(per_context(ref)))
ok(0 < before_end, "records printed while the file grew: %d before the writer finished" % before_end)

ref_text = reference("text")
got_text, before_end, rc, err = follow_while_writing("text", 2)
ok(rc == 0 and len(got_text) == len(ref_text) and sorted(l.split() for l in got_text) ==
   sorted(l.split() for l in ref_text), "text: every line once (%d of %d)" % (len(got_text), len(ref_text)))

pipe = subprocess.run([emb, "trace", "--follow", "-f", "ndjson", "-"], input=whole, capture_output=True,
                      timeout=60)
ok(pipe.returncode == 0 and pipe.stdout.splitlines() == ref, "from a pipe: to its end, the same records")
bad = subprocess.run([emb, "trace", "--follow", "--json", src], capture_output=True)
ok(bad.returncode == 2 and b"--follow" in bad.stderr, "--follow with --json is a usage error (exit 2)")
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
