#!/usr/bin/env bash
# `emb trace` reads a sealed (version-2) stream in place: each packet where it lies in the
# file, the CRCs checked but never copied out, so peak memory does not grow with the
# trace (2M events, 43 MB: 57 MiB when the decoder walked a copy without the CRCs). And a
# packet that resynchronisation finds at an odd offset, across a CRC, reads as it did in
# that copy: the events are those of the same stream with the CRCs cut out by hand.
#
# usage: test_emb_trace_stream.sh EMB DIFF_BENCH WORKDIR [--no-rss]
#   DIFF_BENCH writes sealed traces with the real library (bench/diff_bench.c). --no-rss:
#   a sanitizer build, whose allocator keeps freed memory, skips the memory check.
set -uo pipefail
emb=$1 gen=$2 work=$3 rss=${4:-}
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0
ok() { if [ "$1" -eq 0 ]; then pass=$((pass + 1)); echo "ok - $2"; else fail=$((fail + 1)); echo "not ok - $2"; fi; }

# unseal IN OUT [CUT]: the version-1 twin of a sealed stream (docs/formats/trace.md: each
# packet followed by its CRC-32), written without the CRCs; CUT > 0 first deletes CUT
# bytes at the middle of the file, so every packet after it lies at an odd offset.
unseal() {
    python3 - "$@" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
cut = int(sys.argv[3]) if len(sys.argv) > 3 else 0
data = open(src, "rb").read()
if cut:
    mid = len(data) // 2
    data = data[:mid] + data[mid + cut:]
    open(src + ".cut", "wb").write(data)
header_size, = struct.unpack_from("<H", data, 6)
packet_size, = struct.unpack_from("<I", data, 12)
out = bytearray(data[:header_size])
struct.pack_into("<H", out, 4, 1)  # version 1: no CRCs
body = data[header_size:]
for at in range(0, len(body), packet_size + 4):
    out += body[at:at + packet_size]
open(dst, "wb").write(out)
PY
}

"$gen" "$work/small.embt" 20000 >/dev/null
ok $? "a sealed trace of 20,000 events written"
unseal "$work/small.embt" "$work/small.v1"
for format in "--color=never" "-f ndjson"; do
    # shellcheck disable=SC2086 # the options are words
    "$emb" trace $format "$work/small.embt" >"$work/sealed.out" 2>/dev/null
    # shellcheck disable=SC2086
    "$emb" trace $format "$work/small.v1" >"$work/v1.out" 2>/dev/null
    cmp -s "$work/sealed.out" "$work/v1.out"
    ok $? "sealed and unsealed twins give the same events ($format)"
done

unseal "$work/small.embt" "$work/cut.v1" 100
"$emb" trace --color=never "$work/small.embt.cut" >"$work/cut.out" 2>"$work/cut.err"
[ $? -eq 2 ] && grep -q "skipped" "$work/cut.err" && grep -q "packet CRC-32" "$work/cut.err"
ok $? "100 bytes cut from a sealed trace: damaged packets reported, the rest found again"
# The text shows the events and the raw bytes of what is not one, never an offset (which
# differ: the sealed file's count the CRCs).
"$emb" trace --color=never "$work/cut.v1" >"$work/cut_v1.out" 2>/dev/null
cmp -s "$work/cut.out" "$work/cut_v1.out" && [ "$(grep -c "unknown event" "$work/cut.out")" -gt 100 ]
ok $? "packets found at odd offsets, across the CRCs, read as the twin without them"

if [ "$rss" != --no-rss ]; then
    "$gen" "$work/big.embt" 2000000 >/dev/null
    ok $? "a sealed trace of 2,000,000 events written"
    for args in "--color=never" "--summary" "-f ndjson"; do
        # shellcheck disable=SC2086
        python3 - "$emb" "$work/big.embt" $args <<'PY'
import resource, subprocess, sys
emb, trace, *args = sys.argv[1:]
rc = subprocess.run([emb, "trace", *args, trace], stdout=subprocess.DEVNULL).returncode
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(f"# emb trace {' '.join(args)}, 2,000,000 events: exit {rc}, peak {peak} MiB")
sys.exit(0 if rc == 0 and peak < 40 else 1)
PY
        ok $? "2,000,000 sealed events decode in less than 40 MiB (emb trace $args)"
    done
fi

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
