#!/usr/bin/env bash
# Our own decoder held against libbabeltrace2 on our own CTF: the console demo's trace and
# the MPS2 firmware's (QEMU mps2-an385, captured over the GDB protocol as `make demo`
# does), each decoded by our decoder and, after `emb trace -f ctf`, by libbabeltrace2
# through the CTF import; own_ctf_agree.py compares every event, field and time.
# usage: test_ctf_own.sh EMB CONSOLE MPS2_ELF SCRATCH_DIR
set -u
emb=$1 console=$2 fw=$3 tmp=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$tmp" && mkdir -p "$tmp"
. "$here/../../support/tap_check.sh"
agree() { # NAME: $tmp/NAME.embt both ways
    local t=$tmp/$1
    { "$emb" trace -f ctf -o "$t.ctf" "$t.embt" && "$emb" trace -f ndjson -o "$t.ours.ndjson" "$t.embt" &&
        "$emb" trace -f ndjson -o "$t.theirs.ndjson" "$t.ctf"; } 2>>"$tmp/trace.err"
    ok $? "$1: our decoder and libbabeltrace2 both read it"
    local hz
    hz=$("$emb" trace --json --summary "$t.embt" | python3 -c 'import json, sys; print(json.load(sys.stdin)["header"]["clock_hz"])')
    python3 "$here/own_ctf_agree.py" "$t.ours.ndjson" "$t.theirs.ndjson" "$hz" | sed 's/^/# /'
    ok "${PIPESTATUS[0]}" "$1: every event, field and time agrees"
}

"$console" --frames 200 -o "$tmp/console.embt" >/dev/null; ok $? "the console demo recorded its trace"
agree console

if [ -f "$fw" ] && command -v qemu-system-arm >/dev/null; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    qemu-system-arm -M mps2-an385 -nographic -monitor none -semihosting-config enable=on,target=native \
        -gdb "tcp:127.0.0.1:$port" -kernel "$fw" >"$tmp/uart.txt" 2>&1 &
    qemu=$!
    trap 'kill $qemu 2>/dev/null; wait $qemu 2>/dev/null' EXIT
    for _ in $(seq 50); do "$emb" desc --gdb "127.0.0.1:$port" --elf "$fw" >/dev/null 2>&1 && break; sleep 0.1; done
    "$emb" capture --gdb "127.0.0.1:$port" --elf "$fw" --until-closed --duration 60 -o "$tmp/mps2.emb" \
        --save-trace "$tmp/mps2.embt" 2>"$tmp/capture.txt"
    ok $? "the MPS2 firmware's run captured over the GDB protocol"
    agree mps2
else
    echo "# the MPS2 firmware or qemu-system-arm is missing: only the console demo checked"
fi
tap_summary "# "
