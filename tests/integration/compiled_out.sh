#!/usr/bin/env bash
# Compiled-out call sites leave the image unchanged.
#
# Builds SOURCE twice with the same compiler and flags: once as written with the call
# sites compiled out (by the DEFINE flags), and once with every such call site deleted
# from the text (each replaced by `((void)0)`, keeping line numbers). The two objects must
# have identical .text disassembly, and the two linked images identical .text size (with
# --all-sections: every code section's disassembly and every section's size): the
# instrumentation costs nothing
# when compiled out, by measurement rather than by the word "inline".
#
# usage: compiled_out.sh [--sites PERL_RE] [--define FLAG]... [--all-sections]
#                        CC SOURCE LINK_LIBS -- CFLAGS...
#   --sites   the call sites to delete: a Perl pattern for the macro name, which may look
#             ahead at the arguments; default every EMB_TRACE_ macro
#   --define  how the build compiles them out; default -DCONFIG_EMB_TRACE_CLASSES=0u
set -euo pipefail
sites='EMB_TRACE_\w+'
defines=()
all_sections=0
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
  case $1 in
    --sites) sites=$2; shift 2 ;;
    --define) defines+=("$2"); shift 2 ;;
    --all-sections) all_sections=1; shift ;;
    *) echo "compiled_out.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#defines[@]} -gt 0 ] || defines=(-DCONFIG_EMB_TRACE_CLASSES=0u)
cc=$1 source=$2 libs=$3
shift 3
# binutils of the compiler's target: arm-none-eabi-gcc goes with arm-none-eabi-objdump.
tools=
case $(basename "$cc") in *-gcc) tools=${cc%gcc} ;; esac
objdump=${tools}objdump size=${tools}size
[ "$1" = "--" ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Balanced-parenthesis match of each call site; newlines inside a call are kept.
export EMB_SITES="$sites"
strip='s/\b(?:$ENV{EMB_SITES})\s*(\((?:[^()]++|(?1))*\))/"((void)0)" . ("\n" x (($& =~ tr{\n}{})))/ge'
count='my $n = () = /\b(?:$ENV{EMB_SITES})\s*\(/g; print $n'
# Both copies keep the source's file name: it is in the log's metadata (__FILE_NAME__).
name=$(basename "$source")
mkdir "$work/instrumented" "$work/stripped"
perl -0pe "$strip" "$source" > "$work/stripped/$name"
cp "$source" "$work/instrumented/$name"
sites_n=$(perl -0ne "$count" "$source")
left=$(perl -0ne "$count" "$work/stripped/$name")
[ "$sites_n" -gt 0 ] || { echo "no call sites in $source" >&2; exit 1; }
[ "$left" -eq 0 ] || { echo "stripping left $left call sites" >&2; exit 1; }
[ "$(wc -l < "$source")" -eq "$(wc -l < "$work/stripped/$name")" ] || { echo "line count changed" >&2; exit 1; }

for v in instrumented stripped; do
  # Deleting call sites leaves variables that only fed them unused: warnings, not code.
  (cd "$work/$v" && "$cc" "$@" -Wno-error -w -g0 "${defines[@]}" -c "$name" -o "$work/$v.o")
  if [ "$all_sections" -eq 1 ]; then
    "$objdump" -d --no-show-raw-insn "$work/$v.o" | tail -n +4 > "$work/$v.dis" # every code section
  else
    "$objdump" -d --no-show-raw-insn -j .text "$work/$v.o" | tail -n +4 > "$work/$v.dis"
  fi
  "$cc" "$work/$v.o" $libs -o "$work/$v.elf"
  if [ "$all_sections" -eq 1 ]; then
    "$size" -A "$work/$v.elf" | awk 'NR > 2 && NF == 3 { print $1, $2 }' > "$work/$v.size"
  else
    "$size" -A "$work/$v.elf" | awk '$1 == ".text" { print $2 }' > "$work/$v.size"
  fi
done

echo "call sites compiled out: $sites_n"
if [ "$all_sections" -eq 1 ]; then
  echo "sections of the image: $(tr '\n' ' ' < "$work/instrumented.size")"
else
  echo ".text of the image: instrumented $(cat "$work/instrumented.size"), stripped $(cat "$work/stripped.size")"
fi
if ! cmp -s "$work/instrumented.dis" "$work/stripped.dis"; then
  echo "FAIL: the disassembly differs:" >&2
  diff "$work/instrumented.dis" "$work/stripped.dis" | head -40 >&2
  exit 1
fi
if ! cmp -s "$work/instrumented.size" "$work/stripped.size"; then
  echo "FAIL: section sizes differ:" >&2
  diff "$work/instrumented.size" "$work/stripped.size" >&2
  exit 1
fi
if [ "$all_sections" -eq 1 ]; then
  echo "identical disassembly ($(wc -l < "$work/instrumented.dis") lines) and section sizes"
else
  echo "identical .text disassembly ($(wc -l < "$work/instrumented.dis") lines) and size"
fi
