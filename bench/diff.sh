#!/usr/bin/env bash
# Benchmarks of emb inspect and emb diff on large captures made by the real library
# (bench/diff_bench.c): wall time and peak memory (/usr/bin/time -v), best of 3.
# Usage: bench/diff.sh [BUILD]   (results: docs/benchmarks.md)
set -euo pipefail
build=${1:-build}
emb="$build/bin/emb"
gen="$build/bin/diff_bench"
dir="$build/bench-diff"
mkdir -p "$dir"

best() { # best WALL-SECONDS and its peak RSS of 3 runs of a command (exit 0 or 1 accepted)
  local best_t=999 best_m=0
  for _ in 1 2 3; do
    /usr/bin/time -v "$@" >/dev/null 2>"$dir/time.txt" || [ $? -eq 1 ] || { cat "$dir/time.txt" >&2; exit 1; }
    local t m
    t=$(awk -F': ' '/Elapsed \(wall clock\)/ {split($2, a, ":"); print a[1] * 60 + a[2]}' "$dir/time.txt")
    m=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    if awk "BEGIN {exit !($t < $best_t)}"; then best_t=$t best_m=$m; fi
  done
  echo "$best_t $best_m"
}

printf '%-10s %-12s %10s %12s\n' events command seconds "peak MiB"
for n in 1000000 4000000; do
  "$gen" "$dir/good-$n.embt" "$n"
  "$gen" "$dir/bad-$n.embt" "$n" --bad $((n / 200))
  "$emb" capture --label good -o "$dir/good-$n.emb" "$dir/good-$n.embt" >/dev/null
  "$emb" capture --label bad -o "$dir/bad-$n.emb" "$dir/bad-$n.embt" >/dev/null
  read -r t m < <(best "$emb" inspect "$dir/good-$n.emb")
  printf '%-10s %-12s %10.2f %12.0f\n' "$n" inspect "$t" "$((m / 1024))"
  read -r t m < <(best "$emb" diff "$dir/good-$n.emb" "$dir/bad-$n.emb")
  printf '%-10s %-12s %10.2f %12.0f\n' "$n" diff "$t" "$((m / 1024))"
done
"$emb" diff "$dir/good-1000000.emb" "$dir/bad-1000000.emb" | sed -n '/FIRST/,/^  [a-z]/p' | head -3
