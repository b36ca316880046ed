/* Reading a trace ring: which packets are held (emb/ring_read.h). */
#include <emb/ring_read.h>

#include <emb/trace_format.h>

struct emb_ring_held emb_ring_held(const struct emb_ring_geometry *g, uint32_t write_pos,
                                   uint32_t filled)
{
    const uint32_t p = emb_ring_packet_size(g);
    const uint32_t slots = 1u << g->slot_shift;
    struct emb_ring_held h;
    h.open_start = write_pos & ~(p - 1u);
    h.open_used = write_pos & (p - 1u);
    /* An open packet occupies the slot of the oldest one. */
    uint32_t keep = h.open_used != 0u ? slots - 1u : slots;
    h.count = filled != 0u ? keep : (h.open_start - g->base_pos) >> g->packet_shift;
    if (h.count > keep)
        h.count = keep;
    h.oldest = h.open_start - h.count * p;
    return h;
}

uint32_t emb_ring_packets_opened(const struct emb_ring_geometry *g, uint32_t write_pos)
{
    return (write_pos - g->base_pos + emb_ring_packet_size(g) - 1u) >> g->packet_shift;
}

bool emb_ring_open_committed(const struct emb_ring_geometry *g, const struct emb_ring_held *h,
                             uint32_t open_commit)
{
    return h->open_used > EMB_PKT_HEADER_SIZE &&
           emb_ring_committed(g, h->open_start, open_commit) == h->open_used;
}

uint32_t emb_ring_catch_up(const struct emb_ring_geometry *g, const struct emb_ring_held *h,
                           uint32_t next, uint32_t *lost)
{
    uint32_t gone = 0u;
    /* Distances back from the open packet: `next` further back than the oldest held packet
     * means its slot has been reused since. */
    if ((uint32_t)(h->open_start - next) > (uint32_t)(h->open_start - h->oldest)) {
        gone = (h->oldest - next) >> g->packet_shift;
        next = h->oldest;
    }
    if (lost != NULL)
        *lost = gone;
    return next;
}
