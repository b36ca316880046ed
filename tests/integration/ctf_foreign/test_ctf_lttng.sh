#!/usr/bin/env bash
# Foreign CTF from the real producer: lttng_reqsrv (its own tracepoint provider,
# reqsrv_tp.h) traced by real user-space LTTng sessions this test starts and tears down
# (its own LTTNG_HOME and session daemon per run), three times: a good run, a run with
# other jitter only, and a run whose request SEED_AT differs. The expectations come from
# the producer and from babeltrace2, the reader LTTng users trust:
#   - emb inspect's event counts are babeltrace2's, event for event;
#   - emb trace (text, NDJSON, Perfetto) reads the trace directory;
#   - emb diff --json of the good and jitter runs finds nothing, of the good and seeded runs
#     names request SEED_AT first; without --anchor it says what could serve;
#   - a trace with a floating-point field is refused, naming the event and the field.
# Runs the LTTng side as `nobody` when root (root's session daemon is the machine's own,
# /var/run/lttng); skips (77) only when LTTng cannot trace here.
# usage: test_ctf_lttng.sh EMB LTTNG_REQSRV SCRATCH_DIR
set -u
emb=$1 app=$2 tmp=$3
here=$(cd "$(dirname "$0")" && pwd)
requests=200 seed_at=37
for tool in lttng lttng-sessiond babeltrace2; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/install-deps.sh)"; exit 77; }
done
rm -rf "$tmp" && mkdir -p "$tmp" && chmod 777 "$tmp"
cp "$app" "$tmp/reqsrv" && chmod 755 "$tmp/reqsrv"
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp")
. "$here/../../support/tap_check.sh"

# One traced run: NAME SEED_AT JITTER EVENTS... -> $tmp/NAME.trace (the CTF directory).
trace_run() {
    local name=$1 seed=$2 jitter=$3
    shift 3
    "${as_user[@]}" bash "$here/lttng_session.sh" "$tmp" "$name" "$tmp/reqsrv $requests $seed $jitter" "$@" \
        >"$tmp/$name.log" 2>&1 || { sed 's/^/# /' "$tmp/$name.log"; return 1; }
    local meta
    meta=$(find "$tmp/$name.out" -name metadata | head -1)
    [ -n "$meta" ] && ln -sfn "$(dirname "$meta")" "$tmp/$name.trace"
}

events=(reqsrv:request_begin reqsrv:query reqsrv:cache_miss reqsrv:request_end)
if ! trace_run good -1 1 "${events[@]}"; then
    if grep -q "Unable to \(start\|connect\)\|No session daemon\|Permission denied" "$tmp/good.log"; then
        echo "SKIP: LTTng cannot trace here: $(grep -m1 -i "error" "$tmp/good.log")"
        exit 77
    fi
fi
ok 0 "the good run is traced"
trace_run jitter -1 987654 "${events[@]}"; ok $? "the jitter-only run is traced"
trace_run seeded $seed_at 1 "${events[@]}"; ok $? "the seeded run is traced"

# emb inspect against babeltrace2's own count, per event name.
babeltrace2 "$tmp/good.trace" >"$tmp/good.bt.txt"; ok $? "babeltrace2 reads the good run"
"$emb" inspect --json "$tmp/good.trace" >"$tmp/good.inspect.json"; ok $? "emb inspect --json"
python3 "$here/bt_agree.py" counts "$tmp/good.bt.txt" "$tmp/good.inspect.json"
ok $? "emb inspect counts every event as babeltrace2 does"
[ "$(grep -c "reqsrv:request_begin:" "$tmp/good.bt.txt")" -eq $requests ]; ok $? "$requests requests traced"

"$emb" trace "$tmp/good.trace" >"$tmp/good.txt"; ok $? "emb trace reads the CTF directory"
[ "$(wc -l <"$tmp/good.txt")" -eq "$(wc -l <"$tmp/good.bt.txt")" ]; ok $? "as many lines as babeltrace2"
grep -q "reqsrv_query .*rows=" "$tmp/good.txt"; ok $? "events named and fields read by name"
"$emb" trace -f ndjson -o "$tmp/good.ndjson" "$tmp/good.trace"; ok $? "emb trace -f ndjson"
python3 "$here/bt_agree.py" events "$tmp/good.bt.txt" "$tmp/good.ndjson"
ok $? "every NDJSON event and field is babeltrace2's"
"$emb" trace -f perfetto -o "$tmp/good.perfetto.json" "$tmp/good.trace"; ok $? "emb trace -f perfetto"

cat >"$tmp/policy.yaml" <<'EOF'
# The request server's comparison: requests are the epochs; latency is jitter.
anchor: reqsrv:request_begin.id
fields:
  reqsrv:query.latency_us: ignore
rules:
  interval: off
  epoch-duration: off
EOF
"$emb" diff --json --policy "$tmp/policy.yaml" "$tmp/good.trace" "$tmp/jitter.trace" >"$tmp/jitter.json"
ok $? "jitter only: emb diff finds no significant difference (exit 0)"
"$emb" diff --json --anchor reqsrv:request_begin.id --field reqsrv:query.latency_us=ignore \
    --rule interval=off --rule epoch-duration=off "$tmp/good.trace" "$tmp/seeded.trace" >"$tmp/seeded.json"
ok $(($? == 1 ? 0 : 1)) "seeded: emb diff finds a difference (exit 1)"
python3 - "$tmp/seeded.json" $seed_at <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
first = d["first"][0]
assert first["anchor_value"] == int(sys.argv[2]), first
assert d["alignment"]["anchor_event"] == "reqsrv_request_begin", d["alignment"]
assert "reqsrv_query" in first["text"] or "cache_miss" in first["text"], first
PY
ok $? "the first difference is in request $seed_at"
"$emb" diff --json --anchor reqsrv:request_begin.id --pair reqsrv=reqsrv --rule interval=off \
    --rule epoch-duration=off "$tmp/good.trace" "$tmp/jitter.trace" >"$tmp/nofield.json"
ok $(($? == 1 ? 0 : 1)) "latency compared exactly (no --field): the jitter shows"

"$emb" diff "$tmp/good.trace" "$tmp/jitter.trace" 2>"$tmp/noanchor.err"
ok $(($? == 2 ? 0 : 1)) "no anchor: exit 2"
grep -q "could serve: .*reqsrv_request_begin.id (200 times, id rising)" "$tmp/noanchor.err"; ok $? "and it says what could serve"

trace_run float -1 1 'reqsrv:*'; ok $? "a run with every event of the provider is traced"
"$emb" inspect "$tmp/float.trace" 2>"$tmp/float.err" >/dev/null
ok $(($? == 2 ? 0 : 1)) "a floating-point field is refused (exit 2)"
grep -q "event \`reqsrv:cpu_load\` field \`load\` is a floating-point number" "$tmp/float.err"
ok $? "naming the event and the field: $(cat "$tmp/float.err")"

tap_summary "# "
