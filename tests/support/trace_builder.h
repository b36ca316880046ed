/* Builds trace stream files ("EMBT", docs/formats/trace.md) by hand, byte by byte with the
 * emb_put_le* helpers, for the decoder's tests, the CLI tests and the fuzz seeds. It does
 * not use the target library, so a test of the decoder does not trust the encoder. */
#ifndef EMB_TEST_TRACE_BUILDER_H
#define EMB_TEST_TRACE_BUILDER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "catalog.h"

struct tb_ctx {
    uint16_t id, kind;
    uint32_t discarded, packets;
    const char *name;
};

struct tb {
    uint8_t *buf;
    size_t len, cap;
    uint32_t packet_size;
    uint8_t uuid[16];
    size_t pkt;   /* offset of the open packet */
    uint32_t pos; /* bytes used in it */
};

static inline void tb_reserve(struct tb *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    b->buf = (uint8_t *)realloc(b->buf, cap);
    if (!b->buf)
        abort();
    memset(b->buf + b->cap, 0, cap - b->cap);
    b->cap = cap;
}

/* Starts a file: header and context table. */
static inline void tb_begin(struct tb *b, uint32_t checksum, uint32_t packet_size, uint64_t hz,
                            int64_t offset_ns, const struct tb_ctx *ctx, unsigned nctx)
{
    memset(b, 0, sizeof *b);
    b->packet_size = packet_size;
    for (unsigned i = 0; i < 16; i++)
        b->uuid[i] = (uint8_t)(0xA0 + i);
    size_t hs = EMB_TSF_FIXED_SIZE + (size_t)nctx * EMB_TSF_CONTEXT_SIZE;
    tb_reserve(b, hs);
    uint8_t *h = b->buf;
    emb_put_le32(h + EMB_TSF_OFF_MAGIC, EMB_TSF_MAGIC);
    emb_put_le16(h + EMB_TSF_OFF_VERSION, EMB_TSF_VERSION);
    emb_put_le16(h + EMB_TSF_OFF_HEADER_SIZE, (uint16_t)hs);
    emb_put_le32(h + EMB_TSF_OFF_CATALOG, checksum);
    emb_put_le32(h + EMB_TSF_OFF_PACKET_SIZE, packet_size);
    emb_put_le64(h + EMB_TSF_OFF_CLOCK_HZ, hz);
    emb_put_le64(h + EMB_TSF_OFF_CLOCK_OFFSET, (uint64_t)offset_ns);
    memcpy(h + EMB_TSF_OFF_UUID, b->uuid, 16);
    h[EMB_TSF_OFF_BUILD_ID_LEN] = 4;
    h[EMB_TSF_OFF_POINTER_SIZE] = 8;
    emb_put_le16(h + EMB_TSF_OFF_CONTEXT_COUNT, (uint16_t)nctx);
    memcpy(h + EMB_TSF_OFF_BUILD_ID, "\xde\xad\xbe\xef", 4);
    memcpy(h + EMB_TSF_OFF_PORT, "test", 4);
    for (unsigned i = 0; i < nctx; i++) {
        uint8_t *e = h + EMB_TSF_FIXED_SIZE + i * EMB_TSF_CONTEXT_SIZE;
        emb_put_le16(e + EMB_TSF_CTX_OFF_ID, ctx[i].id);
        emb_put_le16(e + EMB_TSF_CTX_OFF_KIND, ctx[i].kind);
        emb_put_le32(e + EMB_TSF_CTX_OFF_DISCARDED, ctx[i].discarded);
        emb_put_le32(e + EMB_TSF_CTX_OFF_PACKETS, ctx[i].packets);
        if (ctx[i].name)
            strncpy((char *)e + EMB_TSF_CTX_OFF_NAME, ctx[i].name, EMB_TSF_NAME_MAX);
    }
    b->len = hs;
}

/* Appends a packet and writes its opening fields. Returns its offset in the file. */
static inline size_t tb_open(struct tb *b, uint16_t ctx, uint16_t kind, uint32_t seq,
                             uint64_t ts_begin)
{
    tb_reserve(b, b->packet_size);
    b->pkt = b->len;
    b->len += b->packet_size;
    b->pos = EMB_PKT_HEADER_SIZE;
    uint8_t *p = b->buf + b->pkt;
    memset(p, 0, b->packet_size);
    emb_put_le32(p + EMB_PKT_OFF_MAGIC, EMB_PKT_MAGIC);
    memcpy(p + EMB_PKT_OFF_UUID, b->uuid, 16);
    emb_put_le32(p + EMB_PKT_OFF_INSTANCE, ctx);
    emb_put_le32(p + EMB_PKT_OFF_SEQ, seq);
    emb_put_le64(p + EMB_PKT_OFF_TS_BEGIN, ts_begin);
    emb_put_le32(p + EMB_PKT_OFF_PACKET_SIZE, 8u * b->packet_size);
    emb_put_le16(p + EMB_PKT_OFF_CONTEXT_ID, ctx);
    emb_put_le16(p + EMB_PKT_OFF_CONTEXT_KIND, kind);
    return b->pkt;
}

/* Appends an event with raw payload bytes (padded to 4). Returns its offset in the file. */
static inline size_t tb_raw(struct tb *b, uint64_t ts, uint16_t id, uint16_t flags,
                            const void *payload, uint32_t len)
{
    uint8_t *e = b->buf + b->pkt + b->pos;
    size_t at = b->pkt + b->pos;
    emb_put_le32(e + EMB_EVT_OFF_TS, (uint32_t)ts);
    emb_put_le16(e + EMB_EVT_OFF_ID, id);
    emb_put_le16(e + EMB_EVT_OFF_FLAGS, flags);
    if (len)
        memcpy(e + EMB_EVT_HEADER_SIZE, payload, len);
    b->pos += EMB_EVT_HEADER_SIZE + ((len + 3u) & ~3u);
    return at;
}

/* Appends catalogue event `name` with its integer fields in order (char[N] fields take a
 * const char * cast to uintptr_t). */
static inline size_t tb_event(struct tb *b, const struct emb_catalog *cat, uint64_t ts,
                              uint16_t flags, const char *name, const uint64_t *values)
{
    const struct emb_catalog_event *ev = emb_catalog_find(cat, name);
    if (!ev)
        abort();
    uint8_t payload[256] = {0};
    for (size_t i = 0; i < ev->nfields; i++) {
        const struct emb_catalog_field *f = &ev->fields[i];
        uint8_t *d = payload + f->offset;
        if (f->type == EMB_CAT_CHARS) {
            const char *s = (const char *)(uintptr_t)values[i];
            size_t n = strlen(s);
            memcpy(d, s, n < f->size ? n : f->size);
        } else if (f->size == 1) {
            d[0] = (uint8_t)values[i];
        } else if (f->size == 2) {
            emb_put_le16(d, (uint16_t)values[i]);
        } else if (f->size == 4) {
            emb_put_le32(d, (uint32_t)values[i]);
        } else {
            emb_put_le64(d, values[i]);
        }
    }
    return tb_raw(b, ts, ev->id, flags, payload, ev->payload_size);
}

/* Writes the closing fields of the open packet. */
static inline void tb_close(struct tb *b, uint64_t ts_end, uint32_t discarded)
{
    uint8_t *p = b->buf + b->pkt;
    emb_put_le64(p + EMB_PKT_OFF_TS_END, ts_end);
    emb_put_le32(p + EMB_PKT_OFF_CONTENT_SIZE, 8u * b->pos);
    emb_put_le32(p + EMB_PKT_OFF_DISCARDED, discarded);
}

static inline uint16_t tb_isr(unsigned depth)
{
    return (uint16_t)(EMB_EVT_KIND_ISR | (depth << EMB_EVT_FLAG_DEPTH_SHIFT));
}

#define TB_V(...) ((const uint64_t[]){__VA_ARGS__})

#endif /* EMB_TEST_TRACE_BUILDER_H */
