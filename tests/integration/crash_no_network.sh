#!/usr/bin/env bash
# `emb crash` never reaches the network unless asked: with DEBUGINFOD_URLS naming a
# debuginfod server (a loopback HTTP server this test runs, logging every request) and a
# stripped ELF whose debug info is nowhere local, libdwfl's standard lookup would ask the
# server (dwfl_standard_find_debuginfo falls back on libdebuginfod). Without --debuginfod
# no request may arrive; with it, the server must see the request for the image's build id
# (GET /buildid/HEX/debuginfo, the debuginfod protocol of elfutils' debuginfod(8)), which
# shows the server would have noticed.
# usage: crash_no_network.sh EMB CONSOLE SCRATCH_DIR
set -u
emb=$1 console=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp"
. "$(dirname "$0")/../support/tap_check.sh"

("$console" --frames 200 --retained "$tmp/retained.bin" --fault-frame 20 -o "$tmp/run1.embt") \
    >/dev/null 2>&1
"$console" --frames 3 --retained "$tmp/retained.bin" --crash-out "$tmp/crash.rec" \
    -o "$tmp/run2.embt" >/dev/null 2>&1
[ -s "$tmp/crash.rec" ]; ok $? "a crash record to show"
objcopy --strip-debug "$console" "$tmp/fw.stripped"
ok $? "a stripped copy of the image"

python3 - "$tmp/port" "$tmp/requests" >"$tmp/server.log" 2>&1 <<'PY' &
import http.server, sys
port_file, log_file = sys.argv[1], sys.argv[2]
class Logger(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(log_file, "a") as f:
            f.write(self.path + "\n")
        self.send_response(404)
        self.end_headers()
    do_HEAD = do_GET
    def log_message(self, *args):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), Logger)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
PY
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port" 2>/dev/null)
[ -n "$port" ]; ok $? "the loopback debuginfod stand-in listens (port $port)"
export DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$tmp/cache"
export DEBUGINFOD_TIMEOUT=5

: >"$tmp/requests"
"$emb" crash --elf "$tmp/fw.stripped" --color=never "$tmp/crash.rec" >"$tmp/plain.txt" 2>&1
ok $? "emb crash on the stripped image exits 0"
"$emb" crash --elf "$tmp/fw.stripped" --json "$tmp/crash.rec" >/dev/null 2>&1
ok $? "and with --json"
[ ! -s "$tmp/requests" ]; ok $? "no request reached the server without --debuginfod"
cat "$tmp/requests"

"$emb" crash --elf "$tmp/fw.stripped" --debuginfod --color=never "$tmp/crash.rec" \
    >"$tmp/asked.txt" 2>&1
ok $? "emb crash --debuginfod exits 0 (the server has nothing)"
grep -q "^/buildid/[0-9a-f]*/debuginfo" "$tmp/requests"
ok $? "with --debuginfod the server was asked for the build id's debuginfo"

tap_summary
