#!/usr/bin/env bash
# Every conversion of the printf subset: `emb log` prints what printf prints for the same
# call (log_printf.c, log_printf_check.py); and the text backend does too.
# usage: log_printf.sh EMB LOG_PRINTF LOG_PRINTF_TEXT WORKDIR
set -euo pipefail
emb=$1 prog=$2 prog_text=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"

"$prog" "$work/conv.embl" "$work/expected.txt"
"$emb" log --elf "$prog" --json "$work/conv.embl" > "$work/decoded.ndjson"
"$emb" log --elf "$prog" --color=never "$work/conv.embl" > "$work/decoded.txt"
python3 "$here/log_printf_check.py" "$work/expected.txt" "$work/decoded.ndjson" 32 64

"$prog_text" "$work/conv.txt" "$work/expected_text.txt"
python3 "$here/log_printf_check.py" --text "$work/expected_text.txt" "$work/conv.txt"
