#!/usr/bin/env bash
# Whole-file reads are bounded (EMB_INPUT_LIMIT, default 1 GiB, docs/emb-trace.md): /dev/zero,
# a pipe that never ends and a huge sparse file given to every command that reads a whole
# file end with exit 2 and a message naming the file and the limit, quickly, instead of
# growing to the allocation limit; a directory is refused as one; a --rules file is bounded
# by its own 1 MiB. The address space is capped (except under AddressSanitizer, which
# reserves terabytes) so that a regression fails here instead of exhausting the machine.
# usage: test_input_limits.sh EMB CONSOLE WORKDIR
set -u
shopt -s lastpipe # the counters of ok() survive `producer | refused ...`
emb=$1 console=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp" && cd "$tmp" || exit 2
. "$(dirname "$0")/../support/tap_check.sh"
ldd "$emb" 2>/dev/null | grep -q libasan || ulimit -v $((6 * 1024 * 1024))

"$console" --frames 40 -o run.embt --log run.embl >/dev/null 2>&1
"$emb" capture -o run.emb run.embt >/dev/null 2>&1
ok $? "a trace and a capture to read"
truncate -s 64G sparse.bin

# refused WHAT PATTERN CMD...: exit 2 within the timeout, stderr matching PATTERN.
refused() {
    local what=$1 pattern=$2
    shift 2
    timeout 60 "$@" >/dev/null 2>err.txt
    local rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$pattern" err.txt
    ok $? "$what: exit $rc: $(head -c 200 err.txt | tr '\n' ' ')"
}
# The default limit, once, on /dev/zero: 1 GiB read and refused.
refused "trace /dev/zero (default limit)" "/dev/zero: .*more than the input limit of 1073741824 bytes" \
    "$emb" trace /dev/zero
# A sparse file is refused by its size before anything is read, at the default limit.
for c in "trace" "inspect" "capture -o x.emb" "capture -o x.emb --retained"; do
    # shellcheck disable=SC2086
    refused "$c sparse.bin" "sparse.bin: 68719476736 bytes: more than the input limit" "$emb" $c sparse.bin
done
refused "capture --log sparse.bin" "sparse.bin: 68719476736 bytes: more than" \
    "$emb" capture -o x.emb --log sparse.bin run.embt
refused "diff of sparse.bin" "sparse.bin: 68719476736 bytes: more than" "$emb" diff sparse.bin run.emb
# /dev/zero and a FIFO fed forever, with a smaller limit to keep the test short.
export EMB_INPUT_LIMIT=16M
for c in "trace" "inspect" "capture -o x.emb" "capture -o x.emb --retained" "capture -o x.emb --file"; do
    # shellcheck disable=SC2086
    refused "$c /dev/zero" "/dev/zero: .*more than the input limit of 16777216 bytes" "$emb" $c /dev/zero
done
refused "capture --log /dev/zero" "/dev/zero: .*more than the input limit" \
    "$emb" capture -o x.emb --log /dev/zero run.embt
refused "capture --descriptor /dev/zero" "/dev/zero: .*more than the input limit" \
    "$emb" capture -o x.emb --descriptor /dev/zero run.embt
refused "diff /dev/zero" "/dev/zero: .*more than the input limit" "$emb" diff /dev/zero run.emb
refused "diff run.emb /dev/zero" "/dev/zero: .*more than the input limit" "$emb" diff run.emb /dev/zero
# A pipe that never ends (/dev/stdin is the pipe itself, as a FIFO would be).
for c in "trace" "inspect"; do
    cat /dev/zero 2>/dev/null | refused "$c of an endless pipe" "/dev/stdin: .*more than the input limit" \
        "$emb" $c /dev/stdin
done
# A FIFO, held open read-write by the test so that no open() waits for the other side.
mkfifo fifo
exec 3<>fifo
cat /dev/zero >&3 2>/dev/null &
feeder=$!
refused "trace of an endless FIFO" "fifo: .*more than the input limit" "$emb" trace fifo
kill "$feeder" 2>/dev/null
wait "$feeder" 2>/dev/null
exec 3>&-
refused "trace of a directory" ": is a directory" "$emb" trace .
refused "inspect of a directory" ": is a directory" "$emb" inspect .
# The limit is the user's: a file over it is refused, the same file under it decodes.
EMB_INPUT_LIMIT=4K refused "EMB_INPUT_LIMIT=4K: trace of a larger file" "more than the input limit of 4096" \
    "$emb" trace run.embt
EMB_INPUT_LIMIT=1M "$emb" trace --summary run.embt >/dev/null 2>&1
ok $? "EMB_INPUT_LIMIT=1M: the same file decodes"
unset EMB_INPUT_LIMIT
# A rules file: its own bound, and a directory is not an empty file of rules.
refused "diff --rules /dev/zero" "/dev/zero: .*more than the input limit of 1048576 bytes" \
    "$emb" diff --rules /dev/zero run.emb run.emb
refused "diff --rules DIRECTORY" ": is a directory" "$emb" diff --rules . run.emb run.emb
printf 'rule missing on\n\0rule extra on\n' > nul.rules
refused "diff --rules with a NUL byte" "nul.rules: byte 16: a NUL byte" "$emb" diff --rules nul.rules run.emb run.emb

tap_summary
