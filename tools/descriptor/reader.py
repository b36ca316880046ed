"""The debug descriptor (docs/formats/descriptor.md) read through any memory: its sections,
the contexts' rings, the crash record area, and a kernel's layout block with its threads,
scheduler state and objects. Every count is bounded as the C reader bounds it; every
problem is a DescriptorError naming the address and byte."""
import struct

from .memory import DescriptorError

KIND_TYPES, KIND_CONTEXTS, KIND_RINGS, KIND_CRASH, KIND_KERNEL = 2, 3, 4, 6, 11
KIND_THREADS, KIND_SCHEDULER, KIND_OBJECTS = 12, 13, 14
MAX_SECTIONS, MAX_WORDS, MAX_THREADS, MAX_OBJECTS, MAX_OWNED = 64, 256, 256, 256, 16

TH = ("all next max sp state state_names state_count wait wait_names wait_count wait_object "
      "wait_queue wake_result base eff name index generation partition owned lock_next lock_owner "
      "timeout_deadline timeout_armed notify_bits notify_mask stats stats_fields stats_count "
      "stack_low stack_size paint entry frame_words frame_names frame_pc frame_lr").split()
SC = ("kind ready prios urgent_high bitmap heads next_ready cpus cpu_count cpu_stride current "
      "irq_nesting sched_lock reschedule switches tick all").split()
OB = ("type lifecycle generation name next handle registry registry_count handle_model max "
      "mutex_owner mutex_waiters next_wait").split()


def field(word):
    """A field word: (offset, size, type)."""
    return word & 0xFFFF, (word >> 16) & 0xFF, (word >> 24) & 0xFF


class Reader:
    def __init__(self, mem):
        self.mem = mem
        self.sections = {}
        self._find()

    # ---- words and fields ----
    def uint(self, data, off, size):
        return int.from_bytes(data[off:off + size], self.order)

    def word(self, addr):
        return self.uint(self.mem.read(addr, self.W), 0, self.W)

    def string(self, addr, cap=32):
        if not addr:
            return ""
        out = b""
        for _ in range(cap // 8):
            try:
                chunk = self.mem.read(addr + len(out), 8)
            except DescriptorError:
                break
            out += chunk
            if b"\0" in chunk:
                break
        text = out.split(b"\0")[0][:cap - 1]
        return "".join(chr(c) if 0x20 <= c < 0x7F else "?" for c in text)

    def value(self, buf, word):
        off, size, kind = field(word)
        if size == 0 or off + size > len(buf):
            return 0
        if kind == 4 and size == 8:
            return self.uint(buf, off, 4) | self.uint(buf, off + 4, 4) << 32
        v = self.uint(buf, off, size)
        if kind == 1 and v >> (8 * size - 1):
            v -= 1 << (8 * size)
        return v

    def text(self, buf, word):
        off, size, _ = field(word)
        raw = buf[off:off + size].split(b"\0")[0]
        return "".join(chr(c) if 0x20 <= c < 0x7F else "?" for c in raw)

    def struct_at(self, addr, words, what):
        size = max((field(w)[0] + field(w)[1] for w in words), default=0)
        if size == 0 or size > 4096:
            raise DescriptorError(f"{what} at 0x{addr:x}: its fields span {size} bytes")
        return self.mem.read(addr, size)

    def name_from(self, array, count, i):
        if not array or i >= count or count > 4096:
            return ""
        return self.string(self.word(array + i * self.W))

    # ---- the descriptor ----
    def _find(self):
        sym = self.mem.elf.symbols.get("emb_debug_descriptor") if getattr(self.mem, "elf", None) else None
        if sym is None:
            raise DescriptorError("no emb_debug_descriptor symbol in the ELF")
        head = self.mem.read(sym, 8)
        if head[:4] != b"EMBD":
            raise DescriptorError(f"descriptor at 0x{sym:x}: byte 0: no \"EMBD\" magic")
        self.order = "little" if head[4] == 1 else "big"
        self.W = head[5]
        if self.W not in (4, 8):
            raise DescriptorError(f"descriptor at 0x{sym:x}: byte 5: pointer size {self.W}")
        length = int.from_bytes(self.mem.read(sym + 8, 4), self.order)
        count = int.from_bytes(self.mem.read(sym + 12, 4), self.order)
        if length > 65536 or count > MAX_SECTIONS:
            raise DescriptorError(f"descriptor at 0x{sym:x}: byte 8: length {length}, {count} sections")
        self.addr = sym
        self._sections(self.mem.read(sym, length), 16 + self.W, count, f"descriptor at 0x{sym:x}")

    def _sections(self, data, off, count, what):
        W = self.W
        for _ in range(count):
            if off + 2 * W > len(data):
                raise DescriptorError(f"{what}: byte {off}: a section runs past the end")
            tag, words = self.uint(data, off, W), self.uint(data, off + W, W)
            if words > (len(data) - off - 2 * W) // W:
                raise DescriptorError(f"{what}: byte {off + W}: {words} words run past the end")
            body = [self.uint(data, off + (2 + i) * W, W) for i in range(min(words, MAX_WORDS))]
            self.sections[tag & 0xFFFF] = body
            off += (2 + words) * W

    def w(self, kind, i):
        body = self.sections.get(kind, [])
        return body[i] if i < len(body) else 0
