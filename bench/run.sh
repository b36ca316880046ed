#!/usr/bin/env bash
# make bench: every benchmark, one after the other. Usage: bench/run.sh BUILD_DIR
# Each script prints its table and writes BUILD_DIR/bench/<name>.json; docs/benchmarks.md
# holds the figures and says how each was made.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bench/run.sh BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
status=0
for script in trace log decode svc_trace diff diff_noise transport cortex_m riscv avr profiles live kernel perfetto fleet ctf_import; do
    echo "== bench/$script.sh"
    bash "$here/$script.sh" "$1" || { echo "bench: $script failed" >&2; status=1; }
done
exit $status
