#!/usr/bin/env bash
# Reading without halting (docs/benchmarks.md, "Reading without halting"):
#   1. one read of a running guest's RAM per method and size (bench/qmp_read_bench.c): QMP's
#      xp, pmemsave and memsave, qtest's b64read;
#   2. whole MPS2 runs taken by `emb capture --gdb` (each poll halts the guest) and by
#      `emb capture --qemu-qmp --qtest` (never halted), one after the other in this run, on
#      the steady firmware (the default rate) and the default one (with its burst): events
#      taken per second, the fraction lost, the halts;
#   3. the highest rate read with no loss: the steady firmware at 1, 2, 4, 8 and 16 times its
#      tick rate (qemu-mps2-m3-steady-NNk.elf), each a one-second run taken by
#      `emb capture --qemu-qmp --qtest`: events and trace bytes per second of the target's
#      clock, and what was discarded (docs/benchmarks.md compares SEGGER's RTT figures);
#   4. what `emb top` costs the host: its CPU time (user + system, from the kernel's
#      accounting of the process) over a whole steady run read live through
#      `--qemu-qmp --qtest` (the reading included) and over the largest trace of part 3 as
#      a file (decoding and counting alone), per event; CPU per 100k events/s is the share
#      of one core that rate would take.
# Usage: bench/live.sh [BUILD]   (writes BUILD/bench/live.json)
set -euo pipefail
build=${1:-build}
dir="$build/bench-live"
mkdir -p "$dir" "$build/bench"
out="$build/bench/live.json"
emb="$build/bin/emb"
if ! command -v qemu-system-arm > /dev/null || [ ! -x "$build/bench/qmp_read_bench" ] ||
   [ ! -f "$build/fw/qemu-mps2-m3-steady.elf" ]; then
  echo '{"skipped": "qemu-system-arm or the MPS2 firmware missing"}' > "$out"
  exit 0
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
qemu_pid=
stop_qemu() {
  if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2> /dev/null || true; wait "$qemu_pid" 2> /dev/null || true; fi
  qemu_pid=
}
trap stop_qemu EXIT
# QEMU paused (-S) with QMP, qtest and a GDB stub on PORT.
start_qemu() {
  rm -f "$dir/qmp.sock" "$dir/qtest.sock"
  qemu-system-arm -M mps2-an385 -nographic -monitor none -S \
    -semihosting-config enable=on,target=native \
    -qmp "unix:$dir/qmp.sock,server=on,wait=off" \
    -qtest "unix:$dir/qtest.sock,server=on,wait=off" -qtest-log /dev/null \
    -gdb "tcp:127.0.0.1:$2" -kernel "$1" > "$dir/qemu.log" 2>&1 &
  qemu_pid=$!
  # Every socket listening: a TCP connection that sends nothing does not disturb the stub.
  for _ in $(seq 100); do
    if [ -S "$dir/qtest.sock" ] && python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $2), 1).close()" 2> /dev/null; then
      return 0
    fi
    sleep 0.05
  done
  return 1
}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

echo "-- one read of a running guest, per method and size (200 reads each)"
start_qemu "$build/fw/qemu-mps2-m3-steady.elf" "$port"
"$build/bench/qmp_read_bench" "$dir/qmp.sock" "$dir/qtest.sock" 0x20000000 200 > "$dir/reads.jsonl"
stop_qemu

: > "$dir/runs.txt"
for fw in steady default; do
  elf="$build/fw/qemu-mps2-m3.elf"
  [ "$fw" = steady ] && elf="$build/fw/qemu-mps2-m3-steady.elf"
  for way in gdb qmp; do
    echo "-- $fw firmware, emb capture --$way"
    start_qemu "$elf" "$port"
    if [ "$way" = gdb ]; then
      src=(--gdb "127.0.0.1:$port")
    else
      src=(--qemu-qmp "$dir/qmp.sock" --qtest "$dir/qtest.sock" --resume)
    fi
    "$emb" capture "${src[@]}" --elf "$elf" --until-closed --duration 60 -o "$dir/$fw-$way.emb" \
      > "$dir/$fw-$way.txt" 2>&1 || true
    echo "$fw $way $dir/$fw-$way.txt" >> "$dir/runs.txt"
    stop_qemu
  done
done

# 3. The rate sweep: each variant twice (the host's load decides a run as much as the rate).
: > "$dir/rates.txt"
for khz in 10 20 40 80 160; do
  elf="$build/fw/qemu-mps2-m3-steady-${khz}k.elf"
  [ "$khz" = 10 ] && elf="$build/fw/qemu-mps2-m3-steady.elf"
  [ -f "$elf" ] || continue
  for try in 1 2; do
    echo "-- steady firmware at a ${khz} kHz tick, emb capture --qemu-qmp (run $try)"
    start_qemu "$elf" "$port"
    "$emb" capture --qemu-qmp "$dir/qmp.sock" --qtest "$dir/qtest.sock" --resume --elf "$elf" \
      --until-closed --duration 60 --save-trace "$dir/rate-$khz-$try.embt" -o "$dir/rate-$khz-$try.emb" \
      > "$dir/rate-$khz-$try.txt" 2>&1 || true
    stop_qemu
    "$emb" trace --summary --json "$dir/rate-$khz-$try.embt" > "$dir/rate-$khz-$try.json" 2> /dev/null || true
    echo "$khz $try $dir/rate-$khz-$try" >> "$dir/rates.txt"
  done
done

# cpu_of FILE COMMAND...: runs it, writes "user system wall" seconds to FILE.
cpu_of() {
  python3 -c '
import os, subprocess, sys, time
start = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=open(sys.argv[1] + ".out", "w"), stderr=open(sys.argv[1] + ".err", "w"))
_, status, use = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write("%f %f %f\n" % (use.ru_utime, use.ru_stime, time.monotonic() - start))
' "$@"
}
for khz in 10 40; do
  elf="$build/fw/qemu-mps2-m3-steady-${khz}k.elf"
  [ "$khz" = 10 ] && elf="$build/fw/qemu-mps2-m3-steady.elf"
  [ -f "$elf" ] || continue
  echo "-- emb top's cost: the steady firmware at a ${khz} kHz tick through --qemu-qmp --qtest"
  start_qemu "$elf" "$port"
  cpu_of "$dir/top-live-${khz}k.time" "$emb" top --qemu-qmp "$dir/qmp.sock" --qtest "$dir/qtest.sock" \
    --resume --elf "$elf" --json --interval 500 --until-closed --duration 60
  stop_qemu
done
biggest=$(ls -S "$dir"/rate-*.embt 2> /dev/null | head -n 1)
echo "-- emb top's cost: $biggest as a file"
[ -n "$biggest" ] && cpu_of "$dir/top-file.time" "$emb" top --file "$biggest" --json

python3 - "$dir" "$out" << 'PY'
import json, os, re, sys
d, out = sys.argv[1], sys.argv[2]
reads = [json.loads(l) for l in open(d + "/reads.jsonl")]
print("%-9s %8s %10s %10s" % ("method", "bytes", "ms avg", "ms max"))
for r in reads:
    print("%-9s %8d %10.3f %10.3f" % (r["method"], r["bytes"], r["ms_avg"], r["ms_max"]))
runs = []
for line in open(d + "/runs.txt"):
    fw, way, path = line.split()
    t = open(path).read()
    sealed = re.search(r"(\d+) events in \d+ contexts, (\d+) dropped", t)
    after = re.search(r"after ([\d.]+) s", t)
    held = re.search(r"held the target (\d+) times, ([\d.]+) ms on average, ([\d.]+) ms at most", t)
    ev, drop = (int(sealed.group(1)), int(sealed.group(2))) if sealed else (0, 0)
    secs = float(after.group(1)) if after else 0.0
    runs.append({"firmware": fw, "source": way, "events": ev, "discarded": drop, "seconds": secs,
                 "events_per_s": ev / secs if secs else 0.0,
                 "lost_fraction": drop / (ev + drop) if ev + drop else 0.0,
                 "halts": int(held.group(1)) if held else None,
                 "halt_ms_avg": float(held.group(2)) if held else None,
                 "halt_ms_max": float(held.group(3)) if held else None})
print("%-8s %-4s %8s %9s %8s %11s %6s %8s" % ("firmware", "way", "events", "discarded", "lost", "events/s",
                                              "halts", "halt max"))
for r in runs:
    print("%-8s %-4s %8d %9d %7.1f%% %11.0f %6s %8s" % (r["firmware"], r["source"], r["events"], r["discarded"],
          100 * r["lost_fraction"], r["events_per_s"], r["halts"], r["halt_ms_max"]))
rates = []
for line in open(d + "/rates.txt"):
    khz, run, base = line.split()
    t = open(base + ".txt").read()
    sealed = re.search(r"(\d+) events in \d+ contexts, (\d+) dropped", t)
    gap = re.search(r"went unread ([\d.]+) ms at most", t)
    try:  # the target's own time: the header's first and last packet timestamps
        h = json.load(open(base + ".json"))["header"]
        span = (h["end_ts"] - h["start_ts"]) / h["clock_hz"]
    except (OSError, ValueError, KeyError, ZeroDivisionError):
        span = None
    ev, drop = (int(sealed.group(1)), int(sealed.group(2))) if sealed else (0, 0)
    size = os.path.getsize(base + ".embt") if os.path.exists(base + ".embt") else 0
    rates.append({"tick_khz": int(khz), "run": int(run), "events": ev, "discarded": drop,
                  "target_s": span, "events_per_s": ev / span if span else None,
                  "trace_kb_per_s": size / 1024 / span if span else None,
                  "unread_ms_max": float(gap.group(1)) if gap else None})
print("%-8s %3s %9s %9s %11s %10s %11s" % ("tick kHz", "run", "events", "discarded", "events/s", "KB/s",
                                           "unread max"))
for r in rates:
    print("%-8d %3d %9d %9d %11.0f %10.1f %9s ms" % (r["tick_khz"], r["run"], r["events"], r["discarded"],
          r["events_per_s"] or 0, r["trace_kb_per_s"] or 0, r["unread_ms_max"]))
clean = [r for r in rates if r["events"] and r["discarded"] == 0 and r["events_per_s"]]
best = max(clean, key=lambda r: r["events_per_s"]) if clean else None
if best:
    print("highest rate with nothing discarded: %.0f events/s, %.1f KB/s of trace (%d kHz tick)" %
          (best["events_per_s"], best["trace_kb_per_s"], best["tick_khz"]))
top = []
for name in ("live-10k", "live-40k", "file"):
    try:
        user, system, wall = map(float, open("%s/top-%s.time" % (d, name)).read().split())
        views = [json.loads(l) for l in open("%s/top-%s.time.out" % (d, name)) if l.strip()]
    except (OSError, ValueError):
        continue
    if not views or not views[-1]["events"]:
        continue
    last, cpu = views[-1], user + system
    top.append({"way": name, "events": last["events"], "discarded": last["discarded"],
                "target_s": last["target_s"], "wall_s": wall,
                "events_per_s": last["events"] / last["target_s"] if last["target_s"] else None,
                "cpu_s": cpu, "events_per_cpu_s": last["events"] / cpu if cpu else None,
                "core_share_per_100k_events_per_s": cpu / last["events"] * 1e5})
print("%-9s %9s %9s %9s %9s %8s %8s %13s %18s" % ("emb top", "events", "discarded", "target s", "events/s",
      "wall s", "CPU s", "events/CPU s", "core at 100k ev/s"))
for r in top:
    print("%-9s %9d %9d %9.2f %9.0f %8.2f %8.3f %13.0f %17.1f%%" % (r["way"], r["events"], r["discarded"],
          r["target_s"], r["events_per_s"] or 0, r["wall_s"], r["cpu_s"], r["events_per_cpu_s"] or 0,
          100 * r["core_share_per_100k_events_per_s"]))
json.dump({"reads": reads, "runs": runs, "rates": rates, "highest_lossless": best, "top": top},
          open(out, "w"), indent=1)
PY
