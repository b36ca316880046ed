/* Crash record registers per status layout. Signal and si_code numbers are Linux's (the
 * native port's), written down here so the host decodes a record from any machine. */
#include "crash_arch.h"

#include "elf_image.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint64_t word64(const struct emb_crash_record *r, unsigned i)
{
    return (uint64_t)emb_crash_status_reg(r, i) | ((uint64_t)emb_crash_status_reg(r, i + 1) << 32);
}

void emb_crash_view(const struct emb_crash_record *r, struct emb_crash_view *v)
{
    *v = (struct emb_crash_view){
        .name = "unknown", .pc = r->pc, .ra = r->lr, .sp = r->sp,
        .fault_address = r->fault_address, .stack_low = r->stack_base,
        .stack_size = r->stack_size,
        .ra_source = r->lr ? EMB_CRASH_RA_REGISTER : EMB_CRASH_RA_NONE,
    };
    if (r->status_count == 0)
        return;
    v->layout = emb_crash_status_reg(r, 0);
    v->elf_machine = v->layout & 0xFFFFu;
    unsigned version = v->layout >> 16;
    if ((v->layout == EMB_CRASH_LAYOUT_X86_64 || v->layout == EMB_CRASH_LAYOUT_AARCH64) &&
        r->status_count >= EMB_CRASH_NAT_COUNT) {
        v->arch = v->layout == EMB_CRASH_LAYOUT_X86_64 ? EMB_CRASH_ARCH_X86_64 : EMB_CRASH_ARCH_AARCH64;
        v->name = v->arch == EMB_CRASH_ARCH_X86_64 ? "x86-64" : "aarch64";
        v->native = true;
        v->signo = (int)emb_crash_status_reg(r, EMB_CRASH_NAT_SIGNO);
        v->si_code = (int32_t)emb_crash_status_reg(r, EMB_CRASH_NAT_SI_CODE);
        v->bias = word64(r, EMB_CRASH_NAT_BIAS);
        v->pc = word64(r, EMB_CRASH_NAT_PC);
        v->ra = word64(r, EMB_CRASH_NAT_RA);
        v->sp = word64(r, EMB_CRASH_NAT_SP);
        v->fault_address = word64(r, EMB_CRASH_NAT_ADDR);
        v->stack_low = word64(r, EMB_CRASH_NAT_STACK_LOW);
        v->ra_source = emb_crash_status_reg(r, EMB_CRASH_NAT_RA_SOURCE);
        v->ra_offset = emb_crash_status_reg(r, EMB_CRASH_NAT_RA_OFFSET);
    } else if (v->layout == EMB_CRASH_LAYOUT_CORTEX_M && version == 1) {
        v->arch = EMB_CRASH_ARCH_CORTEX_M;
        v->name = "cortex-m";
        v->lr = r->lr;
        if (r->status_count > EMB_CRASH_CM_STACK)
            v->stack_words = r->status_count - EMB_CRASH_CM_STACK;
    } else if (v->elf_machine == EMB_CRASH_EM_RISCV && (version == 1 || version == 2) &&
               r->status_count >= EMB_CRASH_RV_COUNT) {
        v->arch = EMB_CRASH_ARCH_RISCV;
        v->name = "riscv";
        if (version == 2)
            v->harts = (r->status_count - EMB_CRASH_RV_COUNT) / EMB_CRASH_RV_HART_WORDS;
    }
    if (r->fault_class == EMB_FAULT_MONITOR) {
        /* The library raised it at the closing point: no address faulted, and the return
         * address is the monitor's own code, not a caller of the opener. */
        v->fault_address = 0;
        v->ra = v->lr = 0;
        v->ra_source = EMB_CRASH_RA_NONE;
    }
}

static const char *const x86_names[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
                                        "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};
static const char *const a64_names[] = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
    "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
    "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",  "pc"};
static const char *const cm_names[] = {"r0", "r1", "r2",  "r3",  "r4", "r5", "r6", "r7",
                                       "r8", "r9", "r10", "r11", "r12", "sp", "lr", "pc"};
static const char *const rv_names[] = {"ra", "t0", "t1", "t2", "a0", "a1", "a2", "a3",
                                       "a4", "a5", "a6", "a7", "t3", "t4", "t5", "t6"};

size_t emb_crash_registers(const struct emb_crash_record *r, const struct emb_crash_view *v,
                           struct emb_crash_reg *out, size_t max)
{
    size_t n = 0;
    if (v->native) {
        const char *const *names = v->arch == EMB_CRASH_ARCH_X86_64 ? x86_names : a64_names;
        size_t count = v->arch == EMB_CRASH_ARCH_X86_64 ? EMB_CRASH_X86_64_GPRS : EMB_CRASH_AARCH64_GPRS;
        for (size_t i = 0; i < count && 2 * i + 1 < r->gpr_count && n < max; i++)
            out[n++] = (struct emb_crash_reg){
                names[i], (uint64_t)emb_crash_gpr(r, (unsigned)(2 * i)) |
                              ((uint64_t)emb_crash_gpr(r, (unsigned)(2 * i + 1)) << 32)};
        return n;
    }
    static char generic[256][8];
    for (size_t i = 0; i < r->gpr_count && n < max; i++) {
        const char *name;
        if (v->arch == EMB_CRASH_ARCH_CORTEX_M && i < sizeof cm_names / sizeof cm_names[0]) {
            name = cm_names[i];
        } else if (v->arch == EMB_CRASH_ARCH_RISCV && i < sizeof rv_names / sizeof rv_names[0]) {
            name = rv_names[i];
        } else {
            snprintf(generic[i], sizeof generic[i], "w%zu", i);
            name = generic[i];
        }
        out[n++] = (struct emb_crash_reg){name, emb_crash_gpr(r, (unsigned)i)};
    }
    return n;
}

/* Appends the names of the set bits of `value` among `bits` (bit number, name). */
struct bit {
    unsigned bit;
    const char *name;
};

static void bits_text(char *buf, size_t len, uint64_t value, const struct bit *bits, size_t n)
{
    size_t used = strlen(buf);
    for (size_t i = 0; i < n; i++) {
        if (!(value >> bits[i].bit & 1u))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", bits[i].name);
        if (w < 0 || (size_t)w >= len - used)
            return;
        used += (size_t)w;
    }
}

static void append(char *buf, size_t len, const char *fmt, const char *s)
{
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, fmt, used ? " " : "", s);
}

#define NBITS(a) (sizeof(a) / sizeof((a)[0]))

static const char *x86_trap(uint64_t t)
{
    static const char *const names[] = {
        "divide error (#DE)", "debug (#DB)", "NMI", "breakpoint (#BP)", "overflow (#OF)",
        "bound range (#BR)", "invalid opcode (#UD)", "device not available (#NM)",
        "double fault (#DF)", "coprocessor segment overrun", "invalid TSS (#TS)",
        "segment not present (#NP)", "stack-segment fault (#SS)", "general protection (#GP)",
        "page fault (#PF)", "reserved", "x87 floating point (#MF)", "alignment check (#AC)",
        "machine check (#MC)", "SIMD floating point (#XM)",
    };
    return t < NBITS(names) ? names[t] : "unknown trap";
}

static size_t decode_x86(const struct emb_crash_record *r, struct emb_crash_status_item *out,
                         size_t max)
{
    static const struct bit rflags[] = {
        {0, "CF"}, {2, "PF"}, {4, "AF"}, {6, "ZF"}, {7, "SF"}, {8, "TF"},
        {9, "IF"}, {10, "DF"}, {11, "OF"}, {16, "RF"}, {18, "AC"}, {21, "ID"},
    };
    size_t n = 0;
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        it->name = "rflags";
        it->value = emb_crash_status_reg(r, EMB_CRASH_NAT_FLAGS);
        it->text[0] = '\0';
        bits_text(it->text, sizeof it->text, it->value, rflags, NBITS(rflags));
    }
    uint64_t trap = emb_crash_status_reg(r, EMB_CRASH_NAT_TRAPNO);
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        it->name = "trap";
        it->value = trap;
        snprintf(it->text, sizeof it->text, "%s", x86_trap(trap));
    }
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        uint64_t err = emb_crash_status_reg(r, EMB_CRASH_NAT_ERR);
        it->name = "error";
        it->value = err;
        it->text[0] = '\0';
        if (trap == 14) {
            append(it->text, sizeof it->text, "%s%s", err & 1 ? "protection violation" : "page not present");
            append(it->text, sizeof it->text, "%s%s", err & 2 ? "write" : "read");
            append(it->text, sizeof it->text, "%s%s", err & 4 ? "user mode" : "kernel mode");
            if (err & 16)
                append(it->text, sizeof it->text, "%s%s", "instruction fetch");
        }
    }
    return n;
}

static size_t decode_a64(const struct emb_crash_record *r, struct emb_crash_status_item *out,
                         size_t max)
{
    static const struct bit pstate[] = {{31, "N"}, {30, "Z"}, {29, "C"}, {28, "V"},
                                        {9, "D"},  {8, "A"},  {7, "I"},  {6, "F"}};
    size_t n = 0;
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        it->name = "pstate";
        it->value = emb_crash_status_reg(r, EMB_CRASH_NAT_FLAGS);
        snprintf(it->text, sizeof it->text, "EL%u", (unsigned)(it->value >> 2 & 3u));
        bits_text(it->text, sizeof it->text, it->value, pstate, NBITS(pstate));
    }
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        uint32_t esr = emb_crash_status_reg(r, EMB_CRASH_NAT_ERR);
        unsigned ec = esr >> 26;
        const char *what = ec == 0x24 ? "data abort from a lower EL"
                           : ec == 0x25 ? "data abort"
                           : ec == 0x20 ? "instruction abort from a lower EL"
                           : ec == 0x21 ? "instruction abort"
                           : ec == 0x22 ? "pc alignment fault"
                           : ec == 0x26 ? "sp alignment fault"
                           : ec == 0x00 ? "unknown reason"
                           : ec == 0x3C ? "brk instruction"
                                        : "exception class";
        it->name = "esr";
        it->value = esr;
        snprintf(it->text, sizeof it->text, "EC 0x%02x %s%s", ec, what,
                 (ec == 0x24 || ec == 0x25) ? (esr & (1u << 6) ? ", write" : ", read") : "");
    }
    return n;
}

static size_t decode_cm(const struct emb_crash_record *r, struct emb_crash_status_item *out,
                        size_t max)
{
    static const struct bit xpsr[] = {{31, "N"}, {30, "Z"}, {29, "C"}, {28, "V"}, {27, "Q"}, {24, "T"}};
    static const struct bit cfsr[] = {
        {0, "IACCVIOL"},    {1, "DACCVIOL"},   {3, "MUNSTKERR"}, {4, "MSTKERR"},   {5, "MLSPERR"},
        {7, "MMARVALID"},   {8, "IBUSERR"},    {9, "PRECISERR"}, {10, "IMPRECISERR"},
        {11, "UNSTKERR"},   {12, "STKERR"},    {13, "LSPERR"},   {15, "BFARVALID"},
        {16, "UNDEFINSTR"}, {17, "INVSTATE"},  {18, "INVPC"},    {19, "NOCP"},
        {20, "STKOF"},      {24, "UNALIGNED"}, {25, "DIVBYZERO"},
    };
    static const struct bit hfsr[] = {{1, "VECTTBL"}, {30, "FORCED"}, {31, "DEBUGEVT"}};
    size_t n = 0;
    uint32_t c = emb_crash_status_reg(r, EMB_CRASH_CM_CFSR);
    struct {
        const char *name;
        unsigned idx;
    } regs[] = {{"xPSR", EMB_CRASH_CM_XPSR}, {"CFSR", EMB_CRASH_CM_CFSR}, {"HFSR", EMB_CRASH_CM_HFSR},
                {"MMFAR", EMB_CRASH_CM_MMFAR}, {"BFAR", EMB_CRASH_CM_BFAR},
                {"EXC_RETURN", EMB_CRASH_CM_EXC_RETURN}, {"CONTROL", EMB_CRASH_CM_CONTROL}};
    for (size_t i = 0; i < NBITS(regs) && regs[i].idx < r->status_count && n < max; i++) {
        struct emb_crash_status_item *it = &out[n++];
        it->name = regs[i].name;
        it->value = emb_crash_status_reg(r, regs[i].idx);
        it->text[0] = '\0';
        switch (regs[i].idx) {
        case EMB_CRASH_CM_XPSR:
            snprintf(it->text, sizeof it->text, "exception %u", (unsigned)(it->value & 0x1FFu));
            bits_text(it->text, sizeof it->text, it->value, xpsr, NBITS(xpsr));
            break;
        case EMB_CRASH_CM_CFSR: bits_text(it->text, sizeof it->text, it->value, cfsr, NBITS(cfsr)); break;
        case EMB_CRASH_CM_HFSR: bits_text(it->text, sizeof it->text, it->value, hfsr, NBITS(hfsr)); break;
        case EMB_CRASH_CM_MMFAR:
            snprintf(it->text, sizeof it->text, "%s", c & (1u << 7) ? "valid" : "not valid");
            break;
        case EMB_CRASH_CM_BFAR:
            snprintf(it->text, sizeof it->text, "%s", c & (1u << 15) ? "valid" : "not valid");
            break;
        case EMB_CRASH_CM_EXC_RETURN:
            if ((it->value & 0xFF000000u) == 0xFF000000u)
                snprintf(it->text, sizeof it->text, "return to %s mode, %s stack",
                         it->value & 8u ? "thread" : "handler", it->value & 4u ? "process" : "main");
            break;
        default: break;
        }
    }
    return n;
}

/* The privileged specification's mcause values (RISC-V Privileged ISA, table 3.6). */
const char *emb_crash_rv_cause_text(uint32_t mcause)
{
    static const char *const exceptions[] = {
        "instruction address misaligned", "instruction access fault", "illegal instruction",
        "breakpoint", "load address misaligned", "load access fault",
        "store/AMO address misaligned", "store/AMO access fault", "environment call from U-mode",
        "environment call from S-mode", "reserved", "environment call from M-mode",
        "instruction page fault", "load page fault", "reserved", "store/AMO page fault",
    };
    static const char *const interrupts[] = {
        "reserved", "supervisor software interrupt", "reserved", "machine software interrupt",
        "reserved", "supervisor timer interrupt", "reserved", "machine timer interrupt",
        "reserved", "supervisor external interrupt", "reserved", "machine external interrupt",
    };
    uint32_t code = mcause & 0x7FFFFFFFu;
    if (mcause >> 31)
        return code < NBITS(interrupts) ? interrupts[code] : "platform interrupt";
    return code < NBITS(exceptions) ? exceptions[code] : "exception";
}

static size_t decode_rv(const struct emb_crash_record *r, struct emb_crash_status_item *out,
                        size_t max)
{
    static const struct bit mstatus[] = {{3, "MIE"}, {7, "MPIE"}};
    static const char *const modes[] = {"U", "S", "reserved", "M"};
    size_t n = 0;
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        it->name = "mcause";
        it->value = emb_crash_status_reg(r, EMB_CRASH_RV_MCAUSE);
        snprintf(it->text, sizeof it->text, "%s", emb_crash_rv_cause_text((uint32_t)it->value));
    }
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        it->name = "mtval";
        it->value = emb_crash_status_reg(r, EMB_CRASH_RV_MTVAL);
        it->text[0] = '\0';
    }
    if (n < max) {
        struct emb_crash_status_item *it = &out[n++];
        it->name = "mstatus";
        it->value = emb_crash_status_reg(r, EMB_CRASH_RV_MSTATUS);
        snprintf(it->text, sizeof it->text, "MPP %s", modes[it->value >> 11 & 3u]);
        bits_text(it->text, sizeof it->text, it->value, mstatus, NBITS(mstatus));
    }
    return n;
}

size_t emb_crash_harts(const struct emb_crash_record *r, const struct emb_crash_view *v,
                       struct emb_crash_hart *out, size_t max)
{
    size_t n = 0;
    for (unsigned i = 0; v->arch == EMB_CRASH_ARCH_RISCV && i < v->harts && n < max; i++) {
        unsigned w = EMB_CRASH_RV_COUNT + i * EMB_CRASH_RV_HART_WORDS;
        uint32_t id = emb_crash_status_reg(r, w);
        out[n++] = (struct emb_crash_hart){
            .hart = id & 0xFFu, .state = id >> 8 & 0xFFu, .irq_depth = id >> 16 & 0xFFu,
            .pc = emb_crash_status_reg(r, w + 1), .ra = emb_crash_status_reg(r, w + 2),
            .cause = emb_crash_status_reg(r, w + 3),
        };
    }
    return n;
}

const char *emb_crash_hart_state_name(unsigned state)
{
    switch (state) {
    case EMB_CRASH_HART_NO_ANSWER: return "no answer";
    case EMB_CRASH_HART_STOPPED: return "stopped";
    case EMB_CRASH_HART_FAULTED: return "faulted";
    default: return "unknown";
    }
}

size_t emb_crash_status_decode(const struct emb_crash_record *r, const struct emb_crash_view *v,
                               struct emb_crash_status_item *out, size_t max)
{
    if (v->native && v->signo == 0)
        return 0; /* raised by the library: no trap, no signal frame, nothing to decode */
    switch (v->arch) {
    case EMB_CRASH_ARCH_X86_64: return decode_x86(r, out, max);
    case EMB_CRASH_ARCH_AARCH64: return decode_a64(r, out, max);
    case EMB_CRASH_ARCH_CORTEX_M: return decode_cm(r, out, max);
    case EMB_CRASH_ARCH_RISCV: return decode_rv(r, out, max);
    default: return 0;
    }
}

const char *emb_crash_signal_name(int signo)
{
    switch (signo) {
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 11: return "SIGSEGV";
    default: return "";
    }
}

const char *emb_crash_si_code_text(int signo, int code)
{
    if (code == 0)
        return "sent by a process (SI_USER)";
    if (code == -6)
        return "sent by the thread itself (SI_TKILL)";
    switch (signo) {
    case 11:
        return code == 1 ? "address not mapped (SEGV_MAPERR)"
               : code == 2 ? "access not allowed (SEGV_ACCERR)"
               : code == 3 ? "bounds check failed (SEGV_BNDERR)"
               : code == 4 ? "protection key (SEGV_PKUERR)"
               : code == 128 ? "kernel-detected fault (SI_KERNEL)"
                            : "";
    case 7:
        return code == 1 ? "misaligned address (BUS_ADRALN)"
               : code == 2 ? "nonexistent physical address (BUS_ADRERR)"
               : code == 3 ? "object-specific hardware error (BUS_OBJERR)"
                            : "";
    case 4:
        return code == 1 ? "illegal opcode (ILL_ILLOPC)"
               : code == 2 ? "illegal operand (ILL_ILLOPN)"
               : code == 3 ? "illegal addressing mode (ILL_ILLADR)"
               : code == 4 ? "illegal trap (ILL_ILLTRP)"
               : code == 5 ? "privileged opcode (ILL_PRVOPC)"
                            : "";
    case 8:
        return code == 1 ? "integer divide by zero (FPE_INTDIV)"
               : code == 2 ? "integer overflow (FPE_INTOVF)"
               : code == 3 ? "floating-point divide by zero (FPE_FLTDIV)"
               : code == 4 ? "floating-point overflow (FPE_FLTOVF)"
               : code == 5 ? "floating-point underflow (FPE_FLTUND)"
               : code == 6 ? "floating-point inexact (FPE_FLTRES)"
               : code == 7 ? "invalid floating-point operation (FPE_FLTINV)"
                            : "";
    default: return "";
    }
}

/* ---- Unwinding ---- */

struct stack_kept {
    const struct emb_crash_record *r;
    uint64_t sp;
    unsigned words;
};

static int stack_word(void *arg, uint64_t addr, uint64_t *value)
{
    const struct stack_kept *k = arg;
    if (addr < k->sp || (addr - k->sp) % 4u != 0 || (addr - k->sp) / 4u >= k->words)
        return -1;
    *value = emb_crash_status_reg(k->r, EMB_CRASH_CM_STACK + (unsigned)((addr - k->sp) / 4u));
    return 0;
}

size_t emb_crash_unwind(const struct emb_crash_record *r, const struct emb_crash_view *v,
                        struct emb_elf *elf, uint64_t *calls, size_t max)
{
    if (v->arch != EMB_CRASH_ARCH_CORTEX_M || elf == NULL)
        return 0;
    struct emb_elf_unwind_regs regs = {.known = 0};
    for (unsigned i = 0; i < r->gpr_count && i < EMB_CRASH_CORTEX_M_GPRS; i++) {
        regs.value[i] = emb_crash_gpr(r, i);
        regs.known |= 1ull << i;
    }
    struct stack_kept kept = {r, v->sp, v->stack_words};
    uint64_t pc = v->pc, sp = v->sp;
    size_t n = 0;
    while (n < max && emb_elf_in_text(elf, pc)) {
        if (emb_elf_unwind_step(elf, pc, &regs, 13, 14, stack_word, &kept) != 0)
            break;
        uint64_t ra = regs.value[14] & ~(uint64_t)1;
        /* A caller's frame lies above its callee's (full descending stack); only the
         * first step may leave sp where it was (a leaf that pushed nothing). */
        if (ra == 0 || !emb_elf_in_text(elf, ra) || regs.value[13] < sp ||
            (n > 0 && regs.value[13] == sp))
            break;
        sp = regs.value[13];
        calls[n++] = ra;
        pc = ra - 1u; /* inside the call instruction: its frame rules, its line */
        regs.value[15] = ra;
    }
    return n;
}
