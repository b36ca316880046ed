#!/bin/bash
# What the RISC-V virt tests share (sourced): QEMU's virt machine with $harts harts under
# multi-threaded TCG and its GDB server, batch GDB on it, TAP checks.
# Expects qemu, fw, harts and work set; sets port, and n and failed (tests/support/tap_check.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../../support/tap_check.sh"
virt_start() { # QEMU on the firmware, its GDB server at 127.0.0.1:$port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$qemu" -M virt -smp "$harts" -accel tcg,thread=multi -bios none -nographic -monitor none \
    -gdb tcp:127.0.0.1:$port -kernel "$fw" >"$work/uart.log" 2>&1 &
  qpid=$!
  trap 'kill $qpid 2>/dev/null; wait $qpid 2>/dev/null' EXIT
  for _ in $(seq 100); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
    sleep 0.05
  done
}
gdb_run() { # gdb_run GDB-COMMANDS...: batch GDB on the target, the output on stdout
  local args=()
  for c in "$@"; do args+=(-ex "$c"); done
  gdb-multiarch -nx -batch -ex "set architecture riscv:rv32" -ex "file $fw" \
    -ex "target remote 127.0.0.1:$port" "${args[@]}" -ex detach 2>/dev/null
}
virt_wait_done() { # until hart 0 says the run is done (fw_stats.state 3), at most 10 s
  for _ in $(seq 100); do
    [ "$(gdb_run 'printf "%u\n", fw_stats.state' | grep -E '^[0-9]+$')" = 3 ] && return 0
    sleep 0.1
  done
  return 1
}
# The host's command (fw.h), then the crash record taken through the descriptor into
# $work/crash.bin once the faulting hart has written it.
virt_fault() { # virt_fault COMMAND
  gdb_run "set var fw_command = $1" >/dev/null
  for _ in $(seq 50); do
    "$emb" capture --gdb 127.0.0.1:$port --elf "$fw" -o "$work/crash.emb" --save-crash "$work/crash.bin" \
      >"$work/crash-capture.txt" 2>&1 && grep -q "holds a crash record" "$work/crash-capture.txt" && break
    sleep 0.1
  done
}
# GDB's own reading of every hart's trap CSRs (QEMU's GDB stub: a thread per hart, thread
# N is hart N-1), one line per hart: hart mepc mcause.
virt_gdb_traps() {
  local cmds=()
  for ((h = 0; h < harts; h++)); do
    cmds+=("thread $((h + 1))" "printf \"hart $h 0x%08x 0x%08x\\n\", \$mepc, \$mcause")
  done
  gdb_run "${cmds[@]}" | grep -E '^hart [0-9]+ 0x'
}
