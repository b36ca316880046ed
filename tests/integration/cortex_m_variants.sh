#!/usr/bin/env bash
# The target library and the Cortex-M port build, with -Wall -Wextra -Werror, for every
# core family and port option: ARMv6-M (interrupt masking for the ring's atomics, no
# fault status registers), ARMv7-M and ARMv7E-M (LDREX/STREX; the BASEPRI critical
# section; interrupt masking forced; each fixed clock; the size-optimised core without
# monitors, statistics, streaming and window modes; emitters inlined at -Os), ARMv8-M
# Baseline and Mainline; the trace-only image at its smallest.
# Then a firmware per variant is linked with the MPS2 board support, the port's linker
# fragments and -Wl,--gc-sections, so nothing the port needs is missing (on ARMv6-M: the
# atomics GCC calls instead of inlining). Last, the MPS2 example's call sites compiled
# out leave its Cortex-M3 image unchanged (tests/integration/compiled_out.sh). With
# `reduced`, instead: the reduced core on the M3 and the M0, and that each of its options
# leaves out of the linked image what it says.
#
# usage: cortex_m_variants.sh SOURCE_DIR GEN_INCLUDE_DIR WORKDIR [reduced]
set -euo pipefail
src=$1 gen=$2 work=$3 reduced=${4:-}
cc=arm-none-eabi-gcc
command -v $cc >/dev/null || { echo "arm-none-eabi-gcc not found (scripts/install-deps.sh)"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
. "$(dirname "$0")/../support/tap_check.sh"
port=$src/ports/cortex-m
all=("$src"/src/*.c "$src"/src/wire/*.c "$gen/../trace_events.c" "$port/cortex_m.c" "$port/fault.c" "$port/mps2/startup.c")
app=$src/bench/cortex_m/size_fw.c
flags=(-mthumb -Os -std=c11 -Wall -Wextra -Werror -ffreestanding -ffunction-sections -fdata-sections
       -I"$src/include" -I"$port/include" -I"$gen" -I"$port/mps2")
link=(-nostartfiles -Wl,--gc-sections -Wl,--build-id -L"$port" -T "$port/mps2/mps2.ld" --specs=nano.specs)
# What a port option changes: the port, the rings' two halves, the hooks.
some=("$port/cortex_m.c" "$port/fault.c" "$src/src/trace.c" "$src/src/log.c" "$src/src/hooks.c")
variant() { # all|some name cpu flags...
    local which=$1 name=$2 cpu=$3
    shift 3
    local sources
    if [ "$which" = all ]; then sources=("${all[@]}"); else sources=("${some[@]}"); fi
    local dir=$work/$name
    mkdir -p "$dir"
    local rc=0
    for f in "${sources[@]}"; do
        $cc -mcpu="$cpu" "${flags[@]}" "$@" -c "$f" -o "$dir/$(basename "$f" .c).o" 2> "$dir/errors.txt" ||
            { rc=1; cat "$dir/errors.txt"; break; }
    done
    [ $rc -eq 0 ] && [ "$which" = all ] && { $cc -mcpu="$cpu" "${flags[@]}" "$@" -c "$app" -o "$dir/app.o" &&
        $cc -mcpu="$cpu" -mthumb "${link[@]}" "$dir"/*.o -o "$dir/fw.elf" 2> "$dir/errors.txt" ||
        { rc=1; cat "$dir/errors.txt"; }; }
    ok $rc "$name: $cpu $* $([ "$which" = all ] && echo "builds and links" || echo "builds")"
}
# With REDUCED: the reduced core alone (its own ctest, cortex_m_core_reduced), against
# the default M3 image.
if [ "$reduced" = reduced ]; then
variant all m3 cortex-m3
# The reduced core (docs/benchmarks.md, "Flash per feature set"): trace, log and the crash
# record, each paying only for what it uses. On ARMv6-M too (its fault entry, no FSRs).
core_reduced=(-DCONFIG_EMB_TRACE_CLASSES=0xFFFFFFFFu -DCONFIG_EMB_MONITOR=0 -DCONFIG_EMB_STATS=0
         -DCONFIG_EMB_TRACE_STREAMING=0 -DCONFIG_EMB_TRACE_WINDOW=0 -DCONFIG_EMB_CM_CLOCK=1
         -DCONFIG_EMB_TRACE_COUNT_OVERWRITTEN=0 -DCONFIG_EMB_CM_STACK_PAINT=0 -DCONFIG_EMB_DESCRIPTOR_REDUCED=1
         -DCONFIG_EMB_CM_CRASH_FLIGHT=0 -DCONFIG_EMB_CRASH_RECORD_VERSION=2 -DCONFIG_EMB_CRC32_TABLE=0
         '-DCONFIG_EMB_CM_PORT_NAME="cortex-m3/dwt"')
variant all m3-core-reduced cortex-m3 "${core_reduced[@]}"
variant all m0-core-reduced cortex-m0 "${core_reduced[@]}"
red_syms=$(arm-none-eabi-nm -S "$work/m3-core-reduced/fw.elf")
full_syms=$(arm-none-eabi-nm -S "$work/m3/fw.elf")
grep -q " emb_crash_flight_collect$" <<< "$full_syms" && ! grep -q " emb_crash_flight_collect$" <<< "$red_syms" &&
    ! grep -q " emb_tsf_encode_header$" <<< "$red_syms"
ok $? "m3-core-reduced: CONFIG_EMB_CM_CRASH_FLIGHT=0 links no flight recorder or stream header encoder"
grep -q " emb_crc32_nibble$" <<< "$full_syms" && ! grep -q " emb_crc32_nibble$" <<< "$red_syms"
ok $? "m3-core-reduced: CONFIG_EMB_CRC32_TABLE=0 links no CRC table"
# 356 bytes: the header, identity, crash, contexts, rings and log sections, 4-byte words.
grep -Eq "^[0-9a-f]+ 00000164 R emb_debug_descriptor$" <<< "$red_syms"
ok $? "m3-core-reduced: the reduced descriptor is 356 bytes of 32-bit words"
grep -q " emb_crash_encode_v2$" <<< "$red_syms" && ! grep -q " emb_crash_encode_v1$" <<< "$red_syms"
ok $? "m3-core-reduced: the v2 record's encoder alone"
# The CPUID decoding's table of ARMv8-M part names ("23", "33", "55", "85") is in the
# default image only; the fixed name is in the reduced image's initialised data.
for v in m3 m3-core-reduced; do arm-none-eabi-objcopy -O binary "$work/$v/fw.elf" "$work/$v/fw.bin"; done
grep -qa "23335585" "$work/m3/fw.bin" && ! grep -qa "23335585" "$work/m3-core-reduced/fw.bin" &&
    grep -qa "cortex-m3/dwt" "$work/m3-core-reduced/fw.bin"
ok $? "m3-core-reduced: CONFIG_EMB_CM_PORT_NAME leaves the CPUID decoding out"
tap_summary
exit
fi
variant all m0 cortex-m0
variant some m0plus cortex-m0plus
variant all m3 cortex-m3
variant some m3-basepri cortex-m3 -DCONFIG_EMB_CM_BASEPRI=0x40
variant some m3-irq-atomics cortex-m3 -DCONFIG_EMB_CM_ATOMICS_IRQ=1
variant some m3-dwt cortex-m3 -DCONFIG_EMB_CM_CLOCK=1
variant some m3-systick cortex-m3 -DCONFIG_EMB_CM_CLOCK=2
variant some m3-no-handlers cortex-m3 -DCONFIG_EMB_CM_CMSIS_HANDLERS=0 -DCONFIG_EMB_CM_SYSTICK_HANDLER=0
variant some m4 cortex-m4
variant all m7 cortex-m7
variant some m7-smp cortex-m7 -DCONFIG_EMB_CM_SMP=1
variant all m3-core cortex-m3 -DCONFIG_EMB_MONITOR=0 -DCONFIG_EMB_STATS=0 -DCONFIG_EMB_TRACE_STREAMING=0 \
    -DCONFIG_EMB_TRACE_WINDOW=0 -DCONFIG_EMB_CM_CLOCK=1
variant all m3-inline cortex-m3 -DCONFIG_EMB_TRACE_INLINE=1 -DCONFIG_EMB_LOG_INLINE=1
variant all m0-inline cortex-m0 -DCONFIG_EMB_TRACE_INLINE=1 -DCONFIG_EMB_LOG_INLINE=1
variant all m23 cortex-m23
variant some m33 cortex-m33 -DCONFIG_EMB_CM_BASEPRI=0x20
# Trace only, at its smallest (docs/benchmarks.md, "Flash per feature set"): each option
# leaves its code out of the linked image. The application's event is compiled in.
variant all m3-trace-minimal cortex-m3 -DCONFIG_EMB_TRACE_CLASSES=0xFFFFFFFFu -DCONFIG_EMB_MONITOR=0 \
    -DCONFIG_EMB_STATS=0 -DCONFIG_EMB_TRACE_STREAMING=0 -DCONFIG_EMB_TRACE_WINDOW=0 -DCONFIG_EMB_CM_CLOCK=1 \
    -DCONFIG_EMB_DESCRIPTOR=0 -DCONFIG_EMB_CRASH=0 -DCONFIG_EMB_LOG=0 -DCONFIG_EMB_CM_CMSIS_HANDLERS=0 \
    -DCONFIG_EMB_TRACE_COUNT_OVERWRITTEN=0 -DCONFIG_EMB_CM_STACK_PAINT=0
min_syms=$(arm-none-eabi-nm "$work/m3-trace-minimal/fw.elf")
min_code=$(arm-none-eabi-objdump -d "$work/m3-trace-minimal/fw.elf")
grep -q " T emb_trace_emit_slow_work_start$" <<< "$min_syms"
ok $? "m3-trace-minimal: the application's event is in the image"
! grep -q " emb_trace_event_words$" <<< "$min_syms"
ok $? "m3-trace-minimal: CONFIG_EMB_TRACE_COUNT_OVERWRITTEN=0 links no event size table"
! grep -q " emb_cm_fault_entry$" <<< "$min_syms"
ok $? "m3-trace-minimal: CONFIG_EMB_CM_CMSIS_HANDLERS=0 without the crash record links no fault path"
! grep -q " T SysTick_Handler$" <<< "$min_syms"
ok $? "m3-trace-minimal: the DWT-only clock (CONFIG_EMB_CM_CLOCK=1) defines no SysTick_Handler"
! grep -q " emb_cm_port_name$" <<< "$min_syms"
ok $? "m3-trace-minimal: without descriptor, log and crash record the port's name is not written at start"
# The stack paint word (EMB_STACK_PAINT, 0xE5, in every byte) is a constant of the painting loop.
rc=1
default_code=$(arm-none-eabi-objdump -d "$work/m3/fw.elf")
if ! grep -qi "0xe5e5e5e5" <<< "$min_code" && grep -qi "0xe5e5e5e5" <<< "$default_code"; then rc=0; fi
ok $rc "CONFIG_EMB_CM_STACK_PAINT=0 leaves out the stack painting the default build has"
# ARMv6-M without LDREX/STREX: the port refuses LDREX/STREX atomics.
dir=$work/m0-ldrex
mkdir -p "$dir"
if $cc -mcpu=cortex-m0 -mthumb -std=c11 -DCONFIG_EMB_CM_ATOMICS_IRQ=0 -I"$src/include" -I"$port/include" -I"$gen" \
    -c "$port/cortex_m.c" -o "$dir/x.o" 2> "$dir/errors.txt"; then rc=1; else
    grep -q "ARMv6-M has no LDREX/STREX" "$dir/errors.txt"; rc=$?; fi
ok $rc "ARMv6-M with LDREX/STREX atomics is refused with a message"
# ARMv6-M: the atomics the library's slow paths need are the port's, not missing.
arm-none-eabi-nm "$work/m0/fw.elf" | grep -q " __atomic_compare_exchange_4$"
ok $? "m0: the port provides __atomic_compare_exchange_4 (interrupt masking)"
# Compiled out: the example's main.c, its call sites compiled out against deleted.
ex=$src/examples/qemu-mps2
$cc -mcpu=cortex-m3 "${flags[@]}" -I"$ex" -c "$ex/driver.c" -o "$work/driver.o"
libs="$(ls "$work"/m3/*.o | grep -v '/app.o$' | tr '\n' ' ') $work/driver.o ${link[*]}"
bash "$src/tests/integration/compiled_out.sh" --all-sections --sites 'EMB_TRACE_\w+|EMB_LOG_(?:ERR|WRN|INF|DBG)' \
    --define -DCONFIG_EMB_TRACE_CLASSES=0u --define -DCONFIG_EMB_LOG=0 \
    $cc "$ex/main.c" "$libs" -- -mcpu=cortex-m3 "${flags[@]}" -I"$ex" > "$work/compiled_out.txt" 2>&1
ok $? "the MPS2 example's call sites compiled out: $(grep -E "call sites|identical|FAIL" "$work/compiled_out.txt" | tr '\n' ' ')"
tap_summary
