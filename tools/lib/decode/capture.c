/* The capture file encoder and decoder (docs/formats/capture.md). */
#define _POSIX_C_SOURCE 200809L

#include "capture.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>
#include <zlib.h>

#include "buffer.h"
#include "input_file.h"
#include "stream_kind.h"

/* The CRC-32 of include/emb/crc.h (IEEE 802.3, as zlib), computed by zlib on the host:
 * its table-driven loop checks a capture of a million events in a few milliseconds where
 * the target's 64-byte-table version (built for flash size) takes 0.16 s. The tests check
 * both agree on every file they seal. */
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        uInt chunk = n > 0x40000000u ? 0x40000000u : (uInt)n;
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)crc;
}

struct emb_capture {
    char *name;
    uint8_t *owned;
    const uint8_t *data;
    size_t size;
    uint16_t version;
    struct emb_capture_identity id;
    struct emb_capture_window win;
    struct emb_capture_section sec[EMB_CAP_MAX_SECTIONS];
    size_t nsec;
    struct emb_trace *trace;
    struct emb_problems problems; /* the one that refused the capture, if any */
    bool failed;
};

/* ---- small helpers ---- */

/* NUL-padded text to a C string; control bytes become '?' so no name drives a terminal. */
static void get_text(char *dst, const uint8_t *src, size_t field)
{
    size_t n = 0;
    for (; n < field && src[n]; n++)
        dst[n] = (src[n] < 0x20 || src[n] == 0x7F) ? '?' : (char)src[n];
    dst[n] = 0;
}

static size_t pad8(size_t n) { return (n + 7u) & ~(size_t)7u; }

char *emb_capture_hex(const uint8_t *bytes, size_t len, char *buf)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        buf[2 * i] = digits[bytes[i] >> 4];
        buf[2 * i + 1] = digits[bytes[i] & 15];
    }
    buf[2 * len] = 0;
    return buf;
}

const char *emb_capture_section_name(uint16_t type)
{
    switch (type) {
    case EMB_CAP_SEC_IDENTITY: return "identity";
    case EMB_CAP_SEC_WINDOW: return "window";
    case EMB_CAP_SEC_METADATA: return "metadata";
    case EMB_CAP_SEC_TRACE: return "trace";
    case EMB_CAP_SEC_LOG: return "log";
    case EMB_CAP_SEC_CRASH: return "crash";
    case EMB_CAP_SEC_DESCRIPTOR: return "descriptor";
    case EMB_CAP_SEC_CATALOG: return "catalog";
    default: return "unknown";
    }
}

/* ---- describing a decoded trace ---- */

int emb_capture_describe(const struct emb_trace *t, const char *label, const char *revision,
                         struct emb_capture_identity *id, struct emb_capture_window *win)
{
    const struct emb_trace_info *h = emb_trace_info(t);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    memset(id, 0, sizeof *id);
    id->catalog_checksum = h->catalog_checksum;
    id->build_id_len = h->build_id_len <= 32 ? h->build_id_len : 32;
    memcpy(id->build_id, h->build_id, id->build_id_len);
    id->pointer_size = h->pointer_size;
    id->clock_hz = h->clock_hz;
    id->clock_offset_ns = h->clock_offset_ns;
    id->session_id = h->session_id;
    memcpy(id->uuid, h->uuid, 16);
    snprintf(id->port, sizeof id->port, "%s", h->port);
    snprintf(id->firmware, sizeof id->firmware, "%s", h->firmware);
    snprintf(id->config, sizeof id->config, "%s", h->config);
    snprintf(id->label, sizeof id->label, "%s", label ? label : "");
    snprintf(id->revision, sizeof id->revision, "%s", revision ? revision : "");

    memset(win, 0, sizeof *win);
    win->armed_frame = EMB_CAP_NO_FRAME;
    win->packet_size = h->packet_size;
    const struct emb_catalog_event *armed = emb_catalog_find(emb_trace_catalog(t), "window_armed");
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(t, &n);
    for (size_t i = 0; armed && i < n; i++) {
        if (ev[i]->type != EMB_TREC_EVENT || ev[i]->ev != armed)
            continue;
        for (size_t f = 0; f < armed->nfields; f++) {
            const struct emb_catalog_field *fd = &armed->fields[f];
            if (fd->meaning == EMB_CAT_MEANING_FRAME)
                win->armed_frame = (uint32_t)emb_catalog_field_get_uint(fd, ev[i]->payload);
            else if (!strcmp(fd->name, "capacity"))
                win->capacity = (uint32_t)emb_catalog_field_get_uint(fd, ev[i]->payload);
        }
        break;
    }
    win->stored = s->events;
    win->drops = s->discarded + s->lost_no_context;
    win->writes = win->stored + win->drops;
    win->lost_packets = s->lost_packets;
    win->nrows = emb_trace_context_count(t);
    win->rows = win->nrows ? calloc(win->nrows, sizeof *win->rows) : NULL;
    if (win->nrows && !win->rows)
        return -1;
    for (size_t i = 0; i < win->nrows; i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        struct emb_capture_row *r = &win->rows[i];
        r->id = c->id;
        r->kind = c->kind;
        r->discarded = (uint32_t)c->discarded;
        r->lost_packets = c->lost_packets > UINT32_MAX ? UINT32_MAX : (uint32_t)c->lost_packets;
        r->earlier = c->first_seq;
        r->events = c->events;
        snprintf(r->name, sizeof r->name, "%s", c->name);
    }
    return 0;
}

char *emb_capture_metadata(const struct emb_trace *t, size_t *len)
{
    const struct emb_trace_info *h = emb_trace_info(t);
    char hex[65];
    struct emb_tsdl_params p = {
        .clock_hz = h->clock_hz,
        .clock_offset_ns = h->clock_offset_ns,
        .port = h->port,
        .build_id_hex = emb_capture_hex(h->build_id, h->build_id_len <= 32 ? h->build_id_len : 32, hex),
    };
    memcpy(p.uuid, h->uuid, 16);
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    int rc = emb_catalog_write_tsdl(emb_trace_catalog(t), &p, f);
    if (fclose(f) != 0 || rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* ---- encoding ---- */

static uint8_t *put_section(uint8_t *p, uint16_t type, uint16_t version, const void *body,
                            size_t len)
{
    emb_put_le16(p + EMB_CAP_SEC_OFF_TYPE, type);
    emb_put_le16(p + EMB_CAP_SEC_OFF_VERSION, version);
    emb_put_le32(p + EMB_CAP_SEC_OFF_FLAGS, 0);
    emb_put_le64(p + EMB_CAP_SEC_OFF_LENGTH, len);
    p += EMB_CAP_SEC_HEADER_SIZE;
    if (len)
        memcpy(p, body, len);
    memset(p + len, 0, pad8(len) - len);
    return p + pad8(len);
}

static void encode_identity(uint8_t *b, const struct emb_capture_identity *id)
{
    memset(b, 0, EMB_CAP_ID_SIZE);
    emb_put_le32(b + EMB_CAP_ID_OFF_CATALOG, id->catalog_checksum);
    b[EMB_CAP_ID_OFF_BUILD_ID_LEN] = id->build_id_len;
    b[EMB_CAP_ID_OFF_POINTER_SIZE] = id->pointer_size;
    emb_put_le64(b + EMB_CAP_ID_OFF_CLOCK_HZ, id->clock_hz);
    emb_put_le64(b + EMB_CAP_ID_OFF_CLOCK_OFFSET, (uint64_t)id->clock_offset_ns);
    emb_put_le64(b + EMB_CAP_ID_OFF_SESSION, id->session_id);
    memcpy(b + EMB_CAP_ID_OFF_UUID, id->uuid, 16);
    memcpy(b + EMB_CAP_ID_OFF_BUILD_ID, id->build_id, id->build_id_len);
    emb_put_text(b + EMB_CAP_ID_OFF_PORT, id->port, 28);
    emb_put_text(b + EMB_CAP_ID_OFF_FIRMWARE, id->firmware, 32);
    emb_put_text(b + EMB_CAP_ID_OFF_CONFIG, id->config, 160);
    emb_put_text(b + EMB_CAP_ID_OFF_LABEL, id->label, EMB_CAP_LABEL_MAX);
    emb_put_text(b + EMB_CAP_ID_OFF_REVISION, id->revision, EMB_CAP_REVISION_MAX);
}

static void encode_window(uint8_t *b, const struct emb_capture_window *w)
{
    memset(b, 0, EMB_CAP_WIN_SIZE + w->nrows * EMB_CAP_ROW_SIZE);
    emb_put_le32(b + EMB_CAP_WIN_OFF_ARMED, w->armed_frame);
    emb_put_le32(b + EMB_CAP_WIN_OFF_CAPACITY, w->capacity);
    emb_put_le32(b + EMB_CAP_WIN_OFF_PACKET, w->packet_size);
    emb_put_le32(b + EMB_CAP_WIN_OFF_ROWS, (uint32_t)w->nrows);
    emb_put_le64(b + EMB_CAP_WIN_OFF_WRITES, w->writes);
    emb_put_le64(b + EMB_CAP_WIN_OFF_STORED, w->stored);
    emb_put_le64(b + EMB_CAP_WIN_OFF_DROPS, w->drops);
    emb_put_le64(b + EMB_CAP_WIN_OFF_LOST, w->lost_packets);
    for (size_t i = 0; i < w->nrows; i++) {
        uint8_t *r = b + EMB_CAP_WIN_SIZE + i * EMB_CAP_ROW_SIZE;
        const struct emb_capture_row *row = &w->rows[i];
        emb_put_le16(r + EMB_CAP_ROW_OFF_ID, row->id);
        emb_put_le16(r + EMB_CAP_ROW_OFF_KIND, row->kind);
        emb_put_le32(r + EMB_CAP_ROW_OFF_DISCARDED, row->discarded);
        emb_put_le32(r + EMB_CAP_ROW_OFF_LOST, row->lost_packets);
        emb_put_le32(r + EMB_CAP_ROW_OFF_EARLIER, row->earlier);
        emb_put_le64(r + EMB_CAP_ROW_OFF_EVENTS, row->events);
        emb_put_text(r + EMB_CAP_ROW_OFF_NAME, row->name, 24);
    }
}

uint8_t *emb_capture_encode(const struct emb_capture_parts *p, size_t *len, char *err,
                            size_t errlen)
{
    if (p->identity.build_id_len > 32 || p->window.nrows > EMB_TSF_MAX_CONTEXTS ||
        p->nopaque > sizeof p->opaque / sizeof p->opaque[0] || (!p->trace && p->trace_len)) {
        snprintf(err, errlen, "capture parts out of range");
        return NULL;
    }
    for (size_t i = 0; i < p->nopaque; i++) {
        uint16_t t = p->opaque[i].type;
        if (t <= EMB_CAP_SEC_TRACE) {
            snprintf(err, errlen, "section type %u is not an opaque section", t);
            return NULL;
        }
    }
    size_t win_len = EMB_CAP_WIN_SIZE + p->window.nrows * EMB_CAP_ROW_SIZE;
    size_t total = EMB_CAP_HEADER_SIZE + 4 * EMB_CAP_SEC_HEADER_SIZE + pad8(EMB_CAP_ID_SIZE) +
                   pad8(win_len) + pad8(p->metadata_len) + pad8(p->trace_len) + EMB_CAP_CRC_SIZE;
    for (size_t i = 0; i < p->nopaque; i++)
        total += EMB_CAP_SEC_HEADER_SIZE + pad8(p->opaque[i].length);
    uint8_t *buf = malloc(total);
    uint8_t *scratch = malloc(win_len > EMB_CAP_ID_SIZE ? win_len : EMB_CAP_ID_SIZE);
    if (!buf || !scratch) {
        free(buf);
        free(scratch);
        snprintf(err, errlen, "out of memory for a %zu-byte capture", total);
        return NULL;
    }
    memset(buf, 0, EMB_CAP_HEADER_SIZE);
    emb_put_le32(buf + EMB_CAP_OFF_MAGIC, EMB_CAP_MAGIC);
    emb_put_le16(buf + EMB_CAP_OFF_VERSION, EMB_CAP_VERSION);
    emb_put_le16(buf + EMB_CAP_OFF_HEADER_SIZE, EMB_CAP_HEADER_SIZE);
    emb_put_le64(buf + EMB_CAP_OFF_LENGTH, total);
    emb_put_le32(buf + EMB_CAP_OFF_SECTIONS, (uint32_t)(4 + p->nopaque));
    uint8_t *q = buf + EMB_CAP_HEADER_SIZE;
    encode_identity(scratch, &p->identity);
    q = put_section(q, EMB_CAP_SEC_IDENTITY, 1, scratch, EMB_CAP_ID_SIZE);
    encode_window(scratch, &p->window);
    q = put_section(q, EMB_CAP_SEC_WINDOW, 1, scratch, win_len);
    q = put_section(q, EMB_CAP_SEC_METADATA, 1, p->metadata, p->metadata_len);
    q = put_section(q, EMB_CAP_SEC_TRACE, 1, p->trace, p->trace_len);
    for (size_t i = 0; i < p->nopaque; i++)
        q = put_section(q, p->opaque[i].type, p->opaque[i].version, p->opaque[i].data,
                        p->opaque[i].length);
    emb_put_le32(q, crc32_of(buf, (size_t)(q - buf)));
    free(scratch);
    *len = total;
    return buf;
}

/* ---- decoding ---- */

static bool fail(struct emb_capture *c, long long offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(struct emb_capture *c, long long offset, const char *fmt, ...)
{
    if (c->failed)
        return false;
    c->failed = true;
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(&c->problems, EMB_ERROR, offset, fmt, ap);
    va_end(ap);
    return false;
}

static bool check_header(struct emb_capture *c)
{
    const uint8_t *d = c->data;
    if (c->size < 4)
        return fail(c, (long long)c->size, "truncated: %zu bytes, a capture file has at least %u",
                    c->size, EMB_CAP_HEADER_SIZE + EMB_CAP_CRC_SIZE);
    enum emb_stream_kind kind = emb_stream_kind(d, c->size);
    if (kind != EMB_STREAM_CAPTURE) {
        uint32_t magic = emb_get_le32(d);
        if (kind == EMB_STREAM_TRACE)
            return fail(c, 0, "a trace stream file, not a capture: seal it with 'emb capture'");
        return fail(c, 0, "not a capture file: magic 0x%08" PRIx32 ", expected 0x%08x (\"EMBS\")",
                    magic, EMB_CAP_MAGIC);
    }
    if (c->size < EMB_CAP_HEADER_SIZE + EMB_CAP_CRC_SIZE)
        return fail(c, (long long)c->size, "truncated: %zu bytes, a capture file has at least %u",
                    c->size, EMB_CAP_HEADER_SIZE + EMB_CAP_CRC_SIZE);
    c->version = emb_get_le16(d + EMB_CAP_OFF_VERSION);
    if (c->version != EMB_CAP_VERSION)
        return fail(c, EMB_CAP_OFF_VERSION,
                    "capture version %u is not supported (this tool reads version %u)",
                    c->version, EMB_CAP_VERSION);
    uint16_t hs = emb_get_le16(d + EMB_CAP_OFF_HEADER_SIZE);
    if (hs < EMB_CAP_HEADER_SIZE || hs % 8)
        return fail(c, EMB_CAP_OFF_HEADER_SIZE, "header size %u is not a multiple of 8 from %u",
                    hs, EMB_CAP_HEADER_SIZE);
    uint64_t length = emb_get_le64(d + EMB_CAP_OFF_LENGTH);
    if (length > c->size)
        return fail(c, (long long)c->size, "truncated: %zu of the %" PRIu64 " bytes the header announces",
                    c->size, length);
    if (length < c->size)
        return fail(c, (long long)length, "%zu bytes follow the %" PRIu64 "-byte capture",
                    c->size - (size_t)length, length);
    if (hs > c->size - EMB_CAP_CRC_SIZE)
        return fail(c, EMB_CAP_OFF_HEADER_SIZE, "header size %u runs past the file", hs);
    size_t body = c->size - EMB_CAP_CRC_SIZE;
    uint32_t want = emb_get_le32(d + body), got = crc32_of(d, body);
    if (want != got)
        return fail(c, (long long)body,
                    "CRC-32 mismatch: the file says 0x%08" PRIx32 ", its bytes give 0x%08" PRIx32
                    " (corrupted or altered)", want, got);
    return true;
}

static bool read_sections(struct emb_capture *c)
{
    const uint8_t *d = c->data;
    uint32_t count = emb_get_le32(d + EMB_CAP_OFF_SECTIONS);
    if (count > EMB_CAP_MAX_SECTIONS)
        return fail(c, EMB_CAP_OFF_SECTIONS, "%" PRIu32 " sections, at most %u are allowed", count,
                    EMB_CAP_MAX_SECTIONS);
    size_t at = emb_get_le16(d + EMB_CAP_OFF_HEADER_SIZE);
    size_t end = c->size - EMB_CAP_CRC_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        if (end - at < EMB_CAP_SEC_HEADER_SIZE)
            return fail(c, (long long)at, "section %" PRIu32 " of %" PRIu32 ": header runs past the end",
                        i + 1, count);
        struct emb_capture_section *s = &c->sec[c->nsec];
        s->type = emb_get_le16(d + at + EMB_CAP_SEC_OFF_TYPE);
        s->version = emb_get_le16(d + at + EMB_CAP_SEC_OFF_VERSION);
        s->length = emb_get_le64(d + at + EMB_CAP_SEC_OFF_LENGTH);
        s->offset = at + EMB_CAP_SEC_HEADER_SIZE;
        if (s->length > end - s->offset || pad8((size_t)s->length) > end - s->offset)
            return fail(c, (long long)at + EMB_CAP_SEC_OFF_LENGTH,
                        "%s section: length %" PRIu64 " runs past the end (%zu bytes left)",
                        emb_capture_section_name(s->type), s->length, end - (size_t)s->offset);
        s->data = d + s->offset;
        if (s->type >= EMB_CAP_SEC_IDENTITY && s->type <= EMB_CAP_SEC_CATALOG) {
            if (s->version != 1)
                return fail(c, (long long)at + EMB_CAP_SEC_OFF_VERSION,
                            "%s section version %u is not supported (this tool reads 1)",
                            emb_capture_section_name(s->type), s->version);
            if (emb_capture_section(c, s->type))
                return fail(c, (long long)at, "a second %s section",
                            emb_capture_section_name(s->type));
        }
        c->nsec++;
        at = (size_t)s->offset + pad8((size_t)s->length);
    }
    if (at != end)
        return fail(c, (long long)at, "%zu bytes after the last section, before the CRC", end - at);
    static const uint16_t required[] = {EMB_CAP_SEC_IDENTITY, EMB_CAP_SEC_WINDOW,
                                        EMB_CAP_SEC_METADATA, EMB_CAP_SEC_TRACE};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!emb_capture_section(c, required[i]))
            return fail(c, EMB_CAP_OFF_SECTIONS, "no %s section",
                        emb_capture_section_name(required[i]));
    return true;
}

static bool read_identity(struct emb_capture *c, const struct emb_catalog *cat, bool ignore)
{
    const struct emb_capture_section *s = emb_capture_section(c, EMB_CAP_SEC_IDENTITY);
    if (s->length < EMB_CAP_ID_SIZE)
        return fail(c, (long long)s->offset - 8, "identity section of %" PRIu64 " bytes, %u expected",
                    s->length, EMB_CAP_ID_SIZE);
    const uint8_t *b = s->data;
    struct emb_capture_identity *id = &c->id;
    id->catalog_checksum = emb_get_le32(b + EMB_CAP_ID_OFF_CATALOG);
    id->build_id_len = b[EMB_CAP_ID_OFF_BUILD_ID_LEN];
    id->pointer_size = b[EMB_CAP_ID_OFF_POINTER_SIZE];
    id->clock_hz = emb_get_le64(b + EMB_CAP_ID_OFF_CLOCK_HZ);
    id->clock_offset_ns = (int64_t)emb_get_le64(b + EMB_CAP_ID_OFF_CLOCK_OFFSET);
    id->session_id = emb_get_le64(b + EMB_CAP_ID_OFF_SESSION);
    memcpy(id->uuid, b + EMB_CAP_ID_OFF_UUID, 16);
    memcpy(id->build_id, b + EMB_CAP_ID_OFF_BUILD_ID, 32);
    get_text(id->port, b + EMB_CAP_ID_OFF_PORT, 28);
    get_text(id->firmware, b + EMB_CAP_ID_OFF_FIRMWARE, 32);
    get_text(id->config, b + EMB_CAP_ID_OFF_CONFIG, 160);
    get_text(id->label, b + EMB_CAP_ID_OFF_LABEL, EMB_CAP_LABEL_MAX);
    get_text(id->revision, b + EMB_CAP_ID_OFF_REVISION, EMB_CAP_REVISION_MAX);
    long long at = (long long)s->offset;
    if (id->build_id_len > 32)
        return fail(c, at + EMB_CAP_ID_OFF_BUILD_ID_LEN, "build id length %u exceeds 32",
                    id->build_id_len);
    if (id->clock_hz == 0)
        return fail(c, at + EMB_CAP_ID_OFF_CLOCK_HZ, "clock frequency is 0");
    if (id->catalog_checksum != cat->checksum && !ignore)
        return fail(c, at + EMB_CAP_ID_OFF_CATALOG,
                    "catalogue checksum 0x%08" PRIx32 " differs from the tool's catalogue 0x%08" PRIx32
                    ": the capture was recorded with another catalogue (decode it with that one, "
                    "--catalog FILE)", id->catalog_checksum, cat->checksum);
    return true;
}

static bool read_window(struct emb_capture *c)
{
    const struct emb_capture_section *s = emb_capture_section(c, EMB_CAP_SEC_WINDOW);
    long long at = (long long)s->offset;
    if (s->length < EMB_CAP_WIN_SIZE)
        return fail(c, at - 8, "window section of %" PRIu64 " bytes, at least %u expected",
                    s->length, EMB_CAP_WIN_SIZE);
    const uint8_t *b = s->data;
    struct emb_capture_window *w = &c->win;
    w->armed_frame = emb_get_le32(b + EMB_CAP_WIN_OFF_ARMED);
    w->capacity = emb_get_le32(b + EMB_CAP_WIN_OFF_CAPACITY);
    w->packet_size = emb_get_le32(b + EMB_CAP_WIN_OFF_PACKET);
    uint32_t rows = emb_get_le32(b + EMB_CAP_WIN_OFF_ROWS);
    w->writes = emb_get_le64(b + EMB_CAP_WIN_OFF_WRITES);
    w->stored = emb_get_le64(b + EMB_CAP_WIN_OFF_STORED);
    w->drops = emb_get_le64(b + EMB_CAP_WIN_OFF_DROPS);
    w->lost_packets = emb_get_le64(b + EMB_CAP_WIN_OFF_LOST);
    if (rows > EMB_TSF_MAX_CONTEXTS || s->length != EMB_CAP_WIN_SIZE + (uint64_t)rows * EMB_CAP_ROW_SIZE)
        return fail(c, at + EMB_CAP_WIN_OFF_ROWS,
                    "%" PRIu32 " context rows do not fit the %" PRIu64 "-byte window section", rows,
                    s->length);
    if (w->writes != w->stored + w->drops)
        return fail(c, at + EMB_CAP_WIN_OFF_WRITES,
                    "window: %" PRIu64 " writes are not %" PRIu64 " stored + %" PRIu64 " dropped",
                    w->writes, w->stored, w->drops);
    w->rows = rows ? calloc(rows, sizeof *w->rows) : NULL;
    if (rows && !w->rows)
        return fail(c, -1, "out of memory");
    w->nrows = rows;
    for (uint32_t i = 0; i < rows; i++) {
        const uint8_t *r = b + EMB_CAP_WIN_SIZE + (size_t)i * EMB_CAP_ROW_SIZE;
        struct emb_capture_row *row = &w->rows[i];
        row->id = emb_get_le16(r + EMB_CAP_ROW_OFF_ID);
        row->kind = emb_get_le16(r + EMB_CAP_ROW_OFF_KIND);
        row->discarded = emb_get_le32(r + EMB_CAP_ROW_OFF_DISCARDED);
        row->lost_packets = emb_get_le32(r + EMB_CAP_ROW_OFF_LOST);
        row->earlier = emb_get_le32(r + EMB_CAP_ROW_OFF_EARLIER);
        row->events = emb_get_le64(r + EMB_CAP_ROW_OFF_EVENTS);
        get_text(row->name, r + EMB_CAP_ROW_OFF_NAME, 24);
    }
    return true;
}

/* The identity must say what the trace it describes says: otherwise one of them lies. */
static bool cross_check(struct emb_capture *c)
{
    const struct emb_trace_info *h = emb_trace_info(c->trace);
    const struct emb_capture_identity *id = &c->id;
    long long at = (long long)emb_capture_section(c, EMB_CAP_SEC_IDENTITY)->offset;
    if (h->catalog_checksum != id->catalog_checksum)
        return fail(c, at + EMB_CAP_ID_OFF_CATALOG,
                    "identity says catalogue 0x%08" PRIx32 ", its trace 0x%08" PRIx32,
                    id->catalog_checksum, h->catalog_checksum);
    if (h->clock_hz != id->clock_hz)
        return fail(c, at + EMB_CAP_ID_OFF_CLOCK_HZ,
                    "identity says %" PRIu64 " Hz, its trace %" PRIu64 " Hz", id->clock_hz, h->clock_hz);
    if (memcmp(h->uuid, id->uuid, 16) != 0)
        return fail(c, at + EMB_CAP_ID_OFF_UUID, "identity and trace have different uuids");
    if (h->build_id_len != id->build_id_len || memcmp(h->build_id, id->build_id, id->build_id_len))
        return fail(c, at + EMB_CAP_ID_OFF_BUILD_ID, "identity and trace have different build ids");
    const struct emb_trace_summary *sum = emb_trace_summary(c->trace);
    long long win = (long long)emb_capture_section(c, EMB_CAP_SEC_WINDOW)->offset;
    if (sum->events != c->win.stored)
        return fail(c, win + EMB_CAP_WIN_OFF_STORED,
                    "window says %" PRIu64 " events stored, its trace holds %" PRIu64,
                    c->win.stored, sum->events);
    if (h->session_id != id->session_id || strcmp(h->firmware, id->firmware) ||
        strcmp(h->config, id->config))
        return fail(c, at + EMB_CAP_ID_OFF_SESSION,
                    "identity and the trace's identity block disagree (session, firmware or flags)");
    return true;
}

static struct emb_capture *run(struct emb_capture *c, const struct emb_capture_options *opt)
{
    if (!check_header(c) || !read_sections(c) ||
        !read_identity(c, opt->catalog, opt->ignore_checksum) || !read_window(c))
        return c;
    if (opt->skip_trace)
        return c;
    const struct emb_capture_section *s = emb_capture_section(c, EMB_CAP_SEC_TRACE);
    struct emb_trace_options to = {
        .catalog = opt->catalog,
        .name = c->name,
        .base_offset = s->offset,
        .ignore_checksum = opt->ignore_checksum,
        .no_merge = opt->no_merge,
        .stream = opt->stream,
        .mapped = opt->mapped,
        .progress = opt->progress,
        .progress_arg = opt->progress_arg,
    };
    c->trace = emb_trace_decode(s->data, (size_t)s->length, &to);
    if (!c->trace) {
        fail(c, -1, "out of memory decoding the trace");
        return c;
    }
    const struct emb_problems *tp = emb_trace_problems(c->trace);
    if (emb_trace_summary(c->trace)->fatal || emb_trace_summary(c->trace)->errors) {
        /* A sealed trace decoded cleanly when it was sealed: an error now is a defect. */
        fail(c, tp->n ? tp->items[0].offset : (long long)s->offset, "trace section: %s",
             tp->n ? tp->items[0].message : "does not decode");
        return c;
    }
    cross_check(c);
    return c;
}

static struct emb_capture *capture_new(const struct emb_capture_options *opt, const char *path)
{
    struct emb_capture *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->name = strdup(opt->name ? opt->name : path ? path : "capture");
    if (!c->name) {
        free(c);
        return NULL;
    }
    emb_problems_init(&c->problems, c->name);
    return c;
}

struct emb_capture *emb_capture_decode(const uint8_t *data, size_t size,
                                       const struct emb_capture_options *opt)
{
    struct emb_capture *c = capture_new(opt, NULL);
    if (!c)
        return NULL;
    c->data = data;
    c->size = data ? size : 0;
    return run(c, opt);
}

struct emb_capture *emb_capture_decode_file(const char *path, const struct emb_capture_options *opt)
{
    struct emb_capture *c = capture_new(opt, path);
    if (!c)
        return NULL;
    char why[256];
    size_t n = 0;
    uint8_t *buf = emb_input_read(path, &n, why, sizeof why);
    if (!buf) {
        fail(c, -1, "%s", why);
        return c;
    }
    c->owned = buf;
    c->data = buf;
    c->size = n;
    return run(c, opt);
}

void emb_capture_free(struct emb_capture *c)
{
    if (!c)
        return;
    emb_trace_free(c->trace);
    free(c->win.rows);
    emb_problems_free(&c->problems);
    EMB_FREE_ALL(c->owned, c->name, c);
}

bool emb_capture_failed(const struct emb_capture *c, long long *offset, const char **message)
{
    const struct emb_problem *p = c->problems.n ? &c->problems.items[0] : NULL;
    if (offset)
        *offset = p ? p->offset : -1;
    if (message)
        *message = p ? p->message : c->failed ? "out of memory" : "";
    return c->failed;
}

const struct emb_problems *emb_capture_problems(const struct emb_capture *c)
{
    return &c->problems;
}

const char *emb_capture_name(const struct emb_capture *c) { return c->name; }
uint16_t emb_capture_version(const struct emb_capture *c) { return c->version; }
uint64_t emb_capture_size(const struct emb_capture *c) { return c->size; }
const struct emb_capture_identity *emb_capture_identity(const struct emb_capture *c) { return &c->id; }
const struct emb_capture_window *emb_capture_window(const struct emb_capture *c) { return &c->win; }
const struct emb_trace *emb_capture_trace(const struct emb_capture *c) { return c->trace; }

const struct emb_capture_section *emb_capture_sections(const struct emb_capture *c, size_t *n)
{
    *n = c->nsec;
    return c->sec;
}

int emb_capture_unwrap(const uint8_t *data, size_t size, uint16_t type,
                       const struct emb_catalog *catalog, struct emb_capture_section *out,
                       struct emb_problems *ps)
{
    *out = (struct emb_capture_section){.type = type, .length = size, .data = data};
    if (size < 4u || emb_get_le32(data) != EMB_CAP_MAGIC)
        return 0;
    struct emb_capture_options opt = {.catalog = catalog, .name = ps->file,
                                      .ignore_checksum = true, .skip_trace = true};
    struct emb_capture *c = emb_capture_decode(data, size, &opt);
    if (c == NULL) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        return -1;
    }
    const struct emb_capture_section *s = emb_capture_section(c, type);
    int rc = -1;
    if (c->failed) {
        for (size_t i = 0; i < c->problems.n; i++)
            emb_report(ps, c->problems.items[i].severity, c->problems.items[i].offset, "%s",
                       c->problems.items[i].message);
    } else if (s == NULL || s->length == 0u) {
        emb_report(ps, EMB_ERROR, -1, "the capture holds no %s section",
                   emb_capture_section_name(type));
    } else {
        *out = *s;
        rc = 0;
    }
    emb_capture_free(c);
    return rc;
}

const struct emb_capture_section *emb_capture_section(const struct emb_capture *c, uint16_t type)
{
    for (size_t i = 0; i < c->nsec; i++)
        if (c->sec[i].type == type)
            return &c->sec[i];
    return NULL;
}
