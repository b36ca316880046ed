#!/usr/bin/env bash
# Service IPC tracing benchmarks: what an untraced call, a traced emit and an emit into a full
# sink cost (wall clock, and instructions counted by callgrind), and how many events per
# second the sink takes from 4 emitting processes without losing any.
#
#   bench/svc_trace.sh BUILD_DIR
#
# Results are described in docs/benchmarks.md (Service IPC tracing).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
bench=$build/bin/svc_trace_bench
emb=$build/bin/emb
for f in "$bench" "$emb"; do
    [ -x "$f" ] || { echo "$0: $f is not built" >&2; exit 2; }
done

echo "== service IPC tracing: cost per call (wall clock, best of 5 runs)"
"$bench" untraced 200000000
"$bench" traced 200000
"$bench" full 2000000

echo
echo "== instructions per call (callgrind, user space; a send's kernel work is not counted)"
tmp=$(mktemp -d /tmp/emb-svc-bench-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=100000
for mode in untraced traced full; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$mode.%p" --collect-atstart=no \
        --toggle-collect="bench_${mode}_call" "$bench" "$mode" "$n" count > /dev/null 2>&1
    total=$(cat "$tmp"/cg."$mode".* | awk '/^summary:/ {s += $2} END {print s + 0}')
    awk -v m="$mode" -v t="$total" -v n="$n" \
        'BEGIN {printf "%-9s %8.2f instructions/call  (%d over %d calls)\n", m, t / n, t, n}'
done
echo "the untraced call, as compiled (the check, then the return):"
objdump -d --no-show-raw-insn "$bench" > "$tmp/disasm"
awk '/<bench_untraced_call>:/ {p = 1; next} p && /ret/ {print "  " $0; exit} p {print "  " $0}' \
    "$tmp/disasm"

echo
echo "== sink intake: 4 emitting processes into \`emb events serve\` ($(nproc) CPUs)"
"$bench" intake "$emb" 250000
best=0
for rate in 25000 50000 75000 100000 125000 150000 175000 200000 250000 300000; do
    line=$("$bench" intake "$emb" "$rate" "$rate")
    echo "$line" | head -1
    if echo "$line" | grep -q "(no loss)"; then
        best=$rate
    else
        break
    fi
done
echo "highest offered rate with no loss: $best events/s per emitter, $((best * 4)) in all"
