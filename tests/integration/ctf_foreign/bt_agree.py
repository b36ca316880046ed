#!/usr/bin/env python3
"""What emb says about a foreign CTF trace against what babeltrace2 (the reader LTTng and
barectf users trust) printed for it, in its default text format (sink.text.pretty):
`[time] (+delta) [host] NAME: { packet context }, { event context }, { payload }`.

  bt_agree.py counts BT_TXT INSPECT_JSON   the per-event counts of `emb inspect --json`
  bt_agree.py events BT_TXT NDJSON         every event of `emb trace -f ndjson`, in order:
                                           its name and every payload field's value

An event name is compared as the import names it (docs/ctf-foreign.md): lower case, every
character outside [a-z0-9_] made `_`. Exits 1 on the first disagreement, saying it.
"""
import collections
import json
import re
import sys

LINE = re.compile(r"^\[[^]]*\] \([^)]*\) (?:\S+ )?(\S+): \{")
FIELD = re.compile(r"(\w+) = (\"[^\"]*\"|-?\w+)")


def name(raw):
    return re.sub(r"[^a-z0-9_]", "_", raw.lower())


def bt_events(path):
    for line in open(path):
        m = LINE.match(line)
        if not m:
            sys.exit("babeltrace2 line not understood: " + line)
        payload = line.rstrip("\n").rsplit("{ ", 1)[-1]
        yield name(m.group(1)), dict(FIELD.findall(payload))


def counts(bt_txt, inspect_json):
    bt = collections.Counter(n for n, _ in bt_events(bt_txt))
    ours = json.load(open(inspect_json))["events"]
    if dict(bt) != ours:
        sys.exit("counts differ: babeltrace2 %s, emb inspect %s" % (dict(bt), ours))


def events(bt_txt, ndjson):
    ours = [json.loads(l) for l in open(ndjson)]
    theirs = list(bt_events(bt_txt))
    if len(ours) != len(theirs):
        sys.exit("babeltrace2 has %d events, emb %d" % (len(theirs), len(ours)))
    for i, (o, (n, fields)) in enumerate(zip(ours, theirs)):
        if o["event"] != n:
            sys.exit("event %d: babeltrace2 %s, emb %s" % (i, n, o["event"]))
        for k, v in fields.items():
            want = v.strip('"') if v.startswith('"') else int(v, 0)
            got = o["fields"].get(k)
            if str(got) != str(want):
                sys.exit("event %d %s field %s: babeltrace2 %r, emb %r" % (i, n, k, want, got))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("counts", "events"):
        sys.exit(__doc__)
    {"counts": counts, "events": events}[sys.argv[1]](sys.argv[2], sys.argv[3])
