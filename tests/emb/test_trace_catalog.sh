#!/usr/bin/env bash
# A bare trace stream carries its catalogue in its header (docs/formats/trace.md, the
# catalog block), as a capture carries it in its catalog section: `emb trace x.embt`
# decodes a user's events with no --catalog, whoever wrote the stream on the host (emb
# import --events, emb capture extract --trace, emb capture --save-trace); emb capture
# keeps it in the capture it seals (emb import --capture too); emb crash and emb desc
# --dump read the catalogue a capture carries; a stream without the block decodes exactly
# as before; an altered block is refused at its byte offset.
#
# The user's catalogue comes from a real producer, as in test_capture_catalog.sh: `emb
# import rtems-record --events` with the user's name PUMP_SPEED for RTEMS_RECORD_USER(114)
# = 626 (cpukit/include/rtems/recorddata.h: RTEMS_RECORD_USER_0 is 512). The block is read
# and rewritten independently by trace_catalog_block.py (Python's struct, zlib and crc32
# from the layout in docs/formats/trace.md); the crash record and its ELF are the console
# demo's, the descriptor image the golden one.
# Usage: test_trace_catalog.sh EMB STREAMS_DIR CONSOLE DESCRIPTOR_IMAGE WORK_DIR
set -u
emb=$1 in=$2 console=$3 desc_image=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
block="python3 $here/trace_catalog_block.py"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
pass=0 fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok - $2"; else fail=$((fail + 1)); echo "not ok - $2"; fi; }
status() { "$@" >stdout 2>stderr; echo $?; }
same() { cmp -s "$1" "$2"; }

printf '0 EMPTY\n1 VERSION\n305 THREAD_SWITCH_IN\n306 THREAD_SWITCH_OUT\n322 UPTIME_HIGH\n323 UPTIME_LOW\n626 PUMP_SPEED\n' \
  >events.txt
"$emb" import rtems-record "$in/v10_le32.rec" -o run.embt --events events.txt --catalog-out my.yaml \
  >/dev/null
ok $? "a trace recorded with the user's catalogue"

# ---- 1. the stream carries it: emb import writes the block, every reader takes it ----
$block text run.embt >carried.yaml && same carried.yaml my.yaml
ok $? "emb import --events: the header's catalog block inflates (Python's zlib) to the catalogue"
[ "$(status "$emb" trace --color=never run.embt)" = 0 ]; ok $? "emb trace x.embt: no --catalog"
mv stdout run.txt
[ "$(grep -c ' pump_speed ' run.txt)" = 5 ]; ok $? "  names the user's event, 5 times"
"$emb" trace --color=never --catalog my.yaml run.embt >given.txt && same run.txt given.txt
ok $? "  the same text as with --catalog"
"$emb" trace --color=never - <run.embt >stdin.txt && same run.txt stdin.txt
ok $? "  the same from standard input"
"$emb" trace --json run.embt >/dev/null && "$emb" trace -f ctf -o ctf run.embt
ok $? "  --json and -f ctf need no --catalog either"

# ---- a stream without the block decodes exactly as before ----
$block strip run.embt old.embt && [ "$(wc -c <old.embt)" -lt "$(wc -c <run.embt)" ]
ok $? "the same stream without its block (as written before the block existed)"
[ "$(status "$emb" trace old.embt)" = 2 ] &&
  grep -Eq "old.embt: byte 8: catalogue checksum 0x[0-9a-f]{8} differs from the catalogue's" stderr
ok $? "  with no --catalog: refused at byte 8 as before (exit 2)"
"$emb" trace --color=never --catalog my.yaml old.embt >old.txt && same run.txt old.txt
ok $? "  with --catalog: the same events as the stream that carries it"
"$emb" import rtems-record "$in/v10_le32.rec" -o plain.embt >/dev/null
! $block text plain.embt >/dev/null; ok $? "a catalogue every reader knows (RTEMS v10's) is not carried"

# ---- a sealed stream: the block added by the host, the header CRC computed again ----
$block seal old.embt sealed.embt && $block check sealed.embt >/dev/null
ok $? "a sealed (version 2) stream of the same trace, its CRCs made by Python's zlib"
"$emb" capture --catalog my.yaml -l run -o sealed.emb sealed.embt >/dev/null
ok $? "emb capture --catalog seals it into a capture"
"$emb" capture extract --trace sealed.emb -o extracted.embt; ok $? "emb capture extract --trace"
$block check extracted.embt >/dev/null; ok $? "  its header CRC and packet CRCs hold (Python's crc32)"
$block text extracted.embt | cmp -s - my.yaml; ok $? "  its header carries the capture's catalogue"
"$emb" trace --color=never extracted.embt >extracted.txt && same run.txt extracted.txt
ok $? "  emb trace reads it with no --catalog: the same events"

# ---- a live capture's saved stream carries the catalogue given (--file reads as a source) ----
"$emb" capture --file old.embt --catalog my.yaml --save-trace saved.embt -o live.emb >/dev/null 2>&1
ok $? "emb capture --file --catalog --save-trace"
$block text saved.embt | cmp -s - my.yaml; ok $? "  the saved stream's header carries the catalogue"
"$emb" trace --color=never saved.embt >saved.txt && same run.txt saved.txt
ok $? "  emb trace reads it with no --catalog: the same events"
"$emb" capture extract --trace live.emb -o live_extracted.embt && same saved.embt live_extracted.embt
ok $? "  emb capture extract --trace gives back the same bytes as --save-trace wrote"

# ---- emb capture keeps what the stream carries; emb import --capture ----
"$emb" capture -o carried.emb run.embt >/dev/null; ok $? "emb capture of the stream: no --catalog"
"$emb" inspect carried.emb | grep -q "catalog v1"; ok $? "  the capture carries the catalogue"
"$emb" trace --color=never carried.emb >carried.txt && same run.txt carried.txt
ok $? "  and decodes as the stream did"
"$emb" capture extract --trace carried.emb -o recarried.embt && [ "$($block count recarried.embt)" = 1 ] &&
  "$emb" trace --color=never recarried.embt | cmp -s - run.txt
ok $? "  extracted again, its stream's block is replaced, not repeated: one block, the same events"
"$emb" import rtems-record "$in/v10_le32.rec" -o imported.embt --events events.txt \
  --capture imported.emb >/dev/null
ok $? "emb import --events --capture seals the import"
"$emb" inspect imported.emb | grep -q "catalog v1" && "$emb" inspect imported.emb | grep -q "pump_speed  *5"
ok $? "  its capture carries the catalogue and counts the user's event"

# ---- an altered block is refused ----
$block rename run.embt renamed.embt
[ "$(status "$emb" trace renamed.embt)" = 2 ]; ok $? "an altered catalog block: exit 2"
grep -Eq "renamed.embt: byte [0-9]+: the stream's catalogue has checksum 0x[0-9a-f]{8}, its header names 0x[0-9a-f]{8}: the catalog block was altered" \
  stderr; ok $? "  naming the file, the byte offset and both checksums"
[ "$(status "$emb" capture -o renamed.emb renamed.embt)" = 2 ] && [ ! -e renamed.emb ]
ok $? "  emb capture refuses to seal it"
[ "$(status "$emb" trace --catalog my.yaml renamed.embt)" = 0 ]; ok $? "  --catalog still overrides it"
$block short run.embt short.embt
[ "$(status "$emb" trace short.embt)" = 2 ] &&
  grep -Eq "short.embt: byte [0-9]+: catalog block of [0-9]+ bytes cannot hold its [0-9]+-byte zlib stream" stderr
ok $? "a block stating a longer zlib stream than it holds: exit 2 at a byte offset"

# ---- emb crash and emb desc --dump read the catalogue a capture carries ----
{ "$console" --frames 100 --retained r.bin --fault-frame 30 -o crashed.embt >/dev/null 2>&1; } 2>/dev/null
"$console" --frames 60 --retained r.bin --crash-out crash.rec -o console.embt >/dev/null 2>&1
"$emb" capture --catalog my.yaml --crash crash.rec --descriptor "$desc_image" -o parts.emb run.embt \
  >/dev/null
ok $? "a capture with its own catalogue, the console's crash record and a descriptor image"
"$emb" crash --color=never --elf "$console" crash.rec >crash.txt; rc0=$?
"$emb" crash --color=never --elf "$console" parts.emb >parts.crash; rc1=$?
[ "$rc1" = "$rc0" ] && grep -q "fault" parts.crash && diff <(tail -n +2 crash.txt) <(tail -n +2 parts.crash) >/dev/null
ok $? "emb crash CAPTURE, no --catalog: the record's report, its flight recorder decoded (exit $rc1, $rc0)"
python3 "$here/capture_catalog_edit.py" parts.emb parts_renamed.emb rename
[ "$(status "$emb" crash --elf "$console" parts_renamed.emb)" = 2 ] &&
  grep -q "the catalog section was altered" stderr
ok $? "  a capture whose catalogue was altered: emb crash refuses it (exit 2)"
# The golden image names a catalogue this tool does not know (0x6373d20b), so the one the
# capture carries sizes the events of its open packet, as --catalog would (the built-in
# one, which a capture's catalogue once went unread for, ends that packet elsewhere).
"$emb" desc --dump parts.emb --base 0x20000000 --dump-trace desc.embt >/dev/null &&
  "$emb" desc --dump "$desc_image" --base 0x20000000 --catalog my.yaml --dump-trace given.embt \
    >/dev/null && same desc.embt given.embt
ok $? "emb desc --dump CAPTURE --dump-trace, no --catalog: the capture's catalogue, as --catalog"
"$emb" desc --dump "$desc_image" --base 0x20000000 --dump-trace builtin.embt >/dev/null &&
  ! same desc.embt builtin.embt
ok $? "  (which the built-in catalogue is not: the test tells them apart)"
[ "$(status "$emb" desc --dump parts_renamed.emb --base 0x20000000 --dump-trace x.embt)" = 2 ] &&
  grep -q "the catalog section was altered" stderr
ok $? "  a capture whose catalogue was altered: emb desc refuses it (exit 2)"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
