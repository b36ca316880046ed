#!/usr/bin/env bash
# make demo, the threaded firmware on the example kernel (README.md): its capture, the
# trace as text and for Perfetto (per-thread load counters), the per-thread summary with
# its inheritance chains and latency, the SPEC-015 §11 crash report, and the crash at the
# end of an inheritance chain. Usage: demo.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$1 out=$2
fw=$build/fw/kernel-m3.elf emb=$build/bin/emb
[ -f "$fw" ] || { echo "demo: $fw is missing (arm-none-eabi-gcc?)" >&2; exit 1; }
mkdir -p "$out"
run() { # APPEND UART0 UART1
    timeout 60 qemu-system-arm -M mps2-an385 -nographic -monitor none -icount shift=3,sleep=off \
        -semihosting-config enable=on,target=native ${1:+-append "$1"} \
        -serial "file:$2" -serial "file:$3" -kernel "$fw" > /dev/null 2>&1
}
run "" "$out/uart.txt" "$out/uart1.bin"
"$emb" capture --file "$out/uart1.bin" -o "$out/run.emb" --save-trace "$out/run.embt" 2> "$out/capture.txt"
"$emb" trace --color=never "$out/run.embt" > "$out/trace.txt"
"$emb" trace --format perfetto -o "$out/trace.perfetto.json" "$out/run.embt"
"$emb" trace --summary --color=never "$out/run.embt" > "$out/summary.txt"
"$emb" trace --latency --color=never "$out/run.embt" > "$out/latency.txt"
"$emb" log --elf "$fw" --color=never "$out/run.emb" > "$out/log.txt"
"$emb" top --file "$out/uart1.bin" --elf "$fw" --once > "$out/top.txt" # the live view, once (docs/live.md)
run fault "$out/crash-uart.txt" "$out/crash-uart1.bin"
"$emb" capture --file "$out/crash-uart1.bin" -o "$out/crash.emb" 2> /dev/null
"$emb" crash --elf "$fw" --color=never "$out/crash.emb" > "$out/crash.txt" || true
run chainfault "$out/chain-crash-uart.txt" "$out/chain-crash-uart1.bin"
"$emb" capture --file "$out/chain-crash-uart1.bin" -o "$out/chain-crash.emb" 2> /dev/null
"$emb" crash --elf "$fw" --color=never "$out/chain-crash.emb" > "$out/chain-crash.txt" || true
sed -n '/threads over/,$p' "$out/summary.txt"
sed -n '/^THREAD/,/^$/p; /^LOG/,$p' "$out/top.txt"
grep -A1 '^Summary' "$out/crash.txt" "$out/chain-crash.txt"
echo "Made in $out: run.emb, trace.txt, trace.perfetto.json (ui.perfetto.dev), summary.txt, top.txt,"
echo "  latency.txt, log.txt, crash.emb and crash.txt (the driver's fault with the I2C mutex held),"
echo "  chain-crash.emb and chain-crash.txt (the logger's fault at the end of an inheritance chain)"
