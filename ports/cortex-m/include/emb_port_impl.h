/* The Cortex-M port's inline half of the port contract (include/emb/port.h).
 *
 * One CPU, one context: every thread and interrupt records into the same ring, and an
 * interrupt that preempts a producer mid-record is the nested producer the ring protocol
 * is built for. ARMv7-M gives context-local atomics with LDREX/STREX: taking an exception
 * clears the exclusive monitor, so a preempted store-exclusive fails and retries.
 */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#if !defined(__ARM_ARCH_7M__) && !defined(__ARM_ARCH_7EM__) && !defined(__ARM_ARCH_8M_MAIN__)
#error "the cortex-m port needs ARMv7-M or ARMv8-M Mainline (LDREX/STREX)"
#endif

#define EMB_PORT_NAME "cortex-m"

struct emb_trace_ring;
struct emb_log_ring;

extern struct emb_trace_ring *emb_cm_ring;
extern struct emb_log_ring *emb_cm_log_ring;

/* The 64-bit clock: DWT CYCCNT extended in software (the extension is in cortex_m.c). */
uint64_t emb_cm_timestamp(void);

static inline uint64_t emb_port_timestamp(void)
{
    return emb_cm_timestamp();
}

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_cm_ring;
}

static inline struct emb_log_ring *emb_port_log_ring(void)
{
    return emb_cm_log_ring;
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

typedef uint32_t emb_port_irq_state;

static inline emb_port_irq_state emb_port_irq_save(void)
{
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
    return primask;
}

static inline void emb_port_irq_restore(emb_port_irq_state state)
{
    __asm__ __volatile__("msr primask, %0" ::"r"(state) : "memory");
}

#endif /* EMB_PORT_IMPL_H */
