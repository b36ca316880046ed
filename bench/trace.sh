#!/usr/bin/env bash
# The cost of one two-field trace event, against a bare ring write and
# LTTng-UST, in one run. Usage: bench/trace.sh BUILD_DIR
#
# Builds trace_bench if needed, starts an LTTng session daemon if none runs, creates a
# snapshot session tracing emb_bench:work_start, runs the wall-clock pass (1 and 2
# threads), records a snapshot and checks LTTng really recorded, runs the callgrind pass
# (one run per variant, --toggle-collect on its loop function; the session is still up so
# LTTng's traced path is the one counted), then tears the session and the daemon down.
# Prints a table; writes BUILD_DIR/bench/trace.json. Exits non-zero if any variant could
# not be measured. Knobs (environment): EMB_BENCH_EVENTS (2000000), EMB_BENCH_ROUNDS (11),
# EMB_BENCH_CG_EVENTS (1000000).
set -euo pipefail

die() {
    echo "bench: error: $*" >&2
    exit 1
}

[ $# -eq 1 ] || { echo "usage: bench/trace.sh BUILD_DIR" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/bench
BIN=$OUT/trace_bench
EVENTS=${EMB_BENCH_EVENTS:-2000000}
ROUNDS=${EMB_BENCH_ROUNDS:-11}
CG_EVENTS=${EMB_BENCH_CG_EVENTS:-1000000}

# Every step is bounded: a wedged daemon or tracer must not hang `make bench`. A step
# runs in the background and is waited for, so an interrupt reaches the traps at once
# (timeout puts itself in a process group of its own, out of reach of the terminal's ^C),
# and cleanup stops the step it interrupted.
step_pid=
step() {
    local limit=$1
    shift
    timeout --kill-after=10 "$limit" "$@" 3>&- &
    step_pid=$!
    wait "$step_pid"
}

# On any exit: stop the running step, destroy our session, stop the daemon we started.
# Fd 3 keeps the original stderr for it: the exit may come while a step's output is
# redirected to a log.
exec 3>&2
SESSION=emb-bench-$$
session_created=0
daemon_pid=
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    exec 2>&3
    if [ -n "$step_pid" ] && kill -0 "$step_pid" 2>/dev/null; then
        kill -TERM "$step_pid" 2>/dev/null || true
        wait "$step_pid" 2>/dev/null || true
    fi
    step_pid=
    if [ "$session_created" = 1 ]; then
        step 30 lttng --no-sessiond destroy "$SESSION" >/dev/null 2>&1 ||
            echo "bench: warning: could not destroy LTTng session $SESSION" >&2
    fi
    # Another user of this machine may have created sessions in the daemon we started.
    if [ -n "$daemon_pid" ] &&
        step 30 lttng --no-sessiond list 2>/dev/null | grep -Eq '^ *[0-9]+\) '; then
        echo "bench: warning: lttng-sessiond $daemon_pid now holds other sessions; left running" >&2
        daemon_pid=
    fi
    if [ -n "$daemon_pid" ]; then
        kill -TERM "$daemon_pid" 2>/dev/null || true
        for _ in $(seq 100); do
            kill -0 "$daemon_pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$daemon_pid" 2>/dev/null; then
            echo "bench: warning: lttng-sessiond $daemon_pid ignored SIGTERM; killing it" >&2
            kill -KILL "$daemon_pid" 2>/dev/null || true
        fi
    fi
    [ "$rc" = 0 ] || echo "bench: FAILED (status $rc)" >&2
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in cmake lttng lttng-sessiond valgrind babeltrace2 objdump awk; do
    command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh installs it)"
done

# ---- Build ----
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    step 300 cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
case "$build_type" in
Release | RelWithDebInfo) ;;
*) die "$BUILD is a '${build_type:-default}' build: benchmark an optimised one (RelWithDebInfo)" ;;
esac
step 900 cmake --build "$BUILD" -j2 --target trace_bench >/dev/null ||
    die "building trace_bench failed"
[ -x "$BIN" ] || die "$BIN was not built (is liblttng-ust-dev installed? scripts/install-deps.sh)"

# ---- The loops' machine code: kept for reading, and checked for the atomics each uses ----
mkdir -p "$OUT/asm" "$OUT/callgrind"
objdump -d --no-show-raw-insn "$BIN" >"$OUT/asm/trace_bench.dis"
mapfile -t variant_lines < <("$BIN" --list)
for line in "${variant_lines[@]}"; do
    fn=${line#* }
    awk -v f="<$fn>:" '$2 == f { on = 1 } on && /^$/ { exit } on { print }' \
        "$OUT/asm/trace_bench.dis" >"$OUT/asm/$fn.s"
    [ -s "$OUT/asm/$fn.s" ] || die "no code for $fn in $BIN"
done
grep -q 'cmpxchg' "$OUT/asm/bench_loop_enabled.s" && ! grep -q 'lock' "$OUT/asm/bench_loop_enabled.s" ||
    die "bench_loop_enabled should use an unlocked cmpxchg (see $OUT/asm/bench_loop_enabled.s)"
grep -q 'lock cmpxchg' "$OUT/asm/bench_loop_locked.s" ||
    die "bench_loop_locked should use lock cmpxchg (see $OUT/asm/bench_loop_locked.s)"
code_bytes() {
    objdump -d "$BIN" | awk -v f="<$1>:" -F'\t' '$0 ~ f { on = 1; next } on && /^$/ { exit } on { print $2 }'
}
if [ "$(code_bytes bench_loop_compiled_out)" = "$(code_bytes bench_loop_empty)" ]; then
    compiled_out_code="identical to the empty loop's"
else
    compiled_out_code="DIFFERENT from the empty loop's (see $OUT/asm/)"
fi

# ---- LTTng: a daemon (ours if none runs) and a snapshot session ----
if step 30 lttng --no-sessiond list >/dev/null 2>&1; then
    echo "bench: using the running LTTng session daemon"
else
    step 60 lttng-sessiond --daemonize --no-kernel || die "lttng-sessiond did not start"
    if [ "$(id -u)" = 0 ]; then rundir=/var/run/lttng; else rundir=${LTTNG_HOME:-$HOME}/.lttng; fi
    daemon_pid=$(cat "$rundir/lttng-sessiond.pid" 2>/dev/null) ||
        die "lttng-sessiond started but left no $rundir/lttng-sessiond.pid"
    kill -0 "$daemon_pid" 2>/dev/null || die "lttng-sessiond (pid $daemon_pid) is not running"
fi
rm -rf "$OUT/lttng"
step 30 lttng --no-sessiond create "$SESSION" --snapshot --output="$OUT/lttng" >/dev/null ||
    die "lttng create failed"
session_created=1
step 30 lttng --no-sessiond enable-channel -s "$SESSION" -u ch --subbuf-size=1M --num-subbuf=4 \
    >/dev/null || die "lttng enable-channel failed"
step 30 lttng --no-sessiond enable-event -s "$SESSION" -u -c ch 'emb_bench:work_start' >/dev/null ||
    die "lttng enable-event failed"
step 30 lttng --no-sessiond start "$SESSION" >/dev/null || die "lttng start failed"

# ---- Wall clock: every variant, 1 and 2 threads, in one run ----
echo "bench: wall clock, $ROUNDS rounds of $EVENTS events per thread per variant (median)"
step 1200 "$BIN" --events "$EVENTS" --rounds "$ROUNDS" --threads 1,2 --lttng-traced \
    >"$OUT/wall.txt" || die "the wall-clock pass failed (see above)"

step 60 lttng --no-sessiond snapshot record -s "$SESSION" >/dev/null || die "lttng snapshot record failed"
lttng_events=$(step 300 babeltrace2 "$OUT/lttng" 2>/dev/null | grep -c 'emb_bench:work_start:' || true)
[ "${lttng_events:-0}" -gt 0 ] || die "the LTTng snapshot in $OUT/lttng holds no emb_bench:work_start event"
echo "bench: LTTng snapshot holds $lttng_events emb_bench:work_start events"

# ---- Callgrind: one run per variant, counting only inside its loop function ----
echo "bench: callgrind, $CG_EVENTS events per variant"
: >"$OUT/instr.txt"
for line in "${variant_lines[@]}"; do
    variant=${line%% *}
    fn=${line#* }
    out=$OUT/callgrind/$variant.out
    rm -f "$out"
    step 900 valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect="$fn" \
        "$BIN" --callgrind --variant "$variant" --events "$CG_EVENTS" --lttng-wait 60 \
        >"$OUT/callgrind/$variant.log" 2>&1 ||
        die "callgrind run of $variant failed (see $OUT/callgrind/$variant.log)"
    ir=$(sed -n 's/^totals: *\([0-9][0-9]*\).*/\1/p' "$out")
    [ -n "$ir" ] || die "no instruction total in $out"
    echo "$variant $ir" >>"$OUT/instr.txt"
done

step 30 lttng --no-sessiond stop "$SESSION" >/dev/null || die "lttng stop failed"
step 30 lttng --no-sessiond destroy "$SESSION" >/dev/null || die "lttng destroy failed"
session_created=0

# ---- Table and JSON ----
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
export BENCH_DATE BENCH_CPU BENCH_CORES BENCH_KERNEL BENCH_CC BENCH_LTTNG BENCH_VALGRIND
BENCH_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
BENCH_CPU=${cpu_model:-unknown}
BENCH_CORES=$(nproc)
BENCH_KERNEL=$(uname -r)
BENCH_CC=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
BENCH_CC="$BENCH_CC $("$BENCH_CC" -dumpfullversion 2>/dev/null || true)"
BENCH_LTTNG=$(pkg-config --modversion lttng-ust 2>/dev/null || echo unknown)
BENCH_VALGRIND=$(valgrind --version)

awk -v cg_events="$CG_EVENTS" -v lttng_events="$lttng_events" -v build_type="$build_type" \
    -v json="$OUT/trace.json" -f "$SRC/bench/report.awk" "$OUT/wall.txt" "$OUT/instr.txt" ||
    die "the report could not be made (a variant is missing?)"
echo "compiled-out loop: machine code $compiled_out_code"
echo "bench: results in $OUT/trace.json; loop disassembly in $OUT/asm/"
