#!/usr/bin/env bash
# Compiled-out call sites leave the image unchanged.
#
# Builds SOURCE twice with the same compiler and flags: once as written with every trace
# class compiled out (CONFIG_EMB_TRACE_CLASSES=0), and once with every EMB_TRACE_* call
# site deleted from the text (each replaced by `((void)0)`, keeping line numbers). The two
# objects must have identical .text disassembly, and the two linked images identical .text
# size: the instrumentation costs nothing when compiled out, by measurement rather than by
# the word "inline".
#
# usage: compiled_out.sh CC SOURCE LINK_LIBS -- CFLAGS...
set -euo pipefail
cc=$1 source=$2 libs=$3
shift 3
[ "$1" = "--" ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Balanced-parenthesis match of each call site; newlines inside a call are kept.
perl -0pe 's/\bEMB_TRACE_\w+\s*(\((?:[^()]++|(?1))*\))/"((void)0)" . ("\n" x (($& =~ tr{\n}{})))/ge' \
  "$source" > "$work/stripped.c"
cp "$source" "$work/instrumented.c"
sites=$(grep -o 'EMB_TRACE_[a-z_0-9]*(' "$source" | wc -l)
left=$( (grep -o 'EMB_TRACE_[a-z_0-9]*(' "$work/stripped.c" || true) | wc -l)
[ "$sites" -gt 0 ] || { echo "no call sites in $source" >&2; exit 1; }
[ "$left" -eq 0 ] || { echo "stripping left $left call sites" >&2; exit 1; }
[ "$(wc -l < "$source")" -eq "$(wc -l < "$work/stripped.c")" ] || { echo "line count changed" >&2; exit 1; }

for v in instrumented stripped; do
  # Deleting call sites leaves variables that only fed them unused: warnings, not code.
  "$cc" "$@" -Wno-error -w -g0 -DCONFIG_EMB_TRACE_CLASSES=0u -c "$work/$v.c" -o "$work/$v.o"
  objdump -d --no-show-raw-insn -j .text "$work/$v.o" | tail -n +4 > "$work/$v.dis"
  "$cc" "$work/$v.o" $libs -o "$work/$v.elf"
  size -A "$work/$v.elf" | awk '$1 == ".text" { print $2 }' > "$work/$v.size"
done

echo "call sites compiled out: $sites"
echo ".text of the image: instrumented $(cat "$work/instrumented.size"), stripped $(cat "$work/stripped.size")"
if ! cmp -s "$work/instrumented.dis" "$work/stripped.dis"; then
  echo "FAIL: the disassembly differs:" >&2
  diff "$work/instrumented.dis" "$work/stripped.dis" | head -40 >&2
  exit 1
fi
if ! cmp -s "$work/instrumented.size" "$work/stripped.size"; then
  echo "FAIL: .text sizes differ" >&2
  exit 1
fi
echo "identical .text disassembly ($(wc -l < "$work/instrumented.dis") lines) and size"
