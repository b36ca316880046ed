"""A kernel's threads, scheduler state and objects from its layout block (descriptor
section 11; docs/formats/descriptor.md, "The kernel's layout block"), in the shape of
`emb desc --json`'s "kernel" object."""
from .memory import DescriptorError
from .reader import (KIND_KERNEL, KIND_OBJECTS, KIND_SCHEDULER, KIND_THREADS, KIND_TYPES, MAX_OBJECTS,
                     MAX_OWNED, MAX_THREADS, OB, SC, TH, field)


class Kernel:
    def __init__(self, rd):
        self.rd = rd
        self.addr = rd.w(KIND_KERNEL, 0)
        if not self.addr:
            raise DescriptorError("the image has no kernel layout block (descriptor section 11 is 0)")
        head = rd.mem.read(self.addr, 16 + rd.W)
        if head[:4] != b"EMBK":
            raise DescriptorError(f"kernel layout block at 0x{self.addr:x}: byte 0: no \"EMBK\" magic")
        length, count = rd.uint(head, 4, 4), rd.uint(head, 8, 4)
        if not 16 + rd.W <= length <= 4096 or count > 16:
            raise DescriptorError(f"kernel layout block at 0x{self.addr:x}: byte 4: length {length}, "
                                  f"{count} sections")
        rd._sections(rd.mem.read(self.addr, length), 16 + rd.W, count,
                     f"kernel layout block at 0x{self.addr:x}")
        self.name = rd.string(rd.uint(head, 16, rd.W))

    def t(self, name):
        return self.rd.w(KIND_THREADS, TH.index(name))

    def s(self, name):
        return self.rd.w(KIND_SCHEDULER, SC.index(name))

    def o(self, name):
        return self.rd.w(KIND_OBJECTS, OB.index(name))

    def objects(self):
        rd, out, seen = self.rd, [], set()
        words = [self.o(n) for n in ("type", "lifecycle", "name", "next", "handle", "mutex_owner")]
        types_count, type_names = rd.w(KIND_TYPES, 0), rd.w(KIND_TYPES, 1)
        for t in range(min(self.o("registry_count"), 64)):
            a = rd.word(self.o("registry") + t * rd.W)
            for _ in range(self.o("max")):
                if not a or a in seen or len(out) >= MAX_OBJECTS:
                    break
                seen.add(a)
                buf = rd.struct_at(a, words, "kernel object")
                kind = rd.value(buf, words[0])
                out.append(dict(addr=a, type=rd.name_from(type_names, types_count, kind), type_tag=kind,
                                name=rd.string(rd.value(buf, words[2])), handle=rd.value(buf, words[4]),
                                owner=rd.value(buf, words[5]) if kind == 1 else 0))
                a = rd.value(buf, words[3])
        return out

    def scheduler(self):
        rd = self.rd
        words = [self.s(n) for n in ("current", "irq_nesting", "sched_lock", "reschedule", "switches", "tick")]
        buf = rd.struct_at(self.s("cpus"), words, "kernel per-CPU state")
        v = [rd.value(buf, w) for w in words]
        bitmap = rd.value(rd.struct_at(self.s("ready"), [self.s("bitmap")], "ready structure"), self.s("bitmap"))
        return dict(current=v[0], irq_nesting_depth=v[1], sched_lock_depth=v[2], reschedule_pending=v[3],
                    switches=v[4], tick=v[5], ready_bitmap=bitmap)

    def stack_used(self, low, size):
        if not low or not size or size > 1 << 20:
            return 0
        data = self.rd.mem.read(low, size)
        untouched = len(data) - len(data.lstrip(bytes([self.t("paint") & 0xFF])))
        return size - untouched

    def frame(self, sp):
        rd, n = self.rd, self.t("frame_words")
        names = [rd.name_from(self.t("frame_names"), n, i) for i in range(min(n, 32))]
        data = rd.mem.read(sp, len(names) * rd.W)
        return {name: rd.uint(data, i * rd.W, rd.W) for i, name in enumerate(names)}

    def owned(self, first, objects):
        rd, out, a = self.rd, [], first
        while a and a not in [x["addr"] for x in out] and len(out) < MAX_OWNED:
            buf = rd.struct_at(a, [self.t("lock_next")], "a lock a thread holds")
            out.append(next((o for o in objects if o["addr"] == a), dict(addr=a, name="")))
            a = rd.value(buf, self.t("lock_next"))
        return [o["name"] for o in out]

    def thread(self, addr, current, objects):
        rd = self.rd
        names = [n for n in TH if n not in ("all", "max", "state_names", "state_count", "wait_names",
                                            "wait_count", "stats_fields", "stats_count", "paint",
                                            "frame_words", "frame_names", "frame_pc", "frame_lr")]
        f = {n: self.t(n) for n in names}
        buf = rd.struct_at(addr, list(f.values()), f"kernel thread at 0x{addr:x}")
        v = {n: rd.value(buf, w) for n, w in f.items()}
        name = rd.text(buf, f["name"]) if field(f["name"])[2] == 3 else rd.string(v["name"])
        running = addr == current
        wait_obj = next((o["name"] for o in objects if o["addr"] == v["wait_object"]), "")
        stats_off, stats_size, _ = field(f["stats"])
        block = buf[stats_off:stats_off + stats_size]
        stats = {}
        for i in range(min(self.t("stats_count"), 32)):
            pair = self.t("stats_fields") + 2 * i * rd.W
            stats[rd.string(rd.word(pair))] = rd.value(block, rd.word(pair + rd.W))
        return dict(
            index=v["index"], name=name, address=addr,
            state="running" if running else rd.name_from(self.t("state_names"), self.t("state_count"), v["state"]),
            running=running,
            wait_reason=rd.name_from(self.t("wait_names"), self.t("wait_count"), v["wait"]),
            wait_object=v["wait_object"], wait_object_name=wait_obj, wake_result=v["wake_result"],
            base_priority=v["base"], eff_priority=v["eff"], sp=v["sp"], stack_low=v["stack_low"],
            stack_size=v["stack_size"], stack_used=self.stack_used(v["stack_low"], v["stack_size"]),
            timeout_armed=v["timeout_armed"] != 0, timeout_deadline=v["timeout_deadline"],
            notify_bits=v["notify_bits"], notify_mask=v["notify_mask"], entry=v["entry"],
            locks_held=self.owned(v["owned"], objects),
            registers={} if running or not v["sp"] else self.frame(v["sp"]), stats=stats,
            _next=v["next"])

    def model(self):
        sched = self.scheduler()
        objects = self.objects()
        threads, a = [], self.rd.word(self.t("all"))
        while a and len(threads) < min(self.t("max"), MAX_THREADS):
            if a in [t["address"] for t in threads]:
                break
            threads.append(self.thread(a, sched["current"], objects))
            a = threads[-1].pop("_next")
        for t in threads:
            t.pop("_next", None)
        current = next((t["name"] for t in threads if t["address"] == sched["current"]), "-")
        frame = dict(words=self.t("frame_words"), pc=self.t("frame_pc"), lr=self.t("frame_lr"))
        return dict(name=self.name, current_thread=current, threads=threads, objects=objects, frame=frame,
                    **{k: v for k, v in sched.items() if k != "current"})
