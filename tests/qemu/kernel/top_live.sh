#!/usr/bin/env bash
# `emb top` on a running target: the threaded firmware on the example kernel under QEMU,
# its frames on UART1 into a socket QEMU waits on (the run starts once `emb top` reads),
# kept up after its run (-append hold) so the view is read while the source is still live.
# QEMU also serves its machine protocol (QMP), through which `emb top --desc-qmp` reads
# the firmware's descriptor each view while the guest runs (threads' stacks, the rings).
# The firmware prints on UART0 what the kernel itself counted (switches in all and per
# thread, each thread's run cycles and stack high-water by its own paint check, its
# rings' unread bytes and drops, what it logged and its last line as it renders it);
# check_top.py holds what `emb top` shows against it:
#
#  1. on a terminal: `emb top` in a tmux pane, the screen read with capture-pane until it
#     shows the kernel's switch count; every thread by its name with the kernel's count
#     and stack, the rings, the log lines, the view still reading; then `/sensor` typed
#     keeps only the sensor's row; the q key ends it (exit 0) and -o sealed what it saw;
#  2. for machines: --json, one view a line, read while the run goes on and stopped by a
#     signal: views that grow, the last one's threads the kernel's (switches exactly,
#     run cycles within 1%, stacks), rings and log lines the firmware's;
#  3. --once --filter logger: one view as text, the logger's row only, and emb top stops
#     by itself.
#
# usage: top_live.sh QEMU MACHINE FW EMB WORKDIR
set -uo pipefail
qemu=$1 machine=$2 fw=$3 emb=$4 work=$5
here=$(dirname "$0")
rm -rf "$work"
mkdir -p "$work"
sock=$work/u1.sock
qmp=$work/qmp.sock
srv=emb-top-test-$$ # a tmux server of this test's own
qpid= fails=0

say() { echo "$1"; [ "${1#not ok}" = "$1" ] || fails=$((fails + 1)); }
stop_qemu() { [ -n "$qpid" ] && kill "$qpid" 2> /dev/null && wait "$qpid" 2> /dev/null; qpid=; }
cleanup() { stop_qemu; tmux -L "$srv" kill-server 2> /dev/null; }
trap cleanup EXIT

# start_qemu NAME: the firmware, waiting for a reader on $sock.
start_qemu() {
    rm -f "$sock" "$qmp"
    "$qemu" -M "$machine" -nographic -monitor none -icount shift=3,sleep=off \
        -qmp "unix:$qmp,server=on,wait=off" \
        -semihosting-config enable=on,target=native -append hold \
        -serial "file:$work/uart0-$1.txt" -serial "unix:$sock,server=on,wait=on" \
        -kernel "$fw" > "$work/qemu-$1.out" 2>&1 &
    qpid=$!
    for _ in $(seq 200); do [ -S "$sock" ] && return 0; sleep 0.05; done
    say "not ok - QEMU opened $sock"; cat "$work/qemu-$1.out"; exit 1
}

# until SECONDS COMMAND...: true once the command is, false after SECONDS.
until_true() {
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
    return 1
}
kernel_switches() { sed -n 's/^kern: switches \([0-9]*\)$/\1/p' "$work/uart0-$1.txt"; }
run_done() { grep -q '^kern: run done' "$work/uart0-$1.txt" 2> /dev/null; }

# 1. The screen, in a tmux pane.
start_qemu pane
tmux -L "$srv" -f /dev/null new-session -d -s top -x 120 -y 60 \
    "$emb top --unix $sock --elf $fw --desc-qmp $qmp --interval 100 -o $work/run.emb 2> $work/top-pane.err; echo \$? > $work/top-pane.rc"
# pane_agrees MODE: the screen read, and check_top.py content with it (the views go on
# after the run's end: the descriptor's rings are read again each view until the link
# has sent the rest and the firmware printed it).
pane_agrees() {
    run_done pane && grep -q '^kern: logged' "$work/uart0-pane.txt" || return 1
    tmux -L "$srv" capture-pane -p -t top > "$work/pane-$1.txt" 2> /dev/null &&
        python3 "$here/check_top.py" "$1" "$work/pane-$1.txt" "$work/uart0-pane.txt" > /dev/null
}
until_true 60 pane_agrees pane
if [ -s "$work/pane-pane.txt" ]; then
    python3 "$here/check_top.py" pane "$work/pane-pane.txt" "$work/uart0-pane.txt" || fails=$((fails + 1))
    tmux -L "$srv" send-keys -t top -l /sensor
    tmux -L "$srv" send-keys -t top Enter
    until_true 20 pane_agrees filter
    python3 "$here/check_top.py" filter "$work/pane-filter.txt" "$work/uart0-pane.txt" || fails=$((fails + 1))
    tmux -L "$srv" send-keys -t top q
    if until_true 20 test -s "$work/top-pane.rc"; then
        rc=$(cat "$work/top-pane.rc")
        [ "$rc" = 0 ] && say "ok - q quits emb top while it reads (exit 0)" ||
            { say "not ok - q quits emb top (exit $rc)"; cat "$work/top-pane.err"; }
        "$emb" inspect "$work/run.emb" > "$work/inspect.txt" 2>&1 &&
            say "ok - -o sealed what emb top saw ($(wc -c < "$work/run.emb") bytes)" ||
            { say "not ok - -o sealed a capture"; cat "$work/inspect.txt"; }
        # A trace stream file is a source too, read whole: its events are emb trace's.
        "$emb" capture extract "$work/run.emb" --trace -o "$work/run.embt" &&
            "$emb" top --file "$work/run.embt" --json > "$work/file-view.json" 2> "$work/top-file.err"
        want=$("$emb" trace --summary "$work/run.embt" 2> /dev/null | sed -n 's/^\([0-9]*\) events in .*/\1/p')
        got=$(tail -n 1 "$work/file-view.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
        [ -n "$want" ] && [ "$got" = "$want" ] && say "ok - a trace stream file: emb top counts emb trace's $want events" ||
            { say "not ok - a trace stream file: emb top counts $got events, emb trace $want"; cat "$work/top-file.err"; }
    else
        say "not ok - q quits emb top"
    fi
else
    say "not ok - the pane shows the end of the run"
    tmux -L "$srv" capture-pane -p -t top; cat "$work/top-pane.err" "$work/qemu-pane.out"
fi
stop_qemu

# 2. --json, stopped by a signal once the run is over.
start_qemu json
"$emb" top --unix "$sock" --elf "$fw" --desc-qmp "$qmp" --interval 100 --json > "$work/views.ndjson" \
    2> "$work/top-json.err" &
tpid=$!
json_final() {
    grep -q '^kern: logged' "$work/uart0-json.txt" 2> /dev/null &&
        tail -n 1 "$work/views.ndjson" | grep -q "\"switches\":$(kernel_switches json)," &&
        sleep 0.5 # a view after the firmware printed its rings: they are read each view
}
until_true 60 json_final || say "not ok - the JSON views reach the kernel's switch count"
kill -INT "$tpid"
wait "$tpid"
rc=$?
[ $rc = 0 ] && say "ok - emb top --json ends at a signal (exit 0)" ||
    { say "not ok - emb top --json exit $rc"; cat "$work/top-json.err"; }
python3 "$here/check_top.py" json "$work/views.ndjson" "$work/uart0-json.txt" || fails=$((fails + 1))
stop_qemu

# 3. --once.
start_qemu once
timeout 60 "$emb" top --unix "$sock" --elf "$fw" --desc-qmp "$qmp" --once --filter logger \
    > "$work/once.txt" 2> "$work/top-once.err"
rc=$?
[ $rc = 0 ] && grep -q '^THREAD ' "$work/once.txt" && grep -q '^LOG ' "$work/once.txt" &&
    say "ok - emb top --once prints one view and stops by itself" ||
    { say "not ok - emb top --once (exit $rc)"; cat "$work/once.txt" "$work/top-once.err"; }
[ "$(grep -c '^emb top ' "$work/once.txt")" = 1 ] && say "ok - --once: exactly one view" ||
    say "not ok - --once: exactly one view"
# The kernel's accounting comes at the run's end, which goes on without a reader.
until_true 60 grep -q '^kern: logged' "$work/uart0-once.txt" ||
    say "not ok - the --once run's firmware printed its accounting"
python3 "$here/check_top.py" once "$work/once.txt" "$work/uart0-once.txt" || fails=$((fails + 1))
stop_qemu

[ $fails = 0 ] && echo "# emb top: all passed" || echo "# emb top: $fails failed"
[ $fails = 0 ]
