#!/usr/bin/env bash
# The service IPC tracing example: three services and a spawner that grants tracing to some,
# run through a stalled peer, a full queue, an abandoned wait and a killed peer.
#
#   examples/services/demo.sh BUILD_DIR OUTDIR
#
# Writes into OUTDIR: events.txt (`emb events dump`, the chain of calls on every line),
# events.json, status.txt, metrics.txt, logs.txt, services.perfetto.json (open it in
# ui.perfetto.dev) and services-ctf/ (a CTF 1.8 directory for babeltrace2).
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR OUTDIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
emb=$build/bin/emb
spawner=$build/bin/svc_spawner
for f in "$emb" "$spawner"; do
    [ -x "$f" ] || { echo "$0: $f is not built" >&2; exit 2; }
done

# Socket paths are limited to 107 bytes: run in a short temporary directory.
run=$(mktemp -d /tmp/emb-services-XXXXXX)
trap 'rm -rf "$run"' EXIT

# What runs once the scenario is over, while the sink still holds everything. The spawner
# sets EMB_EVENTS_SOCKET to the sink's query socket.
queries='
emb=$1 ops=$2 out=$3
"$emb" events dump --ops "$ops" --color=never > "$out/events.txt"
"$emb" events dump --ops "$ops" --json > "$out/events.json"
"$emb" events status --color=never > "$out/status.txt"
"$emb" events metrics --color=never > "$out/metrics.txt"
"$emb" events logs --color=never > "$out/logs.txt"
"$emb" events export --format perfetto --ops "$ops" -o "$out/services.perfetto.json"
rm -rf "$out/services-ctf"
"$emb" events export --format ctf --ops "$ops" -o "$out/services-ctf"
'

echo "== services example: client -> fs -> block-driver, traced through the events sink"
"$spawner" --emb "$emb" --dir "$run/run" -- bash -c "$queries" queries "$emb" \
    "$here/ops.txt" "$out" 2> "$out/services.log"
echo
sed -n '/^chains/,$p' "$out/events.txt"
echo
bash "$here/../../tests/support/node/check_trace_event.sh" "$out/services.perfetto.json"
echo "services: wrote $out/events.txt (and events.json, status.txt, metrics.txt, logs.txt,"
echo "          services.perfetto.json, services-ctf/); the services' own output: services.log"
