#!/usr/bin/env python3
"""What `emb top` showed, held against what the kernel itself counted (printed on UART0 at
its END event: `kern: switches N`, `kern: ticks T tick_irqs N ...` (its tick interrupts),
`kern: thread I NAME run CYCLES switches N ... stack
BYTES ... stack_size BYTES`, the stack from the kernel's own paint check; and once the
link sent the rest: `kern: ring cpu0 unread U size S discarded D`, `kern: log ring unread
U size S dropped D`, `kern: logged N last TEXT`, the text as the firmware renders it
itself; see examples/kernel-cortex-m/fw.c). top_live.sh runs it.

usage: check_top.py pane PANE.txt UART0.txt     the screen, read with tmux capture-pane
       check_top.py filter PANE.txt UART0.txt   the screen with the filter typed (/sensor)
       check_top.py once ONCE.txt UART0.txt     --once --filter logger
       check_top.py json VIEWS.ndjson UART0.txt  the --json views"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from tap import done, ok as check  # noqa: E402

mode, shown, uart_path = sys.argv[1], sys.argv[2], sys.argv[3]
uart = open(uart_path).read()

m = re.search(r"kern: switches (\d+)", uart), re.search(r"kern: ticks \d+ tick_irqs (\d+)", uart)
if None in m:
    check(False, f"the kernel printed its switches and ticks on UART0 ({uart_path})")
    done()
kern_switches, kern_tick_irqs = int(m[0].group(1)), int(m[1].group(1))
kern = {}
for t in re.finditer(r"kern: thread (\d+) (\S+) run (\d+) switches (\d+) .*stack (\d+) .*stack_size (\d+)", uart):
    kern[int(t.group(1))] = dict(name=t.group(2), run=int(t.group(3)), switches=int(t.group(4)),
                                 stack=int(t.group(5)), stack_size=int(t.group(6)))
check(len(kern) >= 4 and kern_switches > 100, f"the kernel printed its accounting ({len(kern)} threads)")
m = re.search(r"kern: ring cpu0 unread (\d+) size (\d+) discarded (\d+)", uart)
kern_ring = dict(unread=int(m.group(1)), size=int(m.group(2)), dropped=int(m.group(3))) if m else None
m = re.search(r"kern: log ring unread (\d+) size (\d+) dropped (\d+)", uart)
kern_logring = dict(unread=int(m.group(1)), size=int(m.group(2)), dropped=int(m.group(3))) if m else None
m = re.search(r"kern: logged (\d+) last (.*)", uart)
kern_logged, kern_last_log = (int(m.group(1)), m.group(2).strip()) if m else (None, None)
check(kern_ring and kern_logring and kern_logged, "the firmware printed its rings and what it logged")


def stack_ok(name, used, size, k):
    """The kernel's high-water was taken at its END event; idle still ran after it (it sends
    the rest), so its mark can only have grown since; every other thread was blocked for
    good before it."""
    if size != k["stack_size"]:
        return False
    return used >= k["stack"] if name == "idle" else used == k["stack"]


def check_stacks(rows):
    """rows: {index: (name, used, size)}: each thread's stack high-water, the kernel's."""
    for index, k in sorted(kern.items()):
        name, used, size = rows.get(index, (None, None, None))
        check(used is not None and stack_ok(k["name"], used, size, k),
              f"{k['name']}: stack {used}/{size} bytes used (the kernel's paint check: {k['stack']}/{k['stack_size']})")


def check_rings(rows):
    """rows: [(name, kind, unread, size, dropped)] read through the descriptor."""
    trace = [r for r in rows if r[1] == "trace"]
    log = [r for r in rows if r[1] == "log"]
    check(len(rows) > 0, f"the rings read from the target ({len(rows)})")
    check(len(trace) == 1 and trace[0][2:] == (kern_ring["unread"], kern_ring["size"], kern_ring["dropped"]),
          f"the trace ring: {trace[0][2:] if trace else '?'} unread, size, dropped (firmware {kern_ring})")
    check(len(log) == 1 and log[0][2:] == (kern_logring["unread"], kern_logring["size"], kern_logring["dropped"]),
          f"the log ring: {log[0][2:] if log else '?'} unread, size, dropped (firmware {kern_logring})")


def pane_rows(text):
    """The screen's thread rows {index: (name, used, size)} and ring rows."""
    by_name = {k["name"]: i for i, k in kern.items()}
    stacks = {}
    for m in re.finditer(r"^(\S+)\s+[\d.]+\s+\d+\s+\d+\s+[\d.]+\s+(\d+)/(\d+)", text, re.M):
        if m.group(1) in by_name:
            stacks[by_name[m.group(1)]] = (m.group(1), int(m.group(2)), int(m.group(3)))
    rings = [(m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5))) for m in
             re.finditer(r"^(\S+)\s+(trace|log)\s+(\d+)\s+(\d+)\s+[\d.]+\s+(\d+)$", text, re.M)]
    return stacks, rings


def check_pane_log(text):
    m = re.search(r"^LOG\s+(\d+) records, (\d+) dropped", text, re.M)
    check(m is not None and int(m.group(1)) == kern_logged,
          f"{m.group(1) if m else '?'} log records decoded (the firmware logged {kern_logged})")
    check(m is not None and int(m.group(2)) == kern_logring["dropped"],
          f"{m.group(2) if m else '?'} log records dropped (the firmware's ring: {kern_logring['dropped']})")
    lines = re.findall(r"^\[\s*[\d.]+\] INF fw: (.*)$", text, re.M)
    check(lines and lines[-1].strip() == kern_last_log,
          f"the latest log line '{lines[-1] if lines else ''}' is the firmware's last: '{kern_last_log}'")


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
    check("q quit" in text and "/ filter" in text, "the keys are shown")
    stacks, rings = pane_rows(text)
    check_stacks(stacks)
    check_rings(rings)
    check_pane_log(text)


def check_filtered(text, kept, what, final):
    """Only the rows whose name holds the filter: the one thread named `kept`; the heading's
    totals those of every thread (`final`: the run's end, the kernel's count)."""
    stacks, _ = pane_rows(text)
    names = sorted(n for n, _, _ in stacks.values())
    check(names == [kept], f"{what}: the threads shown are {names} (only {kept})")
    m = re.search(r"switches (\d+) ", text)
    shown_rows = len(re.findall(r"^\S+\s+[\d.]+\s+\d+\s+(\d+)\s+[\d.]+\s+\d+/\d+", text, re.M))
    check(m is not None and (int(m.group(1)) == kern_switches if final else int(m.group(1)) > 0) and shown_rows == 1,
          f"{what}: the heading's totals stay whole ({m.group(1) if m else '?'} switches)")


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
    tick = {i["irq"]: i for i in last["interrupts"]}.get(9, {})  # TIMER1, the kernel's tick
    check(tick.get("count") == kern_tick_irqs,
          f"irq 9 (the tick) entered {tick.get('count')} times (the kernel counted {kern_tick_irqs} tick interrupts)")
    check(any(i["irq"] == 9 and i["per_s"] > 0 for v in views for i in v["interrupts"]),
          "irq 9 per second, in the views while it ran")
    rates = {e["event"]: e for e in last["top_events"]}
    check("switch" in rates and rates["switch"]["count"] == kern_switches,
          "among the busiest event types: switch, the kernel's count")
    check_stacks({t["index"]: (t["name"], t["stack_used"], t["stack_size"]) for t in last["threads"]
                  if t["has_stack"]})
    check_rings([(r["name"], r["kind"], r["unread"], r["size"], r["dropped"]) for r in last["rings"]])
    log = last.get("log", {})
    check(log.get("records") == kern_logged, f"{log.get('records')} log records (the firmware logged {kern_logged})")
    check(log.get("dropped") == kern_logring["dropped"],
          f"{log.get('dropped')} log records dropped (the firmware's ring: {kern_logring['dropped']})")
    lines = log.get("lines", [])
    check(lines and lines[-1]["text"] == kern_last_log and lines[-1]["module"] == "fw",
          f"the latest log line is the firmware's last: '{kern_last_log}'")


def check_shown():
    if mode == "pane":
        check_pane(open(shown).read())
    elif mode == "filter":
        text = open(shown).read()
        check("filter sensor" in text.splitlines()[0], "the heading names the filter typed")
        check_filtered(text, "sensor", "typed /sensor", True)
    elif mode == "once":
        check_filtered(open(shown).read(), "logger", "--once --filter logger", False)
    else:
        check_json(open(shown).read().splitlines())


try:
    check_shown()
except (OSError, ValueError, IndexError, KeyError, TypeError) as e:  # a view cut short, a file missing
    check(False, f"{mode}: what emb top showed could be read ({e!r})")
done()
