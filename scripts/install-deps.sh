#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs, and only those missing, then (for
# check) the npm packages its tests use (scripts/install-node-deps.sh, pinned by a lock file).
#
#   install-deps.sh demo    what `make build` and `make demo` need (make demo runs this)
#   install-deps.sh check   that and every test-only tool (make check runs this; the default)
#
# Idempotent: a machine that has everything returns at once without touching apt.
# One package group a line: add yours to the set that needs it.
set -euo pipefail

set_name=${1:-check}

demo_packages=(
  protobuf-c-compiler libprotobuf-c-dev     # emb trace --format perfetto-proto (protoc-c)
  build-essential cmake pkg-config
  libelf-dev libdw-dev libyaml-dev          # ELF/DWARF reading, catalogue parsing
  zlib1g-dev                                # CRC-32 of capture files on the host
  libjansson-dev                            # QMP replies (emb capture --qemu-qmp)
  libsqlite3-dev libpq-dev libmicrohttpd-dev libssl-dev # emb fleet: SQLite, PostgreSQL, HTTP, SHA-256; qtest base64
  libncurses-dev                            # emb top's full-screen view
  python3 help2man                          # the man pages and completion, from emb --help
  babeltrace2                               # the demo shows the trace in babeltrace2
  libbabeltrace2-dev                        # foreign CTF traces read through libbabeltrace2
  gcc-arm-none-eabi libnewlib-arm-none-eabi # Cortex-M builds
  qemu-system-arm gdb-multiarch             # Cortex-M target under emulation
)

check_packages=(
  python3-bt2                               # reference CTF 1.8 reader in tests
  picolibc-arm-none-eabi                    # a target printf with %zu %td: log decoder oracle
  liblttng-ust-dev lttng-tools              # benchmark peer; foreign CTF tests (real sessions)
  python3-barectf                           # foreign CTF tests: a barectf-generated tracer
  clang llvm                                # libFuzzer, TSan
  gdb jq                                    # fuzz seeds (gcore's core), make fuzz's target list
  valgrind time                             # instruction counts, peak memory in benchmarks
  chromium                                  # renders emb diff's HTML report in a test
  binutils-multiarch
  bash-completion man-db dpkg-dev           # completion, man -l and .deb tests (make package)
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc # RISC-V multicore target
  gcc-avr avr-libc binutils-avr simavr libsimavr-dev # the AVR port (tiny) under libsimavr
  protobuf-compiler                         # protoc --decode: the protobuf export's test
  nodejs                                    # Trace Event Format readers in tests (below)
  postgresql                                # emb fleet's tests start a server of their own
  tmux                                      # emb top driven on a terminal in a test
)

case $set_name in
  demo) packages=("${demo_packages[@]}") ;;
  check) packages=("${demo_packages[@]}" "${check_packages[@]}") ;;
  *) echo "usage: install-deps.sh [demo|check]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps ($set_name): installing ${missing[*]}" >&2
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
if [ "$set_name" = check ]; then
  bash "$(dirname "$0")/install-node-deps.sh"
fi
