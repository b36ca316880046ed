#!/usr/bin/env bash
# A page rendered by headless Chromium into a PNG, as a reader's browser shows it, for the
# reports' tests (a self-contained page: nothing is fetched).
# usage: screenshot.sh PAGE.html OUT.png [WIDTH,HEIGHT]   (exit 0 when OUT.png was written)
page=$1 png=$2 size=${3:-1280,1200}
profile=$(mktemp -d)
timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$png" --window-size="$size" \
  "file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")" >/dev/null 2>&1
rm -rf "$profile"
test -s "$png"
