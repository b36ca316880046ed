#!/usr/bin/env bash
# Foreign CTF enumerations from the real producer: barectf_enum, whose tracer barectf
# generated from enum_barectf.yaml at build time, writes readings whose `level` is a 64-bit
# unsigned enumeration with one label over [1, 2^40] (a range past INT32_MAX) and whose
# `mode` labels each name one value. babeltrace2's reading is the expectation: every event
# and field of emb trace -f ndjson agrees with it (bt_agree.py: a range's values are numbers,
# never one value's label), and the one-value labels are kept.
# usage: test_ctf_enum_range.sh EMB BARECTF_ENUM METADATA SCRATCH_DIR
set -u
emb=$1 app=$2 metadata=$3 tmp=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v babeltrace2 >/dev/null || { echo "SKIP: babeltrace2 is not installed (scripts/install-deps.sh)"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp/trace"
. "$here/../../support/tap_check.sh"
"$app" "$tmp/trace" && cp "$metadata" "$tmp/trace/metadata"; ok $? "barectf_enum wrote its trace"

babeltrace2 "$tmp/trace" >"$tmp/bt.txt"; ok $? "babeltrace2 reads it"
[ "$(grep -c 'level = ( "WIDE" : container = ' "$tmp/bt.txt")" -eq 7 ]
ok $? "babeltrace2 labels the 7 levels inside [1, 2^40] WIDE, past INT32_MAX too"
grep -q 'level = ( "WIDE" : container = 1099511627776 )' "$tmp/bt.txt"; ok $? "2^40 is inside"
"$emb" trace -f ndjson -o "$tmp/trace.ndjson" "$tmp/trace"; ok $? "emb trace -f ndjson"
python3 "$here/bt_agree.py" events "$tmp/bt.txt" "$tmp/trace.ndjson"
ok $? "every event and field is babeltrace2's"
python3 -c '
import json, sys
rows = [json.loads(l)["fields"] for l in open(sys.argv[1])]
assert [r["mode"] for r in rows] == ["idle", "run"] * 4 + ["idle"], rows
assert all(isinstance(r["level"], int) for r in rows), rows
' "$tmp/trace.ndjson"; ok $? "one-value labels kept (mode), the range as numbers (level)"

tap_summary "# "
