#!/usr/bin/env python3
"""The RISC-V crash record against GDB: one record for every hart.

`emb crash --json` gives the record's hart (cpu), its mcause and mepc (status words) and,
for every other hart, the state, pc and mcause it said when it stopped. GDB reads each
hart's own mepc and mcause CSRs through QEMU's GDB stub after the harts have parked (a
parked hart takes no trap, so both still hold the trap that stopped it): the
independent reading the record must agree with. The mcause values are the RISC-V
privileged specification's (table 3.6): 5 a load access fault, 0x80000003 the machine
software interrupt.

Usage: check_crash.py CRASH.json GDB-TRAPS.txt one|all
  one: the last hart faulted, every other one stopped on the request.
  all: every hart faulted; the record is one hart's, every other one says it faulted too.
"""
import json
import sys

LOAD_ACCESS_FAULT = 5
MACHINE_SOFTWARE_INTERRUPT = 0x80000003


def main():
    crash = json.load(open(sys.argv[1]))
    gdb = {}
    for line in open(sys.argv[2]):
        _, hart, mepc, mcause = line.split()
        gdb[int(hart)] = (int(mepc, 16), int(mcause, 16))
    mode = sys.argv[3]
    harts = len(gdb)
    problems = []
    cpu = crash["record"]["cpu"]
    status = {s["name"]: int(s["value"], 16) for s in crash["status"]}
    if mode == "one" and cpu != harts - 1:
        problems.append(f"the record is hart {cpu}'s, not the last hart's")
    if (status.get("mcause"), crash["pc"]["address"]) != (LOAD_ACCESS_FAULT, hex_of(gdb[cpu][0])):
        problems.append(f"record: mcause {status.get('mcause')} pc {crash['pc']['address']}, GDB {gdb[cpu]}")
    others = {h["hart"]: h for h in crash.get("harts", [])}
    if sorted(others) != sorted(set(gdb) - {cpu}):
        problems.append(f"the record tells of harts {sorted(others)}, not every other one")
    want_state = "stopped" if mode == "one" else "faulted"
    want_cause = MACHINE_SOFTWARE_INTERRUPT if mode == "one" else LOAD_ACCESS_FAULT
    for h, o in sorted(others.items()):
        pc = o["pc"]["address"] if o["pc"] else None
        function = o["pc"]["frames"][-1]["function"] if o["pc"] and o["pc"]["frames"] else None
        got = (o["state"], pc, int(o["mcause"], 16), function)
        want = (want_state, hex_of(gdb[h][0]), want_cause, "fault_if_asked")
        print(f"# hart {h}: record {got}, GDB mepc/mcause {tuple(hex(v) for v in gdb[h])}")
        if got != want or gdb[h][1] != want_cause:
            problems.append(f"hart {h}: {got}, expected {want}")
    for p in problems:
        print("not ok:", p)
    return 1 if problems else 0


def hex_of(v):
    return "0x%x" % v


if __name__ == "__main__":
    sys.exit(main())
