#!/usr/bin/env python3
"""`emb events serve --intake-fd NAME=FD`: each intake is bound to the service it was granted
to. Messages are built here from docs/formats/svc-events.md (EVENT [1][seq][at_s][caller:12]
[peer:12][op][kind], STATUS reply layout), not with the project's encoder.

  1. an emitter granted as `client` sending an EVENT, METRIC and LOG that name `fs`: each is
     refused and counted in `faults`; nothing of it is stored;
  2. its own events are stored, and events sent alternately on two intakes come out of DUMP
     in the order they were sent (the sink merges intakes by the kernel's stamps);
  3. a datagram claiming seq 0xFFFFFFFF after seq 2 is no loss (the audit saw 4294967292
     dropped): it is a fault of that emitter.

Usage: events_bound.py EMB WORKDIR
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from tap import done, ok  # noqa: E402

EMB, WORK = sys.argv[1], sys.argv[2]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK, mode=0o700)
os.chmod(WORK, 0o700)


def name(n, cell=12):
    return n.encode().ljust(cell, b"\0")[:cell]


def event(seq, caller, peer="block-driver", kind=1):
    return bytes([1]) + struct.pack("<II", seq, 0) + name(caller) + name(peer) + bytes([0, kind])


def metric(owner, mname, value):
    return bytes([4]) + name(owner) + name(mname, 20) + struct.pack("<Q", value)


def log(owner, text):
    return bytes([6]) + name(owner) + text.encode()


client_sink, client_emit = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
fs_sink, fs_emit = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
sock = os.path.join(WORK, "events.sock")
serve = subprocess.Popen([EMB, "events", "serve", "--socket", sock,
                          "--intake-fd", "client=%d" % client_sink.fileno(),
                          "--intake-fd", "fs=%d" % fs_sink.fileno()],
                         pass_fds=(client_sink.fileno(), fs_sink.fileno()),
                         stderr=subprocess.PIPE, text=True)
client_sink.close()
fs_sink.close()
for _ in range(200):
    if os.path.exists(sock):
        break
    time.sleep(0.02)


def query(q):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    s.send(q)
    r = s.recv(65536)
    s.close()
    return r


def status():
    r = query(b"\x03")
    cap, accepted, dropped, held, malformed = struct.unpack_from("<IQQIQ", r)
    faults = struct.unpack_from("<Q", r, 32)[0] if len(r) >= 40 else None
    return dict(accepted=accepted, dropped=dropped, malformed=malformed, faults=faults)


def settle():
    time.sleep(0.2)


# 1. client speaks as fs.
client_emit.send(event(1, "fs"))
client_emit.send(metric("fs", "reads", 7))
client_emit.send(log("fs", "I am fs"))
settle()
st = status()
ok(st["accepted"] == 0 and st["faults"] == 3,
   "an emitter granted as client naming fs: refused, 3 faults (%s)" % st)
ok(query(b"\x05") == b"" and b"I am fs" not in query(b"\x07"),
   "no metric and no log line of it was stored")

# 2. Own names are taken, in the order sent across both intakes.
order = []
for i in range(1, 41):
    if i % 2:
        client_emit.send(event((i + 1) // 2, "client", "fs"))
        order.append(("client", (i + 1) // 2))
    else:
        fs_emit.send(event(i // 2, "fs"))
        order.append(("fs", i // 2))
settle()
dump = query(b"\x02\x28")
got = [(dump[k + 8:k + 20].rstrip(b"\0").decode(), struct.unpack_from("<I", dump, k)[0])
       for k in range(0, len(dump), 34)]
ok(got == order, "40 events sent alternately on two intakes come out in the order sent (%s)"
   % (got[:6],))
st = status()
ok(st["accepted"] == 40 and st["dropped"] == 0 and st["faults"] == 3,
   "all 40 accepted, none dropped, no new fault (%s)" % st)

# 3. The audit's datagram: fs, seq 0xFFFFFFFF.
fs_emit.send(event(0xFFFFFFFF, "fs"))
settle()
st = status()
ok(st["dropped"] == 0 and st["faults"] == 4,
   "seq 0xFFFFFFFF after 20 is no loss but a fault (%s)" % st)
r = subprocess.run([EMB, "events", "status", "--socket", sock], capture_output=True, text=True)
ok(r.returncode == 0 and "faults     4" in r.stdout, "emb events status shows the faults")

serve.terminate()
serve.wait(timeout=10)
ok(serve.returncode == 0, "serve stops on SIGTERM")
done()
