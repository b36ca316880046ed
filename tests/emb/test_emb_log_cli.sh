#!/usr/bin/env bash
# `emb log` on the command line: help and usage errors, every bad input (exit status 2, a
# message naming the file and the byte offset), good input (exit 0), JSON that parses,
# and --follow on a live pipe and a live TCP stream.
#
# usage: test_emb_log_cli.sh EMB FILES_DIR DECODE_ELF LOG_FOLLOW WORKDIR
#   FILES_DIR holds what test_log_decode wrote; DECODE_ELF is test_log_decode itself.
set -uo pipefail
emb=$1 files=$2 elf=$3 follow=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0
ok() { if [ "$1" -eq 0 ]; then pass=$((pass + 1)); echo "ok - $2"; else fail=$((fail + 1)); echo "not ok - $2"; fi; }

# run NAME EXPECTED_STATUS ARGS...: stdout to $work/NAME.out, stderr to $work/NAME.err
run() {
    local name=$1 want=$2
    shift 2
    "$emb" log "$@" > "$work/$name.out" 2> "$work/$name.err"
    local got=$?
    [ "$got" -eq "$want" ] || { echo "# $name: exit $got, expected $want"; sed 's/^/#   /' "$work/$name.err" | head -5; }
    ok $(( got != want )) "$name: exit status $want"
}
has() { grep -q -- "$2" "$work/$1.err" && ok 0 "$1: says '$2'" || { ok 1 "$1: says '$2'"; sed 's/^/#   /' "$work/$1.err" | head -5; }; }

# ---- Usage ----
run help 0 --help
grep -q "Usage: emb log --elf PROGRAM" "$work/help.out"; ok $? "help: usage line"
"$emb" help log > /dev/null; ok $? "emb help log"
run no_args 2
has no_args "no log stream given"
run no_elf 2 "$files/good.embl"
has no_elf "elf PROGRAM is required"
run two_streams 2 --elf "$elf" a b
run bad_option 2 --elf "$elf" --bogus "$files/good.embl"
has bad_option "unknown option"
run missing_value 2 "$files/good.embl" --elf
has missing_value "needs a value"
run bad_clock 2 --elf "$elf" --clock-hz 0 "$files/good.embl"
has bad_clock "--clock-hz takes a frequency in Hz, not '0'"
run not_elf 2 --elf "$files/good.embl" "$files/good.embl"
has not_elf "not an ELF file"
run elf_without_log 2 --elf "$emb" "$files/good.embl"
has elf_without_log "not built with the deferred log"
run no_stream 2 --elf "$elf" "$work/does-not-exist"
has no_stream "cannot open"
: > "$work/empty"
run empty 2 --elf "$elf" "$work/empty"
has empty "empty stream"

# ---- Good input ----
run good 0 --elf "$elf" --color=never "$files/good.embl"
[ "$(wc -l < "$work/good.out")" -eq 300 ]; ok $? "good: 300 lines"
grep -q "^ 0.000000000  worker  INF  dec  test_log_decode.c:[0-9]*  record 0 of 300$" "$work/good.out"; ok $? "good: aligned text with file:line"
run good_json 0 --elf "$elf" --json "$files/good.embl"
python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 300 and all(r["type"] == "log" for r in recs)
assert recs[0]["text"] == "record 0 of 300" and recs[0]["level"] == "INF" and recs[0]["context"] == "worker"
assert all(recs[i]["ts"] < recs[i + 1]["ts"] for i in range(299))
' "$work/good_json.out"; ok $? "good --json: 300 objects that parse, in time order"
run good_abs 0 --elf "$elf" --absolute --color=never "$files/good.embl"
grep -q "^2023-11-14T22:13:20.0000[0-9]*Z  worker" "$work/good_abs.out"; ok $? "--absolute: UTC from the stream's clock offset"
run colour 0 --elf "$elf" --color=always "$files/good.embl"
grep -q $'\033\\[32mINF' "$work/colour.out"; ok $? "--color=always: levels coloured"
cat "$files/good.embl" | "$emb" log --elf "$elf" - > "$work/stdin.out" 2>&1
ok $? "reads standard input (-)"
cmp -s "$work/stdin.out" "$work/good.out"; ok $? "the same text from standard input"
run output 0 --elf "$elf" -o "$work/written.txt" --color=never "$files/good.embl"
cmp -s "$work/written.txt" "$work/good.out"; ok $? "-o writes the same text"

# ---- Bad input: exit 2 and a message with the file and the byte offset ----
run cut 2 --elf "$elf" "$files/cut.embl"
has cut "cut.embl: byte [0-9]*: stream ends inside a frame"
[ "$(wc -l < "$work/cut.out")" -gt 250 ]; ok $? "cut: what came before is printed"
run damaged 2 --elf "$elf" "$files/damaged.embl"
has damaged "damaged.embl: byte [0-9]*: bad frame (CRC mismatch"
has damaged "ring bytes missing before this frame"
grep -q -- "-- .*ring bytes missing from the stream" "$work/damaged.out"; ok $? "damaged: the gap shown where it happened"
run random 2 --elf "$elf" "$files/random.embl"
has random "random.embl: byte [0-9]*: "
run wrong_build 2 --elf "$elf" "$files/wrong_build.embl"
has wrong_build "build id mismatch: the stream is from build 0102030405060708, the ELF .* is build [0-9a-f]\{40\}"
[ ! -s "$work/wrong_build.out" ]; ok $? "wrong build: nothing decoded"
run stream_no_build_id 2 --elf "$elf" "$files/no_build_id.embl"
has stream_no_build_id "the stream carries no build id.*-Wl,--build-id.*--no-build-id-check"
[ ! -s "$work/stream_no_build_id.out" ]; ok $? "stream without a build id: nothing decoded"
run stream_no_build_id_check 0 --no-build-id-check --elf "$elf" "$files/no_build_id.embl"
[ "$(wc -l < "$work/stream_no_build_id_check.out")" -eq 30 ]; ok $? "--no-build-id-check: decoded"
objcopy --remove-section .note.gnu.build-id "$elf" "$work/elf_no_build_id"
run elf_no_build_id 2 --elf "$work/elf_no_build_id" "$files/good.embl"
has elf_no_build_id "elf_no_build_id: no GNU build id.*link the firmware with -Wl,--build-id.*--no-build-id-check"
[ ! -s "$work/elf_no_build_id.out" ]; ok $? "ELF without a build id: nothing decoded"
run elf_no_build_id_check 0 --no-build-id-check --elf "$work/elf_no_build_id" "$files/good.embl"
has elf_no_build_id_check "the ELF carries no build id"
[ "$(wc -l < "$work/elf_no_build_id_check.out")" -eq 300 ]; ok $? "ELF without a build id, --no-build-id-check: decoded"
run bad_id 2 --elf "$elf" --raw --color=never "$files/bad_id.raw"
has bad_id "bad_id.raw: byte 26: .*id 0xfff0 outside the log metadata region"
grep -q -- "--  unknown id 0xfff0: f0 ff" "$work/bad_id.out"; ok $? "bad id: a placeholder with the raw bytes"
grep -q -- "--  resynchronised at a sync marker" "$work/bad_id.out"; ok $? "bad id: decoding resumes at the next sync marker"
run bad_strlen 2 --elf "$elf" --raw "$files/bad_strlen.raw"
has bad_strlen "bad_strlen.raw: byte 40: .*%s length out of bounds"
run strlen_past_end 2 --elf "$elf" --raw "$files/strlen_past_end.raw"
has strlen_past_end "byte 40: .*the stream ends inside a record"

# ---- Joined mid-stream: a notice, and decoding from the next sync marker ----
run joined 0 --elf "$elf" --color=never "$files/joined.embl"
has joined "note: skipped [0-9]* bytes before the first frame delimiter"
grep -q -- "--  resynchronised at a sync marker after skipping" "$work/joined.out"; ok $? "joined: resynchronisation shown"
run joined_raw 0 --elf "$elf" --raw --clock-hz 1000000000 --color=never "$files/joined.raw"
grep -q -- "--  resynchronised at a sync marker after skipping [0-9]* bytes" "$work/joined_raw.out"; ok $? "joined raw: resynchronisation shown"

# ---- --follow on a live pipe: the first record is printed while the writer still runs ----
rm -f "$work/marker"
( "$follow" pipe "$work/marker" 200 | "$emb" log --elf "$follow" --follow --color=never - > "$work/pipe.out" 2> "$work/pipe.err"; echo $? > "$work/pipe.rc" ) &
live=1
for _ in $(seq 1 500); do grep -q "ready" "$work/pipe.out" 2>/dev/null && { live=0; break; }; sleep 0.01; done
ok $live "--follow on a pipe: 'ready' decoded while the writer waits"
touch "$work/marker"
wait
[ "$(cat "$work/pipe.rc")" = 0 ]; ok $? "--follow on a pipe: exit 0 at the end of the stream"
[ "$(grep -c "record [0-9]* of 200" "$work/pipe.out")" -eq 200 ] && grep -q "WRN  follow  .*done" "$work/pipe.out"
ok $? "--follow on a pipe: every record"

# ---- --follow on a TCP stream ----
rm -f "$work/marker"
"$follow" tcp "$work/marker" 300 > "$work/tcp.port" &
writer=$!
port=
for _ in $(seq 1 500); do port=$(sed -n 's/^port //p' "$work/tcp.port"); [ -n "$port" ] && break; sleep 0.01; done
( "$emb" log --elf "$follow" --follow --json "tcp:127.0.0.1:$port" > "$work/tcp.out" 2> "$work/tcp.err"; echo $? > "$work/tcp.rc" ) &
live=1
for _ in $(seq 1 500); do grep -q '"ready"' "$work/tcp.out" 2>/dev/null && { live=0; break; }; sleep 0.01; done
ok $live "--follow on TCP: 'ready' decoded while the writer waits"
touch "$work/marker"
wait "$writer"
wait
[ "$(cat "$work/tcp.rc")" = 0 ]; ok $? "--follow on TCP: exit 0 when the target closes"
[ "$(grep -c '"text":"record [0-9]* of 300"' "$work/tcp.out")" -eq 300 ]; ok $? "--follow on TCP: every record"
run tcp_refused 2 --elf "$follow" "tcp:127.0.0.1:1"
has tcp_refused "cannot connect"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
