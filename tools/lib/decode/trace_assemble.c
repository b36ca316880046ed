/* Trace stream from channel-1 frames. */
#include "trace_assemble.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "buffer.h"
#include "stream_kind.h"

/* Appends to one of the assembler's buffers. A failed append loses its own bytes only:
 * the next one tries again (a buffer's failure is not sticky here). */
static bool append(struct emb_buf *b, const uint8_t *p, size_t n)
{
    b->failed = false;
    return emb_buf_append(b, p, n);
}

struct emb_trace_assembler {
    size_t hold_limit;
    bool have_header;
    uint8_t uuid[16];
    struct emb_buf header, packets, held, out;
    struct emb_trace_assemble_stats stats;
};

struct emb_trace_assembler *emb_trace_assemble_new(size_t hold_limit_bytes)
{
    struct emb_trace_assembler *a = calloc(1, sizeof *a);
    if (a != NULL)
        a->hold_limit = hold_limit_bytes ? hold_limit_bytes : (size_t)16 << 20;
    return a;
}

static bool is_header(const uint8_t *p, size_t n)
{
    return n >= EMB_TSF_FIXED_SIZE && emb_stream_kind(p, n) == EMB_STREAM_TRACE &&
           emb_get_le16(p + EMB_TSF_OFF_HEADER_SIZE) == n;
}

static bool is_packet(const uint8_t *p, size_t n)
{
    return n >= EMB_PKT_HEADER_SIZE && emb_stream_kind(p, n) == EMB_STREAM_TRACE_PACKET &&
           emb_get_le32(p + EMB_PKT_OFF_PACKET_SIZE) == 8u * n;
}

void emb_trace_assemble_frame(struct emb_trace_assembler *a, const uint8_t *p, size_t n)
{
    if (is_header(p, n)) {
        a->stats.headers++;
        if (!a->have_header) {
            memcpy(a->uuid, p + EMB_TSF_OFF_UUID, 16);
            a->have_header = true;
            /* Packets held for this stream go first, in the order they came. */
            for (size_t off = 0; off < a->held.len;) {
                uint32_t size = emb_get_le32(a->held.data + off + EMB_PKT_OFF_PACKET_SIZE) / 8u;
                if (!memcmp(a->held.data + off + EMB_PKT_OFF_UUID, a->uuid, 16)) {
                    append(&a->packets, a->held.data + off, size);
                    a->stats.packets++;
                    a->stats.held++;
                } else {
                    a->stats.foreign++;
                }
                off += size;
            }
            emb_buf_free(&a->held);
        } else if (memcmp(a->uuid, p + EMB_TSF_OFF_UUID, 16) != 0) {
            a->stats.foreign++;
            return;
        }
        a->header.len = 0;
        append(&a->header, p, n);
        return;
    }
    if (!is_packet(p, n)) {
        a->stats.malformed++;
        return;
    }
    if (!a->have_header) {
        if (a->held.len + n > a->hold_limit || !append(&a->held, p, n))
            a->stats.dropped_held++;
        return;
    }
    if (memcmp(p + EMB_PKT_OFF_UUID, a->uuid, 16) != 0) {
        a->stats.foreign++;
        return;
    }
    if (append(&a->packets, p, n))
        a->stats.packets++;
}

const uint8_t *emb_trace_assemble_stream(struct emb_trace_assembler *a, size_t *len)
{
    *len = 0;
    if (!a->have_header)
        return NULL;
    a->out.len = 0;
    if (!append(&a->out, a->header.data, a->header.len) ||
        !emb_buf_append(&a->out, a->packets.data, a->packets.len))
        return NULL;
    *len = a->out.len;
    return a->out.data;
}

bool emb_trace_assemble_parts(const struct emb_trace_assembler *a, const uint8_t **header,
                              size_t *header_len, const uint8_t **packets, size_t *packets_len)
{
    *header = a->header.data;
    *header_len = a->header.len;
    *packets = a->packets.data;
    *packets_len = a->packets.len;
    return a->have_header && a->header.len > 0;
}

const struct emb_trace_assemble_stats *emb_trace_assemble_stats(const struct emb_trace_assembler *a)
{
    return &a->stats;
}

void emb_trace_assemble_free(struct emb_trace_assembler *a)
{
    if (a == NULL)
        return;
    emb_buf_free(&a->header);
    emb_buf_free(&a->packets);
    emb_buf_free(&a->held);
    emb_buf_free(&a->out);
    free(a);
}
