#!/usr/bin/env bash
# `emb trace --format perfetto` and `--format perfetto-proto` read back by real readers.
# The JSON by two independent readers of the Trace Event
# Format from the npm registry (tests/support/node, installed by scripts/install-deps.sh):
# Chrome DevTools' trace engine (@paulirish/trace_engine) and @tracerbench/trace-model. What
# they return (threads, slices, counters, instants, flows) must agree with each other and
# with the events `emb trace --json` and `emb log --json` decode from the same files. The
# protobuf by protoc --decode (perfetto_proto_check.py).
# usage: test_perfetto.sh EMB CONSOLE TRACE_FILES NODE_DIR TMP
set -u
emb=$1 console=$2 files=$3 node_dir=$4 tmp=$5
rm -rf "$tmp" && mkdir -p "$tmp"
. "$(dirname "$0")/../support/tap_check.sh"

if [ ! -d "$node_dir/node_modules/@paulirish/trace_engine" ] ||
   [ ! -d "$node_dir/node_modules/@tracerbench/trace-model" ]; then
    echo "not ok - the Trace Event Format readers are not installed in $node_dir: run scripts/install-deps.sh"
    exit 1
fi

summaries() { # FILE: both readers' summaries beside it
    node "$node_dir/trace_engine_summary.mjs" "$1" >"$1.engine" &&
        node "$node_dir/tracerbench_summary.cjs" "$1" >"$1.tracerbench"
}

# 1. The hand-built trace: every kind of slice, a split, a flow, counters, losses.
"$emb" trace -f perfetto -o "$tmp/good.json" "$files/good.embt"; ok $? "perfetto of good.embt"
summaries "$tmp/good.json"; ok $? "both readers load good.embt's file"
python3 - "$tmp/good.json" <<'EOF'
import json, sys
eng = json.load(open(sys.argv[1] + ".engine"))
tb = json.load(open(sys.argv[1] + ".tracerbench"))
want = {"1:1": ("cpu0", {"frame 1": 1, "irq 11": 2, "irq 3": 1, "sched_lock": 1, "idle": 1}),
        "1:2": ("audio", {"wait queue": 1, "work 0x0000cafe": 1}),
        "2:1": ("cpu0 running", {"idle(1)": 1, "2": 1})}
for key, (name, slices) in want.items():
    assert eng["threads"][key] == {"name": name, "slices": slices}, (key, eng["threads"][key])
    assert tb["threads"][key]["name"] == name and tb["threads"][key]["slices"] == slices, key
# irq 11 holds irq 3; frame 1 holds the first irq 11 piece.
assert tb["threads"]["1:1"]["nested"] == 2, tb["threads"]["1:1"]
assert eng["flows"] == [["msgq_send@1:2", "msgq_receive@1:2"]], eng["flows"]
assert tb["flows"] == {"s": 1, "f": 1}
assert tb["counters"] == {"cpu load (cpu0)": 1, "thread load (idle(1))": 1, "thread load (2)": 1,
                          "msgq 0x00030001 used": 3, "events discarded (audio)": 1,
                          "packets lost (audio)": 1}, tb["counters"]
# Per-thread load from the switches as `emb trace` prints them: idle(1) runs from 100 to
# 700 ns, thread 2 from 700 ns to the trace's end at 1200 ns (one window).
assert tb["series"]["thread load (idle(1))"] == [[0, 50]], tb["series"]
assert tb["series"]["thread load (2)"] == [[0, 42]], tb["series"]
EOF
ok $? "good.embt: threads, slices, nesting, flow and counters as both readers see them"

# 2. A real run of the console workload, with its log: counts against emb trace --json.
"$console" --frames 120 -o "$tmp/run.embt" --log "$tmp/run.embl" >/dev/null 2>&1
ok $? "console run"
"$emb" trace -f perfetto --log "$tmp/run.embl" --elf "$console" -o "$tmp/run.json" "$tmp/run.embt"
ok $? "perfetto with --log"
"$emb" trace --json "$tmp/run.embt" >"$tmp/run.trace.json"; ok $? "trace --json"
"$emb" log --json --elf "$console" "$tmp/run.embl" >"$tmp/run.log.ndjson"; ok $? "log --json"
summaries "$tmp/run.json"; ok $? "both readers load the console run's file"
python3 - "$tmp" <<'EOF'
import collections, json, sys
tmp = sys.argv[1]
eng = json.load(open(tmp + "/run.json.engine"))
tb = json.load(open(tmp + "/run.json.tracerbench"))
doc = json.load(open(tmp + "/run.trace.json"))
logs = [json.loads(l) for l in open(tmp + "/run.log.ndjson") if l.strip()]
ev = doc["events"]
ctx = {c["id"]: c["name"] for c in doc["contexts"]}
fails = []
def check(cond, what):
    if not cond: fails.append(what)

# Both readers see the same slices on the same named threads.
for key, t in eng["threads"].items():
    check(tb["threads"][key]["slices"] == t["slices"] and tb["threads"][key]["name"] == t["name"],
          "readers disagree on " + key)
for cid, name in ctx.items():
    th = tb["threads"].get("1:%d" % (cid + 1))
    check(th is not None and th["name"] == name, "context %s's track" % name)

def named(ev_name):
    return [e for e in ev if e.get("event") == ev_name]
def slices(key, prefix):
    s = tb["threads"].get(key, {"slices": {}})["slices"]
    return sum(n for k, n in s.items() if k == prefix or k.startswith(prefix + " "))
for cid, name in ctx.items():
    key = "1:%d" % (cid + 1)
    starts = [e for e in named("frame_start") if e["context_id"] == cid]
    ends = {e["fields"]["frame"] for e in named("frame_end") if e["context_id"] == cid}
    check(slices(key, "frame") == sum(1 for e in starts if e["fields"]["frame"] in ends),
          "%s: one slice per frame" % name)
    sw = [e for e in named("switch") if e["context_id"] == cid]
    run = tb["threads"].get("2:%d" % (cid + 1), {"slices": {}})["slices"]
    check(sum(run.values()) == len(sw), "%s: one running slice per switch" % name)
# A work item's slice per work_start that its work_end closed.
work = sum(1 for e in named("work_start"))
check(sum(slices(k, "work") for k in tb["threads"]) == work, "a slice per work item run")

# Counters: a msgq point per send and receive; a load point per context that switches.
msgq = len(named("msgq_send")) + len(named("msgq_receive"))
check(sum(n for k, n in tb["counters"].items() if k.startswith("msgq ")) == msgq, "msgq counters")
loads = [k for k in tb["counters"] if k.startswith("cpu load (")]
check(loads and all(tb["counters"][k] == tb["counters"][loads[0]] for k in loads), "cpu load windows")
fills = {k[len("ring fill ("):-1]: n for k, n in tb["counters"].items() if k.startswith("ring fill (")}
check(fills == {c["name"]: c["packets"] for c in doc["contexts"] if c["packets"]}, "a ring fill point per packet")

# Flows: each work_start served by the oldest submit of its item still waiting, each
# msgq_receive by the oldest send on its queue.
pending, flows = collections.defaultdict(list), 0
for e in ev:
    n, f = e.get("event"), e.get("fields", {})
    if n == "work_submit" and f["result"] >= 0: pending["w", f["item"]].append(e)
    elif n == "msgq_send": pending["q", f["queue"]].append(e)
    elif n in ("work_start", "msgq_receive"):
        k = ("w", f["item"]) if n == "work_start" else ("q", f["queue"])
        if pending[k]: pending[k].pop(0); flows += 1
check(flows > 0 and len(eng["flows"]) == flows, "flows: engine %d, want %d" % (len(eng["flows"]), flows))
check(tb["flows"] == {"s": flows, "f": flows}, "flow phases %s, want %d" % (tb["flows"], flows))

# Log lines (and hexdumps, by their title): one instant per line logged after the trace began.
start = doc["header"]["start_ts"]
want_logs = sum(1 for l in logs if l["type"] in ("log", "hexdump") and l["ts"] >= start)
check(want_logs > 0 and tb["instants"].get("log") == want_logs,
      "log instants %s, want %d" % (tb["instants"].get("log"), want_logs))
for f in fails: print("MISMATCH: " + f)
sys.exit(1 if fails else 0)
EOF
ok $? "console run: slices, counters, flows and log lines agree with emb trace/log --json"

# Usage: --log goes with a Perfetto format and its ELF; a log that cannot be read is bad input.
"$emb" trace --log "$tmp/run.embl" --elf "$console" "$tmp/run.embt" >/dev/null 2>&1
[ $? -eq 2 ]; ok $? "--log with the text format: usage error (exit 2)"
"$emb" trace -f perfetto --log "$tmp/run.embl" "$tmp/run.embt" >/dev/null 2>&1
[ $? -eq 2 ]; ok $? "--log without --elf: usage error (exit 2)"
"$emb" trace -f perfetto --log "$tmp/none.embl" --elf "$console" "$tmp/run.embt" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "none.embl: cannot open" "$tmp/err"; ok $? "--log FILE missing: exit 2, the file named"

# --log takes a capture's log section as well: the same lines as from the log file itself.
"$emb" capture --log "$tmp/run.embl" -o "$tmp/run.emb" "$tmp/run.embt" >/dev/null 2>&1
"$emb" trace -f perfetto --log "$tmp/run.emb" --elf "$console" -o "$tmp/cap.json" "$tmp/run.embt" &&
    cmp -s "$tmp/cap.json" "$tmp/run.json"
ok $? "--log CAPTURE: its log section, the same file as from the log stream"
"$emb" capture -o "$tmp/nolog.emb" "$tmp/run.embt" >/dev/null 2>&1
"$emb" trace -f perfetto --log "$tmp/nolog.emb" --elf "$console" "$tmp/run.embt" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "holds no log section" "$tmp/err"; ok $? "--log CAPTURE without a log section: exit 2"

# 3. The protobuf trace, decoded by protoc against the schema subset, checked against the
# JSON of the same run: packets, typed tracks, interned names, flows, log lines.
schema=$(dirname "$0")/../../tools/lib/write
for run in good run; do
    if [ $run = good ]; then
        "$emb" trace -f perfetto-proto -o "$tmp/$run.pb" "$files/good.embt"
    else
        "$emb" trace -f perfetto-proto --log "$tmp/run.embl" --elf "$console" -o "$tmp/$run.pb" \
            "$tmp/run.embt"
    fi
    ok $? "perfetto-proto of $run"
    protoc --decode=perfetto.protos.Trace --proto_path="$schema" perfetto_trace.proto \
        <"$tmp/$run.pb" >"$tmp/$run.pb.txt"
    ok $? "protoc --decode=perfetto.protos.Trace reads $run.pb"
    logs=$(grep -c '"cat": "log"' "$tmp/$run.json")
    python3 "$(dirname "$0")/perfetto_proto_check.py" "$tmp/$run.pb.txt" "$tmp/$run.json" "$logs"
    ok $? "$run.pb: packets, tracks, interned names, flows and log lines as in $run.json"
    # With Perfetto's own protos at hand (EMB_PERFETTO_SRC: a checkout of google/perfetto),
    # its full schema must read the file exactly as the subset does: same names, numbers.
    if [ -n "${EMB_PERFETTO_SRC:-}" ]; then
        protoc --decode=perfetto.protos.Trace -I "$EMB_PERFETTO_SRC" \
            "$EMB_PERFETTO_SRC/protos/perfetto/trace/trace.proto" <"$tmp/$run.pb" >"$tmp/$run.full.txt" &&
            cmp -s "$tmp/$run.full.txt" "$tmp/$run.pb.txt"
        ok $? "$run.pb: Perfetto's own trace.proto decodes it as the subset does"
    fi
done

tap_summary
