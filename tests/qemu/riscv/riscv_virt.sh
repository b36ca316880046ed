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
#  4. The last hart faults: its crash record says its cpu and the faulting function.
#
# Usage: riscv_virt.sh QEMU FIRMWARE.elf HARTS WORKDIR EMB
set -u
qemu=$1 fw=$2 harts=$3 work=$4 emb=$5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work" && rm -f "$work"/*
n=0 failed=0
check() { # check NAME COMMAND...
  local what=$1; shift
  n=$((n + 1))
  if "$@" >>"$work/checks.log" 2>&1; then echo "ok $n - $what"; else echo "not ok $n - $what"; failed=$((failed + 1)); fi
}
# The recording path has no atomic read-modify-write (AMO, LR/SC): the stress loop and
# the timer interrupt, with the trace fast path inlined, hold none (objdump's reading).
riscv64-unknown-elf-objdump -d --no-show-raw-insn "$fw" | awk '
  /^[0-9a-f]+ <.*>:$/ { f = $2 } $2 ~ /^(amo|lr\.|sc\.)/ { print f, $2 }' | sort | uniq -c >"$work/atomics.txt"
echo "# functions with atomic read-modify-write instructions:"; sed 's/^/#   /' "$work/atomics.txt"
check "no atomic read-modify-write in the stress loop or the timer interrupt's recording" \
  bash -c "grep -c . '$work/atomics.txt' && ! grep -E '<(stress|emb_rv_interrupt|emb_isr_enter|emb_isr_exit)>' '$work/atomics.txt'"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$qemu" -M virt -smp "$harts" -accel tcg,thread=multi -bios none -nographic -monitor none \
  -gdb tcp:127.0.0.1:$port -kernel "$fw" >"$work/uart.log" 2>&1 &
qpid=$!
trap 'kill $qpid 2>/dev/null; wait $qpid 2>/dev/null' EXIT
for _ in $(seq 100); do
  python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
  sleep 0.05
done
gdb_run() { # gdb_run GDB-COMMANDS...: batch GDB on the target, the output on stdout
  local args=()
  for c in "$@"; do args+=(-ex "$c"); done
  gdb-multiarch -nx -batch -ex "set architecture riscv:rv32" -ex "file $fw" \
    -ex "target remote 127.0.0.1:$port" "${args[@]}" -ex detach 2>/dev/null
}

check "emb capture --gdb --until-closed follows the $harts harts' rings and seals the run" \
  "$emb" capture --gdb 127.0.0.1:$port --elf "$fw" --until-closed --duration 60 \
  -o "$work/run.emb" --save-trace "$work/run.embt" --save-log "$work/run.log"
done_state() { gdb_run 'printf "%u\n", fw_stats.state' | grep -E '^[0-9]+$'; }
for _ in $(seq 100); do [ "$(done_state)" = 3 ] && break; sleep 0.1; done
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

gdb_run "set var fw_command = 0xFA17" >/dev/null
last=$((harts - 1))
for _ in $(seq 50); do
  "$emb" capture --gdb 127.0.0.1:$port --elf "$fw" -o "$work/crash.emb" --save-crash "$work/crash.bin" \
    >"$work/crash-capture.txt" 2>&1 && grep -q "holds a crash record" "$work/crash-capture.txt" && break
  sleep 0.1
done
check "the faulting hart's record is taken through the descriptor" grep -q "holds a crash record" "$work/crash-capture.txt"
"$emb" crash --elf "$fw" --color=never "$work/crash.bin" >"$work/crash.txt" 2>&1
check "emb crash: hart $last faulted (a memory fault) in fault_if_asked, cpu $last" \
  bash -c "grep -q 'fault      memory' '$work/crash.txt' && grep -q '^pc .*fault_if_asked' '$work/crash.txt' && grep -q 'cpu $last,' '$work/crash.txt'"
echo "1..$n"
[ "$failed" = 0 ] && [ ! -e "$work/trace.failed" ]
