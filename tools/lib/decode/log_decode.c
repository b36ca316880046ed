/* The log stream decoder: frames, per-context record parsing with resynchronisation
 * (log_decode.h, docs/formats/log.md); the text of a record comes from log_format.c. */
#define _POSIX_C_SOURCE 200809L

#include "log_decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <emb/log_format.h>
#include <emb/wire.h>

#include "buffer.h"
#include "frame_decode.h"
#include "log_plan.h"

struct segment {
    size_t at;           /* index in the context's buffer where the segment starts */
    uint64_t offset;     /* stream offset of the frame (or byte) it came from */
    uint32_t pos;        /* ring position of its first byte */
};

struct context {
    uint16_t id;
    bool raw;            /* bare records: offsets are exact, positions are offsets */
    char name[24];
    uint8_t *mem;        /* the bytes received and not yet decoded: buf[0..len) in it */
    uint8_t *buf;
    size_t len, cap;
    struct segment *segs;
    size_t nsegs, seg_cap;
    bool known_pos;
    uint32_t next_pos;   /* ring position after the last byte received */
    bool synced;
    bool from_start;     /* every byte since ring position 0 was received */
    bool first_sync;     /* no sync marker seen yet */
    uint64_t prev_ts;
    bool have_ts;
    uint64_t skipped;    /* bytes skipped in the current resynchronisation */
    uint64_t skip_offset;
    uint64_t announced;  /* dropped records' counts */
};

struct emb_log_decoder {
    struct emb_log_decoder_options opt;
    struct emb_frame_decoder frames;
    struct emb_problems frame_problems; /* the frame decoder's, counted and passed on */
    struct emb_log_hello hello;
    struct emb_log_decoder_summary sum;
    struct context *ctx;
    size_t nctx, ctx_cap;
    uint64_t raw_offset;  /* raw mode: stream offset of the next byte */
    uint64_t data_before_hello;
    bool warned_no_build_id;
    bool *site_marked;   /* by site index: its marked conversion was reported */
    char *text;          /* a planned site's record text, kept across records */
    const struct emb_log_site *last_site; /* the last record's: most often the next one's */
};

static void problem(struct emb_log_decoder *d, uint64_t offset, enum emb_severity severity,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void problem(struct emb_log_decoder *d, uint64_t offset, enum emb_severity severity,
                    const char *fmt, ...)
{
    if (severity != EMB_NOTE)
        d->sum.errors++;
    else
        d->sum.notices++;
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(d->opt.problems, severity, (long long)offset, fmt, ap);
    va_end(ap);
}

static void emit(struct emb_log_decoder *d, struct emb_logrec *r)
{
    if (d->opt.record != NULL)
        d->opt.record(d->opt.arg, r);
}

static struct context *context_for(struct emb_log_decoder *d, uint16_t id)
{
    for (size_t i = 0; i < d->nctx; i++)
        if (d->ctx[i].id == id)
            return &d->ctx[i];
    if (d->nctx >= 4096u)
        return NULL;
    struct context *ctx = emb_array_grow(d->ctx, &d->ctx_cap, d->nctx + 1u, sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    d->ctx = ctx;
    struct context *c = &d->ctx[d->nctx++];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->first_sync = true;
    snprintf(c->name, sizeof c->name, "ctx%u", id);
    return c;
}

/* Stream offset and ring position of buffer index `at`. */
static void where(const struct context *c, size_t at, uint64_t *offset, uint32_t *pos)
{
    size_t s = 0;
    while (s + 1u < c->nsegs && c->segs[s + 1u].at <= at)
        s++;
    if (c->nsegs == 0u) {
        *offset = 0;
        *pos = 0;
        return;
    }
    *pos = c->segs[s].pos + (uint32_t)(at - c->segs[s].at);
    /* A frame's bytes are encoded: its start is the honest offset; raw bytes are exact. */
    *offset = c->raw ? c->segs[s].offset + (at - c->segs[s].at) : c->segs[s].offset;
}

static void consume(struct context *c, size_t n)
{
    if (n == 0u)
        return;
    c->buf += n; /* moved down only when more bytes come (append_bytes) */
    c->len -= n;
    if (c->len == 0u)
        c->buf = c->mem;
    if (c->nsegs == 1u) { /* most often: the bytes of one frame */
        struct segment *g = &c->segs[0];
        size_t past = n > g->at ? n - g->at : 0u;
        g->pos += (uint32_t)past;
        g->offset += c->raw ? past : 0u;
        g->at = n > g->at ? 0u : g->at - n;
        return;
    }
    size_t keep = 0;
    for (size_t s = 0; s < c->nsegs; s++) {
        struct segment g = c->segs[s];
        size_t end = s + 1u < c->nsegs ? c->segs[s + 1u].at : SIZE_MAX;
        if (end <= n)
            continue;
        if (g.at < n) {
            g.pos += (uint32_t)(n - g.at);
            if (c->raw)
                g.offset += n - g.at;
            g.at = 0;
        } else {
            g.at -= n;
        }
        c->segs[keep++] = g;
    }
    c->nsegs = keep;
}

static bool append_bytes(struct context *c, const uint8_t *data, size_t len, uint64_t offset,
                        uint32_t pos, bool raw)
{
    if (len == 0u)
        return true;
    if (len > SIZE_MAX - c->len)
        return false;
    if (c->buf != c->mem) {
        memmove(c->mem, c->buf, c->len);
        c->buf = c->mem;
    }
    uint8_t *mem = emb_array_grow(c->mem, &c->cap, c->len + len, 1u);
    if (mem == NULL)
        return false;
    c->mem = c->buf = mem;
    if (!raw || c->nsegs == 0u) {
        struct segment *segs = emb_array_grow(c->segs, &c->seg_cap, c->nsegs + 1u, sizeof *segs);
        if (segs == NULL)
            return false;
        c->segs = segs;
        c->segs[c->nsegs++] = (struct segment){c->len, offset, pos};
    }
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    return true;
}

static size_t header_bytes(const struct emb_log_decoder *d)
{
    return (size_t)d->opt.db->id_bytes + d->opt.db->ts_bytes;
}

static uint32_t read_id(const struct emb_log_decoder *d, const uint8_t *p)
{
    return d->opt.db->id_bytes == 2u ? emb_get_le16(p) : emb_get_le32(p);
}

static void lose_sync(struct emb_log_decoder *d, struct context *c, uint64_t offset)
{
    (void)d;
    c->synced = false;
    c->skipped = 0;
    c->skip_offset = offset;
}

/* Looks for a sync marker in the buffer: zero id, then the magic after the timestamp.
 * Returns its index, or the count of bytes that can no longer hold the start of one. */
static bool find_sync(const struct emb_log_decoder *d, const struct context *c, size_t *at)
{
    static const uint8_t magic[EMB_LOG_SYNC_MAGIC_SIZE] = EMB_LOG_SYNC_MAGIC;
    size_t hdr = header_bytes(d), size = hdr + EMB_LOG_SYNC_PAYLOAD;
    for (size_t i = 0; i + hdr + sizeof magic <= c->len; i++) {
        if (memcmp(c->buf + i + hdr, magic, sizeof magic) != 0 || read_id(d, c->buf + i) != 0u)
            continue;
        *at = i;
        return true;
    }
    *at = c->len > size ? c->len - size : 0u;
    return false;
}

/* A record whose format has a conversion the decoder cannot reproduce: a finding, marked
 * in its text, and reported once per call site. */
static void report_marked(struct emb_log_decoder *d, const struct emb_log_site *site, uint64_t offset,
                        const char *why, struct emb_logrec *r)
{
    r->marked = true;
    d->sum.marked++;
    size_t i = (size_t)(site - d->opt.db->sites);
    if (d->site_marked[i])
        return;
    d->site_marked[i] = true;
    problem(d, offset, EMB_NOTE, "call site %s:%u, format \"%s\": %s (marked <...> in the text)",
                 site->file, site->line, site->fmt, why);
}

static void emit_log_record(struct emb_log_decoder *d, struct context *c, const struct emb_log_site *site,
                        const uint8_t *rec, size_t size, uint64_t ts, uint64_t offset, uint32_t pos)
{
    size_t hdr = header_bytes(d);
    struct emb_logrec r = {.ctx = c->id, .ctx_name = c->name, .has_ts = d->opt.db->ts_bytes != 0u,
                           .ts = ts, .offset = offset, .ring_pos = pos, .site = site,
                           .id = site->id};
    char *text = NULL;
    size_t text_len = 0;
    if (site->kind == EMB_LOG_SITE_HEXDUMP) {
        uint16_t v = emb_get_le16(rec + hdr);
        r.type = EMB_LREC_HEXDUMP;
        r.text = site->fmt;
        r.text_len = strlen(site->fmt);
        r.data = rec + hdr + 2u;
        r.data_len = v & 0x7FFFu;
        r.clipped = (v & EMB_LOG_HEX_CLIPPED) != 0u;
    } else {
        r.type = EMB_LREC_LOG;
        const char *mark = NULL;
        if (d->opt.no_text) {
            r.text = "";
        } else if (emb_log_format_planned(d->opt.db, site, rec + hdr, d->text, &r.text_len,
                                          &r.clipped)) {
            d->text[r.text_len] = '\0';
            r.text = d->text; /* the plan's path: no text of its own to free */
        } else if (!emb_log_format(d->opt.db, site, rec + hdr, size - hdr, &text,
                                               &text_len, &r.clipped, &mark))
            problem(d, offset, EMB_WARNING, "ctx %s: record of %s:%u: %s", c->name, site->file,
                         site->line, text != NULL ? text : "cannot format");
        else if (mark != NULL)
            report_marked(d, site, offset, mark, &r);
        if (r.text == NULL) {
            r.text = text != NULL ? text : "";
            r.text_len = text_len;
        }
    }
    d->sum.records++;
    emit(d, &r);
    free(text);
}

/* Skips to the next sync marker. False when the buffer holds none yet (or not all of it). */
static bool seek_sync(struct emb_log_decoder *d, struct context *c)
{
    size_t at;
    bool found = find_sync(d, c, &at);
    if (at > 0u) {
        uint32_t pos;
        if (c->skipped == 0u)
            where(c, 0, &c->skip_offset, &pos);
        c->skipped += at;
        d->sum.skipped_bytes += at;
        consume(c, at);
    }
    return found && c->len >= header_bytes(d) + EMB_LOG_SYNC_PAYLOAD;
}

/* What is wrong with the sync marker at the buffer's start, or NULL. */
static const char *bad_sync(const struct emb_log_decoder *d, const struct context *c)
{
    static const uint8_t magic[EMB_LOG_SYNC_MAGIC_SIZE] = EMB_LOG_SYNC_MAGIC;
    const struct emb_logdb *db = d->opt.db;
    const uint8_t *p = c->buf + header_bytes(d);
    uint64_t full = emb_get_le64(p + EMB_LOG_SYNC_OFF_TS);
    if (memcmp(p, magic, sizeof magic) != 0)
        return "sync marker without its magic";
    if (!d->opt.raw && emb_get_le16(p + EMB_LOG_SYNC_OFF_CONTEXT) != c->id)
        return "sync marker of another context";
    if (db->ts_bytes != 0u && emb_get_le32(c->buf + db->id_bytes) != (uint32_t)full)
        return "sync marker whose two timestamps disagree";
    if (c->have_ts && full < c->prev_ts)
        return "sync marker earlier than the record before it";
    return NULL;
}

/* The sync marker at the buffer's start. False when it is not all there yet. */
static bool take_sync(struct emb_log_decoder *d, struct context *c, uint64_t offset, uint32_t pos)
{
    size_t size = header_bytes(d) + EMB_LOG_SYNC_PAYLOAD;
    if (c->len < size)
        return false;
    const char *bad = bad_sync(d, c);
    if (bad != NULL) {
        problem(d, offset, EMB_WARNING, "ctx %s: ring position %" PRIu32 ": %s", c->name, pos, bad);
        consume(c, 1u);
        lose_sync(d, c, offset);
        return true;
    }
    uint64_t full = emb_get_le64(c->buf + header_bytes(d) + EMB_LOG_SYNC_OFF_TS);
    if (!c->synced && (c->skipped > 0u || !c->first_sync)) {
        struct emb_logrec r = {.type = EMB_LREC_RESYNC, .ctx = c->id, .ctx_name = c->name,
                               .has_ts = true, .ts = full, .offset = c->skip_offset,
                               .ring_pos = pos, .count = c->skipped};
        d->sum.resyncs++;
        emit(d, &r);
    }
    c->synced = true;
    c->first_sync = false;
    c->skipped = 0;
    c->prev_ts = full;
    c->have_ts = true;
    consume(c, size);
    return true;
}

/* The dropped record at the buffer's start. False when it is not all there yet. */
static bool take_dropped(struct emb_log_decoder *d, struct context *c, uint64_t ts,
                         uint64_t offset, uint32_t pos)
{
    size_t hdr = header_bytes(d), size = hdr + EMB_LOG_DROPPED_PAYLOAD;
    if (c->len < size)
        return false;
    uint16_t n = emb_get_le16(c->buf + hdr);
    struct emb_logrec r = {.type = EMB_LREC_DROPPED, .ctx = c->id, .ctx_name = c->name,
                           .has_ts = d->opt.db->ts_bytes != 0u, .ts = ts, .offset = offset,
                           .ring_pos = pos, .id = EMB_LOG_ID_DROPPED, .count = n};
    if (n == 0u)
        problem(d, offset, EMB_WARNING,
                "ctx %s: ring position %" PRIu32 ": dropped record with a zero count", c->name, pos);
    c->announced += n;
    d->sum.dropped += n;
    c->prev_ts = ts;
    emit(d, &r);
    consume(c, size);
    return true;
}

/* A record that cannot be sized: its first byte skipped, the context resynchronising. */
static void skip_to_sync(struct emb_log_decoder *d, struct context *c, uint64_t offset)
{
    consume(c, 1u);
    lose_sync(d, c, offset);
    c->skipped = 1;
    d->sum.skipped_bytes++;
}

/* An id that names no call site: what follows is shown, then skipped to the next sync. */
static void take_unknown(struct emb_log_decoder *d, struct context *c, uint32_t id, uint64_t ts,
                         uint64_t offset, uint32_t pos)
{
    const struct emb_logdb *db = d->opt.db;
    bool outside = id < EMB_LOG_ID_BIAS || id - EMB_LOG_ID_BIAS >= db->region_size;
    problem(d, offset, EMB_WARNING, "ctx %s: ring position %" PRIu32 ": id 0x%" PRIx32 " %s; "
            "skipping to the next sync marker", c->name, pos, id,
            outside ? "outside the log metadata region" : "names no call site");
    size_t show = c->len < 32u ? c->len : 32u;
    struct emb_logrec r = {.type = EMB_LREC_UNKNOWN, .ctx = c->id, .ctx_name = c->name,
                           .has_ts = db->ts_bytes != 0u && c->len >= header_bytes(d), .ts = ts,
                           .offset = offset, .ring_pos = pos, .id = id, .data = c->buf,
                           .data_len = show};
    d->sum.unknown++;
    emit(d, &r);
    skip_to_sync(d, c, offset);
}

/* A call site's record at the buffer's start. False when it is not all there yet. */
static bool take_record(struct emb_log_decoder *d, struct context *c,
                        const struct emb_log_site *site, uint64_t ts, uint64_t offset, uint32_t pos)
{
    const struct emb_logdb *db = d->opt.db;
    size_t hdr = header_bytes(d);
    const char *err;
    long args = emb_log_args_size(db, site, c->buf + hdr, c->len - hdr, &err);
    if (args == EMB_LOG_ARGS_MORE) {
        if (hdr + (size_t)db->record_max > c->len)
            return false; /* wait for the rest */
        err = "record longer than the build's maximum";
    }
    if (args < 0 || (args > 0 && hdr + (size_t)args > db->record_max)) {
        problem(d, offset, EMB_WARNING, "ctx %s: ring position %" PRIu32 ": record of %s:%u: %s; "
                "skipping to the next sync marker", c->name, pos, site->file, site->line,
                err != NULL ? err : "record longer than the build's maximum");
        skip_to_sync(d, c, offset);
        return true;
    }
    size_t size = hdr + (size_t)args;
    c->prev_ts = ts;
    emit_log_record(d, c, site, c->buf, size, ts, offset, pos);
    consume(c, size);
    return true;
}

/* Decodes what the context's buffer holds; leaves an incomplete record for later. */
static void parse(struct emb_log_decoder *d, struct context *c)
{
    const struct emb_logdb *db = d->opt.db;
    for (;;) {
        if (!c->synced && !seek_sync(d, c))
            return;
        if (c->len < db->id_bytes)
            return;
        uint64_t offset;
        uint32_t pos;
        where(c, 0, &offset, &pos);
        uint32_t id = read_id(d, c->buf);
        if (id == EMB_LOG_ID_SYNC) {
            if (!take_sync(d, c, offset, pos))
                return;
            continue;
        }
        uint64_t ts = c->prev_ts;
        if (db->ts_bytes != 0u) {
            if (c->len < header_bytes(d))
                return;
            uint32_t ts32 = emb_get_le32(c->buf + db->id_bytes);
            ts = c->prev_ts + (uint32_t)(ts32 - (uint32_t)c->prev_ts);
        }
        const struct emb_log_site *site = NULL;
        if (id == EMB_LOG_ID_DROPPED) {
            if (!take_dropped(d, c, ts, offset, pos))
                return;
        } else if ((site = d->last_site != NULL && d->last_site->id == id
                               ? d->last_site
                               : (d->last_site = emb_logdb_site(db, id))) == NULL) {
            take_unknown(d, c, id, ts, offset, pos);
        } else if (!take_record(d, c, site, ts, offset, pos)) {
            return;
        }
    }
}

/* ---- Frames ---- */

static void read_hello(struct emb_log_decoder *d, const struct emb_frame_view *f)
{
    const uint8_t *p = f->payload;
    const struct emb_logdb *db = d->opt.db;
    if (f->len < EMB_LOG_HELLO_SIZE || emb_get_le32(p + EMB_LOG_HELLO_OFF_MAGIC) != EMB_LOG_HELLO_MAGIC ||
        emb_get_le16(p + EMB_LOG_HELLO_OFF_SIZE) < EMB_LOG_HELLO_SIZE ||
        emb_get_le16(p + EMB_LOG_HELLO_OFF_SIZE) > f->len) {
        problem(d, f->offset, EMB_WARNING, "malformed hello frame (%zu bytes)", f->len);
        return;
    }
    if (p[EMB_LOG_HELLO_OFF_VERSION] != EMB_LOG_HELLO_VERSION) {
        problem(d, f->offset, EMB_WARNING, "hello frame version %u; this emb reads version %u",
                     p[EMB_LOG_HELLO_OFF_VERSION], EMB_LOG_HELLO_VERSION);
        return;
    }
    struct emb_log_hello h = {.seen = true};
    h.clock_hz = emb_get_le64(p + EMB_LOG_HELLO_OFF_CLOCK_HZ);
    h.clock_offset_ns = (int64_t)emb_get_le64(p + EMB_LOG_HELLO_OFF_CLOCK_OFFSET);
    h.id_bytes = p[EMB_LOG_HELLO_OFF_ID_BYTES];
    h.ts_bytes = p[EMB_LOG_HELLO_OFF_TS_BYTES];
    h.ptr_bytes = p[EMB_LOG_HELLO_OFF_PTR_BYTES];
    h.build_id_len = p[EMB_LOG_HELLO_OFF_BUILD_ID_LEN];
    if (h.build_id_len > EMB_LOG_BUILD_ID_MAX) {
        problem(d, f->offset, EMB_WARNING, "hello frame: build id of %u bytes (at most %u)",
                     h.build_id_len, EMB_LOG_BUILD_ID_MAX);
        return;
    }
    memcpy(h.build_id, p + EMB_LOG_HELLO_OFF_BUILD_ID, h.build_id_len);
    memcpy(h.port, p + EMB_LOG_HELLO_OFF_PORT, EMB_LOG_PORT_MAX);
    h.port[EMB_LOG_PORT_MAX] = '\0';
    if (h.build_id_len > 0u && db->build_id_len > 0u &&
        (h.build_id_len != db->build_id_len || memcmp(h.build_id, db->build_id, h.build_id_len) != 0)) {
        char a[80] = "", b[80] = "";
        for (size_t i = 0; i < h.build_id_len; i++)
            sprintf(a + 2 * i, "%02x", h.build_id[i]);
        for (size_t i = 0; i < db->build_id_len && i < 32u; i++)
            sprintf(b + 2 * i, "%02x", db->build_id[i]);
        problem(d, f->offset, EMB_ERROR, "build id mismatch: the stream is from build %s, the "
                     "ELF %s is build %s; refusing to decode", a, db->path, b);
        d->sum.fatal = true;
        return;
    }
    if (h.id_bytes != db->id_bytes || h.ts_bytes != db->ts_bytes || h.ptr_bytes != db->ptr_bytes) {
        problem(d, f->offset, EMB_ERROR, "the stream's records (id %u, timestamp %u, pointer %u "
                     "bytes) are not the ELF's (%u, %u, %u); refusing to decode", h.id_bytes,
                     h.ts_bytes, h.ptr_bytes, db->id_bytes, db->ts_bytes, db->ptr_bytes);
        d->sum.fatal = true;
        return;
    }
    if (h.build_id_len == 0u && !d->opt.no_build_id_check) {
        problem(d, f->offset, EMB_ERROR, "the stream carries no build id, so nothing shows it is "
                     "from the build of %s; refusing to decode (the firmware reads its id from "
                     "the GNU build id note: link it with -Wl,--build-id; or decode anyway with "
                     "--no-build-id-check)", db->path);
        d->sum.fatal = true;
        return;
    }
    if (!d->warned_no_build_id && (h.build_id_len == 0u || db->build_id_len == 0u)) {
        d->warned_no_build_id = true;
        problem(d, f->offset, EMB_NOTE, "%s carries no build id: cannot check that the ELF "
                     "matches the stream", h.build_id_len == 0u ? "the stream" : "the ELF");
    }
    if (h.clock_hz == 0u) {
        problem(d, f->offset, EMB_WARNING, "hello frame: clock frequency 0");
        return;
    }
    if (!d->hello.seen && d->data_before_hello > 0u)
        problem(d, f->offset, EMB_NOTE, "%" PRIu64 " ring bytes arrived before the first hello "
                     "frame and were skipped (a stream joined mid-way)", d->data_before_hello);
    d->hello = h;
}

static void read_data_frame(struct emb_log_decoder *d, const struct emb_frame_view *f)
{
    if (f->len < EMB_LOG_DATA_HEADER) {
        problem(d, f->offset, EMB_WARNING, "data frame of %zu bytes: shorter than its header", f->len);
        return;
    }
    size_t n = f->len - EMB_LOG_DATA_HEADER;
    if (!d->hello.seen) {
        d->data_before_hello += n;
        return;
    }
    uint16_t id = emb_get_le16(f->payload + EMB_LOG_DATA_OFF_CONTEXT);
    uint32_t pos = emb_get_le32(f->payload + EMB_LOG_DATA_OFF_POS);
    struct context *c = context_for(d, id);
    if (c == NULL) {
        problem(d, f->offset, EMB_WARNING, "too many contexts: data frame of context %u skipped", id);
        return;
    }
    if (c->known_pos && pos != c->next_pos) {
        uint32_t gap = pos - c->next_pos;
        if (gap < 0x80000000u) {
            struct emb_logrec r = {.type = EMB_LREC_LOST, .ctx = c->id, .ctx_name = c->name,
                                   .has_ts = c->have_ts, .ts = c->prev_ts, .offset = f->offset,
                                   .ring_pos = c->next_pos, .count = gap};
            d->sum.lost_bytes += gap;
            problem(d, f->offset, EMB_WARNING, "ctx %s: %" PRIu32 " ring bytes missing before this "
                         "frame (ring position %" PRIu32 ", expected %" PRIu32 ")", c->name, gap,
                         pos, c->next_pos);
            emit(d, &r);
        } else {
            problem(d, f->offset, EMB_WARNING, "ctx %s: data frame goes back to ring position %"
                         PRIu32 " (expected %" PRIu32 ")", c->name, pos, c->next_pos);
        }
        c->from_start = false;
        consume(c, c->len);
        lose_sync(d, c, f->offset);
    }
    if (!c->known_pos)
        c->from_start = pos == 0u;
    c->known_pos = true;
    c->next_pos = pos + (uint32_t)n;
    if (!append_bytes(c, f->payload + EMB_LOG_DATA_HEADER, n, f->offset, pos, false)) {
        problem(d, f->offset, EMB_ERROR, "out of memory");
        d->sum.fatal = true;
        return;
    }
    parse(d, c);
}

static void read_stats_frame(struct emb_log_decoder *d, const struct emb_frame_view *f)
{
    if (f->len < EMB_LOG_STATS_SIZE) {
        problem(d, f->offset, EMB_WARNING, "stats frame of %zu bytes: too short", f->len);
        return;
    }
    const uint8_t *p = f->payload;
    struct context *c = context_for(d, emb_get_le16(p + EMB_LOG_STATS_OFF_CONTEXT));
    if (c == NULL)
        return;
    uint32_t total = emb_get_le32(p + EMB_LOG_STATS_OFF_DROPPED);
    uint32_t pending = emb_get_le32(p + EMB_LOG_STATS_OFF_PENDING);
    uint32_t pos = emb_get_le32(p + EMB_LOG_STATS_OFF_POS);
    d->sum.dropped_total += total;
    d->sum.pending += pending;
    if (c->known_pos && pos != c->next_pos)
        problem(d, f->offset, EMB_WARNING, "ctx %s: the stream stops %" PRIu32 " ring bytes short "
                     "of the context's last record", c->name, pos - c->next_pos);
    else if (c->from_start && c->announced + pending != total)
        problem(d, f->offset, EMB_WARNING, "ctx %s: drops do not add up: %" PRIu64 " announced + %"
                     PRIu32 " pending, but the ring counted %" PRIu32, c->name, c->announced,
                     pending, total);
    if (pending > 0u) {
        struct emb_logrec r = {.type = EMB_LREC_PENDING, .ctx = c->id, .ctx_name = c->name,
                               .has_ts = c->have_ts, .ts = c->prev_ts, .offset = f->offset,
                               .count = pending};
        emit(d, &r);
    }
}

static void on_frame(void *arg, const struct emb_frame_view *f)
{
    struct emb_log_decoder *d = arg;
    d->sum.frames++;
    if (d->sum.fatal || f->channel != 0u || f->len == 0u)
        return; /* other channels are someone else's */
    switch (f->payload[0]) {
    case EMB_LOG_FRAME_HELLO: read_hello(d, f); break;
    case EMB_LOG_FRAME_DATA: read_data_frame(d, f); break;
    case EMB_LOG_FRAME_CONTEXT:
        if (f->len >= EMB_LOG_CTX_SIZE) {
            struct context *c = context_for(d, emb_get_le16(f->payload + EMB_LOG_CTX_OFF_CONTEXT));
            if (c != NULL) {
                memcpy(c->name, f->payload + EMB_LOG_CTX_OFF_NAME, EMB_LOG_CTX_NAME_MAX);
                c->name[EMB_LOG_CTX_NAME_MAX] = '\0';
                for (char *q = c->name; *q != '\0'; q++)
                    if ((unsigned char)*q < 0x20u || (unsigned char)*q >= 0x7Fu)
                        *q = '?';
                if (c->name[0] == '\0')
                    snprintf(c->name, sizeof c->name, "ctx%u", c->id);
            }
        } else {
            problem(d, f->offset, EMB_WARNING, "context frame of %zu bytes: too short", f->len);
        }
        break;
    case EMB_LOG_FRAME_STATS: read_stats_frame(d, f); break;
    default:
        problem(d, f->offset, EMB_NOTE, "log frame of unknown kind %u skipped", f->payload[0]);
        break;
    }
}

static void on_frame_problem(void *arg, const struct emb_problem *p)
{
    struct emb_log_decoder *d = arg;
    if (p->severity != EMB_NOTE)
        d->sum.bad_frames++;
    problem(d, (uint64_t)p->offset, p->severity, "%s", p->message);
}

struct emb_log_decoder *emb_log_decoder_new(const struct emb_log_decoder_options *opt)
{
    struct emb_log_decoder *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->opt = *opt;
    if (d->opt.name == NULL)
        d->opt.name = "log";
    d->site_marked = calloc(opt->db->nsites + 1u, sizeof *d->site_marked);
    d->text = malloc(opt->db->plan_text_max + 1u);
    if (d->site_marked == NULL || d->text == NULL) {
        EMB_FREE_ALL(d->site_marked, d->text, d);
        return NULL;
    }
    emb_problems_init_callback(&d->frame_problems, NULL, on_frame_problem, d);
    struct emb_frame_callbacks cb = {on_frame, &d->frame_problems, d};
    if (!opt->raw && !emb_frame_decoder_init(&d->frames, 65536u, &cb)) {
        EMB_FREE_ALL(d->site_marked, d->text, d);
        return NULL;
    }
    if (opt->raw) {
        d->hello.seen = true; /* no identity to wait for */
        struct context *c = context_for(d, opt->raw_context);
        if (c == NULL) {
            emb_log_decoder_free(d);
            return NULL;
        }
        c->raw = true;
    }
    return d;
}

void emb_log_decoder_free(struct emb_log_decoder *d)
{
    if (d == NULL)
        return;
    emb_frame_decoder_free(&d->frames);
    for (size_t i = 0; i < d->nctx; i++) {
        free(d->ctx[i].mem);
        free(d->ctx[i].segs);
    }
    EMB_FREE_ALL(d->ctx, d->site_marked, d->text, d);
}

void emb_log_decoder_feed(struct emb_log_decoder *d, const uint8_t *data, size_t len)
{
    if (d->sum.fatal)
        return;
    if (!d->opt.raw) {
        emb_frame_decoder_feed(&d->frames, data, len);
        return;
    }
    struct context *c = &d->ctx[0];
    if (!append_bytes(c, data, len, d->raw_offset, (uint32_t)d->raw_offset, true)) {
        problem(d, d->raw_offset, EMB_ERROR, "out of memory");
        d->sum.fatal = true;
        return;
    }
    d->raw_offset += len;
    parse(d, c);
}

void emb_log_decoder_finish(struct emb_log_decoder *d)
{
    if (!d->opt.raw && !d->sum.fatal)
        emb_frame_decoder_finish(&d->frames);
    if (d->sum.fatal)
        return;
    if (!d->hello.seen && d->data_before_hello > 0u)
        problem(d, 0, EMB_WARNING, "no hello frame: %" PRIu64 " ring bytes could not be placed",
                     d->data_before_hello);
    for (size_t i = 0; i < d->nctx; i++) {
        struct context *c = &d->ctx[i];
        uint64_t offset;
        uint32_t pos;
        where(c, 0, &offset, &pos);
        if (c->synced && c->len > 0u)
            problem(d, offset, EMB_WARNING, "ctx %s: ring position %" PRIu32 ": the stream ends inside a "
                         "record (%zu bytes of it)", c->name, pos, c->len);
        else if (!c->synced && c->skipped + c->len > 0u)
            problem(d, c->skipped > 0u ? c->skip_offset : offset,
                    c->first_sync ? EMB_WARNING : EMB_NOTE,
                         "ctx %s: %" PRIu64 " bytes without a sync marker to decode them from",
                         c->name, c->skipped + c->len);
    }
}

const struct emb_log_decoder_summary *emb_log_decoder_summary(const struct emb_log_decoder *d)
{
    return &d->sum;
}

const struct emb_log_hello *emb_log_decoder_hello(const struct emb_log_decoder *d)
{
    return &d->hello;
}
