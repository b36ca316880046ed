#!/bin/bash
# The sched class on the AVR (examples/avr-sim/sched.c, tiny profile with
# CONFIG_EMB_TRACE_CLASSES=0x1u) on simavr's ATmega328P, run by avr_run (libsimavr, the
# UART captured):
#
#  1. Within the 328P's RAM budget: static RAM (avr-size: data + bss) leaves at least 512
#     of the 2048 bytes for the stack, the catalogue's table of event sizes being in flash
#     (avr-nm: a text address, not the data space's 0x800000).
#  2. The trace stream the firmware wrote over USART0 decodes with `emb trace`: the
#     switch events the firmware made (from i to i + 1, i < 100), the newest ones whole
#     and in order, the others counted: received + discarded = 100, exactly (the slow path
#     that counts a recycled packet reads the table from flash).
#  3. Tick timestamps: the firmware waits for the next 1 kHz tick before every eighth
#     event, so consecutive events are 0 ticks apart, or 1 where i + 1 is a multiple of 8.
#  4. The rings read out of RAM through the reduced descriptor (below).
#
# Usage: avr_sched.sh AVR_RUN FIRMWARE.elf WORKDIR EMB
set -u
run=$1 fw=$2 work=$3 emb=$4
mkdir -p "$work" && rm -f "$work"/*
. "$(dirname "$0")/../support/tap_check.sh"
avr-size "$fw" | sed 's/^/# /'
ram=$(avr-size "$fw" | awk 'NR == 2 { print $2 + $3 }')
check "static RAM $ram bytes: at least 512 of the 328P's 2048 left for the stack" test "$ram" -le 1536
table=$(avr-nm "$fw" | awk '$3 == "emb_trace_event_words" { print $1 }')
check "the catalogue's event sizes are in flash (at 0x${table:-none})" test "$((0x${table:-800000}))" -lt $((0x800000))
check "the firmware runs to its stop under simavr (atmega328p, 16 MHz)" \
  "$run" atmega328p 16000000 "$fw" "$work/uart.bin" "$work/ram.bin" "$work/marks.txt" 100000000
check "emb trace decodes the stream the UART carried" \
  bash -c "'$emb' trace -f ndjson '$work/uart.bin' >'$work/trace.ndjson'"
check "the newest switches whole and in order, received + discarded = 100, tick timestamps" \
  python3 - "$work/trace.ndjson" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
switches = [r for r in records if r.get("event") == "switch"]
discarded = sum(r["count"] for r in records if r.get("loss") == "events_discarded")
got = [(r["fields"]["from"], r["fields"]["to"]) for r in switches]
first = 100 - len(got)
print("# %d switches received, %d discarded, from %s" % (len(got), discarded, got[:1]))
assert got and got == [(i, i + 1) for i in range(first, 100)], got
assert len(got) + discarded == 100, (len(got), discarded)
for a, b in zip(switches, switches[1:]):
    step = 1 if b["fields"]["from"] % 8 == 0 else 0
    assert b["ts"] - a["ts"] == step, (a, b)
PY
# 4. The rings read out of RAM: the reduced descriptor's contexts and rings sections say
#    where the ring is (avr-nm's address of the firmware's `ring`), and `emb desc
#    --dump-trace` pulls its packets out of the data space simavr dumped at the stop: the
#    same switches the firmware wrote over the UART, and the same count discarded.
"$emb" desc --elf "$fw" --dump "$work/ram.bin" --base 0 >"$work/desc.txt" 2>&1
sed 's/^/# desc: /' "$work/desc.txt"
"$emb" desc --elf "$fw" --dump "$work/ram.bin" --base 0 --json >"$work/desc.json" 2>>"$work/checks.log"
ring=$(avr-nm "$fw" | awk '$3 == "ring" { print $1 }')
check "emb desc finds the one context's ring where avr-nm puts it (0x800000 + its RAM address)" \
  python3 - "$work/desc.json" "$((0x${ring:-800000} - 0x800000))" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rings = [c["ring"] for c in d["contexts"] if c.get("ring")]
print("# rings:", rings)
assert len(rings) == 1 and int(rings[0]["address"], 16) == int(sys.argv[2]), rings
assert rings[0]["slots"] == 2, rings
PY
check "emb desc --dump-trace pulls the ring's packets out of the RAM image" \
  "$emb" desc --elf "$fw" --dump "$work/ram.bin" --base 0 --dump-trace "$work/ram.embt"
check "they decode to the switches and the discarded count the UART's stream has" \
  bash -c "'$emb' trace -f ndjson '$work/ram.embt' >'$work/ram.ndjson'" && \
  python3 - "$work/trace.ndjson" "$work/ram.ndjson" <<'PY'
import json, sys
def read(path):
    records = [json.loads(line) for line in open(path)]
    got = [(r["fields"]["from"], r["fields"]["to"], r["ts"]) for r in records if r.get("event") == "switch"]
    return got, sum(r["count"] for r in records if r.get("loss") == "events_discarded")
uart, ram = read(sys.argv[1]), read(sys.argv[2])
print("# from RAM: %d switches, %d discarded" % (len(ram[0]), ram[1]))
assert ram[0] and ram == uart, (uart, ram)
PY
echo "1..$n"
[ $failed -eq 0 ]
