/* Trace packets and their stream header as frames on channel 1. */
#include <emb/trace_link.h>

#include <emb/frame.h>

emb_status emb_trace_link_init(struct emb_trace_link *l, emb_trace_link_send_fn send, void *arg,
                               uint8_t *buf, size_t cap, const struct emb_tsf_info *info,
                               const struct emb_tsf_context *contexts, uint16_t count,
                               uint32_t header_every)
{
    if (l == NULL || send == NULL)
        return EMB_E_INVALID;
    size_t n = emb_tsf_encode_header(buf, cap, info, contexts, count);
    if (n == 0u)
        return EMB_E_INVALID;
    *l = (struct emb_trace_link){
        .send = send,
        .arg = arg,
        .header = buf,
        .header_len = n,
        .header_every = header_every,
        .header_due = 1u,
    };
    return EMB_OK;
}

emb_status emb_trace_link_header(struct emb_trace_link *l)
{
    emb_status st = l->send(l->arg, EMB_FRAME_CH_TRACE, l->header, l->header_len);
    if (st == EMB_OK) {
        l->headers++;
        l->since_header = 0;
        l->header_due = 0;
    }
    return st;
}

static void emb__packet(void *arg, const struct emb_trace_ring *ring, const uint8_t *packet,
                        uint32_t size)
{
    (void)ring;
    struct emb_trace_link *l = arg;
    if (l->header_due || (l->header_every != 0u && l->since_header >= l->header_every))
        emb_trace_link_header(l);
    if (l->send(l->arg, EMB_FRAME_CH_TRACE, packet, size) == EMB_OK) {
        l->packets++;
        l->since_header++;
    } else {
        l->dropped++;
    }
}

uint32_t emb_trace_link_drain(struct emb_trace_link *l, struct emb_trace_ring *ring)
{
    return emb_trace_ring_consume(ring, emb__packet, l);
}
