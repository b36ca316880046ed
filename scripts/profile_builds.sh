#!/usr/bin/env bash
# Every profile builds from its name alone (-DEMB_PROFILE=NAME) for Cortex-M0 and RV32IMAC,
# and its descriptor says which it is (the profile's name is in the library's descriptor).
# Usage: scripts/profile_builds.sh BUILD_DIR [JOBS]  (part of make check-arm)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
jobs=${2:-2}
for target in cortex-m0 rv32imac; do
  if [ "$target" = rv32imac ]; then
    port=(-DEMB_PORT=riscv -DCMAKE_TOOLCHAIN_FILE="$root/cmake/riscv32-unknown-elf.cmake")
  else
    port=(-DEMB_PORT=cortex-m -DCMAKE_TOOLCHAIN_FILE="$root/cmake/arm-none-eabi.cmake" -DEMB_ARM_CPU=$target)
  fi
  for profile in tiny base isolated; do
    dir=$build/profile-$target-$profile
    cmake -S "$root" -B "$dir" -DEMB_TARGET_ONLY=ON "${port[@]}" -DCMAKE_BUILD_TYPE=MinSizeRel \
      -DEMB_GEN_EXECUTABLE="$build/bin/embgen" -DEMB_PROFILE=$profile >/dev/null
    cmake --build "$dir" -j"$jobs" >/dev/null
    # The descriptor's profile string, and no other profile's.
    names=$(strings "$dir/lib/libemb.a" | grep -xE 'tiny|base|isolated|native' | sort -u | tr '\n' ' ')
    if [ "$names" != "$profile " ]; then
      echo "profile_builds: $target $profile: the library names profile(s) '$names'" >&2
      exit 1
    fi
    echo "profile_builds: $target $profile: built, its descriptor says \"$profile\""
  done
done
