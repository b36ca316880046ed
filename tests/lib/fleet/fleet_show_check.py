#!/usr/bin/env python3
"""A bucket's example (`emb fleet show --json`) against `emb crash --json` of the same
file with the same ELF: the chain's functions are the pc's frames, the caller's and the
backtrace's, in that order. Examples without an ELF in the corpus (the golden records)
must be unsymbolised.
usage: fleet_show_check.py EMB SHOW.json ELF_A ELF_B MPS2_ELF"""
import json
import os
import subprocess
import sys

emb, show, elf_a, elf_b, elf_mps2 = sys.argv[1:6]
e = json.load(open(show))["example"]
name = os.path.basename(e["source"])
elf = elf_a if name.startswith("node-a") else elf_b if name.startswith("node-b") else \
    elf_mps2 if name.startswith("mps2") else None
if elf is None:
    sys.exit(0 if not e["symbolised"] and not e["chain"] else 1)
crash = json.loads(subprocess.run([emb, "crash", "--elf", elf, "--json", "--events", "0", e["source"]],
                                  capture_output=True, check=True).stdout)
want = []
codes = [crash["pc"]] + ([crash["caller"]] if crash.get("caller") else []) + crash.get("backtrace", [])[1:]
for code in codes:
    want += [f["function"] for f in code["frames"] if f["function"]]
got = [line.split(" ")[0] for line in e["chain"]]
if got != want:
    print("fleet_show_check: %s: chain %s, emb crash %s" % (name, got, want))
    sys.exit(1)
sys.exit(0)
