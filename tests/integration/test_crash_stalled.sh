#!/usr/bin/env bash
# The flight recorder in streaming mode with a consumer that stopped reading (the stream
# worker blocked on a pipe nobody reads): the crash record must end with the events
# recorded right before the fault (crash_stalled.c's ten markers, in order), not with
# those from when the consumer stalled. Checked by order, never by time.
# usage: test_crash_stalled.sh EMB CRASH_STALLED SCRATCH_DIR
set -u
emb=$1 prog=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp"
. "$(dirname "$0")/../support/tap_check.sh"

"$prog" crash "$tmp/retained.bin" >"$tmp/crash.out" 2>&1
rc=$?
[ $rc -eq 139 ]; ok $? "the stalled run dies of SIGSEGV (status $rc)"
"$prog" save "$tmp/retained.bin" "$tmp/crash.rec"; ok $? "the next start saves the record"
"$emb" crash --elf "$prog" --json --events 0 "$tmp/crash.rec" >"$tmp/crash.json" 2>"$tmp/crash.err"
ok $? "emb crash reads it"
python3 - "$tmp/crash.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["flight"]["last_events"] if e.get("event") == "user_event"]
ids = [(e["fields"]["id"], e["fields"]["a"]) for e in ev]
print("# %d user events in the flight recorder; the last 12: %s" % (len(ids), ids[-12:]))
markers = [a for (i, a) in ids if i == 2]
stale = [a for (i, a) in ids if i == 1]
ok = markers == list(range(10)) and ids[-10:] == [(2, k) for k in range(10)]
# Before the markers: the newest of the second burst (40000 events were recorded before
# them), contiguous up to the last one, never the first burst's.
ok = ok and stale and stale == list(range(stale[0], 40000)) and stale[0] >= 20000
sys.exit(0 if ok else 1)
PY
ok $? "the flight recorder ends with the ten events recorded before the fault, after the newest others"

tap_summary
