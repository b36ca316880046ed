/* The replay port: the target library's trace ring run on the host to encode events that
 * were timed elsewhere (an imported stream, a decoded SWO capture). The clock is whatever
 * the encoder sets before each event and the ring is the one it chooses, so the packets
 * come from the one packet encoder (src/trace.c) and not from a second copy of the format.
 * Single-threaded by construction: the atomics are plain operations. */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#define EMB_PORT_NAME "replay"

struct emb_trace_ring;

extern uint64_t emb_replay_clock;
extern uint64_t emb_replay_clock_hz; /* 0 while no replay is open */
extern struct emb_trace_ring *emb_replay_ring;

static inline uint64_t emb_port_timestamp(void)
{
    return emb_replay_clock;
}

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_replay_ring;
}

static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    if (*p != expected)
        return false;
    *p = desired;
    return true;
}

static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
    *p += v;
}

static inline uint32_t emb_port_load32_acquire(const uint32_t *p)
{
    return *p;
}

static inline void emb_port_store32_release(uint32_t *p, uint32_t v)
{
    *p = v;
}

typedef int emb_port_irq_state;
static inline emb_port_irq_state emb_port_irq_save(void) { return 0; }
static inline void emb_port_irq_restore(emb_port_irq_state s) { (void)s; }

#endif /* EMB_PORT_IMPL_H */
