#!/bin/bash
# The AVR port (tiny profile) on simavr's ATmega328P (examples/avr-sim), run by avr_run
# (libsimavr: the UART captured, the data space dumped when the firmware stops):
#
#  1. The plain-text log arrives over USART0 from the same call sites as every port, with
#     tick timestamps that grow, until the firmware faults on purpose.
#  2. The watchdog resets the chip (simavr's watchdog, its own MCUSR flag WDRF) and the
#     second run finds the v2 crash record that `.noinit` kept.
#  3. `emb desc` finds the reduced descriptor in the memory image (16-bit, profile tiny,
#     port avr/tick) at the address avr-nm gives the symbol, and the record in its area.
#  4. `emb crash` decodes the record: software fault 42, watchdog reset, the pc in the
#     function avr-addr2line names (binutils' reading of the same ELF).
#
# Usage: avr_sim.sh AVR_RUN FIRMWARE.elf WORKDIR EMB
set -u
run=$1 fw=$2 work=$3 emb=$4
mkdir -p "$work" && rm -f "$work"/*
. "$(dirname "$0")/../support/tap_check.sh"
check "the firmware runs to its stop under simavr (atmega328p, 16 MHz)" \
  "$run" atmega328p 16000000 "$fw" "$work/uart.txt" "$work/ram.bin" "$work/marks.txt" 100000000
sed 's/^/# uart: /' "$work/uart.txt"
check "the log lines arrive over the UART with the call sites' text" \
  grep -qE '^[0-9]+\.[0-9]{6} INF app examples/avr-sim/main.c:[0-9]+  step 2 of 3, value -14$' "$work/uart.txt"
check "the tick timestamps of the first run grow with the steps (2 ticks apart at least)" \
  awk '/ INF app .*step/ { t = $1 * 1000; if (n++ && t < last + 2) exit 1; last = t } END { exit n != 3 }' "$work/uart.txt"
check "the fault is logged, then the run after the watchdog reset finds the record (MCUSR WDRF)" \
  bash -c "grep -A1 'ERR app .*faulting on purpose' '$work/uart.txt' | grep -qE '^0\.000000 WRN app .*crash record [0-9]+ B, MCUSR 0?8$'"
"$emb" desc --elf "$fw" --dump "$work/ram.bin" --base 0 >"$work/desc.txt" 2>&1
"$emb" desc --elf "$fw" --dump "$work/ram.bin" --base 0 --json >"$work/desc.json" 2>>"$work/checks.log"
sed 's/^/# desc: /' "$work/desc.txt"
check "emb desc reads the reduced descriptor: avr/tick, profile tiny, 16-bit" \
  grep -q 'avr/tick, profile tiny, 16-bit little-endian' "$work/desc.txt"
sym=$(avr-nm "$fw" | awk '$3 == "emb_debug_descriptor" { print $1 }')
check "it is where avr-nm puts emb_debug_descriptor (data address 0x800000 + RAM address)" \
  grep -qi "^Descriptor v1 at 0x$(printf %x $((0x$sym - 0x800000))) " "$work/desc.txt"
area=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["crash"]; print(int(c["area"],16), c["capacity"])' "$work/desc.json")
python3 -c 'import sys; a,c=map(int,sys.argv[2:4]); open(sys.argv[4],"wb").write(open(sys.argv[1],"rb").read()[a:a+c])' \
  "$work/ram.bin" $area "$work/record.bin"
"$emb" crash --elf "$fw" "$work/record.bin" >"$work/crash.txt" 2>&1
sed 's/^/# crash: /' "$work/crash.txt"
check "emb crash decodes the v2 record from .noinit: software fault 42 before a watchdog reset" \
  bash -c "grep -q '^Crash record v2, .* ok$' '$work/crash.txt' && grep -q 'software, code 42' '$work/crash.txt' && grep -q '^reset *watchdog' '$work/crash.txt'"
pc=$(awk '$1 == "pc" { print $2 }' "$work/crash.txt")
func=$(avr-addr2line -f -e "$fw" "${pc:-0}" | head -1)
check "the record's pc $pc is in $func, as avr-addr2line reads the ELF, and that is main" \
  bash -c "[ '$func' = main ] && grep -qE '^pc +$pc +main\\+' '$work/crash.txt'"
echo "1..$n"
[ $failed -eq 0 ]
