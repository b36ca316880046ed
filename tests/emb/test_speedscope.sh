#!/usr/bin/env bash
# `emb trace --format speedscope` read back against speedscope's own definition of its file
# format (tests/support/node/speedscope_check.mjs: the schema of the speedscope npm package
# validated by Ajv, and the two rules its importer throws on), and against an independent
# reader of the same trace: each profile's slices are what @tracerbench/trace-model finds
# on the thread of that name in `emb trace --format perfetto` of the same file.
# usage: test_speedscope.sh EMB CONSOLE TRACE_FILES NODE_DIR TMP
set -u
emb=$1 console=$2 files=$3 node_dir=$4 tmp=$5
rm -rf "$tmp" && mkdir -p "$tmp"
. "$(dirname "$0")/../support/tap_check.sh"
if [ ! -f "$node_dir/node_modules/speedscope/dist/release/file-format-schema.json" ] ||
   [ ! -d "$node_dir/node_modules/ajv" ]; then
    echo "not ok - speedscope's schema and Ajv are not installed in $node_dir: run scripts/install-deps.sh"
    exit 1
fi
check() { node "$node_dir/speedscope_check.mjs" "$@"; }

# The speedscope file and the Perfetto JSON of one trace; the slices of both compared.
both() { # NAME TRACE
    "$emb" trace -f speedscope -o "$tmp/$1.speedscope.json" "$2" &&
        "$emb" trace -f perfetto -o "$tmp/$1.json" "$2" &&
        check "$tmp/$1.speedscope.json" >"$tmp/$1.check" &&
        node "$node_dir/tracerbench_summary.cjs" "$tmp/$1.json" >"$tmp/$1.tracerbench"
}
same_slices() { # NAME
    python3 - "$tmp/$1" <<'PY'
import json, sys
ss = json.load(open(sys.argv[1] + ".check"))["profiles"]
tb = {t["name"]: t["slices"] for t in json.load(open(sys.argv[1] + ".tracerbench"))["threads"].values()
      if t["slices"]}
assert ss.keys() == tb.keys(), (sorted(ss), sorted(tb))
for name, p in ss.items():
    assert p["slices"] == tb[name], (name, p["slices"], tb[name])
PY
}

# 1. The hand-built trace: nested interrupts, a split slice, a thread's waits.
both good "$files/good.embt"; ok $? "good.embt: the speedscope file passes speedscope's schema and importer rules"
same_slices good; ok $? "  each profile holds the slices @tracerbench/trace-model finds on its thread"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["profiles"]["cpu0"]; sys.exit(0 if p["deepest"] == 3 else 1)' \
    "$tmp/good.check"
ok $? "  cpu0 stacks irq 3 in irq 11 in frame 1: three deep"

# 2. A real run of the console workload, and the same trace from a capture.
"$console" --frames 120 -o "$tmp/run.embt" >/dev/null 2>&1; ok $? "console run"
both run "$tmp/run.embt"; ok $? "the console run's speedscope file passes"
same_slices run; ok $? "  every context's and scheduler track's slices, as the Perfetto JSON's"
"$emb" capture -o "$tmp/run.emb" "$tmp/run.embt" >/dev/null &&
    "$emb" trace -f speedscope "$tmp/run.emb" | cmp -s - "$tmp/run.speedscope.json"
ok $? "  a capture of it gives the same file"

# 3. The checker refuses what speedscope refuses (so the checks above can fail).
python3 - "$tmp/run.speedscope.json" "$tmp/swapped.json" "$tmp/no_unit.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["profiles"][0]["events"]
i = next(k for k in range(len(ev) - 1) if ev[k]["type"] == "C" and ev[k + 1]["type"] == "C")
ev[i]["frame"], ev[i + 1]["frame"] = ev[i + 1]["frame"], ev[i]["frame"]
json.dump(doc, open(sys.argv[2], "w"))
doc = json.load(open(sys.argv[1]))
del doc["profiles"][0]["unit"]
json.dump(doc, open(sys.argv[3], "w"))
PY
check "$tmp/swapped.json" >/dev/null 2>"$tmp/swapped.err"; [ $? = 1 ] && grep -q "is at the top" "$tmp/swapped.err"
ok $? "two closes out of stack order are refused"
check "$tmp/no_unit.json" >/dev/null 2>"$tmp/no_unit.err"; [ $? = 1 ] && grep -q "not valid" "$tmp/no_unit.err"
ok $? "a profile without its unit is refused by the schema"

tap_summary
