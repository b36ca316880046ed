/* Reading a trace ring (docs/formats/trace.md, "Ring protocol"): which packets it holds,
 * which of them are complete, which slot a position is in, and whether a copy taken while
 * producers ran is what was committed.
 *
 * Pure arithmetic on words the caller has read, with the ordering it needs (an acquire
 * load of a live ring, or bytes read out of a target's memory), so every reader shares it:
 * the snapshot reader and the streaming consumer (src/trace.c), the crash record's flight
 * copy (src/crash.c) and the host's descriptor follower. Freestanding; depends on no port.
 */
#ifndef EMB_RING_READ_H
#define EMB_RING_READ_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The shape of one ring: N = 2^slot_shift slots of P = 2^packet_shift bytes. */
struct emb_ring_geometry {
    uint32_t base_pos;    /* write_pos when the ring (or its window) started, packet-aligned */
    uint8_t packet_shift; /* log2(P) */
    uint8_t slot_shift;   /* log2(N); packet_shift + slot_shift < 32 */
};

/* What a ring holds at one write_pos. */
struct emb_ring_held {
    uint32_t open_start; /* position of the packet write_pos is in */
    uint32_t open_used;  /* bytes reserved in that packet; 0: no packet is open */
    uint32_t oldest;     /* position of the oldest packet held (open_start when none) */
    uint32_t count;      /* packets held from `oldest` up to the open one, not counting it */
};

static inline uint32_t emb_ring_packet_size(const struct emb_ring_geometry *g)
{
    return 1u << g->packet_shift;
}

static inline uint32_t emb_ring_bytes(const struct emb_ring_geometry *g)
{
    return 1u << (g->packet_shift + g->slot_shift);
}

/* The slot holding position `pos`: (pos / P) mod N. */
static inline uint32_t emb_ring_slot(const struct emb_ring_geometry *g, uint32_t pos)
{
    return (pos >> g->packet_shift) & ((1u << g->slot_shift) - 1u);
}

/* Bytes committed to the use of a slot that starts at `start`, given that slot's commit
 * word. The k-th use of a slot (k counted from base_pos) begins at commit k * P and is
 * complete at (k + 1) * P; the word is compared modulo 2^32 / N, the period at which
 * k * P wraps with a 32-bit position. 0: nothing yet (the previous use is complete, the
 * slot may be reused); P: complete. */
static inline uint32_t emb_ring_committed(const struct emb_ring_geometry *g, uint32_t start,
                                          uint32_t commit)
{
    uint32_t round = (start - g->base_pos) >> (g->packet_shift + g->slot_shift);
    return (commit - (round << g->packet_shift)) & (0xFFFFFFFFu >> g->slot_shift);
}

/* True when every byte of the packet at `start` has been committed. */
static inline bool emb_ring_packet_complete(const struct emb_ring_geometry *g, uint32_t start,
                                            uint32_t commit)
{
    return emb_ring_committed(g, start, commit) == emb_ring_packet_size(g);
}

/* True when a copy of the packet (or open packet) at `start`, taken after reading its
 * commit word, is what was committed: `write_pos_after`, loaded after the copy, has not
 * reached the slot's next use. Producers write a slot only after reserving into it. */
static inline bool emb_ring_copy_intact(const struct emb_ring_geometry *g, uint32_t start,
                                        uint32_t write_pos_after)
{
    return (uint32_t)(write_pos_after - start) <= emb_ring_bytes(g);
}

/* The packets held at `write_pos`: every slot but the open packet's once the ring has
 * `filled` (nonzero once every slot has held a packet; positions wrap at 2^32, so it is
 * a flag, not a difference), else those opened since base_pos. */
struct emb_ring_held emb_ring_held(const struct emb_ring_geometry *g, uint32_t write_pos,
                                   uint32_t filled);

/* Packets opened since base_pos, the open one included: a stream header's per-context
 * `packets`. */
uint32_t emb_ring_packets_opened(const struct emb_ring_geometry *g, uint32_t write_pos);

/* True when the open packet holds more than its header and every byte reserved in it is
 * committed (no reservation in flight): a prefix a reader may copy and close in the copy.
 * `open_commit` is the commit word of the open packet's slot. */
bool emb_ring_open_committed(const struct emb_ring_geometry *g, const struct emb_ring_held *h,
                             uint32_t open_commit);

/* Where a reader that takes packets in order goes on, having stopped before the packet at
 * `next`: `next` itself while it is still held, or the oldest packet held when `next` was
 * overwritten since; `*lost` (may be NULL) receives the packets overwritten in between. */
uint32_t emb_ring_catch_up(const struct emb_ring_geometry *g, const struct emb_ring_held *h,
                           uint32_t next, uint32_t *lost);

#ifdef __cplusplus
}
#endif

#endif /* EMB_RING_READ_H */
