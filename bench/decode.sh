#!/usr/bin/env bash
# The host decode table of docs/benchmarks.md in one run: emb trace (text, --summary,
# NDJSON, Perfetto) against babeltrace2 (text, -o dummy) on the same CTF at 1M and 4M
# events, the floor (cat to /dev/null), emb log on 3M records; best of 3 by CPU time
# (user + system: the wall clock of a loaded machine says little), wall time and peak
# memory from /usr/bin/time; instructions per event from callgrind on 20k and 100k
# events (the difference: start-up left out). Usage: bench/decode.sh BUILD_DIR
# Knobs (environment): EMB_DECODE_SIZES ("1000000 4000000"), EMB_DECODE_CG_EVENTS (100000),
# EMB_DECODE_LOG_RECORDS (3000000), EMB_DECODE_BASELINE (another emb, run beside this one
# on the same inputs, its outputs compared byte for byte), EMB_DECODE_ONLY=log or
# =trace (one part alone) and EMB_DECODE_KINDS ("text summary ndjson perfetto": the emb
# trace rows to run). Writes BUILD_DIR/bench/decode.txt.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bench/decode.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
emb=$build/bin/emb
gen=$build/bin/diff_bench
logger=$build/bench/log_stream
dir=$build/bench/decode
sizes=${EMB_DECODE_SIZES:-1000000 4000000}
cg_events=${EMB_DECODE_CG_EVENTS:-100000}
log_records=${EMB_DECODE_LOG_RECORDS:-3000000}
mkdir -p "$dir"
for tool in babeltrace2 valgrind /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench: $tool not found (scripts/install-deps.sh)" >&2; exit 1; }
done
[ -x "$emb" ] && [ -x "$gen" ] && [ -x "$logger" ] || {
    echo "bench: build $build first (make build)" >&2
    exit 1
}

# measure CMD...: "cpu_seconds wall_seconds peak_KiB" of the best of 3 runs by CPU time.
measure() {
    local best="" line
    for _ in 1 2 3; do
        /usr/bin/time -f '%U %S %e %M' -o "$dir/time.txt" "$@" >/dev/null 2>"$dir/stderr.txt" ||
            { cat "$dir/stderr.txt" "$dir/time.txt" >&2; exit 1; }
        line=$(awk '{printf "%.2f %.2f %d", $1 + $2, $3, $4}' "$dir/time.txt")
        if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN {exit !(a < b)}'; then
            best=$line
        fi
    done
    echo "$best"
}

# instructions CMD...: instructions the whole process executed (callgrind).
instructions() {
    valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$@" >/dev/null 2>"$dir/cg.txt"
    awk '/Collected :/ {print $NF}' "$dir/cg.txt"
}

declare -A cpu wall mem
row() { # row NAME CMD...
    local name=$1
    shift
    read -r cpu[$name] wall[$name] mem[$name] < <(measure "$@")
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf (b > 0 ? "%.1fx" : "-"), a / b}'; }

out=$dir/decode.txt
: >"$out"
say() { echo "$*" | tee -a "$out"; }
base=${EMB_DECODE_BASELINE:-}
kinds=${EMB_DECODE_KINDS:-text summary ndjson perfetto}
trace_args() { # trace_args KIND: the emb trace options of a row
    case $1 in
    text) echo --color=never ;;
    summary) echo --summary ;;
    ndjson) echo -f ndjson ;;
    perfetto) echo -f perfetto ;;
    esac
}
if [ "${EMB_DECODE_ONLY:-}" != log ]; then
say "| events | command | CPU s | wall s | peak MiB | vs babeltrace2 (CPU) | baseline CPU s, peak MiB |"
say "|---|---|---|---|---|---|---|"
for n in $sizes; do
    trace=$dir/trace-$n.embt
    [ -f "$trace" ] || "$gen" "$trace" "$n" >/dev/null
    rm -rf "$dir/ctf-$n"
    "$emb" trace -f ctf -o "$dir/ctf-$n" "$trace"
    row cat cat "$trace"
    row bt_text babeltrace2 "$dir/ctf-$n"
    row bt_dummy babeltrace2 "$dir/ctf-$n" -o dummy
    for k in $kinds; do
        # shellcheck disable=SC2046 # the options are words
        row $k "$emb" trace $(trace_args $k) "$trace"
        [ -n "$base" ] || continue
        # shellcheck disable=SC2046
        row ${k}_base "$base" trace $(trace_args $k) "$trace"
        # shellcheck disable=SC2046
        cmp <("$emb" trace $(trace_args $k) "$trace") <("$base" trace $(trace_args $k) "$trace") ||
            { echo "bench: emb trace $(trace_args $k) differs from the baseline's at $n events" >&2; exit 1; }
    done
    for k in cat bt_text bt_dummy $kinds; do
        vs=
        case $k in
        text | ndjson | perfetto) vs=$(ratio "${cpu[bt_text]}" "${cpu[$k]}") ;;
        summary) vs="$(ratio "${cpu[bt_dummy]}" "${cpu[$k]}") (vs -o dummy)" ;;
        esac
        b=
        [ -n "$base" ] && [ -n "${cpu[${k}_base]:-}" ] && b="${cpu[${k}_base]}, $((mem[${k}_base] / 1024))"
        say "| $n | $k | ${cpu[$k]} | ${wall[$k]} | $((mem[$k] / 1024)) | $vs | $b |"
    done
done

# Instructions per event: callgrind on two smaller traces, the difference divided by the
# difference in events, so start-up (the catalogue, babeltrace2's plugins) is left out.
small=$((cg_events / 5))
for n in $small $cg_events; do
    trace=$dir/trace-$n.embt
    [ -f "$trace" ] || "$gen" "$trace" "$n" >/dev/null
    rm -rf "$dir/ctf-$n"
    "$emb" trace -f ctf -o "$dir/ctf-$n" "$trace"
done
say ""
say "| command (callgrind, $small and $cg_events events) | instructions per event |"
say "|---|---|"
per_event() { # per_event ARGS... with @CTF@ and @TRACE@ standing for the inputs
    local i=()
    for n in $small $cg_events; do
        i+=("$(instructions "${@//@TRACE@/$dir/trace-$n.embt}")")
    done
    awk -v a="${i[0]}" -v b="${i[1]}" -v n=$((cg_events - small)) 'BEGIN {printf "%.0f", (b - a) / n}'
}
per_event_bt() { # the same for babeltrace2 on the CTF directories
    local i=()
    for n in $small $cg_events; do
        i+=("$(instructions babeltrace2 "$dir/ctf-$n" "$@")")
    done
    awk -v a="${i[0]}" -v b="${i[1]}" -v n=$((cg_events - small)) 'BEGIN {printf "%.0f", (b - a) / n}'
}
say "| babeltrace2 text | $(per_event_bt) |"
say "| babeltrace2 -o dummy | $(per_event_bt -o dummy) |"
for k in $kinds; do
    label="emb trace $(trace_args $k)"
    [ "$k" != text ] || label="emb trace text"
    # shellcheck disable=SC2046
    say "| $label | $(per_event "$emb" trace $(trace_args $k) @TRACE@) |"
done
if [ -n "$base" ]; then
    for k in $kinds; do
        # shellcheck disable=SC2046
        say "| baseline emb trace $(trace_args $k) | $(per_event "$base" trace $(trace_args $k) @TRACE@) |"
    done
    say "every emb trace output above is byte for byte the baseline's"
fi
fi
[ "${EMB_DECODE_ONLY:-}" != trace ] || { say ""; say "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0; }

# emb log on streams of the real library's records: one context, and four threads at once
# (the contexts merged by time); EMB_DECODE_BASELINE=EMB runs another emb beside it on the
# same streams (a ratio in one run). Instructions per record: callgrind on 100k and 500k.
log=$dir/log-$log_records.bin
log4=$dir/log4-$log_records.bin
[ -f "$log" ] || "$logger" "$log" "$log_records"
[ -f "$log4" ] || "$logger" "$log4" "$log_records" 4
row log "$emb" log --color=never --elf "$logger" "$log"
row log4 "$emb" log --color=never --elf "$logger" "$log4"
row logcat cat "$log"
if [ -n "$base" ]; then
    row logbase "$base" log --color=never --elf "$logger" "$log"
    row log4base "$base" log --color=never --elf "$logger" "$log4"
fi
for n in 100000 500000; do
    [ -f "$dir/log-$n.bin" ] || "$logger" "$dir/log-$n.bin" "$n"
done
log_per_record() { # log_per_record EMB
    local a b
    a=$(instructions "$1" log --color=never --elf "$logger" "$dir/log-100000.bin")
    b=$(instructions "$1" log --color=never --elf "$logger" "$dir/log-500000.bin")
    awk -v a="$a" -v b="$b" 'BEGIN {printf "%.0f", (b - a) / 400000}'
}
say ""
say "| emb log, $log_records records ($(($(stat -c %s "$log") / 1000000)) MB) | CPU s | wall s | peak MiB | records/s (CPU) | instructions per record |"
say "|---|---|---|---|---|---|"
say "| cat | ${cpu[logcat]} | ${wall[logcat]} | $((mem[logcat] / 1024)) | | |"
log_row() { # log_row LABEL NAME [INSTRUCTIONS]
    say "| $1 | ${cpu[$2]} | ${wall[$2]} | $((mem[$2] / 1024)) | $(awk -v n="$log_records" -v s="${cpu[$2]}" 'BEGIN {printf "%.2f M", n / s / 1e6}') | ${3:-} |"
}
log_row "emb log, one context" log "$(log_per_record "$emb")"
log_row "emb log, four contexts" log4
if [ -n "$base" ]; then
    log_row "baseline, one context" logbase "$(log_per_record "$base")"
    log_row "baseline, four contexts" log4base
    say "one context: $(ratio "${cpu[logbase]}" "${cpu[log]}") less CPU than the baseline; four: $(ratio "${cpu[log4base]}" "${cpu[log4]}")"
    same_bytes() { # same_bytes STREAM: whether this emb prints the baseline's bytes
        "$emb" log --color=never --elf "$logger" "$1" >"$dir/log-now.txt" 2>/dev/null
        "$base" log --color=never --elf "$logger" "$1" >"$dir/log-base.txt" 2>/dev/null
        if cmp -s "$dir/log-now.txt" "$dir/log-base.txt"; then echo "the same bytes"; else echo "DIFFERENT bytes"; fi
        rm -f "$dir/log-now.txt" "$dir/log-base.txt"
    }
    say "output against the baseline's (cmp): one context $(same_bytes "$log"), four contexts $(same_bytes "$log4")"
fi
say ""
say "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg)"
