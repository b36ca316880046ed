#!/usr/bin/env bash
# A reader that exits early must never kill the application: every write of the native port
# (the stream worker, the shutdown drain, the dump of a snapshot or window, the log worker
# and its last round) goes to a FIFO whose reader, `head -c`, leaves after a few bytes.
# The kernel then answers each write with EPIPE and SIGPIPE; the port must take the error
# (the console reports a failed dump with its exit status 1) and the process must not die
# of the signal (status 141). The reader shrinks the FIFO's pipe to one page before the
# writer connects, so a write meets the closed reader whenever the writer has more than a
# page to say after the reader's bytes: no race with the pipe's 64 KiB default buffer.
# usage: sigpipe_reader.sh CONSOLE WORKDIR
set -uo pipefail
console=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail=0
# run NAME BYTES EXPECTED-STATUS CONSOLE-ARGS...: the FIFO is $work/NAME.fifo.
run() {
  local name=$1 bytes=$2 want=$3
  shift 3
  local fifo=$work/$name.fifo
  mkfifo "$fifo"
  python3 -c '
import fcntl, os, select, sys
path, want = sys.argv[1], int(sys.argv[2])
hold = os.open(path, os.O_RDWR | os.O_NONBLOCK)  # a FIFO opened read-write never blocks
fcntl.fcntl(hold, 1031, 4096)                     # F_SETPIPE_SZ: one page
r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
open(path + ".ready", "w").close()
got = 0
while got < want:
    select.select([r], [], [])
    got += len(os.read(r, want - got))
os.close(r)
os.close(hold)
' "$fifo" "$bytes" &
  local reader=$!
  # The writer starts only once the pipe is one page (an order, not a delay).
  while [ ! -e "$fifo.ready" ] && kill -0 "$reader" 2> /dev/null; do sleep 0.01; done
  local args=()
  for a in "$@"; do args+=("${a//@FIFO@/$fifo}"); done
  "$console" "${args[@]}" > "$work/$name.out" 2>&1
  local rc=$?
  wait "$reader"
  if [ "$rc" -eq "$want" ]; then
    echo "ok - $name: exit $rc"
  else
    echo "not ok - $name: exit $rc, expected $want (over 128: killed by that signal less 128): $(tail -2 "$work/$name.out")"
    fail=1
  fi
}
# The stream's reader leaves after the header and a few packets (or after one byte); the rest of the run and
# the shutdown drain write into a closed pipe. The trace is lost, the application lives.
run stream 3000 0 --frames 100 -o @FIFO@ --log "$work/stream.embl"
run stream_header 1 0 --frames 50 -o @FIFO@ --log "$work/stream_header.embl"
# The log stream's reader leaves at once: the log worker and the last round at stop.
run log 100 0 --frames 100 -o "$work/log.embt" --log @FIFO@
# A snapshot and a window are dumped at the end, into a reader that leaves after one byte: the dump
# fails and the console says so (status 1), never a signal.
run snapshot 1 1 --mode snapshot --frames 50 -o @FIFO@ --log "$work/snapshot.embl"
run window 1 1 --mode window --arm-frame 10 --frames 50 -o @FIFO@ --log "$work/window.embl"
exit $fail
