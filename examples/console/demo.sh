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
"$build/bin/console" --frames 300 -o "$out/console.embt"

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

say "4. A field crash: the sensor driver faults at frame 120, the next start finds the record"
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

say "Made in $out:"
printf '  %-16s %s\n' \
  console.embt "the raw trace stream the native port wrote" \
  trace.txt "emb trace: aligned text, $(wc -l < "$out/trace.txt") lines" \
  trace.ndjson "one JSON event per line" \
  trace.json "Perfetto / chrome://tracing (open in https://ui.perfetto.dev)" \
  trace/ "CTF 1.8 directory for babeltrace2 and Trace Compass" \
  crash.rec "the crash record of the seeded fault, as the next start saved it" \
  crash.txt "emb crash: the faulting line, registers, the last events before the fault"
