#!/usr/bin/env bash
# Crash records, monitors, statistics and the descriptor compile out with their options.
#
# Builds the library's sources for the native port (and for Cortex-M when
# arm-none-eabi-gcc is there) twice with -Wall -Wextra -Werror: with the defaults, and
# with CONFIG_EMB_CRASH, CONFIG_EMB_MONITOR, CONFIG_EMB_STATS, CONFIG_EMB_DESCRIPTOR and
# CONFIG_EMB_FAULT_RECORD_RING all 0. The defaults must define the features' symbols; the
# compiled-out build must define none of them, and its hooks must be smaller.
# usage: compiled_out_features.sh CC SOURCE_DIR GEN_INCLUDE_DIR
set -u
cc=$1 src=$2 gen=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../support/tap_check.sh"
off="-DCONFIG_EMB_CRASH=0 -DCONFIG_EMB_MONITOR=0 -DCONFIG_EMB_STATS=0 -DCONFIG_EMB_DESCRIPTOR=0 -DCONFIG_EMB_FAULT_RECORD_RING=0"
features="emb_crash_region emb_crash_retained_init emb_crash_write emb_crash_record_get emb_monitor_blocks emb_monitor_exceeded emb_stats_cpu emb_debug_descriptor"

build() { # name cc flags port-sources...
    local name=$1 compiler=$2 flags=$3
    shift 3
    mkdir -p "$work/$name"
    for f in "$src"/src/*.c "$src"/src/wire/*.c "$@"; do
        $compiler $flags -std=c11 -O2 -Wall -Wextra -Werror -I"$src/include" -I"$gen" \
            -c "$f" -o "$work/$name/$(basename "$f" .c).o" 2>"$work/$name.err" || { cat "$work/$name.err"; return 1; }
    done
}
defined() { # name symbol
    nm --defined-only "$work/$1"/*.o 2>/dev/null | awk '{print $3}' | grep -qx "$2"
}
text_of() { # name object
    size -A "$work/$1/$2.o" | awk '$1 == ".text" { s += $2 } $1 ~ /^\.text\./ { s += $2 } END { print s + 0 }'
}

check_port() { # label cc flags port-include port-sources...
    local label=$1 compiler=$2 flags=$3 inc=$4
    shift 4
    build "$label-on" "$compiler" "$flags -I$inc -DCONFIG_EMB_FAULT_RECORD_RING=8" "$@"
    ok $? "$label: the library builds with every feature"
    build "$label-off" "$compiler" "$flags -I$inc $off" "$@"
    ok $? "$label: the library builds with crash, monitors, statistics and descriptor compiled out"
    local missing="" left=""
    for s in $features; do
        defined "$label-on" "$s" || missing="$missing $s"
        defined "$label-off" "$s" && left="$left $s"
    done
    [ -z "$missing" ]; ok $? "$label: defaults define every feature symbol${missing:+ (missing:$missing)}"
    [ -z "$left" ]; ok $? "$label: compiled out, none is left${left:+ (left:$left)}"
    local on_hooks off_hooks
    on_hooks=$(text_of "$label-on" hooks) off_hooks=$(text_of "$label-off" hooks)
    [ "$off_hooks" -lt "$on_hooks" ]; ok $? "$label: hooks.o .text $on_hooks -> $off_hooks bytes"
}

check_port native "$cc" "" "$src/ports/native/include" \
    "$src"/ports/native/native.c "$src"/ports/native/wrappers.c "$src"/ports/native/fault.c
if command -v arm-none-eabi-gcc >/dev/null; then
    check_port cortex-m3 arm-none-eabi-gcc "-mcpu=cortex-m3 -mthumb -ffreestanding" \
        "$src/ports/cortex-m/include" "$src"/ports/cortex-m/cortex_m.c "$src"/ports/cortex-m/fault.c
fi
tap_summary
