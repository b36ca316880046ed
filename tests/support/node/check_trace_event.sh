#!/usr/bin/env bash
# Loads each Trace Event Format FILE with Chrome DevTools' trace engine and with
# @tracerbench/trace-model (installed by scripts/install-deps.sh); fails, naming the file
# and the reader, when either rejects it. usage: check_trace_event.sh FILE...
set -uo pipefail
dir="$(cd "$(dirname "$0")" && pwd)"
status=0
for f in "$@"; do
  for reader in trace_engine_summary.mjs tracerbench_summary.cjs; do
    if ! node "$dir/$reader" "$f" >/dev/null 2>"$f.$reader.err"; then
      echo "check_trace_event: $f: rejected by $reader:" >&2
      head -5 "$f.$reader.err" >&2
      status=1
    fi
    rm -f "$f.$reader.err"
  done
done
exit $status
