#!/usr/bin/python3
"""Counts, with babeltrace2 (the bt2 module), the events of each stream of a CTF
directory and the events babeltrace2 reports as discarded (its discarded-events messages,
which it makes from the packets' events_discarded running totals). Prints one JSON object:
{"STREAM_ID": {"events": N, "discarded": N}, ...}. The independent reader for the loss
accounting tests: its numbers come from babeltrace2, not from emb's decoder.

usage: bt_loss.py CTF_DIR
"""
import json
import sys

import bt2

counts = {}
for msg in bt2.TraceCollectionMessageIterator(sys.argv[1]):
    if type(msg) is bt2._EventMessageConst:
        key = str(msg.event.stream.id)
        counts.setdefault(key, {"events": 0, "discarded": 0})["events"] += 1
    elif type(msg) is bt2._DiscardedEventsMessageConst:
        key = str(msg.stream.id)
        counts.setdefault(key, {"events": 0, "discarded": 0})["discarded"] += msg.count
print(json.dumps(counts, sort_keys=True))
