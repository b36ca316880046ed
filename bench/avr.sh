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
# The deferred log (CONFIG_EMB_LOG_TEXT=0): a call records into a RAM ring; the drain
# writes the records over USART0 as log frames, which `emb log` must decode, all N.
"$run" atmega2560 16000000 "$build/fw/avr-bench-deferred.elf" "$build/bench/avr-deferred.bin" /dev/null \
  "$build/bench/avr-marks.txt" >/dev/null 2>&1
read -r dev dlog ddrain < <(awk 'NR > 1 { d[NR - 1] = $1 - prev } { prev = $1 }
  END { if (NR != 5) exit 1; for (i = 2; i <= 4; i++) printf "%d ", (d[i] - d[1]) / 32; print "" }' \
  "$build/bench/avr-marks.txt")
records=$("$build/bin/emb" log --no-build-id-check --elf "$build/fw/avr-bench-deferred.elf" \
  "$build/bench/avr-deferred.bin" 2>/dev/null | grep -c ' value [0-9]* of 32$' || true)
[ "$records" = 32 ] || { echo "bench/avr.sh: the deferred drain decodes to $records records, not 32" >&2; exit 1; }
echo "| emb (tiny, deferred log) | $dev | $dlog (recorded) | $ddrain (drained as frames) | $(size "$build/fw/avr-bench-deferred.elf" | sed 's/ / | /') |"
read -r fl ram < <(size "$build/fw/avr-sim.elf")
echo "examples/avr-sim on the ATmega328P (tiny, trace off): flash $fl, RAM $ram"
printf '{"event": %d, "log": %d, "log_uart": %d, "printf_event": %d, "printf": %d, "printf_uart": %d, "deferred_log": %d, "deferred_drain": %d, "example_flash": %d, "example_ram": %d}\n' \
  "$ev" "$lg_cpu" "$lg_uart" "$pev" "$pf_cpu" "$pf_uart" "$dlog" "$ddrain" "$fl" "$ram" >"$build/bench/avr.json"
