/* The trace stream decoder: header, context table, packets, events, losses. */
#define _POSIX_C_SOURCE 200809L

#include "trace_decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "input_file.h"
#include "trace_seal.h"

#define NO_CONTEXT_ID 0xFFFFu /* the port's pseudo-context for events with no ring */

struct ctx_state {
    struct emb_trace_context pub;
    struct emb_trace_event *recs;
    size_t nrecs, cap;
    bool have_prev;        /* a packet of this context has been accepted */
    uint32_t prev_seq;
    uint64_t prev_ts_end;
    uint32_t prev_discarded;
};

struct emb_trace {
    char *name;
    uint8_t *owned; /* the file's bytes when we read it */
    const uint8_t *data;
    size_t size;
    uint64_t base;
    const struct emb_catalog *cat;
    const struct emb_trace_options *opt;
    struct emb_trace_info info;
    struct emb_trace_summary sum;
    struct ctx_state *ctx;
    size_t nctx, ctx_cap;
    int32_t *ctx_index; /* context id -> index, -1 when absent */
    struct emb_trace_packet *pkts;
    size_t npkts, pkt_cap;
    struct emb_trace_issue *issues;
    size_t nissues;
    const struct emb_trace_event **merged;
    size_t nmerged;
    struct emb_trace_unsealed seal; /* a sealed file: the checked copy that data points to */
    bool issues_raw;                /* issue() offsets are the source's already */
    bool oom;
};

/* The source's offset of byte `off` of the data decoded: a sealed file's CRCs counted. */
static uint64_t src_off(const struct emb_trace *t, uint64_t off)
{
    return emb_trace_sealed_offset(&t->seal, off) + t->base;
}

/* ---- small helpers ---- */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

static void issue(struct emb_trace *t, long long offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void issue(struct emb_trace *t, long long offset, const char *fmt, ...)
{
    t->sum.errors++;
    if (t->nissues >= EMB_TRACE_MAX_ISSUES)
        return;
    if (t->nissues == 0 || (t->nissues & (t->nissues - 1)) == 0) {
        size_t cap = t->nissues ? t->nissues * 2 : 1;
        void *q = realloc(t->issues, cap * sizeof *t->issues);
        if (!q) {
            t->oom = true;
            return;
        }
        t->issues = q;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *m = strdup(buf);
    if (!m) {
        t->oom = true;
        return;
    }
    t->issues[t->nissues].offset = offset < 0                ? -1
                                   : t->issues_raw ? offset + (long long)t->base
                                                   : (long long)src_off(t, (uint64_t)offset);
    t->issues[t->nissues].message = m;
    t->nissues++;
}

/* Copies a NUL-padded name, replacing control bytes so a name never drives a terminal. */
static void copy_name(char *dst, size_t dstlen, const uint8_t *src, size_t srclen)
{
    size_t n = 0;
    while (n < srclen && n + 1 < dstlen && src[n]) {
        dst[n] = (src[n] < 0x20 || src[n] == 0x7F) ? '?' : (char)src[n];
        n++;
    }
    dst[n] = 0;
}

uint64_t emb_trace_ticks_to_ns(uint64_t ticks, uint64_t hz)
{
    if (hz == 0 || hz == 1000000000u)
        return ticks;
    uint64_t q = ticks / hz, r = ticks % hz;
    /* r < hz, so r * 1e9 fits in 64 bits while hz < 1.8e10; above that, 128 bits. */
    uint64_t frac;
    if (hz <= UINT64_MAX / 1000000000u) {
        frac = r * 1000000000u / hz;
    } else {
#if defined(__SIZEOF_INT128__)
        __extension__ typedef unsigned __int128 u128;
        frac = (uint64_t)((u128)r * 1000000000u / hz);
#else
        frac = (uint64_t)((long double)r * 1e9L / (long double)hz);
#endif
    }
    return q * 1000000000u + frac;
}

/* ---- contexts ---- */

static long add_context(struct emb_trace *t, uint16_t id, uint16_t kind)
{
    if (!grow((void **)&t->ctx, &t->ctx_cap, t->nctx + 1, sizeof *t->ctx)) {
        t->oom = true;
        return -1;
    }
    struct ctx_state *c = &t->ctx[t->nctx];
    memset(c, 0, sizeof *c);
    c->pub.id = id;
    c->pub.kind = kind;
    snprintf(c->pub.name, sizeof c->pub.name, "ctx %u", id);
    t->ctx_index[id] = (int32_t)t->nctx;
    return (long)t->nctx++;
}

static struct emb_trace_event *push_rec(struct emb_trace *t, struct ctx_state *c)
{
    if (!grow((void **)&c->recs, &c->cap, c->nrecs + 1, sizeof *c->recs)) {
        t->oom = true;
        return NULL;
    }
    struct emb_trace_event *r = &c->recs[c->nrecs++];
    memset(r, 0, sizeof *r);
    r->ctx = (uint32_t)(c - t->ctx);
    r->context_id = c->pub.id;
    return r;
}

/* ---- header ---- */

static bool is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

/* Reads the extension blocks between the context table and the header's end. */
static bool read_extensions(struct emb_trace *t, uint32_t at)
{
    const uint8_t *d = t->data;
    uint32_t end = t->info.header_size;
    while (end - at >= EMB_TSF_EXT_HEADER_SIZE) {
        uint32_t tag = emb_get_le32(d + at + EMB_TSF_EXT_OFF_TAG);
        if (tag == 0)
            break; /* the rest is reserve */
        uint32_t size = emb_get_le32(d + at + EMB_TSF_EXT_OFF_SIZE);
        if (size < EMB_TSF_EXT_HEADER_SIZE || size % 4 || size > end - at) {
            issue(t, (long long)at + EMB_TSF_EXT_OFF_SIZE,
                  "header extension 0x%08" PRIx32 ": size %" PRIu32 " is not a multiple of 4 "
                  "from 8 to the %" PRIu32 " header bytes left", tag, size, end - at);
            return false;
        }
        if (tag == EMB_TSF_EXT_IDENTITY) {
            if (size < EMB_TSF_IDENTITY_SIZE) {
                issue(t, (long long)at + EMB_TSF_EXT_OFF_SIZE,
                      "identity block of %" PRIu32 " bytes, at least %u expected", size,
                      EMB_TSF_IDENTITY_SIZE);
                return false;
            }
            struct emb_trace_info *h = &t->info;
            h->has_identity = true;
            h->session_id = emb_get_le64(d + at + EMB_TSF_ID_OFF_SESSION);
            copy_name(h->firmware, sizeof h->firmware, d + at + EMB_TSF_ID_OFF_FIRMWARE,
                      EMB_TSF_FIRMWARE_MAX);
            copy_name(h->config, sizeof h->config, d + at + EMB_TSF_ID_OFF_CONFIG,
                      EMB_TSF_CONFIG_MAX);
        } else if (tag == EMB_TSF_EXT_RING && size >= EMB_TSF_RING_SIZE) {
            t->info.ring_packets = emb_get_le32(d + at + EMB_TSF_RING_OFF_PACKETS);
        }
        at += size;
    }
    return true;
}

/* Validates the file header and reads the context table. Returns false when the stream
 * must be refused. */
static bool read_header(struct emb_trace *t)
{
    const uint8_t *d = t->data;
    struct emb_trace_info *h = &t->info;
    if (t->size < 4) {
        issue(t, 0, "truncated header: %zu bytes, a trace stream file has at least %u",
              t->size, EMB_TSF_FIXED_SIZE);
        return false;
    }
    uint32_t magic = emb_get_le32(d + EMB_TSF_OFF_MAGIC);
    if (magic != EMB_TSF_MAGIC) {
        if (magic == EMB_PKT_MAGIC)
            issue(t, 0, "a bare CTF packet, not a trace stream file (magic \"EMBT\")");
        else
            issue(t, 0, "not a trace stream file: magic 0x%08" PRIx32 ", expected 0x%08x (\"EMBT\")",
                  magic, EMB_TSF_MAGIC);
        return false;
    }
    if (t->size < EMB_TSF_FIXED_SIZE) {
        issue(t, (long long)t->size, "truncated header: %zu of %u bytes", t->size,
              EMB_TSF_FIXED_SIZE);
        return false;
    }
    h->version = emb_get_le16(d + EMB_TSF_OFF_VERSION);
    h->header_size = emb_get_le16(d + EMB_TSF_OFF_HEADER_SIZE);
    h->catalog_checksum = emb_get_le32(d + EMB_TSF_OFF_CATALOG);
    h->packet_size = emb_get_le32(d + EMB_TSF_OFF_PACKET_SIZE);
    h->clock_hz = emb_get_le64(d + EMB_TSF_OFF_CLOCK_HZ);
    h->clock_offset_ns = (int64_t)emb_get_le64(d + EMB_TSF_OFF_CLOCK_OFFSET);
    memcpy(h->uuid, d + EMB_TSF_OFF_UUID, 16);
    /* The info never claims more than build_id holds, even for a header refused below:
     * writers read build_id[build_id_len] of whatever the decoder returns. */
    uint8_t build_id_len = d[EMB_TSF_OFF_BUILD_ID_LEN];
    h->build_id_len = build_id_len <= EMB_TSF_BUILD_ID_MAX ? build_id_len : 0;
    h->pointer_size = d[EMB_TSF_OFF_POINTER_SIZE];
    h->context_count = emb_get_le16(d + EMB_TSF_OFF_CONTEXT_COUNT);
    memcpy(h->build_id, d + EMB_TSF_OFF_BUILD_ID, 32);
    copy_name(h->port, sizeof h->port, d + EMB_TSF_OFF_PORT, EMB_TSF_PORT_MAX);

    if (h->version != EMB_TSF_VERSION) {
        issue(t, EMB_TSF_OFF_VERSION,
              "trace stream version %u is not supported (this tool reads %u and %u)",
              h->version, EMB_TSF_VERSION, EMB_TSF_VERSION_SEALED);
        return false;
    }
    if (h->context_count > EMB_TSF_MAX_CONTEXTS) {
        issue(t, EMB_TSF_OFF_CONTEXT_COUNT, "context count %u exceeds %u", h->context_count,
              EMB_TSF_MAX_CONTEXTS);
        return false;
    }
    uint32_t min_header = EMB_TSF_FIXED_SIZE + (uint32_t)h->context_count * EMB_TSF_CONTEXT_SIZE;
    if (h->header_size < min_header) {
        issue(t, EMB_TSF_OFF_HEADER_SIZE,
              "header size %u is smaller than its %u contexts need (%" PRIu32 " bytes)",
              h->header_size, h->context_count, min_header);
        return false;
    }
    if (h->header_size > t->size) {
        issue(t, (long long)t->size, "truncated header: %zu of %u bytes", t->size,
              h->header_size);
        return false;
    }
    if (build_id_len > EMB_TSF_BUILD_ID_MAX) {
        issue(t, EMB_TSF_OFF_BUILD_ID_LEN, "build id length %u exceeds %u", build_id_len,
              EMB_TSF_BUILD_ID_MAX);
        return false;
    }
    if (!is_pow2(h->packet_size) || h->packet_size < 256 || h->packet_size > 65536) {
        issue(t, EMB_TSF_OFF_PACKET_SIZE,
              "packet size %" PRIu32 " is not a power of two from 256 to 65536", h->packet_size);
        return false;
    }
    if (h->clock_hz == 0) {
        issue(t, EMB_TSF_OFF_CLOCK_HZ, "clock frequency is 0");
        return false;
    }
    if (h->catalog_checksum != t->cat->checksum) {
        issue(t, EMB_TSF_OFF_CATALOG,
              "catalogue checksum 0x%08" PRIx32 " differs from the catalogue's 0x%08" PRIx32
              ": the trace was recorded with another catalogue",
              h->catalog_checksum, t->cat->checksum);
        if (!t->opt->ignore_checksum)
            return false;
    }

    for (uint32_t i = 0; i < h->context_count; i++) {
        size_t at = EMB_TSF_FIXED_SIZE + (size_t)i * EMB_TSF_CONTEXT_SIZE;
        const uint8_t *e = d + at;
        uint16_t id = emb_get_le16(e + EMB_TSF_CTX_OFF_ID);
        uint16_t kind = emb_get_le16(e + EMB_TSF_CTX_OFF_KIND);
        uint32_t discarded = emb_get_le32(e + EMB_TSF_CTX_OFF_DISCARDED);
        if (id == NO_CONTEXT_ID) {
            t->sum.lost_no_context += discarded;
            continue;
        }
        if (t->ctx_index[id] >= 0) {
            issue(t, (long long)at, "context %u listed twice in the context table", id);
            continue;
        }
        if (kind > EMB_CONTEXT_THREAD)
            issue(t, (long long)at + EMB_TSF_CTX_OFF_KIND, "context %u: unknown kind %u", id, kind);
        long ci = add_context(t, id, kind);
        if (ci < 0)
            return false;
        struct emb_trace_context *c = &t->ctx[ci].pub;
        c->in_table = true;
        c->table_discarded = discarded;
        c->table_packets = emb_get_le32(e + EMB_TSF_CTX_OFF_PACKETS);
        copy_name(c->name, sizeof c->name, e + EMB_TSF_CTX_OFF_NAME, EMB_TSF_NAME_MAX);
        if (!c->name[0])
            snprintf(c->name, sizeof c->name, "ctx %u", id);
    }
    return read_extensions(t, min_header);
}

/* ---- packets ---- */

/* Checks a packet header at `off`, which has at least EMB_PKT_HEADER_SIZE bytes. Writes
 * the reason into `why` and returns false when it is not a packet of this trace. */
static bool packet_header_ok(struct emb_trace *t, size_t off, char *why, size_t whylen)
{
    const uint8_t *p = t->data + off;
    uint32_t P = t->info.packet_size;
    uint32_t magic = emb_get_le32(p + EMB_PKT_OFF_MAGIC);
    if (magic != EMB_PKT_MAGIC) {
        snprintf(why, whylen, "bad packet magic 0x%08" PRIx32 ", expected 0x%08x", magic,
                 EMB_PKT_MAGIC);
        return false;
    }
    if (memcmp(p + EMB_PKT_OFF_UUID, t->info.uuid, 16) != 0) {
        snprintf(why, whylen, "packet uuid differs from the file's");
        return false;
    }
    uint32_t stream_id = emb_get_le32(p + EMB_PKT_OFF_STREAM_ID);
    if (stream_id != 0) {
        snprintf(why, whylen, "stream_id %" PRIu32 ", expected 0", stream_id);
        return false;
    }
    uint32_t instance = emb_get_le32(p + EMB_PKT_OFF_INSTANCE);
    uint16_t ctx_id = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_ID);
    if (instance != ctx_id) {
        snprintf(why, whylen, "stream_instance_id %" PRIu32 " differs from context_id %u",
                 instance, ctx_id);
        return false;
    }
    if (ctx_id == NO_CONTEXT_ID) {
        snprintf(why, whylen, "context id 0x%04x is reserved", ctx_id);
        return false;
    }
    uint16_t kind = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_KIND);
    if (kind > EMB_CONTEXT_THREAD) {
        snprintf(why, whylen, "unknown context_kind %u", kind);
        return false;
    }
    uint32_t psize = emb_get_le32(p + EMB_PKT_OFF_PACKET_SIZE);
    if (psize != 8u * P) {
        snprintf(why, whylen, "packet_size %" PRIu32 " bits, expected %" PRIu32, psize, 8u * P);
        return false;
    }
    uint32_t csize = emb_get_le32(p + EMB_PKT_OFF_CONTENT_SIZE);
    if (csize < 8u * EMB_PKT_HEADER_SIZE || csize > 8u * P || csize % 32u) {
        snprintf(why, whylen,
                 "content_size %" PRIu32 " bits is outside [%u, %" PRIu32 "] or not a multiple of 32",
                 csize, 8u * EMB_PKT_HEADER_SIZE, 8u * P);
        return false;
    }
    uint64_t b = emb_get_le64(p + EMB_PKT_OFF_TS_BEGIN), e = emb_get_le64(p + EMB_PKT_OFF_TS_END);
    if (e < b) {
        snprintf(why, whylen, "timestamp_end %" PRIu64 " is before timestamp_begin %" PRIu64, e, b);
        return false;
    }
    return true;
}

/* Where the next packet of this trace may start, scanning from `from` in 4-byte steps:
 * the packet magic followed by the trace's uuid. Returns t->size when there is none. */
static size_t resync(const struct emb_trace *t, size_t from)
{
    for (size_t q = from; q + 20 <= t->size; q += 4)
        if (emb_get_le32(t->data + q) == EMB_PKT_MAGIC && !memcmp(t->data + q + 4, t->info.uuid, 16))
            return q;
    return t->size;
}

/* Decodes the events of a packet whose header is valid. Returns false when an event
 * could not be decoded (the ones before it are kept). */
static bool decode_events(struct emb_trace *t, struct ctx_state *c, size_t off,
                          const struct emb_trace_packet *pk)
{
    const uint8_t *p = t->data + off;
    uint32_t content = pk->content_size;
    uint64_t prev = pk->ts_begin;
    uint32_t pos = EMB_PKT_HEADER_SIZE;
    while (pos < content) {
        long long at = (long long)(off + pos);
        if (content - pos < EMB_EVT_HEADER_SIZE) {
            issue(t, at, "ctx %s: %" PRIu32 " bytes before content end, too few for an event header",
                  c->pub.name, content - pos);
            return false;
        }
        const uint8_t *e = p + pos;
        uint32_t ts32 = emb_get_le32(e + EMB_EVT_OFF_TS);
        uint16_t id = emb_get_le16(e + EMB_EVT_OFF_ID);
        uint16_t flags = emb_get_le16(e + EMB_EVT_OFF_FLAGS);
        if (flags & 0xFF00u || (flags & EMB_EVT_FLAG_KIND_MASK) > EMB_EVT_KIND_FAULT) {
            issue(t, at + EMB_EVT_OFF_FLAGS, "ctx %s: event flags 0x%04x are not valid",
                  c->pub.name, flags);
            return false;
        }
        /* 32-bit timestamps unwrap against the previous event, as a CTF reader does. */
        uint64_t ts = (prev & ~(uint64_t)0xFFFFFFFFu) | ts32;
        if (ts < prev)
            ts += (uint64_t)1 << 32;
        const struct emb_catalog_event *ev = emb_catalog_event(t->cat, id);
        if (ev && ev->size > content - pos) {
            issue(t, at, "ctx %s: event %s (%" PRIu32 " bytes) runs past the content end (%" PRIu32
                  " bytes left)", c->pub.name, ev->name, ev->size, content - pos);
            return false;
        }
        struct emb_trace_event *r = push_rec(t, c);
        if (!r)
            return false;
        r->ts = ts;
        r->offset = src_off(t, at);
        r->id = id;
        r->kind = (uint8_t)(flags & EMB_EVT_FLAG_KIND_MASK);
        r->depth = (uint8_t)((flags & EMB_EVT_FLAG_DEPTH_MASK) >> EMB_EVT_FLAG_DEPTH_SHIFT);
        r->payload = e + EMB_EVT_HEADER_SIZE;
        if (!ev) {
            /* Sizes are unknown past this point: keep the bytes, stop the packet. */
            r->type = EMB_TREC_UNKNOWN;
            r->payload_size = content - pos - EMB_EVT_HEADER_SIZE;
            c->pub.unknown++;
            t->sum.unknown++;
            issue(t, at, "ctx %s: unknown event id 0x%04x; the rest of the packet (%" PRIu32
                  " bytes) is not decoded", c->pub.name, id, r->payload_size);
            return false;
        }
        r->type = EMB_TREC_EVENT;
        r->ev = ev;
        r->payload_size = ev->payload_size;
        c->pub.events++;
        t->sum.events++;
        prev = ts;
        pos += ev->size;
    }
    if (pk->ts_end < prev) {
        issue(t, (long long)off + EMB_PKT_OFF_TS_END,
              "ctx %s: timestamp_end %" PRIu64 " is before the packet's last event at %" PRIu64,
              c->pub.name, pk->ts_end, prev);
        return false;
    }
    return true;
}

/* Takes the packet at `off`, whose header is valid and whose bytes are all present.
 * Returns false when it is refused as a whole (it breaks its context's order). */
static bool take_packet(struct emb_trace *t, size_t off)
{
    const uint8_t *p = t->data + off;
    struct emb_trace_packet pk = {
        .offset = src_off(t, off),
        .data = p,
        .seq = emb_get_le32(p + EMB_PKT_OFF_SEQ),
        .ts_begin = emb_get_le64(p + EMB_PKT_OFF_TS_BEGIN),
        .ts_end = emb_get_le64(p + EMB_PKT_OFF_TS_END),
        .content_size = emb_get_le32(p + EMB_PKT_OFF_CONTENT_SIZE) / 8u,
        .discarded = emb_get_le32(p + EMB_PKT_OFF_DISCARDED),
    };
    uint16_t id = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_ID);
    uint16_t kind = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_KIND);
    long ci = t->ctx_index[id];
    if (ci < 0 && (ci = add_context(t, id, kind)) < 0)
        return false;
    struct ctx_state *c = &t->ctx[ci];
    pk.ctx = (uint32_t)ci;

    if (c->have_prev) {
        if (pk.seq <= c->prev_seq) {
            issue(t, (long long)off + EMB_PKT_OFF_SEQ,
                  "ctx %s: packet_seq_num %" PRIu32 " does not follow %" PRIu32 "; packet skipped",
                  c->pub.name, pk.seq, c->prev_seq);
            t->sum.bad_packets++;
            return false;
        }
        if (pk.ts_begin < c->prev_ts_end) {
            issue(t, (long long)off + EMB_PKT_OFF_TS_BEGIN,
                  "ctx %s: timestamp_begin %" PRIu64 " is before the previous packet's end %" PRIu64
                  "; packet skipped", c->pub.name, pk.ts_begin, c->prev_ts_end);
            t->sum.bad_packets++;
            return false;
        }
        uint32_t gap = pk.seq - c->prev_seq - 1;
        if (gap > 0 && pk.discarded >= c->prev_discarded &&
            pk.discarded - c->prev_discarded >= gap) {
            /* The ring overwrote them unread (a stalled consumer): every packet holds an
             * event, and the reader raised this packet's events_discarded by theirs, so
             * they are counted as discarded events, not as packets lost on the way. */
            c->pub.overwritten_packets += gap;
            t->sum.overwritten_packets += gap;
        } else if (gap > 0) {
            struct emb_trace_event *r = push_rec(t, c);
            if (!r)
                return false;
            r->type = EMB_TREC_LOST;
            r->ts = pk.ts_begin;
            r->offset = pk.offset;
            r->count = gap;
            c->pub.lost_packets += gap;
            t->sum.lost_packets += gap;
        }
    }
    if (!c->have_prev)
        c->pub.first_seq = pk.seq;
    c->have_prev = true;
    c->prev_seq = pk.seq;
    c->prev_ts_end = pk.ts_end;
    c->pub.packets++;
    t->sum.packets++;
    if (t->info.start_ts > pk.ts_begin || t->sum.packets == 1)
        t->info.start_ts = pk.ts_begin;
    if (t->info.end_ts < pk.ts_end)
        t->info.end_ts = pk.ts_end;

    pk.clean = decode_events(t, c, off, &pk);

    if (pk.discarded < c->prev_discarded) {
        issue(t, (long long)off + EMB_PKT_OFF_DISCARDED,
              "ctx %s: events_discarded went down from %" PRIu32 " to %" PRIu32, c->pub.name,
              c->prev_discarded, pk.discarded);
        pk.clean = false;
    } else if (pk.discarded > c->prev_discarded) {
        /* Drops happen when the packet after this one could not open: by its close. */
        struct emb_trace_event *r = push_rec(t, c);
        if (!r)
            return false;
        r->type = EMB_TREC_DISCARDED;
        r->ts = pk.ts_end;
        r->offset = pk.offset;
        r->count = pk.discarded - c->prev_discarded;
        c->prev_discarded = pk.discarded;
        c->pub.discarded = pk.discarded;
    }

    if (!grow((void **)&t->pkts, &t->pkt_cap, t->npkts + 1, sizeof *t->pkts)) {
        t->oom = true;
        return false;
    }
    t->pkts[t->npkts++] = pk;
    return true;
}

static void walk_packets(struct emb_trace *t)
{
    uint32_t P = t->info.packet_size;
    size_t off = t->info.header_size;
    uint64_t next_progress = 0;
    char why[256];
    while (off < t->size && !t->oom) {
        if (t->opt->progress && off >= next_progress) {
            t->opt->progress(t->opt->progress_arg, off, t->size);
            next_progress = off + (1u << 20);
        }
        size_t left = t->size - off;
        bool header_ok = left >= EMB_PKT_HEADER_SIZE && packet_header_ok(t, off, why, sizeof why);
        if (header_ok && left >= P) {
            take_packet(t, off);
            off += P;
            continue;
        }
        if (header_ok || (left < EMB_PKT_HEADER_SIZE && left >= 4 &&
                          emb_get_le32(t->data + off) == EMB_PKT_MAGIC)) {
            issue(t, (long long)off, "truncated packet: %zu of %" PRIu32 " bytes", left, P);
            t->sum.bad_packets++;
            break;
        }
        if (left < EMB_PKT_HEADER_SIZE)
            snprintf(why, sizeof why, "%zu trailing bytes are not a packet", left);
        size_t next = resync(t, off + 4);
        if (next < t->size)
            issue(t, (long long)off, "%s; skipped %zu bytes to the next packet", why, next - off);
        else
            issue(t, (long long)off, "%s; no packet follows in the last %zu bytes", why, left);
        t->sum.bad_packets++;
        off = next;
    }
    if (t->opt->progress)
        t->opt->progress(t->opt->progress_arg, t->size, t->size);
}

/* ---- after the walk ---- */

static void finish_contexts(struct emb_trace *t)
{
    for (size_t i = 0; i < t->nctx && !t->oom; i++) {
        struct ctx_state *c = &t->ctx[i];
        /* A dump's table holds the final count: drops after the last packet closed. */
        if (c->pub.table_discarded > c->prev_discarded) {
            uint64_t ts = c->nrecs ? c->recs[c->nrecs - 1].ts : t->info.end_ts;
            struct emb_trace_event *r = push_rec(t, c);
            if (!r)
                break;
            r->type = EMB_TREC_DISCARDED;
            r->ts = ts;
            r->offset = src_off(t, EMB_TSF_FIXED_SIZE);
            r->count = c->pub.table_discarded - c->prev_discarded;
            c->pub.discarded = c->pub.table_discarded;
        }
        t->sum.discarded += c->pub.discarded;
        for (size_t k = 0; k < c->nrecs; k++) {
            struct emb_trace_event *r = &c->recs[k];
            r->ns = emb_trace_ticks_to_ns(r->ts - t->info.start_ts, t->info.clock_hz);
            /* In unsigned arithmetic: a corrupt offset or clock wraps instead of overflowing. */
            r->wall_ns = (int64_t)((uint64_t)t->info.clock_offset_ns +
                                   emb_trace_ticks_to_ns(r->ts, t->info.clock_hz));
        }
        c->pub.recs = c->recs;
        c->pub.nrecs = c->nrecs;
    }
}

static int cmp_rec(const void *a, const void *b)
{
    const struct emb_trace_event *x = *(const struct emb_trace_event *const *)a;
    const struct emb_trace_event *y = *(const struct emb_trace_event *const *)b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->ctx != y->ctx)
        return x->ctx < y->ctx ? -1 : 1;
    return x < y ? -1 : x > y; /* same context: same array, ring order */
}

static void merge(struct emb_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nctx; i++)
        n += t->ctx[i].nrecs;
    if (!n)
        return;
    t->merged = malloc(n * sizeof *t->merged);
    if (!t->merged) {
        t->oom = true;
        return;
    }
    for (size_t i = 0; i < t->nctx; i++)
        for (size_t k = 0; k < t->ctx[i].nrecs; k++)
            t->merged[t->nmerged++] = &t->ctx[i].recs[k];
    qsort(t->merged, t->nmerged, sizeof *t->merged, cmp_rec);
}

/* ---- public ---- */

static struct emb_trace *trace_new(const struct emb_trace_options *opt, const char *name)
{
    struct emb_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ctx_index = malloc(65536 * sizeof *t->ctx_index);
    t->name = strdup(opt->name ? opt->name : name ? name : "trace");
    if (!t->ctx_index || !t->name) {
        free(t->ctx_index);
        free(t->name);
        free(t);
        return NULL;
    }
    memset(t->ctx_index, 0xFF, 65536 * sizeof *t->ctx_index);
    t->cat = opt->catalog;
    t->opt = opt;
    return t;
}

/* The sealed layer's problems, at the file's own offsets. */
static void seal_problem(void *arg, long long offset, bool fatal, const char *msg)
{
    struct emb_trace *t = arg;
    t->issues_raw = true;
    issue(t, offset, "%s", msg);
    t->issues_raw = false;
    if (fatal)
        t->sum.fatal = true;
}

/* A sealed file is checked, and decoded from its copy without the CRCs. */
static bool unseal(struct emb_trace *t)
{
    if (emb_trace_unseal(t->data, t->size, &t->seal, seal_problem, t) != 0) {
        t->oom = true;
        return false;
    }
    if (!t->seal.sealed)
        return true;
    if (t->seal.data == NULL)
        return false;
    t->data = t->seal.data;
    t->size = t->seal.size;
    return true;
}

static struct emb_trace *run(struct emb_trace *t)
{
    if (!unseal(t) || !read_header(t)) {
        t->sum.fatal = true;
    } else {
        if (t->seal.sealed) {
            t->info.version = EMB_TSF_VERSION_SEALED;
            t->info.sealed = true;
            t->info.packets_checked = t->seal.checked;
            t->info.packets_damaged = t->seal.damaged;
        }
        walk_packets(t);
        finish_contexts(t);
        if (!t->opt->no_merge)
            merge(t);
    }
    t->opt = NULL; /* the options need not outlive the call */
    if (t->oom) {
        emb_trace_free(t);
        return NULL;
    }
    return t;
}

struct emb_trace *emb_trace_decode(const uint8_t *data, size_t size,
                                   const struct emb_trace_options *opt)
{
    struct emb_trace *t = trace_new(opt, NULL);
    if (!t)
        return NULL;
    t->data = data;
    t->size = data ? size : 0;
    t->base = opt->base_offset;
    return run(t);
}

struct emb_trace *emb_trace_decode_file(const char *path, const struct emb_trace_options *opt)
{
    struct emb_trace *t = trace_new(opt, path);
    if (!t)
        return NULL;
    char why[256];
    if (!(t->owned = emb_input_read(path, &t->size, why, sizeof why))) {
        issue(t, -1, "%s", why);
        t->sum.fatal = true;
        t->opt = NULL;
        return t;
    }
    t->data = t->owned;
    return run(t);
}

void emb_trace_free(struct emb_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nctx; i++)
        free(t->ctx[i].recs);
    for (size_t i = 0; i < t->nissues; i++)
        free(t->issues[i].message);
    free(t->issues);
    free(t->ctx);
    free(t->ctx_index);
    free(t->pkts);
    free(t->merged);
    free(t->owned);
    free(t->seal.data);
    free(t->name);
    free(t);
}

const struct emb_trace_info *emb_trace_info(const struct emb_trace *t) { return &t->info; }
const struct emb_trace_summary *emb_trace_summary(const struct emb_trace *t) { return &t->sum; }
const char *emb_trace_name(const struct emb_trace *t) { return t->name; }
const struct emb_catalog *emb_trace_catalog(const struct emb_trace *t) { return t->cat; }
size_t emb_trace_context_count(const struct emb_trace *t) { return t->nctx; }

const struct emb_trace_context *emb_trace_context(const struct emb_trace *t, size_t i)
{
    return i < t->nctx ? &t->ctx[i].pub : NULL;
}

long emb_trace_context_index(const struct emb_trace *t, uint16_t id)
{
    return t->ctx_index[id];
}

const struct emb_trace_event *const *emb_trace_events(const struct emb_trace *t, size_t *n)
{
    *n = t->nmerged;
    return t->merged;
}

const struct emb_trace_packet *emb_trace_packets(const struct emb_trace *t, size_t *n)
{
    *n = t->npkts;
    return t->pkts;
}

const struct emb_trace_issue *emb_trace_issues(const struct emb_trace *t, size_t *n)
{
    *n = t->nissues;
    return t->issues;
}

/* ---- fields ---- */

size_t emb_trace_field_chars(const struct emb_catalog_field *f, const uint8_t *payload,
                             const char **text)
{
    const uint8_t *s = payload + f->offset;
    size_t n = 0;
    while (n < f->size && s[n])
        n++;
    *text = (const char *)s;
    return n;
}

char *emb_trace_field_text(const struct emb_catalog_field *f, const uint8_t *payload, char *buf,
                           size_t len)
{
    if (!len)
        return buf;
    if (f->type == EMB_CAT_CHARS) {
        const char *s;
        size_t n = emb_trace_field_chars(f, payload, &s), o = 0;
        buf[o++] = '"';
        for (size_t i = 0; i < n && o + 6 < len; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\')
                o += (size_t)snprintf(buf + o, len - o, "\\%c", c);
            else if (c < 0x20 || c >= 0x7F)
                o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
            else
                buf[o++] = (char)c;
        }
        if (o + 1 < len)
            buf[o++] = '"';
        buf[o < len ? o : len - 1] = 0;
        return buf;
    }
    bool is_signed = f->type >= EMB_CAT_I8 && f->type <= EMB_CAT_I64;
    int64_t sv = emb_catalog_field_get_int(f, payload);
    uint64_t uv = emb_catalog_field_get_uint(f, payload);
    const char *label = emb_catalog_value_label(f, is_signed ? sv : (int64_t)uv);
    if (label)
        snprintf(buf, len, "%s", label);
    else if (f->type == EMB_CAT_BOOL && uv <= 1)
        snprintf(buf, len, "%s", uv ? "true" : "false");
    else if (f->hex)
        snprintf(buf, len, "0x%0*" PRIx64, (int)(2 * f->size), uv);
    else if (is_signed)
        snprintf(buf, len, "%" PRId64, sv);
    else
        snprintf(buf, len, "%" PRIu64, uv);
    return buf;
}
