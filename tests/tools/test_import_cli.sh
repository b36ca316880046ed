#!/bin/bash
# emb import rtems-record on the command line: every format of both versions imports and
# `emb trace` decodes the result (text, JSON, Perfetto, CTF read back by babeltrace2), a
# live import from a TCP server, and every broken stream refused with its byte offset and
# exit status 2.
# Usage: test_import_cli.sh EMB STREAMS_DIR WORK_DIR
set -u
EMB=$1 IN=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass+1)); echo "ok - $2"; else fail=$((fail+1)); echo "not ok - $2"; fi; }

for v in 1 10; do
  for f in le32 le64 be32 be64; do
    src=$IN/v${v}_$f.rec out=$WORK/v${v}_$f.embt
    "$EMB" import rtems-record "$src" -o "$out" > "$WORK/sum.txt" 2> "$WORK/err.txt"
    ok $? "v$v $f: imports"
    grep -q "version $v" "$WORK/sum.txt"; ok $? "v$v $f: summary names the version"
    grep -q "lost      " "$WORK/sum.txt"; ok $? "v$v $f: summary reports the overflow losses"
    "$EMB" trace "$out" > "$WORK/trace.txt" 2> "$WORK/terr.txt"
    ok $? "v$v $f: emb trace decodes it ($(wc -l < "$WORK/trace.txt") lines)"
    grep -q "thread_switch_in" "$WORK/trace.txt"; ok $? "v$v $f: events carry the system's names"
    grep -q "discarded" "$WORK/terr.txt"; ok $? "v$v $f: emb trace reports the lost items"
  done
done

# JSON summary and the stream control items kept on request.
"$EMB" import rtems-record "$IN/v10_le32.rec" -o "$WORK/all.embt" --all --json > "$WORK/sum.json"
ok $? "--all --json"
python3 -c "
import json,sys
d=json.load(open('$WORK/sum.json'))
assert d['version']==10 and d['item_bits']==32 and d['processors']==2, d
assert d['bsp']=='xilinx_zynq_a9_qemu' and d['error'] is None, d
assert d['lost']>0 and d['events']==d['items'], d
"; ok $? "JSON summary fields"
"$EMB" trace "$WORK/all.embt" | grep -q "per_cpu_tail\|processor "; ok $? "--all keeps PROCESSOR items"

# Perfetto and CTF exports of an imported trace.
"$EMB" trace -f perfetto "$WORK/v10_be64.embt" -o "$WORK/p.json"
python3 -c "import json; d=json.load(open('$WORK/p.json')); assert len(d['traceEvents'])>100"
ok $? "Perfetto export is valid JSON"
"$EMB" trace -f ctf -o "$WORK/ctf" "$WORK/v1_le64.embt"; ok $? "CTF export"
if command -v babeltrace2 >/dev/null; then
  n_bt=$(babeltrace2 "$WORK/ctf" 2>/dev/null | grep -c "rtems_\|thread_\|user_\|uptime\|version\|count\|frequency\|overflow")
  n_emb=$("$EMB" trace --json "$WORK/v1_le64.embt" | python3 -c "import json,sys; print(json.load(sys.stdin)['summary']['events'])")
  [ "$n_bt" -ge "$n_emb" ] && [ "$n_emb" -gt 100 ]; ok $? "babeltrace2 reads the CTF export ($n_bt lines, $n_emb events)"
fi

# The catalogue written out decodes the same trace.
"$EMB" import rtems-record "$IN/v10_le32.rec" -o "$WORK/c.embt" --catalog-out "$WORK/rtems.yaml" >/dev/null
"$EMB" trace --catalog "$WORK/rtems.yaml" --summary "$WORK/c.embt" > /dev/null; ok $? "--catalog-out writes a usable catalogue"

# --count stops early; standard input works.
"$EMB" import rtems-record - -o "$WORK/s.embt" --count 100 --json < "$IN/v1_be32.rec" > "$WORK/c.json"
python3 -c "import json; d=json.load(open('$WORK/c.json')); assert d['items']==100, d"; ok $? "--count 100 from stdin"

# Live from a TCP record server (a stand-in that sends the stream in pieces, then closes).
rm -f "$WORK/port"
python3 - "$IN/v10_be32.rec" "$WORK/port" <<'PY' &
import socket, sys, time, os
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)
open(sys.argv[2] + '.tmp', 'w').write(str(s.getsockname()[1])); os.rename(sys.argv[2] + '.tmp', sys.argv[2])
s.settimeout(20); c, _ = s.accept(); data = open(sys.argv[1], 'rb').read()
for i in range(0, len(data), 777):
    c.sendall(data[i:i+777]); time.sleep(0.001)
c.close()
PY
srv=$!
for i in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
port=$(cat "$WORK/port")
"$EMB" import rtems-record "tcp://127.0.0.1:$port" -o "$WORK/tcp.embt" --json > "$WORK/tcp.json"
ok $? "tcp:// import"
wait $srv
"$EMB" import rtems-record "$IN/v10_be32.rec" -o "$WORK/file.embt" --json > "$WORK/file.json"
python3 -c "
import json
a=json.load(open('$WORK/tcp.json')); b=json.load(open('$WORK/file.json'))
assert a['items']==b['items'] and a['events']==b['events'] and a['lost']==b['lost'], (a,b)
"; ok $? "tcp:// import reads the same items as the file"

# Straight into a sealed capture file: emb inspect reads it and emb diff compares two
# imports (same catalogue, so --same-build), exit 0 or 1, never 2.
"$EMB" import rtems-record "$IN/v10_le32.rec" -o "$WORK/cap1.embt" --capture "$WORK/cap1.emb" -l run1 > /dev/null
ok $? "--capture writes a capture file"
"$EMB" import rtems-record "$IN/v10_be64.rec" -o "$WORK/cap2.embt" --capture "$WORK/cap2.emb" -l run2 > /dev/null
"$EMB" inspect "$WORK/cap1.emb" > "$WORK/insp.txt"; ok $? "emb inspect reads the imported capture"
grep -q "run1" "$WORK/insp.txt"; ok $? "the capture carries its label"
"$EMB" diff --same-build --anchor thread_switch_in "$WORK/cap1.emb" "$WORK/cap2.emb" > "$WORK/diff.txt" 2>&1
rc=$?; [ $rc = 0 ] || [ $rc = 1 ]; ok $? "emb diff of two imports (exit $rc)"

# --events from a target's recorddata.h with the documented recipe (a miniature header:
# four named events, the unused system events and the user events, as the system lays it out).
python3 - "$WORK/recorddata.h" <<'PY'
import sys
lines = ["typedef enum {", "  /* There are 512 events reserved for the system */"]
names = ["EMPTY", "VERSION", "ACCEPT_ENTRY", "ACCEPT_EXIT"]
lines += ["  RTEMS_RECORD_%s," % n for n in names] + ["", "  /* Unused system events */"]
lines += ["  RTEMS_RECORD_SYSTEM_%d," % i for i in range(len(names), 512)]
lines += ["  RTEMS_RECORD_USER_%d%s" % (i, "," if i < 511 else "") for i in range(512)]
lines += ["} rtems_record_event;", "#define RTEMS_RECORD_LAST RTEMS_RECORD_USER_511"]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
sed -n 's/^ *RTEMS_RECORD_\([A-Z0-9_]*\),\{0,1\} *$/\1/p' "$WORK/recorddata.h" | awk '{print NR-1, $1}' > "$WORK/events.txt"
[ "$(wc -l < "$WORK/events.txt")" = 1024 ] && [ "$(sed -n 3p "$WORK/events.txt")" = "2 ACCEPT_ENTRY" ]
ok $? "the recorddata.h recipe numbers all 1024 events"
"$EMB" import rtems-record "$IN/v1_le32.rec" -o "$WORK/ev.embt" --events "$WORK/events.txt" > /dev/null 2> "$WORK/ev.err"
ok $? "--events takes the recipe's output ($(head -c 120 "$WORK/ev.err"))"

# Broken streams: a clear message with the byte offset, exit 2.
check_bad() { # file expected-message
  "$EMB" import rtems-record "$IN/$1" -o "$WORK/bad.embt" > /dev/null 2> "$WORK/bad.txt"
  rc=$?
  [ $rc = 2 ] && grep -q "$2" "$WORK/bad.txt"; ok $? "$1 refused: $(head -1 "$WORK/bad.txt")"
}
check_bad bad_truncated.rec "byte [0-9]*: truncated item: 5 of 8 bytes"
check_bad bad_header.rec "byte 0: truncated header: 6 of 8"
check_bad bad_magic.rec "byte 4: bad magic"
check_bad bad_format.rec "byte 0: unknown item format"
check_bad bad_version.rec "byte 8: record version 11 is not supported"
check_bad bad_processor.rec "processor index 1 beyond the maximum 0"
"$EMB" import rtems-record "$WORK/nonexistent" -o "$WORK/x.embt" 2> "$WORK/bad.txt"
[ $? = 2 ] && grep -q "cannot open" "$WORK/bad.txt"; ok $? "missing file"
"$EMB" import rtems-record "$IN/v1_le32.rec" > /dev/null 2>&1; [ $? = 2 ]; ok $? "no -o: usage error"
"$EMB" import ctf x -o y > /dev/null 2>&1; [ $? = 2 ]; ok $? "unknown format: usage error"
"$EMB" import --help | grep -q "rtems-record"; ok $? "--help"
"$EMB" import rtems-record "tcp://127.0.0.1:1" -o "$WORK/x.embt" 2> "$WORK/bad.txt"
[ $? = 2 ] && grep -q "cannot connect" "$WORK/bad.txt"; ok $? "tcp:// to a closed port"
# A truncated stream still writes what it decoded.
[ -s "$WORK/bad.embt" ] || true
"$EMB" import rtems-record "$IN/bad_truncated.rec" -o "$WORK/trunc.embt" > /dev/null 2>&1
"$EMB" trace --summary "$WORK/trunc.embt" > /dev/null; ok $? "a truncated stream's events are still written"

echo "$pass passed, $fail failed"
[ $fail = 0 ] && [ $pass -gt 0 ]
