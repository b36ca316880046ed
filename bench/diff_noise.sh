#!/usr/bin/env bash
# The false-alarm rate of emb diff's significance rules on jitter-only pairs: PAIRS
# (default 100) independent pairs of two runs of one configuration of the corpus
# workload (tests/lib/diff/diff_workload.c: the real library on the native port, three
# threads, frames on absolute deadlines, seeded noise and the host's own), each compared
# with --same-build; any finding is a false alarm. Prints the rate and writes
# BUILD/bench/diff_noise.json. DIFF_WORKLOAD_ARGS=--realtime measures the runs at SCHED_FIFO,
# as the corpus in make check records them. Usage: bench/diff_noise.sh [BUILD [PAIRS]]
# (results: docs/benchmarks.md, docs/diff.md)
set -uo pipefail
build=${1:-build}
pairs=${2:-100}
here=$(cd "$(dirname "$0")" && pwd)
dir="$build/bench-diff-noise"
mkdir -p "$dir" "$build/bench"
seed=${DIFF_NOISE_SEED:-$(( $(date +%s) % 100000 ))}
load=$(cut -d' ' -f1 /proc/loadavg)
start=$(date +%s)
result=$(bash "$here/../tests/emb/diff_jitter_pairs.sh" "$build/bin/emb" "$build/tests/diff_workload" \
  "$dir" "$pairs" "$seed" "$pairs")
rc=$?
[ "$rc" -eq 2 ] && { echo "bench/diff_noise: a run failed" >&2; exit 1; }
echo "$result"
alarms=$(echo "$result" | awk '/^false alarms:/ { print $3 }')
secs=$(( $(date +%s) - start ))
mode=${DIFF_WORKLOAD_ARGS:-normal priority}
printf 'pairs %d, false alarms %d (%.2f%%), %s, seed %d, load average %s at the start, %d s\n' \
  "$pairs" "$alarms" "$(awk -v k="$alarms" -v n="$pairs" 'BEGIN { print 100 * k / n }')" "$mode" \
  "$seed" "$load" "$secs"
printf '{"pairs": %d, "false_alarms": %d, "workload": "%s", "seed": %d, "load_average": %s, "seconds": %d}\n' \
  "$pairs" "$alarms" "$mode" "$seed" "$load" "$secs" >"$build/bench/diff_noise.json"
