#!/usr/bin/env bash
# The ITM writer (ports/cortex-m/itm.c) builds with -Wall -Wextra -Werror for every core
# that has an ITM (ARMv7-M, ARMv7E-M, ARMv8-M Mainline), at -O2 and -Os, with word,
# halfword and byte stores to the stimulus ports; ARMv6-M and ARMv8-M Baseline refuse it
# with a clear #error; CONFIG_EMB_ITM=0 compiles it out there and everywhere (no symbol,
# and a caller still builds against the header's inline stand-ins).
#
# usage: itm_arm_build.sh SOURCE_DIR GEN_INCLUDE_DIR WORKDIR
set -uo pipefail
src=$1 gen=$2 work=$3
cc=arm-none-eabi-gcc
command -v $cc >/dev/null || { echo "arm-none-eabi-gcc not found (scripts/install-deps.sh)"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
. "$(dirname "$0")/../support/tap_check.sh"
flags=(-mthumb -std=c11 -Wall -Wextra -Werror -ffreestanding -ffunction-sections
       -I"$src/include" -I"$src/ports/cortex-m/include" -I"$gen")
itm=$src/ports/cortex-m/itm.c
for cpu in cortex-m3 cortex-m4 cortex-m7 cortex-m33; do
    for opt in -O2 -Os; do
        o=$work/itm-$cpu$opt.o
        $cc -mcpu=$cpu $opt "${flags[@]}" -c "$itm" -o "$o" 2>"$work/err"
        ok $? "$cpu $opt: itm.c builds with -Werror $(head -c 300 "$work/err")"
    done
    o=$work/itm-$cpu-O2.o
    syms=$(arm-none-eabi-nm "$o" 2>/dev/null | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
    [ "$syms" = "emb_itm_log_output emb_itm_port_enabled emb_itm_stats emb_itm_trace_link_init emb_itm_trace_send emb_itm_write " ]
    ok $? "$cpu: the writer's functions are there ($syms)"
    dis=$(arm-none-eabi-objdump -d "$o")
    grep -qE '\sstr(\.w)?\s' <<<"$dis" && grep -qE '\sstrh(\.w)?\s' <<<"$dis" && grep -qE '\sstrb(\.w)?\s' <<<"$dis"
    ok $? "$cpu: word, halfword and byte stores"
done
for cpu in cortex-m0 cortex-m0plus cortex-m23; do
    $cc -mcpu=$cpu -O2 "${flags[@]}" -c "$itm" -o "$work/no.o" 2>"$work/err"
    [ $? -ne 0 ] && grep -q "have no ITM: build with CONFIG_EMB_ITM=0" "$work/err"
    ok $? "$cpu: refused with a clear #error ($(grep -o 'error: .*' "$work/err" | head -c 120))"
    $cc -mcpu=$cpu -O2 -DCONFIG_EMB_ITM=0 "${flags[@]}" -c "$itm" -o "$work/off.o" 2>"$work/err"
    ok $? "$cpu: CONFIG_EMB_ITM=0 builds $(head -c 200 "$work/err")"
    [ -z "$(arm-none-eabi-nm "$work/off.o" | awk '$2 == "T"')" ]
    ok $? "$cpu: CONFIG_EMB_ITM=0 leaves no code"
done
cat >"$work/caller.c" <<'C'
#include <emb/itm.h>
#include <emb/log.h>
int use(void);
int use(void)
{
    struct emb_itm_port_stats st;
    emb_itm_stats(0, &st);
    return emb_itm_log_output() == NULL && emb_itm_write(1, "x", 1) != EMB_OK && st.writes == 0;
}
C
for cpu in cortex-m0 cortex-m3; do
    $cc -mcpu=$cpu -O2 -DCONFIG_EMB_ITM=0 "${flags[@]}" -c "$work/caller.c" -o "$work/caller.o" 2>"$work/err"
    ok $? "$cpu: a caller builds with CONFIG_EMB_ITM=0 $(head -c 200 "$work/err")"
done
tap_summary
