#!/usr/bin/env bash
# emb capture, emb inspect and emb diff from the command line: exit statuses, refusals with
# their messages, the report's vocabulary, JSON that parses, and the HTML report rendered
# by headless Chromium (a screenshot that is not blank) holding the first difference.
# Usage: test_emb_diff.sh EMB WRITER OUTDIR CATALOG_YAML
set -u
emb=$1 writer=$2 out=$3 yaml=$4
rm -rf "$out" && mkdir -p "$out"
pass=0 fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok - $what"; else fail=$((fail + 1)); echo "not ok - $what"; fi
}
status() { "$@" >"$out/stdout" 2>"$out/stderr"; echo $?; }

"$writer" --write "$out" || { echo "not ok - fixture streams"; echo "0 passed, 1 failed"; exit 1; }
for f in good good2 bad late; do
  check "capture $f" test "$(status "$emb" capture --label "$f" --revision r1 -o "$out/$f.emb" "$out/$f.embt")" = 0
done
check "capture --help" test "$(status "$emb" capture --help)" = 0
check "capture without -o is a usage error" test "$(status "$emb" capture "$out/good.embt")" = 2
check "capture --pid with a source file too is a usage error" test "$(status "$emb" capture --pid 1 -o "$out/x.emb" "$out/good.embt")" = 2
check "  and says one source" grep -q "one source" "$out/stderr"
check "capture of a damaged stream is refused" test "$(status "$emb" capture -o "$out/x.emb" "$out/good.emb")" = 2
"$emb" capture --log "$yaml" --crash "$yaml" -o "$out/withlog.emb" "$out/good.embt" >/dev/null

check "inspect" test "$(status "$emb" inspect "$out/good.emb")" = 0
check "  shows label, flags, window, frames" \
  bash -c "grep -q 'label=good' '$out/stdout' && grep -q 'armed_frame=5' '$out/stdout' && grep -q 'frames:   5..29' '$out/stdout'"
check "inspect shows opaque sections" bash -c "'$emb' inspect '$out/withlog.emb' | grep -q 'log v1.*crash v1'"
check "inspect --json parses" bash -c "'$emb' inspect --json '$out/bad.emb' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"identity\"][\"flags\"]==\"stall-frame=12\"'"
head -c 1000 "$out/good.emb" >"$out/cut.emb"
check "inspect of a truncated capture: exit 2" test "$(status "$emb" inspect "$out/cut.emb")" = 2
check "  naming the byte offset" grep -q "byte 1000: truncated" "$out/stderr"
cp "$out/good.emb" "$out/flip.emb"
printf '\x01' | dd of="$out/flip.emb" bs=1 seek=3000 conv=notrunc status=none
check "a flipped byte: exit 2, CRC" bash -c "[ \"\$('$emb' inspect '$out/flip.emb' 2>&1 >/dev/null | grep -c CRC)\" = 1 ]"
sed 's/name: tick$/name: tock/' "$yaml" >"$out/other.yaml"
check "another catalogue: exit 2" test "$(status "$emb" inspect --catalog "$out/other.yaml" "$out/good.emb")" = 2
check "  both checksums printed" grep -Eq "checksum 0x[0-9a-f]{8} differs from the tool's catalogue 0x[0-9a-f]{8}" "$out/stderr"

check "diff --help" test "$(status "$emb" diff --help)" = 0
check "diff of one configuration twice: exit 2" test "$(status "$emb" diff "$out/good.emb" "$out/good2.emb")" = 2
check "  suggests --same-build" grep -q -- "--same-build" "$out/stderr"
check "diff --same-build of two good runs with noise: exit 0" \
  test "$(status "$emb" diff --same-build "$out/good.emb" "$out/good2.emb")" = 0
check "  no significant difference" grep -q "No significant difference observed" "$out/stdout"
check "diff good bad: exit 1" test "$(status "$emb" diff --color=never --html "$out/diff.html" "$out/good.emb" "$out/bad.emb")" = 1
cp "$out/stdout" "$out/diff.txt"
check "  first difference: interval, frame 12, link" \
  bash -c "grep -A2 'FIRST SIGNIFICANT DIFFERENCE (rule interval)' '$out/diff.txt' | grep -q 'frame 12), context link'"
check "  the report has a ranked summary" grep -q "ranked by first occurrence" "$out/diff.txt"
check "  no word claims more than an observation" \
  bash -c "! grep -Eiq 'caus|because|due to|root|led to|result of|trigger|proves' '$out/diff.txt' '$out/diff.html'"
check "  and says observed" grep -q "observed" "$out/diff.txt"
check "diff --json parses and agrees" bash -c "'$emb' diff --json '$out/good.emb' '$out/bad.emb' | python3 -c '
import json,sys; d=json.load(sys.stdin)
f=d[\"first\"][0]; assert f[\"rule\"]==\"interval\" and f[\"anchor_value\"]==12 and f[\"context\"]==\"link\", f
assert d[\"complete\"] and d[\"significant\"]>0 and d[\"summary\"][0][\"rank\"]==1'"
check "diff of different windows: exit 2" test "$(status "$emb" diff "$out/good.emb" "$out/late.emb")" = 2
check "  says so" grep -q "different windows" "$out/stderr"
check "  and --anchor aligns them" test "$(status "$emb" diff --anchor frame_start.frame "$out/good.emb" "$out/late.emb")" != 2
check "diff with an anchor the captures lack: exit 2" test "$(status "$emb" diff --anchor epoch.epoch "$out/good.emb" "$out/bad.emb")" = 2
check "  says so and suggests --anchor" bash -c "grep -q 'has no epoch event' '$out/stderr' && grep -q -- '--anchor' '$out/stderr'"
check "diff of a truncated capture: exit 2" test "$(status "$emb" diff "$out/good.emb" "$out/cut.emb")" = 2
check "diff with a bad rule: exit 2" test "$(status "$emb" diff --rule nonsense=off "$out/good.emb" "$out/bad.emb")" = 2
check "diff --rule interval=off hides the stall" test "$(status "$emb" diff --rule interval=off "$out/good.emb" "$out/bad.emb")" = 0
printf 'margin-us 100000\n' >"$out/loose.rules"
check "diff --rules with a huge margin: exit 0" test "$(status "$emb" diff --rules "$out/loose.rules" "$out/good.emb" "$out/bad.emb")" = 0

# The HTML report in headless Chromium.
check "the HTML report holds the first difference" \
  bash -c "grep -q 'id=\"first\"' '$out/diff.html' && grep -q 'rule interval' '$out/diff.html' && grep -q '<svg' '$out/diff.html'"
check "  and is self-contained (no script, no external resource)" \
  bash -c "! grep -Eiq '<script|src=\"http|href=\"http' '$out/diff.html'"
chromium=/usr/bin/chromium
if [ -x "$chromium" ]; then
  bash "$(dirname "$0")/../support/screenshot.sh" "$out/diff.html" "$out/diff.png"
  check "Chromium renders it (screenshot taken)" test -s "$out/diff.png"
  check "  and the screenshot is not blank" \
    python3 "$(dirname "$0")/../support/png_not_blank.py" "$out/diff.png"
else
  check "Chromium is installed (scripts/install-deps.sh)" false
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
