#!/usr/bin/env bash
# Foreign CTF (docs/ctf-foreign.md, docs/benchmarks.md): events per second read through
# libbabeltrace2 against our own decoder on our own CTF (diff_bench's trace, then `emb
# trace -f ctf`), and a two-run `emb diff` of two LTTng traces of about 1M events each
# (tests/integration/ctf_foreign: lttng_reqsrv under real user-space sessions). Best of 3
# by CPU time (user + system). Knobs: EMB_CTF_SIZES ("1000000 4000000"), EMB_CTF_REQUESTS
# (312500: 1M LTTng events). Writes BUILD_DIR/bench/ctf_import.txt.
# usage: bench/ctf_import.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bench/ctf_import.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
emb=$build/bin/emb gen=$build/bin/diff_bench app=$build/tests/lttng_reqsrv
dir=$build/bench/ctf_import
sizes=${EMB_CTF_SIZES:-1000000 4000000}
requests=${EMB_CTF_REQUESTS:-312500}
rm -rf "$dir" && mkdir -p "$dir" && chmod 777 "$dir"
[ -x "$emb" ] && [ -x "$gen" ] || { echo "bench: build $build first (make build)" >&2; exit 1; }

measure() { # CMD...: "cpu_seconds wall_seconds" of the best of 3 runs by CPU time
    local best="" line
    for _ in 1 2 3; do
        /usr/bin/time -f '%U %S %e' -o "$dir/time.txt" "$@" >/dev/null 2>"$dir/stderr.txt" || true
        line=$(tail -1 "$dir/time.txt" | awk '{printf "%.2f %.2f", $1 + $2, $3}')
        if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN {exit !(a < b)}'; then
            best=$line
        fi
    done
    echo "$best"
}
out=$dir/../ctf_import.txt
: >"$out"
say() { echo "$*" | tee -a "$out"; }
row() { # EVENTS NAME CMD...
    local n=$1 name=$2 cpu wall
    shift 2
    read -r cpu wall < <(measure "$@")
    say "| $n | $name | $cpu | $wall | $(awk -v n="$n" -v c="$cpu" 'BEGIN {printf (c > 0 ? "%.2f" : "-"), n / c / 1e6}') |"
}
say "| events | reading | CPU s | wall s | M events/s (CPU) |"
say "|---|---|---|---|---|"
for n in $sizes; do
    "$gen" "$dir/t-$n.embt" "$n" >/dev/null
    "$emb" trace -f ctf -o "$dir/ctf-$n" "$dir/t-$n.embt"
    row "$n" "our decoder: emb trace --summary (trace stream)" "$emb" trace --summary "$dir/t-$n.embt"
    row "$n" "libbabeltrace2 alone: babeltrace2 -o dummy" babeltrace2 "$dir/ctf-$n" -o dummy
    row "$n" "CTF import: emb trace --summary (CTF directory)" "$emb" trace --summary "$dir/ctf-$n"
done

[ -x "$app" ] && command -v lttng-sessiond >/dev/null || { echo "bench: no LTTng here: the diff row is left out"; exit 0; }
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$dir")
cp "$app" "$dir/reqsrv"
events=(reqsrv:request_begin reqsrv:query reqsrv:cache_miss reqsrv:request_end)
for run in good bad; do
    "${as_user[@]}" bash "$here/../tests/integration/ctf_foreign/lttng_session.sh" "$dir" "$run" \
        "$dir/reqsrv $requests $([ $run = bad ] && echo $((requests / 2)) || echo -1) 1" "${events[@]}" >"$dir/$run.log" 2>&1
    ln -sfn "$(dirname "$(find "$dir/$run.out" -name metadata | head -1)")" "$dir/$run.trace"
done
n=$(babeltrace2 "$dir/good.trace" -o dummy >/dev/null && "$emb" inspect --json "$dir/good.trace" |
    python3 -c 'import json, sys; print(sum(json.load(sys.stdin)["events"].values()))')
say ""
say "| LTTng events per run | command | CPU s | wall s | M events/s (CPU, both runs) |"
say "|---|---|---|---|---|"
read -r cpu wall < <(measure "$emb" diff --json --anchor reqsrv:request_begin.id \
    --field reqsrv:query.latency_us=ignore "$dir/good.trace" "$dir/bad.trace")
say "| $n | emb diff --anchor reqsrv:request_begin.id (two CTF directories) | $cpu | $wall | $(awk -v n="$n" -v c="$cpu" 'BEGIN {printf "%.2f", 2 * n / c / 1e6}') |"
