#!/usr/bin/env bash
# `emb desc` on the running console demo: it finds the descriptor through the ELF's
# symbol, lists the demo's contexts with their state and ring fill, the monitors with
# their openers symbolised, the objects; the trace it pulls out of the live rings decodes
# with `emb trace` (and babeltrace2 reads its CTF); a core file of the same process reads
# the same way; a process of another build is refused; bad sources are usage errors.
# usage: test_desc_e2e.sh EMB CONSOLE SCRATCH_DIR
set -u
emb=$1 console=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp"
. "$(dirname "$0")/../support/tap_check.sh"

# Frames enough to outlast every check however loaded the machine (10 minutes); the
# trap ends it.
"$console" --frames 600000 --retained "$tmp/retained.bin" -o "$tmp/run.embt" >"$tmp/console.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
# Until the demo has started its threads and filled some packets.
for _ in $(seq 50); do
    sleep 0.1
    "$emb" desc --elf "$console" --pid $pid --json >"$tmp/desc.json" 2>/dev/null &&
        python3 -c "import json,sys; d=json.load(open('$tmp/desc.json')); sys.exit(0 if len(d['contexts']) >= 4 and d['contexts'][0]['ring']['packets_opened'] > 4 else 1)" 2>/dev/null &&
        break
done

"$emb" desc --elf "$console" --pid $pid --color=never --dump-trace "$tmp/live.embt" >"$tmp/desc.txt" 2>"$tmp/desc.err"
ok $? "emb desc --pid exits 0"
cat "$tmp/desc.txt"
[ ! -s "$tmp/desc.err" ]; ok $? "nothing on stderr: $(head -c 300 "$tmp/desc.err")"
for ctx in main audio video-link render; do
    grep -Eq "^  [0-9]+ +$ctx +live +[0-9]+ +[0-9]+/64 \+[0-9]+B" "$tmp/desc.txt"
    ok $? "context $ctx: live, with its ring fill"
done
grep -Eq "^  irq_lock .* sensor_driver_poll\+0x[0-9a-f]+ \(driver\.c:[0-9]+\)" "$tmp/desc.txt"
ok $? "the interrupt-lock monitor's opener: sensor_driver_poll, driver.c"
grep -Eq "^  work_handler .* render\+0x0 \(console\.c:[0-9]+\)" "$tmp/desc.txt"
ok $? "the work-handler monitor's opener: the render job"
grep -Eq "^  isr 11 .* emb__timer_signal" "$tmp/desc.txt"; ok $? "ISR 11 monitored"
grep -Eq "^  0x[0-9a-f]+ mutex +i2c-bus +[1-9]" "$tmp/desc.txt"; ok $? "objects: the i2c-bus mutex with its acquisitions"
grep -Eq "area 0x[0-9a-f]+, [0-9]+ bytes, the writer encodes v1; at start: none" "$tmp/desc.txt"
ok $? "the crash record area, empty at start"
grep -Eq "^Trace: [1-9][0-9]* packets written" "$tmp/desc.txt"; ok $? "--dump-trace wrote packets"

"$emb" trace --summary "$tmp/live.embt" >"$tmp/live.sum" 2>"$tmp/live.err"
ok $? "the pulled-out trace decodes with emb trace: $(head -c 300 "$tmp/live.err")"
cat "$tmp/live.sum"
for ctx in main audio video-link render; do
    grep -Eq "^$ctx +[0-9]+ +thread +[1-9]" "$tmp/live.sum"; ok $? "it holds events of $ctx"
done
"$emb" trace -f ndjson -o "$tmp/live.ndjson" "$tmp/live.embt"
python3 - "$tmp/live.ndjson" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ev = {r.get("event") for r in recs}
need = {"frame_start", "user_event", "mutex_lock", "irq_enter", "work_start", "switch"}
missing = need - ev
if missing: print("missing", missing)
sys.exit(1 if missing or len(recs) < 100 else 0)
PY
ok $? "the trace holds what the demo records (frames, user events, locks, interrupts, work, switches)"
if command -v babeltrace2 >/dev/null; then
    # Events only: losses are records in emb's output and warnings in babeltrace2's.
    "$emb" trace -f ctf -o "$tmp/live_ctf" "$tmp/live.embt" &&
        theirs=$(babeltrace2 "$tmp/live_ctf" 2>/dev/null | grep -c '^\[') &&
        ours=$(grep -c '"event":' "$tmp/live.ndjson") &&
        [ "$theirs" -eq "$ours" ]
    ok $? "babeltrace2 reads the same events from its CTF (${theirs:-?} vs ${ours:-?})"
fi

python3 - "$tmp/desc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fails = []
def check(c, what):
    if not c: fails.append(what)
names = {c["name"]: c for c in d["contexts"]}
check({"main", "audio", "video-link", "render"} <= set(names), "contexts %s" % sorted(names))
check(all(c["state"] == "live" for c in d["contexts"]), "all live")
check(d["identity"]["port"] == "native-x86_64" and d["identity"]["ready"], "identity")
check(d["descriptor"]["pointer_size"] == 8 and d["descriptor"]["endianness"] == "little", "header")
a = names.get("audio", {})
check(a.get("stats", {}).get("switches", 0) > 0 and a["stats"]["blocked_cycles"] > 0, "audio switches and blocks")
check(0 < a.get("stack_used", 0) < a.get("stack_size", 0), "audio stack high-water")
check(names["main"]["ring"]["slots"] == 64, "64 slots")
mons = {m["name"]: m for m in d["monitors"]}
check(mons.get("irq_lock", {}).get("opener", "").startswith("sensor_driver_poll"), "irq_lock opener")
check(any(o["name"] == "i2c-bus" and o["type"] == "mutex" for o in d["objects"]), "objects")
check(d["cpu"].get("irq_count", 0) > 0, "cpu irq count")
check(d["crash"]["region"] and d["crash"]["mini_entries"] == 8, "crash region and mini ring")
for f in fails: print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
ok $? "--json: contexts, statistics, monitors, objects, crash region"

# A core of a sanitizer build would hold its shadow memory: terabytes of zeros.
if command -v gdb >/dev/null && ! grep -qa -e __asan_init -e __tsan_init "$console"; then
    gdb -batch -p $pid -ex "gcore $tmp/console.core" >/dev/null 2>&1
    "$emb" desc --elf "$console" --core "$tmp/console.core" --color=never --dump-trace "$tmp/core.embt" \
        >"$tmp/core.txt" 2>"$tmp/core.err"
    ok $? "emb desc --core on a core file of the same process: $(head -c 200 "$tmp/core.err")"
    for ctx in main audio video-link render; do
        grep -Eq "^  [0-9]+ +$ctx +live" "$tmp/core.txt"; ok $? "core: context $ctx"
    done
    "$emb" trace --summary "$tmp/core.embt" >/dev/null 2>&1; ok $? "core: the trace decodes"
    rm -f "$tmp/console.core"
fi

# Another build: the running demo with another console binary's ELF is refused.
cp "$console" "$tmp/other" && objcopy --remove-section .note.gnu.build-id "$tmp/other" 2>/dev/null &&
    objcopy --add-section .note.gnu.build-id=/dev/null "$tmp/other" 2>/dev/null
python3 - "$console" "$tmp/other" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
i = data.find(b"GNU\0", 0)
# The build id note: namesz 4, descsz 20, type 3, "GNU\0", then 20 bytes: change one.
while i >= 0 and not (data[i-12:i-8] == b"\x04\0\0\0" and data[i-4:i] == b"\x03\0\0\0"):
    i = data.find(b"GNU\0", i + 1)
data[i + 4] ^= 0xFF
open(sys.argv[2], "wb").write(data)
PY
"$emb" desc --elf "$tmp/other" --pid $pid >"$tmp/other.out" 2>"$tmp/other.err"
rc=$?
[ $rc -eq 2 ] && grep -q "another build: its build id is [0-9a-f]\{40\}, .* has [0-9a-f]\{40\}" "$tmp/other.err"
ok $? "an ELF of another build is refused with both ids (exit $rc)"

"$emb" desc --elf "$console" --pid 999999 >/dev/null 2>"$tmp/nopid.err"; [ $? -eq 2 ]
ok $? "no such process: exit 2"
"$emb" desc --pid $pid >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "--pid without --elf: usage error"
"$emb" desc --elf "$console" >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "no source: usage error"
"$emb" desc --dump "$tmp/run.embt" >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "--dump without --base: usage error"
head -c 100000 /dev/urandom >"$tmp/nodesc.bin"
"$emb" desc --dump "$tmp/nodesc.bin" --base 0x1000 >/dev/null 2>"$tmp/nodesc.err"; rc=$?
[ $rc -eq 2 ] && grep -q "no \"EMBD\" descriptor" "$tmp/nodesc.err"; ok $? "a dump without a descriptor: exit 2"
"$emb" desc --help >/dev/null; ok $? "--help"

kill $pid 2>/dev/null; wait $pid 2>/dev/null
tap_summary
