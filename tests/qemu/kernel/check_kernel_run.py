"""Holds the threaded firmware's trace against the kernel's own accounting (kernel_run.sh).

The kernel counts every switch and charges each thread's run time at the switch; the
trace records a switch event at the same point. Decoded by emb, the trace must name
exactly as many switches as the kernel counted (in all and per thread), give each thread
a share of the run within one percentage point of the kernel's, and show every class of
event the kernel's operations record."""
import json
import os
import re
import sys

work = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from tap import done, ok as check  # noqa: E402


uart = open(f"{work}/uart0.txt", encoding="utf-8").read()
check("kern: run done" in uart, "the firmware finished its run")
m = re.search(r"kern: switches (\d+)", uart)
kern_switches = int(m.group(1)) if m else -1
kern = {}
for t in re.finditer(r"kern: thread (\d+) (\S+) run (\d+) switches (\d+) blocked (\d+) "
                     r"stack (\d+) boost (\d+)", uart):
    kern[int(t.group(1))] = dict(name=t.group(2), run=int(t.group(3)), switches=int(t.group(4)),
                                 blocked=int(t.group(5)), stack=int(t.group(6)),
                                 boost=int(t.group(7)))
check(len(kern) >= 5, f"the kernel reported {len(kern)} threads")

doc = json.load(open(f"{work}/trace.json", encoding="utf-8"))
events = [e for e in doc["events"] if "event" in e]
summary = json.load(open(f"{work}/summary.json", encoding="utf-8"))
check(summary["summary"]["discarded"] == 0 and summary["summary"]["lost_packets"] == 0,
      "nothing was dropped on the way")
switches = [e for e in events if e["event"] == "switch"]
check(len(switches) == kern_switches and kern_switches > 100,
      f"every switch accounted for: trace {len(switches)}, kernel {kern_switches}")
check(events[-1]["event"] == "user_event" and events[-1]["fields"]["a"] == kern_switches,
      "the END event is the trace's last and carries the kernel's count")

threads = {t["index"]: t for t in summary["summary"]["threads"]["items"]}
total = sum(k["run"] for k in kern.values())
for index, k in sorted(kern.items()):
    t = threads.get(index)
    if t is None:
        check(False, f"thread {k['name']} is in the trace summary")
        continue
    check(t["name"] == k["name"], f"thread {index} named {t['name']} (kernel: {k['name']})")
    check(t["switches_out"] == k["switches"],
          f"{k['name']}: switched out {t['switches_out']} times (kernel {k['switches']})")
    kload = k["run"] / total
    check(abs(t["load"] - kload) < 0.01,
          f"{k['name']}: load {100 * t['load']:.2f}% from the trace, {100 * kload:.2f}% by the kernel")
    if kload > 0.05:
        check(abs(t["run_ticks"] - k["run"]) <= 0.01 * k["run"],
              f"{k['name']}: ran {t['run_ticks']} cycles by the trace, {k['run']} by the kernel")
    if k["name"] != "idle":
        check(0 < k["blocked"] and abs(t["blocked_ticks"] - k["blocked"]) <= 0.01 * k["blocked"],
              f"{k['name']}: blocked {t['blocked_ticks']} cycles by the trace, {k['blocked']} by the kernel")
    check(0 < k["stack"] < 1024, f"{k['name']}: stack high-water {k['stack']} of 1024 bytes")
# Tickless idle (kern_idle_sleep): the kernel's tick is the trace clock's count of tick
# periods, so it stays right across stretched sleeps; each of the four standby sleeps
# (fw.c: kern_sleep(20) with the sensor stopped, at samples 32, 96, 160 and 224) lasts its
# twenty ticks, give or take the tick it began in and the one period QEMU's timer under
# -icount can deliver an alarm late while the core sleeps in WFI (its periodic ticks get
# lost the same way without tickless idle); and the idle thread's run time, by the kernel
# and by the trace, covers every tickless sleep.
by_name = {k["name"]: (i, k) for i, k in kern.items()}
m = re.search(r"kern: ticks (\d+) tick_irqs (\d+) tickless (\d+) slept (\d+) longest (\d+)", uart)
ticks, irqs, sleeps, slept, longest = (int(x) for x in m.groups()) if m else (0, 0, 0, 0, 0)
PERIOD = 25000  # core cycles a tick: MPS2_CPU_HZ / FW_TICK_HZ
first_switch = switches[0]["ts"] if switches else 0
by_clock = (events[-1]["ts"] - first_switch) / PERIOD
check(abs(ticks - by_clock) <= 1, f"the kernel's tick {ticks} is the clock's {by_clock:.2f} tick periods at the end")
check(0 < irqs < ticks and slept > 0, f"{ticks} ticks, {irqs} tick interrupts: {slept} passed in tickless sleeps")
tickless = [e for e in events if e["event"] == "tickless_wake"]
check(len(tickless) == sleeps and sleeps > 0 and
      len([e for e in events if e["event"] == "tickless_sleep"]) == sleeps,
      f"every tickless sleep traced: {len(tickless)} (kernel {sleeps})")
check(longest >= 15 * PERIOD and max(e["fields"]["elapsed"] for e in tickless) >= 15 * PERIOD,
      f"the longest tickless sleep spans {longest / PERIOD:.1f} ticks")
control = by_name.get("control", (-1, None))[0]
standby = [e["fields"]["blocked_cycles"] / PERIOD for e in events if e["event"] == "wait_end"
           and e["fields"]["thread"] == control and e["fields"]["blocked_cycles"] > 10 * PERIOD]
check(len(standby) == 4 and all(19 <= b <= 21 for b in standby),
      f"the four standby sleeps of 20 ticks: {[round(b, 2) for b in standby]}")
idle_i, idle = by_name.get("idle", (-1, {"run": 0}))
slept_cycles = sum(e["fields"]["elapsed"] for e in tickless)
check(idle["run"] >= slept_cycles and threads.get(idle_i, {}).get("run_ticks", 0) >= slept_cycles,
      f"idle ran {idle['run']} cycles by the kernel, {threads.get(idle_i, {}).get('run_ticks')} by the trace, "
      f"{slept_cycles} of them in tickless sleeps")
check(abs(sum(t["load"] for t in threads.values()) - 1) < 0.001,
      f"the threads' loads sum to {100 * sum(t['load'] for t in threads.values()):.3f}%")

# The Perfetto export's per-thread load counters as @tracerbench/trace-model reads them:
# each thread's mean over the windows (weighted by their length) within one percentage
# point of the kernel's share, and the threads' loads summing to 100 in every window after
# the first switch (one CPU, the idle thread a thread like the others), give or take each
# counter's rounding to a whole percent.
series = json.load(open(f"{work}/perfetto.tracerbench", encoding="utf-8"))["series"]
loads = {k[len("thread load ("):-1]: v for k, v in series.items() if k.startswith("thread load (")}
end_us = max(ts for v in series.values() for ts, _ in v) if series else 0
for index, k in sorted(kern.items()):
    pts = loads.get(f"{k['name']}({index})")
    if not pts:
        check(False, f"{k['name']}: a thread load counter in the Perfetto export")
        continue
    edges = [ts for ts, _ in pts] + [2 * pts[-1][0] - pts[-2][0] if len(pts) > 1 else end_us]
    span = edges[-1] - edges[1]
    mean = sum(v * (edges[i + 1] - edges[i]) for i, (_, v) in enumerate(pts) if i > 0) / span
    check(abs(mean / 100 - k["run"] / total) < 0.01,
          f"{k['name']}: Perfetto load {mean:.2f}%, kernel {100 * k['run'] / total:.2f}%")
rows = list(zip(*[[v for _, v in pts] for pts in loads.values()]))
sums = [sum(r) for r in rows[1:-1]]
check(len(loads) == len(kern) and sums and all(abs(s - 100) <= len(loads) / 2 + 0.5 for s in sums),
      f"the threads' Perfetto loads sum to 100 in each of {len(sums)} windows "
      f"(from {min(sums, default=0)} to {max(sums, default=0)})")
check(any(k["boost"] > 0 for k in kern.values()),
      "emb_stats_thread_get: a priority boost was recorded (priority inheritance)")

# Priority inheritance two links down (fw.c: every eighth sample the driver waits for i2c
# held by the control loop, which waits for spi held by the logger): the kernel raised the
# logger (base 2) to the driver's priority 4, its own max_boost says 2; the trace records
# that raise through spi, and emb trace --summary names the whole chain.
by_name = {k["name"]: (i, k) for i, k in kern.items()}
logger_i, logger = by_name.get("logger", (-1, {"boost": -1}))
check(logger["boost"] == 2, f"the kernel boosted the logger by {logger['boost']} (2: the driver's priority)")
handles = {e["fields"]["handle"]: e["fields"]["name"] for e in events if e["event"] == "obj_init"}
raises = [e for e in events if e["event"] == "prio_inherit" and e["fields"]["thread"] == logger_i
          and e["fields"]["to"] == 4 and handles.get(e["fields"]["cause"]) == "spi"]
check(len(raises) > 0, f"prio_inherit raised the logger to 4 through spi {len(raises)} times")
chains = summary["summary"]["threads"].get("pi_chains", [])
two = [c for c in chains if c["links"] == 2]
want = [by_name[n][0] for n in ("sensor", "control", "logger") if n in by_name]
check(summary["summary"]["threads"].get("pi_deepest") == 2 and len(two) == 1 and
      two[0]["threads"] == want and [m["name"] for m in two[0]["mutexes"]] == ["i2c", "spi"] and
      two[0]["count"] == len(raises),
      f"the summary's two-link chain: {[c['text'] for c in two]}, {two[0]['count'] if two else 0} waits")
check(re.search(r"^  2 links +\d+ waits, .* sensor\(4\) -> i2c -> control\(3\) -> spi -> logger\(2\)$",
                open(f"{work}/summary.txt", encoding="utf-8").read(), re.M) is not None,
      "emb trace --summary prints the chain")

classes = {e["class"] for e in events}
for c in ("sched", "thread", "wait", "sync", "ipc", "notify", "work", "time", "irq", "power"):
    check(c in classes, f"class {c} recorded by a real operation")
names = {e["event"] for e in events}
for n in ("prio_inherit", "thread_priority", "sem_give", "msgq_send", "notify_set", "work_start",
          "dwork_schedule", "timeout_fire", "sched_lock", "idle_enter", "state_enter"):
    check(n in names, f"event {n} recorded")
check(any(e["depth"] >= 2 for e in events), "the two interrupts nested (depth 2)")
# Latency metrics: each kind of interval counted as often as the trace holds it.
lat = json.load(open(f"{work}/latency.json", encoding="utf-8"))["latency"]
isr_wakes = sum(1 for e in events if e["event"] == "wake" and e["fields"]["source"] == "isr")
check(0 < lat["isr_to_thread"]["count"] <= isr_wakes,
      f"ISR to thread measured {lat['isr_to_thread']['count']} times of {isr_wakes} wakes from interrupts")
blocking = sum(1 for e in switches if e["fields"]["reason"] in ("block", "sleep"))
check(lat["block_to_switch"]["count"] == blocking,
      f"a switch from a blocking thread measured for each of the {blocking}")
check(lat["irq"]["count"] == sum(1 for e in events if e["event"] == "irq_exit"),
      "every interrupt handler measured")
check(all(m["min_ticks"] <= m["max_ticks"] for m in lat.values() if m["count"]), "min <= max")
done()
