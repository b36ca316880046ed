#!/usr/bin/env bash
# `make demo`, part 3: the MPS2 example firmware on an emulated Cortex-M3 (QEMU mps2-an385),
# read the way a debug probe reads a board: over the GDB remote protocol, while it runs.
# It captures a whole run, decodes the trace and the log against the ELF, then makes the
# firmware fault on command and reads the crash record the next boot found.
# Leaves everything in OUTDIR (default BUILD/demo/mps2).
# usage: demo.sh [BUILD [OUTDIR]]
set -euo pipefail
build=${1:-build}
out=${2:-$build/demo/mps2}
emb="$build/bin/emb"
fw="$build/fw/qemu-mps2-m3.elf"
mkdir -p "$out"
rm -f "$out"/*

say() { printf '\033[1m%s\033[0m\n' "$*"; }
fail() { echo "demo (mps2): $*" >&2; exit 1; }

[ -f "$fw" ] || fail "$fw is missing (it needs arm-none-eabi-gcc: scripts/install-deps.sh)"

# A free TCP port for QEMU's GDB server.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
gdb="127.0.0.1:$port"

say "1. Booting the MPS2 firmware on QEMU (Cortex-M3, mps2-an385), its GDB server on $gdb"
qemu-system-arm -M mps2-an385 -nographic -monitor none \
    -semihosting-config enable=on,target=native -gdb "tcp:$gdb" -kernel "$fw" \
    > "$out/uart.txt" 2>&1 &
qemu=$!
trap 'kill $qemu 2>/dev/null; wait $qemu 2>/dev/null || true' EXIT

# The debug descriptor, read over the GDB protocol as soon as the server answers.
for _ in $(seq 50); do
    if "$emb" desc --gdb "$gdb" --elf "$fw" --color=never > "$out/desc.txt" 2>&1; then
        break
    fi
    sleep 0.1
done
grep -q "Contexts" "$out/desc.txt" || { cat "$out/desc.txt" >&2; fail "emb desc --gdb found no descriptor"; }
sed -n '1,6p' "$out/desc.txt"

say "2. Capturing the run over the GDB protocol while it runs (emb capture --gdb --until-closed)"
"$emb" capture --gdb "$gdb" --elf "$fw" --until-closed --duration 60 --label mps2 \
    -o "$out/run.emb" --save-trace "$out/run.embt" --save-log "$out/run.log" --color=never \
    2> "$out/capture.txt"
sed -n '1,3p' "$out/capture.txt"

say "3. Decoding the trace and the deferred log against the ELF"
"$emb" trace --color=never "$out/run.embt" > "$out/trace.txt"
"$emb" trace --summary --color=never "$out/run.embt" > "$out/trace.summary.txt"
"$emb" trace --format perfetto --log "$out/run.log" --elf "$fw" -o "$out/trace.perfetto.json" \
    "$out/run.embt"
bash "$(dirname "$0")/../../tests/support/node/check_trace_event.sh" "$out/trace.perfetto.json"
"$emb" log --elf "$fw" --color=never "$out/run.log" > "$out/log.txt"
"$emb" inspect "$out/run.emb" > "$out/inspect.txt"
echo "trace: $(grep -c . "$out/trace.txt") lines; log: $(grep -c . "$out/log.txt") lines"
sed -n '1,3p' "$out/log.txt"

say "4. A fault on command: the host sets fw_command, the sensor driver reads an absent device"
gdb-multiarch -batch -nx -ex "target remote $gdb" -ex "set var fw_command = 1" -ex detach "$fw" \
    > "$out/gdb.txt" 2>&1 || { cat "$out/gdb.txt" >&2; fail "gdb-multiarch could not set the command"; }
# The fault handler writes the record into .noinit and resets; the next boot validates it.
booted=0
for _ in $(seq 100); do
    if grep -q "boot 2" "$out/uart.txt"; then
        booted=1
        break
    fi
    sleep 0.1
done
[ "$booted" = 1 ] || fail "the firmware did not restart after the fault (see $out/uart.txt)"
"$emb" capture --gdb "$gdb" --elf "$fw" --label crash -o "$out/crash.emb" \
    --save-crash "$out/crash.bin" --color=never 2> "$out/crash-capture.txt"
grep -q "holds a crash record" "$out/crash-capture.txt" || fail "no crash record on the target"
"$emb" crash --elf "$fw" --color=never "$out/crash.bin" > "$out/crash.txt"
"$emb" crash --elf "$fw" --json "$out/crash.bin" > "$out/crash.json"
sed -n '1,7p' "$out/crash.txt"
grep -q "sensor_driver_poll" "$out/crash.txt" || fail "the crash report does not name sensor_driver_poll"

say "5. Over a UART: the UART variant sends log and trace as frames on UART1 (a pty here)"
fwu="$build/fw/qemu-mps2-m3-uart.elf"
[ -f "$fwu" ] || fail "$fwu is missing"
qemu-system-arm -M mps2-an385 -nographic -monitor none \
    -semihosting-config enable=on,target=native \
    -serial "file:$out/uart-link.uart0.txt" -serial pty -kernel "$fwu" > "$out/uart-link.qemu.txt" 2>&1 &
qemu2=$!
trap 'kill $qemu $qemu2 2>/dev/null; wait $qemu $qemu2 2>/dev/null || true' EXIT
pty=""
for _ in $(seq 100); do
    pty=$(grep -o '/dev/pts/[0-9]*' "$out/uart-link.qemu.txt" || true)
    [ -n "$pty" ] && break
    sleep 0.05
done
[ -n "$pty" ] || fail "QEMU named no pty for UART1 (see $out/uart-link.qemu.txt)"
# --arm sends the ARM_WINDOW frame the firmware waits for before its run.
"$emb" capture --serial "$pty" --baud 115200 --arm --duration 60 --label uart --color=never \
    -o "$out/uart-link.emb" --save-trace "$out/uart-link.embt" --save-log "$out/uart-link.log" \
    2> "$out/uart-link.capture.txt" &
cap=$!
sent=0
for _ in $(seq 200); do
    if grep -q "uart1:" "$out/uart-link.uart0.txt"; then
        sent=1
        break
    fi
    sleep 0.05
done
sleep 0.5
kill -INT $cap
wait $cap || fail "emb capture --serial failed (see $out/uart-link.capture.txt)"
kill $qemu2 2>/dev/null; wait $qemu2 2>/dev/null || true
[ "$sent" = 1 ] || fail "the UART variant did not finish its run (see $out/uart-link.uart0.txt)"
grep "uart1:" "$out/uart-link.uart0.txt"
cat "$out/uart-link.capture.txt"
"$emb" log --elf "$fwu" --color=never "$out/uart-link.emb" > "$out/uart-link.log.txt"
"$emb" trace --summary --color=never "$out/uart-link.embt" > "$out/uart-link.trace.summary.txt"
sed -n '1,4p' "$out/uart-link.log.txt"

say "6. Without halting: QEMU's machine protocol (emb capture --qemu-qmp --qtest, docs/live.md)"
qemu-system-arm -M mps2-an385 -nographic -monitor none -S \
    -semihosting-config enable=on,target=native \
    -qmp "unix:$out/live.qmp,server=on,wait=off" \
    -qtest "unix:$out/live.qtest,server=on,wait=off" -qtest-log /dev/null \
    -kernel "$fw" > "$out/live.uart.txt" 2>&1 &
qemu3=$!
trap 'kill $qemu $qemu2 $qemu3 2>/dev/null; wait $qemu $qemu2 $qemu3 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$out/live.qtest" ] && break; sleep 0.05; done
"$emb" capture --qemu-qmp "$out/live.qmp" --qtest "$out/live.qtest" --resume --elf "$fw" \
    --until-closed --duration 60 --label live -o "$out/live.emb" --save-trace "$out/live.embt" \
    --color=never 2> "$out/live.capture.txt" || { cat "$out/live.capture.txt" >&2; fail "emb capture --qemu-qmp failed"; }
kill $qemu3 2>/dev/null; wait $qemu3 2>/dev/null || true
grep -E "never halted|sealed" "$out/live.capture.txt"
grep -q "held the target 0 times" "$out/live.capture.txt" || fail "emb capture --qemu-qmp halted the target"

say "Made in $out:"
printf '  %-20s %s\n' \
  uart.txt "the firmware's UART: its boots, the clock it chose, the record it found" \
  desc.txt "emb desc --gdb: contexts, rings, log ring, monitors, how long the target was held" \
  run.emb "the sealed capture of the whole run (trace, log section, identity)" \
  capture.txt "what emb capture took, what the target dropped, how long it held the target" \
  trace.txt "emb trace: $(wc -l < "$out/trace.txt") lines; trace.summary.txt the counts" \
  trace.perfetto.json "the same for https://ui.perfetto.dev" \
  log.txt "emb log --elf: the deferred log decoded, $(wc -l < "$out/log.txt") lines" \
  crash.bin "the crash record read from .noinit after the reset" \
  crash.txt "emb crash: the faulting function and line, CFSR/BFAR, the last events" \
  uart-link.emb "the UART variant's run, captured from UART1 by emb capture --serial" \
  uart-link.log.txt "its log decoded from the capture; uart-link.trace.summary.txt its trace" \
  live.emb "the same firmware's run read through QMP while it ran, never halted"
