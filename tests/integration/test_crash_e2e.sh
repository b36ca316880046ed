#!/usr/bin/env bash
# End to end, the field crash of SPEC-015 §11 on the native port: the console demo's
# sensor driver faults at a known frame; the next start finds the record in the retained
# region and saves it; `emb crash` names the faulting function and line (and the function
# it was inlined into), the caller, and shows the last trace events before the fault:
# the driver's own event, the lock it held, the timer interrupt. Then the bad inputs.
# usage: test_crash_e2e.sh EMB CONSOLE DRIVER_SOURCE SCRATCH_DIR
set -u
emb=$1 console=$2 driver=$3 tmp=$4
rm -rf "$tmp" && mkdir -p "$tmp"
. "$(dirname "$0")/../support/tap_check.sh"
line=$(grep -n "the seeded fault: regs is a bad pointer" "$driver" | cut -d: -f1)
poll_line=$(grep -n "sensor_read_register(sensor_bank(frame), reg)" "$driver" | cut -d: -f1)
fault=60

"$console" --frames 400 --retained "$tmp/retained.bin" --fault-frame $fault -o "$tmp/run1.embt" \
    >"$tmp/run1.out" 2>&1
rc=$?
[ $rc -eq 139 ]; ok $? "the first run dies of SIGSEGV (status $rc)"

"$console" --frames 3 --retained "$tmp/retained.bin" --crash-out "$tmp/crash.rec" \
    -o "$tmp/run2.embt" >"$tmp/run2.out" 2>&1
ok $? "the next start runs"
grep -q "the previous run crashed" "$tmp/run2.out"; ok $? "and reports the crash record it found"
[ -s "$tmp/crash.rec" ]; ok $? "saved to a file"
"$console" --frames 3 --retained "$tmp/retained.bin" --crash-out "$tmp/again.rec" \
    -o "$tmp/run3.embt" >"$tmp/run3.out" 2>&1
! grep -q "previous run crashed" "$tmp/run3.out" && [ ! -e "$tmp/again.rec" ]
ok $? "the record was cleared after the upload: a third start finds none"

"$emb" crash --elf "$console" --color=never --events 40 "$tmp/crash.rec" >"$tmp/crash.txt" 2>"$tmp/crash.err"
ok $? "emb crash exits 0"
cat "$tmp/crash.txt"
[ ! -s "$tmp/crash.err" ]; ok $? "nothing on stderr"
grep -Eq "^pc .* sensor_read_register .*driver\.c:$line +\(inlined into sensor_driver_poll\)" "$tmp/crash.txt"
ok $? "pc: sensor_read_register at driver.c:$line, inlined into sensor_driver_poll"
grep -Eq "^ +sensor_driver_poll\+0x[0-9a-f]+ .*driver\.c:$poll_line" "$tmp/crash.txt"
ok $? "then sensor_driver_poll at driver.c:$poll_line"
grep -Eq "^caller .*(frame_loop|main)" "$tmp/crash.txt"; ok $? "the caller is the frame loop"
grep -Eq "^fault +memory, SIGSEGV, address not mapped \(SEGV_MAPERR\), at address 0x1[0-9a-f]" "$tmp/crash.txt"
ok $? "the fault: SIGSEGV, not mapped, at the bad register address"
grep -Eq 'thread +0 "main"' "$tmp/crash.txt"; ok $? "in thread main"
grep -Eq "^status +rflags" "$tmp/crash.txt" && grep -q "page fault (#PF)" "$tmp/crash.txt"
ok $? "status registers decoded (rflags, trap: page fault)"
grep -Eq "mutex 0x[0-9a-f]+ \"i2c-bus\" held by main \(the faulting thread\)" "$tmp/crash.txt"
ok $? "the lock held: i2c-bus, by the faulting thread"
grep -Eq "^  irq 11 on " "$tmp/crash.txt"; ok $? "the interrupt that ran: irq 11"

"$emb" crash --elf "$console" --json --events 0 "$tmp/crash.rec" >"$tmp/crash.json"
ok $? "--json"
python3 - "$tmp/crash.json" "$line" "$fault" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
line, fault = int(sys.argv[2]), int(sys.argv[3])
fails = []
def check(c, what):
    if not c: fails.append(what)
f = d["pc"]["frames"]
check(f[0]["function"] == "sensor_read_register" and f[0]["file"].endswith("driver.c")
      and f[0]["line"] == line and f[0]["inlined"], "pc frame 0: %s" % f[0])
check(f[1]["function"] == "sensor_driver_poll" and not f[1]["inlined"], "pc frame 1: %s" % f[1])
ev = d["flight"]["last_events"]
# Other threads run on while the fault is handled: the faulting thread's events end with it.
# A loss record (packets the ring overwrote before those it holds) is no event of main's.
main = [e for e in ev if e["context"] == "main" and "loss" not in e]
names = [e.get("event") for e in main]
check(names[-1] == "partition_fault" and main[-1]["kind"] == "fault", "main's last event is the fault")
polls = [e for e in main if e.get("event") == "user_event" and e["fields"]["id"] == 6]
check(polls and polls[-1]["fields"]["a"] == fault, "the driver's last poll event is frame %d" % fault)
thread_level = [e for e in main[:-1] if e["kind"] == "thread"]
check(thread_level and thread_level[-1].get("event") == "user_event" and thread_level[-1]["fields"]["id"] == 6,
      "the poll is main's last event before the fault (interrupts aside)")
frames = [e["fields"]["frame"] for e in main if e.get("event") == "frame_start"]
check(frames and frames[-1] == fault, "the last frame started is %d" % fault)
check([e["fields"]["a"] for e in polls][-5:] == list(range(fault - 4, fault + 1)),
      "polls of the 5 frames before, in order")
check(any(l["name"] == "i2c-bus" and l["context"] == "main" for l in d["flight"]["locks_held"]),
      "locks held")
check(d["flight"]["last_interrupt"]["irq"] == 11, "last interrupt")
check(d["fault"]["signal"] == "SIGSEGV" and d["thread"]["name"] == "main", "fault and thread")
check(d["record"]["build_id"] == d["elf"]["build_id"], "build ids agree")
ts = [e["ts"] for e in ev]
check(ts == sorted(ts), "events in time order")
for m in fails: print("FAIL:", m)
sys.exit(1 if fails else 0)
PY
ok $? "JSON: frames, the driver's last events, lock, interrupt"

# Bad input: another build, a flipped byte, a cut record, an unknown version, random bytes.
"$emb" crash --elf "$emb" "$tmp/crash.rec" >"$tmp/other.out" 2>"$tmp/other.err"
rc=$?
[ $rc -eq 2 ] && grep -q "another build: record build id [0-9a-f]\{40\}, .* has [0-9a-f]\{40\}" "$tmp/other.err" \
    && [ ! -s "$tmp/other.out" ]
ok $? "another build's ELF: refused with both ids, exit 2 (got $rc)"
python3 - "$tmp" <<'PY'
import sys, zlib, struct
t = sys.argv[1]
rec = bytearray(open(t + "/crash.rec", "rb").read())
flip = bytearray(rec); flip[300] ^= 0x10
open(t + "/flip.rec", "wb").write(flip)
open(t + "/cut.rec", "wb").write(rec[: len(rec) // 2])
v9 = bytearray(rec); v9[4] = 9
v9[-4:] = struct.pack("<I", zlib.crc32(bytes(v9[:-4])))
open(t + "/v9.rec", "wb").write(v9)
import random; random.seed(7)
open(t + "/random.rec", "wb").write(bytes(random.randrange(256) for _ in range(4096)))
PY
for bad in flip:"CRC mismatch" cut:"truncated" v9:"unknown crash record version 9" random:"not a crash record"; do
    f=${bad%%:*} msg=${bad#*:}
    "$emb" crash --elf "$console" "$tmp/$f.rec" >"$tmp/$f.out" 2>"$tmp/$f.err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "$f.rec: byte [0-9]*: .*$msg" "$tmp/$f.err" && [ ! -s "$tmp/$f.out" ]
    ok $? "$f: exit 2, '$msg' with its byte offset, nothing shown (got $rc: $(head -c 200 "$tmp/$f.err"))"
done
"$emb" crash --help >/dev/null; ok $? "--help"
"$emb" crash "$tmp/crash.rec" >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "no --elf: usage error"
"$emb" crash --elf "$console" >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "no record: usage error"

tap_summary
