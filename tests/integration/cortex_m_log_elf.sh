#!/usr/bin/env bash
# The Cortex-M image keeps its format strings out of flash: a small firmware
# (cm_log/fw.c) is built with arm-none-eabi-gcc and linked with the metadata fragment
# (ports/cortex-m/emb_log.ld). Checked on the ELF: the emb_log section and the log note
# hold the strings in the file, belong to no PT_LOAD segment (program headers, readelf),
# and no format string is in the bytes a loader would write to flash; then `emb log`
# decodes a record forged for one of its call sites, so the decoder reads a 32-bit ARM
# ELF's metadata.
#
# usage: cortex_m_log_elf.sh SOURCE_DIR EMB WORKDIR CPU GEN_INCLUDE_DIR
set -euo pipefail
src=$1 emb=$2 work=$3 cpu=$4 gen=$5
cc=arm-none-eabi-gcc
command -v $cc >/dev/null || { echo "arm-none-eabi-gcc not found (scripts/install-deps.sh)"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

flags=(-mcpu="$cpu" -mthumb -std=c11 -Os -ffreestanding -ffunction-sections -fdata-sections
       -Wall -Wextra -Werror -I"$src/include" -I"$src/ports/cortex-m/include" -I"$gen")
objs=()
for f in src/log.c src/wire/log_frames.c src/log_text.c src/printf.c src/wire/frame.c src/status.c src/trace.c \
         src/descriptor.c src/wire/ring_read.c \
         ports/cortex-m/cortex_m.c tests/integration/cm_log/fw.c; do
  o="$work/$(basename "$f" .c).o"
  $cc "${flags[@]}" -c "$src/$f" -o "$o"
  objs+=("$o")
done
$cc "${flags[@]}" -nostartfiles -nostdlib -Wl,--gc-sections -Wl,--build-id \
    -L"$src/ports/cortex-m" -T "$src/tests/integration/cm_log/fw.ld" "${objs[@]}" -lc -lgcc \
    -o "$work/fw.elf"
echo "built fw.elf for $cpu"

readelf -lSW "$work/fw.elf" > "$work/headers.txt"
# The loadable segments: "offset vaddr filesz memsz", in decimal.
segments=()
while read -r type off vaddr _ filesz memsz _; do
  [ "$type" = LOAD ] && segments+=("$((off)) $((vaddr)) $((filesz)) $((memsz))")
done < <(grep '^ *LOAD ' "$work/headers.txt")
[ ${#segments[@]} -gt 0 ] || fail "no loadable segment"
for s in emb_log .note.emb.log; do
  line=$(grep -E "\] $s +" "$work/headers.txt" | sed 's/^.*\] //')
  [ -n "$line" ] || fail "no section $s"
  read -r _ type addr off size _ flags _ <<< "$line"
  [ "$type" = PROGBITS ] || fail "$s is $type: its contents are not in the file"
  case "$flags" in *A*) fail "$s is allocated (flags $flags)";; esac
  a=$((16#$addr)) o=$((16#$off)) z=$((16#$size))
  [ "$z" -gt 0 ] || fail "$s is empty"
  for seg in "${segments[@]}"; do
    read -r poff pvaddr pfilesz pmemsz <<< "$seg"
    if (( a < pvaddr + pmemsz && a + z > pvaddr )) || (( o < poff + pfilesz && o + z > poff )); then
      fail "$s (address $addr, offset $off) lies in a loadable segment"
    fi
  done
  echo "$s: $z bytes at 0x$addr, in the file, in none of the ${#segments[@]} loadable segments"
done

# The bytes a loader writes: every PT_LOAD segment's file image.
: > "$work/loaded.bin"
for seg in "${segments[@]}"; do
  read -r poff _ pfilesz _ <<< "$seg"
  [ "$pfilesz" -gt 0 ] && dd if="$work/fw.elf" bs=1 skip="$poff" count="$pfilesz" status=none >> "$work/loaded.bin"
done
[ -s "$work/loaded.bin" ] || fail "no loadable bytes"
for s in "sensor %u failed: %d" "temperature %d.%u C on %s" "rx frame" "fw.c"; do
  grep -qaF "$s" "$work/fw.elf" || fail "'$s' is not in the ELF at all"
  ! grep -qaF "$s" "$work/loaded.bin" || fail "'$s' is in a loadable segment"
done
echo "format strings: in the ELF, in none of its $(stat -c %s "$work/loaded.bin") loadable bytes"

# Decode a record forged for the "sensor %u failed: %d" call site: sync marker, record.
arm-none-eabi-objcopy --dump-section emb_log="$work/emb_log.bin" "$work/fw.elf"
python3 - "$work/emb_log.bin" "$work/forged.raw" <<'PY'
import struct, sys
region = open(sys.argv[1], "rb").read()
off, site = 0, None
while off + 4 <= len(region):
    if region[off] == 0:
        off += 4
        continue
    kind, level, nargs, mlen, flen, filelen, line = struct.unpack_from("<BBBBHHI", region, off)
    body = 12 + nargs + 1 + mlen + flen + filelen
    fmt = region[off + 12 + nargs + 1 + mlen:off + 12 + nargs + 1 + mlen + flen - 1]
    if fmt == b"sensor %u failed: %d":
        site = off
    off += (body + 3) & ~3
assert site is not None, "call site not found"
ts = 0x1234567890
sync = struct.pack("<HI", 0, ts & 0xFFFFFFFF) + bytes([0xE5]) + b"LSYNC" + struct.pack("<HQI", 0, ts, 0)
rec = struct.pack("<HIIi", site + 4, (ts + 1000) & 0xFFFFFFFF, 7, -5)
open(sys.argv[2], "wb").write(sync + rec)
PY
"$emb" log --elf "$work/fw.elf" --raw --clock-hz 25000000 --color=never "$work/forged.raw" > "$work/decoded.txt"
cat "$work/decoded.txt"
grep -q "ERR  sensor  fw.c:[0-9]*  *sensor 7 failed: -5$" "$work/decoded.txt" || fail "emb log did not decode the forged record"
echo "emb log decodes the ARM ELF's call site"
