#!/usr/bin/env bash
# End to end: trace_known records a known sequence with the real library (native port)
# and dumps it; `emb trace` decodes it in every format and each output is checked against
# the sequence, event for event; babeltrace2 reads the CTF directory and must agree with
# emb on every event. A second run with 4-packet rings checks what a snapshot keeps after
# wrapping: the newest packets, whole, ending with the last event recorded.
# usage: test_trace_e2e.sh EMB TRACE_KNOWN SCRATCH_DIR
set -u
emb=$1 known=$2 tmp=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$tmp" && mkdir -p "$tmp"
. "$here/../support/tap_check.sh"

frames=500 writes=300
"$known" "$tmp/known.embt" $frames $writes; ok $? "trace_known recorded and dumped"

"$emb" trace "$tmp/known.embt" >"$tmp/known.txt" 2>"$tmp/err"; ok $? "emb trace exits 0 on a clean trace"
[ ! -s "$tmp/err" ]; ok $? "nothing on stderr (no loss, no error)"
"$emb" trace -f ndjson -o "$tmp/known.ndjson" "$tmp/known.embt"; ok $? "ndjson"
"$emb" trace --json -o "$tmp/known.json" "$tmp/known.embt"; ok $? "--json"
"$emb" trace --json --summary -o "$tmp/known.header.json" "$tmp/known.embt"; ok $? "--json --summary"
"$emb" trace -f perfetto -o "$tmp/known.perfetto.json" "$tmp/known.embt"; ok $? "perfetto"
"$emb" trace -f ctf -o "$tmp/ctf" "$tmp/known.embt"; ok $? "ctf"

python3 - "$tmp" $frames $writes <<'PY'
import json, re, sys
tmp, frames, writes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def expected_main():
    yield ("obj_init", "thread", 0, {"type": "queue", "handle": 0x51, "name": "known-queue"})
    for i in range(frames):
        yield ("frame_start", "thread", 0, {"frame": i})
        yield ("user_event", "thread", 0, {"id": 1, "a": i, "b": 7 * i + 1})
        yield ("msgq_send", "thread", 0, {"queue": 0x51, "length": 32, "used": i % 8})
        if i % 10 == 0:
            yield ("irq_enter", "isr", 1, {"irq": 5})
            yield ("tick", "isr", 1, {"count": i})
            yield ("irq_exit", "isr", 1, {"irq": 5, "switched": False})
        yield ("frame_end", "thread", 0, {"frame": i})

mine = {"obj_init", "frame_start", "user_event", "msgq_send", "irq_enter", "tick",
        "irq_exit", "frame_end", "pipe_write"}
recs = [json.loads(l) for l in open(tmp + "/known.ndjson")]
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)

check(not any("loss" in r for r in recs), "no loss records")
check([r["ts"] for r in recs] == sorted(r["ts"] for r in recs), "merged in time order")
ctx = {}
for r in recs:
    ctx.setdefault(r["context"], []).append(r)
check(set(ctx) >= {"main", "worker"}, "contexts main and worker: %s" % sorted(ctx))
got = [(r["event"], r["kind"], r["depth"], r["fields"]) for r in ctx.get("main", [])
       if r["event"] in mine and not (r["event"] == "obj_init" and r["fields"]["type"] != "queue")]
want = list(expected_main())
check(len(got) == len(want), "main: %d of my events, want %d" % (len(got), len(want)))
for k, (g, w) in enumerate(zip(got, want)):
    if g != w:
        check(False, "main event %d: got %s, want %s" % (k, g, w))
        break
pw = [r["fields"] for r in ctx.get("worker", []) if r["event"] == "pipe_write"]
check(pw == [{"pipe": 0x77, "bytes": k} for k in range(writes)], "worker: pipe_write 0..%d in order" % (writes - 1))
hdr = json.load(open(tmp + "/known.header.json"))
start, hz = hdr["header"]["start_ts"], hdr["header"]["clock_hz"]
def ns(t):
    return (t // hz) * 1000000000 + (t % hz) * 1000000000 // hz
check(all(r["ns"] == ns(r["ts"] - start) for r in recs), "ns since start agrees with ts and the clock")
check(hdr["summary"]["events"] == len(recs) and hdr["summary"]["errors"] == 0, "summary counts every event")
check(sum(c["events"] for c in hdr["contexts"]) == len(recs), "per-context counts add up")

doc = json.load(open(tmp + "/known.json"))
check(len(doc["events"]) == len(recs) and doc["events"][5] == recs[5], "--json holds the same events")

lines = open(tmp + "/known.txt").read().splitlines()
check(len(lines) == len(recs), "text: one line per event (%d, want %d)" % (len(lines), len(recs)))
check(any(re.match(r"^\d+\.\d{9}  main  +isr  +tick  +count=490$", l) for l in lines), "text: the ISR tick of frame 490")
check(any(re.search(r'main  +obj_init  +type=queue  handle=known-queue\(0x51\)  name="known-queue"$', l) for l in lines), "text: obj_init")

pf = json.load(open(tmp + "/known.perfetto.json"))["traceEvents"]
check(not [e for e in pf if e["ph"] in "BE"], "perfetto: complete (X) slices only")
b = [e["name"] for e in pf if e["ph"] == "X"]
check(sum(1 for x in b if x.startswith("frame ")) == frames, "perfetto: one slice per frame")
check(b.count("irq 5") == frames // 10, "perfetto: one irq 5 slice per interrupt")
check(sum(1 for e in pf if e["ph"] == "C" and e["name"] == "msgq known-queue(0x51) used") == frames, "perfetto: msgq counter, named as the text output names the queue")

for f in fails:
    print("MISMATCH: " + f)
print("%d records checked, %d mismatches" % (len(recs), len(fails)))
sys.exit(1 if fails else 0)
PY
ok $? "every format holds the recorded sequence"

if command -v babeltrace2 >/dev/null; then
    babeltrace2 "$tmp/ctf" >"$tmp/bt.txt" 2>"$tmp/bt.err"; ok $? "babeltrace2 reads the CTF directory"
    [ "$(wc -l <"$tmp/bt.txt")" -eq "$(wc -l <"$tmp/known.ndjson")" ]
    ok $? "babeltrace2 prints as many events as emb ($(wc -l <"$tmp/bt.txt"))"
    /usr/bin/python3 "$here/../support/bt_compare.py" "$tmp/ctf" "$tmp/known.ndjson" "$tmp/known.header.json" | sed 's/^/# /'
    ok "${PIPESTATUS[0]}" "babeltrace2 and emb agree on every event: name, cycles, ns, fields"
else
    ok 1 "babeltrace2 is installed (scripts/install-deps.sh)"
fi

# Snapshot rings of 4 packets: the oldest packets are overwritten.
"$known" "$tmp/wrap.embt" $frames $writes 4; ok $? "trace_known with 4-packet rings"
"$emb" trace -f ndjson -o "$tmp/wrap.ndjson" "$tmp/wrap.embt" 2>"$tmp/err"; ok $? "decodes cleanly"
python3 - "$tmp/wrap.ndjson" $frames $writes <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
frames, writes = int(sys.argv[2]), int(sys.argv[3])
main = [r["fields"]["a"] for r in recs if r["context"] == "main" and r.get("event") == "user_event"]
pw = [r["fields"]["bytes"] for r in recs if r["context"] == "worker" and r.get("event") == "pipe_write"]
ok = (main and main == list(range(main[0], frames)) and main[0] > 0 and
      pw and pw == list(range(pw[0], writes)) and pw[0] > 0)
print("# main keeps frames %s..%d, worker writes %s..%d" % (main[:1], frames - 1, pw[:1], writes - 1))
sys.exit(0 if ok else 1)
PY
ok $? "a wrapped snapshot keeps the newest events, contiguous, to the last one recorded"
"$emb" trace --json --summary "$tmp/wrap.embt" > "$tmp/wrap.summary.json"
python3 - "$tmp/wrap.summary.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ctx = {c["name"]: c for c in doc["contexts"]}
held = {n: (c["first_seq"], c["packets"], c["lost_packets"]) for n, c in ctx.items()}
print("# (first packet held, packets held, gaps): %s" % held)
# Four slots: the newest 3 or 4 packets held, and as many packets before them overwritten
# as the first one's number says; no gap between the ones held.
sys.exit(0 if all(c["first_seq"] > 0 and 3 <= c["packets"] <= 4 and c["lost_packets"] == 0
                  for c in ctx.values()) else 1)
PY
ok $? "the summary counts the packets the snapshot overwrote (first packet held > 0)"

# SPEC-015 §3.2: an overwritten packet increments events_discarded. The expectation is
# what trace_known recorded (the full run above, read by babeltrace2, which it records
# identically), against what babeltrace2 reads from the wrapped run: the events it holds
# plus the events it reports discarded (its discarded-events messages) make the whole.
if command -v babeltrace2 >/dev/null; then
    "$emb" trace -f ctf -o "$tmp/wrapctf" "$tmp/wrap.embt" 2>/dev/null; ok $? "the wrapped snapshot as CTF"
    /usr/bin/python3 "$here/../support/bt_loss.py" "$tmp/ctf" >"$tmp/bt_full.json" &&
        /usr/bin/python3 "$here/../support/bt_loss.py" "$tmp/wrapctf" >"$tmp/bt_wrap.json"
    python3 - "$tmp/bt_full.json" "$tmp/bt_wrap.json" <<'PY'
import json, sys
full, wrap = (json.load(open(p)) for p in sys.argv[1:3])
print("# babeltrace2, full run: %s; wrapped: %s" % (full, wrap))
ok = (set(full) == set(wrap) and all(c["discarded"] == 0 for c in full.values()) and
      all(wrap[s]["discarded"] > 0 and wrap[s]["events"] + wrap[s]["discarded"] == full[s]["events"]
          for s in full))
sys.exit(0 if ok else 1)
PY
    ok $? "babeltrace2 reports as discarded exactly the events the snapshot overwrote"
else
    ok 1 "babeltrace2 is installed (scripts/install-deps.sh)"
fi

# inspect, trace --summary and diff count the same loss.
"$emb" capture -o "$tmp/full.emb" "$tmp/known.embt" 2>/dev/null &&
    "$emb" capture -o "$tmp/wrap.emb" "$tmp/wrap.embt" 2>/dev/null; ok $? "both runs sealed"
"$emb" inspect --json "$tmp/wrap.emb" >"$tmp/wrap.inspect.json"; ok $? "inspect --json"
"$emb" diff --json --same-build "$tmp/full.emb" "$tmp/wrap.emb" >"$tmp/wrap.diff.json" 2>"$tmp/diff.err"; sed "s/^/# /" "$tmp/diff.err"
python3 - "$tmp/wrap.inspect.json" "$tmp/wrap.summary.json" "$tmp/wrap.diff.json" <<'PY'
import json, sys
ins, summ, diff = (json.load(open(p)) for p in sys.argv[1:4])
rows = {r["name"]: r for r in ins["window"]["contexts"]}
ctx = {c["name"]: c for c in summ["contexts"]}
gaps = {g["where"]: g for g in diff["incomplete"] if g["run"] == "bad"}
print("# inspect %s; summary %s; diff %s" % (
    {n: (r["discarded"], r["earlier_packets"]) for n, r in rows.items()},
    {n: (c["discarded"], c["first_seq"]) for n, c in ctx.items()},
    {n: (g["count"], g["what"]) for n, g in gaps.items()}))
ok = all(rows[n]["discarded"] == c["discarded"] > 0 and rows[n]["earlier_packets"] == c["first_seq"] > 0
         for n, c in ctx.items())
ok = ok and ins["window"]["drops"] == summ["summary"]["discarded"]
# The diff reports an overwrite where it falls inside the compared range (the worker's).
ok = ok and all(g["count"] == ctx[n]["discarded"] for n, g in gaps.items())
sys.exit(0 if ok else 1)
PY
ok $? "inspect, the summary and the diff agree on the events lost, and inspect shows the packets before the first held"

tap_summary
