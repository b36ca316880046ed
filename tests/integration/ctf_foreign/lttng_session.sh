#!/usr/bin/env bash
# One user-space LTTng session around one command: its own LTTNG_HOME (so its own session
# daemon, started here and stopped here by its pid file), a session writing to
# DIR/NAME.out through one channel that blocks the application rather than discard (a
# comparison of two runs wants every event), the events given enabled with the vtid and
# procname contexts.
# usage: lttng_session.sh DIR NAME COMMAND EVENT...
set -u
dir=$1 name=$2 command=$3
shift 3
export LTTNG_HOME="$dir/$name.home"
mkdir -p "$LTTNG_HOME"
pidfile="$LTTNG_HOME/.lttng/lttng-sessiond.pid"
stop_daemon() {
    [ -f "$pidfile" ] || return 0
    local pid
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
}
trap stop_daemon EXIT
lttng-sessiond --daemonize --no-kernel || exit 1
lttng create "$name" --output="$dir/$name.out" || exit 1
lttng enable-channel -u --subbuf-size=1M --num-subbuf=8 --blocking-timeout=inf ch || exit 1
for ev in "$@"; do lttng enable-event -u -c ch "$ev" || exit 1; done
lttng add-context -u -c ch -t vtid -t procname || exit 1
lttng start || exit 1
LTTNG_UST_REGISTER_TIMEOUT=-1 $command
rc=$?
lttng stop && lttng destroy || exit 1
exit $rc
