#!/usr/bin/env bash
# Instructions per 2-word trace event and per 2-argument log call on RV32IMAC, counted by
# minstret under QEMU's -icount shift=0 (one count per guest instruction, so the figures
# repeat exactly): examples/riscv-virt/bench.c at -O2 and -Os, one hart, snapshot ring.
# Writes BUILD/bench/riscv.json. Usage: bench/riscv.sh BUILD_DIR
set -euo pipefail
build=$1
mkdir -p "$build/bench"
echo "| build | instructions per event | instructions per log call |"
echo "|---|---:|---:|"
sep=
echo "[" >"$build/bench/riscv.json"
for opt in O2 Os O2_tune; do
  out=$(timeout 60 qemu-system-riscv32 -M virt -smp 1 -bios none -nographic -monitor none \
    -icount shift=0 -kernel "$build/fw/riscv-bench-$opt.elf")
  ev=$(awk '$2 == "event" {print $3}' <<<"$out")
  lg=$(awk '$2 == "log" {print $3}' <<<"$out")
  [ -n "$ev" ] && [ -n "$lg" ] || { echo "bench/riscv.sh: no figures from the $opt firmware: $out" >&2; exit 1; }
  printf '| -%s | %d.%02d | %d.%02d |\n' "$opt" $((ev / 100)) $((ev % 100)) $((lg / 100)) $((lg % 100))
  printf '%s{"opt": "%s", "event_x100": %d, "log_x100": %d}\n' "$sep" "$opt" "$ev" "$lg" >>"$build/bench/riscv.json"
  sep=,
done
echo "]" >>"$build/bench/riscv.json"
