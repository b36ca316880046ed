#!/usr/bin/env bash
# The cost of one deferred log call with two int arguments, against snprintf of the same
# message and LTTng-UST's tracef, in one run. Usage: bench/log.sh BUILD_DIR
#
# Builds log_bench and log_bench_nots if needed; uses the running LTTng session daemon or
# starts one (and stops it again unless someone else created sessions in it meanwhile);
# makes a snapshot session that records lttng_ust_tracef:*; runs the wall-clock pass (1
# and 2 threads, median of rounds, thread CPU time per call); checks the snapshot really
# holds tracef events; runs callgrind once per variant, counting instructions only inside
# that variant's loop function; tears the session down. Prints a Markdown table and writes
# BUILD_DIR/bench/log.json. Knobs: EMB_LOG_BENCH_CALLS (1000000), EMB_LOG_BENCH_ROUNDS (7),
# EMB_LOG_BENCH_CG_CALLS (200000).
set -euo pipefail

die() {
    echo "bench/log.sh: error: $*" >&2
    exit 1
}
[ $# -eq 1 ] || { echo "usage: bench/log.sh BUILD_DIR" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/bench/log
CALLS=${EMB_LOG_BENCH_CALLS:-1000000}
ROUNDS=${EMB_LOG_BENCH_ROUNDS:-7}
CG_CALLS=${EMB_LOG_BENCH_CG_CALLS:-200000}
SESSION=emb-log-bench-$$
daemon_pid=
session=0

cleanup() {
    local rc=$?
    if [ "$session" = 1 ]; then
        timeout 30 lttng destroy "$SESSION" >/dev/null 2>&1 || echo "bench/log.sh: warning: session $SESSION left" >&2
    fi
    if [ -n "$daemon_pid" ]; then
        if timeout 30 lttng list 2>/dev/null | grep -E '^ *[0-9]+\) ' >/dev/null; then
            echo "bench/log.sh: lttng-sessiond $daemon_pid now holds other sessions; left running" >&2
        else
            kill -TERM "$daemon_pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
        fi
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in cmake lttng lttng-sessiond valgrind babeltrace2 awk timeout; do
    command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh installs it)"
done
[ -f "$BUILD/CMakeCache.txt" ] || timeout 300 cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
case "$build_type" in
Release | RelWithDebInfo) ;;
*) die "$BUILD is a '${build_type:-default}' build: benchmark an optimised one" ;;
esac
timeout 900 cmake --build "$BUILD" -j2 --target log_bench log_bench_nots >/dev/null || die "build failed"
BIN=$BUILD/bench/log_bench
NOTS=$BUILD/bench/log_bench_nots
[ -x "$BIN" ] && [ -x "$NOTS" ] || die "log_bench was not built (is liblttng-ust-dev installed?)"
rm -rf "$OUT"
mkdir -p "$OUT/callgrind"

# The enabled loop's machine code, for reading.
objdump -d --no-show-raw-insn "$BIN" > "$OUT/log_bench.dis"
for fn in enabled disabled; do
    awk -v f="<log_bench_$fn>:" '$2 == f { on = 1 } on && /^$/ { on = 0 } on' "$OUT/log_bench.dis" > "$OUT/$fn.s"
done

# ---- LTTng: a daemon (ours if none runs) and a snapshot session recording tracef ----
if timeout 30 lttng list >/dev/null 2>&1; then
    echo "bench/log.sh: using the running LTTng session daemon"
else
    timeout 60 lttng-sessiond --daemonize --no-kernel || die "lttng-sessiond did not start"
    if [ "$(id -u)" = 0 ]; then rundir=/var/run/lttng; else rundir=${LTTNG_HOME:-$HOME}/.lttng; fi
    daemon_pid=$(cat "$rundir/lttng-sessiond.pid" 2>/dev/null) || die "no $rundir/lttng-sessiond.pid"
fi
timeout 30 lttng create "$SESSION" --snapshot --output="$OUT/lttng" >/dev/null || die "lttng create failed"
session=1
timeout 30 lttng enable-channel -s "$SESSION" -u ch --subbuf-size=1M --num-subbuf=4 >/dev/null
timeout 30 lttng enable-event -s "$SESSION" -u -c ch 'lttng_ust_tracef:*' >/dev/null || die "enable-event failed"
timeout 30 lttng start "$SESSION" >/dev/null || die "lttng start failed"
# An application registers with the daemon at start-up; wait for that, so tracef records.
export LTTNG_UST_REGISTER_TIMEOUT=-1

echo "bench/log.sh: wall clock, $ROUNDS rounds of $CALLS calls per thread per variant"
timeout 1200 "$BIN" --calls "$CALLS" --rounds "$ROUNDS" --threads 1,2 > "$OUT/wall.txt" || die "log_bench failed"
timeout 1200 "$NOTS" --calls "$CALLS" --rounds "$ROUNDS" --threads 1,2 > "$OUT/wall_nots.txt" || die "log_bench_nots failed"
timeout 60 lttng snapshot record -s "$SESSION" >/dev/null || die "lttng snapshot record failed"
tracef_events=$(timeout 300 babeltrace2 "$OUT/lttng" 2>/dev/null | grep -c 'lttng_ust_tracef:event' || true)
[ "${tracef_events:-0}" -gt 0 ] || die "the LTTng snapshot holds no tracef event: tracef was not traced"
echo "bench/log.sh: the LTTng snapshot holds $tracef_events tracef events"

echo "bench/log.sh: callgrind, $CG_CALLS calls per variant"
: > "$OUT/instr.txt"
for bin in "$BIN" "$NOTS"; do
    suffix=; [ "$bin" = "$NOTS" ] && suffix=_nots
    while read -r variant fn; do
        [ -n "$suffix" ] && [ "$variant" != empty ] && [ "$variant" != enabled ] && continue
        out=$OUT/callgrind/$variant$suffix.out
        timeout 900 valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect="$fn" \
            "$bin" --variant "$variant" --calls "$CG_CALLS" > "$OUT/callgrind/$variant$suffix.log" 2>&1 ||
            die "callgrind of $variant$suffix failed (see $OUT/callgrind/$variant$suffix.log)"
        ir=$(sed -n 's/^totals: *\([0-9][0-9]*\).*/\1/p' "$out")
        [ -n "$ir" ] || die "no instruction total in $out"
        echo "$variant$suffix $ir" >> "$OUT/instr.txt"
    done < <("$bin" --list)
done
timeout 30 lttng stop "$SESSION" >/dev/null || true

# ---- The table ----
awk -v cg="$CG_CALLS" -v json="$BUILD/bench/log.json" -v cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)" '
FILENAME ~ /wall_nots/ { ns[$1 "_nots", $2] = $3; next }
FILENAME ~ /wall/ { ns[$1, $2] = $3; next }
{ ir[$1] = $2 }
function net(v, t) { return ns[v, t] - ns[(v ~ /_nots$/ ? "empty_nots" : "empty"), t] }
function instr(v) { return (ir[v] - ir[(v ~ /_nots$/ ? "empty_nots" : "empty")]) / cg }
END {
    split("enabled enabled_nots disabled clock snprintf tracef", order, " ")
    label["enabled"] = "EMB_LOG_INF, two ints"
    label["enabled_nots"] = "the same, CONFIG_EMB_LOG_TIMESTAMP=0"
    label["disabled"] = "the same, below the run-time level"
    label["clock"] = "emb_port_timestamp() alone"
    label["snprintf"] = "snprintf of the message into a buffer"
    label["tracef"] = "LTTng-UST tracef, session recording"
    printf "| call | ns, 1 thread | ns, 2 threads | instructions |\n|---|---:|---:|---:|\n"
    printf "{\"cpu\": \"%s\", \"calls\": {", cpu > json
    for (i = 1; i <= 6; i++) {
        v = order[i]
        printf "| %s | %.1f | %.1f | %.0f |\n", label[v], net(v, 1), net(v, 2), instr(v)
        printf "%s\"%s\": {\"ns_1\": %.2f, \"ns_2\": %.2f, \"instructions\": %.1f}", (i > 1 ? ", " : ""), v, net(v, 1), net(v, 2), instr(v) > json
    }
    printf "}}\n" > json
    printf "\nsnprintf / EMB_LOG_INF: %.1fx (1 thread), %.1fx (2 threads); without the timestamp: %.1fx\n", net("snprintf", 1) / net("enabled", 1), net("snprintf", 2) / net("enabled", 2), net("snprintf", 1) / net("enabled_nots", 1)
    printf "tracef / EMB_LOG_INF: %.1fx (1 thread), %.1fx (2 threads)\n", net("tracef", 1) / net("enabled", 1), net("tracef", 2) / net("enabled", 2)
}' "$OUT/wall.txt" "$OUT/wall_nots.txt" "$OUT/instr.txt" | tee "$OUT/table.md"
echo "bench/log.sh: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores, $(uname -r); results in $OUT"
