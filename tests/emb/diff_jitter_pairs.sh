#!/usr/bin/env bash
# N independent jitter-only pairs of the diff workload (tests/lib/diff/diff_workload.c): two
# runs of one configuration, each with noise of its own seed and the host's own jitter,
# compared with emb diff --same-build. Any exit status but 0 is a false alarm. Prints one
# line per false alarm (its first difference) and "false alarms: K of N (R%)"; exits 0
# when K is at most MAX (default 0), 1 otherwise, 2 on a failed run.
# Usage: diff_jitter_pairs.sh EMB WORKLOAD OUTDIR N SEED [MAX]
# (DIFF_WORKLOAD_ARGS: more options for every run, e.g. --realtime)
set -u
emb=$1 wl=$2 out=$3 n=$4 seed=$5 max=${6:-0}
mkdir -p "$out"
RANDOM=$seed
alarms=0
for i in $(seq 1 "$n"); do
  arm=$((10 + RANDOM % 20))
  for side in good bad; do
    # shellcheck disable=SC2086
    "$wl" ${DIFF_WORKLOAD_ARGS:-} --seed $((RANDOM * 32768 + RANDOM)) --arm "$arm" --frames $((arm + 150)) \
      -o "$out/$side.embt" >/dev/null &&
      "$emb" capture --label "$side" -o "$out/$side.emb" "$out/$side.embt" >/dev/null ||
      { echo "pair $i: the $side run failed" >&2; exit 2; }
  done
  "$emb" diff --same-build ${DIFF_ARGS:-} --color=never "$out/good.emb" "$out/bad.emb" >"$out/diff.txt" 2>&1
  rc=$?
  if [ "$rc" -eq 2 ]; then
    cat "$out/diff.txt" >&2
    exit 2
  fi
  if [ "$rc" -ne 0 ]; then
    alarms=$((alarms + 1))
    cp "$out/diff.txt" "$out/false-alarm-$i.txt"
    echo "pair $i: false alarm: $(grep -A2 'FIRST SIGNIFICANT' "$out/diff.txt" | tr -s ' ' | tr '\n' ' ')"
  fi
done
awk -v k="$alarms" -v n="$n" 'BEGIN { printf "false alarms: %d of %d (%.1f%%)\n", k, n, 100 * k / n }'
[ "$alarms" -le "$max" ]
