#!/usr/bin/env python3
"""Compares what `emb log` printed for log_printf.c's calls with what printf printed.

usage: log_printf_check.py EXPECTED DECODED.ndjson STR_MAX HEX_MAX
       log_printf_check.py --text EXPECTED TARGET_TEXT

A deferred record's text must equal printf's output, except that a %s the target clipped
shows its first STR_MAX bytes and the clip mark instead of the rest. A hexdump must hold
the dumped bytes (the first HEX_MAX, marked clipped beyond). In --text mode the target
formatted the lines itself: they must equal printf's output exactly, dumps included.
"""
import json
import re
import sys

CLIP = "\u2026"


def expected_lines(path):
    with open(path, "rb") as f:
        data = f.read().decode("utf-8")
    assert data.endswith("\n")
    return data[:-1].split("\n")


def clipped_matches(text, want, str_max):
    """text is want with one or more %s values clipped: each clip mark stands for the
    rest of a string of which STR_MAX bytes were kept."""
    pattern = "".join(re.escape(p) + ("(.*?)" if i < text.count(CLIP) else "")
                      for i, p in enumerate(text.split(CLIP)))
    return re.fullmatch(pattern.replace(re.escape(CLIP), ""), want, re.S) is not None


def check_deferred(exp_path, dec_path, str_max, hex_max):
    exp = expected_lines(exp_path)
    recs = []
    with open(dec_path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["type"] in ("log", "hexdump"):
                recs.append(r)
            else:
                print(f"unexpected record: {line.strip()}")
                return 1
    if len(recs) != len(exp):
        print(f"{len(recs)} records decoded, {len(exp)} calls made")
        return 1
    bad = 0
    for i, (r, want) in enumerate(zip(recs, exp)):
        if want.startswith("#hexdump "):
            _, title_hex, n, data = (want.split(" ") + [""])[:4]
            n = int(n)
            title = bytes.fromhex(title_hex).decode()
            ok = (r["type"] == "hexdump" and r["title"] == title and
                  r["data"] == data[:2 * min(n, hex_max)] and r["clipped"] == (n > hex_max))
        elif r["clipped"]:
            ok = r["type"] == "log" and CLIP in r["text"] and clipped_matches(r["text"], want, str_max)
        else:
            ok = r["type"] == "log" and r["text"] == want
        if not ok:
            bad += 1
            print(f"call {i}:\n  printf:  {want!r}\n  emb log: {r.get('text', r.get('title'))!r}")
    print(f"{len(exp) - bad} of {len(exp)} calls printed as printf prints them")
    return 1 if bad else 0


LINE = re.compile(r"^\d+\.\d{6} (ERR|WRN|INF|DBG) conv \S+:\d+  (.*)$")


def check_text(exp_path, text_path):
    exp = expected_lines(exp_path)
    with open(text_path, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    got = []
    for line in lines:
        m = LINE.match(line)
        if m:
            got.append([m.group(2), b""])
        elif line.startswith("    ") and got:
            hexpart = line[10:10 + 48]
            got[-1][1] += bytes.fromhex(hexpart.replace(" ", ""))
        else:
            print(f"unexpected line: {line!r}")
            return 1
    if len(got) != len(exp):
        print(f"{len(got)} lines, {len(exp)} calls made")
        return 1
    bad = 0
    for i, ((text, data), want) in enumerate(zip(got, exp)):
        if want.startswith("#hexdump "):
            _, title_hex, n, hexdata = (want.split(" ") + [""])[:4]
            title = bytes.fromhex(title_hex).decode()
            ok = text == f"{title} ({n} bytes)" and data.hex() == hexdata
        else:
            ok = text == want
        if not ok:
            bad += 1
            print(f"call {i}:\n  printf: {want!r}\n  target: {text!r}")
    print(f"{len(exp) - bad} of {len(exp)} calls formatted on the target as printf prints them")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "--text":
        sys.exit(check_text(sys.argv[2], sys.argv[3]))
    sys.exit(check_deferred(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
