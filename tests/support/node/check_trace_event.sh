#!/usr/bin/env bash
# Loads each Trace Event Format FILE with Chrome DevTools' trace engine and with
# @tracerbench/trace-model (installed by scripts/install-deps.sh); fails, naming the file
# and the reader, when either rejects it, or when the engine does not bind every flow the
# file starts to the events at both its ends. usage: check_trace_event.sh FILE...
set -uo pipefail
dir="$(cd "$(dirname "$0")" && pwd)"
status=0
for f in "$@"; do
  for reader in trace_engine_summary.mjs tracerbench_summary.cjs; do
    if ! node "$dir/$reader" "$f" >"$f.$reader.out" 2>"$f.$reader.err"; then
      echo "check_trace_event: $f: rejected by $reader:" >&2
      head -5 "$f.$reader.err" >&2
      status=1
    fi
  done
  if ! python3 - "$f" "$f.trace_engine_summary.mjs.out" <<'EOF'
import json, sys
starts = sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "s")
bound = len(json.load(open(sys.argv[2]))["flows"])
if bound != starts:
    sys.exit("check_trace_event: %s: %d flows start, the trace engine binds %d" % (sys.argv[1], starts, bound))
EOF
  then
    status=1
  fi
  rm -f "$f".*.out "$f".*.err
done
exit $status
