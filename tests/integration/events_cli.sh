#!/usr/bin/env bash
# `emb events` on the command line, against a sink filled by the services example:
# usage errors and exit statuses, every query as text and --json, export to Perfetto and to
# CTF (read back with babeltrace2), hostile clients on the query socket, and serve's own
# checks. Prints "ok N - ..." lines and a closing "N passed, N failed" like tests/harness.h.
#
#   events_cli.sh EMB SPAWNER OPS_FILE
set -uo pipefail

passed=0
failed=0
ok() { # ok CONDITION-EXIT-STATUS DESCRIPTION
    local status=$1
    shift
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok $((passed + failed)) - $*"
    else
        failed=$((failed + 1))
        echo "not ok $((passed + failed)) - $*"
    fi
}
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
py() { /usr/bin/python3 -c "$@"; }

emb=$1 spawner=$2 ops=$3

if [ "${4:-}" != --inside ]; then
    # Outside the scenario: what needs no sink, then the scenario with this script inside.
    tmp=$(mktemp -d /tmp/emb-events-cli-XXXXXX)
    trap 'rm -rf "$tmp"' EXIT

    "$emb" events --help > "$tmp/help" 2>&1
    ok $? "events --help exits 0"
    grep -q "emb events serve" "$tmp/help" && grep -q "dump \[N\]" "$tmp/help"
    ok $? "--help lists the subcommands"
    "$emb" events > /dev/null 2>&1
    [ $? -eq 2 ]
    ok $? "no subcommand: exit 2"
    "$emb" events frobnicate 2> "$tmp/err"
    [ $? -eq 2 ] && grep -q "unknown subcommand 'frobnicate'" "$tmp/err"
    ok $? "unknown subcommand: exit 2, named"
    for bad in "dump 0" "dump 256" "dump x" "export" "export --format ctf" "export --format svg" \
               "status --follow" "logs --since -1" "status extra"; do
        # shellcheck disable=SC2086
        "$emb" events $bad --socket "$tmp/none.sock" > /dev/null 2>&1
        [ $? -eq 2 ]
        ok $? "usage error: emb events $bad -> exit 2"
    done
    "$emb" events status --socket "$tmp/none.sock" 2> "$tmp/err"
    [ $? -eq 2 ] && grep -q "$tmp/none.sock: no sink answers there" "$tmp/err"
    ok $? "no sink: exit 2 with the socket named"
    "$emb" events serve --socket "$tmp/s.sock" 2> "$tmp/err"
    [ $? -eq 2 ] && grep -q "nothing could emit" "$tmp/err"
    ok $? "serve without an intake: exit 2"
    "$emb" events serve --socket "$tmp/s.sock" --intake-fd 0 < /dev/null 2> "$tmp/err"
    [ $? -eq 2 ] && grep -q "not an inherited AF_UNIX datagram socket" "$tmp/err"
    ok $? "serve --intake-fd on a non-socket: exit 2"

    # serve -- COMMAND grants COMMAND the capability.
    "$emb" events serve --socket "$tmp/c.sock" -- \
        sh -c 'readlink /proc/$$/fd/$EMB_EVENTS_FD > "$0"' "$tmp/granted" 2> "$tmp/serve.err" &
    serve=$!
    for _ in $(seq 100); do [ -s "$tmp/granted" ] && break; sleep 0.05; done
    grep -q '^socket:' "$tmp/granted"
    ok $? "serve -- COMMAND: COMMAND inherits a socket named by EMB_EVENTS_FD"
    "$emb" events serve --socket "$tmp/c.sock" -- true 2> "$tmp/err"
    [ $? -eq 2 ] && grep -q "a sink already serves there" "$tmp/err"
    ok $? "a second sink on a live socket: exit 2"
    kill -TERM "$serve"
    wait "$serve"
    ok $? "serve exits 0 on SIGTERM"
    [ ! -e "$tmp/c.sock" ]
    ok $? "and removes its socket"

    "$spawner" --emb "$emb" --dir "$tmp/run" -- bash "$0" "$emb" "$spawner" "$ops" --inside \
        > "$tmp/inside" 2> "$tmp/spawner.err"
    rc=$?
    sed -n 's/^\(not \)\{0,1\}ok [0-9]* - /&/p' "$tmp/inside" | while read -r line; do
        echo "${line/ok [0-9]* - /ok - }"
    done > "$tmp/inside.tap"
    inner_passed=$(grep -c '^ok - ' "$tmp/inside.tap")
    inner_failed=$(grep -c '^not ok - ' "$tmp/inside.tap")
    while read -r line; do
        case $line in
            "not ok - "*) failed=$((failed + 1)); echo "not ok $((passed + failed)) - ${line#not ok - }" ;;
            "ok - "*) passed=$((passed + 1)); echo "ok $((passed + failed)) - ${line#ok - }" ;;
        esac
    done < "$tmp/inside.tap"
    [ "$rc" -eq 0 ] && [ "$inner_passed" -gt 20 ] && [ "$inner_failed" -eq 0 ]
    ok $? "the scenario and the checks against its sink passed (spawner exit $rc)"
    [ "$rc" -eq 0 ] || cat "$tmp/spawner.err"
    finish
    exit $?
fi

# ---- Inside: the sink holds the scenario (EMB_EVENTS_SOCKET names it) ----
tmp=$(mktemp -d /tmp/emb-events-in-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$emb" events status --json > "$tmp/status.json"
ok $? "status --json"
held=$(py "import json;d=json.load(open('$tmp/status.json'));assert d['held']==d['accepted']>0 and d['dropped']==0 and d['malformed']==0;print(d['held'])")
ok $? "status: $held held = accepted, nothing dropped or malformed"
"$emb" events status --color=never | grep -Eq "^accepted +$held$"
ok $? "status text: aligned 'accepted $held'"

"$emb" events dump --ops "$ops" --color=never > "$tmp/dump.txt"
ok $? "dump"
grep -q "fs  *request  *block-driver.read_block  *client -> fs.read -> block-driver.read_block" "$tmp/dump.txt"
ok $? "dump shows the chain client -> fs.read -> block-driver.read_block"
grep -Eq "^  client -> fs.read -> block-driver.read_block +5 reply +1 timeout +2 peer_lost" "$tmp/dump.txt"
status=$?
ok $status "the chain summary counts how its calls ended"
[ "$status" -eq 0 ] || grep -E "^  client -> fs" "$tmp/dump.txt"
"$emb" events dump --color=never | grep -q "client -> fs.1 -> block-driver.7"
ok $? "without --ops, opcodes print as numbers"
"$emb" events dump --ops "$ops" --json > "$tmp/dump.json"
ok $? "dump --json"
py "
import json, collections
d = json.load(open('$tmp/dump.json'))
ev = d['events']
assert len(ev) == $held, len(ev)
kinds = collections.Counter(e['kind'] for e in ev)
for k in ('request', 'reply', 'timeout', 'peer_lost', 'queue_full', 'aborted'):
    assert kinds[k] > 0, k
assert not any(e['caller'] == 'backup' for e in ev)
assert sum(1 for e in ev if e['chain'] == 'client -> fs.read -> block-driver.read_block' and e['kind'] == 'reply') == 5
"
ok $? "dump --json: every kind, no event from the ungranted process, 5 replies on the full chain"
[ "$("$emb" events dump 3 --json | py "import json,sys;print(len(json.load(sys.stdin)['events']))")" = 3 ]
ok $? "dump 3 returns 3 events"

"$emb" events metrics --color=never | grep -Eq "^fs +reads +7$"
ok $? "metrics: fs reads 7"
"$emb" events metrics --json | py "import json,sys;m=json.load(sys.stdin)['metrics'];assert {'owner':'block-driver','name':'blocks_read','value':7} in m"
ok $? "metrics --json"

"$emb" events logs --color=never > "$tmp/logs.txt"
grep -Eq "^ +1  block-driver  ready, serving blocks$" "$tmp/logs.txt"
ok $? "logs: line 1 is block-driver's first line"
"$emb" events logs --since 3 --json > "$tmp/logs.json"
py "
import json
lines = [json.loads(l) for l in open('$tmp/logs.json')]
assert lines and lines[0]['line'] == 4 and all(l['line'] > 3 for l in lines), lines[:2]
assert [l['line'] for l in lines] == list(range(4, 4 + len(lines)))
"
ok $? "logs --since 3 --json: lines 4 onwards, one object each"
"$emb" events logs --follow --color=never > "$tmp/follow.txt" &
follow=$!
sleep 1
kill -INT "$follow"
wait "$follow"
ok $? "logs --follow exits 0 when interrupted"
cmp -s "$tmp/follow.txt" "$tmp/logs.txt"
ok $? "logs --follow printed every line once"

"$emb" events export --format perfetto --ops "$ops" -o "$tmp/trace.json"
ok $? "export --format perfetto"
py "
import json
t = json.load(open('$tmp/trace.json'))['traceEvents']
slices = [e for e in t if e['ph'] == 'X']
names = {e['args']['name'] for e in t if e['ph'] == 'M'}
assert {'client', 'fs'} <= names, names
assert any(e['name'] == 'fs.read' and e['args']['outcome'] == 'timeout' for e in slices)
s = sorted(e['id'] for e in t if e['ph'] == 's'); f = sorted(e['id'] for e in t if e['ph'] == 'f')
assert s and s == f, (s, f)
for e in slices:
    assert e['dur'] >= 1
"
ok $? "Perfetto: a slice per call, a track per service, flows paired"

"$emb" events export --format ctf --ops "$ops" -o "$tmp/ctf"
ok $? "export --format ctf"
babeltrace2 "$tmp/ctf" > "$tmp/ctf.txt" 2> "$tmp/bt.err"
ok $? "babeltrace2 reads the CTF directory"
[ "$(wc -l < "$tmp/ctf.txt")" -eq "$held" ]
ok $? "babeltrace2 sees all $held events"
py "
import json, collections, re
ev = json.load(open('$tmp/dump.json'))['events']
want = collections.Counter(e['kind'] for e in ev)
got = collections.Counter(re.search(r'svc:(\w+):', l).group(1) for l in open('$tmp/ctf.txt'))
assert got == want, (got, want)
first = open('$tmp/ctf.txt').readline()
assert 'caller = \"client\"' in first and 'chain = \"client -> fs.read\"' in first, first
"
ok $? "the CTF events match the dump kind for kind, with their fields"

# Hostile clients on the query socket.
py "
import os, socket
path = os.environ['EMB_EVENTS_SOCKET']
def ask(msg):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(path); s.settimeout(3)
    s.send(msg); r = s.recv(70000); s.close(); return r
assert ask(b'\x09garbage') == b''
assert ask(b'\x01' + bytes(34)) == b''                 # an EVENT without the capability
assert ask(b'\x06' + b'fs'.ljust(12, b'\0') + b'x' * 10000) == b''   # oversized
assert ask(b'\x02') == b''                             # truncated DUMP
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(path); s.close()
assert len(ask(b'\x03')) == 40
"
ok $? "garbage, an EVENT, an oversized and a truncated query each get an empty reply"
py "
import os, socket, time
path = os.environ['EMB_EVENTS_SOCKET']
idle = []
for _ in range(40):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); c.connect(path); idle.append(c)
    time.sleep(0.005)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(path); s.settimeout(3)
s.send(b'\x03'); assert len(s.recv(100)) == 40
"
ok $? "40 idle connections held open do not lock a reader out"
"$emb" events status --json | py "import json,sys;d=json.load(sys.stdin);assert d['malformed']==4 and d['accepted']==$held,d"
ok $? "they are counted as malformed, nothing reached the ring, the sink still answers"
finish
