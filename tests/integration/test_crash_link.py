#!/usr/bin/python3
"""A crash record found at start travels over the framed link (channel 2) and into the
capture, where `emb crash` reads it, end to end on the native port:

  1. transport_target --fault dies of SIGSEGV in fault_now(), leaving its record in the
     retained region file;
  2. the next start finds the record and sends it over its link as one channel 2 frame,
     then clears it (a third start finds none);
  3. `emb capture` over that link seals it as the capture's crash section;
  4. `emb crash --elf transport_target CAPTURE` names the fault: SIGSEGV, not mapped, at
     the address the target wrote to, in fault_now at its line.

Links: frames to a file (--file), a pseudo-terminal standing in for the UART (--serial),
and the TCP record server (--tcp), which sends the record to every client that connects.

Usage: test_crash_link.py EMB TRANSPORT_TARGET TARGET_SOURCE WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tty

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from tap import done, ok  # noqa: E402

EMB, TARGET, SOURCE, WORK = sys.argv[1:5]
COUNT = "300"
FAULT_LINE = next(i for i, l in enumerate(open(SOURCE), 1) if "transport_target: the seeded fault" in l)

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)


def fault(name):
    """The first run: dies in fault_now, the record stays in the region file."""
    region = os.path.join(WORK, name + ".region")
    r = subprocess.run([TARGET, "--crash-region", region, "--fault", "file",
                        os.path.join(WORK, name + ".first"), COUNT], capture_output=True, text=True)
    ok(r.returncode == -11, "%s: the first run dies of SIGSEGV (%d)" % (name, r.returncode))
    return region


def check_capture(name, cap, capture_err):
    ok("the target sent 1 crash record (channel 2)" in capture_err,
       "%s: emb capture counts the crash record frame (%s)" % (name, capture_err.strip()[-200:]))
    r = subprocess.run([EMB, "inspect", cap], capture_output=True, text=True)
    ok(r.returncode == 0 and "crash v1 (" in r.stdout, "%s: the capture has a crash section" % name)
    r = subprocess.run([EMB, "crash", "--color=never", "--elf", TARGET, cap],
                       capture_output=True, text=True)
    ok(r.returncode == 0 and r.stderr == "", "%s: emb crash reads the capture (%s)" % (name, r.stderr.strip()))
    text = r.stdout
    ok("fault      memory, SIGSEGV, address not mapped (SEGV_MAPERR), at address 0x10\n" in text,
       "%s: the fault: SIGSEGV, not mapped, at 0x10" % name)
    ok(any(l.startswith("pc ") and re.search(r" fault_now(\+0x[0-9a-f]+)? ", l) and
           "transport_target.c:%d" % FAULT_LINE in l for l in text.splitlines()),
       "%s: pc in fault_now at transport_target.c:%d" % (name, FAULT_LINE))
    r = subprocess.run([EMB, "crash", "--json", "--elf", TARGET, cap], capture_output=True, text=True)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    ok(doc.get("fault", {}).get("signal") == "SIGSEGV" and doc.get("pc", {}).get("frames", [{}])[0]
       .get("function") == "fault_now" and doc.get("flight", {}).get("events", 0) > 0,
       "%s: --json: SIGSEGV in fault_now, with its flight recorder" % name)


def check_cleared(name, region):
    r = subprocess.run([TARGET, "--crash-region", region, "file", os.path.join(WORK, name + ".third"), "10"],
                       capture_output=True, text=True)
    ok(r.returncode == 0 and "no crash record" in r.stdout,
       "%s: sent, the record was cleared: a third start finds none" % name)


# ---- a file ----
region = fault("file")
link = os.path.join(WORK, "file.link")
r = subprocess.run([TARGET, "--crash-region", region, "file", link, COUNT], capture_output=True, text=True)
ok(r.returncode == 0 and "sent the " in r.stdout, "file: the next start sends its record (%s)" % r.stdout.strip())
cap = os.path.join(WORK, "file.emb")
r = subprocess.run([EMB, "capture", "--file", link, "-o", cap], capture_output=True, text=True)
ok(r.returncode == 0, "file: emb capture seals")
check_capture("file", cap, r.stderr)
check_cleared("file", region)

# ---- a serial line: a pty pair ----
region = fault("serial")
master, slave = os.openpty()
tty.setraw(slave)
cap = os.path.join(WORK, "serial.emb")
p = subprocess.Popen([EMB, "capture", "--serial", os.ttyname(slave), "--baud", "921600", "-o", cap],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(0.5)  # the reader listens before the target starts
tgt = subprocess.run([TARGET, "--crash-region", region, "--linger", "500", "fd", str(master), COUNT],
                     capture_output=True, text=True, pass_fds=[master])
os.close(master)
so, se = p.communicate(timeout=60)
os.close(slave)
ok(tgt.returncode == 0 and "sent the " in tgt.stdout, "serial: the next start sends its record")
ok(p.returncode == 0, "serial: emb capture seals (%s)" % se.strip()[-200:])
check_capture("serial", cap, se)

# ---- the TCP record server: every client gets the record ----
region = fault("tcp")
portfile = os.path.join(WORK, "port")
token = os.path.join(WORK, "token")  # the TCP server serves a client that sends its secret
open(token, "w").write("crash-link-secret-%d\n" % os.getpid())
tgt = subprocess.Popen([TARGET, "--crash-region", region, "tcp", portfile, COUNT],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, EMB_SERVER_TOKEN=open(token).read().strip()))
for _ in range(500):
    if os.path.exists(portfile) and open(portfile).read().strip():
        break
    time.sleep(0.02)
port = open(portfile).read().strip()
cap = os.path.join(WORK, "tcp.emb")
r = subprocess.run([EMB, "capture", "--tcp", "127.0.0.1:" + port, "--token-file", token, "-o", cap],
                   capture_output=True,
                   text=True, timeout=60)
so, _ = tgt.communicate(timeout=60)
ok(tgt.returncode == 0 and "sent the " in so, "tcp: the next start sends its record")
ok(r.returncode == 0, "tcp: emb capture seals (%s)" % r.stderr.strip()[-200:])
check_capture("tcp", cap, r.stderr)

# ---- a capture without one ----
r = subprocess.run([EMB, "capture", "--file", os.path.join(WORK, "file.third"), "-o",
                    os.path.join(WORK, "none.emb")], capture_output=True, text=True)
r = subprocess.run([EMB, "crash", "--elf", TARGET, os.path.join(WORK, "none.emb")],
                   capture_output=True, text=True)
ok(r.returncode == 2 and "holds no crash section" in r.stderr,
   "a capture without a crash record: exit 2, said so (%s)" % r.stderr.strip())
done()
