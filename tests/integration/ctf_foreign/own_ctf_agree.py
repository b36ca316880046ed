#!/usr/bin/env python3
"""Our own decoder against libbabeltrace2 on our own CTF: OURS is `emb trace -f ndjson`
of a trace stream (our decoder), THEIRS the same command on the CTF directory `emb trace
-f ctf` wrote from it (read by libbabeltrace2's src.ctf.fs through the CTF import). HZ is
the stream's clock. Every event must agree:

  - the same number of events, and each event's name and every field (our CTF's padding
    fields, `_emb_pad*`, are babeltrace2's `emb_pad*`, named `xemb_pad*` by the import);
    a bool of ours is CTF 1.8's u8, 0 or 1;
  - its time: babeltrace2 gives the clock's cycles, the import makes them ns, so
    floor(ours.ts * 1e9 / HZ) == theirs.ts exactly;
  - its context: every context of ours maps to one stream of theirs and back.

Events of one time are compared in an order of their own (name, fields): the two readers
merge the contexts alike only up to ties. Exits 1 on the first disagreement.

usage: own_ctf_agree.py OURS.ndjson THEIRS.ndjson HZ
"""
import json
import sys


def load(path):
    """The events; loss markers are not compared: babeltrace2 counts the events discarded
    between two packets of a stream, never those a first held packet's running total
    says were discarded before it."""
    return [e for e in map(json.loads, open(path)) if "event" in e]


def key(e, ts):
    # a bool is a u8 in CTF 1.8 (our TSDL writes it so): false and true are 0 and 1
    fields = {k: int(v) if isinstance(v, bool) else v for k, v in e["fields"].items()}
    return (ts, e["event"], json.dumps(fields, sort_keys=True))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ours, theirs, hz = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
    if len(ours) != len(theirs) or not ours:
        sys.exit("our decoder has %d events, libbabeltrace2 %d" % (len(ours), len(theirs)))
    for e in theirs:
        e["fields"] = {k: v for k, v in e["fields"].items() if not k.startswith("xemb_pad")}
    a = sorted(ours, key=lambda e: key(e, e["ts"] * 10**9 // hz))
    b = sorted(theirs, key=lambda e: key(e, e["ts"]))
    ctx, back = {}, {}
    for i, (o, t) in enumerate(zip(a, b)):
        if key(o, o["ts"] * 10**9 // hz) != key(t, t["ts"]):
            sys.exit("event %d differs:\n ours   %s\n theirs %s" % (i, o, t))
        if ctx.setdefault(o["context"], t["context"]) != t["context"] or \
           back.setdefault(t["context"], o["context"]) != o["context"]:
            sys.exit("event %d: context %s of ours is %s and %s of theirs" %
                     (i, o["context"], ctx[o["context"]], t["context"]))
    print("%d events agree, %d contexts: %s" % (len(a), len(ctx), ctx))


if __name__ == "__main__":
    main()
