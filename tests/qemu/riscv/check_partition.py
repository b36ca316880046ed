#!/usr/bin/env python3
"""Checks the worker partition of the RISC-V virt example (examples/riscv-virt, fw.h)
against what the firmware injected. Usage: check_partition.py HART FAULTS RESTARTS
"ADDR SIZE" DESC.json MINI.json RUN.ndjson

HART, FAULTS and RESTARTS are the firmware's own counts (fw_stats, read by GDB); ADDR SIZE
is partition_body in the ELF (riscv64-unknown-elf-nm -S, binutils' reading). The load the
firmware makes there is a load access fault: mcause 5 (the RISC-V privileged spec's
exception code), which the port files as a memory fault.
  - `emb desc --json`: partition 1 "worker", running, FAULTS faults, RESTARTS restarts,
    its last fault a memory fault, code 5, at a pc inside partition_body.
  - the mini-record ring's bytes (GDB's dump) decoded by `emb crash --json`: FAULTS
    records, sequences 0.., partition 1, the hart as thread, generation = restarts before
    it, memory fault code 5, pc in partition_body.
  - the trace: FAULTS partition_fault events on the hart's context (partition 1, the pc
    in partition_body) and RESTARTS partition_restart events counting 1, 2, ...
Exits 1 on the first mismatch."""
import json
import sys

hart, faults, restarts = map(int, sys.argv[1:4])
addr, size = (int(v, 16) for v in sys.argv[4].split())
desc = json.load(open(sys.argv[5]))
mini = json.load(open(sys.argv[6]))
events = [json.loads(line) for line in open(sys.argv[7])]


def in_body(pc):
    pc = int(pc, 16) if isinstance(pc, str) else pc
    return addr <= pc < addr + size


parts = desc["partitions"]
print("# partitions:", parts)
assert len(parts) == 1, parts
p = parts[0]
assert (p["id"], p["name"], p["state"]) == (1, "worker", "running"), p
assert (p["faults"], p["restarts"]) == (faults, restarts), p
assert (p["fault_class"], p["fault_code"]) == ("memory", 5) and in_body(p["fault_pc"]), p

records = sorted(mini["mini_records"], key=lambda m: m["sequence"])
print("# mini-records:", [(m["sequence"], m["partition"], m["thread"], m["generation"]) for m in records])
assert [m["sequence"] for m in records] == list(range(faults)), records
for i, m in enumerate(records):
    assert (m["partition"], m["thread"], m["generation"]) == (1, hart, i), m
    assert (m["class"], m["code"]) == ("memory", 5), m
    assert in_body(m["pc"]["address"]), m

mine = [e for e in events if e.get("context_id") == hart]
got_faults = [e["fields"] for e in mine if e.get("event") == "partition_fault"]
got_restarts = [e["fields"] for e in mine if e.get("event") == "partition_restart"]
print("# partition_fault %d, partition_restart %d on hart %d" % (len(got_faults), len(got_restarts), hart))
assert len(got_faults) == faults and len(got_restarts) == restarts, (got_faults, got_restarts)
assert all(f["partition"] == 1 and f["thread"] == hart and in_body(f["pc"]) for f in got_faults), got_faults
assert [f["count"] for f in got_restarts] == list(range(1, restarts + 1)), got_restarts
assert not any(e.get("event") in ("partition_fault", "partition_restart") for e in events
               if e.get("context_id") != hart)
