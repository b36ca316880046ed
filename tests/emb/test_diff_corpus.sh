#!/usr/bin/env bash
# emb diff on noisy real runs: good/bad pairs recorded with the real library on the native
# port (tests/lib/diff/diff_workload.c: three threads, frames on absolute deadlines, noise of
# its own seed in every run, and the host's jitter), each case asserting the exit status
# and the rule, frame and context of the earliest significant difference. The window's
# first frame and every seeded frame are drawn at random per run of the test, from the
# seed printed first (DIFF_CORPUS_SEED=N repeats a run's choices; the noise differs).
# The runs are SCHED_FIFO where the system allows (--realtime), as firmware threads have
# priorities, so the suites running beside this one stretch them less; bench/diff_noise.sh
# measures the false-alarm rate without it, under the host's full noise.
# Usage: test_diff_corpus.sh EMB WORKLOAD OUTDIR
set -u
emb=$1 wl=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
seed=${DIFF_CORPUS_SEED:-$(( $(date +%s%N) % 1000000 ))}
echo "# seed $seed (DIFF_CORPUS_SEED=$seed to draw the same frames again)"
RANDOM=$seed
pass=0 fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok - $what"; else fail=$((fail + 1)); echo "not ok - $what"; fi
}

arm=$((10 + RANDOM % 20))  # the window: frames arm .. arm + 148 compared
frames=$((arm + 150))
frame() { echo $((arm + 10 + RANDOM % 100)); } # a frame with at least 39 compared after it
echo "# window armed at frame $arm, $frames frames a run"

# run NAME OPTIONS...: one run of the workload, sealed as NAME.emb; its stdout in NAME.out
run() {
  local name=$1; shift
  "$wl" --realtime --seed $((RANDOM * 32768 + RANDOM)) --arm "$arm" --frames "$frames" "$@" \
    -o "$out/$name.embt" >"$out/$name.out" &&
    "$emb" capture --label "$name" -o "$out/$name.emb" "$out/$name.embt" >/dev/null
}

# pair CASE "GOOD OPTIONS" "BAD OPTIONS" [DIFF OPTIONS]: CASE.json, CASE.txt, CASE.status
pair() {
  local name=$1 good=$2 bad=$3; shift 3
  # shellcheck disable=SC2086
  run "$name-good" $good && run "$name-bad" $bad || { echo "$name: a run failed" >&2; return 1; }
  "$emb" diff --color=never "$@" "$out/$name-good.emb" "$out/$name-bad.emb" >"$out/$name.txt" 2>&1
  echo $? >"$out/$name.status"
  "$emb" diff --json "$@" "$out/$name-good.emb" "$out/$name-bad.emb" >"$out/$name.json" 2>/dev/null
  return 0
}

# epoch_of RUN ID F: the frame whose marker precedes the worker's user_event ID of frame F
# in RUN, as the trace decoder orders the run's events by time: where the worker, which
# runs beside main, happened to record it (the same frame, or later when it ran late).
epoch_of() {
  "$emb" trace --color=never "$out/$1.embt" 2>/dev/null | awk -v id="id=$2" -v a="a=$3" '
    $2 == "main" && $3 == "frame_start" { split($4, f, "="); cur = f[2] }
    $2 == "worker" && $3 == "user_event" && $4 == id && $5 == a { print cur; exit }'
}

# expect CASE STATUS [RULE FRAME CONTEXT]: the exit status, and the first difference
expect() {
  local name=$1 status=$2 rule=${3:-} at=${4:-} ctx=${5:-}
  local got
  got=$(cat "$out/$name.status")
  if [ "$got" != "$status" ]; then
    echo "# $name: exit $got, expected $status"
    sed -n '/FIRST SIGNIFICANT/,+3p' "$out/$name.txt" | sed 's/^/#   /'
    return 1
  fi
  [ -z "$rule" ] && return 0
  python3 - "$out/$name.json" "$rule" "$at" "$ctx" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["first"][0]
want = (sys.argv[2], int(sys.argv[3]), sys.argv[4])
got = (f["rule"], f.get("anchor_value"), f["context"])
if got != want:
    print("# first difference %s, expected %s: %s" % (got, want, f["text"]))
    sys.exit(1)
PY
}

F=$(frame)
pair reorder "" "--reorder $F"
at=$(epoch_of reorder-bad 12 "$F")
check "reordering within one context (worker, frame $F, recorded in frame $at): exit 1, reorder, frame $at, worker" \
  expect reorder 1 reorder "$at" worker

F=$(frame)
pair missing "" "--missing $F"
at=$(epoch_of missing-good 15 "$F")
check "a missing event (worker, frame $F, recorded in the good run in frame $at): exit 1, missing, frame $at, worker" \
  expect missing 1 missing "$at" worker

F=$(frame) G=$(frame)
pair shift "--outlier $G --outlier-us 3000" "--shift $F --shift-us 300"
check "a 300 us shift from frame $F on, one 3 ms outlier in the good run (frame $G): exit 1, interval, frame $F, main" \
  expect shift 1 interval "$F" main
check "  the report gives both runs' spread and how long it held" \
  python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["first"][0]
assert f["direction"] == "above" and f["epochs_in_a_row"] >= 10, f
assert f["good_q_hi_ns"] < 200e3 < f["value_ns"] and f["bad_q_hi_ns"] > 200e3, f
assert all(k in f for k in ("good_median_ns", "good_q_lo_ns", "bad_q_lo_ns", "bad_q_hi_ns", "quantile_pct")), f
' "$out/shift.json"
check "  the text report too" grep -Eq "above the good run's band for [0-9]+ epochs in a row; good run: median .*; bad run: median" "$out/shift.txt"

F=$(frame)
pair onepct "" "--shift $F --shift-us 1"
check "a 1% shift of the work from frame $F on: exit 0, not significant" expect onepct 0

F=$(frame)
pair gap "" "--gap-shift $F --gap-us 40"
at=$(epoch_of gap-bad 13 "$F")
check "a 40 us shift of one gap in a context of user_events only (worker, from frame $F, recorded in frame $at): exit 1, interval, frame $at, worker" \
  expect gap 1 interval "$at" worker

pair fillsame "--ring-packets 8" "--ring-packets 8" --same-build
check "the same ring of the same capacity fills in both runs: exit 0 (the window ends by design)" \
  expect fillsame 0
check "  (both windows did close: $(cat "$out/fillsame-good.out" "$out/fillsame-bad.out" | tr '\n' ' '))" \
  bash -c "grep -q 'window closed' '$out/fillsame-good.out' && grep -q 'window closed' '$out/fillsame-bad.out'"

goodring=$((RANDOM % 2 ? 256 : 16)) # the good run's window closes later, or not at all
pair fillearly "--ring-packets $goodring" "--ring-packets 8"
F=$(awk '/window closed in frame/ { print $5 }' "$out/fillearly-bad.out")
G=$(awk '/window closed in frame/ { print $5 }' "$out/fillearly-good.out")
check "a ring that fills early in the bad run (8 packets, frame ${F:-none}; the good run's $goodring, ${G:+closed in frame }${G:-never closed}): exit 1, drops, frame ${F:-?}, worker" \
  expect fillearly 1 drops "${F:--1}" worker

F1=$(frame) F2=$(frame)
while [ "$F1" = "$F2" ]; do F2=$(frame); done
if [ $((RANDOM % 2)) = 0 ]; then
  pair two "" "--missing $F1 --reorder $F2"
  a1=$(epoch_of two-good 15 "$F1") a2=$(epoch_of two-bad 12 "$F2")
  if [ "$F1" -lt "$F2" ]; then first="missing $a1"; else first="reorder $a2"; fi
else
  pair two "" "--reorder $F1 --missing $F2"
  a1=$(epoch_of two-bad 12 "$F1") a2=$(epoch_of two-good 15 "$F2")
  if [ "$F1" -lt "$F2" ]; then first="reorder $a1"; else first="missing $a2"; fi
fi
check "two differences (frames $F1 and $F2): the earlier first ($first)" \
  expect two 1 ${first% *} ${first#* } worker

check "a capture compared with itself under --same-build: exit 0" \
  test "$("$emb" diff --same-build "$out/reorder-good.emb" "$out/reorder-good.emb" >"$out/self.txt"; echo $?)" = 0
check "  and the report says it is the same run" grep -q "the same run" "$out/self.txt"
check "  in JSON too" bash -c "'$emb' diff --json --same-build '$out/reorder-good.emb' '$out/reorder-good.emb' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"same_run\"]'"
check "two runs are not the same run" bash -c "'$emb' diff --json --same-build '$out/fillsame-good.emb' '$out/fillsame-bad.emb' | python3 -c 'import json,sys; assert not json.load(sys.stdin)[\"same_run\"]'"

# Jitter only: runs of one configuration; any finding is a false alarm.
jitter=$(DIFF_WORKLOAD_ARGS=--realtime bash "$(dirname "$0")/diff_jitter_pairs.sh" "$emb" "$wl" "$out/jitter" 20 "$RANDOM" 0)
jrc=$?
echo "$jitter" | sed 's/^/# /'
check "jitter only, 20 independent pairs: exit 0 every time ($(echo "$jitter" | tail -1))" test "$jrc" = 0

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
