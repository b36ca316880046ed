#!/usr/bin/python3
"""The Cortex-M ITM writer end to end, against a model of the ITM (QEMU has none): itm_e2e
runs ports/cortex-m/itm.c on the native port with its registers sent to the model, which
writes the SWO byte stream the ITM and the TPIU would have put out (instrumentation packets
of 1, 2 and 4 bytes, synchronisation packets, local timestamps). `emb capture --swo` reads
that stream; `emb trace` must find every event of both threads and `emb log` every log
record, text for text.

  on       every event and record; the writer waited whenever the FIFO was full and never
           wrote into a full one; words where it could, 8- and 16-bit writes only for tails
  log-off  port 0 disabled: every log frame dropped and counted, none written; the trace whole
  itm-off  the ITM disabled: everything dropped and counted, no wait, no hang
  toggle   the ITM switched off and on again during the run (toggle-log: while the log's
           frames go out): the process ends, the capture seals, what arrived decodes in
           order, each damaged log frame is a frame the writer cut or a write the ITM
           ignored after the writer's poll (the model counts those: no writer can see them),
           and each lost packet is counted lost (a context's last ones: by what is missing)

Usage: test_itm.py EMB ITM_E2E WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from tap import done, ok  # noqa: E402

EMB, TARGET, WORK = sys.argv[1:4]
COUNT = 3000
LOG_EVERY = 10


def run(mode):
    swo = os.path.join(WORK, mode + ".swo")
    r = subprocess.run([TARGET, mode, swo, str(COUNT)], capture_output=True, text=True, timeout=60)
    ok(r.returncode == 0, "%s: itm_e2e ran to its end (%s)" % (mode, r.stderr.strip()[:200]))
    st = dict(l.split("=", 1) for l in r.stdout.split() if "=" in l)
    return swo, {k: int(v) for k, v in st.items()}


def capture(mode, swo):
    out = os.path.join(WORK, mode + ".emb")
    embt = os.path.join(WORK, mode + ".embt")
    log = os.path.join(WORK, mode + ".log")
    r = subprocess.run([EMB, "capture", "-o", out, "--save-trace", embt, "--save-log", log,
                        "--swo", swo], capture_output=True, text=True, timeout=60)
    return r, out, embt, log


def events(embt):
    r = subprocess.run([EMB, "trace", "--json", embt], capture_output=True, text=True)
    doc = json.loads(r.stdout) if r.stdout else {"events": [], "summary": {}, "contexts": []}
    per = {1: [], 2: []}
    for ev in doc["events"]:
        if ev.get("event") == "user_event":
            f = ev["fields"]
            per.setdefault(f["a"], []).append((f["id"], f["b"]))
    summary = dict(doc["summary"])
    # Packets lost before a context's first one held (its first packet, sent as the ITM
    # went off) show as its first packet_seq_num, not as a gap.
    summary["earlier_packets"] = sum(c.get("first_seq", 0) for c in doc.get("contexts", []))
    return r.returncode, per, summary


def records(path):
    r = subprocess.run([EMB, "log", "--json", "--elf", TARGET, path], capture_output=True, text=True)
    recs = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    return r.returncode, [x for x in recs if x.get("type") == "log"], r.stderr


def texts(recs, prefix):
    return [x["text"] for x in recs if x["text"].startswith(prefix)]


def expected_texts():
    main = ["itm %d from main" % i for i in range(0, COUNT, LOG_EVERY)]
    worker = ["itm2 %d x=%d" % (i, -i) for i in range(0, COUNT, LOG_EVERY)]
    return main, worker


def in_order_subset(got, want):
    it = iter(want)
    return all(any(g == w for w in it) for g in got)


def packet_sizes(mode, st, port, name):
    # Words where it can. A trace header or packet is one write of one buffer: at most one
    # 16-bit and one 8-bit store for its tail. A log frame reaches the writer in pieces (its
    # COBS blocks, as the drain hands them over), each with a tail of its own, and a lone
    # leading delimiter is a 1-byte store of no frame: there, all but a few bytes in words.
    w = st[name + "_writes"] + st[name + "_dropped"]
    p1, p2, p4 = (st["model_port%d_%d" % (port, k)] for k in (1, 2, 4))
    total = st["model_port%d_bytes" % port]
    tails = p1 <= w and p2 <= w if name == "trace" else p4 * 4 >= total * 0.95
    ok(tails and p4 * 4 + p2 * 2 + p1 == total and total == st[name + "_bytes"] and p4 > 0,
       "%s: port %d: %d 4-byte, %d 2-byte, %d 1-byte writes for %d writes of %d bytes"
       % (mode, port, p4, p2, p1, w, st[name + "_bytes"]))


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
want_main, want_worker = expected_texts()
want_events = [(i & 0xFFFF, i) for i in range(COUNT)]

# ---- on: everything arrives ----
swo, st = run("on")
ok(st["log_dropped"] == 0 and st["trace_dropped"] == 0 and st["log_ring_dropped"] == 0,
   "on: nothing dropped (%d log frames, %d trace headers and packets)"
   % (st["log_writes"], st["trace_writes"]))
ok(st["model_violations"] == 0 and st["model_busy"] > 0 and
   st["log_waits"] + st["trace_waits"] == st["model_busy"],
   "on: the writer waited at each of the %d polls that found the FIFO full and never wrote "
   "into a full FIFO" % st["model_busy"])
ok(st["model_ignored"] == 0, "on: no write the ITM ignored")
ok(st["model_syncs"] > 1 and st["model_timestamps"] > 0,
   "on: the stream holds %d synchronisation packets and %d local timestamps"
   % (st["model_syncs"], st["model_timestamps"]))
packet_sizes("on", st, 0, "log")
packet_sizes("on", st, 1, "trace")
r, out, embt, log = capture("on", swo)
ok(r.returncode == 0 and "resynchronise" not in r.stderr,
   "on: emb capture --swo seals (%s)" % r.stderr.strip().replace("\n", " | ")[:300])
ok("%d log bytes" % st["log_bytes"] in r.stderr, "on: every byte of port 0 is in the log section")
rc, per, summary = events(embt)
ok(rc == 0 and per[1] == want_events and per[2] == want_events,
   "on: emb trace: every event of both threads, in order (%d + %d)" % (len(per[1]), len(per[2])))
ok(summary.get("discarded") == 0 and summary.get("lost_packets") == 0,
   "on: nothing discarded, no packet lost (%s)" % summary)
for what, path in (("the sealed capture", out), ("--save-log", log)):
    rc, recs, err = records(path)
    ok(rc == 0 and texts(recs, "itm ") == want_main and texts(recs, "itm2 ") == want_worker
       and len(recs) == len(want_main) + len(want_worker),
       "on: emb log on %s: every record's text (%d of %d) %s"
       % (what, len(recs), len(want_main) + len(want_worker), err.strip()[:200]))
levels = {x["text"].split()[0]: x.get("level") for x in recs}
ok(levels.get("itm") == "INF" and levels.get("itm2") == "WRN", "on: levels kept (%s)" % levels)

# ---- log-off: port 0 disabled in ITM_TER ----
swo, st = run("log-off")
ok(st["log_writes"] == 0 and st["log_dropped"] > 0 and st["log_bytes"] == 0 and
   st["model_port0_bytes"] == 0 and st["log_waits"] == 0,
   "log-off: every log frame dropped and counted (%d), none written, no wait" % st["log_dropped"])
ok(st["model_ignored"] == 0, "log-off: the writer never wrote into the disabled port")
r, out, embt, log = capture("log-off", swo)
rc, per, summary = events(embt)
ok(r.returncode == 0 and per[1] == want_events and per[2] == want_events,
   "log-off: the trace on port 1 is whole (%d + %d)" % (len(per[1]), len(per[2])))
rc, recs, err = records(out)
ok(rc == 2 and "no log section" in err, "log-off: emb log says the capture has no log (%s)" % err.strip())

# ---- itm-off: ITM_TCR.ITMENA clear ----
swo, st = run("itm-off")
ok(st["log_dropped"] > 0 and st["trace_dropped"] >= 128 and st["log_writes"] == 0 and
   st["trace_writes"] == 0 and st["model_polls"] == 0 and st["swo_bytes"] == 0,
   "itm-off: everything dropped and counted (%d log frames, %d trace headers and packets), "
   "no FIFO poll, no hang" % (st["log_dropped"], st["trace_dropped"]))
r, out, embt, log = capture("itm-off", swo)
ok(r.returncode == 2 and "nothing to seal" in r.stderr,
   "itm-off: emb capture --swo of the empty stream: %s" % r.stderr.strip().splitlines()[-1])

# ---- toggle: the ITM switched off and on during the run ----
# toggle: every 3000 writes to any port (mostly the trace's); toggle-log: every 300 writes
# to port 0, so log frames are cut on their way.
for mode in ("toggle", "toggle-log"):
    swo, st = run(mode)
    cut = st["trace_cut"] if mode == "toggle" else st["log_cut"]
    ok(st["model_switched_off"] >= 3 and cut >= 1 and st["model_violations"] == 0,
       "%s: the ITM went off %d times; %d trace and %d log writes cut on the way, %d and %d "
       "dropped whole" % (mode, st["model_switched_off"], st["trace_cut"], st["log_cut"],
                          st["trace_dropped"] - st["trace_cut"], st["log_dropped"] - st["log_cut"]))
    r, out, embt, log = capture(mode, swo)
    ok(r.returncode == 0 and ("resynchronise" in r.stderr or st["trace_cut"] == 0),
       "%s: emb capture --swo skips the cut packets and seals (%s)"
       % (mode, r.stderr.strip().replace("\n", " | ")[:300]))
    rc, per, summary = events(embt)
    # A dropped header costs no event; a dropped or cut packet does, and shows as lost. So
    # does a write the ITM ignored: it went off after the writer's poll had found it ready
    # (the other thread's write switched it off in between, as a debugger may at any
    # moment), which no writer can see; the model counts those per port.
    lost = st["trace_dropped"] > 0 or st["model_port1_ignored"] > 0
    n = len(per[1]) + len(per[2])
    # Lost packets show as packet_seq_num gaps; a context's first ones as its first
    # packet's number (earlier_packets); its last ones (the final flush's, sent as the ITM
    # went off) by nothing a later packet says, so the events that arrived are then the
    # first ones, every one.
    tail_lost = lost and all(per[k] == want_events[:len(per[k])] for k in (1, 2))
    counted = summary.get("lost_packets", 0) + summary["earlier_packets"]
    ok(rc == 0 and in_order_subset(per[1], want_events) and in_order_subset(per[2], want_events)
       and n > 0 and (lost or n == 2 * COUNT) and (lost or counted == 0)
       and (n == 2 * COUNT or counted > 0 or tail_lost),
       "%s: the events that arrived are in order (%d + %d), %d packets counted lost, %d "
       "before a context's first" % (mode, len(per[1]), len(per[2]),
                                     summary.get("lost_packets", 0), summary["earlier_packets"]))
    rc, recs, err = records(log)
    bad = err.count("bad frame")
    m, w = texts(recs, "itm "), texts(recs, "itm2 ")
    # Each damaged frame has bytes missing: a frame the writer cut (counted in log_cut), or
    # a write the ITM ignored after the writer's poll (model_port0_ignored, which the
    # writer cannot count). Either is one gap in the byte stream, and a gap damages at most
    # the one frame around it (frames it merges by taking a delimiter are one bad frame);
    # none when only a cut frame's delimiter was lost (the delimiter the writer puts
    # before the next frame then completes it), which depends on where the ITM went off.
    gaps = st["log_cut"] + st["model_port0_ignored"]
    ok(in_order_subset(m, want_main) and in_order_subset(w, want_worker) and len(recs) > 0
       and bad <= gaps and
       (st["log_dropped"] + st["model_port0_ignored"] > 0 or
        len(m) + len(w) == len(want_main) + len(want_worker)),
       "%s: emb log decodes the records that arrived, in order (%d), %d damaged frames for "
       "%d cut and %d writes the ITM ignored" % (mode, len(recs), bad, st["log_cut"],
                                                  st["model_port0_ignored"]))

# ---- cut-header: the first stream header cut short on port 1 ----
# The ITM goes off once, inside the header the streaming worker sends first. The capture
# must skip the cut header as it skips a cut packet (the packets before the next header,
# which repeats every 8 packets, cannot be read), and decode from the next whole one on.
swo, st = run("cut-header")
ok(st["trace_cut"] == 1 and st["model_switched_off"] == 1,
   "cut-header: the first header was cut (%d cut, ITM off %d times)"
   % (st["trace_cut"], st["model_switched_off"]))
r, out, embt, log = capture("cut-header", swo)
ok(r.returncode == 0 and "resynchronise" in r.stderr,
   "cut-header: emb capture --swo skips the cut header and seals (%s)"
   % r.stderr.strip().replace("\n", " | ")[:300])
rc, per, summary = events(embt)
ok(rc == 0 and in_order_subset(per[1], want_events) and in_order_subset(per[2], want_events)
   and 0 < len(per[1]) + len(per[2]) < 2 * COUNT,
   "cut-header: the events after the next whole header decode, in order (%d + %d)"
   % (len(per[1]), len(per[2])))

done()
