#!/usr/bin/env bash
# The fleet at scale: crash records made by the target library's encoders for the MPS2
# firmware (varied fault class, faulting function, firmware version, device), ingested
# one transaction each and symbolised from the symbol store (bench/fleet_bench.c), into
# SQLite (WAL, one file) and into a PostgreSQL server started here (tests/support/
# pg_temp.sh, durable: fsync on); then the bucket query's median of 5. 1M records too
# when FLEET_BENCH_1M=1 (long).
# Usage: bench/fleet.sh [BUILD]   (results: docs/benchmarks.md, BUILD/bench/fleet.json)
set -euo pipefail
build=${1:-build}
bench="$build/bench/fleet_bench"
fw="$build/fw/qemu-mps2-m3.elf"
dir="$build/bench-fleet"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir" "$build/bench"
[ -x "$bench" ] && [ -f "$fw" ] || { echo "bench/fleet.sh: build fleet_bench and the MPS2 firmware first" >&2; exit 1; }
nm --defined-only "$fw" | awk '$2 ~ /^[tT]$/ {print $1}' | head -64 > "$dir/pcs.txt"
sizes="10000 100000"
[ "${FLEET_BENCH_1M:-0}" = 1 ] && sizes="$sizes 1000000"

. "$here/../tests/support/pg_temp.sh"
PG_TEMP_OPTIONS="" pg_temp_start "$dir/pg"
trap pg_temp_stop EXIT

json="$build/bench/fleet.json"
echo "[" > "$json"
printf '%-11s %9s %10s %10s %12s %11s %8s\n' engine records "ingest s" records/s "cpu us/rec" "buckets ms" buckets
first=1
for n in $sizes; do
  for engine in sqlite postgresql; do
    if [ $engine = sqlite ]; then
      rm -f "$dir/fleet.db" "$dir/fleet.db-wal" "$dir/fleet.db-shm"
      url="sqlite:$dir/fleet.db"
    else
      "$PG_BIN/psql" -q "$PG_TEMP_URL" -c "DROP TABLE IF EXISTS records, symbols, fleet_schema" >/dev/null 2>&1
      url=$PG_TEMP_URL
    fi
    out=$("$bench" "$url" "$n" "$fw" "$dir/pcs.txt")
    read -r _ secs rate cpu <<<"$(echo "$out" | grep '^ingest')"
    read -r _ ms nb <<<"$(echo "$out" | grep '^buckets')"
    printf '%-11s %9s %10s %10s %12s %11s %8s\n' $engine "$n" "$secs" "$rate" "$cpu" "$ms" "$nb"
    [ $first = 1 ] || echo "," >> "$json"
    first=0
    printf '{"engine": "%s", "records": %s, "ingest_s": %s, "records_per_s": %s, "cpu_us_per_record": %s, "buckets_ms": %s, "buckets": %s}' \
      $engine "$n" "$secs" "$rate" "$cpu" "$ms" "$nb" >> "$json"
  done
done
echo "]" >> "$json"
