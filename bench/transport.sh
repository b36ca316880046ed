#!/usr/bin/env bash
# Transport benchmarks (docs/benchmarks.md ("Transports")):
#   1. the TCP record server of the native port under a paced load: for 1 and 2 producer
#      threads, rings of 256 KiB and 4 MiB per thread, and a ladder of rates, 3 runs of 3 s
#      each, read by an in-process client
#      through the host's frame decoder, counting lost packets and discarded events; the
#      highest rate at which no run lost anything is the sustained rate; plus one unpaced run;
#   2. the same server read by `emb capture --tcp` at 1 M events/s, checked with emb trace;
#   3. frame overhead and codec speed (bench/frame_bench.c) on random payloads and on the
#      trace that capture saved; the SWO parser's speed;
#   4. memory-channel polling over QEMU's GDB stub (bench/memchan_gdb_bench.c), when
#      qemu-system-arm and the MPS2 firmware are there.
# Usage: bench/transport.sh [BUILD]   (writes BUILD/bench/transport.json)
set -euo pipefail
build=${1:-build}
bin="$build/bench"
dir="$build/bench-transport"
mkdir -p "$dir" "$build/bench"
out="$build/bench/transport.json"
runs="$dir/tcp_runs.jsonl"
: > "$runs"
cut -d' ' -f1-3 /proc/loadavg > "$dir/load_before"
echo "load average before: $(cat "$dir/load_before") on $(nproc) CPUs"

echo "-- TCP record server: paced load, 3 runs of 3 s per rate"
for ring in 256 4096; do
  for threads in 1 2; do
    for rate in 500000 1000000 2000000 3000000 4000000; do
      for _ in 1 2 3; do
        "$bin/tcp_bench" - "$rate" 3 "$threads" "$ring" | sed "s/^{/{\"ring_packets\": $ring, /" >> "$runs"
      done
    done
    "$bin/tcp_bench" - 0 3 "$threads" "$ring" | sed "s/^{/{\"ring_packets\": $ring, /" >> "$runs"
  done
done

echo "-- TCP record server read by emb capture --tcp (1 M events/s, 2 threads, 2 s)"
rm -f "$dir/port"
"$bin/tcp_bench" "$dir/port" 1000000 2 2 256 > "$dir/tcp_capture_target.json" &
target=$!
for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.02; done
start=$(date +%s.%N)
echo "tcp-bench-secret-0123456789" > "$dir/token" # tcp_bench.c's BENCH_TOKEN
"$build/bin/emb" capture -o "$dir/tcp.emb" --save-trace "$dir/tcp.embt" \
    --tcp "127.0.0.1:$(cat "$dir/port")" --token-file "$dir/token" > "$dir/capture.txt" 2>&1
end=$(date +%s.%N)
wait $target
"$build/bin/emb" trace --json --summary "$dir/tcp.embt" > "$dir/tcp_summary.json"

echo "-- frames and SWO"
"$bin/frame_bench" "$dir/tcp.embt" > "$dir/frames.json"

if [ -x "$bin/memchan_gdb_bench" ] && command -v qemu-system-arm > /dev/null \
   && [ -f "$build/fw/mps2_memchan.elf" ]; then
  echo "-- memory channel over QEMU's GDB stub (3 s per poll interval)"
  "$bin/memchan_gdb_bench" qemu-system-arm "$build/fw/mps2_memchan.elf" "$dir" 3 > "$dir/memchan_gdb.json"
else
  echo '{"skipped": "qemu-system-arm or the MPS2 firmware missing"}' > "$dir/memchan_gdb.json"
fi

python3 - "$dir" "$out" "$start" "$end" <<'PY'
import json, sys
d, out, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
runs = [json.loads(l) for l in open(d + "/tcp_runs.jsonl")]
import os
res = {"tcp": [], "tcp_sustained": {}, "cpus": os.cpu_count(),
       "load_before": open(d + "/load_before").read().split(),
       "load_after": open("/proc/loadavg").read().split()[:3]}
print("\nTCP record server, in-process reader (frame decoder), loopback")
print("%-5s %-7s %-10s %-12s %-12s %-24s %-10s" % ("ring", "threads", "rate", "achieved/s", "MB/s (wire)", "discarded (3 runs)", "lost pkts"))
for ring, threads in ((256, 1), (256, 2), (4096, 1), (4096, 2)):
    best = 0
    sel = [r for r in runs if r["threads"] == threads and r["ring_packets"] == ring]
    rates = sorted({r["rate"] for r in sel if r["rate"] > 0})
    for rate in rates + [0]:
        rs = [r for r in sel if r["rate"] == rate]
        disc = [r["reader"]["discarded_events"] for r in rs]
        lost = [r["reader"]["lost_packets"] for r in rs]
        ach = min(r["events_per_s"] for r in rs)
        mbs = max(r["reader"]["bytes"] / r["seconds"] / 1e6 for r in rs)
        row = {"ring_kib": ring, "threads": threads, "rate": rate, "runs": len(rs), "achieved_min": ach,
               "wire_mb_s_max": round(mbs, 1), "discarded": disc, "lost_packets": lost,
               "damaged": sum(r["reader"]["damaged_frames"] for r in rs)}
        res["tcp"].append(row)
        if rate > 0 and max(disc) == 0 and max(lost) == 0 and ach >= 0.99 * rate:
            best = max(best, rate)
        print("%-5s %-7d %-10s %-12.0f %-12.1f %-24s %-10s" % ("%dK" % ring, threads, rate or "unpaced", ach, mbs,
              "/".join(map(str, disc)), "/".join(map(str, lost))))
    res["tcp_sustained"]["%dKiB/%d" % (ring, threads)] = best
    print("  sustained with no loss in any run, ring %d KiB, %d thread(s): %d events/s" % (ring, threads, best))
tgt = json.load(open(d + "/tcp_capture_target.json"))
summ = json.load(open(d + "/tcp_summary.json"))["summary"]
res["tcp_capture"] = {"target": tgt, "events": summ["events"], "discarded": summ["discarded"],
                      "lost_packets": summ["lost_packets"], "capture_wall_s": round(end - start, 2)}
print("\nemb capture --tcp at 1 M events/s: %d events recorded, %d decoded, %d discarded, %d packets lost"
      % (tgt["events"], summ["events"], summ["discarded"], summ["lost_packets"]))
fr = json.load(open(d + "/frames.json"))
res["frames"] = fr
print("\nFrames: wire bytes per payload byte, codec speed (MB of payload/s)")
print("%-28s %8s %10s %10s %10s %10s" % ("payload", "bytes", "wire/pay", "encode", "stream", "decode"))
for f in fr["frames"]:
    print("%-28s %8d %10.4f %10.0f %10.0f %10.0f" % (f["kind"], f["payload"], f["wire_per_payload"],
          f["encode_mb_s"], f["stream_encode_mb_s"], f["decode_mb_s"]))
print("SWO parse + demux: %.0f MB/s of SWO bytes" % fr["swo"]["swo_mb_s"])
mc = json.load(open(d + "/memchan_gdb.json"))
res["memchan_gdb"] = mc
if "polls" in mc:
    print("\nMemory channel over the GDB protocol (QEMU mps2-an385, %d-byte up ring, %d-byte m blocks,"
          " 16 KiB read %.2f ms)" % (mc["ring_bytes"], mc["block"], mc["read_16k_ms"]))
    print("%-12s %8s %10s %14s %14s %10s" % ("interval ms", "polls", "KB/s", "halt avg ms", "halt max ms", "halted %"))
    for p in mc["polls"]:
        print("%-12d %8d %10.1f %14.3f %14.3f %10.1f" % (p["interval_ms"], p["polls"], p["kb_per_s"],
              p["halt_ms_avg"], p["halt_ms_max"], p["halted_pct"]))
json.dump(res, open(out, "w"), indent=1)
print("\nwritten:", out)
PY
