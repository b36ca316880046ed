#!/usr/bin/env bash
# `emb log` prints a 32-bit target's %ld, %lx, %zu, %td and PRIx32 as the target's printf
# does: fw.c logs a table of values and prints the same calls with newlib's snprintf;
# under QEMU the newlib text arrives on UART0 and the log stream on UART1. Every decoded
# record's text must equal newlib's line for the same call, in order.
#
# The id width (SPEC-015 §2.3): ID is "link N" when the ELF's note says "chosen at link
# time" (0) and the linker fragment's emb_log_id_bytes is N, or "fixed N" for a note of N.
#
# usage: log_widths.sh QEMU MACHINE FW EMB WORKDIR ID
set -uo pipefail
qemu=$1 machine=$2 fw=$3 emb=$4 work=$5 id=$6
rm -rf "$work"
mkdir -p "$work"
arm-none-eabi-objcopy --dump-section .note.emb.log="$work/note.bin" "$fw" "$work/copy.elf"
note=$(od -An -tu1 -j18 -N1 "$work/note.bin" | tr -d ' ')
symbol=$(arm-none-eabi-nm "$fw" | awk '$3 == "emb_log_id_bytes" { print $1 + 0 }')
region=$(arm-none-eabi-readelf -SW "$fw" | sed -n 's/^.*\] emb_log  *[A-Z]* *[0-9a-f]* [0-9a-f]* \([0-9a-f]*\) .*$/\1/p')
region=$((16#$region))
case $id in
  "link "*) want_note=0 want_symbol=${id#link } ;;
  "fixed "*) want_note=${id#fixed } want_symbol=$symbol ;;
esac
if [ "$note" = "$want_note" ] && [ "$symbol" = "$want_symbol" ]; then
    echo "ok - id width: note $note, emb_log_id_bytes $symbol, region $region bytes ($id)"
else
    echo "not ok - id width: note $note, emb_log_id_bytes $symbol, region $region bytes; expected $id"
    exit 1
fi
timeout 60 "$qemu" -M "$machine" -nographic -monitor none -semihosting-config enable=on,target=native \
    -serial "file:$work/newlib.txt" -serial "file:$work/log.embl" -kernel "$fw" > "$work/qemu.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "not ok - the firmware ran (QEMU exit $rc)"; cat "$work/qemu.out"; exit 1; }
"$emb" log --elf "$fw" --json "$work/log.embl" > "$work/decoded.ndjson" 2> "$work/decoded.err"
rc=$?
[ $rc -eq 0 ] || { echo "not ok - emb log exit $rc"; cat "$work/decoded.err"; exit 1; }
python3 - "$work/newlib.txt" "$work/decoded.ndjson" <<'PY'
import json, sys
want = open(sys.argv[1], encoding="utf-8").read().splitlines()
got = [json.loads(l)["text"] for l in open(sys.argv[2], encoding="utf-8")
       if json.loads(l)["type"] == "log"]
bad = 0
if len(got) != len(want) or len(want) < 20:
    print(f"not ok - {len(got)} records decoded, {len(want)} lines from newlib")
    bad += 1
for i, (g, w) in enumerate(zip(got, want)):
    if g != w:
        print(f"not ok - line {i + 1}: newlib '{w}', emb log '{g}'")
        bad += 1
    else:
        print(f"ok - {w}")
print(f"{len(want) - bad} passed, {bad} failed")
sys.exit(1 if bad else 0)
PY
