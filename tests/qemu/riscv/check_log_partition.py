#!/usr/bin/env python3
"""Checks the partition `emb log` gives each record of the RISC-V virt example
(examples/riscv-virt: module `job` is defined in partition FW_PARTITION "worker", module
`work` in none). Usage: check_log_partition.py HART LOGS DESC.json LOG.json LOG.txt

HART and LOGS are the firmware's own: the hart that runs the partition and the log calls
its body made there (fw_stats.hart[HART].part_logs, read by GDB). The partition's id and
name are checked against `emb desc --json`'s partitions section, which the firmware's
emb_partition_define() wrote into memory at run time (the descriptor read over GDB), not
against the ELF metadata `emb log` reads.
  - LOG.json: exactly LOGS records of module job, all on context HART, in run order
    ("worker run 0 on hart HART", 1, ...), each with "partition": {"id", "name"} equal
    to the descriptor's partition; no record of another module has a "partition" key.
  - LOG.txt: the partition column says the name on job's lines and "-" on the others.
Exits 1 on the first mismatch."""
import json
import sys

hart, logs = int(sys.argv[1]), int(sys.argv[2])
parts = json.load(open(sys.argv[3]))["partitions"]
records = [json.loads(line) for line in open(sys.argv[4]) if line.strip()]
text = open(sys.argv[5]).read().splitlines()

assert len(parts) == 1, parts
want = {"id": parts[0]["id"], "name": parts[0]["name"]}
job = [r for r in records if r.get("module") == "job"]
others = [r for r in records if r.get("type") == "log" and r.get("module") != "job"]
print("# %d records of module job (the firmware made %d), %d of other modules; partition %s"
      % (len(job), logs, len(others), want))
assert logs >= 1 and len(job) == logs, (len(job), logs)
assert all(r.get("partition") == want and r["context_id"] == hart for r in job), job
assert [r["text"] for r in job] == ["worker run %d on hart %d" % (i, hart) for i in range(logs)], job
assert others and not any("partition" in r for r in others), [r for r in others if "partition" in r][:3]

job_lines = [line for line in text if "worker run " in line]
work_lines = [line for line in text if "took item" in line]
assert len(job_lines) == logs and all(" %s  job " % want["name"] in line for line in job_lines), job_lines
assert work_lines and all(" -       work " in line for line in work_lines), work_lines[:3]
