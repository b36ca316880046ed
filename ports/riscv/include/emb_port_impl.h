/* The RISC-V port's inline half of the port contract (include/emb/port.h), for RV32 in
 * machine mode on one or more harts sharing memory (QEMU's `virt` machine).
 *
 * One context per hart: the hart's thread code and its interrupts record into the hart's
 * own rings, so a ring has producers on one hart only, and an interrupt that preempts a
 * producer mid-record is the nested producer the ring protocol is built for. The
 * recording path has no atomic read-modify-write across harts (the event recording
 * design of the seed, docs/formats/trace.md): a context-local update masks the hart's
 * interrupts (mstatus.MIE) around a plain load and store, and publication is a fence
 * before a plain store. The register tp holds the running hart's block (emb_rv_hart), so
 * finding the ring costs one load. The clock is the `time` CSR (rdtime/rdtimeh), the
 * machine timer every hart reads the same: the per-hart offset is 0. */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/config.h>

#if !defined(__riscv) || __riscv_xlen != 32
#error "the riscv port is for RV32 in machine mode"
#endif

/* The most harts the image runs on; a hart with a higher id parks at start. */
#ifndef CONFIG_EMB_RV_HARTS
#define CONFIG_EMB_RV_HARTS 4
#endif
#if CONFIG_EMB_RV_HARTS < 1 || CONFIG_EMB_RV_HARTS > 32
#error "CONFIG_EMB_RV_HARTS is 1 to 32"
#endif

/* How long a faulting hart waits for the others to stop and say where they were before
 * it writes the crash record without them (milliseconds of the time CSR). */
#ifndef CONFIG_EMB_RV_STOP_WAIT_MS
#define CONFIG_EMB_RV_STOP_WAIT_MS 100u
#endif

#define EMB_PORT_NAME "riscv32/virt-time"
#define EMB_PORT_CONTEXTS_MAX ((unsigned)CONFIG_EMB_RV_HARTS)

struct emb_trace_ring;
struct emb_log_ring;

/* What the hot paths read for the running hart, at tp. */
struct emb_rv_hart {
    struct emb_trace_ring *ring;
    struct emb_log_ring *log_ring;
    uint32_t hart_id;
    uint32_t irq_depth;
};
extern struct emb_rv_hart emb_rv_harts[CONFIG_EMB_RV_HARTS];

static inline struct emb_rv_hart *emb_rv_self(void)
{
    struct emb_rv_hart *h;
    __asm__("mv %0, tp" : "=r"(h));
    return h;
}

/* The running hart's index into the per-CPU monitor and statistics blocks
 * (CONFIG_EMB_CPUS, emb/monitor.h): its id, as the start-up code set tp. */
#if CONFIG_EMB_CPUS > 1 && CONFIG_EMB_CPUS < CONFIG_EMB_RV_HARTS
#error "CONFIG_EMB_CPUS (per-CPU monitor blocks) is at least CONFIG_EMB_RV_HARTS"
#endif
static inline uint32_t emb_port_cpu_index(void)
{
    return emb_rv_self()->hart_id;
}

/* ---- The clock: the time CSR, 64 bits read as two halves ---- */

#define EMB_PORT_TIMESTAMP_SPLIT 1
static inline uint32_t emb_port_timestamp_split(uint32_t *high)
{
    uint32_t hi, lo, again;
    do {
        __asm__ __volatile__("rdtimeh %0" : "=r"(hi));
        __asm__ __volatile__("rdtime %0" : "=r"(lo));
        __asm__ __volatile__("rdtimeh %0" : "=r"(again));
    } while (hi != again);
    *high = hi;
    return lo;
}

static inline uint64_t emb_port_timestamp(void)
{
    uint32_t high;
    uint32_t low = emb_port_timestamp_split(&high);
    return ((uint64_t)high << 32) | low;
}

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_rv_self()->ring;
}

static inline struct emb_log_ring *emb_port_log_ring(void)
{
    return emb_rv_self()->log_ring;
}

/* ---- Critical sections: this hart's interrupts (mstatus.MIE, bit 3) ---- */

typedef uint32_t emb_port_irq_state;

static inline emb_port_irq_state emb_port_irq_save(void)
{
    uint32_t old;
    __asm__ __volatile__("csrrci %0, mstatus, 8" : "=r"(old)::"memory");
    return old & 8u;
}

static inline void emb_port_irq_restore(emb_port_irq_state state)
{
    __asm__ __volatile__("csrs mstatus, %0" ::"r"(state) : "memory");
}

/* ---- Context-local atomics: a load and a store with the hart's interrupts masked ---- */

static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    emb_port_irq_state s = emb_port_irq_save();
    bool ok = *(volatile uint32_t *)p == expected;
    if (ok)
        *(volatile uint32_t *)p = desired;
    emb_port_irq_restore(s);
    return ok;
}

/* The fence orders every earlier store of this hart before the new value, for a consumer
 * on another hart or a debugger (RVWMO: fence rw,w). */
static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
    emb_port_irq_state s = emb_port_irq_save();
    *(volatile uint32_t *)p += v;
    emb_port_irq_restore(s);
}

/* The reservation section (emb/port.h, EMB_PORT_LOCAL_RESERVE): interrupts masked from
 * begin to end, so nothing on this hart preempts it and no other hart writes the ring. */
#define EMB_PORT_LOCAL_RESERVE 1
typedef struct {
    uint32_t mie; /* mstatus.MIE as it was */
} emb_port_reserve_state;

static inline uint32_t emb_port_local_reserve_begin(uint32_t *p, emb_port_reserve_state *state)
{
    state->mie = emb_port_irq_save();
    return *(volatile uint32_t *)p;
}

static inline bool emb_port_local_reserve_end(uint32_t *p, uint32_t v, emb_port_reserve_state state)
{
    *(volatile uint32_t *)p = v;
    emb_port_irq_restore(state.mie);
    return true;
}

static inline void emb_port_local_reserve_abort(emb_port_reserve_state state)
{
    emb_port_irq_restore(state.mie);
}

/* Inside the section: the low word, and whether the high word is still `high`. */
static inline bool emb_port_timestamp_low_in(emb_port_reserve_state state, uint32_t high,
                                             uint32_t *low)
{
    (void)state;
    uint32_t hi;
    __asm__ __volatile__("rdtime %0" : "=r"(*low));
    __asm__ __volatile__("rdtimeh %0" : "=r"(hi));
    return hi == high;
}

static inline uint32_t emb_port_load32_acquire(const uint32_t *p)
{
    uint32_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return v;
}

static inline void emb_port_store32_release(uint32_t *p, uint32_t v)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

#endif /* EMB_PORT_IMPL_H */
