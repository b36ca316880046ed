#!/bin/bash
# The RISC-V port on QEMU's virt machine with HARTS harts (multi-threaded TCG), read the
# way a debug probe reads it: over QEMU's GDB server, through the debug descriptor
# (examples/riscv-virt). GDB itself (gdb-multiarch) is the independent reader of the
# firmware's statistics and of the harts (QEMU's GDB stub shows each hart as a thread).
#
#  1. `emb capture --gdb --until-closed` follows every hart's rings while all of them and
#     their timer interrupts record at full rate; the trace decodes into one context per
#     hart, and per hart received + discarded = emitted, exactly (check_trace.py).
#  2. `emb desc --gdb` and the capture's identity name the profile built (isolated), the
#     descriptor lists a context per hart.
#  3. Perfetto shows a track per hart; `emb log` decodes every hart's log; each hart's
#     monitors and statistics are its own (its interrupt count = its timer interrupts).
#  4. The worker partition on the last hart faults FW_PART_FAULTS times, contained and
#     restarted: the descriptor's partitions section, the mini-records and the part
#     events say what the firmware injected (check_partition.py); the records of its log
#     module carry its id and name, no other record does (check_log_partition.py).
#  5. The last hart faults: the one crash record says its cpu and the faulting function,
#     and where every other hart was when its stop request reached it, which GDB reads
#     from each hart's own mepc and mcause (check_crash.py).
#
# Usage: riscv_virt.sh QEMU FIRMWARE.elf HARTS WORKDIR EMB
set -u
qemu=$1 fw=$2 harts=$3 work=$4 emb=$5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work" && rm -f "$work"/*
. "$here/virt_lib.sh"
# The recording path has no atomic read-modify-write (AMO, LR/SC): the stress loop and
# the timer interrupt, with the trace fast path inlined, hold none (objdump's reading).
riscv64-unknown-elf-objdump -d --no-show-raw-insn "$fw" | awk '
  /^[0-9a-f]+ <.*>:$/ { f = $2 } $2 ~ /^(amo|lr\.|sc\.)/ { print f, $2 }' | sort | uniq -c >"$work/atomics.txt"
echo "# functions with atomic read-modify-write instructions:"; sed 's/^/#   /' "$work/atomics.txt"
check "no atomic read-modify-write in the stress loop or the timer interrupt's recording" \
  bash -c "grep -c . '$work/atomics.txt' && ! grep -E '<(stress|emb_rv_interrupt|emb_isr_enter|emb_isr_exit|emb_monitor_exceeded|emb_irq_unlock)>' '$work/atomics.txt'"
virt_start

check "emb capture --gdb --until-closed follows the $harts harts' rings and seals the run" \
  "$emb" capture --gdb 127.0.0.1:$port --elf "$fw" --until-closed --duration 60 \
  -o "$work/run.emb" --save-trace "$work/run.embt" --save-log "$work/run.log"
virt_wait_done
gdb_run "info threads" >"$work/threads.txt"
check "GDB sees the $harts harts as $harts threads" \
  test "$(grep -cE '^\*? +[0-9]+ +Thread' "$work/threads.txt")" = "$harts"
stats=()
for ((h = 0; h < harts; h++)); do
  stats+=("printf \"%u %u %u %u %u %u %u\\n\", fw_stats.hart[$h].thread_events, fw_stats.hart[$h].ticks, fw_stats.hart[$h].taken, fw_stats.hart[$h].logs, fw_stats.hart[$h].part_faults, fw_stats.hart[$h].part_restarts, fw_stats.hart[$h].part_logs")
done
gdb_run "${stats[@]}" | grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$' >"$work/stats.txt"
"$emb" trace -f ndjson -o "$work/run.ndjson" "$work/run.embt" 2>>"$work/checks.log"
"$emb" trace -f perfetto -o "$work/run.json" "$work/run.embt" 2>>"$work/checks.log"
python3 "$here/check_trace.py" "$harts" "$work/stats.txt" "$work/run.ndjson" "$work/run.json" \
  | sed "s/^ok [0-9]*/ok/; s/^not ok [0-9]*/not ok/" | while read -r line; do
    case $line in
    "ok "*) echo "ok - ${line#ok - }" ;;
    "not ok "*) echo "not ok - ${line#not ok - }"; echo FAILED >>"$work/trace.failed" ;;
    "#"*) echo "$line" ;;
    esac
  done
n=$((n + 1))
if [ -e "$work/trace.failed" ]; then echo "not ok $n - the trace against fw_stats"; failed=$((failed + 1)); else echo "ok $n - the trace against fw_stats"; fi

"$emb" desc --gdb 127.0.0.1:$port --elf "$fw" --color=never >"$work/desc.txt" 2>&1
check "emb desc --gdb: profile isolated, the port, a context per hart" \
  bash -c "grep -q 'riscv32/virt-time, profile isolated' '$work/desc.txt' && grep -q 'Contexts ($harts of 4)' '$work/desc.txt' && grep -q ' hart$((harts - 1)) ' '$work/desc.txt'"
# Monitors and statistics per hart (CONFIG_EMB_CPUS): each hart's interrupt count, read
# through the descriptor, is the number of timer interrupts the firmware counted on that
# hart (fw_stats, which GDB reads), exactly; a shared block would hold their sum.
"$emb" desc --gdb 127.0.0.1:$port --elf "$fw" --json >"$work/desc.json" 2>>"$work/checks.log"
check "per hart: the interrupts its statistics counted = the timer interrupts it took" \
  python3 - "$work/desc.json" "$work/stats.txt" "$harts" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ticks = [int(line.split()[1]) for line in open(sys.argv[2])]
harts = int(sys.argv[3])
cpus = d.get("cpus", [])
got = [c["stats"]["irq_count"] for c in cpus[:harts]]
print("# irq_count per hart %s, timer interrupts per hart %s" % (got, ticks))
assert len(ticks) == harts and got == ticks, (got, ticks)
assert all(c["stats"]["irq_count"] == 0 for c in cpus[harts:]), cpus
isr = [m for m in d["monitors"] if m["name"].startswith("isr 7/")]
print("# the timer's worst interval per hart:", [(m["cpu"], m["worst_cycles"]) for m in isr])
assert sorted(m["cpu"] for m in isr) == list(range(harts)), isr
PY
check "the capture's identity names the profile built" \
  bash -c "'$emb' inspect '$work/run.emb' | grep -q 'flags=\"profile=isolated\"'"
logs=$(awk '{s += $4} END {print s}' "$work/stats.txt")
"$emb" log --elf "$fw" "$work/run.log" >"$work/log.txt" 2>>"$work/checks.log"
check "emb log decodes every hart's log: $logs records" \
  test "$(grep -c 'took item' "$work/log.txt")" = "$logs"

# The worker partition on the last hart (isolated: partitions, mini-records, `part`
# events): every fault the firmware injected there was contained and the partition
# restarted (fw_stats, read by GDB); the descriptor's partitions section, the mini-records
# (the ring's bytes as GDB dumps them, decoded by `emb crash`) and the trace say the same.
last=$((harts - 1))
read -r faults restarts < <(awk -v h=$last 'NR == h + 1 { print $5, $6 }' "$work/stats.txt")
body=$(riscv64-unknown-elf-nm -S "$fw" | awk '$4 == "partition_body" { print $1, $2 }')
gdb_run 'printf "%u %u\n", emb_crash_region.mini, emb_crash_region.mini_entries' \
  | grep -E '^[0-9]+ [0-9]+$' >"$work/mini-at.txt"
read -r mini_at mini_n <"$work/mini-at.txt"
gdb_run "dump binary memory $work/mini.bin $mini_at $((mini_at + 32 * mini_n))" >/dev/null
"$emb" crash --elf "$fw" --json "$work/mini.bin" >"$work/mini.json" 2>>"$work/checks.log"
check "the worker partition: $faults faults injected on hart $last, each contained and restarted ($restarts)" \
  bash -c "[ '$faults' = 3 ] && [ '$restarts' = 3 ]"
check "partitions, mini-records and part events say what the firmware injected" \
  python3 "$here/check_partition.py" "$last" "$faults" "$restarts" "$body" "$work/desc.json" \
  "$work/mini.json" "$work/run.ndjson"
grep -A3 '^Partitions' "$work/desc.txt" | sed 's/^/# desc: /'
check "emb desc shows the partition and its mini-records" \
  bash -c "grep -qE '^  1 +worker +running +$faults +$restarts  memory, code 5, pc partition_body' '$work/desc.txt' && grep -q 'mini-records: $faults of $mini_n, newest #$((faults - 1)): partition 1 thread $last, memory' '$work/desc.txt'"
# The partition's log module (EMB_LOG_MODULE_DEFINE_PARTITION): its records, and only
# they, carry the partition the descriptor names (check_log_partition.py).
"$emb" log --elf "$fw" --json "$work/run.log" >"$work/log.json" 2>>"$work/checks.log"
part_logs=$(awk -v h=$last 'NR == h + 1 { print $7 }' "$work/stats.txt")
check "emb log: the $part_logs records of the partition's module carry partition 1 worker, no other record one" \
  python3 "$here/check_log_partition.py" "$last" "$part_logs" "$work/desc.json" "$work/log.json" "$work/log.txt"
virt_fault 0xFA17
virt_gdb_traps >"$work/gdb-traps.txt"
check "the faulting hart's record is taken through the descriptor" grep -q "holds a crash record" "$work/crash-capture.txt"
"$emb" crash --elf "$fw" --color=never "$work/crash.bin" >"$work/crash.txt" 2>&1
check "emb crash: hart $last faulted (a memory fault) in fault_if_asked, cpu $last" \
  bash -c "grep -q 'fault      memory' '$work/crash.txt' && grep -q '^pc .*fault_if_asked' '$work/crash.txt' && grep -q 'cpu $last,' '$work/crash.txt'"
"$emb" crash --elf "$fw" --json "$work/crash.bin" >"$work/crash.json" 2>>"$work/checks.log"
check "one record for all harts: hart $last's, the other harts stopped where GDB finds their mepc and mcause" \
  python3 "$here/check_crash.py" "$work/crash.json" "$work/gdb-traps.txt" one
echo "1..$n"
[ "$failed" = 0 ] && [ ! -e "$work/trace.failed" ]
