#!/usr/bin/env bash
# The Perfetto exports of one trace of about a million events: the Trace Event Format JSON
# (--format perfetto) against Perfetto's protobuf (--format perfetto-proto): bytes written,
# the same gzip'd, wall and user CPU time of `emb trace` (median of ROUNDS runs) and its
# peak memory, with NDJSON beside them for scale.
# The trace is the console workload's (examples/console) at a 100 us frame period.
# Usage: bench/perfetto.sh BUILD_DIR. Writes BUILD_DIR/bench/perfetto.json. Knobs
# (environment): EMB_BENCH_PERFETTO_FRAMES (35000), EMB_BENCH_ROUNDS (5).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bench/perfetto.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/bench/perfetto
FRAMES=${EMB_BENCH_PERFETTO_FRAMES:-35000}
ROUNDS=${EMB_BENCH_ROUNDS:-5}
emb=$BUILD/bin/emb
mkdir -p "$OUT"

"$BUILD/bin/console" --frames "$FRAMES" --period-us 100 -o "$OUT/run.embt" \
    --log "$OUT/run.embl" >/dev/null 2>&1
events=$("$emb" trace --json --summary "$OUT/run.embt" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["events"])')
stream=$(stat -c %s "$OUT/run.embt")

# The median of ROUNDS runs of `emb trace -f FMT`: wall and user CPU time (ms; the machine
# is shared, so user time is the steadier figure), and the largest peak resident set (KB).
measure() { # FMT FILE
    local i
    for i in $(seq "$ROUNDS"); do
        /usr/bin/time -o "$OUT/time.txt" -f '%e %U %M' "$emb" trace -f "$1" -o "$2" "$OUT/run.embt" \
            >/dev/null 2>&1
        cat "$OUT/time.txt"
    done | python3 -c '
import sys, statistics
rows = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
print(round(statistics.median(r[0] for r in rows) * 1000), round(statistics.median(r[1] for r in rows) * 1000), int(max(r[2] for r in rows)))'
}

printf '%-15s %12s %12s %9s %9s %10s\n' format bytes gzip wall_ms user_ms peak_kb
json="{\"events\": $events, \"stream_bytes\": $stream, \"rounds\": $ROUNDS, \"formats\": {"
sep=
for fmt in perfetto perfetto-proto ndjson; do
    file=$OUT/run.$fmt
    read -r wall user peak < <(measure "$fmt" "$file")
    bytes=$(stat -c %s "$file")
    gz=$(gzip -c "$file" | wc -c)
    printf '%-15s %12s %12s %9s %9s %10s\n' "$fmt" "$bytes" "$gz" "$wall" "$user" "$peak"
    json+="$sep\"$fmt\": {\"bytes\": $bytes, \"gzip_bytes\": $gz, \"wall_ms\": $wall, \"user_ms\": $user, \"peak_kb\": $peak}"
    sep=", "
done
echo "$events events, trace stream $stream bytes"
echo "$json}}" >"$BUILD/bench/perfetto.json"
