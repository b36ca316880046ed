#!/usr/bin/env python3
"""Checks one run of the RISC-V virt example (examples/riscv-virt) against what each hart
says it emitted. Usage: check_trace.py HARTS STATS NDJSON PERFETTO

STATS is what GDB printed from fw_stats (one line per hart: thread_events ticks taken
logs part_faults part_restarts), NDJSON is `emb trace -f ndjson` of the captured stream and PERFETTO its
`-f perfetto`. Per hart: every event is accounted for, received + discarded = emitted
exactly; the firmware's sequence numbers rise strictly (none duplicated or made up); the
timer interrupt's events are nested (interrupt kind, depth 1) on their own hart; the work
items went from hart 0 to the others. Prints TAP."""
import json
import sys

FW_EV_PUT, FW_EV_TAKE, FW_EV_TICK, FW_EV_STRESS = 1, 2, 3, 4
FW_ITEMS = 400

harts = int(sys.argv[1])
stats = [list(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
n = 0
failed = 0


def ok(cond, what):
    global n, failed
    n += 1
    failed += 0 if cond else 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what))


per = {h: {"events": 0, "discarded": 0, "tick": [], "thread": [], "kinds": {}, "bad": 0}
       for h in range(harts)}
other = 0
for line in open(sys.argv[3]):
    e = json.loads(line)
    h = e.get("context_id")
    if h not in per:
        other += 1
        continue
    c = per[h]
    if "loss" in e:
        if e["loss"] == "events_discarded":
            c["discarded"] += e["count"]
        else:
            c["bad"] += 1
        continue
    c["events"] += 1
    c["kinds"][e["event"]] = c["kinds"].get(e["event"], 0) + 1
    if e["event"] != "user_event":
        continue
    f = e["fields"]
    if f["id"] == FW_EV_TICK:
        c["tick"].append(f["a"])
        if e["kind"] != "isr" or e["depth"] != 1 or f["b"] != h:
            c["bad"] += 1
    else:
        c["thread"].append((f["a"], f["id"], f["b"]))
        if e["kind"] != "thread" or (f["id"] == FW_EV_STRESS and f["b"] != h):
            c["bad"] += 1

ok(len(stats) == harts, "GDB read the statistics of %d harts" % len(stats))
ok(other == 0, "every record belongs to one of the %d harts' contexts" % harts)


def rising(seq, below):
    return all(b > a for a, b in zip(seq, seq[1:])) and all(0 <= v < below for v in seq)


for h in range(min(harts, len(stats))):
    c = per[h]
    thread_events, ticks, taken = stats[h][0], stats[h][1], stats[h][2]
    part_faults = stats[h][4] if len(stats[h]) > 4 else 0
    # Each interrupt: irq_enter, TICK, irq_exit; each contained partition fault:
    # partition_fault, then partition_restart when it runs again.
    emitted = thread_events + 3 * ticks + 2 * part_faults
    print("# hart %d: emitted %d (%d thread, %d ticks), received %d, discarded %d, kinds %s"
          % (h, emitted, thread_events, ticks, c["events"], c["discarded"], c["kinds"]))
    ok(c["events"] + c["discarded"] == emitted,
       "hart %d: received %d + discarded %d = emitted %d, exactly"
       % (h, c["events"], c["discarded"], emitted))
    ok(c["bad"] == 0, "hart %d: every event is of its hart, interrupt events nested at depth 1"
       % h)
    ok(rising(c["tick"], ticks) and rising([t[0] for t in c["thread"]], thread_events),
       "hart %d: the timer's and the thread's sequence numbers rise strictly" % h)
    ok(len(c["tick"]) > 0 and c["kinds"].get("irq_enter", 0) > 0,
       "hart %d: its machine timer interrupt recorded (%d ticks received of %d)"
       % (h, len(c["tick"]), ticks))
    ok(any(t[1] == FW_EV_STRESS for t in c["thread"]),
       "hart %d: its stress events arrived" % h)
    if harts > 1:
        kinds = {t[1] for t in c["thread"]}
        ok((taken == 0 and FW_EV_TAKE not in kinds) if h == 0 else FW_EV_PUT not in kinds,
           "hart %d: %s" % (h, "queues the work, takes none" if h == 0
                            else "queues none (took %d items)" % taken))
# Which worker takes how many depends on how the host schedules the harts' threads: the
# order is checked, not the shares.
ok(sum(s[2] for s in stats) == FW_ITEMS and (harts == 1 or sum(s[2] for s in stats[1:]) == FW_ITEMS),
   "the work went through the shared queue: the %d items hart 0 queued, the others took"
   % FW_ITEMS)

trace = json.load(open(sys.argv[4]))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
tracks = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
ok(all("hart%d" % h in tracks for h in range(harts)),
   "Perfetto: a track per hart (%s)" % ", ".join(sorted(tracks)))
print("1..%d" % n)
sys.exit(1 if failed else 0)
