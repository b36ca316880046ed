#!/usr/bin/env bash
# Formats the deferred log cannot reproduce (log_unsupported.c): a flagged %% and repeated
# flags are refused at compile time by the call site's format check (-Wformat); positional
# arguments, %m and %C, which -Wformat takes, and those two when the check was turned off,
# are marked by `emb log` (exit 1); repeated flags print as the C library prints them.
#
# usage: log_unsupported.sh EMB PROGRAM WORKDIR CC SOURCE -- CFLAGS...
set -uo pipefail
emb=$1 prog=$2 work=$3 cc=$4 source=$5
shift 5
[ "$1" = "--" ] && shift
cflags=("$@")
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0
ok() { if [ "$1" -eq 0 ]; then pass=$((pass + 1)); echo "ok - $2"; else fail=$((fail + 1)); echo "not ok - $2"; fi; }

# Compile time: the supported forms compile; what -Wformat sees is refused, saying why.
"$cc" "${cflags[@]}" -DCASE=0 -c "$source" -o "$work/case0.o" 2> "$work/case0.err"
ok $? "the supported forms compile with -Wall -Werror"
refuse() {
    local n=$1 what=$2 says=$3
    "$cc" "${cflags[@]}" -DCASE="$n" -c "$source" -o "$work/case$n.o" 2> "$work/case$n.err"
    local rc=$?
    [ $rc -ne 0 ] && grep -qE -- "$says" "$work/case$n.err"
    ok $? "$what: refused at compile time ($says)"
}
refuse 4 "a flagged %%" "conversion lacks type|unknown conversion"
refuse 5 "repeated flags" "repeated"

# Decoding (with -Wformat off for cases 4 and 5): marked in the text, exit 1; repeated
# flags as printf prints them.
"$prog" "$work/fmt.embl" "$work/expected.txt" || { echo "not ok - the program ran"; exit 1; }
"$emb" log --elf "$prog" --color=never --json "$work/fmt.embl" > "$work/decoded.ndjson" 2> "$work/decoded.err"
rc=$?
[ $rc -eq 1 ]; ok $? "emb log exits 1 (findings), got $rc"
python3 - "$work/decoded.ndjson" "$work/expected.txt" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
want = open(sys.argv[2]).read().splitlines()
texts = {r["text"].split(" ")[0]: r for r in recs}
marks = {"positional": "<%2$d: positional arguments", "errno": "<%m: %m prints",
         "wide": "<%C: wide characters", "flagged": "<%5%: %% takes no flags"}
bad = 0
for word, mark in marks.items():
    r = texts.get(word)
    if r is None or mark not in r["text"] or not r.get("marked"):
        print(f"# {word}: not marked: {r}")
        bad += 1
for line in want:
    r = texts.get(line.split(" ")[0])
    if r is None or r["text"] != line or r.get("marked"):
        print(f"# expected {line!r}, decoded {r}")
        bad += 1
sys.exit(bad)
PY
ok $? "each refused conversion is marked <...>, the rest prints as printf"
grep -q "positional arguments" "$work/decoded.err"; ok $? "the call site is named on stderr"
grep -q "4 records with a conversion the log cannot reproduce" "$work/decoded.err"; ok $? "and counted"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
