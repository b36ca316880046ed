#!/usr/bin/env python3
"""Reads and rewrites the catalog block ("CATL") of a trace stream file's header, from the
layout in docs/formats/trace.md alone: Python's struct for the header, Python's zlib (RFC
1950) and its crc32 (IEEE 802.3, as the sealed format names) as independent producers and
checkers of what the tool writes and reads.

usage: trace_catalog_block.py MODE IN [OUT]
  text IN        the YAML text the block holds, on stdout (exit 1: no block)
  strip IN OUT   the stream without its block (a sealed header's CRC computed again)
  seal IN OUT    a version-1 stream made version 2: a SEAL block, a CRC-32 after each packet
  check IN       a sealed stream's header CRC and every packet CRC verified
  count IN       how many catalog blocks the header holds, on stdout
  rename IN OUT  the block's YAML with `pump_speed` renamed (a valid catalogue, another
                 checksum), recompressed, lengths and CRC kept right
  short IN OUT   the block's zlib length stated larger than the block holds
"""
import struct
import sys
import zlib

CATL, SEAL = 0x4C544143, 0x4C414553


def parse(data):
    """(version, header size, packet size, table end, [(offset, tag, size)])"""
    version, hs = struct.unpack_from("<HH", data, 4)
    packet = struct.unpack_from("<I", data, 12)[0]
    count = struct.unpack_from("<H", data, 50)[0]
    at = table = 112 + 32 * count
    blocks = []
    while hs - at >= 8:
        tag, size = struct.unpack_from("<II", data, at)
        if tag == 0:
            break
        blocks.append((at, tag, size))
        at += size
    return version, hs, packet, table, blocks


def reseal(header):
    """A version-2 header's SEAL CRC, over every header byte with the field as zero."""
    version, hs, _, _, blocks = parse(header)
    if version != 2:
        return header
    header = bytearray(header)
    for at, tag, _ in blocks:
        if tag == SEAL:
            struct.pack_into("<I", header, at + 8, 0)
            struct.pack_into("<I", header, at + 8, zlib.crc32(bytes(header[:hs])))
    return bytes(header)


def with_blocks(data, keep, extra=b""):
    """The stream with its blocks filtered by keep(tag) and `extra` appended to the list."""
    _, hs, _, table, blocks = parse(data)
    end = blocks[-1][0] + blocks[-1][2] if blocks else table
    head = data[:table] + b"".join(data[a:a + s] for a, t, s in blocks if keep(t)) + extra
    head += data[end:hs]
    head = bytearray(head)
    struct.pack_into("<H", head, 6, len(head))
    return reseal(bytes(head)) + data[hs:]


def block_of(data):
    for at, tag, size in parse(data)[4]:
        if tag == CATL:
            return data[at:at + size]
    return None


def text_of(block):
    zlen, tlen, reserved = struct.unpack_from("<III", block, 8)
    text = zlib.decompress(block[20:20 + zlen])
    assert len(text) == tlen and reserved == 0, (len(text), tlen, reserved)
    assert block[20 + zlen:] == b"\0" * (len(block) - 20 - zlen), "padding is not zeros"
    return text


def make_block(text, zlen_delta=0):
    z = zlib.compress(text, 9)
    size = (20 + len(z) + 3) // 4 * 4
    return (struct.pack("<IIIII", CATL, size, len(z) + zlen_delta, len(text), 0) + z).ljust(size, b"\0")


def seal(data):
    version, hs, packet, _, _ = parse(data)
    assert version == 1
    out = bytearray(with_blocks(data, lambda t: True, struct.pack("<IIII", SEAL, 16, 0, 0)))
    struct.pack_into("<H", out, 4, 2)
    hs2 = struct.unpack_from("<H", out, 6)[0]
    head = reseal(bytes(out[:hs2]))
    body = data[hs:]
    pkts = [body[i:i + packet] for i in range(0, len(body), packet)]
    return head + b"".join(p + struct.pack("<I", zlib.crc32(p)) for p in pkts)


def check(data):
    version, hs, packet, _, blocks = parse(data)
    assert version == 2, version
    seal_at = [a for a, t, _ in blocks if t == SEAL][0]
    head = bytearray(data[:hs])
    want = struct.unpack_from("<I", head, seal_at + 8)[0]
    struct.pack_into("<I", head, seal_at + 8, 0)
    assert zlib.crc32(bytes(head)) == want, "header CRC"
    n = 0
    for at in range(hs, len(data), packet + 4):
        p = data[at:at + packet]
        assert zlib.crc32(p) == struct.unpack_from("<I", data, at + packet)[0], f"packet {n} CRC"
        n += 1
    print(f"header CRC and {n} packet CRCs hold")


def main():
    mode, src = sys.argv[1], sys.argv[2]
    data = open(src, "rb").read()
    block = block_of(data)
    if mode == "text":
        if block is None:
            sys.exit(1)
        sys.stdout.buffer.write(text_of(block))
        return
    if mode == "count":
        print(sum(1 for _, tag, _ in parse(data)[4] if tag == CATL))
        return
    if mode == "check":
        check(data)
        return
    if mode == "strip":
        out = with_blocks(data, lambda t: t != CATL)
    elif mode == "seal":
        out = seal(data)
    elif mode == "rename":
        text = text_of(block).replace(b"pump_speed", b"pump_sprint")
        out = with_blocks(data, lambda t: t != CATL, make_block(text))
    elif mode == "short":
        out = with_blocks(data, lambda t: t != CATL, make_block(text_of(block), 1 << 20))
    else:
        sys.exit(f"unknown mode {mode}")
    open(sys.argv[3], "wb").write(out)


if __name__ == "__main__":
    main()
