/* A growing trace stream decoded round by round (live_stream.h). */
#include "live_stream.h"

#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "buffer.h"

struct emb_live_stream {
    struct emb_trace_options opt;
    struct emb_buf header;   /* the stream's header, once whole; before, its first bytes */
    struct emb_buf pending;  /* bytes after the header not decoded yet */
    bool have_header;
    bool refused;            /* the header did not decode: nothing more will */
    size_t stride;           /* bytes from one packet to the next: a sealed stream's
                              * packets are followed by their CRC (docs/formats/trace.md) */
    uint64_t consumed;       /* bytes after the header decoded in the rounds before */
    struct emb_trace *last;  /* the latest round, which the next continues */
    uint8_t *last_bytes;     /* the bytes it was decoded from (payloads point into them) */
    struct emb_live_stream_stats st;
};

struct emb_live_stream *emb_live_stream_new(const struct emb_trace_options *opt)
{
    struct emb_live_stream *s = calloc(1, sizeof *s);
    if (s != NULL) {
        s->opt = *opt;
        s->opt.continues = NULL;
        s->opt.mapped = false;
    }
    return s;
}

void emb_live_stream_free(struct emb_live_stream *s)
{
    if (s == NULL)
        return;
    emb_trace_free(s->last);
    free(s->last_bytes);
    emb_buf_free(&s->header);
    emb_buf_free(&s->pending);
    free(s);
}

/* The header is whole once the bytes held reach the size it gives. */
static void find_header(struct emb_live_stream *s)
{
    const struct emb_buf *h = &s->header;
    if (s->have_header || h->len < EMB_TSF_FIXED_SIZE)
        return;
    size_t size = emb_get_le16(h->data + EMB_TSF_OFF_HEADER_SIZE);
    uint32_t packet_size = emb_get_le32(h->data + EMB_TSF_OFF_PACKET_SIZE);
    if (size < EMB_TSF_FIXED_SIZE || packet_size < EMB_PKT_HEADER_SIZE) {
        s->refused = true; /* the decoder says why, in the last round */
        return;
    }
    if (h->len < size)
        return;
    s->have_header = true;
    bool sealed = emb_get_le16(h->data + EMB_TSF_OFF_VERSION) == EMB_TSF_VERSION_SEALED;
    s->stride = packet_size + (sealed ? EMB_TSF_PACKET_CRC_SIZE : 0u);
    emb_buf_append(&s->pending, h->data + size, h->len - size);
    s->header.len = size;
}

bool emb_live_stream_bytes(struct emb_live_stream *s, const uint8_t *p, size_t n)
{
    if (s->have_header)
        return emb_buf_append(&s->pending, p, n);
    if (!emb_buf_append(&s->header, p, n))
        return false;
    find_header(s);
    return !s->pending.failed;
}

bool emb_live_stream_packets(struct emb_live_stream *s, const uint8_t *header, size_t header_len,
                             const uint8_t *packets, size_t len)
{
    if (header_len < EMB_TSF_FIXED_SIZE)
        return true;
    s->header.len = 0;
    s->have_header = false;
    if (!emb_buf_append(&s->header, header, header_len))
        return false;
    find_header(s);
    return s->have_header ? emb_buf_append(&s->pending, packets, len) : true;
}

const uint8_t *emb_live_stream_start(const struct emb_live_stream *s, size_t *len)
{
    *len = s->header.len;
    return s->header.data;
}

bool emb_live_stream_header_done(const struct emb_live_stream *s)
{
    return s->have_header || s->refused;
}

void emb_live_stream_set_catalog(struct emb_live_stream *s, const struct emb_catalog *cat)
{
    s->opt.catalog = cat;
}

/* Decodes header + the first `n` pending bytes as the latest round's continuation. */
static const struct emb_trace *decode_round(struct emb_live_stream *s, size_t n, bool *oom)
{
    size_t hlen = s->header.len;
    uint8_t *bytes = malloc(hlen + n + 1u);
    if (bytes == NULL) {
        *oom = true;
        return NULL;
    }
    memcpy(bytes, s->header.data, hlen);
    memcpy(bytes + hlen, s->pending.data, n);
    struct emb_trace_options o = s->opt;
    o.continues = s->last;
    o.base_offset = s->opt.base_offset + s->consumed; /* the packets' offsets are the stream's */
    struct emb_trace *t = emb_trace_decode(bytes, hlen + n, &o);
    if (t == NULL) {
        free(bytes);
        *oom = true;
        return NULL;
    }
    emb_trace_free(s->last);
    free(s->last_bytes);
    s->last = t;
    s->last_bytes = bytes;
    s->st.rounds++;
    s->st.bytes_decoded += hlen + n;
    s->st.packets_decoded += s->have_header ? (n + s->stride - 1u) / s->stride : 0u;
    s->consumed += n;
    memmove(s->pending.data, s->pending.data + n, s->pending.len - n);
    s->pending.len -= n;
    return t;
}

const struct emb_trace *emb_live_stream_next(struct emb_live_stream *s, bool last, bool *oom)
{
    *oom = false;
    if (s->opt.catalog == NULL || (s->refused && s->last != NULL))
        return NULL;
    if (!s->have_header) /* a header never whole, or refused: the decoder says why, once */
        return (last || s->refused) && s->header.len > 0 && s->last == NULL
                   ? decode_round(s, 0, oom) : NULL;
    size_t n = last ? s->pending.len : s->pending.len / s->stride * s->stride;
    if (n == 0 && (s->last != NULL || !last))
        return NULL;
    return decode_round(s, n, oom);
}

const struct emb_live_stream_stats *emb_live_stream_stats(const struct emb_live_stream *s)
{
    return &s->st;
}
