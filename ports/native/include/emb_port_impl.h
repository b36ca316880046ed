/* The native port's inline half of the port contract (include/emb/port.h).
 *
 * Contexts are threads; a signal handler is a producer that preempts its thread, like an
 * interrupt on a microcontroller. The clock is the CPU's counter (TSC on x86-64, the
 * virtual counter on AArch64), calibrated against CLOCK_MONOTONIC at start-up.
 */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__)
#define EMB_PORT_NAME "native-x86_64"
#elif defined(__aarch64__)
#define EMB_PORT_NAME "native-aarch64"
#else
#define EMB_PORT_NAME "native"
#endif

struct emb_trace_ring;
struct emb_log_ring;

/* The calling thread's ring; starts as the placeholder (see emb_port_trace_ring()).
 * Local-exec: one %fs-relative load, because the library is linked into the executable
 * (the native port is a static library, not for shared objects). */
#if defined(__cplusplus)
extern "C" thread_local struct emb_trace_ring *emb_native_ring
#else
extern _Thread_local struct emb_trace_ring *emb_native_ring
#endif
#if defined(__GNUC__)
    __attribute__((tls_model("local-exec")))
#endif
    ;
/* The calling thread's log ring, likewise (ports/native/native_log.c). */
#if defined(__cplusplus)
extern "C" thread_local struct emb_log_ring *emb_native_log_ring
#else
extern _Thread_local struct emb_log_ring *emb_native_log_ring
#endif
#if defined(__GNUC__)
    __attribute__((tls_model("local-exec")))
#endif
    ;

#if !defined(__x86_64__) && !defined(__aarch64__)
uint64_t emb_native_clock_ns(void);
#endif

static inline uint64_t emb_port_timestamp(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return emb_native_clock_ns();
#endif
}

#if defined(__x86_64__)
/* rdtsc returns the clock in two halves: the fast path needs exactly those. */
#define EMB_PORT_TIMESTAMP_SPLIT 1
static inline uint32_t emb_port_timestamp_split(uint32_t *high)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    *high = hi;
    return lo;
}
#endif

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_native_ring;
}

static inline struct emb_log_ring *emb_port_log_ring(void)
{
    return emb_native_log_ring;
}

/* ThreadSanitizer cannot see inside inline assembly, so its builds use the C11-model
 * builtins; the protocol is the same, only the atomicity is stronger than needed. */
#if defined(__SANITIZE_THREAD__)
#define EMB_NATIVE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EMB_NATIVE_TSAN 1
#endif
#endif

#if defined(__x86_64__)
/* The add is one instruction (a locked one under ThreadSanitizer, the same protocol): cheap
 * enough for the trace fast path to count each event in its packet
 * (emb/internal/trace_reserve.h, EMB_TRACE_COUNT_IN_TAIL). Defined for every translation
 * unit alike, since the library's slow path reads what the call sites count. */
#define EMB_PORT_LOCAL_ADD_ONE_INSN 1
#endif

#if defined(__x86_64__) && !defined(EMB_NATIVE_TSAN)

/* One unlocked cmpxchg: indivisible against a signal handler on this thread, which is
 * all a per-thread ring needs, at the cost of a plain store (the lock prefix doubles the
 * cost of an event; docs/benchmarks.md). */
static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    bool swapped;
    __asm__ __volatile__("cmpxchgl %3, %1"
                         : "=@ccz"(swapped), "+m"(*p), "+a"(expected)
                         : "r"(desired)
                         : "memory");
    return swapped;
}

/* end >= *p, *p read once by the compare itself (an aligned load is atomic on x86): the
 * trace fast path's packet-end check, whose word a window's close stores from another
 * thread, in the one instruction a plain load would take (emb/internal/trace_reserve.h). */
#define EMB_PORT_COMPARE_AT_LEAST 1
static inline bool emb_port_compare_at_least(uint32_t end, const uint32_t *p)
{
    bool at_least;
    __asm__("cmpl %2, %1" : "=@ccae"(at_least) : "r"(end), "o"(*p));
    return at_least;
}

/* x86 keeps stores in order, so after the compiler barrier an add is a release. */
static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
    __asm__ __volatile__("addl %1, %0" : "+m"(*p) : "ir"(v) : "memory", "cc");
}

#else

static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}

#endif

static inline uint32_t emb_port_load32_acquire(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void emb_port_store32_release(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Blocks every signal on the calling thread; nests. */
typedef int emb_port_irq_state;
emb_port_irq_state emb_port_irq_save(void);
void emb_port_irq_restore(emb_port_irq_state state);

#endif /* EMB_PORT_IMPL_H */
