#!/usr/bin/env bash
# `make package`: the .deb CPack writes (cmake --build BUILD --target package), unpacked
# with `dpkg -x` into WORK/root (dpkg -i needs root and the system's database; -x is the
# same files without the maintainer scripts, of which the package has none):
#   - its control file names the package, its version and the shared libraries the host
#     tools link (dpkg-shlibdeps: libelf1, libdw1, libyaml-0-2, zlib1g);
#   - the unpacked usr/bin/emb says its version, reads the golden capture
#     tests/support/golden/capture_v1.emb (firmware "golden 1.0") and decodes its trace
#     with `emb trace` exactly as the build's emb does;
#   - the firmware template it holds builds against the unpacked usr (CMAKE_PREFIX_PATH) for the
#     Cortex-M4, runs on QEMU, and decodes with the unpacked emb (test_template.sh, whose
#     `emb trace` and `emb log` steps run there).
# usage: test_package.sh BUILD SOURCE WORK
set -uo pipefail
build=$1 source=$2 work=$3
fails=0
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fails=$((fails + 1)); fi; }
rm -rf "$work" "$build"/package/*.deb
mkdir -p "$work"
cmake --build "$build" --target package > "$work/cpack.txt" 2>&1; ok $? "cmake --build --target package"
deb=$(ls "$build"/package/emb-observability_*.deb 2>/dev/null | head -1)
[ -f "$deb" ]; ok $? "the package: ${deb:-none} $( [ -f "$deb" ] || tail -5 "$work/cpack.txt")"
[ -f "$deb" ] || { echo "$fails failed"; exit 1; }

info=$(dpkg-deb -f "$deb" Package Version Depends)
grep -q "^Package: emb-observability" <<<"$info" && grep -q "^Version: 0.1.0" <<<"$info" &&
    grep -q "libelf1" <<<"$info" && grep -q "libyaml-0-2" <<<"$info" && grep -q "zlib1g" <<<"$info"
ok $? "control: $(tr '\n' ' ' <<<"$info")"

dpkg -x "$deb" "$work/root"; ok $? "dpkg -x into $work/root"
usr=$work/root/usr
version=$("$usr/bin/emb" --version); [ "$version" = "emb 0.1.0" ]; ok $? "unpacked emb --version: $version"
"$usr/bin/emb" inspect "$source/tests/support/golden/capture_v1.emb" > "$work/golden.txt" 2>&1 &&
    grep -q 'firmware="golden 1.0"' "$work/golden.txt"
ok $? "unpacked emb inspect reads the golden capture: $(grep -o 'firmware=[^ ]* [^ ]*' "$work/golden.txt")"
# Its trace section decoded by the unpacked emb, line for line what the build's emb says.
"$usr/bin/emb" trace --color=never "$source/tests/support/golden/capture_v1.emb" > "$work/golden.trace" 2>&1 &&
    "$build/bin/emb" trace --color=never "$source/tests/support/golden/capture_v1.emb" 2>&1 |
    cmp -s - "$work/golden.trace" && grep -q 'window_armed  frame=2' "$work/golden.trace"
ok $? "unpacked emb trace decodes the golden capture: $(wc -l < "$work/golden.trace") lines, as the build's emb"

bash "$source/tests/install/test_template.sh" "$usr" "$usr/share/emb/template-cortex-m" cortex-m4 "$work/template"
ok $? "the template builds against the unpacked package, runs and decodes with its emb"

echo "$fails failed"
[ "$fails" = 0 ]
