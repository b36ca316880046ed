/* A port for unit tests: a clock the test sets, one ring the test chooses, and hooks that
 * run a "preempting producer" at exact points of the ring protocol (after the clock read,
 * after a successful swap, before a commit), to test each interleaving deterministically. */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#define EMB_PORT_NAME "test"

struct emb_trace_ring;
struct emb_log_ring;

enum emb_test_point {
    EMB_TEST_AT_CLOCK,    /* the clock was read, before the swap */
    EMB_TEST_AT_SWAPPED,  /* a compare-and-swap succeeded */
    EMB_TEST_AT_COMMIT,   /* before a commit is added */
    EMB_TEST_AT_PUBLISH,  /* the slow path stored commit_open, not yet packet_end */
};

extern uint64_t emb_test_clock;
extern uint64_t emb_test_clock_step; /* added after each read */
extern struct emb_trace_ring *emb_test_ring;
extern struct emb_trace_ring *emb_test_claim_ring;
extern struct emb_log_ring *emb_test_log_ring; /* defined by tests that log */
extern void (*emb_test_preempt)(enum emb_test_point point);

static inline void emb_test_fire(enum emb_test_point point)
{
    void (*fn)(enum emb_test_point) = emb_test_preempt;
    if (fn != 0) {
        emb_test_preempt = 0; /* a preempting producer is not itself preempted */
        fn(point);
    }
}

#define EMB_PORT_PREEMPT_IN_PUBLISH() emb_test_fire(EMB_TEST_AT_PUBLISH)

/* Built both ways: events counting themselves in their packet's tail, as on x86-64
 * (test_trace_ring_tail), and the slow path walking overwritten packets (elsewhere). */
#if defined(EMB_TEST_COUNT_IN_TAIL)
#define EMB_PORT_LOCAL_ADD_ONE_INSN 1
#endif

static inline uint64_t emb_port_timestamp(void)
{
    uint64_t now = emb_test_clock;
    emb_test_clock += emb_test_clock_step;
    emb_test_fire(EMB_TEST_AT_CLOCK);
    return now;
}

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_test_ring;
}

static inline struct emb_log_ring *emb_port_log_ring(void)
{
    return emb_test_log_ring;
}

static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    bool ok = __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED);
    if (ok)
        emb_test_fire(EMB_TEST_AT_SWAPPED);
    return ok;
}

static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
    emb_test_fire(EMB_TEST_AT_COMMIT);
    __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}

/* A preemption point at acquire loads, for the tests that set it (weak: the others need
 * not define it). Cleared before it runs, as emb_test_preempt is. */
__attribute__((weak)) void (*emb_test_preempt_load)(void);

static inline uint32_t emb_port_load32_acquire(const uint32_t *p)
{
    void (*fn)(void) = emb_test_preempt_load;
    if (fn != 0) {
        emb_test_preempt_load = 0;
        fn();
    }
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void emb_port_store32_release(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

typedef int emb_port_irq_state;
static inline emb_port_irq_state emb_port_irq_save(void) { return 0; }
static inline void emb_port_irq_restore(emb_port_irq_state s) { (void)s; }

#endif /* EMB_PORT_IMPL_H */
