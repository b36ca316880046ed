#!/bin/sh
# Seeds for the fuzz targets, made by the real producers (tests/CMakeLists.txt runs this as
# the make_fuzz_seeds fixture): tests/fuzz/fuzz_seeds.c for the memory channel, the shell,
# the TCP server's input, the events client and the trace assembler; the MPS2 firmware with
# its debug sections stripped for the ELF readers; gcore's core of a running process for
# the core-file reader; the golden crash records with fuzz_crash_validate's flags byte;
# small ELFs with DWARF of both classes and byte orders, compiled here.
#
#   make_seeds.sh OUT SOURCE_DIR FUZZ_SEEDS FUZZ_SEEDS_RTT TRANSPORT_TARGET OBJCOPY ELF...
set -e
out=$1 src=$2 seeds=$3 seeds_rtt=$4 transport=$5 objcopy=$6
shift 6
rm -rf "$out"
mkdir -p "$out/elf" "$out/core" "$out/crash_validate"
"$transport" --log file "$out/frames.bin" 40 >/dev/null
"$seeds" "$out" "$src/tests/fuzz/corpus/events_sink/scenario" "$src/examples/services/ops.txt" "$out/frames.bin"
"$seeds_rtt" "$out" "$src/tests/fuzz/corpus/events_sink/scenario" "$src/examples/services/ops.txt"
rm -f "$out/frames.bin"
for elf in "$@"; do
    [ -f "$elf" ] && "$objcopy" --strip-debug "$elf" "$out/elf/$(basename "$elf")"
done
# Small ELFs with their DWARF, of both classes and byte orders: src/wire/crc32.c compiled by the
# host compiler ($EMB_SEED_CC: an object and a linked position-independent executable)
# and by arm-none-eabi-gcc ($EMB_SEED_ARM_CC, when there is one: little and big endian).
inc="-I$src/include -I$src/ports/native/include"
if [ -x "${EMB_SEED_CC:-}" ]; then
    $EMB_SEED_CC -g -O1 $inc -c "$src/src/wire/crc32.c" -o "$out/elf/crc32-host.o"
    printf '#include <emb/crc.h>\nint main(void) { return (int)emb_crc32(0u, "", 0u); }\n' >"$out/main.c"
    $EMB_SEED_CC -g -O1 -pie -fPIE -Wl,--build-id $inc "$out/main.c" "$src/src/wire/crc32.c" -o "$out/elf/crc32-host"
    rm -f "$out/main.c"
fi
if [ -x "${EMB_SEED_ARM_CC:-}" ]; then
    arm="-I$src/include -I$src/ports/cortex-m/include -g -O1 -c $src/src/wire/crc32.c"
    $EMB_SEED_ARM_CC -mcpu=cortex-m3 -mthumb $arm -o "$out/elf/crc32-m3.o"
    $EMB_SEED_ARM_CC -mcpu=cortex-r4 -mbig-endian $arm -o "$out/elf/crc32-armeb.o"
fi
# fuzz_crash_validate reads [flags][region]: the golden records as they are (flags 0).
for rec in "$src"/tests/support/golden/crash_*.bin; do
    { printf '\000'; cat "$rec"; } >"$out/crash_validate/$(basename "$rec")"
done
# A core of a live process (gdb's gcore), when ptrace is allowed here.
sleep 30 &
pid=$!
gcore -o "$out/core/sleep" "$pid" >/dev/null 2>&1 || echo "make_seeds.sh: no core seed (gcore failed)"
kill "$pid" 2>/dev/null || true
exit 0
