/* The trace stream decoder (trace_decode.h): its state, contexts and records, what
 * follows the walk of the packets, and the public calls. The header is read by
 * trace_header.c, the packets by trace_packet.c. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */

#include "trace_decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "buffer.h"
#include "input_file.h"
#include "trace_decoder.h"

uint64_t emb_trace_source_offset(const struct emb_trace *t, uint64_t off)
{
    return emb_trace_sealed_offset(&t->seal, off) + t->base;
}

void emb_trace_report(struct emb_trace *t, enum emb_severity severity, long long offset,
                      const char *fmt, ...)
{
    t->sum.errors++;
    long long at = offset < 0        ? -1
                   : t->offsets_raw ? offset + (long long)t->base
                                    : (long long)emb_trace_source_offset(t, (uint64_t)offset);
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(t->problems, severity, at, fmt, ap);
    va_end(ap);
}

void emb_trace_release_range(const struct emb_trace *t, uint64_t from, uint64_t to)
{
    const uint8_t *mapped = t->map ? (const uint8_t *)t->map : t->input_mapped ? t->input : NULL;
    size_t mapped_size = t->map ? t->map_size : t->input_size;
    if (mapped == NULL || to > mapped_size || from >= to)
        return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t step = (uintptr_t)(page > 0 ? page : 4096);
    /* Whole pages only: a page shared with bytes outside the range is kept. */
    uintptr_t lo = ((uintptr_t)(mapped + from) + step - 1u) / step * step;
    uintptr_t hi = (uintptr_t)(mapped + to) / step * step;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void emb_trace_release_before(const struct emb_trace *t, uint64_t input_off)
{
    emb_trace_release_range(t, 0, input_off);
}

const uint8_t *emb_trace_packet_bytes(struct emb_trace *t, size_t off)
{
    uint32_t P = t->info.packet_size;
    if (!t->seal.sealed)
        return t->data + off;
    const uint8_t *at = emb_trace_unsealed_in_place(&t->seal, off, P);
    if (at != NULL)
        return at;
    /* Found by resynchronisation at an odd offset: it crosses a CRC, so it is copied. */
    uint8_t **copies = emb_array_grow(t->copies, &t->copies_cap, t->ncopies + 1, sizeof *copies);
    uint8_t *copy = copies ? malloc(P) : NULL;
    if (copies)
        t->copies = copies;
    if (copy == NULL) {
        t->oom = true;
        return NULL;
    }
    t->copies[t->ncopies++] = copy;
    return emb_trace_unsealed_bytes(&t->seal, off, P, copy);
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

/* The multiplies. With 1e9 = whole*hz + f (f < hz) and F = ceil(2^128 * f / hz) =
 * (2^128 * f + e) / hz, 0 <= e < hz: floor(x*1e9/hz) = x*whole + floor(x*f/hz), and
 * x*F / 2^128 = x*f/hz + x*e / (hz * 2^128). The fraction of x*f/hz is at most (hz-1)/hz
 * and x*e < 2^128 for every 64-bit x, so the added term stays under 1/hz:
 * floor(x*F / 2^128) = floor(x*f/hz), and the sum, truncated to 64 bits, is the
 * division's result for every tick count. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 clock_u128;

static void clock_choose_factors(struct emb_trace_clock *c, uint64_t hz)
{
    if (hz == 0 || hz == 1000000000u) { /* a tick is a nanosecond */
        c->whole = 1;
        return;
    }
    uint64_t f = 1000000000u % hz;
    /* 2^128 * f / hz by long division in base 2^64 (each remainder below hz). */
    clock_u128 n = (clock_u128)f << 64;
    c->frac_hi = (uint64_t)(n / hz);
    n = (clock_u128)(uint64_t)(n % hz) << 64;
    c->frac_lo = (uint64_t)(n / hz);
    if (n % hz != 0 && ++c->frac_lo == 0) /* rounded up: F < 2^128 as f < hz */
        c->frac_hi++;
    c->whole = 1000000000u / hz;
}

static inline uint64_t clock_scaled(const struct emb_trace_clock *c, uint64_t ticks)
{
    clock_u128 lo = (clock_u128)ticks * c->frac_lo;
    clock_u128 hi = (clock_u128)ticks * c->frac_hi + (uint64_t)(lo >> 64); /* < 2^128 */
    return ticks * c->whole + (uint64_t)(hi >> 64);
}
#else
static void clock_choose_factors(struct emb_trace_clock *c, uint64_t hz)
{
    (void)c, (void)hz; /* no 128-bit product: every conversion divides */
}

static inline uint64_t clock_scaled(const struct emb_trace_clock *c, uint64_t ticks)
{
    return emb_trace_ticks_to_ns(ticks, c->hz);
}
#endif

void emb_trace_clock_init(struct emb_trace_clock *c, uint64_t hz, uint64_t start_ts,
                          int64_t offset_ns)
{
    memset(c, 0, sizeof *c);
    c->hz = hz;
    c->start_ts = start_ts;
    c->offset_ns = offset_ns;
    clock_choose_factors(c, hz);
}

uint64_t emb_trace_clock_ns(const struct emb_trace_clock *c, uint64_t ticks)
{
    return clock_scaled(c, ticks);
}

void emb_trace_clock_times(const struct emb_trace_clock *c, uint64_t ts, uint64_t *ns,
                           int64_t *wall_ns)
{
    *ns = clock_scaled(c, ts - c->start_ts);
    /* In unsigned arithmetic: a corrupt offset or clock wraps instead of overflowing. */
    *wall_ns = (int64_t)((uint64_t)c->offset_ns + clock_scaled(c, ts));
}

/* ---- contexts ---- */

long emb_trace_add_context(struct emb_trace *t, uint16_t id, uint16_t kind)
{
    struct ctx_state *ctx = emb_array_grow(t->ctx, &t->ctx_cap, t->nctx + 1, sizeof *ctx);
    if (!ctx) {
        t->oom = true;
        return -1;
    }
    t->ctx = ctx;
    struct ctx_state *c = &t->ctx[t->nctx];
    memset(c, 0, sizeof *c);
    c->pub.id = id;
    c->pub.kind = kind;
    snprintf(c->pub.name, sizeof c->pub.name, "ctx %u", id);
    t->ctx_index[id] = (int32_t)t->nctx;
    return (long)t->nctx++;
}

void emb_trace_note_record(struct emb_trace *t, struct ctx_state *c, uint64_t ts)
{
    if (c->scratch_held) { /* the marker held comes first */
        c->scratch_held = false;
        emb_trace_note_record(t, c, c->scratch.ts);
    }
    if (c->nseen++ != 0 && ts < c->last_seen_ts)
        c->back_in_time = true;
    c->last_seen_ts = ts;
    if (ts > t->last_ts)
        t->last_ts = ts;
}

struct emb_trace_event *emb_trace_push_record(struct emb_trace *t, struct ctx_state *c)
{
    if (t->stream) {
        if (c->scratch_held) {
            c->scratch_held = false;
            emb_trace_note_record(t, c, c->scratch.ts);
        }
        memset(&c->scratch, 0, sizeof c->scratch);
        c->scratch_held = true;
        c->scratch.ctx = (uint32_t)(c - t->ctx);
        c->scratch.context_id = c->pub.id;
        return &c->scratch;
    }
    struct emb_trace_event *recs = emb_array_grow(c->recs, &c->cap, c->nrecs + 1, sizeof *recs);
    if (!recs) {
        t->oom = true;
        return NULL;
    }
    c->recs = recs;
    struct emb_trace_event *r = &c->recs[c->nrecs++];
    memset(r, 0, sizeof *r);
    r->ctx = (uint32_t)(c - t->ctx);
    r->context_id = c->pub.id;
    return r;
}

bool emb_trace_push_marker(struct emb_trace *t, struct ctx_state *c, uint8_t type, uint64_t ts,
                           uint64_t offset, uint32_t count)
{
    struct emb_trace_event *r = emb_trace_push_record(t, c);
    if (!r)
        return false;
    r->type = type;
    r->ts = ts;
    r->offset = offset;
    r->count = count;
    return true;
}

/* ---- after the walk ---- */

/* The clock prepared once the walk has set start_ts: info does not change after. */
static void prepare_clock(struct emb_trace *t)
{
    emb_trace_clock_init(&t->clock, t->info.clock_hz, t->info.start_ts, t->info.clock_offset_ns);
    t->clock_ready = true;
}

static void finish_contexts(struct emb_trace *t)
{
    prepare_clock(t);
    for (size_t i = 0; i < t->nctx && !t->oom; i++) {
        struct ctx_state *c = &t->ctx[i];
        /* A dump's table holds the final count: drops after the last packet closed. */
        if (c->pub.table_discarded > c->prev_discarded) {
            uint64_t ts = c->nrecs         ? c->recs[c->nrecs - 1].ts
                          : c->scratch_held ? c->scratch.ts
                          : c->nseen        ? c->last_seen_ts
                                            : t->info.end_ts;
            c->final_discarded = c->pub.table_discarded - c->prev_discarded;
            c->final_ts = ts;
            if (!emb_trace_push_marker(t, c, EMB_TREC_DISCARDED, ts,
                                       emb_trace_source_offset(t, EMB_TSF_FIXED_SIZE),
                                       c->pub.table_discarded - c->prev_discarded))
                break;
            c->pub.discarded = c->pub.table_discarded;
        }
        t->sum.discarded += c->pub.discarded;
        for (size_t k = 0; k < c->nrecs; k++) {
            struct emb_trace_event *r = &c->recs[k];
            emb_trace_set_times(t, r);
            if (r->ts > t->last_ts)
                t->last_ts = r->ts;
        }
        if (c->scratch_held) {
            c->scratch_held = false;
            emb_trace_note_record(t, c, c->scratch.ts);
        }
        t->nrecords += t->stream ? c->nseen : c->nrecs;
        c->pub.recs = c->recs;
        c->pub.nrecs = c->nrecs;
        emb_trace_order_context(t, c);
    }
}

/* Before the walk has prepared the clock: the division (kept out of line, so that the
 * prepared path saves no registers). */
__attribute__((noinline)) static void set_times_dividing(const struct emb_trace *t,
                                                         struct emb_trace_event *r)
{
    r->ns = emb_trace_ticks_to_ns(r->ts - t->info.start_ts, t->info.clock_hz);
    r->wall_ns = (int64_t)((uint64_t)t->info.clock_offset_ns +
                           emb_trace_ticks_to_ns(r->ts, t->info.clock_hz));
}

void emb_trace_set_times(const struct emb_trace *t, struct emb_trace_event *r)
{
    if (!t->clock_ready) {
        set_times_dividing(t, r);
        return;
    }
    const struct emb_trace_clock *c = &t->clock; /* info's clock is final once walked */
    r->ns = clock_scaled(c, r->ts - c->start_ts);
    /* In unsigned arithmetic: a corrupt offset or clock wraps instead of overflowing. */
    r->wall_ns = (int64_t)((uint64_t)c->offset_ns + clock_scaled(c, r->ts));
}

/* ---- public ---- */

static struct emb_trace *trace_new(const struct emb_trace_options *opt, const char *name)
{
    struct emb_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ctx_index = malloc(65536 * sizeof *t->ctx_index);
    t->event_count = calloc(65536, sizeof *t->event_count);
    t->name = strdup(opt->name ? opt->name : name ? name : "trace");
    if (!t->ctx_index || !t->event_count || !t->name) {
        free(t->ctx_index);
        free(t->event_count);
        free(t->name);
        free(t);
        return NULL;
    }
    memset(t->ctx_index, 0xFF, 65536 * sizeof *t->ctx_index);
    t->cat = opt->catalog;
    t->opt = opt;
    t->stream = opt->stream;
    emb_problems_init(&t->kept, t->name);
    t->kept.max_kept = EMB_TRACE_MAX_ISSUES;
    t->problems = opt->problems ? opt->problems : &t->kept;
    return t;
}

/* The sealed layer's problems, at the file's own offsets; an error refuses the file. */
static void seal_problem(void *arg, const struct emb_problem *p)
{
    struct emb_trace *t = arg;
    t->offsets_raw = true;
    emb_trace_report(t, p->severity, p->offset, "%s", p->message);
    t->offsets_raw = false;
    if (p->severity == EMB_ERROR)
        t->sum.fatal = true;
}

/* A sealed file is checked, and decoded through its view without the CRCs. */
static bool unseal(struct emb_trace *t)
{
    struct emb_problems seal_problems;
    emb_problems_init_callback(&seal_problems, NULL, seal_problem, t);
    bool mapped = t->data == t->map || (t->input_mapped && t->data == t->input);
    if (emb_trace_unseal(t->data, t->size, mapped, &t->seal, &seal_problems) != 0) {
        t->oom = true;
        return false;
    }
    if (!t->seal.sealed)
        return true;
    if (t->seal.header == NULL)
        return false;
    t->data = t->seal.header;
    t->size = t->seal.size;
    return true;
}

/* The end of a decode: the options need not outlive the call. */
static struct emb_trace *finish(struct emb_trace *t)
{
    t->opt = NULL;
    t->problems = NULL;
    if (t->oom) {
        emb_trace_free(t);
        return NULL;
    }
    return t;
}

/* emb_trace_options.continues: each context of the earlier decode where it left off. */
static void carry_on(struct emb_trace *t, const struct emb_trace *prev)
{
    for (size_t i = 0; i < prev->nctx; i++) {
        const struct ctx_state *p = &prev->ctx[i];
        long ci = t->ctx_index[p->pub.id];
        if (ci < 0 && (ci = emb_trace_add_context(t, p->pub.id, p->pub.kind)) < 0)
            return;
        struct ctx_state *c = &t->ctx[ci];
        c->have_prev = p->have_prev;
        c->prev_seq = p->prev_seq;
        c->prev_ts_end = p->prev_ts_end;
        c->prev_discarded = p->prev_discarded;
        c->pub.first_seq = p->pub.first_seq;
        c->pub.discarded = p->pub.discarded;
    }
    if (prev->sum.packets > 0 || prev->start_known) {
        t->info.start_ts = prev->info.start_ts;
        t->info.end_ts = prev->info.end_ts;
        t->start_known = true;
    }
}

static struct emb_trace *run(struct emb_trace *t)
{
    if (!unseal(t) || !emb_trace_read_header(t)) {
        t->sum.fatal = true;
    } else {
        if (t->opt->continues != NULL)
            carry_on(t, t->opt->continues);
        if (t->seal.sealed) {
            t->info.version = EMB_TSF_VERSION_SEALED;
            t->info.sealed = true;
            t->info.packets_checked = t->seal.checked;
            t->info.packets_damaged = t->seal.damaged;
        }
        emb_trace_walk_packets(t);
        finish_contexts(t);
        t->merge_tried = t->opt->no_merge || t->stream; /* none wanted: none built later */
    }
    return finish(t);
}

struct emb_trace *emb_trace_decode(const uint8_t *data, size_t size,
                                   const struct emb_trace_options *opt)
{
    struct emb_trace *t = trace_new(opt, NULL);
    if (!t)
        return NULL;
    t->data = t->input = data;
    t->input_mapped = opt->mapped;
    t->input_size = data ? size : 0;
    t->size = data ? size : 0;
    t->base = opt->base_offset;
    return run(t);
}

/* Maps a regular file within the input limit (read only, pages the system can take back
 * and read again); false for anything else, which is then read whole. */
static bool map_file(struct emb_trace *t, const char *path)
{
    int fd = strcmp(path, "-") ? open(path, O_RDONLY) : -1;
    struct stat st;
    bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
              (uint64_t)st.st_size <= emb_input_limit() && (uint64_t)st.st_size <= SIZE_MAX;
    if (ok) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        ok = m != MAP_FAILED;
        if (ok) {
            madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
            t->map = m;
            t->map_size = t->size = (size_t)st.st_size;
            t->data = m;
        }
    }
    if (fd >= 0)
        close(fd);
    return ok;
}

struct emb_trace *emb_trace_decode_file(const char *path, const struct emb_trace_options *opt)
{
    struct emb_trace *t = trace_new(opt, path);
    if (!t)
        return NULL;
    if (map_file(t, path))
        return run(t);
    char why[256];
    if (!(t->owned = emb_input_read(path, &t->size, why, sizeof why))) {
        emb_trace_report(t, EMB_ERROR, -1, "%s", why);
        t->sum.fatal = true;
        return finish(t);
    }
    t->data = t->owned;
    return run(t);
}

void emb_trace_free(struct emb_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nctx; i++) {
        free(t->ctx[i].recs);
        free(t->ctx[i].sorted);
    }
    free(t->event_count);
    emb_problems_free(&t->kept);
    free(t->ctx);
    free(t->ctx_index);
    free(t->pkts);
    free(t->merged);
    free(t->owned);
    if (t->map != NULL)
        munmap(t->map, t->map_size);
    free(t->seal.header);
    for (size_t i = 0; i < t->ncopies; i++)
        free(t->copies[i]);
    free(t->copies);
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
    if (!t->merge_tried) {
        /* Built on first use: the decode itself does not pay for an order it may not need. */
        struct emb_trace *m = (struct emb_trace *)t;
        m->merge_tried = true;
        emb_trace_merge(m);
    }
    *n = t->nmerged;
    return t->merged;
}

size_t emb_trace_record_count(const struct emb_trace *t) { return t->nrecords; }
uint64_t emb_trace_last_ts(const struct emb_trace *t) { return t->last_ts; }
uint64_t emb_trace_event_count(const struct emb_trace *t, uint16_t id)
{
    return t->event_count[id];
}

const struct emb_trace_packet *emb_trace_packets(const struct emb_trace *t, size_t *n)
{
    *n = t->npkts;
    return t->pkts;
}

const struct emb_problems *emb_trace_problems(const struct emb_trace *t) { return &t->kept; }

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
