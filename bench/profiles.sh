#!/usr/bin/env bash
# Flash and RAM per profile and core (docs/profiles.md): scripts/profile_sizes.sh.
set -euo pipefail
bash "$(dirname "$0")/../scripts/profile_sizes.sh" "$1"
