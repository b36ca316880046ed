/* The Cortex-M port's inline half of the port contract (include/emb/port.h).
 *
 * One CPU, one context: every thread and interrupt records into the same ring, and an
 * interrupt that preempts a producer mid-record is the nested producer the ring protocol
 * is built for (docs/formats/trace.md, "On Cortex-M"). Context-local atomics are
 * LDREX/STREX on ARMv7-M and ARMv8-M Mainline (taking an exception clears the exclusive
 * monitor, so a preempted store-exclusive fails and retries) and interrupt masking on
 * ARMv6-M, which has no exclusives. The clock is the DWT cycle counter where the core has
 * one, else SysTick, chosen at start (emb_cm_start()). Build options below; the porting
 * guide is docs/porting.md.
 */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/config.h>

#if !defined(__ARM_ARCH_6M__) && !defined(__ARM_ARCH_7M__) && !defined(__ARM_ARCH_7EM__) && \
    !defined(__ARM_ARCH_8M_MAIN__) && !defined(__ARM_ARCH_8M_BASE__)
#error "the cortex-m port is for ARMv6-M, ARMv7-M, ARMv7E-M and ARMv8-M"
#endif

/* Context-local atomics by masking interrupts (PRIMASK) instead of LDREX/STREX. Forced
 * on ARMv6-M (Cortex-M0, M0+, M1); on other cores a measurement aid. Cost on ARMv7-M:
 * about the same instruction count, but interrupts wait a few cycles at each ring update. */
#ifndef CONFIG_EMB_CM_ATOMICS_IRQ
#if defined(__ARM_ARCH_6M__)
#define CONFIG_EMB_CM_ATOMICS_IRQ 1
#else
#define CONFIG_EMB_CM_ATOMICS_IRQ 0
#endif
#endif

/* Critical sections (emb_port_irq_save(), emb_irq_lock()): 0 masks every interrupt with
 * PRIMASK; a nonzero value raises BASEPRI to it instead, so interrupts of a higher
 * priority (numerically lower, e.g. a motor control loop) keep running. Such interrupts
 * may still record: the ring reservation takes no lock. ARMv7-M and ARMv8-M Mainline. */
#ifndef CONFIG_EMB_CM_BASEPRI
#define CONFIG_EMB_CM_BASEPRI 0
#endif

/* The trace clock: 0 chosen at start (DWT CYCCNT when it counts, else SysTick), 1 DWT
 * only, 2 SysTick only. A fixed choice saves a compare and a branch per event; 1 also
 * leaves out the SysTick code and handler (about 200 bytes at -Os). */
#ifndef CONFIG_EMB_CM_CLOCK
#define CONFIG_EMB_CM_CLOCK 0
#endif

/* 1: rings may be consumed by another CPU (a dual-core part): publications get a DMB.
 * 0: one CPU; every observer (an interrupt, a debugger that halts the core) sees this
 * core's stores in program order, so a compiler barrier is enough. */
#ifndef CONFIG_EMB_CM_SMP
#define CONFIG_EMB_CM_SMP 0
#endif

/* The port defines SysTick_Handler (calling emb_cm_systick_isr()) for the SysTick clock.
 * 0: the application has its own handler and calls emb_cm_systick_isr() from it. The
 * default is 0 when the clock is DWT only (CONFIG_EMB_CM_CLOCK 1): SysTick is no clock
 * there. */
#ifndef CONFIG_EMB_CM_SYSTICK_HANDLER
#define CONFIG_EMB_CM_SYSTICK_HANDLER (CONFIG_EMB_CM_CLOCK != 1)
#endif

/* The port defines the CMSIS fault handler names (HardFault_Handler, MemManage_Handler,
 * BusFault_Handler, UsageFault_Handler) as emb_cm_fault_entry. 0: the vector table names
 * emb_cm_fault_entry itself, or the application handles faults and calls nothing here. */
#ifndef CONFIG_EMB_CM_CMSIS_HANDLERS
#define CONFIG_EMB_CM_CMSIS_HANDLERS 1
#endif

/* 0: emb_cm_start() leaves the stack unpainted whatever emb_cm_config.paint_stack says,
 * and its painting code is left out (no stack high-water mark for the host). */
#ifndef CONFIG_EMB_CM_STACK_PAINT
#define CONFIG_EMB_CM_STACK_PAINT 1
#endif

/* Stack words above the faulting sp the fault handler copies into the crash record (status
 * words 8 on), for the host to unwind the call chain; only within the registered main
 * stack (emb_cm_config.stack_low, stack_size). 0: none. At most 240. */
#ifndef CONFIG_EMB_CM_FAULT_STACK_WORDS
#define CONFIG_EMB_CM_FAULT_STACK_WORDS 64
#endif

/* 1: the fault handler's crash record carries the flight recorder, the last trace packets
 * behind a trace stream header (docs/formats/crash.md). 0: the record alone (the fault
 * event stays the trace's last event in the ring); leaves out the collector and the
 * stream header's encoder, about 900 bytes at -Os. */
#ifndef CONFIG_EMB_CM_CRASH_FLIGHT
#define CONFIG_EMB_CM_CRASH_FLIGHT 1
#endif

#if CONFIG_EMB_CM_ATOMICS_IRQ == 0 && defined(__ARM_ARCH_6M__)
#error "ARMv6-M has no LDREX/STREX: CONFIG_EMB_CM_ATOMICS_IRQ must be 1"
#endif
#if CONFIG_EMB_CM_BASEPRI != 0 && (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__))
#error "CONFIG_EMB_CM_BASEPRI needs BASEPRI (ARMv7-M or ARMv8-M Mainline)"
#endif
#if CONFIG_EMB_CM_FAULT_STACK_WORDS < 0 || CONFIG_EMB_CM_FAULT_STACK_WORDS > 240
#error "CONFIG_EMB_CM_FAULT_STACK_WORDS is 0 to 240 (the record holds at most 255 status words)"
#endif
#if CONFIG_EMB_CM_BASEPRI < 0 || CONFIG_EMB_CM_BASEPRI > 255
#error "CONFIG_EMB_CM_BASEPRI is a priority byte, 1 to 255 (0: PRIMASK)"
#endif

/* "cortex-m3/dwt", "cortex-m4/systick": the core and the clock the trace declares, set
 * by emb_cm_start() (a RAM array, so the descriptor and the stream headers say it). In an
 * image without the descriptor, the log and the crash record, emb_cm_link_identity() sets
 * it instead, and it reads "cortex-m" until then. CONFIG_EMB_CM_PORT_NAME, a string
 * literal of at most 27 characters such as "cortex-m3/dwt", fixes it at build time for an
 * image whose core and clock are known (CONFIG_EMB_CM_CLOCK 1 or 2): the CPUID decoding
 * is left out (about 100 bytes at -Os). */
extern char emb_cm_port_name[28];
#define EMB_PORT_NAME ((const char *)emb_cm_port_name)

struct emb_trace_ring;
struct emb_log_ring;

/* One context, the CPU (emb/port.h). */
#define EMB_PORT_CONTEXTS_MAX 1u

/* ---- The clock ---- */

enum emb_cm_clock_kind {
    EMB_CM_CLOCK_NONE = 0,    /* not started: reads 0 */
    EMB_CM_CLOCK_DWT = 1,     /* DWT CYCCNT at the core clock */
    EMB_CM_CLOCK_SYSTICK = 2, /* SysTick at the core clock, wraps counted by its interrupt */
};

/* What the hot paths read, in one object so that a call site needs one address for all
 * of it: the CPU's rings, the clock chosen (enum emb_cm_clock_kind) and the state its
 * 64-bit extension keeps. DWT: bits 62..31 of the last time read, or EMB_CM_DWT_OFF
 * while DWT is not the clock (a value the count reaches after 2^63 cycles), so that the
 * fast path tells the clocks apart by the word it loads anyway; SysTick: the wraps
 * counted by emb_cm_systick_isr(). */
#define EMB_CM_DWT_OFF 0xFFFFFFFFu
struct emb_cm_core {
    struct emb_trace_ring *ring;
    uint32_t dwt_state; /* beside both rings: one LDRD loads a ring and the state */
    struct emb_log_ring *log_ring;
    uint32_t clock_kind;
    uint32_t systick_wraps;
};
extern struct emb_cm_core emb_cm;

#define EMB_CM_DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
/* SysTick and ICSR through one base (the system control space), so a read of the clock
 * needs one address constant. */
#define EMB__CM_SCS ((volatile uint32_t *)0xE000E000u)
#define EMB_CM_SYST_CVR (EMB__CM_SCS[0x018u / 4u])
#define EMB_CM_SCB_ICSR (EMB__CM_SCS[0xD04u / 4u])
#define EMB_CM_ICSR_PENDSTSET (1u << 26)

static inline bool emb__cm_cas(uint32_t *p, uint32_t expected, uint32_t desired);

/* DWT: CYCCNT is the low word. The high word comes from the half of the 32-bit range the
 * last reading was in: when the counter's top bit differs from the state's low bit, the
 * counter has entered the next half, and the state moves on by one (a compare-and-swap,
 * so a preempting reader that moved it first is seen). No lock, and a store only twice
 * per 2^32 cycles. Holds while something reads the clock at least once per 2^31 cycles
 * (5.3 s at 400 MHz): a tick or idle hook calling emb_cm_clock_poll() guarantees it. */
static inline uint32_t emb__cm_dwt_split(uint32_t *high)
{
    for (;;) {
        uint32_t s = __atomic_load_n(&emb_cm.dwt_state, __ATOMIC_RELAXED);
        uint32_t low = EMB_CM_DWT_CYCCNT;
        if (__builtin_expect(((s ^ (low >> 31)) & 1u) == 0u, 1)) {
            *high = s >> 1;
            return low;
        }
        if (emb__cm_cas(&emb_cm.dwt_state, s, s + 1u)) {
            *high = (s + 1u) >> 1;
            return low;
        }
    }
}

/* SysTick counts down from 0xFFFFFF at the core clock; its interrupt counts wraps. A wrap
 * the interrupt has not counted yet (it is masked, or preempted by us) is pending in
 * ICSR: then the counter is read again, after the wrap, and the wrap counted here. The
 * period starts when the counter reaches 0, which is when the wrap pends. The loop
 * retries when the interrupt ran in between. */
static inline uint32_t emb__cm_systick_split(uint32_t *high)
{
    volatile uint32_t *scs = EMB__CM_SCS;
    uint32_t w, v, pend;
    do {
        w = __atomic_load_n(&emb_cm.systick_wraps, __ATOMIC_RELAXED);
        v = scs[0x018u / 4u];
        pend = scs[0xD04u / 4u] & EMB_CM_ICSR_PENDSTSET;
        if (pend != 0u)
            v = scs[0x018u / 4u];
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } while (w != __atomic_load_n(&emb_cm.systick_wraps, __ATOMIC_RELAXED));
    w += pend >> 26;
    *high = w >> 8;
    return (w << 24) | ((0x1000000u - v) & 0xFFFFFFu);
}

/* The clock out of line (cortex_m.c): what an -Os build calls instead of inlining its
 * copy of the reads at every call site. */
uint32_t emb_cm_clock_split(uint32_t *high);

/* The clock split in halves for the trace fast path (emb/trace.h). */
#define EMB_PORT_TIMESTAMP_SPLIT 1
static inline uint32_t emb_port_timestamp_split(uint32_t *high)
{
#if defined(__OPTIMIZE_SIZE__) && !defined(EMB_CM_CLOCK_INLINE)
    return emb_cm_clock_split(high);
#elif CONFIG_EMB_CM_CLOCK == 1
    return emb__cm_dwt_split(high);
#elif CONFIG_EMB_CM_CLOCK == 2
    return emb__cm_systick_split(high);
#else
    if (__builtin_expect(emb_cm.clock_kind == EMB_CM_CLOCK_DWT, 1))
        return emb__cm_dwt_split(high);
    return emb__cm_systick_split(high);
#endif
}

static inline uint64_t emb_port_timestamp(void)
{
    uint32_t high;
    uint32_t low = emb_port_timestamp_split(&high);
    return ((uint64_t)high << 32) | low;
}

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_cm.ring;
}

static inline struct emb_log_ring *emb_port_log_ring(void)
{
    return emb_cm.log_ring;
}

/* ---- Critical sections ---- */

typedef uint32_t emb_port_irq_state;

static inline uint32_t emb__cm_primask_save(void)
{
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
    return primask;
}

static inline void emb__cm_primask_restore(uint32_t primask)
{
    __asm__ __volatile__("msr primask, %0" ::"r"(primask) : "memory");
}

static inline emb_port_irq_state emb_port_irq_save(void)
{
#if CONFIG_EMB_CM_BASEPRI != 0
    uint32_t old;
    __asm__ __volatile__("mrs %0, basepri" : "=r"(old));
    /* basepri_max only ever raises the mask: nesting keeps the outermost level. */
    __asm__ __volatile__("msr basepri_max, %0" ::"r"((uint32_t)CONFIG_EMB_CM_BASEPRI) : "memory");
    return old;
#else
    return emb__cm_primask_save();
#endif
}

static inline void emb_port_irq_restore(emb_port_irq_state state)
{
#if CONFIG_EMB_CM_BASEPRI != 0
    __asm__ __volatile__("msr basepri, %0" ::"r"(state) : "memory");
#else
    emb__cm_primask_restore(state);
#endif
}

/* ---- Context-local atomics ---- */

#if CONFIG_EMB_CM_SMP
#define EMB__CM_RELEASE() __atomic_thread_fence(__ATOMIC_RELEASE)
#define EMB__CM_ACQUIRE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#else
#define EMB__CM_RELEASE() __atomic_signal_fence(__ATOMIC_RELEASE)
#define EMB__CM_ACQUIRE() __atomic_signal_fence(__ATOMIC_ACQUIRE)
#endif

static inline bool emb__cm_cas(uint32_t *p, uint32_t expected, uint32_t desired)
{
#if CONFIG_EMB_CM_ATOMICS_IRQ
    /* Always PRIMASK: a BASEPRI section would let a higher-priority producer in. */
    uint32_t s = emb__cm_primask_save();
    bool ok = *(volatile uint32_t *)p == expected;
    if (ok)
        *(volatile uint32_t *)p = desired;
    emb__cm_primask_restore(s);
    return ok;
#else
    /* Weak: one LDREX/STREX attempt; every caller loops on failure anyway. */
    return __atomic_compare_exchange_n(p, &expected, desired, true, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
#endif
}

static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    return emb__cm_cas(p, expected, desired);
}

static inline void emb__cm_add32_release(uint32_t *p, uint32_t v)
{
    EMB__CM_RELEASE();
#if CONFIG_EMB_CM_ATOMICS_IRQ
    uint32_t s = emb__cm_primask_save();
    *(volatile uint32_t *)p += v;
    emb__cm_primask_restore(s);
#else
    /* One LDREX/STREX attempt inline, the loop out of the way: a failure (an exception
     * in between) is rare, and a forward branch to it is one CBNZ. */
    uint32_t x, failed;
    __asm__ __volatile__("ldrex %0, %2\n\tadd %0, %0, %3\n\tstrex %1, %0, %2"
                         : "=&r"(x), "=&l"(failed), "+Q"(*p)
                         : "rI"(v));
    if (__builtin_expect(failed != 0u, 0))
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* The reservation section of the fast paths (emb/port.h, EMB_PORT_LOCAL_RESERVE).
 * LDREX/STREX: the exclusive load is the producer's load of write_pos itself, and the
 * store-exclusive fails if anything preempted it since (taking or returning from an
 * exception clears the local monitor), so no compare is needed; between the two there
 * are only loads, which leave the monitor alone. Interrupt masking (ARMv6-M): PRIMASK
 * from begin to end, never BASEPRI, which would let a higher-priority producer in. */
#define EMB_PORT_LOCAL_RESERVE 1
typedef struct {
    uint32_t primask; /* interrupt masking: PRIMASK as it was */
    uint32_t clock;   /* DWT: the clock state, read before the section (see below) */
} emb_port_reserve_state;

static inline uint32_t emb_port_local_reserve_begin(uint32_t *p, emb_port_reserve_state *state)
{
    uint32_t v;
    /* DWT: the state may be read before write_pos: a state made stale by a producer that
     * preempts here is behind by one and fails the check below (its low bit no longer
     * matches the counter's top bit), never passes it wrongly. Read here, it shares an
     * LDRD with the ring pointer. SysTick's state is read inside the section. */
    state->clock = emb_cm.dwt_state;
#if CONFIG_EMB_CM_ATOMICS_IRQ
    state->primask = emb__cm_primask_save();
    v = *(volatile uint32_t *)p;
#else
    state->primask = 0u;
    /* The clobber keeps every later load of the ring after this one. */
    __asm__ __volatile__("ldrex %0, %1" : "=r"(v) : "Q"(*p) : "memory");
#endif
    return v;
}

static inline bool emb_port_local_reserve_end(uint32_t *p, uint32_t v, emb_port_reserve_state state)
{
#if CONFIG_EMB_CM_ATOMICS_IRQ
    *(volatile uint32_t *)p = v;
    emb__cm_primask_restore(state.primask);
    return true;
#else
    (void)state;
    uint32_t failed;
    /* A low register for the result, so that the test is one CBNZ. */
    __asm__ __volatile__("strex %0, %2, %1" : "=&l"(failed), "=Q"(*p) : "r"(v) : "memory");
    return failed == 0u;
#endif
}

static inline void emb_port_local_reserve_abort(emb_port_reserve_state state)
{
#if CONFIG_EMB_CM_ATOMICS_IRQ
    emb__cm_primask_restore(state.primask);
#else
    (void)state;
    __asm__ __volatile__("clrex" ::: "memory");
#endif
}

/* The clock's low word inside a reservation section, and whether its high word is
 * `high`. The section makes the reads consistent (a SysTick interrupt in between fails
 * its end), so what is left is to see whether the extension is current:
 * DWT: the state's low bit must match the counter's top bit (else the counter entered
 * the next half and the slow path moves the state on), and its other bits are `high`:
 * state - (counter >> 31) == high << 1, one subtract and one compare.
 * SysTick: a wrap pending in ICSR is left to the slow path. */
static inline bool emb__cm_dwt_low_in(uint32_t s, uint32_t high, uint32_t *low)
{
    uint32_t l = EMB_CM_DWT_CYCCNT;
    *low = l;
    return s - (l >> 31) == high << 1;
}

static inline bool emb__cm_systick_low_in(uint32_t high, uint32_t *low)
{
    volatile uint32_t *scs = EMB__CM_SCS;
    uint32_t w = __atomic_load_n(&emb_cm.systick_wraps, __ATOMIC_RELAXED);
    uint32_t v = scs[0x018u / 4u];
    uint32_t pend = scs[0xD04u / 4u] & EMB_CM_ICSR_PENDSTSET;
    *low = (w << 24) | ((0x1000000u - v) & 0xFFFFFFu);
    return pend == 0u && w >> 8 == high;
}

static inline bool emb_port_timestamp_low_in(emb_port_reserve_state state, uint32_t high,
                                             uint32_t *low)
{
#if CONFIG_EMB_CM_CLOCK == 1
    return emb__cm_dwt_low_in(state.clock, high, low);
#elif CONFIG_EMB_CM_CLOCK == 2 || defined(__ARM_ARCH_6M__)
    (void)state;
    return emb__cm_systick_low_in(high, low);
#else
    /* Chosen at start: the DWT state already loaded says which, one compare. */
    if (__builtin_expect(state.clock != EMB_CM_DWT_OFF, 1))
        return emb__cm_dwt_low_in(state.clock, high, low);
    return emb__cm_systick_low_in(high, low);
#endif
}

/* The add out of line (cortex_m.c): the one copy a build that optimises for size calls. */
void emb_cm_add32_release(uint32_t *p, uint32_t v);

static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
#if defined(__OPTIMIZE_SIZE__)
    emb_cm_add32_release(p, v);
#else
    emb__cm_add32_release(p, v);
#endif
}

static inline uint32_t emb_port_load32_acquire(const uint32_t *p)
{
    uint32_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
    EMB__CM_ACQUIRE();
    return v;
}

static inline void emb_port_store32_release(uint32_t *p, uint32_t v)
{
    EMB__CM_RELEASE();
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

#endif /* EMB_PORT_IMPL_H */
