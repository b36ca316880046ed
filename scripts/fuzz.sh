#!/bin/bash
# `make fuzz`: every libFuzzer target of the `fuzz` ctest label, each for SECONDS, then its
# corpus merged (-merge=1) into tests/fuzz/corpus/NAME, the committed corpus the short runs
# of `make check` start from. Crashes, leaks and timeouts are saved under
# BUILD/fuzz-findings/NAME/ (never in the source tree) and reported; a table of executions,
# coverage (cov/ft), corpus and findings per target goes to BUILD/fuzz-findings/summary.md
# for docs/reliability.md. Files of the committed corpus with names of their own (not a
# libFuzzer hash) are seeds written by hand, kept by every merge.
#
#   scripts/fuzz.sh BUILD_DIR SECONDS JOBS
set -u
build=$1 seconds=$2 jobs=$3
src=$(cd "$(dirname "$0")/.." && pwd)
out=$build/fuzz-findings
max_file=16384       # bytes: larger inputs stay out of the committed corpus (the build's
                     # seeds, such as the firmware ELFs, are made again by every build)
max_target=131072    # bytes of committed corpus per target: the largest inputs go first
rm -rf "$out"
mkdir -p "$out"

# The seeds the targets read are made by the label's fixtures (make_trace_files, ...).
ctest --test-dir "$build" -L fuzz -E '^fuzz_' -j"$jobs" >"$out/fixtures.log" 2>&1 || {
    echo "fuzz: the seed fixtures failed (see $out/fixtures.log)" >&2
    exit 2
}
ctest --test-dir "$build" -L fuzz --show-only=json-v1 |
    jq -c '.tests[] | select(.name | startswith("fuzz_")) |
           {name, command, env: [.properties[]? | select(.name == "ENVIRONMENT") | .value[]]}' \
    >"$out/targets.jsonl"

run_one() {
    local line=$1
    local name short bin env opts=() dirs=()
    name=$(jq -r .name <<<"$line")
    short=${name#fuzz_}
    bin=$(jq -r '.command[0]' <<<"$line")
    mapfile -t env < <(jq -r '.env[]' <<<"$line")
    while read -r a; do
        case $a in
        -max_total_time=* | -artifact_prefix=*) ;;
        -*) opts+=("$a") ;;
        *) dirs+=("$a") ;;
        esac
    done < <(jq -r '.command[1:][]' <<<"$line")
    local committed=$src/tests/fuzz/corpus/$short dir=$out/$name
    mkdir -p "$dir/corpus" "$committed"
    local inputs=("$dir/corpus" "$committed")
    for d in "${dirs[@]}"; do
        [ "$d" -ef "$committed" ] || inputs+=("$d")
    done
    env "${env[@]}" nice "$bin" "${opts[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$dir/" "${inputs[@]}" >"$dir/run.log" 2>&1
    local rc=$?
    # Merge: the smallest set of inputs that keeps every feature, over what there was.
    local merged=$dir/merged
    mkdir -p "$merged"
    env "${env[@]}" nice "$bin" "${opts[@]}" -merge=1 "$merged" "${inputs[@]}" >"$dir/merge.log" 2>&1
    find "$merged" -type f -size +"$max_file"c -delete
    local total=$(find "$merged" -type f -printf '%s\n' | awk '{t += $1} END {print t + 0}')
    while [ "$total" -gt "$max_target" ]; do
        local biggest=$(find "$merged" -type f -printf '%s %p\n' | sort -n | tail -1)
        rm -f "${biggest#* }"
        total=$((total - ${biggest%% *}))
    done
    # Named files are seeds written by hand (a hash name is libFuzzer's): they stay.
    local f
    for f in "$committed"/*; do
        [ -f "$f" ] && ! [[ $(basename "$f") =~ ^[0-9a-f]{40}$ ]] && cp "$f" "$merged"/
    done
    if [ -n "$(ls -A "$merged")" ]; then
        rm -rf "$committed"
        mv "$merged" "$committed"
    fi
    local execs cov ft findings files bytes
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/run.log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$dir/run.log" | tail -1)
    ft=${cov##*ft: }
    cov=${cov%% ft:*}
    cov=${cov#cov: }
    findings=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
                    -o -name 'oom-*' -o -name 'slow-unit-*' \) | wc -l)
    files=$(find "$committed" -type f | wc -l)
    bytes=$(find "$committed" -type f -printf '%s\n' | awk '{t += $1} END {print t + 0}')
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        "$files" "$bytes" "$findings$([ $rc -ne 0 ] && echo " (exit $rc)")" >"$dir/row.md"
    echo "fuzz: $name done: ${execs:-?} runs, cov ${cov:-?}, ft ${ft:-?}, $files inputs, $findings findings"
}
export -f run_one
export out src seconds max_file max_target
tr '\n' '\0' <"$out/targets.jsonl" | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}

{
    echo "| target | executions | cov | ft | corpus files | corpus bytes | findings |"
    echo "|---|---|---|---|---|---|---|"
    cat "$out"/fuzz_*/row.md
} >"$out/summary.md"
cat "$out/summary.md"
found=$(find "$out" -mindepth 2 -maxdepth 2 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
if [ -n "$found" ]; then
    echo "fuzz: findings (reproduce with the target binary and the file):" >&2
    echo "$found" >&2
    exit 1
fi
echo "fuzz: $(wc -l <"$out/targets.jsonl") targets, ${seconds}s each, no findings"
