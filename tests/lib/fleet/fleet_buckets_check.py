#!/usr/bin/env python3
"""The buckets `emb fleet buckets --json` gives for test_fleet.sh's corpus, against the
sources of the records: fleet_device.c faults in sensor_read (called by sensor_poll, a bad
pointer: SIGSEGV), average (called by filter_update, a division by zero: SIGFPE),
config_check (__builtin_trap: SIGILL) and inside the C library's abort, called by
config_abort (whether the stack scan finds that caller past the C library's frames varies
from run to run, so the four aborts are in "abort config_abort" and "abort (no function
known)" together); each of the four on four devices (node-a1, node-a2 of build a, firmware
1.0.0; node-b1, node-b2 of build b, 1.1.0). The MPS2 firmware's faults (tests/qemu/
test_qemu_mps2.c): a bus fault in sensor_driver_poll, a division by zero in sensor_average.
usage: fleet_buckets_check.py BUCKETS.json [mps2]"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from tap import done, ok as check  # noqa: E402

doc = json.load(open(sys.argv[1]))
mps2 = len(sys.argv) > 2 and sys.argv[2] == "mps2"


def bucket(prefix):
    found = [b for b in doc["buckets"] if b["signature"].startswith(prefix)]
    check(len(found) == 1, "one bucket starts %r (found %d)" % (prefix, len(found)))
    return found[0] if found else None


def merged(prefix):
    """The buckets whose signatures start with prefix, as one."""
    found = [b for b in doc["buckets"] if b["signature"].startswith(prefix)]
    check(1 <= len(found) <= 2, "one or two buckets start %r (found %d)" % (prefix, len(found)))
    versions = {}
    for b in found:
        for v, n in b["versions"].items():
            versions[v] = versions.get(v, 0) + n
    return {"count": sum(b["count"] for b in found), "devices": sum(b["devices"] for b in found),
            "versions": versions, "first_seen": min(b["first_seen"] for b in found) if found else 0,
            "last_seen": max(b["last_seen"] for b in found) if found else 0} if found else None


for prefix in ("memory sensor_read sensor_poll", "arithmetic average filter_update",
               "illegal instruction config_check", "abort "):
    b = merged(prefix) if prefix == "abort " else bucket(prefix)
    if b:
        check(b["count"] == 4, "%s: 4 records, not %d" % (prefix, b["count"]))
        check(b["devices"] == 4, "%s: 4 devices, not %d" % (prefix, b["devices"]))
        check(b["versions"] == {"1.0.0": 2, "1.1.0": 2}, "%s: versions %s" % (prefix, b["versions"]))
        check(b["first_seen"] == b["last_seen"] == 1800000000, "%s: seen at the upload time" % prefix)
records = 16 + 1 + 9  # native; the golden v2 record; the golden region's record and 8 minis
if mps2:
    bus = bucket("bus sensor_driver_poll")
    check(bus is not None and bus["count"] >= 1, "the MPS2 bus fault")
    div = bucket("arithmetic sensor_average")
    check(div is not None and div["count"] == 1, "the MPS2 division by zero")
    records += 3
check(doc["records"] == records, "%d records, not %d" % (records, doc["records"]))
check(doc["refused"] == 4, "4 refused, not %d" % doc["refused"])
counts = [b["count"] for b in doc["buckets"]]
check(counts == sorted(counts, reverse=True), "most records first")
# What has its ELF in the store is symbolised; the golden records (no ELF) keep a
# signature of build and address, the same build's mini-records each their own.
unsymbolised = [b for b in doc["buckets"] if "@" in b["signature"]]
check(all("@1011121314151617" in b["signature"] for b in unsymbolised),
      "only the golden build stays unsymbolised: %s" % [b["signature"] for b in unsymbolised])
check(len(unsymbolised) == 10, "the golden v2 record, region record and 8 minis: %d" % len(unsymbolised))
done()
