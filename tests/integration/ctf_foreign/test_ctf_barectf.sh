#!/usr/bin/env bash
# Foreign CTF from the real producer: barectf_sensor, whose tracer barectf generated from
# sensor_barectf.yaml at build time, writes its two stream files; the metadata is
# barectf's own. Three runs (good, other jitter, cycle SEED_AT seeded), checked against
# babeltrace2, the reader barectf's users trust:
#   - emb inspect's event counts, and every event and field of emb trace -f ndjson;
#   - one context per stream file (sampler, controller);
#   - emb diff --json: jitter only compares equal; the seeded run's first difference is in
#     cycle SEED_AT, on the controller.
# usage: test_ctf_barectf.sh EMB BARECTF_SENSOR METADATA SCRATCH_DIR
set -u
emb=$1 app=$2 metadata=$3 tmp=$4
here=$(cd "$(dirname "$0")" && pwd)
cycles=150 seed_at=61
command -v babeltrace2 >/dev/null || { echo "SKIP: babeltrace2 is not installed (scripts/install-deps.sh)"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp"
. "$here/../../support/tap_check.sh"
run() { # NAME SEED_AT JITTER -> $tmp/NAME (the CTF directory)
    mkdir -p "$tmp/$1" && "$app" "$tmp/$1" $cycles "$2" "$3" && cp "$metadata" "$tmp/$1/metadata"
}
run good -1 1; ok $? "the good run wrote its trace"
run jitter -1 4242; ok $? "the jitter-only run wrote its trace"
run seeded $seed_at 1; ok $? "the seeded run wrote its trace"

babeltrace2 "$tmp/good" >"$tmp/good.bt.txt"; ok $? "babeltrace2 reads the good run"
"$emb" inspect --json "$tmp/good" >"$tmp/good.inspect.json"; ok $? "emb inspect --json"
python3 "$here/bt_agree.py" counts "$tmp/good.bt.txt" "$tmp/good.inspect.json"
ok $? "emb inspect counts every event as babeltrace2 does"
[ "$(grep -c " cycle_start: " "$tmp/good.bt.txt")" -eq $cycles ]; ok $? "$cycles cycles traced"
python3 -c '
import json, sys
rows = {r["name"]: r["events"] for r in json.load(open(sys.argv[1]))["window"]["contexts"]}
assert rows == {"sampler": 4 * int(sys.argv[2]), "controller": int(sys.argv[2])}, rows
' "$tmp/good.inspect.json" $cycles; ok $? "one context per stream file, named by it"
"$emb" trace -f ndjson -o "$tmp/good.ndjson" "$tmp/good"; ok $? "emb trace -f ndjson"
python3 "$here/bt_agree.py" events "$tmp/good.bt.txt" "$tmp/good.ndjson"
ok $? "every event and field is babeltrace2's"
"$emb" trace "$tmp/good" >/dev/null && "$emb" trace -f perfetto -o "$tmp/good.perfetto.json" "$tmp/good"
ok $? "emb trace text and perfetto"

cat >"$tmp/policy.yaml" <<'YAML'
anchor: cycle_start.cycle
fields:
  sample.settle_ns: ignore
rules:
  interval: off
  epoch-duration: off
YAML
"$emb" diff --json --policy "$tmp/policy.yaml" "$tmp/good" "$tmp/jitter" >"$tmp/jitter.json"
ok $? "jitter only: no significant difference (exit 0)"
"$emb" diff --json --policy "$tmp/policy.yaml" "$tmp/good" "$tmp/seeded" >"$tmp/seeded.json"
ok $(($? == 1 ? 0 : 1)) "seeded: a difference (exit 1)"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
first = d["first"][0]
assert first["anchor_value"] == int(sys.argv[2]) and first["context"] == "controller", first
assert first["rule"] == "argument" and first["field"] == "duty", first
assert d["significant"] == 1, d["significant"]
' "$tmp/seeded.json" $seed_at; ok $? "the first and only difference: cycle $seed_at, the controller's duty"
"$emb" diff --json --anchor cycle_start.cycle "$tmp/good" "$tmp/jitter" >/dev/null
ok $(($? == 1 ? 0 : 1)) "without the policy, settle_ns is compared exactly: the jitter shows"

# A stream file renamed: its context has another name, paired back with --pair.
cp -r "$tmp/jitter" "$tmp/renamed" && mv "$tmp/renamed/controller" "$tmp/renamed/actuator"
"$emb" diff --json --policy "$tmp/policy.yaml" "$tmp/good" "$tmp/renamed" >/dev/null
ok $(($? == 1 ? 0 : 1)) "a context named otherwise is not paired by name (exit 1)"
"$emb" diff --json --policy "$tmp/policy.yaml" --pair controller=actuator "$tmp/good" "$tmp/renamed" >/dev/null
ok $? "--pair controller=actuator pairs it: no difference (exit 0)"

tap_summary "# "
