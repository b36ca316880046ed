"""The descriptor library (SPEC-015 §10): reads an image's debug descriptor
(docs/formats/descriptor.md) through GDB or from a memory dump, with nothing but Python's
standard library, and returns what `emb desc --json` reports of the kernel's threads and
the rings. The GDB extension tools/gdb/emb-gdb.py is built on it.

    from descriptor import read_dump
    model = read_dump("ram.bin", 0x20000000, "fw.elf")
    for t in model["kernel"]["threads"]:
        print(t["name"], t["state"], t["wait_reason"], t["registers"].get("pc"))
"""
from .memory import DescriptorError, DumpMemory, Elf, GdbMemory
from .reader import KIND_CONTEXTS, KIND_CRASH, KIND_RINGS, Reader
from .kernel import Kernel

__all__ = ["DescriptorError", "DumpMemory", "Elf", "GdbMemory", "Reader", "Kernel", "read_model",
           "read_dump", "rings", "crash_area"]

# Words of the contexts and rings sections (docs/formats/descriptor.md).
CX_TABLE, CX_STRIDE, CX_COUNT, CX_F_RING = 0, 1, 3, 4
RG_F_WRITE_POS, RG_F_DISCARDED, RG_F_NAME = 5, 18, 22


def rings(rd):
    """Each context's trace ring: its name, address, write position and events discarded."""
    table = rd.word(rd.w(KIND_CONTEXTS, CX_TABLE))
    stride = int.from_bytes(rd.mem.read(rd.w(KIND_CONTEXTS, CX_STRIDE), 4), rd.order)
    count = min(int.from_bytes(rd.mem.read(rd.w(KIND_CONTEXTS, CX_COUNT), 4), rd.order), 4096)
    out = []
    for i in range(count):
        entry = rd.struct_at(table + i * stride, [rd.w(KIND_CONTEXTS, CX_F_RING)], "context")
        ring = rd.value(entry, rd.w(KIND_CONTEXTS, CX_F_RING))
        if not ring:
            continue
        words = [rd.w(KIND_RINGS, k) for k in (RG_F_WRITE_POS, RG_F_DISCARDED, RG_F_NAME)]
        buf = rd.struct_at(ring, words, "trace ring")
        out.append(dict(context=i, address=ring, name=rd.text(buf, words[2]),
                        write_pos=rd.value(buf, words[0]), discarded=rd.value(buf, words[1])))
    return out


def crash_area(rd):
    """The crash record area: its address, size and the record in it (bytes, or None)."""
    area = rd.word(rd.w(KIND_CRASH, 0)) if rd.w(KIND_CRASH, 0) else 0
    cap = int.from_bytes(rd.mem.read(rd.w(KIND_CRASH, 1), 4), rd.order) if rd.w(KIND_CRASH, 1) else 0
    if not area or not cap:
        return dict(address=0, size=0, record=None)
    head = rd.mem.read(area, 8)
    length = int.from_bytes(head[6:8], rd.order)
    record = rd.mem.read(area, length) if head[:4] == b"EMBC" and 8 <= length <= cap else None
    return dict(address=area, size=cap, record=record)


def read_model(mem):
    """Everything this library reads, as one dict: "kernel" (None without a kernel layout
    block), "rings"."""
    rd = Reader(mem)
    try:
        kernel = Kernel(rd).model()
    except DescriptorError:
        if rd.w(11, 0):
            raise
        kernel = None
    return dict(descriptor=rd.addr, kernel=kernel, rings=rings(rd))


def read_dump(path, base, elf_path):
    """Reads a RAM dump whose first byte is at `base`, with its ELF."""
    return read_model(DumpMemory(path, base, Elf(elf_path)))
