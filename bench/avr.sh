#!/usr/bin/env bash
# Cycles per 2-word trace event and per 2-argument log call on an 8-bit AVR (ATmega2560 at
# 16 MHz), counted by simavr's core (build/tests/avr_run: the cycle count at each rising
# edge of PB0): examples/avr-sim/bench.c, the tiny profile with the `user` class, and the
# same lines through avr-libc's printf. Simulated cycles repeat exactly. Also the flash
# and RAM (avr-size) of both images and of the 328P example. Writes BUILD/bench/avr.json.
# Usage: bench/avr.sh BUILD_DIR
set -euo pipefail
build=$1
mkdir -p "$build/bench"
run=$build/tests/avr_run
per_call() { # per_call FIRMWARE: the four loops' cycles per call, less the empty loop's
  "$run" atmega2560 16000000 "$1" /dev/null /dev/null "$build/bench/avr-marks.txt" >/dev/null 2>&1
  awk 'NR > 1 { d[NR - 1] = $1 - prev } { prev = $1 }
       END { if (NR != 5) exit 1; for (i = 2; i <= 4; i++) printf "%d ", (d[i] - d[1]) / 32; print "" }' \
    "$build/bench/avr-marks.txt"
}
size() { avr-size "$1" | awk 'NR == 2 { printf "%d %d\n", $1 + $2, $2 + $3 }'; }
read -r ev lg_cpu lg_uart < <(per_call "$build/fw/avr-bench.elf")
read -r pev pf_cpu pf_uart < <(per_call "$build/fw/avr-bench-printf.elf")
echo "| image | cycles per event | cycles per log line (formatted) | same, written to the UART at 38400 baud | flash | RAM |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| emb (tiny, plain-text log) | $ev | $lg_cpu | $lg_uart | $(size "$build/fw/avr-bench.elf" | sed 's/ / | /') |"
echo "| avr-libc printf, same lines | $pev | $pf_cpu | $pf_uart | $(size "$build/fw/avr-bench-printf.elf" | sed 's/ / | /') |"
read -r fl ram < <(size "$build/fw/avr-sim.elf")
echo "examples/avr-sim on the ATmega328P (tiny, trace off): flash $fl, RAM $ram"
printf '{"event": %d, "log": %d, "log_uart": %d, "printf_event": %d, "printf": %d, "printf_uart": %d, "example_flash": %d, "example_ram": %d}\n' \
  "$ev" "$lg_cpu" "$lg_uart" "$pev" "$pf_cpu" "$pf_uart" "$fl" "$ram" >"$build/bench/avr.json"
