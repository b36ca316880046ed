#!/usr/bin/env python3
"""What emb says about a foreign CTF trace against what babeltrace2 (the reader LTTng and
barectf users trust) printed for it, in its default text format (sink.text.pretty):
`[time] (+delta) [host] NAME: { packet context }, { event context }, { payload }`.

  bt_agree.py counts BT_TXT INSPECT_JSON   the per-event counts of `emb inspect --json`
  bt_agree.py events BT_TXT NDJSON         every event of `emb trace -f ndjson`, in order:
                                           its name and every payload field's value

An event name (and an enumeration's label) is compared as the import names it
(docs/ctf-foreign.md): lower case, every character outside [a-z0-9_] made `_`. An
enumeration field, which babeltrace2 prints as `NAME = ( "LABEL" : container = N )` (or
`<unknown>`, or `{ "A", "B" }` for a value two mappings name), agrees when emb gives N, or
gives LABEL where it is babeltrace2's only one; and a field emb labels anywhere must carry
babeltrace2's label wherever babeltrace2 finds exactly one (a label kept for one value of a
range is not the trace's meaning). Exits 1 on the first disagreement, saying it.
"""
import collections
import json
import re
import sys

LINE = re.compile(r"^\[[^]]*\] \([^)]*\) (?:\S+ )?(\S+): \{")
ENUM = r"\( (?:\"([^\"]*)\"|<unknown>|\{[^}]*\}) : container = (-?\w+) \)"
FIELD = re.compile(r"(\w+) = (\"[^\"]*\"|-?\w+|" + ENUM + ")")


def name(raw):
    return re.sub(r"[^a-z0-9_]", "_", raw.lower())


def bt_events(path):
    for line in open(path):
        m = LINE.match(line)
        if not m:
            sys.exit("babeltrace2 line not understood: " + line)
        payload = line.rstrip("\n").rsplit("{ ", 1)[-1]
        fields = {}
        for key, text, label, container in FIELD.findall(payload):
            if text.startswith("("):
                fields[key] = (label or None, int(container, 0))  # an enumeration
            else:
                fields[key] = text.strip('"') if text.startswith('"') else int(text, 0)
        yield name(m.group(1)), fields


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
    labelled = set()  # (event, field) emb printed a label for
    for o, (n, fields) in zip(ours, theirs):
        for k, v in fields.items():
            if isinstance(v, tuple) and isinstance(o["fields"].get(k), str):
                labelled.add((n, k))
    for i, (o, (n, fields)) in enumerate(zip(ours, theirs)):
        if o["event"] != n:
            sys.exit("event %d: babeltrace2 %s, emb %s" % (i, n, o["event"]))
        for k, want in fields.items():
            got = o["fields"].get(k)
            if isinstance(want, tuple):
                label, container = want
                if (n, k) in labelled and label is not None:
                    want = name(label)
                elif not isinstance(got, str):
                    want = container
            if str(got) != str(want):
                sys.exit("event %d %s field %s: babeltrace2 %r, emb %r" % (i, n, k, want, got))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("counts", "events"):
        sys.exit(__doc__)
    {"counts": counts, "events": events}[sys.argv[1]](sys.argv[2], sys.argv[3])
