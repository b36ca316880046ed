#!/usr/bin/env python3
"""Rewrites the catalog section (type 8) of a capture file and reseals it, so the
catalogue checks themselves are what refuses it, not the file's CRC.

The layout is docs/formats/capture.md; the compression is Python's own zlib (RFC 1950),
an independent producer of the stream the tool inflates.

usage: capture_catalog_edit.py IN OUT MODE
  MODE rename   the YAML with `pump_speed` renamed (a valid catalogue, another checksum)
  MODE short    the true YAML, its stated length one byte short (inflates to more)
"""
import struct
import sys
import zlib

CATALOG = 8


def sections(data):
    count = struct.unpack_from("<I", data, 16)[0]
    at = struct.unpack_from("<H", data, 6)[0]
    out = []
    for _ in range(count):
        typ, ver, flags, length = struct.unpack_from("<HHIQ", data, at)
        body = data[at + 16:at + 16 + length]
        out.append((typ, ver, flags, body))
        at += 16 + (length + 7) // 8 * 8
    return data[:32], out


def seal(header, secs):
    body = bytearray(header)
    for typ, ver, flags, b in secs:
        body += struct.pack("<HHIQ", typ, ver, flags, len(b)) + b + bytes(-len(b) % 8)
    struct.pack_into("<Q", body, 8, len(body) + 4)
    return bytes(body) + struct.pack("<I", zlib.crc32(bytes(body)))


def main():
    src, dst, mode = sys.argv[1:4]
    header, secs = sections(open(src, "rb").read())
    i = next(n for n, s in enumerate(secs) if s[0] == CATALOG)
    typ, ver, flags, b = secs[i]
    text_len = struct.unpack_from("<I", b, 0)[0]
    text = zlib.decompress(b[8:])
    assert len(text) == text_len
    if mode == "rename":
        text = text.replace(b"pump_speed", b"pump_spxed")
        text_len = len(text)
    elif mode == "short":
        text_len -= 1
    secs[i] = (typ, ver, flags, struct.pack("<II", text_len, 0) + zlib.compress(text, 9))
    open(dst, "wb").write(seal(header, secs))


main()
