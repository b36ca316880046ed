#!/usr/bin/env python3
"""What `emb top` showed, held against what the kernel itself counted (printed on UART0 at
its END event: `kern: switches N`, `kern: thread I NAME run CYCLES switches N ...`; see
examples/kernel-cortex-m/fw.c). top_live.sh runs it.

usage: check_top.py pane PANE.txt UART0.txt     the screen, read with tmux capture-pane
       check_top.py json VIEWS.ndjson UART0.txt  the --json views"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from tap import done, ok as check  # noqa: E402

mode, shown, uart_path = sys.argv[1], sys.argv[2], sys.argv[3]
uart = open(uart_path).read()

kern_switches = int(re.search(r"kern: switches (\d+)", uart).group(1))
kern = {}
for t in re.finditer(r"kern: thread (\d+) (\S+) run (\d+) switches (\d+)", uart):
    kern[int(t.group(1))] = dict(name=t.group(2), run=int(t.group(3)), switches=int(t.group(4)))
check(len(kern) >= 4 and kern_switches > 100, f"the kernel printed its accounting ({len(kern)} threads)")


def check_pane(text):
    check("reading" in text.splitlines()[0], "the view is live: still reading the target")
    check(f"switches {kern_switches} " in text, f"the heading counts the kernel's {kern_switches} switches")
    m = re.search(r"^events (\d+) ", text, re.M)
    check(m is not None and int(m.group(1)) > kern_switches, "events counted, more than the switches")
    check(re.search(r"^cpu0\s+cpu\s+[1-9]\d*\s", text, re.M) is not None, "the context cpu0, its events")
    for index, k in sorted(kern.items()):
        # THREAD LOAD% SWITCH/S SWITCHED RUN-MS
        row = re.search(rf"^{re.escape(k['name'])}\s+[\d.]+\s+\d+\s+(\d+)\s+([\d.]+)", text, re.M)
        check(row is not None and int(row.group(1)) == k["switches"],
              f"thread {k['name']} shown, switched {row.group(1) if row else '?'} times (kernel {k['switches']})")
    check(re.search(r"^irq \d+\s+[1-9]", text, re.M) is not None, "interrupts counted per vector")
    check("q quit" in text, "the keys are shown")


def check_json(lines):
    views = [json.loads(l) for l in lines if l.strip()]
    check(len(views) >= 2, f"{len(views)} views, one per interval")
    events = [v["events"] for v in views]
    check(events == sorted(events) and events[-1] > 0, "the counts only grow, view after view")
    check(any(v["state"] == "reading" and 0 < v["events"] for v in views), "views while the target is read")
    last = views[-1]
    check(last["ended"] and last["state"] == "ended: interrupted", "the last view says why it ended")
    check(last["switches"] == kern_switches, f"switches {last['switches']} (kernel {kern_switches})")
    check(last["discarded"] == 0 and last["lost_packets"] == 0, "nothing dropped, nothing lost")
    threads = {t["index"]: t for t in last["threads"]}
    total = sum(k["run"] for k in kern.values())
    for index, k in sorted(kern.items()):
        t = threads.get(index)
        check(t is not None and t["name"] == k["name"], f"thread {index} named {k['name']}")
        if t is None:
            continue
        check(t["switches_out"] == k["switches"],
              f"{k['name']}: switched out {t['switches_out']} times (kernel {k['switches']})")
        if k["run"] > 0.05 * total:
            check(abs(t["run_ticks"] - k["run"]) <= 0.01 * k["run"],
                  f"{k['name']}: ran {t['run_ticks']} cycles by emb top, {k['run']} by the kernel")
    check(any(i["count"] > 0 for i in last["interrupts"]), "interrupts per vector")
    rates = {e["event"]: e for e in last["top_events"]}
    check("switch" in rates and rates["switch"]["count"] == kern_switches,
          "among the busiest event types: switch, the kernel's count")


if mode == "pane":
    check_pane(open(shown).read())
else:
    check_json(open(shown).read().splitlines())
done()
