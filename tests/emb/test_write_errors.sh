#!/usr/bin/env bash
# Every write is checked: each subcommand, in each output mode, writing to /dev/full (every
# write fails with ENOSPC) must exit 2 and name the output it could not write, never exit 0
# with its output lost. The inputs are made here by the console demo (a trace, a log, a
# crash record) and sealed into a capture.
# usage: test_write_errors.sh EMB CONSOLE DESCRIPTOR_IMAGE RTEMS_STREAMS_DIR WORKDIR
set -u
emb=$1 console=$2 desc_image=$3 rtems=$4 tmp=$5
rm -rf "$tmp" && mkdir -p "$tmp" && cd "$tmp" || exit 2
. "$(dirname "$0")/../support/tap_check.sh"

# The first run dies of its seeded fault (the shell's "Segmentation fault" line goes too).
{ "$console" --frames 100 --retained r.bin --fault-frame 30 -o crashed.embt >/dev/null 2>&1; } 2>/dev/null
"$console" --frames 60 --retained r.bin --crash-out crash.rec -o run.embt --log run.embl \
    >/dev/null 2>&1
ok $? "the console made a trace, a log and a crash record"
"$emb" capture --log run.embl --crash crash.rec -o run.emb run.embt >/dev/null 2>&1
ok $? "and they seal into a capture"

# full WHAT NAME STDOUT CMD...: CMD, its stdout to STDOUT, exits 2 and says it could not
# write NAME (a grep pattern).
full() {
    local what=$1 name=$2 stdout=$3
    shift 3
    "$@" >"$stdout" 2>err.txt
    local rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$name" err.txt && grep -q "write" err.txt
    ok $? "$what: exit $rc, $(head -c 200 err.txt | tr '\n' ' ')"
}
# stdout is /dev/full.
out() { local what=$1; shift; full "$what >/dev/full" "stdout\|standard output" /dev/full "$@"; }
# -o (or another option) names /dev/full.
file() { local what=$1; shift; full "$what" "/dev/full" /dev/null "$@"; }

out "emb --help" "$emb" --help
out "emb --version" "$emb" --version
out "emb help trace" "$emb" help trace
for c in trace log capture inspect diff events crash desc import; do
    out "emb $c --help" "$emb" "$c" --help
done
out "trace" "$emb" trace run.embt
out "trace --json" "$emb" trace --json run.embt
out "trace --summary" "$emb" trace --summary run.embt
out "trace --summary --json" "$emb" trace --summary --json run.embt
out "trace -f ndjson" "$emb" trace -f ndjson run.embt
out "trace -f perfetto" "$emb" trace -f perfetto run.embt
file "trace -o" "$emb" trace -o /dev/full run.embt
file "trace -f ndjson -o" "$emb" trace -f ndjson -o /dev/full run.embt
out "log" "$emb" log --elf "$console" run.embl
out "log --json" "$emb" log --elf "$console" --json run.embl
file "log -o" "$emb" log --elf "$console" -o /dev/full run.embl
out "log of a capture" "$emb" log --elf "$console" run.emb
file "capture -o" "$emb" capture -o /dev/full run.embt
file "capture --save-trace" "$emb" capture --file run.embt --save-trace /dev/full -o cap2.emb
out "inspect" "$emb" inspect run.emb
out "inspect --json" "$emb" inspect --json run.emb
out "diff" "$emb" diff --same-build run.emb run.emb
out "diff --json" "$emb" diff --same-build --json run.emb run.emb
file "diff --html" "$emb" diff --same-build --html /dev/full run.emb run.emb
out "crash" "$emb" crash --elf "$console" crash.rec
out "crash --json" "$emb" crash --elf "$console" --json crash.rec
out "desc --dump" "$emb" desc --dump "$desc_image" --base 0x20000000
out "desc --dump --json" "$emb" desc --dump "$desc_image" --base 0x20000000 --json
file "desc --dump-trace" "$emb" desc --dump "$desc_image" --base 0x20000000 --dump-trace /dev/full
file "import -o" "$emb" import rtems-record "$rtems/v10_le32.rec" -o /dev/full
file "import --capture" "$emb" import rtems-record "$rtems/v10_le32.rec" -o imp.embt --capture /dev/full
file "import --catalog-out" "$emb" import rtems-record "$rtems/v10_le32.rec" -o imp.embt --catalog-out /dev/full
out "import --json" "$emb" import rtems-record "$rtems/v10_le32.rec" -o imp.embt --json

tap_summary
