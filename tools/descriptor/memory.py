"""Where the descriptor library reads target memory from: a RAM dump beside its ELF, or a
live GDB session. Standard library only.

A dump holds RAM; the descriptor and everything else `const` live in flash, so a dump is
read together with the ELF's loadable segments (as `emb desc --dump` does)."""
import struct


class DescriptorError(Exception):
    """Bad input: the message names the file or address and the byte offset."""


class Elf:
    """The little an ELF file must give: its loadable segments and its symbols."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or len(d) < 52:
            raise DescriptorError(f"{path}: byte 0: not an ELF file")
        self.wide = d[4] == 2
        self.order = "<" if d[5] == 1 else ">"
        self.segments = []
        self.symbols = {}
        self._read_segments()
        self._read_symbols()

    def _header(self, fmt, off):
        if off + struct.calcsize(self.order + fmt) > len(self.data):
            raise DescriptorError(f"{self.path}: byte {off}: truncated ELF structure")
        return struct.unpack_from(self.order + fmt, self.data, off)

    def _read_segments(self):
        if self.wide:
            phoff, = self._header("Q", 32)
            phentsize, phnum = self._header("HH", 54)
        else:
            phoff, = self._header("I", 28)
            phentsize, phnum = self._header("HH", 42)
        for i in range(phnum):
            off = phoff + i * phentsize
            if self.wide:
                p_type, _, p_offset, p_vaddr, _, p_filesz = self._header("IIQQQQ", off)
            else:
                p_type, p_offset, p_vaddr, _, p_filesz = self._header("IIIII", off)
            if p_type == 1 and p_filesz:  # PT_LOAD
                self.segments.append((p_vaddr, self.data[p_offset:p_offset + p_filesz]))

    def _read_symbols(self):
        if self.wide:
            shoff, = self._header("Q", 40)
            shentsize, shnum = self._header("HH", 58)
            fmt, size = "IIQQQQIIQQ", 64
        else:
            shoff, = self._header("I", 32)
            shentsize, shnum = self._header("HH", 46)
            fmt, size = "IIIIIIIIII", 40
        sections = [self._header(fmt, shoff + i * shentsize) for i in range(shnum)]
        for s in sections:
            if s[1] != 2:  # SHT_SYMTAB
                continue
            strtab = sections[s[6]]
            str_off = strtab[4]
            entsize = 24 if self.wide else 16
            for k in range(s[5] // entsize):
                off = s[4] + k * entsize
                if self.wide:
                    name, _, _, _, value, _ = self._header("IBBHQQ", off)
                else:
                    name, value, _, _, _, _ = self._header("IIIBBH", off)
                end = self.data.find(b"\0", str_off + name)
                self.symbols[self.data[str_off + name:end].decode("latin-1")] = value

    def read(self, addr, n):
        for vaddr, data in self.segments:
            if vaddr <= addr and addr + n <= vaddr + len(data):
                return data[addr - vaddr:addr - vaddr + n]
        return None


class DumpMemory:
    """A raw RAM dump whose first byte is at `base`, with the ELF for what RAM lacks."""

    def __init__(self, path, base, elf):
        self.path = path
        self.base = base
        with open(path, "rb") as f:
            self.ram = f.read()
        self.elf = elf

    def read(self, addr, n):
        if self.base <= addr and addr + n <= self.base + len(self.ram):
            return self.ram[addr - self.base:addr - self.base + n]
        data = self.elf.read(addr, n) if self.elf else None
        if data is None:
            raise DescriptorError(f"{self.path}: address 0x{addr:x} ({n} bytes) is neither in the dump "
                                  f"(0x{self.base:x}, {len(self.ram)} bytes) nor in the ELF")
        return data


class GdbMemory:
    """The inferior GDB debugs (inside GDB's Python)."""

    def __init__(self, gdb):
        self.gdb = gdb

    def read(self, addr, n):
        try:
            return bytes(self.gdb.selected_inferior().read_memory(addr, n))
        except self.gdb.MemoryError as e:
            raise DescriptorError(f"target: address 0x{addr:x} ({n} bytes): {e}") from e
