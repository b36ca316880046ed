#!/usr/bin/env bash
# `make demo`, the fleet: `emb fleet serve` takes uploads; two console "devices" fault in
# their sensor driver at different frames, and each uploads its crash record on its next
# start, as a device in the field does; the MPS2 demo's record (when it ran) is ingested
# from its file; the symbol store gets both ELFs; the buckets and the HTML report follow.
# Leaves OUTDIR/fleet.html and OUTDIR/fleet.db (default BUILD/demo).
# usage: demo.sh [BUILD [OUTDIR]]
set -euo pipefail
build=${1:-build}
out=${2:-$build/demo}
emb="$build/bin/emb"
work="$out/fleet"
mkdir -p "$work"
rm -f "$out/fleet.db" "$out/fleet.db-wal" "$out/fleet.db-shm" "$out/fleet.html" "$work"/*
db="sqlite:$out/fleet.db"

say() { printf '\033[1m%s\033[0m\n' "$*"; }

say "Fleet 1. emb fleet serve: uploads over HTTP, one token a device"
printf 'console-1-secret console-1\nconsole-2-secret console-2\n' > "$work/tokens"
"$emb" fleet symbols add --db "$db" "$build/bin/console"
"$emb" fleet serve --db "$db" --tokens "$work/tokens" --listen 127.0.0.1:0 \
  > "$work/serve.out" 2> "$work/serve.log" &
server=$!
trap 'kill -TERM $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -qs listening "$work/serve.out" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/serve.out")
[ -n "$port" ] || { echo "demo: emb fleet serve did not start (see $work/serve.log)" >&2; exit 1; }
echo "listening on 127.0.0.1:$port"

say "Fleet 2. Two devices fault; each uploads its crash record on its next start"
for device in 1 2; do
  status=0
  { "$build/bin/console" --frames 300 --retained "$work/retained-$device.bin" \
      --fault-frame $((100 * device)) -o "$work/fault-$device.embt"; } 2>/dev/null || status=$?
  [ "$status" -eq 139 ] || { echo "demo: device $device should die of SIGSEGV, not $status" >&2; exit 1; }
  EMB_UPLOAD_TOKEN=console-$device-secret "$build/bin/console" --frames 5 \
    --retained "$work/retained-$device.bin" --upload "http://127.0.0.1:$port/v1/upload" \
    -o "$work/boot-$device.embt" | grep upload
done
kill -TERM $server
wait $server
trap - EXIT
if [ -f "$out/mps2/crash.bin" ] && [ -f "$build/fw/qemu-mps2-m3.elf" ]; then
  "$emb" fleet symbols add --db "$db" "$build/fw/qemu-mps2-m3.elf"
  "$emb" fleet ingest --db "$db" --device mps2-board "$out/mps2/crash.bin"
fi

say "Fleet 3. The buckets, and the report"
"$emb" fleet buckets --db "$db" --color=never
"$emb" fleet report --db "$db" -o "$out/fleet.html"
echo "report: $out/fleet.html"
