#!/usr/bin/env bash
# The firmware template (examples/template-cortex-m) against an installed tree, as a user
# builds it: copied out of the repository, configured with -DCMAKE_PREFIX_PATH=PREFIX and
# its own toolchain file, built for CPU, run on QEMU's MPS2 board, captured through its
# debug descriptor over QEMU's GDB server (`emb capture --gdb --until-closed`, the way
# tests/qemu drives a board), and decoded with PREFIX's emb:
#   - the capture names the firmware as emb_add_library() stamped it ("template-cortex-m
#     VERSION", flags "cpu=CPU ..."), a session id that is not 0, and the build id of the ELF;
#   - `emb trace --catalog <build>/emb-gen/catalog.yaml` shows its own event, pump_speed,
#     24 times with the fields main.c recorded (step=23 rpm=3875 last), and so does
#     `emb trace` on the capture with no --catalog (it carries its catalogue);
#   - `emb log --elf` shows its log line for every step.
# With a fifth argument CHECKOUT the template uses that checkout of emb (add_subdirectory,
# -DEMB_SOURCE_DIR), which builds embgen for the host on its own, and PREFIX only for emb.
# With TEMPLATE_GIT_TAG set, the copy is made a git repository tagged so, and the version
# is that tag (`git describe`); else it is the project's, 1.0.0.
# usage: [TEMPLATE_GIT_TAG=TAG] test_template.sh PREFIX TEMPLATE_SOURCE CPU WORKDIR [CHECKOUT]
set -uo pipefail
prefix=$1 template=$2 cpu=$3 work=$4 checkout=${5:-}
emb=$prefix/bin/emb
package=(-DCMAKE_PREFIX_PATH="$prefix")
[ -z "$checkout" ] || package=(-DEMB_SOURCE_DIR="$checkout")
case $cpu in
    cortex-m3) machine=mps2-an385 ;;
    cortex-m4) machine=mps2-an386 ;;
    *) echo "test_template.sh: no MPS2 board for $cpu" >&2; exit 2 ;;
esac
fails=0
ok() { if [ "$1" = 0 ]; then echo "ok - $cpu: $2"; else echo "not ok - $cpu: $2"; fails=$((fails + 1)); fi; }
die() { echo "not ok - $cpu: $*"; exit 1; }

rm -rf "$work"
mkdir -p "$work"
cp -r "$template" "$work/src" # out of the tree: nothing but the package is found
# A project of its own: git describe must not find the repository WORK may lie in.
export GIT_CEILING_DIRECTORIES=$work
version=1.0.0
if [ -n "${TEMPLATE_GIT_TAG:-}" ]; then
    git -C "$work/src" init -q && git -C "$work/src" add . &&
        git -C "$work/src" -c user.name=t -c user.email=t@t commit -qm template &&
        git -C "$work/src" tag "$TEMPLATE_GIT_TAG" || die "git repository for the template"
    version=$TEMPLATE_GIT_TAG
fi
build=$work/build
cmake -S "$work/src" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$work/src/arm-none-eabi.cmake" \
      "${package[@]}" -DTEMPLATE_CPU="$cpu" > "$work/configure.txt" 2>&1 ||
    { cat "$work/configure.txt"; die "the template configures with ${package[*]}"; }
cmake --build "$build" -j2 > "$work/build.txt" 2>&1 || { tail -30 "$work/build.txt"; die "the template builds"; }
fw=$build/template.elf
catalog=$build/emb-gen/catalog.yaml
[ -f "$fw" ] && [ -f "$catalog" ]; ok $? "template.elf and the merged catalogue built"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
qemu-system-arm -M "$machine" -nographic -monitor none -semihosting-config enable=on,target=native \
    -gdb "tcp:127.0.0.1:$port" -kernel "$fw" > "$work/uart.txt" 2>&1 &
qemu=$!
trap 'kill $qemu 2>/dev/null; wait $qemu 2>/dev/null' EXIT
captured=1
for _ in $(seq 50); do # until QEMU's GDB server answers
    if "$emb" capture --gdb "127.0.0.1:$port" --elf "$fw" --catalog "$catalog" --until-closed \
           --duration 30 -o "$work/run.emb" --save-trace "$work/run.embt" --save-log "$work/run.log" \
           --color=never > "$work/capture.txt" 2>&1; then
        captured=0
        break
    fi
    sleep 0.1
done
ok $captured "emb capture --gdb --until-closed sealed the run ($(tail -1 "$work/capture.txt"))"
grep -q "template: done" "$work/uart.txt"; ok $? "the firmware ran to its end on $machine"

"$emb" inspect --catalog "$catalog" "$work/run.emb" > "$work/inspect.txt" 2>&1
build_id=$(arm-none-eabi-readelf -n "$fw" | awk '/Build ID/ {print $3}')
grep -q "firmware=\"template-cortex-m $version\" flags=\"cpu=$cpu " "$work/inspect.txt"
ok $? "the capture names the firmware and its flags: $(grep -o 'firmware=.*' "$work/inspect.txt")"
grep -q "build=$build_id" "$work/inspect.txt"; ok $? "the capture carries the ELF's build id $build_id"
grep -q "session=0x" "$work/inspect.txt" && ! grep -q "session=0x0000000000000000" "$work/inspect.txt"
ok $? "the capture carries a session id: $(grep -o 'session=[0-9a-fx]*' "$work/inspect.txt")"

"$emb" trace --catalog "$catalog" --color=never "$work/run.embt" > "$work/trace.txt" 2>&1
[ "$(grep -c ' pump_speed  step=' "$work/trace.txt")" = 24 ]; ok $? "emb trace shows its own event pump_speed 24 times"
grep -q "pump_speed  step=23  rpm=3875" "$work/trace.txt"; ok $? "with the fields main.c recorded"
# The capture carries the merged catalogue: no --catalog needed to decode it.
"$emb" trace --color=never "$work/run.emb" > "$work/trace-capture.txt" 2>&1
[ "$(grep -c ' pump_speed  step=' "$work/trace-capture.txt")" = 24 ]
ok $? "emb trace on the capture, with no --catalog, shows pump_speed 24 times"
"$emb" inspect "$work/run.emb" > /dev/null 2>&1; ok $? "emb inspect reads the capture with no --catalog"

"$emb" log --elf "$fw" --color=never "$work/run.log" > "$work/log.txt" 2>&1
[ "$(grep -c 'INF  pump  main.c:[0-9]*  step [0-9]*: [0-9]* rpm' "$work/log.txt")" = 24 ]
ok $? "emb log shows its log line for each of the 24 steps"

[ "$fails" = 0 ] || { echo "--- $work: capture, inspect, trace"; cat "$work/capture.txt" "$work/inspect.txt"; head -5 "$work/trace.txt"; }
echo "$fails failed"
[ "$fails" = 0 ]
