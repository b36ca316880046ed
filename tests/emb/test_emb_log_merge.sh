#!/usr/bin/env bash
# `emb log` merges a file's contexts by time as it decodes: the same bytes as the whole
# stream kept and sorted (what it does with a pipe, which it can read only once), and a
# peak memory that does not grow with the stream (600,000 records of four contexts:
# 123 MiB when every record was kept).
#
# usage: test_emb_log_merge.sh EMB LOG_CONTEXTS FILES_DIR DECODE_ELF WORKDIR [--no-rss]
#   LOG_CONTEXTS writes a stream of several threads at once (tests/integration/
#   log_contexts.c); FILES_DIR holds test_log_decode's streams (damaged ones among them),
#   DECODE_ELF is test_log_decode. --no-rss: a sanitizer build, whose allocator keeps
#   freed memory, skips the memory check.
set -uo pipefail
emb=$1 gen=$2 files=$3 elf=$4 work=$5 rss=${6:-}
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0
ok() { if [ "$1" -eq 0 ]; then pass=$((pass + 1)); echo "ok - $2"; else fail=$((fail + 1)); echo "not ok - $2"; fi; }

# same NAME ELF ARGS... STREAM: the file and the pipe give the same stdout, stderr, status.
same() {
    local name=$1 prog=$2
    shift 2
    local stream=${*: -1} args=("${@:1:$#-1}")
    "$emb" log --elf "$prog" "${args[@]}" "$stream" > "$work/$name.file" 2> "$work/$name.file.err"
    local a=$?
    "$emb" log --elf "$prog" "${args[@]}" - < "$stream" > "$work/$name.pipe" 2> "$work/$name.pipe.err"
    local b=$?
    sed -i "s|: $stream: |: -: |" "$work/$name.file.err" # the messages name the input
    cmp -s "$work/$name.file" "$work/$name.pipe" && cmp -s "$work/$name.file.err" "$work/$name.pipe.err" &&
        [ "$a" -eq "$b" ]
    ok $? "$name: a file merged as it decodes prints what the pipe kept and sorted (exit $a)"
}

"$gen" "$work/four.embl" 4 3000; ok $? "four threads logged"
same four "$gen" --color=never "$work/four.embl"
same four_json "$gen" --json "$work/four.embl"
python3 - "$work/four_json.file" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
logs = [r for r in recs if r["type"] == "log"]
assert len(logs) == 12000, len(logs)
assert all(recs[i]["ts"] <= recs[i + 1]["ts"] for i in range(len(recs) - 1))
# Each thread's records in its own order.
by = {}
for r in logs:
    by.setdefault(r["context"], []).append(int(r["text"].split()[-1]))
assert len(by) == 4 and all(v == list(range(3000)) for v in by.values()), by.keys()
EOF
ok $? "four threads: every record once, in time order"
for f in "$files"/*.embl; do
    same "$(basename "$f" .embl)" "$elf" --color=never "$f"
done
for f in "$files"/*.raw; do
    same "$(basename "$f" .raw)_raw" "$elf" --raw --clock-hz 1000000 --color=never "$f"
done

if [ "$rss" != --no-rss ]; then
    "$gen" "$work/big.embl" 4 150000; ok $? "600,000 records logged"
    python3 - "$emb" "$gen" "$work/big.embl" <<'EOF'
import resource, subprocess, sys
emb, elf, stream = sys.argv[1:]
rc = subprocess.run([emb, "log", "--elf", elf, stream], stdout=subprocess.DEVNULL).returncode
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(f"# emb log, 600,000 records of 4 contexts: exit {rc}, peak {peak} MiB")
sys.exit(0 if rc == 0 and peak < 48 else 1)
EOF
    ok $? "600,000 records of four contexts decode in less than 48 MiB"
fi

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
