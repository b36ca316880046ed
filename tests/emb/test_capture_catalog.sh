#!/usr/bin/env bash
# A capture carries the catalogue it was checked with (docs/formats/capture.md, the catalog
# section): a trace recorded with a catalogue of the user's own, sealed by `emb capture
# --catalog`, decodes with `emb trace`, `emb inspect` and `emb diff` given no --catalog,
# and names the user's event; a capture whose carried catalogue was altered (resealed so
# its CRC holds) or states a wrong inflated length is refused with exit 2 at a byte offset.
#
# The trace with the user's catalogue comes from a real producer: `emb import rtems-record
# --events` over the RTEMS record streams of make_rtems_streams, with the user's own name
# (PUMP_SPEED) for user event 114, RTEMS_RECORD_USER(114) = 512 + 114 (cpukit/include/rtems/
# recorddata.h: RTEMS_RECORD_USER_0 is 512); its --catalog-out is the user's catalogue.
# Usage: test_capture_catalog.sh EMB STREAMS_DIR WORK_DIR
set -u
emb=$1 in=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok - $2"; else fail=$((fail + 1)); echo "not ok - $2"; fi; }
status() { "$@" >"$work/stdout" 2>"$work/stderr"; echo $?; }

printf '0 EMPTY\n1 VERSION\n305 THREAD_SWITCH_IN\n306 THREAD_SWITCH_OUT\n322 UPTIME_HIGH\n323 UPTIME_LOW\n626 PUMP_SPEED\n' \
  >"$work/events.txt"
"$emb" import rtems-record "$in/v10_le32.rec" -o "$work/run.embt" --events "$work/events.txt" \
  --catalog-out "$work/my.yaml" >/dev/null
ok $? "a trace recorded with the user's catalogue"
[ "$(status "$emb" capture --catalog "$work/my.yaml" -l run -o "$work/run.emb" "$work/run.embt")" = 0 ]
ok $? "emb capture --catalog seals it"
"$emb" capture --catalog "$work/my.yaml" -l again -o "$work/again.emb" "$work/run.embt" >/dev/null

[ "$(status "$emb" trace --color=never "$work/run.emb")" = 0 ]; ok $? "emb trace on the capture: no --catalog"
[ "$(grep -c ' pump_speed ' "$work/stdout")" = 5 ]; ok $? "  names the user's event, 5 times"
[ "$(status "$emb" inspect "$work/run.emb")" = 0 ]; ok $? "emb inspect on the capture: no --catalog"
grep -q "catalog v1" "$work/stdout" && grep -q "pump_speed  *5" "$work/stdout"
ok $? "  lists the catalog section and counts the user's event"
rc=$(status "$emb" diff --same-build --anchor thread_switch_in "$work/run.emb" "$work/again.emb")
[ "$rc" = 0 ]; ok $? "emb diff of two such captures: no --catalog (exit $rc)"
[ "$(status "$emb" trace --catalog "$work/my.yaml" "$work/run.emb")" = 0 ]; ok $? "--catalog still decodes it"

# A catalogue the tool knows (the built-in one) is not copied into the capture.
"$emb" import rtems-record "$in/v10_le32.rec" -o "$work/plain.embt" >/dev/null
"$emb" capture -o "$work/plain.emb" "$work/plain.embt" >/dev/null
"$emb" inspect "$work/plain.emb" | grep -q "catalog v1"; [ $? = 1 ]; ok $? "a known catalogue is not carried"

python3 "$here/capture_catalog_edit.py" "$work/run.emb" "$work/renamed.emb" rename
[ "$(status "$emb" trace "$work/renamed.emb")" = 2 ]; ok $? "an altered catalogue: exit 2"
grep -Eq "renamed.emb: byte [0-9]+: the capture's catalogue has checksum 0x[0-9a-f]{8}, its trace names 0x[0-9a-f]{8}" \
  "$work/stderr"; ok $? "  naming the file, the byte offset and both checksums"
[ "$(status "$emb" inspect "$work/renamed.emb")" = 2 ]; ok $? "  emb inspect refuses it too"
python3 "$here/capture_catalog_edit.py" "$work/run.emb" "$work/short.emb" short
[ "$(status "$emb" trace "$work/short.emb")" = 2 ]; ok $? "a catalogue longer than its stated length: exit 2"
grep -Eq "short.emb: byte [0-9]+: catalog section: inflates to more bytes than it says" "$work/stderr"
ok $? "  refused at a byte offset ($(head -c 120 "$work/stderr"))"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
