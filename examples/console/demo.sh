#!/usr/bin/env bash
# `make demo`: run the console workload, decode its trace every way `emb` can, and check
# the CTF with babeltrace2. Leaves everything in BUILD/demo.
set -euo pipefail
build=${1:-build}
out="$build/demo"
emb="$build/bin/emb"
mkdir -p "$out"
rm -rf "$out/trace"

say() { printf '\033[1m%s\033[0m\n' "$*"; }

say "1. Recording the console workload (frame loop, audio, video link, render queue, timer IRQ)"
"$build/bin/console" --frames 300 -o "$out/console.embt" --log "$out/console.embl"

say "2. Decoding with emb trace"
"$emb" trace --color=never "$out/console.embt" > "$out/trace.txt"
"$emb" trace --format ndjson -o "$out/trace.ndjson" "$out/console.embt"
"$emb" trace --format perfetto -o "$out/trace.json" "$out/console.embt"
"$emb" trace --format ctf -o "$out/trace" "$out/console.embt"
"$emb" trace --summary "$out/console.embt" >/dev/null

say "3. Reading the CTF trace with babeltrace2"
ours=$(wc -l < "$out/trace.ndjson")
theirs=$(babeltrace2 "$out/trace" | wc -l)
if [ "$ours" -ne "$theirs" ]; then
  echo "demo: emb decoded $ours events but babeltrace2 read $theirs" >&2
  exit 1
fi
echo "babeltrace2 reads the same $theirs events"

say "4. Decoding the deferred log with emb log, on the trace's time base"
"$emb" log --elf "$build/bin/console" --trace "$out/console.embt" --color=never \
  "$out/console.embl" > "$out/log.txt"
"$emb" log --elf "$build/bin/console" --trace "$out/console.embt" --json \
  "$out/console.embl" > "$out/log.ndjson"
# One clock: the log's "frame 50 published" follows the trace's frame_start of frame 50
# within the frame.
log_t=$(awk '/frame 50 published/ { print $1; exit }' "$out/log.txt")
trace_t=$(awk '$3 == "frame_start" && $4 == "frame=50" { print $1; exit }' "$out/trace.txt")
if ! awk -v l="$log_t" -v t="$trace_t" 'BEGIN { exit !(l >= t && l - t < 0.001) }'; then
  echo "demo: log and trace disagree on time: frame 50 published at $log_t, started at $trace_t" >&2
  exit 1
fi
echo "frame 50: started at ${trace_t}s in the trace, published at ${log_t}s in the log"

say "Made in $out:"
printf '  %-16s %s\n' \
  console.embt "the raw trace stream the native port wrote" \
  trace.txt "emb trace: aligned text, $(wc -l < "$out/trace.txt") lines" \
  trace.ndjson "one JSON event per line" \
  trace.json "Perfetto / chrome://tracing (open in https://ui.perfetto.dev)" \
  trace/ "CTF 1.8 directory for babeltrace2 and Trace Compass" \
  console.embl "the raw log stream (frames of deferred records)" \
  log.txt "emb log: the log, decoded, $(wc -l < "$out/log.txt") lines, times on the trace's clock" \
  log.ndjson "one JSON record per line"
