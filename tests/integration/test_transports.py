#!/usr/bin/python3
"""End to end on the native port: transport_target streams a known trace over each
byte-stream transport and `emb capture` reads it back into a sealed capture, whose trace
must hold every event of both threads, in order, with nothing discarded.

  serial   a pseudo-terminal pair stands in for the UART: the target writes frames to the
           master, emb capture --serial opens the slave and sets the line with termios;
           and a late joiner that opens the line mid-frame recovers at the next header
  one-link log and trace on one pty: the deferred log's frames (channel 0) between the
           trace's (channel 1); the capture splits them, emb trace decodes every event and
           emb log every record, from --save-log and from the sealed capture itself
  tcp      the native port's TCP record server, one client, headers repeated
  pipe     frames through a pipe into emb capture --file -
  file     frames to a file, emb capture --file FILE
  swo      the file's trace stream and a log wrapped in ITM packets (stimulus ports 1
           and 0, synchronisation, local timestamps), read with emb capture --swo; and
           the same with an overflow that drops 64 bytes mid-packet
  retained the retained ring in a file mapped MAP_SHARED: the target keeps its trace and
           log frames there and dies (SIGKILL) in the middle of a log frame; the next
           start attaches, finds them, uploads them to a file; emb capture reads the
           upload, and the region itself with --retained; a small region wraps
  pid      the memory channel of the live process, read with process_vm_readv

Usage: test_transports.py EMB TRANSPORT_TARGET WORKDIR
"""
import json
import struct
import os
import pty
import re
import shutil
import subprocess
import sys
import time
import tty

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from tap import done, ok  # noqa: E402

EMB, TARGET, WORK = sys.argv[1:4]
COUNT = 3000


def check_trace(name, embt, complete=True):
    """Decodes the saved trace with emb trace --json and counts each thread's events."""
    r = subprocess.run([EMB, "trace", "--json", embt], capture_output=True, text=True)
    if not ok(r.returncode == 0, "%s: emb trace decodes the capture's stream (%s)"
              % (name, r.stderr.strip()[:200])):
        return
    doc = json.loads(r.stdout)
    per = {1: [], 2: []}
    for ev in doc["events"]:
        if ev.get("event") == "user_event":
            f = ev["fields"]
            per.setdefault(f["a"], []).append(f["b"])
    summary = doc["summary"]
    if complete:
        ok(per[1] == list(range(COUNT)) and per[2] == list(range(COUNT)),
           "%s: every event of both threads, in order (%d + %d)" % (name, len(per[1]), len(per[2])))
        ok(summary["discarded"] == 0 and summary["lost_packets"] == 0,
           "%s: nothing discarded, no packet lost" % name)
    elif complete is None:
        # One packet cut in the middle: each thread's events come in order, and what is
        # missing is one run of consecutive events (the cut packet's), from one thread.
        runs = []
        for t in (1, 2):
            missing = sorted(set(range(COUNT)) - set(per[t]))
            ordered = per[t] == sorted(set(per[t]))
            runs.append((ordered, missing))
        cut = [m for _, m in runs if m]
        ok(all(o for o, _ in runs) and len(cut) == 1 and
           cut[0] == list(range(cut[0][0], cut[0][-1] + 1)),
           "%s: only the cut packet's events are missing (%d + %d)"
           % (name, len(per[1]), len(per[2])))
    else:
        tail = per[1][-100:]
        ok(len(per[1]) > 0 and tail == list(range(COUNT - len(tail), COUNT)),
           "%s: joined late, the events after the join are all there (%d + %d)"
           % (name, len(per[1]), len(per[2])))


def capture(name, args, stdin=None, timeout=60):
    out = os.path.join(WORK, name + ".emb")
    embt = os.path.join(WORK, name + ".embt")
    cmd = [EMB, "capture", "-o", out, "--save-trace", embt, "--label", name] + args
    p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, out, embt


def finish(name, p, out, embt, complete=True):
    so, se = p.communicate(timeout=60)
    ok(p.returncode == 0, "%s: emb capture seals (%s)" % (name, (so + se).strip().replace("\n", " | ")[:300]))
    if p.returncode == 0:
        r = subprocess.run([EMB, "inspect", out], capture_output=True, text=True)
        ok(r.returncode == 0 and "label=" + name in r.stdout.replace(" ", ""),
           "%s: emb inspect reads the capture" % name)
        check_trace(name, embt, complete)
    return se


def crc16(data):
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def frames_of(data):
    """COBS frames, independently of the C decoder: [(channel, payload)], damaged count."""
    out, bad = [], 0
    for raw in data.split(b"\0")[:-1]:
        if not raw:
            continue  # an empty frame: a writer's leading delimiter
        dec, i = bytearray(), 0
        try:
            while i < len(raw):
                code = raw[i]
                dec += raw[i + 1:i + code]
                i += code
                if code < 255 and i < len(raw):
                    dec.append(0)
        except IndexError:
            bad += 1
            continue
        if len(dec) < 3 or crc16(dec[:-2]) != dec[-2] | dec[-1] << 8:
            bad += 1
            continue
        out.append((dec[0], bytes(dec[1:-2])))
    return out, bad


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

# ---- serial: a pty pair ----
for late in (False, True):
    name = "serial-late" if late else "serial"
    master, slave = os.openpty()
    tty.setraw(slave)  # the line is raw before any byte crosses it
    slave_path = os.ttyname(slave)
    tgt = subprocess.Popen([TARGET, "--wait-stdin", "--linger", "500", "fd", str(master), str(COUNT)],
                           stdin=subprocess.PIPE, pass_fds=[master])
    os.close(master)
    if late:
        tgt.stdin.write(b"g")
        tgt.stdin.flush()
        time.sleep(0.05)
        os.read(slave, 777)  # someone else took the first bytes: the reader joins mid-frame
    p, out, embt = capture(name, ["--serial", slave_path, "--baud", "921600"])
    time.sleep(0.5)
    if not late:
        tgt.stdin.write(b"g")
        tgt.stdin.flush()
    tgt.stdin.close()
    tgt.wait(timeout=60)
    se = finish(name, p, out, embt, complete=not late)
    ok("end of source" in se, "%s: the capture ends when the line hangs up" % name)
    os.close(slave)

# ---- one link: log and trace over the same pty ----
master, slave = os.openpty()
tty.setraw(slave)
slave_path = os.ttyname(slave)
tgt = subprocess.Popen([TARGET, "--wait-stdin", "--linger", "500", "--log", "--log-every", "25",
                        "--log-tail", "300", "fd", str(master), str(COUNT)],
                       stdin=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=[master])
os.close(master)
onelog = os.path.join(WORK, "one-link.log")
p, out, embt = capture("one-link", ["--serial", slave_path, "--baud", "921600", "--save-log", onelog])
time.sleep(0.5)
tgt.stdin.write(b"g")
tgt.stdin.flush()
tgt.stdin.close()
tgt_err = tgt.stderr.read().decode()
tgt.wait(timeout=60)
se = finish("one-link", p, out, embt)
os.close(slave)
ok(" 0 dropped, " in tgt_err and " 0 log frames dropped" in tgt_err,
   "one-link: the target wrote every trace and log frame (%s)" % tgt_err.strip())
sent = re.search(r"(\d+) frames, ", tgt_err)
got = re.search(r"(\d+) frames, ", se.split("stopped")[-1])
ok(sent and got and sent.group(1) == got.group(1),
   "one-link: the capture received every frame the target sent (%s of %s)"
   % (got and got.group(1), sent and sent.group(1)))
expect_main = list(range(0, COUNT, 25)) + list(range(COUNT, COUNT + 300))
expect_worker = list(range(0, COUNT, 25))
for what, path in (("--save-log", onelog), ("the sealed capture", out)):
    r = subprocess.run([EMB, "log", "--json", "--elf", TARGET, path], capture_output=True, text=True)
    recs = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    recs = [x for x in recs if x.get("type") == "log"]
    main = [int(x["text"].split()[1]) for x in recs if x["text"].startswith("log ")]
    worker = [int(x["text"].split()[1]) for x in recs if x["text"].startswith("log2 ")]
    ok(r.returncode == 0 and main == expect_main and worker == expect_worker
       and all(x["text"] == "log2 %d from worker" % n for x, n in
               zip([x for x in recs if x["text"].startswith("log2 ")], worker))
       and len(recs) == len(expect_main) + len(expect_worker),
       "one-link: emb log decodes every record of both threads from %s (%d + %d of %d + %d) %s"
       % (what, len(main), len(worker), len(expect_main), len(expect_worker), r.stderr.strip()[:200]))
fr, bad = frames_of(open(onelog, "rb").read())
ok(bad == 0 and fr and all(ch == 0 for ch, _ in fr),
   "one-link: the log section holds log frames only (%d frames, %d damaged)" % (len(fr), bad))

# ---- tcp and unix: the record server (who may connect: docs/security.md) ----
import socket  # noqa: E402
TOKEN = "transport-test-secret-42-" + str(os.getpid())
server_env = dict(os.environ, EMB_SERVER_TOKEN=TOKEN, XDG_RUNTIME_DIR=os.path.join(WORK, "run"))
os.makedirs(server_env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
os.chmod(server_env["XDG_RUNTIME_DIR"], 0o700)
tokenfile = os.path.join(WORK, "token")
open(tokenfile, "w").write(TOKEN + "\n")


def start_server(mode, name):
    portfile = os.path.join(WORK, name)
    if os.path.exists(portfile):
        os.unlink(portfile)
    tgt = subprocess.Popen([TARGET, mode, portfile, str(COUNT)], env=server_env)
    for _ in range(200):
        if os.path.exists(portfile) and open(portfile).read().strip():
            break
        time.sleep(0.02)
    return tgt, open(portfile).read().strip()


def served_bytes(sock, hello):
    """What a client that sends `hello` first (and a PING command frame: channel 3) gets in
    two seconds: the server must send nothing before the secret, and obey nothing."""
    sock.settimeout(2)
    got = b""
    try:
        sock.sendall(hello + bytes([0x02, 0x03]) + b"\x01\x00")
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except OSError:
        pass
    sock.close()
    return got


# A client without the token and one with a wrong token: nothing served, closed.
tgt, port = start_server("tcp", "port-hostile")
got = served_bytes(socket.create_connection(("127.0.0.1", int(port))), b"")
ok(got == b"", "tcp: a client that sends frames without the token gets nothing (%d bytes)" % len(got))
got = served_bytes(socket.create_connection(("127.0.0.1", int(port))),
                   b"EMB-TOKEN not-the-secret-at-all\n")
ok(got == b"", "tcp: a client with a wrong token gets nothing (%d bytes)" % len(got))
tgt.kill()
tgt.wait(timeout=10)
r = subprocess.run([EMB, "capture", "-o", os.path.join(WORK, "x.emb"), "--tcp", "127.0.0.1:1"],
                   capture_output=True, text=True)
ok(r.returncode == 2 and "--token-file" in r.stderr, "tcp: emb capture --tcp without --token-file: exit 2")
r = subprocess.run([TARGET, "tcp", os.path.join(WORK, "port-none"), "1"], capture_output=True,
                   text=True, env=dict(server_env, EMB_SERVER_TOKEN=""), timeout=30)
ok(r.returncode != 0, "tcp: an application given no token does not listen (%s)" % r.stderr.strip()[:80])

tgt, port = start_server("tcp", "port")
p, out, embt = capture("tcp", ["--tcp", "127.0.0.1:" + port, "--token-file", tokenfile])
tgt.wait(timeout=60)
se = finish("tcp", p, out, embt)
ok(tgt.returncode == 0, "tcp: the target ran to its end")

# The default listener: AF_UNIX, in a 0700 directory, the owner's uid only.
tgt, path = start_server("unix", "path-hostile")
ok(path.startswith(server_env["XDG_RUNTIME_DIR"] + "/emb-record-") and
   os.stat(path).st_mode & 0o077 == 0,
   "unix: the default socket is in the private runtime directory, owner-only (%s)" % path)
if os.geteuid() == 0 and shutil.which("setpriv"):
    # Opened up by hand (a misconfiguration): the uid check still refuses another user.
    os.chmod(server_env["XDG_RUNTIME_DIR"], 0o711)
    os.chmod(path, 0o666)
    code = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n"
            "s.settimeout(2)\ngot=b''\n"
            "try:\n  s.sendall(bytes([2,3,1,0]))\n  while True:\n    c=s.recv(65536)\n    if not c: break\n    got+=c\n"
            "except OSError: pass\nprint(len(got))")
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "/usr/bin/python3", "-c", code, path], capture_output=True, text=True,
                       timeout=30)
    ok(r.stdout.strip() == "0", "unix: a client of another uid (nobody) gets nothing (%s)"
       % (r.stdout + r.stderr).strip()[:120])
    os.chmod(server_env["XDG_RUNTIME_DIR"], 0o700)
tgt.kill()
tgt.wait(timeout=10)
tgt, path = start_server("unix", "path")
p, out, embt = capture("unix", ["--unix", path])
tgt.wait(timeout=60)
finish("unix", p, out, embt)
ok(tgt.returncode == 0 and not os.path.exists(path),
   "unix: the target ran to its end and removed its socket")

# ---- pipe ----
tgt = subprocess.Popen([TARGET, "fd", "1", str(COUNT)], stdout=subprocess.PIPE)
p, out, embt = capture("pipe", ["--file", "-"], stdin=tgt.stdout)
tgt.stdout.close()
tgt.wait(timeout=60)
finish("pipe", p, out, embt)

# ---- file ----
frames = os.path.join(WORK, "frames.bin")
subprocess.run([TARGET, "file", frames, str(COUNT)], check=True, timeout=60)
p, out, embt = capture("file", ["--file", frames])
finish("file", p, out, embt)
# The same file with damage: a byte in the middle of a few frames flipped.
data = bytearray(open(frames, "rb").read())
for k in range(1, 6):
    data[len(data) * k // 7] ^= 0x5A
damaged = os.path.join(WORK, "damaged.bin")
open(damaged, "wb").write(data)
p, out, embt = capture("damaged", ["--file", damaged])
so, se = p.communicate(timeout=60)
ok(p.returncode == 0 and "damaged frames" in se,
   "damaged frames are dropped and reported, the rest sealed (%s)" % se.strip().replace("\n", " | ")[:200])

# ---- swo: a raw SWO capture made from the file transport's trace stream ----
# ITM packets as ARMv7-M appendix D4 defines them: the trace stream in 4-byte stimulus
# packets on port 1 (1- and 2-byte ones for the tail), log text in 1-byte packets on
# port 0, synchronisation packets and local timestamps in between.
def itm(port, payload):
    code = {1: 1, 2: 2, 4: 3}[len(payload)]
    return bytes([(port << 3) | code]) + payload


def swo_capture(stream, log, drop_at=None):
    out = bytearray(b"\x00" * 5 + b"\x80")
    li = 0
    i = 0
    k = 0
    while i < len(stream):
        n = 4 if len(stream) - i >= 4 else (2 if len(stream) - i >= 2 else 1)
        if drop_at is not None and drop_at <= i < drop_at + 64:
            if i == drop_at:
                out += b"\x70"  # overflow: the ITM lost the packets that follow
            i += n
            continue
        out += itm(1, stream[i:i + n])
        i += n
        k += 1
        if k % 97 == 0:
            out += bytes([0x10 * (1 + k % 6)])  # a one-byte local timestamp
        if k % 13 == 0 and li < len(log):
            out += itm(0, log[li:li + 1])
            li += 1
        if k % 5000 == 0:
            out += b"\x00" * 6 + b"\x80"  # periodic synchronisation
    for ch in log[li:]:
        out += itm(0, bytes([ch]))
    return bytes(out)


stream = open(os.path.join(WORK, "file.embt"), "rb").read()
log = b"".join(b"log line %d from port 0\n" % j for j in range(40))


def middle_packet_cut(stream):
    """A byte inside a packet near the middle of the stream whose context has packets
    before and after it, so the decoder sees the cut packet's absence as a gap in that
    context's packet numbers (a context's first or last packet leaves no gap behind)."""
    header = struct.unpack_from("<H", stream, 6)[0]
    size = struct.unpack_from("<I", stream, 12)[0]
    ctx = [struct.unpack_from("<I", stream, header + k * size + 24)[0]
           for k in range((len(stream) - header) // size)]
    for m in range(len(ctx) // 2, len(ctx) - 1):
        if ctx[m] in ctx[:m] and ctx[m] in ctx[m + 1:]:
            return (header + m * size + 100) & ~3
    return None


for name, drop in (("swo", None), ("swo-overflow", middle_packet_cut(stream))):
    raw = os.path.join(WORK, name + ".swo")
    open(raw, "wb").write(swo_capture(stream, log, drop))
    p, out, embt = capture(name, ["--swo", raw])
    se = finish(name, p, out, embt, complete=True if drop is None else None)
    ok("%d log bytes" % len(log) in se, "%s: the port 0 log bytes all arrive" % name)
    if drop is None:
        ok(open(embt, "rb").read() == stream, "swo: the trace stream is byte for byte the file's")
    else:
        ok("1 SWO overflows" in se and "resynchronise" in se,
           "swo-overflow: the overflow is reported and the reader resynchronises")
        # The bytes the overflow dropped cut a packet: the decoder reports it, as a gap in
        # that context's packet numbers or, when the cut packet was a context's last, as
        # a packet it could not read.
        r = subprocess.run([EMB, "trace", "--json", "--summary", embt], capture_output=True, text=True)
        summary = json.loads(r.stdout)["summary"] if r.stdout else {}
        ok(r.returncode == 0 and summary.get("lost_packets", 0) >= 1,
           "swo-overflow: the packet cut by the overflow is counted lost (%s)" % summary)

# ---- retained: frames kept across a "reset" (SIGKILL) in a mapped file ----
def emb_log(path):
    """`emb log` on a frame stream: the numbers of the "log N" records, its exit status and
    its stderr."""
    r = subprocess.run([EMB, "log", "--json", "--elf", TARGET, path], capture_output=True, text=True)
    nums = [int(json.loads(l)["text"].split()[1]) for l in r.stdout.splitlines()
            if l.startswith("{") and json.loads(l).get("type") == "log"]
    return nums, r.returncode, r.stderr


region = os.path.join(WORK, "retained.region")
r = subprocess.run([TARGET, "--die", "retained", region, str(COUNT)], capture_output=True)
ok(r.returncode == -9, "retained: the target died in the middle of a log frame (%d)" % r.returncode)
# Straight from the region, as a probe would dump it after the reset.
p, out, embt = capture("retained-region", ["--retained", region])
se = finish("retained-region", p, out, embt)
ok("1 damaged frames" in se, "retained-region: the frame the reset cut is dropped and counted")
# The next start uploads what the ring kept.
upload = os.path.join(WORK, "retained.upload")
r = subprocess.run([TARGET, "upload", region, upload], capture_output=True, text=True)
ok(r.returncode == 0 and "intact=1" in r.stdout and "cut=1" in r.stdout and "dropped=0" in r.stdout,
   "retained: the next start finds the ring intact, one frame cut (%s)" % r.stdout.strip())
logfile = os.path.join(WORK, "retained.log")
p, out, embt = capture("retained", ["--file", upload, "--save-log", logfile])
se = finish("retained", p, out, embt)
fr, bad = frames_of(open(upload, "rb").read())
nums, rc, err = emb_log(upload)
ok(bad == 1 and nums == list(range(0, COUNT, 50)) and rc == 2 and "bad frame" in err,
   "retained: emb log decodes every log record, in order; the frame the reset cut is "
   "reported (%s)" % err.strip().splitlines()[0][:120])
lf, lbad = frames_of(open(logfile, "rb").read())
nums, rc, err = emb_log(logfile)
ok(lbad == 0 and all(ch == 0 for ch, _ in lf) and nums == list(range(0, COUNT, 50)) and rc == 0,
   "retained: --save-log keeps the log frames; emb log decodes them cleanly")
r = subprocess.run([TARGET, "upload", region, upload], capture_output=True, text=True)
ok("intact=1 bytes=0 starts=2" in r.stdout, "retained: uploaded frames are cleared (%s)" % r.stdout.strip())
r = subprocess.run([EMB, "capture", "-o", os.path.join(WORK, "x.emb"), "--retained", upload],
                   capture_output=True, text=True)
ok(r.returncode == 2 and "no retained ring" in r.stderr,
   "--retained of no region: %s" % r.stderr.strip().splitlines()[-1])
# A small region wraps: the newest frames survive, the oldest are dropped and counted.
# The trace, then 3000 log lines after it: the newest frames are the last log lines.
small = os.path.join(WORK, "retained-small.region")
subprocess.run([TARGET, "--region", "32768", "--log-every", "0", "--log-tail", "3000",
                "retained", small, str(COUNT)], check=True, timeout=60)
r = subprocess.run([TARGET, "--region", "32768", "upload", small, upload], capture_output=True, text=True)
dropped = int(r.stdout.split("dropped=")[1].split()[0]) if "dropped=" in r.stdout else 0
fr, bad = frames_of(open(upload, "rb").read())
nums, rc, err = emb_log(upload)
last = COUNT + 3000 - 1
ok(bad == 0 and dropped > 0 and len(nums) > 1000 and nums == list(range(nums[0], last + 1))
   and all(ch == 0 for ch, _ in fr),
   "retained-small: only the newest frames, log lines %s..%s, consecutive, %d older frames dropped"
   % (nums[0] if nums else None, nums[-1] if nums else None, dropped))
r = subprocess.run([EMB, "capture", "-o", os.path.join(WORK, "x.emb"), "--file", upload,
                    "--save-log", os.path.join(WORK, "small.log")], capture_output=True, text=True)
lnums, _, _ = emb_log(os.path.join(WORK, "small.log"))
ok(r.returncode == 2 and "nothing to seal" in r.stderr and lnums == nums,
   "retained-small: no trace left to seal, but --save-log keeps the log frames")

# ---- pid: the memory channel of a live process ----
pidfile = os.path.join(WORK, "pid")
tgt = subprocess.Popen([TARGET, "memchan", pidfile, str(COUNT)], stdin=subprocess.PIPE)
for _ in range(200):
    if os.path.exists(pidfile) and open(pidfile).read().strip():
        break
    time.sleep(0.02)
pid = open(pidfile).read().strip()
p, out, embt = capture("pid", ["--pid", pid, "--duration", "5"])
time.sleep(0.3)
tgt.stdin.write(b"g")
tgt.stdin.flush()
finish("pid", p, out, embt)
tgt.stdin.close()
tgt.wait(timeout=60)

r = subprocess.run([EMB, "capture", "-o", os.path.join(WORK, "x.emb"), "--pid", "999999999"],
                   capture_output=True, text=True)
ok(r.returncode == 2 and "no process" in r.stderr, "--pid of no process: %s" % r.stderr.strip())
r = subprocess.run([EMB, "capture", "-o", os.path.join(WORK, "x.emb"), "--tcp", "127.0.0.1:1",
                    "--token-file", tokenfile], capture_output=True, text=True)
ok(r.returncode == 2 and "cannot connect" in r.stderr, "--tcp to a closed port: %s" % r.stderr.strip())
r = subprocess.run([EMB, "capture", "-o", os.path.join(WORK, "x.emb"), "--serial", "/dev/null-nope"],
                   capture_output=True, text=True)
ok(r.returncode == 2 and "cannot open" in r.stderr, "--serial of no device: %s" % r.stderr.strip())
# An error names its source once: the command says which, the message what went wrong.
for args, name in ((["--serial", "/dev/null-nope"], "/dev/null-nope"),
                   (["--file", "/dev/null-nope"], "/dev/null-nope"),
                   (["--pid", "999999999"], "999999999"),
                   (["--tcp", "127.0.0.1:1", "--token-file", tokenfile], "127.0.0.1:1")):
    r = subprocess.run([EMB, "capture", "-o", os.path.join(WORK, "x.emb")] + args,
                       capture_output=True, text=True)
    ok(r.returncode == 2 and r.stderr.count(name) == 1, "%s: the source named once: %s" % (args[0], r.stderr.strip()))

done()
