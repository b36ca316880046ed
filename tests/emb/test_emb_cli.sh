#!/usr/bin/env bash
# The `emb` command line: help, usage errors and exit statuses, and `emb trace` on the
# hand-built files of make_trace_files (every format, every kind of bad input).
# usage: test_emb_cli.sh EMB TRACE_FILES_DIR SCRATCH_DIR CATALOG_YAML
set -u
emb=$1 files=$2 tmp=$3 catalog=$4
rm -rf "$tmp" && mkdir -p "$tmp"
. "$(dirname "$0")/../support/tap_check.sh"

# run EXPECTED-STATUS DESCRIPTION CMD...: runs, keeps stdout/stderr in $tmp/out, $tmp/err
run() {
    local want=$1 what=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    [ "$got" -eq "$want" ]; ok $? "$what (exit $got, want $want)"
    [ "$got" -eq "$want" ] || { echo "# stderr:"; sed 's/^/#   /' "$tmp/err" | head -20; }
}
has() { grep -qF -- "$2" "$tmp/$1"; ok $? "$3"; }
lines() { [ "$(wc -l <"$tmp/$1")" -eq "$2" ]; ok $? "$3 ($(wc -l <"$tmp/$1") lines, want $2)"; }

# ---- the command ----
run 0 "emb --help" "$emb" --help
has out "Usage: emb" "--help prints usage on stdout"
commands=$(awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' "$tmp/out")
[ -n "$commands" ]; ok $? "--help lists the subcommands: $(echo $commands)"
run 0 "emb --version" "$emb" --version
has out "emb " "--version names the tool"
for c in $commands; do
    run 0 "emb $c --help" "$emb" "$c" --help
    has out "Usage: emb $c" "emb $c --help prints its usage"
    run 0 "emb help $c" "$emb" help "$c"
    has out "Usage: emb $c" "emb help $c prints the same usage"
    run 2 "emb $c --no-such-option" "$emb" "$c" --no-such-option x
    has err "no-such-option" "the unknown option is named"
done
run 2 "emb with no arguments" "$emb"
run 2 "unknown command" "$emb" frobnicate
has err "unknown command 'frobnicate'" "the unknown command is named"
has err "Usage: emb" "usage on stderr"
[ ! -s "$tmp/out" ]; ok $? "nothing on stdout"
run 2 "unknown option before the command" "$emb" --frobnicate
run 2 "emb help of an unknown command" "$emb" help frobnicate

# ---- emb trace: usage ----
run 2 "trace without a file" "$emb" trace
run 2 "trace with two files" "$emb" trace a b
run 2 "option without its value" "$emb" trace "$files/good.embt" -o
has err "option '-o' needs a value" "the option is named"
run 2 "unknown format" "$emb" trace -f xml "$files/good.embt"
run 2 "ctf needs -o" "$emb" trace -f ctf "$files/good.embt"
run 2 "bad --color value" "$emb" trace --color=blue "$files/good.embt"
run 2 "missing file" "$emb" trace "$tmp/no-such-file.embt"
has err "$tmp/no-such-file.embt" "the missing file is named"
has err "No such file" "and why"

# ---- emb trace: good input, every format ----
run 0 "text" "$emb" trace "$files/good.embt"
lines out 28 "26 events and 2 loss lines"
has out "-- 12 events discarded in ctx audio" "discarded events where they happened"
has out "-- 2 packets lost in ctx audio" "lost packets where they happened"
has out "reason=block" "enum labels"
has out 'name="idle"' "char[N] as quoted text"
has out "item=0x0000cafe" "hex fields"
has out "code=-3" "signed fields"
has out "switched=true" "bool fields"
has out "pc=0x8000123456789abc" "u64 hex fields"
grep -q "^0.000000350  cpu0  *isr2  *irq_enter  *irq=3$" "$tmp/out"; ok $? "aligned columns, nested ISR marked isr2"
grep -q "FAULT  partition_fault" "$tmp/out"; ok $? "fault context marked"
grep -q $'\033' "$tmp/out"; ok $((! $?)) "no colour when stdout is not a terminal"
has err "ctx audio: 12 events discarded, 2 packets lost" "loss summary on stderr"
run 0 "text, --color=always" "$emb" trace --color=always "$files/good.embt"
grep -q $'\033\[2m0.000000000' "$tmp/out"; ok $? "--color=always: dim time"
run 0 "text, --absolute" "$emb" trace --absolute "$files/good.embt"
has out "2023-11-14 22:13:20.123457789Z" "--absolute: wall clock from the header's offset"
run 0 "text, -o FILE" "$emb" trace -o "$tmp/good.txt" "$files/good.embt"
[ "$(wc -l <"$tmp/good.txt")" -eq 28 ] && [ ! -s "$tmp/out" ]; ok $? "-o writes the file, not stdout"
run 0 "--summary" "$emb" trace --summary "$files/good.embt"
grep -q "^audio  *1  *thread  *10  *2  *12  *2  *0$" "$tmp/out"; ok $? "--summary: per-context counts"

run 0 "ndjson" "$emb" trace -f ndjson "$files/good.embt"
lines out 28 "one line per record"
cp "$tmp/out" "$tmp/good.ndjson"
python3 - "$tmp/good.ndjson" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ev = [r for r in recs if "loss" not in r]
assert len(ev) == 26, len(ev)
assert set(ev[0]) == {"ts", "ns", "context", "context_id", "kind", "depth", "event", "class", "id", "fields"}, ev[0]
sw = [r for r in ev if r["event"] == "switch"][1]
assert sw["fields"] == {"from": 1, "to": 2, "reason": "block"} and sw["class"] == "sched", sw
irq = [r for r in ev if r["event"] == "irq_enter"][1]
assert irq["kind"] == "isr" and irq["depth"] == 2 and irq["ns"] == 350, irq
assert [r["ts"] for r in recs] == sorted(r["ts"] for r in recs)
loss = [(r["loss"], r["count"]) for r in recs if "loss" in r]
assert loss == [("events_discarded", 12), ("packets_lost", 2)], loss
assert [r for r in ev if r["event"] == "obj_init"][0]["fields"]["name"] == "idle"
EOF
ok $? "ndjson: keys, values, order, losses"

run 0 "--json" "$emb" trace --json "$files/good.embt"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"file", "header", "contexts", "events", "summary", "issues"}, set(d)
assert d["summary"]["events"] == 26 and len(d["events"]) == 28
assert [c["name"] for c in d["contexts"]] == ["cpu0", "audio", "net \"rx\""]
assert d["header"]["clock_hz"] == 1000000000 and d["issues"] == []
' "$tmp/out"
ok $? "--json: one document with header, contexts, events, summary"
run 0 "--json --summary" "$emb" trace --json --summary "$files/good.embt"
cp "$tmp/out" "$tmp/good.header.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "events" not in d and d["summary"]["events"] == 26' "$tmp/out"
ok $? "--json --summary: no events"

run 0 "perfetto" "$emb" trace -f perfetto -o "$tmp/good.perfetto.json" "$files/good.embt"
python3 - "$tmp/good.perfetto.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["displayTimeUnit"] == "ns"
ev = d["traceEvents"]
# Every event has the fields the Trace Event Format gives every event.
for e in ev:
    assert all(k in e for k in ("name", "cat", "ph", "ts", "pid", "tid", "args")), e
assert not [e for e in ev if e["ph"] in "BE"], "complete (X) slices only"
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert names[(1, 1)] == "cpu0" and names[(1, 2)] == "audio" and names[(2, 1)] == "cpu0 running", names
for e in ev:
    if e["ph"] != "M":
        assert isinstance(e["ts"], float), e
# Slices of a track nest: each ends before the one around it does.
tracks = {}
for e in sorted((e for e in ev if e["ph"] == "X"), key=lambda e: (e["ts"], -e["dur"])):
    s = tracks.setdefault((e["pid"], e["tid"]), [])
    while s and s[-1] <= e["ts"]:
        s.pop()
    assert not s or e["ts"] + e["dur"] <= s[-1] + 1e-9, e
    s.append(e["ts"] + e["dur"])
x = [e["name"] for e in ev if e["ph"] == "X"]
for want in ("irq 11", "irq 3", "frame 1", "wait queue", "work 0x0000cafe", "sched_lock", "idle"):
    assert want in x, (want, x)
# The scheduler track names threads as the text output does: "to=idle(1)", "to=2".
assert [e["name"] for e in ev if e["ph"] == "X" and e["pid"] == 2] == ["idle(1)", "2"], x
assert x.count("irq 11") == 2  # split around frame_end, which ended inside it
c = [(e["name"], e["args"]) for e in ev if e["ph"] == "C"]
assert ("msgq 0x00030001 used", {"value": 2}) in c and ("events discarded (audio)", {"value": 12}) in c, c
assert ("packets lost (audio)", {"value": 2}) in c, c
# cpu0 runs a thread from its switch at 0.1 us to idle_enter at 1.0 us of a 1.2 us trace.
assert ("cpu load (cpu0)", {"value": 75}) in c, c
i = [e for e in ev if e["ph"] == "i"]
assert all(e["s"] == "t" for e in i)
assert any(e["name"] == "partition_fault" and e["args"]["pc"] == "0x8000123456789abc" for e in i)
assert not any(e["name"] in ("work_end", "wait_end") for e in i)  # unmatched ends: dropped
# msgq_send -> msgq_receive on queue 0x00030001: the first send is served first.
fl = {e["ph"]: e for e in ev if e["ph"] in "sf"}
assert fl["s"]["ts"] == 0.270 and fl["f"]["ts"] == 0.910 and fl["s"]["id"] == fl["f"]["id"], fl
EOF
ok $? "perfetto: valid JSON, X slices nested on every track, counters, flows, instants"

run 0 "ctf" "$emb" trace -f ctf -o "$tmp/ctf" "$files/good.embt"
[ "$(ls "$tmp/ctf" | tr '\n' ' ')" = "metadata stream_0 stream_1 stream_2 " ]; ok $? "ctf: metadata and one stream per context, nothing else"
head -c 10 "$tmp/ctf/metadata" | grep -q '/\* CTF 1.8'; ok $? "metadata is CTF 1.8 TSDL"
run 0 "ctf again into the same directory" "$emb" trace -f ctf -o "$tmp/ctf" "$files/good.embt"
touch "$tmp/ctf/notes.txt"
run 2 "ctf into a directory holding another file" "$emb" trace -f ctf -o "$tmp/ctf" "$files/good.embt"
has err "notes.txt" "the stray file is named"
rm "$tmp/ctf/notes.txt"
if command -v babeltrace2 >/dev/null; then
    run 0 "babeltrace2 reads the CTF directory" babeltrace2 "$tmp/ctf"
    [ "$(grep -c '^\[' "$tmp/out")" -eq 26 ]; ok $? "babeltrace2 prints the 26 events"
    run 0 "babeltrace2 and emb agree on every event" /usr/bin/python3 "$(dirname "$0")/../support/bt_compare.py" \
        "$tmp/ctf" "$tmp/good.ndjson" "$tmp/good.header.json"
    cat "$tmp/out" | sed 's/^/# /'
fi

# ---- another catalogue ----
run 0 "--catalog with the same catalogue" "$emb" trace --catalog "$catalog" "$files/good.embt"
cmp -s "$tmp/out" "$tmp/good.txt"; ok $? "decodes the same"
sed 's/name: tickless_sleep/name: tickless_nap/' "$catalog" >"$tmp/other.yaml"
run 2 "--catalog with another catalogue" "$emb" trace --catalog "$tmp/other.yaml" "$files/good.embt"
sum=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["header"]["catalog_checksum"])' "$tmp/good.header.json")
has err "$sum" "the trace's checksum is printed"
grep -q "differs from the catalogue's 0x[0-9a-f]\{8\}" "$tmp/err" && ! grep -q "catalogue's $sum" "$tmp/err"
ok $? "and the other catalogue's"
printf 'version: 1\nclasses: [\n' >"$tmp/broken.yaml"
run 2 "--catalog that does not parse" "$emb" trace --catalog "$tmp/broken.yaml" "$files/good.embt"
has err "broken.yaml" "the catalogue file is named"

# ---- bad input ----
run 2 "corrupted packet in the middle" "$emb" trace "$files/corrupt.embt"
has err "corrupt.embt: byte 1232: bad packet magic 0xdeadbeef" "file, offset and reason"
lines out 26 "the other packets still decode (23 events, 3 loss lines)"
has out "-- 1 packet lost in ctx cpu0" "the skipped packet shows as a gap"
run 2 "corrupted packet, ndjson" "$emb" trace -f ndjson "$files/corrupt.embt"
lines out 26 "ndjson output too"
run 2 "corrupted packet, ctf" "$emb" trace -f ctf -o "$tmp/ctf-corrupt" "$files/corrupt.embt"
[ "$(stat -c %s "$tmp/ctf-corrupt/stream_0")" -eq 1024 ]; ok $? "ctf: only the valid packets are copied"
run 2 "truncated file" "$emb" trace "$files/truncated.embt"
has err "truncated.embt: byte 2768: truncated packet: 212 of 512 bytes" "the truncation is reported"
has out "partition_fault" "earlier packets still decode"
run 2 "wrong magic" "$emb" trace "$files/badmagic.embt"
has err "badmagic.embt: byte 0: not a trace stream file" "wrong magic reported at byte 0"
[ ! -s "$tmp/out" ]; ok $? "nothing decoded"
run 2 "catalogue checksum mismatch" "$emb" trace "$files/badcsum.embt"
grep -q "badcsum.embt: byte 8: catalogue checksum 0x12345678 differs from the catalogue's $sum" "$tmp/err"
ok $? "both checksums printed"
run 2 "unknown event id" "$emb" trace "$files/unknown.embt"
has err "unknown event id 0x7777" "the unknown id is reported"
has out "?0x7777  (unknown event" "and shown as a placeholder where it was"
for f in "$files/random.bin" /dev/null "$files/good.embt"; do
    for fmt in text ndjson perfetto; do
        head -c 3000 "$f" >"$tmp/cut" 2>/dev/null
        "$emb" trace -f $fmt "$tmp/cut" >/dev/null 2>&1
        s=$?; [ $s -le 2 ]; ok $? "$(basename "$f") cut, $fmt: no crash (exit $s)"
    done
done
run 2 "random bytes" "$emb" trace "$files/random.bin"

tap_summary
