#!/usr/bin/env python3
"""Checks `emb trace --format perfetto-proto` as protoc reads it against the same trace's
Trace Event Format JSON: `protoc --decode=perfetto.protos.Trace` (the protobuf compiler's
own decoder) with the schema subset tools/lib/write/perfetto_trace.proto, whose field
numbers are Perfetto's. usage: perfetto_proto_check.py DECODED.txt TRACE.json [LOG_LINES]"""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from tap import done, ok as check  # noqa: E402


def parse(text):
    """protoc's text format: `name {` ... `}` and `name: value` lines, into nested lists."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        elif line == "}":
            cur = stack.pop()
        elif line:
            k, v = line.split(":", 1)
            v = v.strip()
            cur.setdefault(k, []).append(json.loads(v) if v.startswith('"') else v)
    return root


def main():
    trace = parse(open(sys.argv[1]).read())
    doc = json.load(open(sys.argv[2]))["traceEvents"]
    logs = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    packets = trace["packet"]
    check(all(p["trusted_packet_sequence_id"] == ["1"] for p in packets), "one packet sequence")
    check("interned_data" in packets[0] and packets[0]["sequence_flags"] == ["1"],
          "the first packet interns and clears the sequence's state")
    idata = packets[0]["interned_data"][0]
    names = {int(n["iid"][0]): n["name"][0] for n in idata.get("event_names", [])}
    cats = {int(n["iid"][0]): n["name"][0] for n in idata.get("event_categories", [])}
    descs = [p["track_descriptor"][0] for p in packets if "track_descriptor" in p]
    events = [p for p in packets if "track_event" in p]
    check(len(packets) == 1 + len(descs) + len(events), "interned data, descriptors, events")
    check(all(p["sequence_flags"] == ["2"] for p in events), "events need the sequence's state")

    # Typed tracks: processes, a thread per context, counters, as the JSON names them.
    procs = sorted(d["process"][0]["process_name"][0] for d in descs if "process" in d)
    jprocs = sorted(e["args"]["name"] for e in doc if e["ph"] == "M" and e["name"] == "process_name")
    check(procs == jprocs, "process tracks %s, JSON %s" % (procs, jprocs))
    threads = {d["name"][0] for d in descs if "thread" in d}
    jthreads = {e["args"]["name"] for e in doc
                if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1}
    check(threads == jthreads, "thread tracks %s, JSON %s" % (threads, jthreads))
    counters = {d["name"][0] for d in descs if "counter" in d}
    check(counters == {e["name"] for e in doc if e["ph"] == "C"}, "counter tracks")

    # Events: a begin and an end per slice, one per instant, counter value and log line.
    types = collections.Counter(p["track_event"][0]["type"][0] for p in events)
    jph = collections.Counter(e["ph"] for e in doc)
    check(types["TYPE_SLICE_BEGIN"] == jph["X"] == types["TYPE_SLICE_END"], "slices %s" % types)
    check(types["TYPE_INSTANT"] == jph["i"], "instants %s, JSON %d" % (types, jph["i"]))
    check(types["TYPE_COUNTER"] == jph["C"], "counter values")
    # Every interned name a begin or instant refers to is the JSON's name for it.
    got = collections.Counter()
    for p in events:
        te = p["track_event"][0]
        if te["type"][0] in ("TYPE_SLICE_BEGIN", "TYPE_INSTANT"):
            got[names[int(te["name_iid"][0])] if "name_iid" in te else te["name"][0]] += 1
            check(int(te["category_iids"][0]) in cats, "category interned")
    want = collections.Counter(e["name"] for e in doc if e["ph"] in "Xi")
    check(got == want, "event names differ: %s" % (got - want or want - got))
    flows = sum(len(p["track_event"][0].get("flow_ids", [])) for p in events)
    ends = sum(len(p["track_event"][0].get("terminating_flow_ids", [])) for p in events)
    check(flows == ends == jph["s"] == jph["f"], "flows %d/%d, JSON %d" % (flows, ends, jph["s"]))
    unnamed = sum(1 for p in events if "name" in p["track_event"][0])
    check(unnamed == logs, "log lines %d, want %d" % (unnamed, logs))
    # Timestamps never go back.
    ts = [int(p["timestamp"][0]) for p in events]
    check(ts == sorted(ts), "packets in time order")
    print("%d packets, %d tracks, %d interned names checked" % (len(packets), len(descs), len(names)))


main()
done()
