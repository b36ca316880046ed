#!/usr/bin/env bash
# Benchmarks of emb inspect and emb diff on large captures made by the real library
# (bench/diff_bench.c): wall and CPU time and peak memory (/usr/bin/time -v), best of 3,
# and the peak per event of the captures read (a diff reads two).
# Then PAIRS (default 5) pairs of diffs, 1M then 4M one after the other: the 4M/1M ratio of
# the medians of their CPU times (user + system), with the lowest and highest ratio of a pair.
# Usage: bench/diff.sh [BUILD [OTHER_EMB]]   (results: docs/benchmarks.md)
# OTHER_EMB: another build's emb (main's, say), timed on the same captures in the same run.
# PAIRS=N in the environment: the number of pairs.
set -euo pipefail
build=${1:-build}
other=${2:-}
emb="$build/bin/emb"
gen="$build/bin/diff_bench"
dir="$build/bench-diff"
mkdir -p "$dir"

best() { # best WALL-SECONDS, its CPU seconds and peak RSS (KiB) of 3 runs (exit 0 or 1 accepted)
  local best_t=999 best_c=0 best_m=0
  for _ in 1 2 3; do
    /usr/bin/time -v "$@" >/dev/null 2>"$dir/time.txt" || [ $? -eq 1 ] || { cat "$dir/time.txt" >&2; exit 1; }
    local t c m
    t=$(awk -F': ' '/Elapsed \(wall clock\)/ {split($2, a, ":"); print a[1] * 60 + a[2]}' "$dir/time.txt")
    c=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$dir/time.txt")
    m=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    if awk "BEGIN {exit !($t < $best_t)}"; then best_t=$t best_c=$c best_m=$m; fi
  done
  echo "$best_t $best_c $best_m"
}

row() { # row EVENTS-READ BINARY-NAME COMMAND-NAME EMB ARGS...
  local events=$1 who=$2 what=$3 t c m
  shift 3
  read -r t c m < <(best "$@")
  printf '%-9s %-6s %-8s %8.2f %8.2f %9.0f %7.1f\n' "$n" "$who" "$what" "$t" "$c" "$((m / 1024))" \
    "$(awk "BEGIN {print $m * 1024 / $events}")"
}

printf '%-9s %-6s %-8s %8s %8s %9s %7s\n' events emb command wall_s cpu_s peak_MiB B/event
for n in 1000000 4000000; do
  "$gen" "$dir/good-$n.embt" "$n"
  "$gen" "$dir/bad-$n.embt" "$n" --bad $((n / 200))
  "$emb" capture --label good -o "$dir/good-$n.emb" "$dir/good-$n.embt" >/dev/null
  "$emb" capture --label bad -o "$dir/bad-$n.emb" "$dir/bad-$n.embt" >/dev/null
  for who in this ${other:+other}; do
    bin=$emb
    [ "$who" = other ] && bin=$other
    row "$n" "$who" inspect "$bin" inspect "$dir/good-$n.emb"
    row $((2 * n)) "$who" diff "$bin" diff "$dir/good-$n.emb" "$dir/bad-$n.emb"
  done
  if [ -n "$other" ]; then
    "$emb" diff "$dir/good-$n.emb" "$dir/bad-$n.emb" >"$dir/this.txt" || true
    "$other" diff "$dir/good-$n.emb" "$dir/bad-$n.emb" >"$dir/other.txt" || true
    cmp -s "$dir/this.txt" "$dir/other.txt" && echo "$n: both reports the same bytes" ||
      echo "$n: the reports differ"
  fi
  rm -f "$dir/good-$n.embt" "$dir/bad-$n.embt"
done

cpu_of() { # cpu_of ARGS...: CPU seconds (user + system) of one run (exit 0 or 1 accepted)
  /usr/bin/time -f '%U %S' -o "$dir/cpu.txt" "$@" >/dev/null 2>&1 || [ $? -eq 1 ] || exit 1
  tail -n 1 "$dir/cpu.txt" | awk '{print $1 + $2}' # the last line: time notes an exit status 1 before it
}
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
: >"$dir/pairs.txt"
for _ in $(seq "${PAIRS:-5}"); do
  small=$(cpu_of "$emb" diff "$dir/good-1000000.emb" "$dir/bad-1000000.emb")
  large=$(cpu_of "$emb" diff "$dir/good-4000000.emb" "$dir/bad-4000000.emb")
  echo "$small $large" >>"$dir/pairs.txt"
done
m1=$(cut -d' ' -f1 "$dir/pairs.txt" | median)
m4=$(cut -d' ' -f2 "$dir/pairs.txt" | median)
read -r lo hi < <(awk '$1 > 0 {r = $2 / $1; if (!n++ || r < lo) lo = r; if (r > hi) hi = r} END {print lo, hi}' "$dir/pairs.txt")
printf 'diff CPU, %d pairs: 1M median %.3f s, 4M median %.3f s, ratio of medians %.2f (pairs %.2f .. %.2f)\n' \
  "$(wc -l <"$dir/pairs.txt")" "$m1" "$m4" "$(awk "BEGIN {print $m4 / $m1}")" "$lo" "$hi"
"$emb" diff "$dir/good-1000000.emb" "$dir/bad-1000000.emb" | sed -n '/FIRST/,/^  [a-z]/p' | head -3 || true
