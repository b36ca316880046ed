/* The trace stream file's header: the fixed part, the context table and the extension
 * blocks (docs/formats/trace.md). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "stream_kind.h"
#include "text.h"
#include "trace_decoder.h"

/* Copies a NUL-padded name, replacing control bytes (C0, DEL, and C1 or malformed UTF-8)
 * with '?' so a name never drives a terminal, whatever prints it. */
static void copy_name(char *dst, size_t dstlen, const uint8_t *src, size_t srclen)
{
    size_t n = 0, o = 0;
    while (n < srclen && o + 1 < dstlen && src[n]) {
        size_t u = src[n] >= 0x80 ? emb_text_utf8_printable(src + n, srclen - n)
                                  : (size_t)(src[n] >= 0x20 && src[n] != 0x7F);
        if (u == 0) {
            dst[o++] = '?';
            n++;
            continue;
        }
        if (o + u >= dstlen)
            break;
        memcpy(dst + o, src + n, u);
        o += u;
        n += u;
    }
    dst[o] = 0;
}

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
            emb_trace_report(t, EMB_ERROR, (long long)at + EMB_TSF_EXT_OFF_SIZE,
                  "header extension 0x%08" PRIx32 ": size %" PRIu32 " is not a multiple of 4 "
                  "from 8 to the %" PRIu32 " header bytes left", tag, size, end - at);
            return false;
        }
        if (tag == EMB_TSF_EXT_IDENTITY) {
            if (size < EMB_TSF_IDENTITY_SIZE) {
                emb_trace_report(t, EMB_ERROR, (long long)at + EMB_TSF_EXT_OFF_SIZE,
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

/* The magic and the fixed part's size: false when this is no trace stream file. */
static bool check_magic(struct emb_trace *t)
{
    if (t->size < 4) {
        emb_trace_report(t, EMB_ERROR, 0, "truncated header: %zu bytes, a trace stream file has at least %u",
              t->size, EMB_TSF_FIXED_SIZE);
        return false;
    }
    /* A sealed file's data is its header alone: the packets are read through the view. */
    size_t held = t->seal.sealed ? t->seal.header_size : t->size;
    enum emb_stream_kind kind = emb_stream_kind(t->data, held);
    if (kind != EMB_STREAM_TRACE) {
        uint32_t magic = emb_get_le32(t->data + EMB_TSF_OFF_MAGIC);
        if (kind == EMB_STREAM_TRACE_PACKET)
            emb_trace_report(t, EMB_ERROR, 0, "a bare CTF packet, not a trace stream file (magic \"EMBT\")");
        else
            emb_trace_report(t, EMB_ERROR, 0, "not a trace stream file: magic 0x%08" PRIx32 ", expected 0x%08x (\"EMBT\")",
                  magic, EMB_TSF_MAGIC);
        return false;
    }
    if (t->size < EMB_TSF_FIXED_SIZE) {
        emb_trace_report(t, EMB_ERROR, (long long)t->size, "truncated header: %zu of %u bytes", t->size,
              EMB_TSF_FIXED_SIZE);
        return false;
    }
    return true;
}

/* The fixed part's fields, as read (checked by check_fixed). */
static void read_fixed(struct emb_trace *t)
{
    const uint8_t *d = t->data;
    struct emb_trace_info *h = &t->info;
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
}

/* The fixed part's values; *min_header gets the bytes the context table ends at. */
static bool check_fixed(struct emb_trace *t, uint32_t *min_header)
{
    struct emb_trace_info *h = &t->info;
    if (h->version != EMB_TSF_VERSION) {
        emb_trace_report(t, EMB_ERROR, EMB_TSF_OFF_VERSION,
              "trace stream version %u is not supported (this tool reads %u and %u)",
              h->version, EMB_TSF_VERSION, EMB_TSF_VERSION_SEALED);
        return false;
    }
    if (h->context_count > EMB_TSF_MAX_CONTEXTS) {
        emb_trace_report(t, EMB_ERROR, EMB_TSF_OFF_CONTEXT_COUNT, "context count %u exceeds %u", h->context_count,
              EMB_TSF_MAX_CONTEXTS);
        return false;
    }
    *min_header = EMB_TSF_FIXED_SIZE + (uint32_t)h->context_count * EMB_TSF_CONTEXT_SIZE;
    if (h->header_size < *min_header) {
        emb_trace_report(t, EMB_ERROR, EMB_TSF_OFF_HEADER_SIZE,
              "header size %u is smaller than its %u contexts need (%" PRIu32 " bytes)",
              h->header_size, h->context_count, *min_header);
        return false;
    }
    if (h->header_size > t->size) {
        emb_trace_report(t, EMB_ERROR, (long long)t->size, "truncated header: %zu of %u bytes", t->size,
              h->header_size);
        return false;
    }
    uint8_t build_id_len = t->data[EMB_TSF_OFF_BUILD_ID_LEN];
    if (build_id_len > EMB_TSF_BUILD_ID_MAX) {
        emb_trace_report(t, EMB_ERROR, EMB_TSF_OFF_BUILD_ID_LEN, "build id length %u exceeds %u", build_id_len,
              EMB_TSF_BUILD_ID_MAX);
        return false;
    }
    if (!is_pow2(h->packet_size) || h->packet_size < 256 || h->packet_size > 65536) {
        emb_trace_report(t, EMB_ERROR, EMB_TSF_OFF_PACKET_SIZE,
              "packet size %" PRIu32 " is not a power of two from 256 to 65536", h->packet_size);
        return false;
    }
    if (h->clock_hz == 0) {
        emb_trace_report(t, EMB_ERROR, EMB_TSF_OFF_CLOCK_HZ, "clock frequency is 0");
        return false;
    }
    if (h->catalog_checksum != t->cat->checksum) {
        emb_trace_report(t, t->opt->ignore_checksum ? EMB_WARNING : EMB_ERROR, EMB_TSF_OFF_CATALOG,
              "catalogue checksum 0x%08" PRIx32 " differs from the catalogue's 0x%08" PRIx32
              ": the trace was recorded with another catalogue",
              h->catalog_checksum, t->cat->checksum);
        if (!t->opt->ignore_checksum)
            return false;
    }
    return true;
}

static bool read_context_table(struct emb_trace *t)
{
    const uint8_t *d = t->data;
    struct emb_trace_info *h = &t->info;
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
            emb_trace_report(t, EMB_WARNING, (long long)at, "context %u listed twice in the context table", id);
            continue;
        }
        if (kind > EMB_CONTEXT_THREAD)
            emb_trace_report(t, EMB_WARNING, (long long)at + EMB_TSF_CTX_OFF_KIND, "context %u: unknown kind %u", id, kind);
        long ci = emb_trace_add_context(t, id, kind);
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
    return true;
}

bool emb_trace_read_header(struct emb_trace *t)
{
    uint32_t min_header;
    if (!check_magic(t))
        return false;
    read_fixed(t);
    return check_fixed(t, &min_header) && read_context_table(t) &&
           read_extensions(t, min_header);
}
