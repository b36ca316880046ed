#!/usr/bin/env bash
# Inputs that used to be accepted silently though wrong: a core whose debug descriptor has
# a flipped byte, though the ELF holds the same read-only descriptor (it printed zeros and
# lost names, exit 0); a truncated ELF or one with a bad
# section header given to `emb crash --elf` (it printed "(no symbol)" and exit 0), and a
# CRC-valid crash record that announces 65,535 flight packets where a few decode (a
# message, but exit 0). Now: the broken ELF is refused (exit 2, the file and what is
# wrong); the contradicting record is a finding (exit 1, the byte of the count); the
# damaged descriptor is refused (exit 2, the descriptor byte, both values).
# usage: test_silent_wrong.sh EMB CONSOLE WORKDIR
set -u
emb=$1 console=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp" && cd "$tmp" || exit 2
. "$(dirname "$0")/../support/tap_check.sh"
# expect STATUS PATTERN WHAT CMD...
expect() {
    local want=$1 pattern=$2 what=$3
    shift 3
    "$@" >out.txt 2>err.txt
    local rc=$?
    [ "$rc" -eq "$want" ] && { [ -z "$pattern" ] || grep -q -- "$pattern" err.txt; }
    ok $? "$what: exit $rc (want $want): $(head -c 200 err.txt | tr '\n' ' ')"
}

{ "$console" --frames 100 --retained r.bin --fault-frame 30 -o crashed.embt >/dev/null 2>&1; } 2>/dev/null
"$console" --frames 40 --retained r.bin --crash-out crash.rec -o run.embt >/dev/null 2>&1
ok $? "the console made a crash record"
"$emb" crash --elf "$console" crash.rec >/dev/null 2>&1
ok $? "it renders with the console's ELF (exit 0)"

# Broken ELFs: cut short (the section header table is at the end of a GNU ld output), the
# section header table moved past the end, one section's offset out of the file. The
# layout is the ELF64 header's (System V gABI): e_shoff at byte 40, e_shentsize at 58,
# sh_offset at byte 24 of a section header.
size=$(stat -c %s "$console")
head -c $((size / 2)) "$console" > half.elf
head -c $((size - 64)) "$console" > cut.elf
python3 - "$console" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
shoff = struct.unpack_from("<Q", d, 40)[0]
shentsize = struct.unpack_from("<H", d, 58)[0]
bad = bytearray(d)
struct.pack_into("<Q", bad, 40, len(d) + 4096)
open("shoff.elf", "wb").write(bad)
bad = bytearray(d)
struct.pack_into("<Q", bad, shoff + 3 * shentsize + 24, 1 << 40)
open("section.elf", "wb").write(bad)
PY
expect 2 "half.elf: broken ELF: the section header table" "crash --elf on half an ELF" \
    "$emb" crash --elf half.elf crash.rec
expect 2 "cut.elf: broken ELF" "crash --elf on an ELF 64 bytes short" "$emb" crash --elf cut.elf crash.rec
expect 2 "shoff.elf: broken ELF: the section header table" "crash --elf with e_shoff past the end" \
    "$emb" crash --elf shoff.elf crash.rec
expect 2 "section.elf: broken ELF: section 3 " "crash --elf with a section past the end" \
    "$emb" crash --elf section.elf crash.rec
expect 2 "half.elf: broken ELF" "desc --elf on half an ELF" "$emb" desc --elf half.elf --pid $$

# The flight packet count (u16 at byte 82 of a v1 record, docs/formats/crash.md) set to
# 65535 and the CRC-32 (zlib's, over every byte before the last four) made right again.
python3 - <<'PY'
import struct, zlib
d = bytearray(open("crash.rec", "rb").read())
n = struct.unpack_from("<H", d, 6)[0]
struct.pack_into("<H", d, 82, 65535)
struct.pack_into("<I", d, n - 4, zlib.crc32(bytes(d[:n - 4])))
open("many.rec", "wb").write(d)
PY
expect 1 "many.rec: byte 82: the record announces 65535 flight packets" \
    "a valid record announcing 65535 flight packets" "$emb" crash --elf "$console" many.rec
grep -q "Flight recorder" out.txt; ok $? "  and the record is still shown"

# A live console's core (gdb's gcore, as test_desc_e2e makes one), then the same core with
# one byte of the descriptor flipped: a field, not a pointer, at descriptor byte 600.
if command -v gdb >/dev/null && ! grep -qa -e __asan_init -e __tsan_init "$console"; then
    "$console" --frames 1000000 -o live.embt >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        "$emb" desc --elf "$console" --pid $pid --json >desc.json 2>/dev/null && break
        sleep 0.05
    done
    gdb -batch -p $pid -ex "gcore $tmp/console.core" >/dev/null 2>&1
    kill $pid; wait $pid 2>/dev/null
    expect 0 "" "desc --core of the live console" "$emb" desc --elf "$console" --core console.core
    python3 - <<'PY'
import json, struct
addr = int(json.load(open("desc.json"))["descriptor"]["address"], 16)
core = bytearray(open("console.core", "rb").read())
# The descriptor's bytes are where a PT_LOAD of the core maps its address (ELF64: e_phoff
# at byte 32, e_phnum at 56; a program header's p_type at 0, p_offset at 8, p_vaddr at 16,
# p_filesz at 32).
phoff, phnum = struct.unpack_from("<Q", core, 32)[0], struct.unpack_from("<H", core, 56)[0]
for i in range(phnum):
    t, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", core, phoff + 56 * i)
    if t == 1 and vaddr <= addr < vaddr + filesz:
        core[off + addr - vaddr + 600] ^= 0x40
        break
open("flipped.core", "wb").write(core)
PY
    rm -f console.core
    expect 2 "the debug descriptor at 0x[0-9a-f]* differs from .* first at descriptor byte 600" \
        "desc --core with one descriptor byte flipped" "$emb" desc --elf "$console" --core flipped.core
    rm -f flipped.core
fi

tap_summary
