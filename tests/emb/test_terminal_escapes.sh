#!/usr/bin/env bash
# Target- and file-derived text reaches the terminal escaped: a crash record whose firmware
# version is an OSC title sequence (ESC ] 0;...BEL, which an xterm obeys), and a --rules
# file holding the same bytes, must come out of `emb crash` and `emb diff` with no ESC and
# no BEL byte, the sequence shown as \x1B...\x07 instead.
# usage: test_terminal_escapes.sh EMB CONSOLE WORKDIR
set -u
emb=$1 console=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp" && cd "$tmp" || exit 2
. "$(dirname "$0")/../support/tap_check.sh"
# clean FILE WHAT: FILE holds no ESC (033) and no BEL (007) byte, and shows the escape.
clean() {
    ! LC_ALL=C grep -q $'[\033\007]' "$1"; ok $? "$2: no ESC or BEL byte reaches the terminal"
    grep -qF '\x1B]0;' "$1"; ok $? "$2: the sequence is shown escaped"
}

{ "$console" --frames 100 --retained r.bin --fault-frame 30 -o crashed.embt >/dev/null 2>&1; } 2>/dev/null
"$console" --frames 40 --retained r.bin --crash-out crash.rec -o run.embt >/dev/null 2>&1
ok $? "the console made a crash record"
# The firmware version field (8 bytes at offset 28, docs/formats/crash.md) becomes an OSC
# sequence, and the CRC-32 (zlib's, over every byte before it) is made right again, so the
# record is valid and its text is what a hostile or broken target stamped.
python3 - <<'PY'
import struct, zlib
d = bytearray(open("crash.rec", "rb").read())
n = struct.unpack_from("<H", d, 6)[0]
d[28:36] = b"\x1b]0;PW\x07\x00"
struct.pack_into("<I", d, n - 4, zlib.crc32(bytes(d[:n - 4])))
open("osc.rec", "wb").write(d)
PY
"$emb" crash --color=never --elf "$console" osc.rec >crash.out 2>&1
ok $? "emb crash decodes the record"
clean crash.out "emb crash"

"$emb" capture -o run.emb run.embt >/dev/null 2>&1
printf 'rule \033]0;PW\007 on\n' > osc.rules
"$emb" diff --color=never --rules osc.rules run.emb run.emb >diff.out 2>&1
[ $? -eq 2 ]; ok $? "emb diff refuses the rules file"
clean diff.out "emb diff --rules"
"$emb" diff --color=never --rule $'\033]0;PW\007=on' run.emb run.emb >rule.out 2>&1
clean rule.out "emb diff --rule"

tap_summary
