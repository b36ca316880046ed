"""GDB thread awareness from the debug descriptor, for any kernel that exports a layout
block (docs/formats/descriptor.md). It reads only the descriptor, through the descriptor
library (tools/descriptor, on PYTHONPATH or beside this file's folder):

    (gdb) source tools/gdb/emb-gdb.py
    (gdb) info emb-threads     every thread: state, wait, priorities, stack, where it is
    (gdb) emb-thread N         GDB's registers become thread N's saved ones (bt, frame,
                               info locals work there); `emb-thread` alone puts the CPU's
                               own registers back: do that before continuing
    (gdb) emb-rings            the trace rings: write position, events discarded
    (gdb) emb-crash            the crash record area and the record in it

The saved registers of a switched-out thread are the frame the kernel left at its saved
stack pointer (word 33 and on of the layout's threads section); emb-thread writes them
into the CPU's registers, after keeping the CPU's own, which it restores on request
(`emb-thread` alone) and before GDB resumes the target. GDB tells an extension nothing
before a detach: say `emb-thread` before `detach`."""
import os
import sys

import gdb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(os.path.expanduser(__file__))), ".."))
from descriptor import DescriptorError, Elf, GdbMemory, Reader, crash_area, read_model  # noqa: E402

_saved = {}  # the CPU's own registers while emb-thread shows another thread's


def _model():
    path = gdb.current_progspace().filename
    if not path:
        raise gdb.GdbError("emb: load the firmware's ELF first (file FW.elf)")
    mem = GdbMemory(gdb)
    mem.elf = Elf(path)
    try:
        return read_model(mem), mem
    except DescriptorError as e:
        raise gdb.GdbError(f"emb: {e}")


def _kernel():
    model, _ = _model()
    if model["kernel"] is None:
        raise gdb.GdbError("emb: the image's descriptor has no kernel layout block")
    return model["kernel"]


def _where(pc):
    if not pc:
        return "-"
    block = gdb.block_for_pc(pc)
    while block is not None and block.function is None:
        block = block.superblock
    return f"{block.function.name} (0x{pc:x})" if block is not None else f"0x{pc:x}"


class InfoThreads(gdb.Command):
    """info emb-threads: the kernel's threads, from the debug descriptor."""

    def __init__(self):
        super().__init__("info emb-threads", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        k = _kernel()
        print(f"{k['name']}: current {k['current_thread']}, irq nesting {k['irq_nesting_depth']}, "
              f"scheduler lock {k['sched_lock_depth']}, {k['switches']} switches")
        print(f"{'idx':>4}  {'name':<10} {'state':<8} {'wait':<14} {'prio':<5} {'stack':<10} where")
        for t in k["threads"]:
            wait = "" if t["wait_reason"] in ("", "none") else f"{t['wait_reason']} {t['wait_object_name']}"
            pc = int(gdb.parse_and_eval("$pc")) if t["running"] and not _saved else t["registers"].get("pc", 0)
            print(f"{t['index']:>4}  {t['name']:<10} {t['state']:<8} {wait:<14} "
                  f"{t['base_priority']}/{t['eff_priority']:<3} {t['stack_used']:>4}/{t['stack_size']:<5} "
                  f"{_where(pc)}")


REGS = ("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "sp", "lr", "pc")


def _restore():
    for name, value in _saved.items():
        gdb.execute(f"set ${name} = {value}", to_string=True)
    _saved.clear()


class SwitchThread(gdb.Command):
    """emb-thread N: show thread N (its saved registers); emb-thread: the CPU's own again."""

    def __init__(self):
        super().__init__("emb-thread", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        if not arg.strip():
            _restore()
            gdb.execute("frame 0")
            return
        k = _kernel()
        t = next((x for x in k["threads"] if str(x["index"]) == arg.strip() or x["name"] == arg.strip()), None)
        if t is None:
            raise gdb.GdbError(f"emb: no thread {arg.strip()}")
        if t["running"]:
            _restore()
            gdb.execute("frame 0")
            return
        if not t["registers"]:
            raise gdb.GdbError(f"emb: thread {t['name']} has no saved registers")
        if not _saved:
            _saved.update({r: int(gdb.parse_and_eval(f"${r}")) for r in REGS})
        regs = t["registers"]
        for name in REGS:
            if name in regs:
                gdb.execute(f"set ${name} = {regs[name]}", to_string=True)
        word = 4 if gdb.lookup_type("void").pointer().sizeof == 4 else 8
        gdb.execute(f"set $sp = {t['sp'] + k['frame']['words'] * word}", to_string=True)
        gdb.execute("maintenance flush register-cache", to_string=True)
        print(f"[thread {t['index']} {t['name']}, {t['state']} {t['wait_reason']}]")
        gdb.execute("frame 0")


class Rings(gdb.Command):
    """emb-rings: the trace rings the descriptor names."""

    def __init__(self):
        super().__init__("emb-rings", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        model, _ = _model()
        for r in model["rings"]:
            print(f"context {r['context']} {r['name']:<8} at 0x{r['address']:x}: write position "
                  f"{r['write_pos']}, {r['discarded']} events discarded")


class Crash(gdb.Command):
    """emb-crash: the crash record area and the record in it."""

    def __init__(self):
        super().__init__("emb-crash", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        _, mem = _model()
        area = crash_area(Reader(mem))
        if not area["address"]:
            print("no crash record area")
            return
        rec = area["record"]
        if rec is None:
            print(f"crash record area at 0x{area['address']:x}, {area['size']} bytes: no record")
            return
        u = lambda off, n: int.from_bytes(rec[off:off + n], "little")  # noqa: E731
        print(f"crash record v{u(4, 2)}, {u(6, 2)} bytes: class {rec[48]} code {rec[49]}, thread "
              f"{u(52, 2)}, pc {_where(u(60, 4))}, lr 0x{u(64, 4):x}, sp 0x{u(68, 4):x}; "
              f"`emb crash --elf FW` decodes it whole")


def _before_resume(event):
    if _saved:
        _restore()


InfoThreads()
SwitchThread()
Rings()
Crash()
gdb.events.cont.connect(_before_resume)
