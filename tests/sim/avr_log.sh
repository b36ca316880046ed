#!/bin/bash
# The deferred log on the AVR (examples/avr-sim/deferred.c, tiny profile with
# CONFIG_EMB_LOG_TEXT=0) on simavr's ATmega328P, run by avr_run (libsimavr, the UART
# captured):
#
#  1. The call sites' format strings are in no byte the chip holds: not in the flash image
#     or the RAM initialisers (avr-objcopy's .text and .data), only in the ELF's emb_log.
#  2. The log frames the firmware drained over USART0 decode with `emb log --elf` against
#     the AVR ELF (16-bit int, size_t and pointers, 32-bit long; the tick as timestamp),
#     each message as the C formatting of its call site's format and arguments gives it
#     (Python's printf-style operator, the independent formatter, on the values
#     deferred.c passes; the 16-bit pointer is where avr-nm puts the ring).
#  3. The tick timestamps grow, and the records come in the order the calls were made.
#  4. The reduced descriptor's log section: emb desc finds the ring in the RAM image.
#
# The AVR image carries no build id the chip can read (the ELF's note is in no memory it
# loads), so the hello frame has none: --no-build-id-check, which the decoder asks for.
#
# Usage: avr_log.sh AVR_RUN FIRMWARE.elf WORKDIR EMB
set -u
run=$1 fw=$2 work=$3 emb=$4
mkdir -p "$work" && rm -f "$work"/*
. "$(dirname "$0")/../support/tap_check.sh"
avr-objcopy -O binary -j .text -j .data "$fw" "$work/image.bin"
check "the format strings are in no byte of the image the chip holds" \
  bash -c "! grep -qa 'step %u of %d' '$work/image.bin' && ! grep -qa 'char %c, text' '$work/image.bin'"
check "they are in the ELF's emb_log section, which no memory holds" \
  bash -c "avr-objdump -h '$fw' | grep -E ' emb_log ' && avr-readelf -p emb_log '$fw' | grep -q 'step %u of %d'"
check "the firmware runs to its stop under simavr (atmega328p, 16 MHz)" \
  "$run" atmega328p 16000000 "$fw" "$work/uart.bin" "$work/ram.bin" "$work/marks.txt" 100000000
check "emb log decodes the UART's frames against the AVR ELF" \
  bash -c "'$emb' log --no-build-id-check --elf '$fw' '$work/uart.bin' >'$work/log.txt'"
sed 's/^/# log: /' "$work/log.txt"
# The ring's RAM address: avr-nm's data address less the data space's 0x800000.
ring=$(avr-nm "$fw" | awk '$3 == "log_ring" { print $1 }')
python3 - "$ring" >"$work/expected.txt" <<'PY'
# What deferred.c logs, formatted by Python's printf-style operator (%p as glibc's 0x%x).
import sys
lines = [("INF", "avr up, %u Hz tick" % 1000)]
for i in range(3):
    lines.append(("INF", "step %u of %d, value %d" % (i, 3, -7 * i)))
    lines.append(("WRN", "long %lu, char %c, text %s" % (100000 * i, chr(ord("a") + i), "avr")))
lines.append(("INF", "ring at 0x%x" % (int(sys.argv[1], 16) - 0x800000)))
lines.append(("ERR", "done"))
for level, text in lines:
    print(level, "app", text)
PY
awk '{ level = $3; module = $4; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print level, module, $0 }' \
  "$work/log.txt" >"$work/got.txt"
check "every record, in order, as C formatting gives it" diff "$work/expected.txt" "$work/got.txt"
check "the tick timestamps do not go back" \
  awk '{ if (NR > 1 && $1 < last) exit 1; last = $1 } END { exit NR != 9 }' "$work/log.txt"
# The reduced descriptor's log section: emb desc finds the one log ring in the data space
# simavr dumped at the stop, where avr-nm puts it, its 256 bytes drained (the firmware
# drained before it stopped), none dropped.
"$emb" desc --elf "$fw" --dump "$work/ram.bin" --base 0 --json >"$work/desc.json" 2>>"$work/checks.log"
check "emb desc reads the log ring out of RAM: at log_ring, 256 bytes, drained, none dropped" \
  python3 - "$work/desc.json" "$((0x${ring:-800000} - 0x800000))" <<'PY'
import json, sys
rings = json.load(open(sys.argv[1]))["log_rings"]
print("# log rings:", rings)
assert len(rings) == 1 and int(rings[0]["address"], 16) == int(sys.argv[2]), rings
r = rings[0]
assert r["bytes"] == 256 and r["write_pos"] > 0 and r["read_pos"] == r["write_pos"], r
assert r["dropped"] == 0 and r["pending"] == 0, r
PY
echo "1..$n"
[ $failed -eq 0 ]
