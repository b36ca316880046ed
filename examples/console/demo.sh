#!/usr/bin/env bash
# `make demo`: run the console workload, decode its trace every way `emb` can, and check
# the CTF with babeltrace2. Leaves everything in OUTDIR (default BUILD/demo).
# usage: demo.sh [BUILD [OUTDIR]]
set -euo pipefail
build=${1:-build}
out=${2:-$build/demo}
emb="$build/bin/emb"
mkdir -p "$out"
rm -rf "$out/trace"

say() { printf '\033[1m%s\033[0m\n' "$*"; }

say "1. Recording the console workload (frame loop, audio, video link, render queue, timer IRQ)"
"$build/bin/console" --frames 300 -o "$out/console.embt" --log "$out/console.embl"

say "2. Decoding with emb trace"
"$emb" trace --color=never "$out/console.embt" > "$out/trace.txt"
"$emb" trace --format ndjson -o "$out/trace.ndjson" "$out/console.embt"
"$emb" trace --format perfetto --log "$out/console.embl" --elf "$build/bin/console" \
  -o "$out/trace.json" "$out/console.embt"
bash "$(dirname "$0")/../../tests/support/node/check_trace_event.sh" "$out/trace.json"
"$emb" trace --format ctf -o "$out/trace" "$out/console.embt"
"$emb" trace --summary "$out/console.embt" >/dev/null

say "3. Reading the CTF trace with babeltrace2, event for event"
"$emb" trace --json --summary "$out/console.embt" > "$out/trace.summary.json"
/usr/bin/python3 "$(dirname "$0")/../../tests/support/bt_compare.py" \
    "$out/trace" "$out/trace.ndjson" "$out/trace.summary.json"

say "4. Two runs in window mode armed at frame 600: as built, and with a stall seeded at frame 612"
rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
"$build/bin/console" --mode window --arm-frame 600 --frames 700 -o "$out/good.embt" >/dev/null
"$build/bin/console" --mode window --arm-frame 600 --frames 700 --stall-frame 612 \
  -o "$out/bad.embt" >/dev/null
"$emb" capture --label good --revision "$rev" -o "$out/good.emb" "$out/good.embt"
"$emb" capture --label bad --revision "$rev" -o "$out/bad.emb" "$out/bad.embt"
"$emb" inspect "$out/bad.emb" | sed -n '1,5p'

say "5. Comparing them with emb diff"
set +e
"$emb" diff --color=never --rules "$(dirname "$0")/diff.rules" --html "$out/diff.html" \
  "$out/good.emb" "$out/bad.emb" > "$out/diff.txt"
status=$?
set -e
if [ "$status" -ne 1 ]; then
  echo "demo: emb diff exited $status, expected 1 (a significant difference)" >&2
  exit 1
fi
sed -n '/FIRST SIGNIFICANT/,/^  good run/p' "$out/diff.txt" | head -4
if ! grep -A2 'FIRST SIGNIFICANT' "$out/diff.txt" | grep -q 'frame 612), context video-link'; then
  echo "demo: the first difference is not the link at frame 612 (see $out/diff.txt)" >&2
fi

say "6. A field crash: the sensor driver faults at frame 120, the next start finds the record"
rm -f "$out/retained.bin" "$out/crash.rec"
status=0
{ "$build/bin/console" --frames 300 --retained "$out/retained.bin" --fault-frame 120 \
    -o "$out/fault.embt"; } 2>/dev/null || status=$?
echo "console: ended by signal $((status - 128)) (SIGSEGV), as seeded"
if [ "$status" -ne 139 ]; then
  echo "demo: the seeded fault should end the run with SIGSEGV (status 139), not $status" >&2
  exit 1
fi
"$build/bin/console" --frames 10 --retained "$out/retained.bin" --crash-out "$out/crash.rec" \
  -o "$out/restart.embt"
"$emb" crash --elf "$build/bin/console" --color=never "$out/crash.rec" > "$out/crash.txt"
sed -n '1,12p' "$out/crash.txt"

say "7. Decoding the deferred log with emb log, on the trace's time base"
"$emb" log --elf "$build/bin/console" --trace "$out/console.embt" --color=never \
  "$out/console.embl" > "$out/log.txt"
"$emb" log --elf "$build/bin/console" --trace "$out/console.embt" --json \
  "$out/console.embl" > "$out/log.ndjson"
# One clock: the log's "frame 50 published" lies between the trace's frame_start of frame
# 50 and that of frame 51 (an order, not a duration: a loaded machine may preempt the
# thread for longer than a frame between the two).
log_t=$(awk '/frame 50 published/ { print $1; exit }' "$out/log.txt")
trace_t=$(awk '$3 == "frame_start" && $4 == "frame=50" { print $1; exit }' "$out/trace.txt")
next_t=$(awk '$3 == "frame_start" && $4 == "frame=51" { print $1; exit }' "$out/trace.txt")
if ! awk -v l="$log_t" -v t="$trace_t" -v n="$next_t" 'BEGIN { exit !(l != "" && t != "" && n != "" && l >= t && l < n) }'; then
  echo "demo: log and trace disagree on time: frame 50 published at $log_t, started at $trace_t, frame 51 at $next_t" >&2
  exit 1
fi
echo "frame 50: started at ${trace_t}s in the trace, published at ${log_t}s in the log"

say "Made in $out:"
printf '  %-16s %s\n' \
  console.embt "the raw trace stream the native port wrote" \
  trace.txt "emb trace: aligned text, $(wc -l < "$out/trace.txt") lines" \
  trace.ndjson "one JSON event per line" \
  trace.json "Perfetto / chrome://tracing, trace and log (open in https://ui.perfetto.dev)" \
  trace/ "CTF 1.8 directory for babeltrace2 and Trace Compass" \
  good.emb "sealed capture: window armed at frame 600, as built" \
  bad.emb "sealed capture: the same binary, --stall-frame 612 stamped in its identity" \
  diff.txt "emb diff good.emb bad.emb: the earliest significant difference first" \
  diff.html "the same with both runs' timelines around the first difference" \
  crash.rec "the crash record of the seeded fault, as the next start saved it" \
  crash.txt "emb crash: the faulting line, registers, the last events before the fault" \
  console.embl "the raw log stream (frames of deferred records)" \
  log.txt "emb log: the log, decoded, $(wc -l < "$out/log.txt") lines, times on the trace's clock" \
  log.ndjson "one JSON record per line"
