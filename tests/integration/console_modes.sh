#!/usr/bin/env bash
# The console demo in streaming, snapshot and window modes: each run must end cleanly and
# its trace and log decode without an error. usage: console_modes.sh CONSOLE EMB WORKDIR
set -euo pipefail
console=$1 emb=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail=0
run() {
  local name=$1
  shift
  if ! "$console" "$@" -o "$work/$name.embt" > "$work/$name.out" 2>&1; then
    echo "not ok - $name: the console failed: $(tail -3 "$work/$name.out")"
    fail=1
    return
  fi
  if "$emb" trace --summary "$work/$name.embt" > "$work/$name.summary" 2>&1; then
    echo "ok - $name: $(sed -n 2p "$work/$name.summary")"
  else
    echo "not ok - $name: emb trace: $(tail -3 "$work/$name.summary")"
    fail=1
  fi
  if "$emb" log --elf "$console" "$work/$name.embl" > "$work/$name.log" 2>&1; then
    echo "ok - $name: log decodes ($(wc -l < "$work/$name.log") lines)"
  else
    echo "not ok - $name: emb log: $(tail -3 "$work/$name.log")"
    fail=1
  fi
}
run streaming --frames 150
run snapshot --mode snapshot --frames 150
run window --mode window --arm-frame 50 --frames 150
exit $fail
