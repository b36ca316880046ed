"""The example kernel's threads as tools see them through the debug descriptor.

QEMU runs the threaded firmware with `-append hold`: after its run every thread but idle
is blocked where the firmware's code put it (the sensor driver and the work thread on a
notification, the logger on its semaphore, the control loop on a notification nobody
sends), and UART0 says what the kernel counted. Then:

  1. `emb desc --gdb` lists every thread with the state, wait reason, priorities and
     stack high-water the kernel has, and each blocked thread's saved registers;
  2. GDB's own `dump binary memory` of the RAM, read by `emb desc --dump`, gives the same;
  3. the GDB extension (tools/gdb/emb-gdb.py) lists the same threads (`info emb-threads`),
     and `emb-thread N` switches to a blocked thread's saved registers: GDB's backtrace
     of it names the kernel's wait function (from the ELF's DWARF, GDB's own unwinder);
  4. the descriptor library (tools/descriptor) reads the dump on its own and agrees with
     `emb desc --json`.

usage: check_kernel_threads.py QEMU MACHINE FW EMB WORKDIR TOOLS_DIR"""
import json
import os
import re
import socket
import subprocess
import sys
import time

qemu, machine, fw, emb, work, tools = sys.argv[1:7]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from tap import done, ok as check  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)


def start():
    port = free_port()
    uart = os.path.join(work, "uart0.txt")
    if os.path.exists(uart):
        os.remove(uart)
    q = subprocess.Popen([qemu, "-M", machine, "-nographic", "-monitor", "none",
                          "-icount", "shift=3,sleep=off",
                          "-semihosting-config", "enable=on,target=native",
                          "-serial", f"file:{uart}", "-serial", "null",
                          "-gdb", f"tcp:127.0.0.1:{port}", "-append", "hold", "-kernel", fw],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        if os.path.exists(uart) and "kern: holding" in open(uart, encoding="utf-8").read():
            break
        time.sleep(0.05)
    return q, port, open(uart, encoding="utf-8").read()


def kernel_says(uart):
    out = {}
    for t in re.finditer(r"kern: thread (\d+) (\S+) run \d+ switches \d+ blocked \d+ stack (\d+)", uart):
        out[t.group(2)] = dict(index=int(t.group(1)), stack=int(t.group(3)))
    return out


# What the firmware's code leaves each thread doing at the end (fw.c).
EXPECTED = {
    "idle": ("running", "none", ""),
    "work": ("blocked", "notify", ""),
    "logger": ("blocked", "sem", "log"),
    "control": ("blocked", "notify", ""),
    "sensor": ("blocked", "notify", ""),
}
WAIT_FUNCTION = {"work": "kern_notify_wait", "logger": "kern_sem_take",
                 "control": "kern_notify_wait", "sensor": "kern_notify_wait"}


def check_threads(kernel, said, how):
    threads = {t["name"]: t for t in kernel["threads"]}
    check(sorted(threads) == sorted(EXPECTED), f"{how}: the threads {sorted(threads)}")
    for name, (state, reason, obj) in EXPECTED.items():
        t = threads.get(name)
        if t is None:
            continue
        check((t["state"], t["wait_reason"], t["wait_object_name"]) == (state, reason, obj),
              f"{how}: {name} is {t['state']}, waiting {t['wait_reason']} {t['wait_object_name']}")
        check(t["base_priority"] == t["eff_priority"] == said[name]["index"],
              f"{how}: {name} priority {t['base_priority']}/{t['eff_priority']}")
        if name != "idle":
            check(t["stack_used"] == said[name]["stack"],
                  f"{how}: {name} stack high-water {t['stack_used']} (kernel {said[name]['stack']})")
            check(t["stack_low"] <= t["sp"] < t["stack_low"] + t["stack_size"] and
                  len(t["registers"]) == 16,
                  f"{how}: {name}'s 16 saved registers at sp 0x{t['sp']:x}, inside its stack")
    check(kernel["current_thread"] == "idle" and kernel["irq_nesting_depth"] == 0,
          f"{how}: current thread {kernel['current_thread']}, irq nesting {kernel['irq_nesting_depth']}")


def gdb(port, commands):
    args = ["gdb-multiarch", "-nx", "-batch", "-ex", "set pagination off",
            "-ex", f"source {tools}/gdb/emb-gdb.py", "-ex", f"file {fw}",
            "-ex", f"target remote 127.0.0.1:{port}"]
    for c in commands:
        args += ["-ex", c]
    args += ["-ex", "emb-thread", "-ex", "detach"]  # the CPU's own registers back first
    return run(args, env=dict(os.environ, PYTHONPATH=tools))


q, port, uart = start()
try:
    said = kernel_says(uart)
    check(len(said) == 5, "the firmware held after its run and said what the kernel counted")
    r = run([emb, "desc", "--gdb", f"127.0.0.1:{port}", "--elf", fw, "--json"])
    check(r.returncode in (0, 1), f"emb desc --gdb --json ran (exit {r.returncode}) {r.stderr.strip()[:200]}")
    live = json.loads(r.stdout)["kernel"] if r.stdout else {"threads": []}
    check_threads(live, said, "emb desc --gdb")
    dump = os.path.join(work, "ram.bin")
    g = gdb(port, [f"dump binary memory {dump} 0x20000000 0x20080000"])
    check(os.path.exists(dump) and os.path.getsize(dump) == 0x80000, "GDB dumped the RAM")
    r = run([emb, "desc", "--dump", dump, "--base", "0x20000000", "--elf", fw, "--json"])
    dumped = json.loads(r.stdout)["kernel"] if r.stdout else {"threads": []}
    check(dumped["threads"] == live["threads"], "emb desc --dump of GDB's dump: the same threads")
    if True:
        listed = gdb(port, ["info emb-threads"]).stdout
        for name in EXPECTED:
            check(re.search(rf"^\s*\d+\s+{name}\s", listed, re.M) is not None,
                  f"info emb-threads lists {name}")
        for name, func in WAIT_FUNCTION.items():
            index = said[name]["index"]
            bt = gdb(port, [f"emb-thread {index}", "bt"]).stdout
            check(re.search(rf"^#[1-9]\d* .* in {func} ", bt, re.M) is not None,
                  f"emb-thread {index} ({name}): GDB's backtrace names {func}")
        rings = gdb(port, ["emb-rings"]).stdout
        check("cpu0" in rings, "emb-rings lists the CPU's trace ring")
        sys.path.insert(0, tools)
        from descriptor import read_dump  # noqa: E402

        model = read_dump(dump, 0x20000000, fw)
        mine = {t["name"]: t for t in model["kernel"]["threads"]}
        for t in live["threads"]:
            m = mine.get(t["name"], {})
            same = all(m.get(k) == t[k] for k in ("index", "state", "wait_reason", "base_priority",
                                                  "eff_priority", "sp", "stack_used", "registers"))
            check(same, f"tools/descriptor over the dump: {t['name']} as emb desc --json says")
finally:
    q.kill()
    q.wait()
done()
