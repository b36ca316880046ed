#!/usr/bin/env bash
# The threaded firmware on the example kernel (examples/kernel-cortex-m) under QEMU, held
# against the kernel's own accounting: the firmware prints on UART0 what the kernel
# counted (switches, each thread's run, blocked and stack figures from
# emb_stats_thread_get()) at its END event, and sends its trace and log as frames on UART1.
# check_kernel_run.py compares. QEMU runs with -icount (virtual time counts instructions)
# so the kernel's timestamps and the trace's differ by the same few instructions on both
# ends of every interval, whatever the host's load.
#
# usage: kernel_run.sh QEMU MACHINE FW EMB WORKDIR
set -uo pipefail
qemu=$1 machine=$2 fw=$3 emb=$4 work=$5
here=$(dirname "$0")
rm -rf "$work"
mkdir -p "$work"
timeout 60 "$qemu" -M "$machine" -nographic -monitor none -icount shift=3,sleep=off \
    -semihosting-config enable=on,target=native \
    -serial "file:$work/uart0.txt" -serial "file:$work/uart1.bin" -kernel "$fw" > "$work/qemu.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "not ok - the firmware ran (QEMU exit $rc)"; cat "$work/qemu.out" "$work/uart0.txt"; exit 1; }
"$emb" capture --file "$work/uart1.bin" -o "$work/run.emb" --save-trace "$work/run.embt" \
    > "$work/capture.txt" 2>&1 || { echo "not ok - emb capture"; cat "$work/capture.txt"; exit 1; }
"$emb" trace --json "$work/run.embt" > "$work/trace.json" 2> "$work/trace.err" ||
    { echo "not ok - emb trace --json"; cat "$work/trace.err"; exit 1; }
"$emb" trace --summary --json "$work/run.embt" > "$work/summary.json" 2>> "$work/trace.err" ||
    { echo "not ok - emb trace --summary --json"; cat "$work/trace.err"; exit 1; }
"$emb" trace --summary --color=never "$work/run.embt" > "$work/summary.txt" 2>> "$work/trace.err"
"$emb" trace --latency --json "$work/run.embt" > "$work/latency.json" 2>> "$work/trace.err" ||
    { echo "not ok - emb trace --latency --json"; cat "$work/trace.err"; exit 1; }
# Per-thread load as Perfetto counter tracks, read back by @tracerbench/trace-model (the
# Trace Event Format reader of tests/support/node, installed by scripts/install-deps.sh).
"$emb" trace -f perfetto -o "$work/perfetto.json" "$work/run.embt" 2>> "$work/trace.err" ||
    { echo "not ok - emb trace -f perfetto"; cat "$work/trace.err"; exit 1; }
node "$here/../../support/node/tracerbench_summary.cjs" "$work/perfetto.json" > "$work/perfetto.tracerbench" ||
    { echo "not ok - @tracerbench/trace-model reads the Perfetto export"; exit 1; }
exec python3 "$here/check_kernel_run.py" "$work"
