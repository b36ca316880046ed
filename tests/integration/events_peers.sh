#!/usr/bin/env bash
# Who may answer `emb events`, and whom the sink answers, with real second identities
# (run as root: the other users are uids switched to with setpriv, one of them nobody).
#
#   1. The default socket when XDG_RUNTIME_DIR is unset: another user (nobody) got there
#      first, at the old default path /tmp/emb-events-UID.sock and in a directory
#      /tmp/emb-UID/ of its own holding events.sock, each serving a forged STATUS. The
#      victim's `emb events status` must refuse, naming who owns what, and print nothing
#      the forger sent; `emb events serve` must refuse that directory the same way.
#   2. A sink of another uid in a directory the victim may trust (root's, mode 0755): the
#      client checks SO_PEERCRED and refuses it.
#   3. The sink's side: its socket made connectable by anyone (chmod 0666); a client of
#      another uid gets no answer, the owner still does.
# Prints "ok N - ..." lines and a closing "N passed, N failed".
#   events_peers.sh EMB
set -uo pipefail
emb=$1
. "$(dirname "$0")/../support/tap_check.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "1..0 # skipped: needs root and setpriv to act as other users"
    exit 0
fi
nobody=65534
victim=$((60000 + $$ % 4000)) # an unused uid of its own, so no other run shares its paths
as() { local uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }
# For background jobs: the job's pid is then the program's, so the cleanup can stop it.
as_bg() { local uid=$1; shift; exec setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }

tmp=$(mktemp -d /tmp/emb-events-peers-XXXXXX)
chmod 0755 "$tmp"
mkdir -m 0777 "$tmp/pub" # where the other users may write
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$tmp" "/tmp/emb-$victim" "/tmp/emb-events-$victim.sock"
}
trap cleanup EXIT
rm -rf "/tmp/emb-$victim" "/tmp/emb-events-$victim.sock"

# A forged sink: answers every query with a STATUS reply claiming capacity 4242 and
# 31337 events dropped (the layout of docs/formats/svc-events.md). With `--listen-as`
# the socket is bound first and listen() runs after dropping to that uid, so SO_PEERCRED
# (taken at listen) names the forger even in a directory only root could write.
cat >"$tmp/forger.py" <<'PY'
import os, socket, struct, sys
paths = sys.argv[1:]
drop = None
if paths[0] == "--listen-as":
    drop, paths = int(paths[1]), paths[2:]
socks = []
for p in paths:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(p)
    os.chmod(p, 0o777)
    socks.append(s)
if drop is not None:
    os.setgid(drop); os.setuid(drop)
for s in socks:
    s.listen(4)
open(os.environ["READY"], "w").close()
import select
reply = struct.pack("<IQQIQ", 4242, 1, 31337, 1, 0)
while True:
    r, _, _ = select.select(socks, [], [])
    for s in r:
        c, _ = s.accept()
        try:
            c.recv(300)
            c.send(reply)
        except OSError:
            pass
        c.close()
PY
wait_file() { for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.02; done; return 1; }

# 1. nobody squats the victim's default paths.
as $nobody mkdir -m 0777 "/tmp/emb-$victim"
READY="$tmp/pub/ready1" as_bg $nobody /usr/bin/python3 "$tmp/forger.py" "/tmp/emb-events-$victim.sock" \
    "/tmp/emb-$victim/events.sock" 2>"$tmp/forger1.err" &
pids+=($!)
wait_file "$tmp/pub/ready1"; ok $? "another user (nobody) serves at the victim's default paths"
as $victim env -u XDG_RUNTIME_DIR -u EMB_EVENTS_SOCKET "$emb" events status \
    >"$tmp/out1" 2>"$tmp/err1"
rc=$?
[ $rc -eq 2 ]; ok $? "emb events status refuses (exit $rc)"
! grep -q "4242\|31337" "$tmp/out1" "$tmp/err1"; ok $? "nothing the forger sent is printed"
grep -q "/tmp/emb-$victim: the socket's directory belongs to uid $nobody (nobody), not to you (uid $victim)" "$tmp/err1"
ok $? "the message says who owns what: $(head -c 200 "$tmp/err1")"
as $victim env -u XDG_RUNTIME_DIR -u EMB_EVENTS_SOCKET "$emb" events serve -- true \
    >/dev/null 2>"$tmp/err1s"
rc=$?
[ $rc -eq 2 ] && grep -q "belongs to uid $nobody (nobody)" "$tmp/err1s"
ok $? "emb events serve refuses the squatted directory too (exit $rc)"

# The default directory done right: the victim's sink makes it 0700 and answers.
as $nobody rm -rf "/tmp/emb-$victim"
as_bg $victim env -u XDG_RUNTIME_DIR -u EMB_EVENTS_SOCKET "$emb" events serve -- true \
    2>"$tmp/serve1.err" &
pids+=($!)
for _ in $(seq 200); do [ -S "/tmp/emb-$victim/events.sock" ] && break; sleep 0.02; done
[ "$(stat -c '%u %a' "/tmp/emb-$victim")" = "$victim 700" ]
ok $? "serve creates /tmp/emb-$victim owned by the user, mode 0700"
as $victim env -u XDG_RUNTIME_DIR -u EMB_EVENTS_SOCKET "$emb" events status >"$tmp/out1b" 2>&1
ok $? "and the user's own status query is answered"
chmod 0755 "/tmp/emb-$victim"
as $victim env -u XDG_RUNTIME_DIR -u EMB_EVENTS_SOCKET "$emb" events status >/dev/null \
    2>"$tmp/err1c"
[ $? -eq 2 ] && grep -q "mode 0755" "$tmp/err1c"
ok $? "a default directory opened to others (0755) is refused: $(head -c 160 "$tmp/err1c")"
chmod 0700 "/tmp/emb-$victim"

# 2. A sink of another uid where the victim would look (root's directory, 0755).
mkdir -m 0755 "$tmp/rootdir"
READY="$tmp/pub/ready2" /usr/bin/python3 "$tmp/forger.py" --listen-as $nobody "$tmp/rootdir/events.sock" \
    2>"$tmp/forger2.err" &
pids+=($!)
wait_file "$tmp/pub/ready2"; ok $? "a forger listening as nobody in a root directory"
as $victim "$emb" events status --socket "$tmp/rootdir/events.sock" >"$tmp/out2" 2>"$tmp/err2"
rc=$?
[ $rc -eq 2 ] && ! grep -q "4242\|31337" "$tmp/out2"
ok $? "the client refuses a sink of another uid (exit $rc)"
grep -q "the sink runs as uid $nobody (nobody) (pid [0-9]*), not as you (uid $victim)" "$tmp/err2"
ok $? "naming both uids: $(head -c 200 "$tmp/err2")"

# 3. The sink refuses clients of another uid, even when its socket is open to them.
mkdir -m 0700 "$tmp/own"
"$emb" events serve --socket "$tmp/own/events.sock" -- true 2>"$tmp/serve3.err" &
pids+=($!)
for _ in $(seq 200); do [ -S "$tmp/own/events.sock" ] && break; sleep 0.02; done
chmod 0755 "$tmp/own"
chmod 0666 "$tmp/own/events.sock"
cat >"$tmp/ask.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(3)
s.connect(sys.argv[1])
try:
    s.send(b"\x03")
    r = s.recv(100)
except OSError as e:
    r = b""
print(len(r))
PY
got=$(as $nobody /usr/bin/python3 "$tmp/ask.py" "$tmp/own/events.sock" 2>&1)
[ "$got" = 0 ]; ok $? "a client of another uid gets no STATUS reply (got $got bytes)"
grep -q "the client runs as uid $nobody (nobody)" "$tmp/serve3.err"
ok $? "the sink says whom it refused: $(head -c 200 "$tmp/serve3.err")"
got=$(/usr/bin/python3 "$tmp/ask.py" "$tmp/own/events.sock" 2>&1)
[ "$got" -ge 32 ]; ok $? "the owner still gets its STATUS reply ($got bytes)"

tap_summary
