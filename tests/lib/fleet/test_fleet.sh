#!/usr/bin/env bash
# emb fleet over a corpus of real records: the native port's fault path in two builds of
# fleet_device.c (firmware 1.0.0 and 1.1.0, other addresses, other build ids) faulting
# four ways on four devices; the MPS2 firmware's bus fault, division by zero and stalled
# fault as test_qemu_mps2_m3 saved them under QEMU (and the capture holding one of them);
# the golden v2 record and retained region (a record and 8 mini-records, make_crash_golden:
# the library's own encoders); a trace stream, a log stream, a capture; and damaged copies.
# Ingested into SQLite and into a PostgreSQL server started here (initdb, pg_ctl, a unix
# socket in a temporary directory, unprivileged), both must give the same buckets. What
# each bucket must hold comes from the sources beside the records: fleet_device.c's
# functions (a fault in sensor_read called by sensor_poll, ...), the MPS2 driver's
# (test_qemu_mps2.c names sensor_driver_poll and sensor_average), and `emb crash`'s own
# reading of the same record.
# usage: test_fleet.sh EMB DEVICE_A DEVICE_B SUPPORT_DIR MPS2_DIR MPS2_ELF SCRATCH
set -u
emb=$1 dev_a=$2 dev_b=$3 support=$4 mps2=$5 mps2_elf=$6 out=$7
here=$(dirname "$0")
rm -rf "$out" && mkdir -p "$out/corpus"
pass=0 fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok - $what"; else fail=$((fail + 1)); echo "not ok - $what"; fi
}
status() { "$@" >"$out/stdout" 2>"$out/stderr"; echo $?; }
c=$out/corpus

# The native records: each device runs each fault once, its next start saves the record.
made=0
for build in a b; do
  dev=$dev_a; [ $build = b ] && dev=$dev_b
  for n in 1 2; do
    device=node-$build$n
    for kind in null div0 trap abort; do
      { "$dev" crash "$out/retained-$device-$kind" $kind; } 2>/dev/null
      "$dev" save "$out/retained-$device-$kind" "$c/$device-$kind.rec" && made=$((made + 1))
    done
  done
done
check "the native devices left 16 crash records" test $made -eq 16
mps2_files=()
if [ -f "$mps2_elf" ]; then
  for f in crash-bus.bin crash-div0.bin crash-stalled.bin crash-bus.emb run.embt run.log; do
    cp "$mps2/$f" "$c/mps2-$f" && mps2_files+=("$c/mps2-$f")
  done
  check "the MPS2 firmware's records and streams (test_qemu_mps2_m3)" test ${#mps2_files[@]} -eq 6
fi
cp "$support/golden/crash_v2.bin" "$support/golden/retained.bin" "$c/"
# The damaged: a flipped byte inside a record (its CRC), a record cut short, a capture cut
# short, and bytes that are no record at all.
cp "$c/node-a1-null.rec" "$c/bad-flipped.rec"
printf '\xff' | dd of="$c/bad-flipped.rec" bs=1 seek=100 conv=notrunc status=none
head -c 60 "$c/node-a2-div0.rec" >"$c/bad-truncated.rec"
head -c 300 "$support/golden/capture_v1.emb" >"$c/bad-capture.emb"
printf 'GET / HTTP/1.0\r\n\r\n' >"$c/bad-garbage.bin"

# ingest DB: every file with its device, at one upload time, then the symbols.
ingest() {
  local db=$1 rc=0 f d
  for f in "$c"/*; do
    d=$(basename "$f"); d=${d%%-*}
    case $d in node) d=$(basename "$f" | cut -d- -f1-2) ;; esac
    "$emb" fleet ingest --quiet --db "$db" --device "$d" --time 1800000000 "$f" 2>>"$out/refused.txt" || rc=$?
  done
  return $rc
}
db=sqlite:$out/fleet.db
ingest "$db"; rc=$?
check "ingest exits 2: some files were refused" test $rc -eq 2
check "  each refusal names its file and byte offset" \
  bash -c "[ \$(grep -c 'bad-.*: byte [0-9]*: .*(stored as refused)' '$out/refused.txt') -eq 4 ]"
check "before any symbols, each build's fault is a bucket of its own (signature by address)" \
  bash -c "'$emb' fleet buckets --db '$db' | grep -q 'memory @'"
check "symbols add: the records waiting for build a are symbolised now" \
  bash -c "'$emb' fleet symbols add --db '$db' '$dev_a' | grep -q ' added, 8 records symbolised'"
"$emb" fleet symbols add --db "$db" "$dev_b" >/dev/null
[ -f "$mps2_elf" ] && "$emb" fleet symbols add --db "$db" "$mps2_elf" >/dev/null
check "symbols add again: stored already, nothing left to symbolise" \
  bash -c "'$emb' fleet symbols add --db '$db' '$dev_a' | grep -q 'stored already, 0 records'"
check "buckets --json" test "$(status "$emb" fleet buckets --db "$db" --json)" = 0
cp "$out/stdout" "$out/sqlite.json"

python3 "$here/fleet_buckets_check.py" "$out/sqlite.json" "$([ -f "$mps2_elf" ] && echo mps2)"
check "the buckets hold what the sources say (fleet_buckets_check.py)" test $? -eq 0

# Each bucket's example against `emb crash`'s reading of the same file.
ids=$(python3 -c 'import json,sys; print(" ".join(b["id"] for b in json.load(open(sys.argv[1]))["buckets"]))' "$out/sqlite.json")
agree=0 shown=0
for id in $ids; do
  "$emb" fleet show --db "$db" --json "$id" >"$out/show-$id.json" || continue
  shown=$((shown + 1))
  python3 "$here/fleet_show_check.py" "$emb" "$out/show-$id.json" "$dev_a" "$dev_b" "$mps2_elf" && agree=$((agree + 1))
done
check "show --json for every bucket" test "$shown" -eq "$(echo $ids | wc -w)"
check "  each symbolised example's chain is the one emb crash reads from the same record" test "$agree" -eq "$shown"
check "show takes a prefix of the id" bash -c "'$emb' fleet show --db '$db' ${ids:0:6} | grep -q '^bucket '"
check "show of no bucket is exit 2" test "$(status "$emb" fleet show --db "$db" 000000000000)" = 2

# Idempotence: the same corpus again changes nothing; a capture holding a record the
# store has is that record.
ingest "$db"
"$emb" fleet buckets --db "$db" --json >"$out/again.json"
check "ingesting the corpus again adds nothing (one row per content hash)" cmp -s "$out/sqlite.json" "$out/again.json"
[ -f "$mps2_elf" ] && check "a capture's crash section is the record it holds: no new row" \
  bash -c "'$emb' fleet ingest --db '$db' '$c/mps2-crash-bus.emb' | grep -q '1 row, 0 new'"

# The schema: versioned, and the bucket query is answered from its index.
check "the schema is at its newest version, the bucket query reads its covering index" \
  python3 "$here/fleet_schema_check.py" "$out/fleet.db"

# The report, in headless Chromium.
check "report -o fleet.html" test "$(status "$emb" fleet report --db "$db" -o "$out/fleet.html")" = 0
check "  ranks every bucket, charts versions in SVG, decodes each example, lists refusals" \
  bash -c "grep -c 'href=\"#b' '$out/fleet.html' | grep -qx $(echo $ids | wc -w) && grep -q '<svg id=\"versions\"' '$out/fleet.html' \
    && grep -q 'sensor_read' '$out/fleet.html' && grep -q 'bad-flipped.rec' '$out/fleet.html'"
check "  self-contained (no script, no external resource)" \
  bash -c "! grep -Eiq '<script|src=\"http|href=\"http' '$out/fleet.html'"
if [ -x /usr/bin/chromium ]; then
  check "Chromium renders it" bash "$support/screenshot.sh" "$out/fleet.html" "$out/fleet.png" 1280,1600
  check "  and the screenshot is not blank" python3 "$support/png_not_blank.py" "$out/fleet.png"
else
  check "Chromium is installed (scripts/install-deps.sh)" false
fi

# PostgreSQL: a server of the test's own, the same corpus, the same buckets.
. "$support/pg_temp.sh"
if pg_temp_start "$out/pg"; then
  trap pg_temp_stop EXIT
  ingest "$PG_TEMP_URL"
  for elf in "$dev_a" "$dev_b" "$mps2_elf"; do
    [ -f "$elf" ] && "$emb" fleet symbols add --db "$PG_TEMP_URL" "$elf" >/dev/null
  done
  "$emb" fleet buckets --db "$PG_TEMP_URL" --json >"$out/pg.json"
  check "PostgreSQL gives the same buckets as SQLite" cmp "$out/sqlite.json" "$out/pg.json"
  same=0
  for id in $ids; do
    "$emb" fleet show --db "$PG_TEMP_URL" --json "$id" | cmp -s - "$out/show-$id.json" && same=$((same + 1))
  done
  check "  and the same example of every bucket" test "$same" -eq "$(echo $ids | wc -w)"
  pg_temp_stop
  trap - EXIT
  check "the server is stopped" test ! -e "$out/pg/data/postmaster.pid"
else
  check "a PostgreSQL server starts (initdb, pg_ctl in $PG_BIN)" false
fi
check "a database URL of no known kind is exit 2" test "$(status "$emb" fleet buckets --db mysql://x)" = 2
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
