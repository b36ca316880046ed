#!/usr/bin/python3
"""Reads a CTF directory with babeltrace2 (the bt2 module) and compares every event with
`emb trace --format ndjson` of the same trace: name, timestamp in clock cycles and in ns
since the epoch, and each field's value, per event, context by context; then the counts
of events and of lost packets. Exits 0 when everything matches, 1 otherwise (or when
there is nothing to compare).

usage: bt_compare.py CTF_DIR EVENTS.ndjson HEADER.json
  HEADER.json is `emb trace --json --summary` of the trace (its clock and start).
"""
import json
import sys

import bt2


def ticks_to_ns(ticks, hz):
    if hz == 1000000000:
        return ticks
    return (ticks // hz) * 1000000000 + (ticks % hz) * 1000000000 // hz


def bt_value(field):
    """A bt2 field as a Python value, enumerations as (value, labels)."""
    if isinstance(field, bt2._EnumerationFieldConst):
        return (int(field), list(field.labels))
    if isinstance(field, bt2._IntegerFieldConst):
        return int(field)
    if isinstance(field, bt2._StringFieldConst):
        return str(field)
    if isinstance(field, bt2._ArrayFieldConst):
        return [bt_value(f) for f in field]
    if isinstance(field, bt2._StructureFieldConst):
        return {k: bt_value(v) for k, v in field.items()}
    return field


def same_value(ours, theirs):
    if isinstance(theirs, tuple):  # enumeration: our label, or our number when unlabelled
        value, labels = theirs
        return ours in labels if isinstance(ours, str) else ours == value
    if isinstance(ours, bool):
        return int(ours) == theirs
    if isinstance(theirs, list):  # char[N] as a byte array: text up to the first NUL
        text = bytes(theirs).split(b"\0")[0].decode("utf-8", "replace")
        return ours == text
    return ours == theirs


def main():
    ctf_dir, ndjson_path, header_path = sys.argv[1:4]
    header = json.load(open(header_path))["header"]
    hz, offset, start = header["clock_hz"], header["clock_offset_ns"], header["start_ts"]

    # Cycles must match exactly. Nanoseconds too at 1 GHz; at other frequencies babeltrace2
    # truncates twice (the metadata's clock offset in cycles, then value * 1e9 / freq in
    # double precision) where emb converts once in integers, so they may differ by 2 ns.
    ns_slack = 0 if hz == 1000000000 else 2

    ours = {}
    our_lost = {}
    merged_ts = []
    for line in open(ndjson_path):
        rec = json.loads(line)
        ctx = rec["context_id"]
        if "loss" in rec:
            if rec["loss"] == "packets_lost":
                our_lost[ctx] = our_lost.get(ctx, 0) + rec["count"]
            continue
        if rec["event"] is None:
            continue  # an unknown id: its packet is not in the CTF directory
        ours.setdefault(ctx, []).append(rec)
        merged_ts.append(rec["ts"])

    theirs = {}
    their_lost = {}
    their_merged = []
    for msg in bt2.TraceCollectionMessageIterator(ctf_dir):
        if type(msg) is bt2._EventMessageConst:
            ev = msg.event
            ctx = int(ev.packet.context_field["context_id"])
            snap = msg.default_clock_snapshot
            theirs.setdefault(ctx, []).append(
                (ev.name, snap.value, snap.ns_from_origin,
                 {k: bt_value(v) for k, v in ev.payload_field.items()} if ev.payload_field else {}))
            # The muxer orders by nanoseconds from origin: two events of different
            # streams within one nanosecond (cycles run faster than 1 GHz) come in
            # either order, so its sequence is checked in its own key.
            their_merged.append(snap.ns_from_origin)
        elif type(msg) is bt2._DiscardedPacketsMessageConst:
            ctx = int(msg.stream.id)
            their_lost[ctx] = their_lost.get(ctx, 0) + (msg.count or 0)

    failures = 0

    def fail(text):
        nonlocal failures
        failures += 1
        if failures <= 20:
            print("MISMATCH: " + text)

    n_ours = sum(len(v) for v in ours.values())
    n_theirs = sum(len(v) for v in theirs.values())
    if n_ours != n_theirs:
        fail("event count: emb %d, babeltrace2 %d" % (n_ours, n_theirs))
    if sorted(ours) != sorted(theirs):
        fail("contexts: emb %s, babeltrace2 %s" % (sorted(ours), sorted(theirs)))
    if merged_ts != sorted(merged_ts) or their_merged != sorted(their_merged):
        fail("a merged sequence is not in time order")
    for ctx in sorted(set(ours) | set(theirs)):
        a, b = ours.get(ctx, []), theirs.get(ctx, [])
        for i, (rec, bt) in enumerate(zip(a, b)):
            name, cycles, ns, fields = bt
            where = "ctx %d event %d (%s)" % (ctx, i, rec["event"])
            if rec["event"] != name:
                fail("%s: name, babeltrace2 says %s" % (where, name))
                continue
            if rec["ts"] != cycles:
                fail("%s: cycles %d, babeltrace2 %d" % (where, rec["ts"], cycles))
            if abs(offset + ticks_to_ns(rec["ts"], hz) - ns) > ns_slack:
                fail("%s: ns from origin %d, babeltrace2 %d"
                     % (where, offset + ticks_to_ns(rec["ts"], hz), ns))
            if rec["ns"] != ticks_to_ns(rec["ts"] - start, hz):
                fail("%s: ns since start %d for ts %d" % (where, rec["ns"], rec["ts"]))
            # Padding the metadata declares (docs/formats/trace.md, "CTF metadata"): not a
            # field of the catalogue, and always zero bytes.
            for key in [k for k in fields if k == "emb_pad" or k.startswith("emb_pad_")]:
                pad = fields.pop(key)
                if any(pad) if isinstance(pad, list) else pad != 0:
                    fail("%s: padding %s is %r, not zero" % (where, key, pad))
            if sorted(rec["fields"]) != sorted(fields):
                fail("%s: fields %s, babeltrace2 %s" % (where, sorted(rec["fields"]), sorted(fields)))
                continue
            for key, value in rec["fields"].items():
                if not same_value(value, fields[key]):
                    fail("%s: %s = %r, babeltrace2 %r" % (where, key, value, fields[key]))
    for ctx in sorted(set(our_lost) | set(their_lost)):
        if our_lost.get(ctx, 0) != their_lost.get(ctx, 0):
            fail("ctx %d: packets lost: emb %d, babeltrace2 %d"
                 % (ctx, our_lost.get(ctx, 0), their_lost.get(ctx, 0)))

    print("%d events in %d contexts compared, %d mismatches" % (n_ours, len(ours), failures))
    return 1 if failures or n_ours == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
