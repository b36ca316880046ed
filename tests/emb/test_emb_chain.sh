#!/usr/bin/env bash
# The commands chain as shell tools do: every decoding command reads a sealed capture and
# standard input, `emb capture extract` gives each section back byte for byte, a named FIFO
# fed in bursts loses nothing, `emb capture --json` sums up like the other commands, names
# a target gave are escaped in every output, and a failed run leaves -o's earlier output.
# The inputs are made here by the console demo (trace, log, crash record) and by
# hostile_names (names holding ESC ] 0;...BEL).
# usage: test_emb_chain.sh EMB CONSOLE HOSTILE_NAMES DESCRIPTOR_IMAGE WORKDIR
set -u
emb=$1 console=$2 hostile=$3 desc_image=$4 tmp=$5
rm -rf "$tmp" && mkdir -p "$tmp" && cd "$tmp" || exit 2
. "$(dirname "$0")/../support/tap_check.sh"

{ "$console" --frames 100 --retained r.bin --fault-frame 30 -o crashed.embt >/dev/null 2>&1; } 2>/dev/null
"$console" --frames 60 --retained r.bin --crash-out crash.rec -o run.embt --log run.embl \
    >/dev/null 2>&1
ok $? "the console made a trace, a log and a crash record"
# Sealed without --save-trace: the capture is the only copy of the trace that travels on.
"$emb" capture --log run.embl --crash crash.rec --descriptor "$desc_image" -o run.emb run.embt \
    >/dev/null 2>&1
ok $? "they seal into a capture, with a descriptor snapshot"

# ---- 1. A capture wherever a file is expected, and its sections given back ----
"$emb" trace --format perfetto run.emb > cap.json 2>cap.err &&
    "$emb" trace --format perfetto run.embt > file.json && cmp -s cap.json file.json
ok $? "emb trace --format perfetto CAPTURE: the trace section, as from the trace file"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["traceEvents"]) > 100 else 1)' cap.json
ok $? "and it is a Perfetto JSON trace with its events"
"$emb" trace --color=never run.emb > cap.txt && "$emb" trace --color=never run.embt > file.txt &&
    cmp -s cap.txt file.txt
ok $? "emb trace CAPTURE: the same text as the trace file"
"$emb" log --color=never --elf "$console" run.emb > cap.log && \
    "$emb" log --color=never --elf "$console" run.embl > file.log && cmp -s cap.log file.log
ok $? "emb log CAPTURE: the log section"
"$emb" crash --color=never --elf "$console" run.emb > cap.crash; rc1=$?
"$emb" crash --color=never --elf "$console" crash.rec > file.crash; rc2=$?
[ "$rc1" -eq "$rc2" ] && grep -q "fault" cap.crash && diff <(tail -n +2 cap.crash) <(tail -n +2 file.crash) >/dev/null
ok $? "emb crash CAPTURE: the crash section (exit $rc1 as for the record, $rc2)"
"$emb" desc --json --dump run.emb --base 0x20000000 | grep -v '"source"' > cap.desc &&
    "$emb" desc --json --dump "$desc_image" --base 0x20000000 | grep -v '"source"' > file.desc &&
    cmp -s cap.desc file.desc && grep -q '"contexts"' cap.desc
ok $? "emb desc --dump CAPTURE: the descriptor section"
"$emb" inspect run.emb > /dev/null && "$emb" diff --same-build run.emb run.emb > /dev/null
ok $? "emb inspect and emb diff read the capture"
"$emb" capture --file run.embt --save-trace saved.embt -o live.emb > /dev/null 2>&1 &&
    "$emb" capture extract live.emb --trace -o extracted.embt && cmp -s saved.embt extracted.embt
ok $? "capture extract --trace: byte for byte what --save-trace wrote"
"$emb" capture extract run.emb --log -o x.embl && cmp -s x.embl run.embl
ok $? "capture extract --log: the log stream as given"
"$emb" capture extract run.emb --crash -o x.rec && cmp -s x.rec crash.rec
ok $? "capture extract --crash: the crash record"
"$emb" capture extract run.emb --descriptor -o x.bin && cmp -s x.bin "$desc_image"
ok $? "capture extract --descriptor: the descriptor snapshot"
"$emb" capture extract live.emb --log -o none.embl 2> none.err
[ $? -eq 2 ] && grep -q "holds no log section" none.err && [ ! -e none.embl ]
ok $? "capture extract of a missing section: exit 2, said, nothing written"
"$emb" capture extract run.embt --trace -o not.embt 2> not.err
[ $? -eq 2 ] && grep -q "not a sealed capture" not.err
ok $? "capture extract of a trace file: refused"

# ---- 2. Standard input wherever a file is expected ----
"$emb" trace --color=never - < run.embt > in.txt && cmp -s in.txt file.txt
ok $? "emb trace - reads standard input"
cat run.emb | "$emb" trace --color=never - > inpipe.txt && cmp -s inpipe.txt file.txt
ok $? "emb trace - takes a capture from a pipe"
cat run.emb | "$emb" log --color=never --elf "$console" - > in.log && cmp -s in.log file.log
ok $? "emb log - takes a capture from a pipe"
cat crash.rec | "$emb" crash --color=never --elf "$console" - > in.crash
[ $? -eq "$rc2" ] && diff <(tail -n +2 in.crash) <(tail -n +2 file.crash) >/dev/null
ok $? "emb crash - reads standard input"
cat run.emb | "$emb" inspect - > in.inspect && "$emb" inspect run.emb > file.inspect &&
    diff <(tail -n +2 in.inspect) <(tail -n +2 file.inspect) >/dev/null
ok $? "emb inspect - reads standard input"
cat run.emb | "$emb" diff --same-build - run.emb > /dev/null
ok $? "emb diff - CAPTURE reads standard input"
cat "$desc_image" | "$emb" desc --json --dump - --base 0x20000000 | grep -v '"source"' > in.desc &&
    cmp -s in.desc file.desc
ok $? "emb desc --dump - reads standard input"
cat run.emb | "$emb" capture extract - --log -o - | cmp -s - run.embl
ok $? "emb capture extract - -o - : a pipe in, a pipe out"
cat run.embt | "$emb" capture -o piped.emb - > /dev/null && "$emb" inspect piped.emb > /dev/null
ok $? "emb capture - seals standard input"

# ---- 3. A named FIFO fed in bursts loses nothing ----
"$console" --frames 1000 -o big.embt --log big.embl > /dev/null 2>&1
"$emb" log --json --elf "$console" big.embl > whole.ndjson
mkfifo log.fifo
python3 - big.embl log.fifo <<'PY' &
import sys, time
data = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb", buffering=0) as f:
    for i in range(0, len(data), 64):    # bursts of 64 bytes, 10 ms apart
        f.write(data[i:i + 64])
        time.sleep(0.01)
PY
writer=$!
timeout 60 "$emb" log --follow --json --elf "$console" log.fifo > fifo.ndjson 2> fifo.err
rc=$?
wait "$writer"
# The frame loop logs 22 records whatever the load (start, every 50th frame, done); the
# audio thread's and the timer's records come as often as the host schedules them.
[ "$rc" -eq 0 ] && [ "$(wc -l < whole.ndjson)" -ge 22 ] &&
    [ "$(wc -l < fifo.ndjson)" -eq "$(wc -l < whole.ndjson)" ] &&
    [ "$(sort fifo.ndjson | md5sum)" = "$(sort whole.ndjson | md5sum)" ]
ok $? "emb log --follow FIFO: all $(wc -l < whole.ndjson) records (got $(wc -l < fifo.ndjson), exit $rc)"

# ---- 4. emb capture --json ----
"$emb" capture --json --label good -o j.emb run.embt > cap.jsonsum 2> /dev/null
python3 - cap.jsonsum <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = (d["file"] == "j.emb" and d["source"] == "run.embt" and d["identity"]["label"] == "good"
      and d["window"]["stored"] > 0 and d["bytes"] > 0)
sys.exit(0 if ok else 1)
PY
ok $? "emb capture --json: file, source, bytes, identity, window"
"$emb" inspect --json j.emb > j.inspect
python3 - cap.jsonsum j.inspect <<'PY'
import json, sys
c, i = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if c["identity"] == i["identity"] and c["window"] == i["window"] else 1)
PY
ok $? "its identity and window are what emb inspect --json says of the file"

# ---- 6. Names a target gave, escaped in every output ----
"$hostile" h.embt h.embl
ok $? "hostile_names recorded its run"
"$emb" capture -o h.emb h.embt > /dev/null 2>&1
ok $? "and it seals"
clean() {
    local file=$1 what=$2
    [ -s "$file" ] && ! LC_ALL=C grep -q $'[\033\007]' "$file" && ! LC_ALL=C grep -q $'\302[\200-\237]' "$file"
    ok $? "$what: no ESC, BEL or C1 control"
}
"$emb" trace --color=never h.embt > h.txt 2>&1
clean h.txt "emb trace text"
grep -q 'handle=\\x1B\]0;PW\\x07q(0x51)' h.txt
ok $? "emb trace text: handle= shows the name escaped"
grep -q 'thread=\\x1B\]0;PW\\x07q(7)' h.txt
ok $? "emb trace text: thread= shows the name escaped"
for f in ndjson perfetto; do
    "$emb" trace -f "$f" h.embt > "h.$f" 2>&1; clean "h.$f" "emb trace -f $f"
done
"$emb" trace --json h.embt > h.json 2>&1; clean h.json "emb trace --json"
"$emb" trace --summary h.embt > h.sum 2>&1; clean h.sum "emb trace --summary"
"$emb" inspect h.emb > h.inspect 2>&1; clean h.inspect "emb inspect"
"$emb" diff --same-build --html h.html h.emb h.emb > h.diff 2>&1
clean h.diff "emb diff"; clean h.html "emb diff --html"
"$emb" log --color=never --elf "$hostile" h.embl > h.log 2>&1; clean h.log "emb log"
"$emb" log --json --elf "$hostile" h.embl > h.logjson 2>&1; clean h.logjson "emb log --json"

# ---- 7. A failed run leaves -o's earlier output ----
echo "earlier output" > keep.txt
"$emb" trace -o keep.txt not-there.embt 2> /dev/null
[ $? -eq 2 ] && [ "$(cat keep.txt)" = "earlier output" ]
ok $? "emb trace -o: a missing input leaves the earlier file"
{ printf 'XXXX'; tail -c +5 run.embt; } > badmagic.embt
"$emb" trace -o keep.txt badmagic.embt 2> /dev/null
[ $? -eq 2 ] && [ "$(cat keep.txt)" = "earlier output" ]
ok $? "emb trace -o: a trace refused whole leaves the earlier file"
"$emb" trace -o keep.txt run.embt && cmp -s keep.txt file.txt
ok $? "emb trace -o: a clean run replaces it"
"$emb" trace -f ctf -o ctf.d run.embt && echo marker > ctf.d/.earlier
"$emb" trace -f ctf -o ctf.d badmagic.embt 2> /dev/null
[ $? -eq 2 ] && [ -e ctf.d/.earlier ] && [ -e ctf.d/metadata ]
ok $? "emb trace -f ctf -o DIR: a failed run leaves the earlier directory"
"$emb" trace -f ctf -o ctf.d run.embt && [ ! -e ctf.d/.earlier ] && [ -e ctf.d/metadata ] &&
    [ -z "$(ls -a . | grep '^\.ctf\.d\.')" ]
ok $? "emb trace -f ctf -o DIR: a clean run replaces it, no temporary left"
echo "earlier log" > keep.log
"$emb" log --elf "$console" -o keep.log badmagic.embt 2> /dev/null
[ $? -eq 2 ] && [ "$(cat keep.log)" = "earlier log" ]
ok $? "emb log -o: a failed decode leaves the earlier file"
echo "earlier capture" > keep.emb
head -c 3000 run.embt > cut.embt
"$emb" capture -o keep.emb cut.embt 2> /dev/null
[ $? -eq 2 ] && [ "$(cat keep.emb)" = "earlier capture" ]
ok $? "emb capture -o: a failed seal leaves the earlier file"
[ -z "$(ls -a . | grep '^\.keep\.')" ]
ok $? "no temporary file is left behind"
echo "earlier" > file-target.txt && ln -s file-target.txt link.txt &&
    "$emb" trace -o link.txt run.embt && [ -L link.txt ] && cmp -s file-target.txt file.txt
ok $? "-o through a symbolic link replaces the file it names and keeps the link"
ln -s new-target.txt dangling.txt && "$emb" trace -o dangling.txt run.embt && [ -L dangling.txt ] &&
    cmp -s new-target.txt file.txt
ok $? "-o through a link to no file yet makes that file"

tap_summary
