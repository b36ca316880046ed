#!/usr/bin/env bash
# `emb capture --gdb --no-halt` against the GDB server this machine has: QEMU's stub. It
# serves memory only while the guest is stopped and stops it on any byte that arrives
# while it runs (it then answers with a stop reply, T02, in place of the read). So the
# mode that never interrupts finds out from QEMU's own reply that the first read stopped
# the target, says so, and halts at each poll instead (the fallback); the capture is whole.
# The options that cannot go with it are refused. Servers that do read while the core
# runs (OpenOCD on Cortex-M) are described in docs/live.md; none runs here, for want of a
# probe.
#
# usage: gdb_no_halt.sh QEMU FW EMB WORKDIR
set -uo pipefail
qemu=$1 fw=$2 emb=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
fails=0
say() { echo "$1"; [ "${1#not ok}" = "$1" ] || fails=$((fails + 1)); }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$qemu" -M mps2-an385 -nographic -monitor none -semihosting-config enable=on,target=native \
    -gdb "tcp:127.0.0.1:$port" -kernel "$fw" > "$work/qemu.out" 2>&1 &
qpid=$!
trap 'kill $qpid 2> /dev/null; wait $qpid 2> /dev/null' EXIT
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2> /dev/null && break; sleep 0.05; done

"$emb" capture --gdb "127.0.0.1:$port" --no-halt --elf "$fw" --duration 1 -o "$work/run.emb" \
    > "$work/out.txt" 2> "$work/err.txt"
rc=$?
[ $rc = 0 ] && say "ok - emb capture --gdb --no-halt on QEMU's stub: exit 0" ||
    { say "not ok - emb capture --gdb --no-halt: exit $rc"; cat "$work/err.txt"; }
grep -q -- "--no-halt: the server stopped the target to serve the first read" "$work/err.txt" &&
    say "ok - it says QEMU's stub stopped the target to serve the read" ||
    { say "not ok - it says the server stopped the target"; cat "$work/err.txt"; }
holds=$(sed -n 's/.*held the target \([0-9]*\) times.*/\1/p' "$work/err.txt")
[ "${holds:-0}" -gt 2 ] && say "ok - and fell back to halting at each poll ($holds holds)" ||
    say "not ok - fell back to halting at each poll (${holds:-no} holds)"
events=$(sed -n 's/.*label [^,]*, \([0-9]*\) events.*/\1/p' "$work/out.txt")
[ "${events:-0}" -gt 1000 ] && say "ok - the capture is sealed with the run's events ($events)" ||
    { say "not ok - the capture's events (${events:-none})"; cat "$work/out.txt"; }

"$emb" capture --pid 1 --no-halt -o "$work/x.emb" > /dev/null 2> "$work/err2.txt"
rc=$?
[ $rc = 2 ] && grep -q -- "--no-halt is for --gdb" "$work/err2.txt" &&
    say "ok - --no-halt with another source: a usage error" ||
    { say "not ok - --no-halt with --pid (exit $rc)"; cat "$work/err2.txt"; }
"$emb" capture --gdb "127.0.0.1:$port" --no-halt --via memchan --elf "$fw" --duration 1 \
    -o "$work/y.emb" > /dev/null 2> "$work/err3.txt"
rc=$?
[ $rc = 2 ] && grep -q "reads the rings through the descriptor" "$work/err3.txt" &&
    say "ok - --no-halt through the memory channel: refused, it reads the descriptor" ||
    { say "not ok - --no-halt --via memchan (exit $rc)"; cat "$work/err3.txt"; }
[ $fails = 0 ]
