#!/bin/bash
# One crash area for every hart (ports/riscv/fault.c): every hart of QEMU's virt machine
# faults at once (examples/riscv-virt, FW_CMD_FAULT_ALL). The first hart to claim the area
# writes the one record, which validates (magic, length, CRC: `emb crash` decodes it) and
# names its hart; every other hart says it faulted too, at the pc and with the mcause GDB
# reads from that hart's own CSRs (check_crash.py); the flight recorder holds a context
# per hart.
#
# Usage: riscv_crash.sh QEMU FIRMWARE.elf HARTS WORKDIR EMB
set -u
qemu=$1 fw=$2 harts=$3 work=$4 emb=$5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work" && rm -f "$work"/*
. "$here/virt_lib.sh"
virt_start
check "the run ends (no host reads the rings: they overwrite)" virt_wait_done
virt_fault 0xFA1A
check "one record is taken through the descriptor" grep -q "holds a crash record" "$work/crash-capture.txt"
virt_gdb_traps >"$work/gdb-traps.txt"
check "GDB reads every hart's trap registers" test "$(grep -c . "$work/gdb-traps.txt")" = "$harts"
check "emb crash decodes the record" \
  bash -c "'$emb' crash --elf '$fw' --json '$work/crash.bin' >'$work/crash.json'"
"$emb" crash --elf "$fw" --color=never "$work/crash.bin" >"$work/crash.txt" 2>&1
check "the record is one hart's; every other hart faulted too, where GDB says" \
  python3 "$here/check_crash.py" "$work/crash.json" "$work/gdb-traps.txt" all
check "the flight recorder holds a context per hart" \
  python3 -c "import json,sys; c=json.load(open('$work/crash.json')); sys.exit(len(c['flight']['contexts']) != $harts)"
echo "1..$n"
[ "$failed" = 0 ]
