#!/usr/bin/env bash
# The reduced core (tests/qemu/core/fw.c) on QEMU's MPS2 M3: its first boot faults, the
# second finds the crash record and waits; `emb capture --gdb` reads the trace ring, the
# log ring and the crash record through the reduced descriptor, and `emb trace`, `emb log`
# and `emb crash` decode them. Expectations are what fw.c does; the faulting function's
# address range is arm-none-eabi-nm's; the v2 record's 16-bit fields cannot hold the
# bus fault's address (0x50000000), which the decoder must call partial, not print wrong.
#
# usage: core.sh QEMU FW EMB WORKDIR VERSION (the crash record version the build writes)
set -uo pipefail
qemu=$1 fw=$2 emb=$3 work=$4 version=$5
rm -rf "$work"
mkdir -p "$work"
. "$(dirname "$0")/../../support/tap_check.sh"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$qemu" -M mps2-an385 -nographic -monitor none -semihosting-config enable=on,target=native \
    -gdb tcp:127.0.0.1:$port -kernel "$fw" > "$work/uart0.txt" 2>&1 &
qpid=$!
trap 'kill $qpid 2>/dev/null; wait $qpid 2>/dev/null' EXIT
state() {
    gdb-multiarch -nx -batch -ex "set architecture arm" -ex "file $fw" -ex "target remote 127.0.0.1:$port" \
        -ex 'printf "state %u\n", core_state' -ex detach 2>/dev/null | sed -n 's/^state //p'
}
for _ in $(seq 100); do [ "$(state)" = 2 ] && break; sleep 0.1; done
check "the first boot faulted, the second found the record and finished" \
    grep -q "core: done" "$work/uart0.txt"
"$emb" capture --gdb 127.0.0.1:$port --elf "$fw" --duration 1 -o "$work/core.emb" \
    --save-crash "$work/crash.bin" > "$work/capture.txt" 2>&1
ok $? "emb capture --gdb through the reduced descriptor"
check "the capture holds a crash record" grep -q "holds a crash record" "$work/capture.txt"
"$emb" trace -f ndjson "$work/core.emb" > "$work/trace.ndjson" 2> "$work/trace.err"
ok $? "emb trace decodes the snapshot ring"
"$emb" log --elf "$fw" --json "$work/core.emb" > "$work/log.ndjson" 2> "$work/log.err"
ok $? "emb log decodes the log ring"
"$emb" crash --elf "$fw" --json "$work/crash.bin" > "$work/crash.json" 2> "$work/crash.err"
ok $? "emb crash decodes the record"
range=$(arm-none-eabi-nm -S "$fw" | awk '$4 == "core_read_absent" { print $1, $2 }')
python3 - "$work" "$version" $range <<'PY' || failed=$((failed + 1))
import json, sys
work, version, start, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16), int(sys.argv[4], 16)
bad = 0
def check(cond, what):
    global bad
    print(("ok - " if cond else "not ok - ") + what)
    bad += 0 if cond else 1
def lines(name):
    return [json.loads(l) for l in open(f"{work}/{name}", encoding="utf-8") if l.strip()]
events = [e for e in lines("trace.ndjson") if e.get("event") == "user_event"]
got = [(e["fields"]["id"], e["fields"]["a"], e["fields"]["b"]) for e in events]
check(got == [(2, i, 3 * i) for i in range(12)], f"the second boot's 12 user events in order: {got}")
logs = [r["text"] for r in lines("log.ndjson") if r.get("type") == "log"]
check(logs[:12] == [f"boot 2: step {i}" for i in range(12)], f"the second boot's 12 log records: {logs[:12]}")
check(len(logs) == 13 and logs[12].startswith("the crash record found: ") and logs[12].endswith(" bytes"),
      f"then the record found: {logs[12:]}")
crash = json.load(open(f"{work}/crash.json", encoding="utf-8"))
rec = crash["record"]
check(rec["version"] == version and rec["reset_reason"] == "fault", f"a v{version} record of a fault: {rec}")
check(crash["fault"]["class"] == "bus", f"a bus fault: {crash['fault']}")
pc = int(crash["pc"]["address"], 16)
check(start <= pc < start + size and crash["pc"]["frames"][0]["function"] == "core_read_absent",
      f"pc 0x{pc:x} in core_read_absent [0x{start:x}, 0x{start + size:x}): {crash['pc']}")
check(crash["caller"]["frames"][0]["function"] == "main", f"called from main: {crash['caller']}")
if version == 2:
    # 16-bit fields: the image's code (below 64 KiB at address 0) fits, RAM and the
    # device's address (0x20000000 up, 0x50000000) do not, and the record says so.
    check(not rec["code_addresses_partial"] and rec["data_addresses_partial"],
          "v2: code addresses whole, data addresses marked partial")
else:
    check(crash["fault"]["address"] == "0x50000000", f"v1: the fault address: {crash['fault']}")
    check(crash["flight"] is None, "v1 without the flight recorder: no packets in the record")
sys.exit(1 if bad else 0)
PY
tap_summary
