#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs, and only those missing, then the npm
# packages its tests use (scripts/install-node-deps.sh, pinned by a lock file).
# Idempotent: a machine that has everything returns at once without touching apt or npm.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libelf-dev libdw-dev libyaml-dev          # ELF/DWARF reading, catalogue parsing
  zlib1g-dev                                # CRC-32 of capture files on the host
  babeltrace2 python3-bt2                   # reference CTF 1.8 reader in tests
  gcc-arm-none-eabi libnewlib-arm-none-eabi # Cortex-M builds
  picolibc-arm-none-eabi                    # a target printf with %zu %td: log decoder oracle
  qemu-system-arm gdb-multiarch             # Cortex-M target under emulation
  liblttng-ust-dev lttng-tools              # benchmark peer
  clang llvm                                # libFuzzer, TSan
  gdb jq                                    # fuzz seeds (gcore's core), make fuzz's target list
  valgrind time                             # instruction counts, peak memory in benchmarks
  chromium                                  # renders emb diff's HTML report in a test
  binutils-multiarch
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc # RISC-V multicore target
  protobuf-c-compiler libprotobuf-c-dev     # emb trace --format perfetto-proto (protoc-c)
  protobuf-compiler                         # protoc --decode: the protobuf export's test
  nodejs                                    # Trace Event Format readers in tests (below)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
  else
    SUDO=
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages the tests read our output with, pinned by tests/support/node's lock file.
bash "$(dirname "$0")/install-node-deps.sh"
