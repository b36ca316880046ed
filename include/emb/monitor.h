/* Monitors and statistics (SPEC-015 §6).
 *
 * A monitor keeps the worst interval of one kind seen so far, in trace clock cycles, with
 * the program counter of the code that opened it and the number of intervals longer than
 * a threshold. Categories: the interrupt lock (emb_irq_lock() to emb_irq_unlock()), the
 * scheduler lock, each interrupt vector (emb_isr_enter() to emb_isr_exit()), a thread's
 * run (switch in to switch out) and a work handler. The closing point costs one compare
 * (against the lower of the worst case and the threshold); a new worst case costs two
 * stores, and a crossed threshold runs its action there and then: a trace event
 * (irq_lock_max), a callback, or a crash record.
 *
 * Statistics are the counts a port can observe: per CPU (interrupts, time in handlers,
 * idle time), per thread (run time, switches, blocked time, stack high-water), per object
 * (contention, longest queue). Tools read both through the debug descriptor.
 *
 * CONFIG_EMB_MONITOR=0 and CONFIG_EMB_STATS=0 compile them out: the calls remain and
 * return EMB_E_STATE, the closing points disappear.
 */
#ifndef EMB_MONITOR_H
#define EMB_MONITOR_H

#include <stdint.h>

#include <emb/config.h>
#include <emb/status.h>
#if CONFIG_EMB_CPUS > 1
#include <emb/port.h> /* emb_port_cpu_index(), emb_port_irq_save() */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Monitor categories. ISR(vector) has one monitor per vector below
 * CONFIG_EMB_MONITOR_ISR_VECTORS. */
enum emb_monitor_category {
    EMB_MONITOR_IRQ_LOCK = 0,
    EMB_MONITOR_SCHED_LOCK = 1,
    EMB_MONITOR_THREAD_RUN = 2,
    EMB_MONITOR_WORK_HANDLER = 3,
    EMB_MONITOR_ISR_FIRST = 4,
};
#define EMB_MONITOR_ISR(vector) ((uint8_t)(EMB_MONITOR_ISR_FIRST + (vector)))
#define EMB_MONITOR_COUNT (EMB_MONITOR_ISR_FIRST + CONFIG_EMB_MONITOR_ISR_VECTORS)

/* Threshold actions, combinable. */
enum emb_monitor_action {
    EMB_MONITOR_ACTION_NONE = 0,
    EMB_MONITOR_TRACE = 1,  /* record irq_lock_max(cycles, pc) */
    EMB_MONITOR_NOTIFY = 2, /* call the function given to emb_monitor_set_notify() */
    EMB_MONITOR_FAULT = 4,  /* write a crash record (class monitor, code = category) and stop */
};

typedef struct emb_monitor {
    uint32_t worst_cycles; /* longest interval seen, in trace clock cycles */
    uint32_t threshold;    /* cycles; 0: none */
    uint32_t over_count;   /* intervals longer than the threshold */
    uint8_t action;        /* enum emb_monitor_action bits */
    uintptr_t opener_pc;   /* the code that opened the longest interval */
} emb_monitor_t;

/* Reads a monitor. EMB_E_INVALID for an unknown category, EMB_E_STATE when compiled out. */
emb_status emb_monitor_get(uint8_t category, emb_monitor_t *out);

/* Sets a threshold in cycles (0 removes it) and its action bits. */
emb_status emb_monitor_set_threshold(uint8_t category, uint32_t cycles, uint8_t action);

/* The NOTIFY action's callback: runs at the closing point (interrupts may be masked). */
typedef void (*emb_monitor_notify_fn)(void *arg, uint8_t category, uint32_t cycles, uintptr_t pc);
void emb_monitor_set_notify(emb_monitor_notify_fn fn, void *arg);

/* ---- Statistics ---- */

typedef uint16_t emb_thread_t; /* a context (thread) index */
typedef uint32_t emb_handle_t; /* an object handle as the trace names it */

typedef struct emb_stats_cpu {
    uint64_t uptime_cycles;        /* since the statistics were last reset */
    uint64_t isr_cycles;           /* in interrupt (signal) handlers */
    uint64_t idle_cycles;          /* between emb_idle_enter() and emb_idle_exit() */
    uint32_t utilization_permille; /* (uptime - idle) / uptime; needs the idle hooks */
    uint32_t irq_count;            /* interrupts entered */
    uint32_t max_critical_cycles;  /* the interrupt-lock monitor's worst case */
} emb_stats_cpu_t;

typedef struct emb_stats_thread {
    uint64_t run_cycles;           /* CPU time: switched in to switched out */
    uint64_t blocked_cycles;       /* waiting on a lock, sleeping, joining */
    uint32_t switches;             /* times switched out */
    uint32_t stack_high_water;     /* bytes of stack ever used; 0 when unknown */
    uint32_t deadline_misses;
    uint32_t budget_overruns;
    uint32_t max_boost;            /* largest priority boost received */
    uint32_t contentions;          /* times it found a lock held */
} emb_stats_thread_t;

typedef struct emb_stats_object {
    uint64_t wait_cycles;          /* total time threads waited for it */
    uint32_t acquisitions;         /* locks taken, items submitted */
    uint32_t contentions;          /* times a thread found it held */
    uint32_t max_wait_cycles;      /* longest single wait */
    uint32_t max_queue;            /* longest queue seen (waiters, queued items) */
} emb_stats_object_t;

/* CPU statistics: cpu 0 to CONFIG_EMB_CPUS - 1 (cpu 0 on a single-ring port and on the
 * native port). */
emb_status emb_stats_cpu_get(uint8_t cpu, emb_stats_cpu_t *out);
/* Thread and object statistics: implemented by the port, which observes them. */
emb_status emb_stats_thread_get(emb_thread_t thread, emb_stats_thread_t *out);
emb_status emb_stats_object_get(emb_handle_t handle, emb_stats_object_t *out);
/* Zeroes every statistic and every monitor's worst case and count (not thresholds). */
void emb_stats_reset(void);

/* ---- The closing point, for ports and kernels ---- */

/* A monitor's state. `limit` is the lower of the worst case and the threshold, so the
 * closing point needs one compare to know whether anything is to be done. */
struct emb_monitor_block {
    uint32_t limit;
    uint32_t worst;
    uintptr_t pc;
    uint32_t threshold; /* 0: none */
    uint32_t over;
    uint32_t action;
};

/* The intervals a context has open, for the hooks: the port gives each context one
 * (emb_port_monitor_ctx()). */
#define EMB_MONITOR_ISR_NEST 8u
struct emb_monitor_ctx {
    uint64_t irq_t0;
    uint64_t sched_t0;
    uintptr_t irq_pc;
    uintptr_t sched_pc;
    uint32_t irq_depth;
    uint32_t sched_depth;
    uint32_t isr_depth;
    uint64_t isr_t0[EMB_MONITOR_ISR_NEST];
    uintptr_t isr_pc[EMB_MONITOR_ISR_NEST];
};

/* CPU counters the hooks keep (64-bit values as low, high words: 32-bit targets have no
 * 64-bit atomics). */
struct emb_stats_cpu_block {
    uint32_t reset_ts[2];
    uint32_t isr_cycles[2];
    uint32_t idle_cycles[2];
    uint32_t idle_t0[2];       /* when the CPU went idle, while idle_depth > 0 */
    uint32_t irq_count;
    uint32_t idle_depth;
};

/* The running CPU's blocks (CONFIG_EMB_CPUS): CPU c's monitors are
 * emb_monitor_blocks[c * EMB_MONITOR_COUNT ...], its statistics emb_stats_cpu[c]. */
#if CONFIG_EMB_CPUS > 1
#define EMB_CPU_INDEX() ((uint32_t)emb_port_cpu_index())
#else
#define EMB_CPU_INDEX() 0u
#endif

#if CONFIG_EMB_MONITOR
extern struct emb_monitor_block emb_monitor_blocks[CONFIG_EMB_CPUS * EMB_MONITOR_COUNT];
#define EMB_MONITOR_BLOCK(category) (&emb_monitor_blocks[EMB_CPU_INDEX() * EMB_MONITOR_COUNT + (category)])

/* Slow path of the closing point: a new worst case, a crossed threshold, or both. */
void emb_monitor_exceeded(uint8_t category, uint32_t cycles, uintptr_t pc);
#endif

#if CONFIG_EMB_STATS
extern struct emb_stats_cpu_block emb_stats_cpu[CONFIG_EMB_CPUS];
#define EMB_STATS_CPU() (&emb_stats_cpu[EMB_CPU_INDEX()])
#endif

/* Adds to a word of the running CPU's blocks and returns what it held. One CPU: an atomic
 * add (contexts on other threads share the block). Per-CPU blocks: only this CPU writes
 * them, so its interrupts masked around a plain load and store suffice. */
static inline uint32_t emb_cpu_add32(uint32_t *p, uint32_t v)
{
#if CONFIG_EMB_CPUS > 1
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t old = *(volatile uint32_t *)p;
    *(volatile uint32_t *)p = old + v;
    emb_port_irq_restore(s);
    return old;
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* Stores a word of the running CPU's blocks for a reader elsewhere: a plain store with
 * per-CPU blocks (some compilers make an atomic store an AMO swap), else atomic. */
static inline void emb_cpu_store32(uint32_t *p, uint32_t v)
{
#if CONFIG_EMB_CPUS > 1
    *(volatile uint32_t *)p = v;
#else
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/* Records an interval of `cycles` that `pc` opened. */
static inline void emb_monitor_close(uint8_t category, uint32_t cycles, uintptr_t pc)
{
#if CONFIG_EMB_MONITOR
    if (category < EMB_MONITOR_COUNT &&
        EMB_UNLIKELY(cycles > __atomic_load_n(&EMB_MONITOR_BLOCK(category)->limit,
                                              __ATOMIC_RELAXED)))
        emb_monitor_exceeded(category, cycles, pc);
#else
    (void)category;
    (void)cycles;
    (void)pc;
#endif
}

/* Cycles between two timestamps, saturated to 32 bits. */
static inline uint32_t emb_monitor_cycles(uint64_t from, uint64_t to)
{
    uint64_t d = to - from;
    return d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
}

/* Adds to a 64-bit counter of the running CPU's blocks kept as two 32-bit words (a
 * reader may see a carry late). */
static inline void emb_stats_add64(uint32_t pair[2], uint64_t v)
{
    uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    uint32_t old = emb_cpu_add32(&pair[0], lo);
    if ((uint32_t)(old + lo) < old)
        hi++;
    if (hi != 0u)
        (void)emb_cpu_add32(&pair[1], hi);
}

static inline uint64_t emb_stats_get64(const uint32_t pair[2])
{
    return ((uint64_t)__atomic_load_n(&pair[1], __ATOMIC_RELAXED) << 32) |
           __atomic_load_n(&pair[0], __ATOMIC_RELAXED);
}

#ifdef __cplusplus
}
#endif

#endif /* EMB_MONITOR_H */
