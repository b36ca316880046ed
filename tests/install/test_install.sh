#!/usr/bin/env bash
# `make install` (cmake --install) as a user runs it, from the build tree BUILD:
#   - with DESTDIR=WORK/dest and the prefix /usr, every file lands under WORK/dest/usr, and
#     the uninstall script (cmake/emb_uninstall.cmake, `make uninstall`) removes them all
#     again, leaving no folder of the package behind;
#   - into WORK/inst (kept for the tests after this one, which run its emb, man pages,
#     completion and CMake package; install_uninstall removes it with the manifest kept in
#     WORK/inst.manifest): the tools, headers, the library's sources and linker fragments,
#     the catalogue, the CMake package, man pages, completion and pkg-config file are there;
#     the installed emb says its version; a host program built with `pkg-config --cflags
#     --libs emb` alone records a trace that the installed emb decodes, with the identity
#     the program set.
# usage: test_install.sh BUILD WORK
set -uo pipefail
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
fails=0
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fails=$((fails + 1)); fi; }
rm -rf "$work"
mkdir -p "$work"

DESTDIR=$work/dest cmake --install "$build" --prefix /usr > "$work/dest.txt" 2>&1
ok $? "DESTDIR=$work/dest cmake --install --prefix /usr"
[ -x "$work/dest/usr/bin/emb" ] && [ -f "$work/dest/usr/lib/cmake/emb/embConfig.cmake" ]
ok $? "DESTDIR: the files land under DESTDIR/usr"
cp "$build/install_manifest.txt" "$work/dest.manifest"
DESTDIR=$work/dest cmake -DMANIFEST="$work/dest.manifest" -P "$here/../../cmake/emb_uninstall.cmake" > /dev/null
left=$(find "$work/dest" -type f | head -3)
[ -z "$left" ] && [ ! -e "$work/dest/usr/share/emb" ] && [ ! -e "$work/dest/usr/include/emb" ]
ok $? "DESTDIR: uninstall removes every file and the package's folders ${left:+(left: $left)}"

prefix=$work/inst
cmake --install "$build" --prefix "$prefix" > "$work/install.txt" 2>&1; ok $? "cmake --install --prefix $prefix"
cp "$build/install_manifest.txt" "$work/inst.manifest"
missing=
for f in bin/emb bin/embgen include/emb/trace.h include/emb/internal include/emb-native/emb/native.h \
         include/emb-native/emb/trace_events.h lib/libemb.a lib/pkgconfig/emb.pc \
         lib/cmake/emb/embConfig.cmake lib/cmake/emb/embConfigVersion.cmake \
         lib/cmake/emb/emb_add_library.cmake share/emb/catalog/trace_events.yaml \
         share/emb/src/trace.c share/emb/src/wire/frame.c share/emb/ports/cortex-m/cortex_m.c \
         share/emb/ports/cortex-m/include/emb/cortex_m.h share/emb/ports/cortex-m/emb.ld \
         share/emb/ports/cortex-m/emb_retained.ld share/man/man1/emb.1 share/man/man1/emb-trace.1 \
         share/bash-completion/completions/emb share/emb/template-cortex-m/CMakeLists.txt \
         share/doc/emb/porting.md; do
    [ -e "$prefix/$f" ] || missing="$missing $f"
done
[ -z "$missing" ]; ok $? "the installed tree has the tools, headers, sources, package, docs${missing:+; missing:$missing}"

version=$("$prefix/bin/emb" --version); [ "$version" = "emb 0.1.0" ]; ok $? "installed emb --version: $version"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -o "$work/app" "$here/pkgconfig_app.c" $(pkg-config --cflags --libs emb) 2> "$work/cc.txt"
ok $? "a host program builds with pkg-config emb alone $(head -c 300 "$work/cc.txt")"
"$work/app" "$work/app.embt"; ok $? "it records and dumps its trace"
"$prefix/bin/emb" trace --color=never "$work/app.embt" > "$work/app.txt" 2>&1
grep -q "user_event  id=8  a=17  b=19" "$work/app.txt"; ok $? "the installed emb decodes it: $(grep -m1 user_event "$work/app.txt")"
"$prefix/bin/emb" capture -o "$work/app.emb" "$work/app.embt" > /dev/null 2>&1 &&
    "$prefix/bin/emb" inspect "$work/app.emb" | grep -q 'firmware="pkgconfig-app 1.0" flags="via=pkg-config"'
ok $? "with the identity the program set"

echo "$fails failed"
[ "$fails" = 0 ]
