/* The target's trace ring seen by the ring-reading module (emb/ring_read.h): what the
 * ring's readers in trace.c and crash.c hand it. Internal to the target library. */
#ifndef EMB_TRACE_RING_H
#define EMB_TRACE_RING_H

#include <emb/ring_read.h>
#include <emb/trace.h>

static inline struct emb_ring_geometry emb__ring_geometry(const struct emb_trace_ring *ring)
{
    return (struct emb_ring_geometry){
        .base_pos = ring->base_pos,
        /* The compile-time shift (emb_trace_ring_init() refuses any other): shifts by a
         * constant, no load. */
        .packet_shift = EMB_TRACE_PACKET_SHIFT,
        .slot_shift = ring->slot_shift,
    };
}

/* The commit word of the slot holding `pos`, read with acquire order: what it counts was
 * written before it. */
static inline uint32_t emb__ring_commit(const struct emb_trace_ring *ring, uint32_t pos)
{
    const struct emb_ring_geometry g = emb__ring_geometry(ring);
    return emb_port_load32_acquire(&ring->commit[emb_ring_slot(&g, pos)]);
}

#endif /* EMB_TRACE_RING_H */
