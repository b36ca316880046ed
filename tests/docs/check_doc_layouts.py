#!/usr/bin/python3
"""The layout numbers docs/formats/ states, checked against the code: doc_layouts prints
them from the real headers and the descriptor this build exports (one "key value" a
line); each table and heading of the documents is read here and compared.

  descriptor.md  the header size (16 + W), the section count, and for every section its
                 kind, version and word count as its heading says, and the last word of
                 its table (N - 1; a range "a–b" counts to b)
  memchan.md     the native header and ring descriptor sizes, the RTT control block's
                 header and its buffer descriptor for 4- and 8-byte pointers (the latter
                 also against SEGGER_RTT_BUFFER_UP, below)
  crash.md       the v1 and v2 fixed parts (the offset of the first variable field), the
                 mini-record size, the native and Cortex-M register counts
  capture.md     the header, section header, identity and window sizes

SEGGER's own header is the outside source for the RTT buffer descriptor: SEGGER_RTT.h
declares SEGGER_RTT_BUFFER_UP as `const char* sName; char* pBuffer; unsigned
SizeOfBuffer; unsigned WrOff; volatile unsigned RdOff; unsigned Flags;`, two pointers
then four 32-bit unsigned, so 2 * P + 16 bytes for P-byte pointers (naturally aligned,
no padding), and SEGGER_RTT_CB puts aUp after `char acID[16]; int MaxNumUpBuffers; int
MaxNumDownBuffers;`, at 24.

Usage: check_doc_layouts.py DOC_LAYOUTS DOCS_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from tap import done, ok  # noqa: E402

PROGRAM, DOCS = sys.argv[1:3]
code = {}
for line in subprocess.run([PROGRAM], capture_output=True, text=True, check=True).stdout.splitlines():
    key, value = line.split()
    code[key] = int(value)


def doc(name):
    return open(os.path.join(DOCS, name), encoding="utf-8").read()


def same(what, stated, actual):
    ok(stated == actual, "%s: the document says %s, the code %s" % (what, stated, actual))


def last_word(table):
    """The highest word number in a "| word | meaning |" table."""
    last = -1
    for row in table.splitlines():
        m = re.match(r"\|\s*(\d+)(?:\s*[–-]\s*(\d+))?\s*\|", row)
        if m:
            last = max(last, int(m.group(2) or m.group(1)))
    return last


# ---- descriptor.md ----
text = doc("descriptor.md")
P = code["pointer_size"]
m = re.search(r"^\| 16 \| W \| `self`", text, re.M)
ok(m is not None, "descriptor.md: the header's last field, self, at 16")
same("descriptor.md: header bytes (16 + W) on this build", 16 + P, code["descriptor.header"])
headings = list(re.finditer(r"^### (\d+) ([^(\n]+?) \(version (\d+), (\d+) words\)$", text, re.M))
same("descriptor.md: sections with a version and word count", len(headings), code["descriptor.sections"])
names = {"identity": "identity", "types": "types", "contexts, the thread registry": "contexts",
         "rings": "rings", "log rings": "log_rings", "crash record": "crash_record",
         "mini-record ring": "mini_record_ring", "monitors": "monitors", "statistics": "statistics",
         "arch": "arch", "kernel": "kernel", "partitions": "partitions"}
for i, h in enumerate(headings):
    kind, title, version, words = int(h.group(1)), h.group(2), int(h.group(3)), int(h.group(4))
    key = names.get(title)
    if not ok(key is not None, "descriptor.md: section '%s' is one the code exports" % title):
        continue
    same("descriptor.md: section %s's kind" % title, kind, code["descriptor.%s.kind" % key])
    same("descriptor.md: section %s's version" % title, version, code["descriptor.%s.version" % key])
    same("descriptor.md: section %s's words" % title, words, code["descriptor.%s.words" % key])
    end = headings[i + 1].start() if i + 1 < len(headings) else text.find("\n## ", h.end())
    same("descriptor.md: section %s's table ends at word N - 1" % title, last_word(text[h.end():end]),
         code["descriptor.%s.words" % key] - 1)

# The kernel's layout block: its header and its sections' word counts (#### headings).
m = re.search(r"^\| 16\+W \| \| sections shaped like", text, re.M)
same("descriptor.md: the kernel layout block's header bytes (16 + W)", 16 + P if m else None,
     code["kernel_layout.header"])
blocks = list(re.finditer(r"^#### (\d+) (\w+) \(version (\d+), (\d+) words\)$", text, re.M))
ok(len(blocks) == 3, "descriptor.md: the kernel layout block's three sections")
for i, h in enumerate(blocks):
    title, words = h.group(2), int(h.group(4))
    same("descriptor.md: kernel layout section %s's words" % title, words,
         code.get("kernel_layout.%s.words" % title))
    end = blocks[i + 1].start() if i + 1 < len(blocks) else text.find("\n## ", h.end())
    same("descriptor.md: kernel layout section %s's table ends at word N - 1" % title,
         last_word(text[h.end():end]), words - 1)

# ---- memchan.md ----
text = doc("memchan.md")
m = re.search(r"Control block header \((\d+) bytes\)", text)
same("memchan.md: native header bytes", int(m.group(1)) if m else None, code["memchan.native.header"])
m = re.search(r"down-ring descriptors, (\d+) bytes each", text)
same("memchan.md: native ring descriptor bytes", int(m.group(1)) if m else None, code["memchan.native.ring"])
m = re.search(r"\| (\d+) \| u8 \| ring_size \| (\d+):", text)
ok(m and int(m.group(2)) == code["memchan.native.ring"], "memchan.md: the header's ring_size value")
m = re.search(r"\| (\d+) \| \| aUp\[MaxNumUpBuffers\]", text)
same("memchan.md: RTT control block header bytes", int(m.group(1)) if m else None, code["memchan.rtt.header"])
same("memchan.md: RTT control block header, SEGGER_RTT_CB", code["memchan.rtt.header"], 16 + 4 + 4)
m = re.search(r"Buffer descriptor \((\d+) bytes with 4-byte pointers, (\d+) with 8-byte ones", text)
stated = {4: int(m.group(1)), 8: int(m.group(2))} if m else {}
for p in (4, 8):
    same("memchan.md: RTT buffer descriptor with %d-byte pointers, SEGGER_RTT_BUFFER_UP" % p,
         stated.get(p), 2 * p + 16)
same("memchan.md: RTT buffer descriptor on this build (%d-byte pointers)" % P, stated.get(P),
     code["memchan.rtt.ring.%d" % P])
m = re.search(r"With 8-byte pointers the offsets are ([\d, and]+)", text)
offs = [int(x) for x in re.findall(r"\d+", m.group(1))] if m else []
same("memchan.md: RTT buffer descriptor offsets with 8-byte pointers", offs, [0, 8, 16, 20, 24, 28])

# ---- crash.md ----
text = doc("crash.md")
m = re.search(r"^\| (\d+) \| 4·S \| `status_regs`", text, re.M)
same("crash.md: v1 fixed part (status_regs' offset)", int(m.group(1)) if m else None, code["crash.v1.fixed"])
m = re.search(r"^\| (\d+) \| F \| `flight_recorder` \| as v1", text, re.M)
same("crash.md: v2 fixed part (flight_recorder's offset)", int(m.group(1)) if m else None, code["crash.v2.fixed"])
m = re.search(r"F = length − (\d+) − 4S − 4G", text)
same("crash.md: v1 flight recorder length (fixed part + CRC)", int(m.group(1)) if m else None,
     code["crash.v1.fixed"] + 4)
m = re.search(r"F = length − (\d+)` \|", text) or re.search(r"as v1, F = length − (\d+)", text)
same("crash.md: v2 flight recorder length (fixed part + CRC)", int(m.group(1)) if m else None,
     code["crash.v2.fixed"] + 4)
m = re.search(r'## Partition mini-record, version 1 \("EMBP", (\d+) bytes\)', text)
same("crash.md: mini-record bytes", int(m.group(1)) if m else None, code["crash.mini"])
m = re.search(r"S = (\d+), 64-bit values", text)
same("crash.md: native status words", int(m.group(1)) if m else None, code["crash.native.status"])
m = re.search(r"`rax rdx rcx .*?\(G = (\d+)\), AArch64 `x0`–`x30 sp pc` \(G = (\d+)\)", text, re.S)
same("crash.md: x86-64 general register words", int(m.group(1)) if m else None, code["crash.x86_64.gprs"])
same("crash.md: AArch64 general register words", int(m.group(2)) if m else None, code["crash.aarch64.gprs"])
m = re.search(r"\(`0x00010028`\), S ≥ (\d+):", text)
same("crash.md: Cortex-M status words", int(m.group(1)) if m else None, code["crash.cortex_m.status"])
m = re.search(r"`r0`–`r12 sp lr pc` \(G = (\d+)\)", text)
same("crash.md: Cortex-M general registers", int(m.group(1)) if m else None, code["crash.cortex_m.gprs"])

# ---- capture.md ----
text = doc("capture.md")
m = re.search(r"header size in bytes \((\d+);", text)
same("capture.md: header bytes", int(m.group(1)) if m else None, code["capture.header"])
m = re.search(r"^\| (\d+) \| \| sections, back to back", text, re.M)
same("capture.md: sections start after the header", int(m.group(1)) if m else None, code["capture.header"])
m = re.search(r"^\| (\d+) \| \| body, then zero padding", text, re.M)
same("capture.md: section header bytes", int(m.group(1)) if m else None, code["capture.section_header"])
m = re.search(r"### Identity \(type 1, version (\d+), (\d+) bytes\)", text)
same("capture.md: identity bytes", int(m.group(2)) if m else None, code["capture.identity"])
m = re.search(r"### Window \(type 2, version \d+, (\d+) \+ (\d+) × contexts bytes\)", text)
same("capture.md: window bytes", int(m.group(1)) if m else None, code["capture.window"])
same("capture.md: window context row bytes", int(m.group(2)) if m else None, code["capture.row"])
m = re.search(r"^# Capture file format \(`EMBS`\), version (\d+)", text, re.M)
same("capture.md: capture version", int(m.group(1)) if m else None, code["capture.version"])
done()
