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
"$build/bin/console" --frames 300 -o "$out/console.embt"

say "2. Decoding with emb trace"
"$emb" trace --color=never "$out/console.embt" > "$out/trace.txt"
"$emb" trace --format ndjson -o "$out/trace.ndjson" "$out/console.embt"
"$emb" trace --format perfetto -o "$out/trace.json" "$out/console.embt"
"$emb" trace --format ctf -o "$out/trace" "$out/console.embt"
"$emb" trace --summary "$out/console.embt" >/dev/null

say "3. Reading the CTF trace with babeltrace2, event for event"
"$emb" trace --json --summary "$out/console.embt" > "$out/trace.summary.json"
/usr/bin/python3 "$(dirname "$0")/../../tests/tools/bt_compare.py" \
    "$out/trace" "$out/trace.ndjson" "$out/trace.summary.json"

say "Made in $out:"
printf '  %-16s %s\n' \
  console.embt "the raw trace stream the native port wrote" \
  trace.txt "emb trace: aligned text, $(wc -l < "$out/trace.txt") lines" \
  trace.ndjson "one JSON event per line" \
  trace.json "Perfetto / chrome://tracing (open in https://ui.perfetto.dev)" \
  trace/ "CTF 1.8 directory for babeltrace2 and Trace Compass"
