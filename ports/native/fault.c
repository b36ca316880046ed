/* The native port's fault path: SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT become a
 * crash record in a retained region, a file mapped MAP_SHARED that outlives the process
 * the way retained RAM outlives a reset; then the signal's default action ends the process.
 *
 * The handler runs on an alternate signal stack (so a stack overflow is recorded too) and
 * calls only async-signal-safe code: the library's stores and atomics, memcpy, sigaction,
 * raise, nanosleep and the gettid system call. Everything it needs (load bias, stack
 * bounds, build id, the context table) was found before the fault.
 */
#define _GNU_SOURCE
#include <emb/crash.h>
#include <emb/native.h>
#include <emb/port.h>
#include <emb/trace_events.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "native_internal.h"

#if CONFIG_EMB_CRASH

#define EMB__ALTSTACK_SIZE (64u * 1024u)
#define EMB__DEFAULT_REGION (64u * 1024u)
#define EMB__MAX_REGION (16u * 1024u * 1024u)
#define EMB__SCAN_BYTES 4096u

static const int emb__signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define EMB__NSIGNALS (sizeof emb__signals / sizeof emb__signals[0])

static struct {
    uint8_t *region;
    size_t size;
    char fw_version[EMB_CRASH_FW_VERSION_SIZE + 1];
    uint32_t flight_bytes;
    bool installed;
    struct sigaction previous[EMB__NSIGNALS];
    int32_t owner_tid;  /* the thread writing a record; 0 when none */
    bool recorded;      /* a record of this run is in the region: do not overwrite it */
    struct emb_trace_ring *others[EMB_TSF_MAX_CONTEXTS];
} emb__fault;

/* The calling thread's alternate stack, when this file gave it one. */
static _Thread_local void *emb__altstack;

/* ---- Registers ---- */

struct emb__regs {
    uint64_t pc, sp, ra, flags, err, trapno, addr;
    uint32_t ra_source, ra_offset;
    uint32_t gprs[2u * 33u];
    uint8_t gpr_words;
};

static void emb__put64(uint32_t *words, uint32_t index, uint64_t v)
{
    words[index] = (uint32_t)v;
    words[index + 1u] = (uint32_t)(v >> 32);
}

#if defined(__x86_64__)
#define EMB__LAYOUT EMB_CRASH_LAYOUT_X86_64

static void emb__read_regs(const ucontext_t *uc, struct emb__regs *r)
{
    const greg_t *g = uc->uc_mcontext.gregs;
    /* DWARF register order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15, then rip. */
    static const int order[EMB_CRASH_X86_64_GPRS] = {
        REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8,
        REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
    };
    for (uint32_t i = 0; i < EMB_CRASH_X86_64_GPRS; i++)
        emb__put64(r->gprs, 2u * i, (uint64_t)g[order[i]]);
    r->gpr_words = 2u * EMB_CRASH_X86_64_GPRS;
    r->pc = (uint64_t)g[REG_RIP];
    r->sp = (uint64_t)g[REG_RSP];
    r->flags = (uint64_t)g[REG_EFL];
    r->err = (uint64_t)g[REG_ERR];
    r->trapno = (uint64_t)g[REG_TRAPNO];
}

/* Whether the bytes before `ra` end with a call instruction: e8 rel32; ff /2 with a
 * register, a disp8, a disp32 or a RIP-relative operand (with or without a REX prefix). */
static bool emb__after_call(const uint8_t *ra)
{
    if (ra[-5] == 0xE8u)
        return true;
    for (uint32_t len = 2; len <= 7; len++) {
        const uint8_t *op = ra - len;
        if (op[0] == 0xFFu && ((op[1] >> 3) & 7u) == 2u)
            return true;
    }
    return false;
}
#elif defined(__aarch64__)
#define EMB__LAYOUT EMB_CRASH_LAYOUT_AARCH64

/* The ESR the kernel saves in the signal frame's extension records. */
static uint64_t emb__esr(const ucontext_t *uc)
{
    const uint8_t *p = (const uint8_t *)uc->uc_mcontext.__reserved;
    const uint8_t *end = p + sizeof uc->uc_mcontext.__reserved;
    while (p + 8 <= end) {
        uint32_t magic, size;
        memcpy(&magic, p, 4);
        memcpy(&size, p + 4, 4);
        if (magic == 0u || size < 8u || size > (uint32_t)(end - p))
            break;
        if (magic == 0x45535201u && size >= 16u) {
            uint64_t esr;
            memcpy(&esr, p + 8, 8);
            return esr;
        }
        p += size;
    }
    return 0;
}

static void emb__read_regs(const ucontext_t *uc, struct emb__regs *r)
{
    for (uint32_t i = 0; i < 31u; i++)
        emb__put64(r->gprs, 2u * i, uc->uc_mcontext.regs[i]);
    emb__put64(r->gprs, 62u, uc->uc_mcontext.sp);
    emb__put64(r->gprs, 64u, uc->uc_mcontext.pc);
    r->gpr_words = 2u * EMB_CRASH_AARCH64_GPRS;
    r->pc = uc->uc_mcontext.pc;
    r->sp = uc->uc_mcontext.sp;
    r->ra = uc->uc_mcontext.regs[30];
    r->ra_source = EMB_CRASH_RA_REGISTER;
    r->flags = uc->uc_mcontext.pstate;
    r->err = emb__esr(uc);
}

static bool emb__after_call(const uint8_t *ra)
{
    uint32_t insn;
    memcpy(&insn, ra - 4, 4);
    return (insn & 0xFC000000u) == 0x94000000u || (insn & 0xFFFFFC1Fu) == 0xD63F0000u;
}
#else
#define EMB__LAYOUT 0u

static void emb__read_regs(const ucontext_t *uc, struct emb__regs *r)
{
    (void)uc;
    (void)r;
}

static bool emb__after_call(const uint8_t *ra)
{
    (void)ra;
    return false;
}
#endif

/* x86-64 has no link register: the return address is the first word above sp that
 * points just after a call instruction in the executable. Only the stack the context
 * registered is read (its bounds are known), and only the first 4 KiB of it. */
/* Not instrumented: the words above sp include the faulting frames' padding and
 * redzones, which AddressSanitizer would report as an underflow. */
__attribute__((no_sanitize("address"))) static void
emb__scan_return_address(struct emb__regs *r, const struct emb__context *ctx)
{
    if (r->ra_source != EMB_CRASH_RA_NONE || ctx == NULL || ctx->info.stack_low == 0u)
        return;
    uintptr_t low = ctx->info.stack_low, high = low + ctx->info.stack_size;
    uintptr_t text_low, text_high;
    emb__native_text_range(&text_low, &text_high);
    if (r->sp < low || r->sp >= high || text_high <= text_low + 8u)
        return;
    uintptr_t end = high - r->sp > EMB__SCAN_BYTES ? r->sp + EMB__SCAN_BYTES : high;
    for (uintptr_t p = (r->sp + 7u) & ~(uintptr_t)7u; p + 8u <= end; p += 8u) {
        uintptr_t v = *(const volatile uintptr_t *)p; /* a load, not an intercepted memcpy */
        if (v >= text_low + 8u && v < text_high && emb__after_call((const uint8_t *)v)) {
            r->ra = v;
            r->ra_source = EMB_CRASH_RA_STACK_SCAN;
            r->ra_offset = (uint32_t)(p - r->sp);
            return;
        }
    }
}

/* ---- The record ---- */

static uint8_t emb__class_of(int signo, uint64_t addr, const struct emb__context *ctx)
{
    switch (signo) {
    case SIGSEGV:
        /* A fault just below the stack, in its guard, is an overflow. */
        if (ctx != NULL && ctx->info.stack_low != 0u && addr < ctx->info.stack_low + 256u &&
            addr + 65536u >= ctx->info.stack_low)
            return EMB_FAULT_STACK;
        return EMB_FAULT_MEMORY;
    case SIGBUS: return EMB_FAULT_BUS;
    case SIGILL: return EMB_FAULT_ILLEGAL;
    case SIGFPE: return EMB_FAULT_ARITH;
    case SIGABRT: return EMB_FAULT_ABORT;
    default: return EMB_FAULT_SOFTWARE;
    }
}

/* A runtime code address as the ELF sees it, when it is in the executable. */
static uint32_t emb__elf_address(uint64_t runtime)
{
    uintptr_t lo, hi;
    emb__native_text_range(&lo, &hi);
    if (runtime >= lo && runtime < hi)
        return (uint32_t)(runtime - emb__native_load_bias());
    return (uint32_t)runtime;
}

/* The record's fault_address and lr_or_ra for a fault the library raised (class-specific
 * values, see emb_port_fault()); NULL for a signal. */
struct emb__raised {
    uint32_t value, limit;
};

/* The native record's status words (EMB_CRASH_NAT_*): the signal, the registers beyond the
 * general ones, the load bias and where the return address came from. */
static void emb__status_words(uint32_t *status, int signo, int si_code, const struct emb__regs *r,
                              const struct emb__context *self)
{
    memset(status, 0, EMB_CRASH_NAT_COUNT * sizeof *status);
    status[EMB_CRASH_NAT_LAYOUT] = EMB__LAYOUT;
    status[EMB_CRASH_NAT_SIGNO] = (uint32_t)signo;
    status[EMB_CRASH_NAT_SI_CODE] = (uint32_t)si_code;
    emb__put64(status, EMB_CRASH_NAT_BIAS, emb__native_load_bias());
    emb__put64(status, EMB_CRASH_NAT_PC, r->pc);
    emb__put64(status, EMB_CRASH_NAT_RA, r->ra);
    emb__put64(status, EMB_CRASH_NAT_SP, r->sp);
    emb__put64(status, EMB_CRASH_NAT_ADDR, r->addr);
    status[EMB_CRASH_NAT_FLAGS] = (uint32_t)r->flags;
    status[EMB_CRASH_NAT_ERR] = (uint32_t)r->err;
    status[EMB_CRASH_NAT_TRAPNO] = (uint32_t)r->trapno;
    emb__put64(status, EMB_CRASH_NAT_STACK_LOW, self != NULL ? self->info.stack_low : 0u);
    status[EMB_CRASH_NAT_RA_SOURCE] = r->ra_source;
    status[EMB_CRASH_NAT_RA_OFFSET] = r->ra_offset;
}

/* The rings the flight copy reads: the faulting context's (its trace ended by the fault
 * event first), else another live one's; the other live contexts' rings go into
 * emb__fault.others, *n of them. NULL when no context has a ring. */
static struct emb_trace_ring *emb__flight_rings(struct emb__context *self, uint8_t fault_class, uint8_t code,
                                                const struct emb__regs *r, uint32_t *n)
{
    struct emb_trace_ring *ring = self != NULL ? &self->ring : NULL;
    if (ring != NULL) {
        /* The fault itself ends the context's trace, marked as fault-handler code. */
        emb_trace_enter_handler(ring, EMB_EVT_KIND_FAULT);
        EMB_TRACE_partition_fault(0u, fault_class, self->ring.context_id, code, r->pc);
        emb_trace_flush(ring);
    }
    uint32_t count = emb__native_context_count();
    *n = 0;
    for (uint32_t i = 0; i < count && *n < EMB_TSF_MAX_CONTEXTS; i++) {
        struct emb__context *ctx = emb__native_context(i);
        if (ctx != self && __atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE) == EMB_CONTEXT_LIVE)
            emb__fault.others[(*n)++] = &ctx->ring;
    }
    if (ring == NULL && *n > 0u)
        ring = emb__fault.others[--*n];
    return ring;
}

static void emb__write_record(uint8_t fault_class, uint8_t code, int signo, int si_code,
                              struct emb__regs *r, const struct emb__raised *raised)
{
    struct emb__context *self = emb__native_self();
    emb__scan_return_address(r, self);
    uint32_t status[EMB_CRASH_NAT_COUNT];
    emb__status_words(status, signo, si_code, r, self);
    uint32_t pc_elf = emb__elf_address(r->pc);
    uint16_t thread = self != NULL ? self->ring.context_id : 0xFFFFu;
    uint32_t n;
    struct emb_trace_ring *ring = emb__flight_rings(self, fault_class, code, r, &n);

    uint32_t build_id_len;
    const uint8_t *build_id = emb__native_build_id(&build_id_len);
    uint32_t cap = 0;
    uint8_t *area = emb_crash_flight_area(EMB_CRASH_NAT_COUNT, r->gpr_words, &cap);
    if (emb__fault.flight_bytes != 0u && cap > emb__fault.flight_bytes)
        cap = emb__fault.flight_bytes;
    uint16_t packets = 0;
    uint32_t flight_len = 0;
    if (area != NULL && ring != NULL) {
        struct emb_crash_flight_identity id = {
            .build_id = build_id,
            .build_id_len = (uint8_t)build_id_len,
            .pointer_size = sizeof(void *),
            .port = EMB_PORT_NAME,
        };
        flight_len = emb_crash_flight_collect(area, cap, ring, emb__fault.others, n, &id, &packets);
    }
    int cpu = sched_getcpu();
    struct emb_crash_info info = {
        .build_id = build_id,
        .build_id_len = (uint8_t)build_id_len,
        .fw_version = emb__fault.fw_version,
        .uptime_ticks = emb_port_timestamp(),
        .reset_reason = EMB_RESET_FAULT,
        .fault_class = fault_class,
        .fault_code = code,
        .cpu_id = cpu >= 0 && cpu < 256 ? (uint8_t)cpu : 0xFFu,
        .thread_index = thread,
        .fault_address = raised != NULL ? raised->value : (uint32_t)r->addr,
        .pc = pc_elf,
        .lr = raised != NULL                     ? raised->limit
              : r->ra_source != EMB_CRASH_RA_NONE ? emb__elf_address(r->ra)
                                                  : 0u,
        .sp = (uint32_t)r->sp,
        .stack_base = self != NULL ? (uint32_t)self->info.stack_low : 0u,
        .stack_size = self != NULL ? self->info.stack_size : 0u,
        .status_regs = status,
        .status_count = EMB_CRASH_NAT_COUNT,
        .gprs = r->gprs,
        .gpr_count = r->gpr_words,
        .flight = area,
        .flight_len = flight_len,
        .flight_packets = packets,
    };
    if (emb_crash_write(&info) == EMB_OK)
        __atomic_store_n(&emb__fault.recorded, true, __ATOMIC_RELEASE);
}

/* Ends the process with `signo`'s default action: the handler is removed and the signal
 * raised again (it is blocked in the handler, so it arrives when the handler returns; a
 * faulting instruction would fault again anyway). */
static void emb__die(int signo)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(signo, &dfl, NULL);
    raise(signo);
}

/* One record per run: the first faulting thread writes it; a thread that faults while
 * another writes waits for the process to end; the writer faulting again dies at once. */
static bool emb__claim_writer(void)
{
    int32_t tid = (int32_t)syscall(SYS_gettid), none = 0;
    if (__atomic_compare_exchange_n(&emb__fault.owner_tid, &none, tid, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return true;
    if (none == tid)
        return false;
    for (;;) {
        struct timespec second = {1, 0};
        nanosleep(&second, NULL);
    }
}

static void emb__fault_handler(int signo, siginfo_t *si, void *uctx)
{
    int saved_errno = errno;
    if (emb__claim_writer() && !__atomic_load_n(&emb__fault.recorded, __ATOMIC_ACQUIRE)) {
        struct emb__regs r;
        memset(&r, 0, sizeof r);
        emb__read_regs((const ucontext_t *)uctx, &r);
        r.addr = (uint64_t)(uintptr_t)si->si_addr;
        emb__write_record(emb__class_of(signo, r.addr, emb__native_self()), (uint8_t)si->si_code,
                          signo, si->si_code, &r, NULL);
    }
    emb__die(signo);
    errno = saved_errno;
}

void emb_port_fault(uint8_t fault_class, uint8_t code, uintptr_t pc, uint32_t value,
                    uint32_t limit)
{
    if (emb__fault.installed && emb__claim_writer()) {
        struct emb__regs r;
        memset(&r, 0, sizeof r);
        r.pc = pc;
        r.sp = (uintptr_t)__builtin_frame_address(0);
        r.ra = (uintptr_t)__builtin_return_address(0);
        r.ra_source = EMB_CRASH_RA_REGISTER;
        /* No signal was delivered and no trap taken: signal 0 says so, so the record is
         * not read as the SIGABRT the process ends with. */
        const struct emb__raised raised = {value, limit};
        emb__write_record(fault_class, code, 0, 0, &r, &raised);
    }
    /* The default action of SIGABRT, not the handler: the record is written. */
    emb__die(SIGABRT);
    for (;;)
        pause();
}

/* ---- Set-up ---- */

void emb__native_fault_thread_begin(void)
{
    if (!emb__fault.installed || emb__altstack != NULL)
        return;
    void *mem = mmap(NULL, EMB__ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (mem == MAP_FAILED)
        return;
    stack_t ss = {.ss_sp = mem, .ss_size = EMB__ALTSTACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(mem, EMB__ALTSTACK_SIZE);
        return;
    }
    emb__altstack = mem;
}

void emb__native_fault_thread_end(void)
{
    if (emb__altstack == NULL)
        return;
    stack_t ss = {.ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
    munmap(emb__altstack, EMB__ALTSTACK_SIZE);
    emb__altstack = NULL;
}

static emb_status emb__map_region(const char *path, uint32_t size)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return EMB_E_IO;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return EMB_E_IO;
    }
    /* An existing region keeps its size: the record and the mini-record ring stay where
     * the previous run put them. */
    size_t bytes = st.st_size > 0 ? (size_t)st.st_size : size;
    if (bytes < 4096u || bytes > EMB__MAX_REGION || (st.st_size == 0 && ftruncate(fd, (off_t)bytes) != 0)) {
        close(fd);
        return EMB_E_INVALID;
    }
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED)
        return EMB_E_IO;
    emb__fault.region = mem;
    emb__fault.size = bytes;
    return EMB_OK;
}

emb_status emb_native_crash_init(const struct emb_native_crash_config *config)
{
    if (config == NULL || config->retained_path == NULL)
        return EMB_E_INVALID;
    if (emb__fault.installed)
        return EMB_E_STATE;
    emb_native_build_id(NULL, 0);
    emb__native_image_scan();
    emb_status s = emb__map_region(config->retained_path,
                                   config->retained_size ? config->retained_size : EMB__DEFAULT_REGION);
    if (s != EMB_OK)
        return s;
    s = emb_crash_retained_init(emb__fault.region, (uint32_t)emb__fault.size);
    if (s != EMB_OK)
        return s;
    memset(emb__fault.fw_version, 0, sizeof emb__fault.fw_version);
    if (config->fw_version != NULL)
        strncpy(emb__fault.fw_version, config->fw_version, EMB_CRASH_FW_VERSION_SIZE);
    emb__fault.flight_bytes = config->flight_bytes;
    emb__fault.owner_tid = 0;
    emb__fault.recorded = false;
    emb__fault.installed = true;
    emb__native_fault_thread_begin();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = emb__fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    /* Everything else waits: the timer's interrupt must not run inside the fault. */
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < EMB__NSIGNALS; i++)
        sigaction(emb__signals[i], &sa, &emb__fault.previous[i]);
    return EMB_OK;
}

void emb_native_crash_shutdown(void)
{
    if (!emb__fault.installed)
        return;
    for (size_t i = 0; i < EMB__NSIGNALS; i++)
        sigaction(emb__signals[i], &emb__fault.previous[i], NULL);
    emb__native_fault_thread_end();
    emb__fault.installed = false;
    munmap(emb__fault.region, emb__fault.size);
    emb__fault.region = NULL;
    emb_crash_region.record = NULL;
    emb_crash_region.mini = NULL;
}

#else /* !CONFIG_EMB_CRASH */

void emb_port_fault(uint8_t fault_class, uint8_t code, uintptr_t pc, uint32_t value,
                    uint32_t limit)
{
    (void)fault_class;
    (void)code;
    (void)pc;
    (void)value;
    (void)limit;
    abort();
}

void emb__native_fault_thread_begin(void)
{
}

void emb__native_fault_thread_end(void)
{
}

emb_status emb_native_crash_init(const struct emb_native_crash_config *config)
{
    (void)config;
    return EMB_E_STATE;
}

void emb_native_crash_shutdown(void)
{
}

#endif /* CONFIG_EMB_CRASH */
