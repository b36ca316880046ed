/* Trace stream from channel-1 frames. */
#include "trace_assemble.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

struct emb__bytes {
    uint8_t *p;
    size_t n, cap;
};

static int emb__append(struct emb__bytes *b, const uint8_t *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (q == NULL)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

struct emb_tasm {
    size_t hold_limit;
    bool have_header;
    uint8_t uuid[16];
    struct emb__bytes header, packets, held, out;
    struct emb_trace_assemble_stats stats;
};

struct emb_tasm *emb_trace_assemble_new(size_t hold_limit_bytes)
{
    struct emb_tasm *a = calloc(1, sizeof *a);
    if (a != NULL)
        a->hold_limit = hold_limit_bytes ? hold_limit_bytes : (size_t)16 << 20;
    return a;
}

static bool emb__is_header(const uint8_t *p, size_t n)
{
    return n >= EMB_TSF_FIXED_SIZE && emb_get_le32(p + EMB_TSF_OFF_MAGIC) == EMB_TSF_MAGIC &&
           emb_get_le16(p + EMB_TSF_OFF_HEADER_SIZE) == n;
}

static bool emb__is_packet(const uint8_t *p, size_t n)
{
    return n >= EMB_PKT_HEADER_SIZE && emb_get_le32(p + EMB_PKT_OFF_MAGIC) == EMB_PKT_MAGIC &&
           emb_get_le32(p + EMB_PKT_OFF_PACKET_SIZE) == 8u * n;
}

void emb_trace_assemble_frame(struct emb_tasm *a, const uint8_t *p, size_t n)
{
    if (emb__is_header(p, n)) {
        a->stats.headers++;
        if (!a->have_header) {
            memcpy(a->uuid, p + EMB_TSF_OFF_UUID, 16);
            a->have_header = true;
            /* Packets held for this stream go first, in the order they came. */
            for (size_t off = 0; off < a->held.n;) {
                uint32_t size = emb_get_le32(a->held.p + off + EMB_PKT_OFF_PACKET_SIZE) / 8u;
                if (!memcmp(a->held.p + off + EMB_PKT_OFF_UUID, a->uuid, 16)) {
                    emb__append(&a->packets, a->held.p + off, size);
                    a->stats.packets++;
                    a->stats.held++;
                } else {
                    a->stats.foreign++;
                }
                off += size;
            }
            free(a->held.p);
            memset(&a->held, 0, sizeof a->held);
        } else if (memcmp(a->uuid, p + EMB_TSF_OFF_UUID, 16) != 0) {
            a->stats.foreign++;
            return;
        }
        a->header.n = 0;
        emb__append(&a->header, p, n);
        return;
    }
    if (!emb__is_packet(p, n)) {
        a->stats.malformed++;
        return;
    }
    if (!a->have_header) {
        if (a->held.n + n > a->hold_limit || emb__append(&a->held, p, n) != 0)
            a->stats.dropped_held++;
        return;
    }
    if (memcmp(p + EMB_PKT_OFF_UUID, a->uuid, 16) != 0) {
        a->stats.foreign++;
        return;
    }
    if (emb__append(&a->packets, p, n) == 0)
        a->stats.packets++;
}

const uint8_t *emb_trace_assemble_stream(struct emb_tasm *a, size_t *len)
{
    *len = 0;
    if (!a->have_header)
        return NULL;
    a->out.n = 0;
    if (emb__append(&a->out, a->header.p, a->header.n) != 0 ||
        (a->packets.n > 0 && emb__append(&a->out, a->packets.p, a->packets.n) != 0))
        return NULL;
    *len = a->out.n;
    return a->out.p;
}

const struct emb_trace_assemble_stats *emb_trace_assemble_stats(const struct emb_tasm *a)
{
    return &a->stats;
}

void emb_trace_assemble_free(struct emb_tasm *a)
{
    if (a == NULL)
        return;
    free(a->header.p);
    free(a->packets.p);
    free(a->held.p);
    free(a->out.p);
    free(a);
}
