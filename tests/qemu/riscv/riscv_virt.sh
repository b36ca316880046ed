#!/bin/bash
# The RISC-V port on QEMU's virt machine with HARTS harts (multi-threaded TCG), read the
# way a debug probe reads it: over QEMU's GDB server, through the debug descriptor
# (examples/riscv-virt). GDB itself (gdb-multiarch) is the independent reader of the
# firmware's statistics and of the harts (QEMU's GDB stub shows each hart as a thread).
#
#  1. `emb capture --gdb --until-closed` follows every hart's rings while all of them and
#     their timer interrupts record at full rate; the trace decodes into one context per
#     hart, and per hart received + discarded = emitted, exactly (check_trace.py).
#  2. `emb desc --gdb` and the capture's identity name the profile built (isolated), the
#     descriptor lists a context per hart.
#  3. Perfetto shows a track per hart; `emb log` decodes every hart's log.
#  4. The last hart faults: the one crash record says its cpu and the faulting function,
#     and where every other hart was when its stop request reached it, which GDB reads
#     from each hart's own mepc and mcause (check_crash.py).
#
# Usage: riscv_virt.sh QEMU FIRMWARE.elf HARTS WORKDIR EMB
set -u
qemu=$1 fw=$2 harts=$3 work=$4 emb=$5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work" && rm -f "$work"/*
. "$here/virt_lib.sh"
# The recording path has no atomic read-modify-write (AMO, LR/SC): the stress loop and
# the timer interrupt, with the trace fast path inlined, hold none (objdump's reading).
riscv64-unknown-elf-objdump -d --no-show-raw-insn "$fw" | awk '
  /^[0-9a-f]+ <.*>:$/ { f = $2 } $2 ~ /^(amo|lr\.|sc\.)/ { print f, $2 }' | sort | uniq -c >"$work/atomics.txt"
echo "# functions with atomic read-modify-write instructions:"; sed 's/^/#   /' "$work/atomics.txt"
check "no atomic read-modify-write in the stress loop or the timer interrupt's recording" \
  bash -c "grep -c . '$work/atomics.txt' && ! grep -E '<(stress|emb_rv_interrupt|emb_isr_enter|emb_isr_exit)>' '$work/atomics.txt'"
virt_start

check "emb capture --gdb --until-closed follows the $harts harts' rings and seals the run" \
  "$emb" capture --gdb 127.0.0.1:$port --elf "$fw" --until-closed --duration 60 \
  -o "$work/run.emb" --save-trace "$work/run.embt" --save-log "$work/run.log"
virt_wait_done
gdb_run "info threads" >"$work/threads.txt"
check "GDB sees the $harts harts as $harts threads" \
  test "$(grep -cE '^\*? +[0-9]+ +Thread' "$work/threads.txt")" = "$harts"
stats=()
for ((h = 0; h < harts; h++)); do
  stats+=("printf \"%u %u %u %u\\n\", fw_stats.hart[$h].thread_events, fw_stats.hart[$h].ticks, fw_stats.hart[$h].taken, fw_stats.hart[$h].logs")
done
gdb_run "${stats[@]}" | grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$' >"$work/stats.txt"
"$emb" trace -f ndjson -o "$work/run.ndjson" "$work/run.embt" 2>>"$work/checks.log"
"$emb" trace -f perfetto -o "$work/run.json" "$work/run.embt" 2>>"$work/checks.log"
python3 "$here/check_trace.py" "$harts" "$work/stats.txt" "$work/run.ndjson" "$work/run.json" \
  | sed "s/^ok [0-9]*/ok/; s/^not ok [0-9]*/not ok/" | while read -r line; do
    case $line in
    "ok "*) echo "ok - ${line#ok - }" ;;
    "not ok "*) echo "not ok - ${line#not ok - }"; echo FAILED >>"$work/trace.failed" ;;
    "#"*) echo "$line" ;;
    esac
  done
n=$((n + 1))
if [ -e "$work/trace.failed" ]; then echo "not ok $n - the trace against fw_stats"; failed=$((failed + 1)); else echo "ok $n - the trace against fw_stats"; fi

"$emb" desc --gdb 127.0.0.1:$port --elf "$fw" --color=never >"$work/desc.txt" 2>&1
check "emb desc --gdb: profile isolated, the port, a context per hart" \
  bash -c "grep -q 'riscv32/virt-time, profile isolated' '$work/desc.txt' && grep -q 'Contexts ($harts of 4)' '$work/desc.txt' && grep -q ' hart$((harts - 1)) ' '$work/desc.txt'"
check "the capture's identity names the profile built" \
  bash -c "'$emb' inspect '$work/run.emb' | grep -q 'flags=\"profile=isolated\"'"
logs=$(awk '{s += $4} END {print s}' "$work/stats.txt")
"$emb" log --elf "$fw" "$work/run.log" >"$work/log.txt" 2>>"$work/checks.log"
check "emb log decodes every hart's log: $logs records" \
  test "$(grep -c 'took item' "$work/log.txt")" = "$logs"

last=$((harts - 1))
virt_fault 0xFA17
virt_gdb_traps >"$work/gdb-traps.txt"
check "the faulting hart's record is taken through the descriptor" grep -q "holds a crash record" "$work/crash-capture.txt"
"$emb" crash --elf "$fw" --color=never "$work/crash.bin" >"$work/crash.txt" 2>&1
check "emb crash: hart $last faulted (a memory fault) in fault_if_asked, cpu $last" \
  bash -c "grep -q 'fault      memory' '$work/crash.txt' && grep -q '^pc .*fault_if_asked' '$work/crash.txt' && grep -q 'cpu $last,' '$work/crash.txt'"
"$emb" crash --elf "$fw" --json "$work/crash.bin" >"$work/crash.json" 2>>"$work/checks.log"
check "one record for all harts: hart $last's, the other harts stopped where GDB finds their mepc and mcause" \
  python3 "$here/check_crash.py" "$work/crash.json" "$work/gdb-traps.txt" one
echo "1..$n"
[ "$failed" = 0 ] && [ ! -e "$work/trace.failed" ]
