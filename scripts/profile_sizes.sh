#!/usr/bin/env bash
# Flash and RAM of the target library per profile (SPEC-015 §9) and per supported core:
# each profile built from its name alone (-DEMB_PROFILE=NAME, a target-only cross build at
# -Os), its archive measured with the toolchain's `size -t`: flash = text + data (the
# initial values live in flash), RAM = data + bss. These are the library's totals as
# compiled, every function in; an image linked with --gc-sections keeps only what it calls.
# Prints a Markdown table (docs/profiles.md) and writes BUILD/bench/profiles.json.
# Usage: scripts/profile_sizes.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/profile_sizes.sh BUILD_DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
embgen=$build/bin/embgen
[ -x "$embgen" ] || { echo "profile_sizes: $embgen missing: make build first" >&2; exit 2; }
mkdir -p "$build/bench"
json=$build/bench/profiles.json
echo "[" >"$json"
sep=
echo "| core | profile | flash (text + data) | RAM (data + bss) |"
echo "|---|---|---:|---:|"
for core in cortex-m0 cortex-m4 rv32imac atmega328p; do
  profiles="tiny base isolated"
  if [ "$core" = atmega328p ]; then
    port=(-DEMB_PORT=avr -DCMAKE_TOOLCHAIN_FILE="$root/cmake/avr-gcc.cmake")
    size=avr-size
    profiles=tiny # the 8-bit port is built for the tiny profile only
  elif [ "$core" = rv32imac ]; then
    port=(-DEMB_PORT=riscv -DCMAKE_TOOLCHAIN_FILE="$root/cmake/riscv32-unknown-elf.cmake")
    size=riscv64-unknown-elf-size
  else
    port=(-DEMB_PORT=cortex-m -DCMAKE_TOOLCHAIN_FILE="$root/cmake/arm-none-eabi.cmake" -DEMB_ARM_CPU=$core)
    size=arm-none-eabi-size
  fi
  for profile in $profiles; do
    dir=$build/profiles/$core-$profile
    cmake -S "$root" -B "$dir" -DEMB_TARGET_ONLY=ON "${port[@]}" -DCMAKE_BUILD_TYPE=MinSizeRel \
      -DEMB_GEN_EXECUTABLE="$embgen" -DEMB_PROFILE=$profile >/dev/null
    cmake --build "$dir" -j2 >/dev/null
    read -r text data bss < <($size -t "$dir/lib/libemb.a" | awk '/(TOTALS)/ {print $1, $2, $3}')
    echo "| $core | $profile | $((text + data)) | $((data + bss)) |"
    printf '%s{"core": "%s", "profile": "%s", "text": %d, "data": %d, "bss": %d}\n' \
      "$sep" "$core" "$profile" "$text" "$data" "$bss" >>"$json"
    sep=,
  done
done
echo "]" >>"$json"
