#!/usr/bin/python3
"""Counts, with babeltrace2 (the bt2 module), the events of each stream of a CTF
directory and the events babeltrace2 reports as discarded (its discarded-events messages,
which it makes from the packets' events_discarded running totals). Prints one JSON object:
{"STREAM_ID": {"events": N, "discarded": N}, ...}, with "uncounted": N when babeltrace2
reported a loss it could not count. The independent reader for the loss
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
        row = counts.setdefault(key, {"events": 0, "discarded": 0})
        if msg.count is None:  # "may have discarded": babeltrace2 could not count them
            row["uncounted"] = row.get("uncounted", 0) + 1
        else:
            row["discarded"] += msg.count
print(json.dumps(counts, sort_keys=True))
