#!/usr/bin/env bash
# Installs the npm packages the tests read emb's Perfetto JSON with (Chrome DevTools' trace
# engine and @tracerbench/trace-model), and its speedscope files with (speedscope's schema,
# validated by Ajv), into tests/support/node/node_modules, exactly as its
# package-lock.json pins them. Idempotent: returns at once when the installed tree matches
# the lock file (npm writes node_modules/.package-lock.json as it installs).
set -euo pipefail
dir="$(cd "$(dirname "$0")/../tests/support/node" && pwd)"

if [ -f "$dir/node_modules/.package-lock.json" ] &&
   [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
  exit 0
fi

if ! command -v npm >/dev/null; then # Debian's nodejs comes without npm (NodeSource's has it)
  echo "install-node-deps: installing npm" >&2
  SUDO=$([ "$(id -u)" -ne 0 ] && echo sudo || true)
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

echo "install-node-deps: npm ci in $dir" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
