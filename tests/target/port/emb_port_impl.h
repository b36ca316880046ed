/* A port for unit tests: the inline half of include/emb/port.h, with the ring and the
 * clock in the test's hands. Context-local atomics are plain __atomic builtins. */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#define EMB_PORT_NAME "unit-test"

typedef uint32_t emb_port_irq_state;

/* Set by the test: the ring every context records into, and the clock, which advances
 * by one tick per read so each event has a timestamp of its own. */
extern struct emb_trace_ring *emb_test_port_ring;
extern uint64_t emb_test_port_now;

static inline uint64_t emb_port_timestamp(void)
{
    return emb_test_port_now++;
}

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_test_port_ring;
}

static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}

static inline uint32_t emb_port_load32_acquire(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void emb_port_store32_release(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline emb_port_irq_state emb_port_irq_save(void)
{
    return 0;
}

static inline void emb_port_irq_restore(emb_port_irq_state s)
{
    (void)s;
}

#endif /* EMB_PORT_IMPL_H */
