#!/usr/bin/env bash
# The Cortex-M port on QEMU's MPS2 boards, measured (docs/benchmarks.md, "Cortex-M").
# Usage: bench/cortex_m.sh [--flash] BUILD_DIR   (--flash: part 2 alone, seconds)
#
#  1. Instructions per call: bench/cortex_m/bench_fw.c runs each loop under
#     `qemu-system-arm -icount shift=0` (one instruction per virtual nanosecond; the CMSDK
#     timer at 25 MHz ticks once per 40 instructions), best of 5 rounds; the empty loop is
#     subtracted. Built at -O2 per core (M3, M4, M7) and, on the M3, with the clock fixed
#     to DWT CYCCNT (the code real silicon runs: QEMU has no DWT, so the default build
#     picks SysTick), the default build made to take its DWT path (m3-auto-dwt: what it
#     runs on a core whose counter counts), with interrupt masking for the ring's
#     atomics (ARMv6-M's way), and without the count of overwritten events (the
#     benchmark's snapshot ring wraps all the time).
#  2. Flash and RAM: the library built at -Os for the M3 (arm-none-eabi-size per object and
#     per feature set), and what its objects add to a minimal firmware
#     (bench/cortex_m/size_fw.c), read from the link map, per configuration.
#  3. Compiled out: size_fw.c with its call sites compiled out, and with them deleted from
#     the text: the two images' code must be byte-identical (tests/integration/compiled_out.sh).
#
# Prints the tables; writes BUILD_DIR/bench/cortex_m.json and BUILD_DIR/bench/cortex_m/*.
set -euo pipefail
FLASH_ONLY=0
[ "${1:-}" = --flash ] && { FLASH_ONLY=1; shift; }
[ $# -eq 1 ] || { echo "usage: bench/cortex_m.sh [--flash] BUILD_DIR" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/bench/cortex_m
CC=arm-none-eabi-gcc
QEMU=qemu-system-arm
for tool in $CC $QEMU arm-none-eabi-size; do
    command -v $tool >/dev/null || { echo "bench: $tool not found (scripts/install-deps.sh)" >&2; exit 1; }
done
GEN=$BUILD/gen
[ -f "$GEN/trace_events.c" ] || { echo "bench: $GEN/trace_events.c missing: build first (make build)" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"

PORT=$SRC/ports/cortex-m
MPS2=$PORT/mps2
LIB_SOURCES=("$SRC"/src/*.c "$SRC"/src/wire/*.c "$GEN/trace_events.c" "$PORT/cortex_m.c" "$PORT/fault.c")
INCLUDES=(-I"$SRC/include" -I"$PORT/include" -I"$GEN/include" -I"$MPS2" -I"$SRC/bench/cortex_m")
WARN=(-std=c11 -Wall -Wextra -Werror -ffreestanding -ffunction-sections -fdata-sections)
# The measured event (work_start, class work) compiled in whatever the profile's classes
# (the base profile, the default on Cortex-M, compiles in only its own and the firmware's).
CLASSES=(-DCONFIG_EMB_TRACE_CLASSES=0xFFFFFFFFu)
LINK=(-nostartfiles -Wl,--gc-sections -Wl,--build-id -L"$PORT" -T "$MPS2/mps2.ld" --specs=nano.specs)

# ---- 1. Instructions per call ----

# name cpu machine defines...
run_bench() {
    local name=$1 cpu=$2 machine=$3
    shift 3
    local elf=$OUT/bench-$name.elf
    $CC -mcpu="$cpu" -mthumb -O2 -g "${WARN[@]}" "${CLASSES[@]}" "$@" "${INCLUDES[@]}" "${LINK[@]}" \
        "$SRC/bench/cortex_m/bench_fw.c" "$SRC/bench/cortex_m/loops.c" "$SRC/bench/cortex_m/loops_out.c" \
        "${LIB_SOURCES[@]}" "$MPS2/startup.c" -o "$elf"
    # Never a pipe into head: a closed stdout leaves the firmware spinning on the UART.
    timeout 300 $QEMU -M "$machine" -icount shift=0 -nographic -monitor none \
        -semihosting-config enable=on,target=native -kernel "$elf" > "$OUT/bench-$name.txt" 2>&1 || {
        echo "bench: $name: QEMU failed:" >&2
        cat "$OUT/bench-$name.txt" >&2
        return 1
    }
    grep -q "^check trace_unaccounted 0$" "$OUT/bench-$name.txt" && grep -q "^check log_dropped 0" "$OUT/bench-$name.txt" ||
        { echo "bench: $name: events were dropped, the figures would flatter" >&2; return 1; }
    arm-none-eabi-objdump -d --no-show-raw-insn "$elf" |
        awk '/^[0-9a-f]+ <bench_cm_(trace|log)_on>:/ {p = 1} /^$/ {p = 0} p' > "$OUT/bench-$name.s"
}

if [ $FLASH_ONLY = 0 ]; then
run_bench m3 cortex-m3 mps2-an385
run_bench m3-dwt cortex-m3 mps2-an385 -DCONFIG_EMB_CM_CLOCK=1
run_bench m3-auto-dwt cortex-m3 mps2-an385 -DBENCH_CM_AUTO_AS_DWT=1
run_bench m3-irq cortex-m3 mps2-an385 -DCONFIG_EMB_CM_CLOCK=1 -DCONFIG_EMB_CM_ATOMICS_IRQ=1
run_bench m3-dwt-uncounted cortex-m3 mps2-an385 -DCONFIG_EMB_CM_CLOCK=1 -DCONFIG_EMB_TRACE_COUNT_OVERWRITTEN=0
run_bench m4 cortex-m4 mps2-an386
run_bench m7 cortex-m7 mps2-an500

# Instructions per iteration: ticks * 40 / n, minus the empty loop of the same n.
instr_table() {
    awk '
    FNR == 1 { split(FILENAME, a, "bench-"); name = a[2]; sub(/\.txt$/, "", name); names[++nn] = name }
    $1 == "port" { port[name] = $2 }
    $1 == "bench" { v[name, $2] = $3 * 40.0 / $4 }
    END {
        printf "| build | clock | empty loop | bare stores | clock read | trace event | disabled | compiled out | log call | disabled | compiled out |\n"
        printf "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for (i = 1; i <= nn; i++) {
            n = names[i]; e = v[n, "empty"]; el = v[n, "empty_log"]
            printf "| %s | %s | %.1f | %.1f | %.1f | **%.1f** | %.1f | %.1f | **%.1f** | %.1f | %.1f |\n", n, port[n], e,
                v[n, "bare"] - e, v[n, "clock"] - e, v[n, "trace"] - e, v[n, "trace_off"] - e,
                v[n, "trace_out"] - e, v[n, "log"] - el, v[n, "log_off"] - el, v[n, "log_out"] - el
        }
    }' "$OUT"/bench-m3.txt "$OUT"/bench-m3-dwt.txt "$OUT"/bench-m3-auto-dwt.txt "$OUT"/bench-m3-irq.txt \
        "$OUT"/bench-m3-dwt-uncounted.txt \
        "$OUT"/bench-m4.txt "$OUT"/bench-m7.txt
}
echo "== Instructions per call (qemu-system-arm -icount shift=0, -O2; empty loop subtracted)"
instr_table | tee "$OUT/instructions.md"
fi

# ---- 2. Flash and RAM ----

# Objects of the library for the M3 at -Os into DIR, with extra defines.
build_lib() {
    local dir=$1
    shift
    mkdir -p "$dir"
    for f in "${LIB_SOURCES[@]}"; do
        $CC -mcpu=cortex-m3 -mthumb -Os "${WARN[@]}" "$@" "${INCLUDES[@]}" -c "$f" \
            -o "$dir/$(basename "$f" .c).o"
    done
}

# What the library's objects add to the minimal firmware: flash (.text, .rodata, .data's
# load image) and RAM (.data, .bss), from the link map's input sections.
linked_size() { # label defines...
    local label=$1
    shift
    set -- "${CLASSES[@]}" "$@"
    local dir=$OUT/size-$label
    build_lib "$dir/lib" "$@"
    mkdir -p "$dir/app"
    $CC -mcpu=cortex-m3 -mthumb -Os "${WARN[@]}" "$@" "${INCLUDES[@]}" -c "$SRC/bench/cortex_m/size_fw.c" -o "$dir/app/size_fw.o"
    $CC -mcpu=cortex-m3 -mthumb -Os "${WARN[@]}" "${INCLUDES[@]}" -c "$MPS2/startup.c" -o "$dir/app/startup.o"
    $CC -mcpu=cortex-m3 -mthumb "${LINK[@]}" -Wl,-Map="$dir/fw.map" "$dir"/app/*.o "$dir"/lib/*.o -o "$dir/fw.elf"
    awk -v label="$label" '
    function hex(s,   i, v) {
        v = 0; s = tolower(s); sub(/^0x/, "", s)
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return v
    }
    /^Linker script and memory map/ { on = 1 }
    !on { next }
    /^ \.[A-Za-z_.]/ || /^ COMMON/ { sec = $1; if (NF >= 4) { size = $3; file = $4 } else next }
    /^                0x/ && NF >= 3 && sec != "" { size = $2; file = $3 }
    file ~ /\/lib\/[^\/]+\.o$/ && size != "" {
        s = hex(size)
        if (sec ~ /^\.(text|rodata)/) flash += s
        else if (sec ~ /^\.data/) { flash += s; ram += s }
        else if (sec ~ /^\.bss/ || sec ~ /^COMMON/) ram += s
        # Flash only: not RAM, nor .comment and .ARM.attributes (84 bytes an object).
        split(file, p, "/"); if (sec ~ /^\.(text|rodata|data)/) obj[p[length(p)]] += s
        size = ""; file = ""
    }
    # The C library functions the image links (memcpy, memset): counted apart, an
    # application usually has them already.
    file ~ /lib(c_nano|c|gcc)\.a\(/ && size != "" && sec ~ /^\.text/ { libc += hex(size); size = ""; file = "" }
    END {
        printf "%s %d %d", label, flash, ram
        for (o in obj) if (obj[o] > 0) printf " %s=%d", o, obj[o]
        printf " (libc=%d)\n", libc
    }' "$dir/fw.map"
}

echo
echo "== Flash and RAM the library adds to a minimal firmware (M3, -Os; link map)"
# The core a firmware engineer needs: snapshot trace rings, the deferred log, the v1 crash
# record the fault handlers write, the debug descriptor; the clock fixed to DWT (a core
# that has it). Each further row adds back or takes away one option.
BASE=(-DCONFIG_EMB_MONITOR=0 -DCONFIG_EMB_STATS=0)
MODES=(-DCONFIG_EMB_TRACE_STREAMING=0 -DCONFIG_EMB_TRACE_WINDOW=0)
# Trace only: no log, crash record or descriptor. Minimal: what a SystemView user would
# pick for size besides, each option a row of its own below: no fault handlers (the CMSIS
# names left to the board's), no count of the events in overwritten packets (the
# sequence-number gap says a packet was lost), no stack painting.
TRACE_ONLY=("${BASE[@]}" "${MODES[@]}" -DCONFIG_EMB_CM_CLOCK=1 -DCONFIG_EMB_DESCRIPTOR=0 -DCONFIG_EMB_CRASH=0
            -DCONFIG_EMB_LOG=0)
TRACE_MINIMAL=("${TRACE_ONLY[@]}" -DCONFIG_EMB_CM_CMSIS_HANDLERS=0 -DCONFIG_EMB_TRACE_COUNT_OVERWRITTEN=0
               -DCONFIG_EMB_CM_STACK_PAINT=0)
# The reduced core: the same features, each paying only for what it uses: no count of
# the events in overwritten packets, no stack painting, the reduced descriptor (the
# identity, crash, contexts, rings and log sections), the crash record without the last
# packets, and the small v2 record; a CRC without a table, the port's name fixed at build
# time. Built as a firmware and decoded in QEMU (tests/qemu/core, ctest qemu_core_reduced_*).
CORE_REDUCED=("${BASE[@]}" "${MODES[@]}" -DCONFIG_EMB_CM_CLOCK=1 -DCONFIG_EMB_TRACE_COUNT_OVERWRITTEN=0
              -DCONFIG_EMB_CM_STACK_PAINT=0 -DCONFIG_EMB_DESCRIPTOR_REDUCED=1 -DCONFIG_EMB_CM_CRASH_FLIGHT=0
              -DCONFIG_EMB_CRASH_RECORD_VERSION=2 -DCONFIG_EMB_CRC32_TABLE=0
              '-DCONFIG_EMB_CM_PORT_NAME="cortex-m3/dwt"')
# The defines of set $1.. without the one that option $opt names, then the option itself
# (NAME=VALUE; a bare NAME only takes its define away).
without() { # opt defines...
    local opt=$1 d
    shift
    set_without=()
    for d in "$@"; do [ "${d%%=*}" = "-D${opt%%=*}" ] || set_without+=("$d"); done
    [ "${opt#*=}" = "$opt" ] || set_without+=(-D"$opt")
}
{
    linked_size core_reduced "${CORE_REDUCED[@]}"
    without CONFIG_EMB_CRASH_RECORD_VERSION=1 "${CORE_REDUCED[@]}"
    linked_size core_reduced_v1 "${set_without[@]}"
    linked_size core "${BASE[@]}" "${MODES[@]}" -DCONFIG_EMB_CM_CLOCK=1
    linked_size core_no_descriptor "${BASE[@]}" "${MODES[@]}" -DCONFIG_EMB_CM_CLOCK=1 -DCONFIG_EMB_DESCRIPTOR=0
    linked_size core_systick_fallback "${BASE[@]}" "${MODES[@]}"
    linked_size core_streaming_window "${BASE[@]}" -DCONFIG_EMB_CM_CLOCK=1
    linked_size trace_only "${TRACE_ONLY[@]}"
    linked_size trace_minimal "${TRACE_MINIMAL[@]}"
    linked_size all
} > "$OUT/linked.txt"
awk '{printf "| %s | %d | %d | %s |\n", $1, $2, $3, substr($0, index($0, $4))}' "$OUT/linked.txt" |
    sed '1i | configuration | flash bytes | RAM bytes (beyond the buffers) | by object (flash) |\n|---|---:|---:|---|' |
    tee "$OUT/linked.md"

# The reduced core's options, each put back alone (what it costs there), and each
# feature taken away (what it costs in the reduced core).
echo
echo "== The reduced core (M3, -Os; link map): each option put back, each feature taken away"
CORE_OPTIONS=(CONFIG_EMB_CRASH_RECORD_VERSION=1 CONFIG_EMB_CM_CRASH_FLIGHT=1 CONFIG_EMB_DESCRIPTOR_REDUCED=0
              CONFIG_EMB_TRACE_COUNT_OVERWRITTEN=1 CONFIG_EMB_CM_STACK_PAINT=1 CONFIG_EMB_CRC32_TABLE=1
              CONFIG_EMB_CM_PORT_NAME CONFIG_EMB_DESCRIPTOR=0 CONFIG_EMB_LOG=0 CONFIG_EMB_CRASH=0)
{
    grep '^core_reduced ' "$OUT/linked.txt"
    for opt in "${CORE_OPTIONS[@]}"; do
        without "$opt" "${CORE_REDUCED[@]}"
        linked_size "+$opt" "${set_without[@]}"
    done
} > "$OUT/core_options.txt"
awk 'NR == 1 { base = $2; ram = $3; next }
     { o = substr($1, 2); if (o !~ /=/) o = o " unset (the name from CPUID at start)"
       printf "| `%s` | %+d | %d | %+d |\n", o, $2 - base, $2, $3 - ram }' "$OUT/core_options.txt" |
    sed '1i | option (the reduced core and this) | flash B | flash B of that image | RAM B |\n|---|---:|---:|---:|' |
    tee "$OUT/core_options.md"
[ $FLASH_ONLY = 0 ] || exit 0

# Each option's cost: the defaults ("all") less the one option, from the same link map
# (an option whose code others call costs what turning it off takes with it).
echo
echo "== Flash per option (M3, -Os; link map): the defaults, less one option at a time"
OPTIONS=(CONFIG_EMB_MONITOR=0 CONFIG_EMB_STATS=0 CONFIG_EMB_TRACE_STREAMING=0
         CONFIG_EMB_TRACE_WINDOW=0 CONFIG_EMB_DESCRIPTOR=0 CONFIG_EMB_CRASH=0 CONFIG_EMB_LOG=0
         CONFIG_EMB_CM_CLOCK=1 CONFIG_EMB_TRACE_COUNT_OVERWRITTEN=0 CONFIG_EMB_CM_CMSIS_HANDLERS=0
         CONFIG_EMB_CM_STACK_PAINT=0)
{
    grep '^all ' "$OUT/linked.txt"
    for opt in "${OPTIONS[@]}"; do
        linked_size "$opt" -D"$opt"
    done
} > "$OUT/options.txt"
awk 'NR == 1 { all = $2; ram = $3; next }
     { printf "| `%s` | %d | %d | %d |\n", $1, all - $2, $2, ram - $3 }' "$OUT/options.txt" |
    sed '1i | option set (the defaults but this) | flash B it saves | flash B of that image | RAM B it saves |\n|---|---:|---:|---:|' |
    tee "$OUT/options.md"

# The trace-only image's options: the minimal set, each option put back alone (what it
# costs there), and the set each further core feature needs.
echo
echo "== Trace only (M3, -Os; link map): the minimal image, each option put back alone"
ADD_BACK=(CONFIG_EMB_TRACE_COUNT_OVERWRITTEN=1 CONFIG_EMB_CM_CMSIS_HANDLERS=1 CONFIG_EMB_CM_STACK_PAINT=1
          CONFIG_EMB_CM_CLOCK=0 CONFIG_EMB_TRACE_STREAMING=1 CONFIG_EMB_TRACE_WINDOW=1 CONFIG_EMB_DESCRIPTOR=1
          CONFIG_EMB_LOG=1 CONFIG_EMB_CRASH=1)
{
    grep '^trace_minimal ' "$OUT/linked.txt"
    for opt in "${ADD_BACK[@]}"; do
        # The option's own -D last: the later definition of a macro wins with a warning,
        # so the set is filtered instead.
        without "$opt" "${TRACE_MINIMAL[@]}"
        linked_size "+$opt" "${set_without[@]}"
    done
} > "$OUT/trace_options.txt"
awk 'NR == 1 { base = $2; ram = $3; next }
     { printf "| `%s` | %d | %d | %d |\n", substr($1, 2), $2 - base, $2, $3 - ram }' "$OUT/trace_options.txt" |
    sed '1i | option put back (the minimal trace-only image and this) | flash B it adds | flash B of that image | RAM B it adds |\n|---|---:|---:|---:|' |
    tee "$OUT/trace_options.md"

echo
echo "== The library's objects at -Os (M3), arm-none-eabi-size: every function, used or not"
build_lib "$OUT/objs" "${CLASSES[@]}"
(cd "$OUT/objs" && arm-none-eabi-size -t *.o) | tee "$OUT/objects.txt"

# Bytes one call site adds to the code that calls it (-Os): the loop with the call site,
# less the loop without (the compiled-out copy is the loop alone).
$CC -mcpu=cortex-m3 -mthumb -Os "${WARN[@]}" "${CLASSES[@]}" "${INCLUDES[@]}" -c "$SRC/bench/cortex_m/loops.c" -o "$OUT/loops_on.o"
$CC -mcpu=cortex-m3 -mthumb -Os "${WARN[@]}" "${CLASSES[@]}" "${INCLUDES[@]}" -c "$SRC/bench/cortex_m/loops_out.c" -o "$OUT/loops_out.o"
site() { echo $((16#$(arm-none-eabi-nm -S "$1" | awk -v f="$2" '$4 == f { print $2 }'))); }
trace_site=$(($(site "$OUT/loops_on.o" bench_cm_trace_on) - $(site "$OUT/loops_out.o" bench_cm_trace_out)))
log_site=$(($(site "$OUT/loops_on.o" bench_cm_log_on) - $(site "$OUT/loops_out.o" bench_cm_log_out)))
echo
echo "call site bytes at -Os (M3): trace event $trace_site, log call $log_site"

# ---- 3. Compiled out ----

echo
echo "== Compiled out: size_fw.c with its call sites compiled out, against the same with them deleted"
build_lib "$OUT/lib-out" -DCONFIG_EMB_TRACE_CLASSES=0u -DCONFIG_EMB_LOG=0
$CC -mcpu=cortex-m3 -mthumb -Os "${WARN[@]}" "${INCLUDES[@]}" -c "$MPS2/startup.c" -o "$OUT/lib-out/startup.o"
compiled_out=ok
bash "$SRC/tests/integration/compiled_out.sh" --all-sections \
    --sites 'EMB_TRACE_\w+|EMB_LOG_(?:ERR|WRN|INF|DBG)' \
    --define -DCONFIG_EMB_TRACE_CLASSES=0u --define -DCONFIG_EMB_LOG=0 \
    $CC "$SRC/bench/cortex_m/size_fw.c" "$(echo "$OUT"/lib-out/*.o) ${LINK[*]}" -- \
    -mcpu=cortex-m3 -mthumb -Os "${WARN[@]}" "${INCLUDES[@]}" | tee "$OUT/compiled_out.txt" || compiled_out=FAILED
echo "compiled out: $compiled_out"

# ---- JSON ----
awk -v trace_site="$trace_site" -v log_site="$log_site" -v co="$compiled_out" '
FILENAME ~ /bench-/ {
    split(FILENAME, a, "bench-"); n = a[2]; sub(/\.txt$/, "", n)
    if ($1 == "bench") v[n, $2] = $3 * 40.0 / $4
    if ($1 == "port") { port[n] = $2; names[++nn] = n }
    next
}
{ linked[++nl] = $0 }
END {
    printf "{\n  \"instructions\": {\n"
    for (i = 1; i <= nn; i++) {
        n = names[i]; e = v[n, "empty"]; el = v[n, "empty_log"]
        printf "    \"%s\": {\"port\": \"%s\", \"empty\": %.2f, \"bare\": %.2f, \"clock\": %.2f, \"trace\": %.2f, \"trace_disabled\": %.2f, \"trace_compiled_out\": %.2f, \"log\": %.2f, \"log_disabled\": %.2f, \"log_compiled_out\": %.2f}%s\n",
            n, port[n], e, v[n, "bare"] - e, v[n, "clock"] - e, v[n, "trace"] - e, v[n, "trace_off"] - e,
            v[n, "trace_out"] - e, v[n, "log"] - el, v[n, "log_off"] - el, v[n, "log_out"] - el, i < nn ? "," : ""
    }
    printf "  },\n  \"linked\": {\n"
    for (i = 1; i <= nl; i++) {
        split(linked[i], f, " ")
        printf "    \"%s\": {\"flash\": %d, \"ram\": %d}%s\n", f[1], f[2], f[3], i < nl ? "," : ""
    }
    printf "  },\n  \"call_site_bytes\": {\"trace\": %d, \"log\": %d},\n  \"compiled_out_identical\": %s\n}\n",
        trace_site, log_site, co == "ok" ? "true" : "false"
}' "$OUT"/bench-*.txt "$OUT/linked.txt" > "$BUILD/bench/cortex_m.json"
echo "bench: results in $BUILD/bench/cortex_m.json and $OUT/"
[ "$compiled_out" = ok ]
