/* The log stream decoder: frames, per-context record parsing with resynchronisation, and
 * formatting with the host's printf (log_decode.h, docs/formats/log.md). */
#define _POSIX_C_SOURCE 200809L

#include "log_decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <emb/log_format.h>
#include <emb/wire.h>

#include "frame_decode.h"

/* ---- A growable text buffer ---- */

struct emb__buf {
    char *p;
    size_t len, cap;
    bool oom;
};

static void emb__buf_add(struct emb__buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1u > b->cap) {
        size_t cap = b->cap ? b->cap : 128u;
        while (cap < b->len + n + 1u)
            cap *= 2u;
        char *q = realloc(b->p, cap);
        if (q == NULL) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void emb__buf_printf(struct emb__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void emb__buf_printf(struct emb__buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        emb__buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1u);
    if (big == NULL) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1u, fmt, ap);
    va_end(ap);
    emb__buf_add(b, big, (size_t)n);
    free(big);
}

/* ---- Arguments ---- */

long emb_log_args_size(const struct emb_logdb *db, const struct emb_log_site *site,
                       const uint8_t *args, size_t avail, const char **err)
{
    size_t off = 0;
    *err = NULL;
    if (site->kind == EMB_LOG_SITE_HEXDUMP) {
        if (avail < 2u)
            return EMB_LOG_ARGS_MORE;
        uint16_t v = emb_get_le16(args);
        size_t n = v & 0x7FFFu;
        if (n > db->hex_max || ((v & EMB_LOG_HEX_CLIPPED) != 0u && n != db->hex_max)) {
            *err = "hexdump length out of bounds";
            return EMB_LOG_ARGS_BAD;
        }
        return avail >= 2u + n ? (long)(2u + n) : EMB_LOG_ARGS_MORE;
    }
    for (size_t i = 0; i < site->nargs; i++) {
        size_t need;
        switch (site->sig[i]) {
        case EMB_LOG_ARG_I32:
        case EMB_LOG_ARG_U32: need = 4u; break;
        case EMB_LOG_ARG_PTR: need = db->ptr_bytes; break;
        case EMB_LOG_ARG_STR: {
            if (off >= avail)
                return EMB_LOG_ARGS_MORE;
            uint8_t b = args[off];
            size_t n = b & 0x7Fu;
            if (n > db->str_max || ((b & EMB_LOG_STR_CLIPPED) != 0u && n != db->str_max && n != 0u)) {
                *err = "%s length out of bounds";
                return EMB_LOG_ARGS_BAD;
            }
            need = 1u + n;
            break;
        }
        default: need = 8u; break;
        }
        if (avail - off < need)
            return EMB_LOG_ARGS_MORE;
        off += need;
    }
    return (long)off;
}

struct emb__arg {
    char type;
    uint64_t u;          /* integer bits, zero- or sign-extended to 64 */
    double f;
    const uint8_t *s;
    size_t slen;
    bool snull, sclip;
};

static size_t emb__decode_args(const struct emb_logdb *db, const struct emb_log_site *site,
                               const uint8_t *p, struct emb__arg *out)
{
    size_t off = 0;
    for (size_t i = 0; i < site->nargs; i++) {
        struct emb__arg *a = &out[i];
        memset(a, 0, sizeof *a);
        a->type = site->sig[i];
        switch (a->type) {
        case EMB_LOG_ARG_I32: a->u = (uint64_t)(int64_t)(int32_t)emb_get_le32(p + off); off += 4u; break;
        case EMB_LOG_ARG_U32: a->u = emb_get_le32(p + off); off += 4u; break;
        case EMB_LOG_ARG_I64:
        case EMB_LOG_ARG_U64: a->u = emb_get_le64(p + off); off += 8u; break;
        case EMB_LOG_ARG_F64: {
            uint64_t bits = emb_get_le64(p + off);
            memcpy(&a->f, &bits, sizeof a->f);
            a->u = bits;
            off += 8u;
            break;
        }
        case EMB_LOG_ARG_PTR:
            a->u = db->ptr_bytes == 8u ? emb_get_le64(p + off) : emb_get_le32(p + off);
            off += db->ptr_bytes;
            break;
        default: {
            uint8_t b = p[off];
            a->slen = b & 0x7Fu;
            a->sclip = (b & EMB_LOG_STR_CLIPPED) != 0u && a->slen > 0u;
            a->snull = b == EMB_LOG_STR_NULL;
            a->s = p + off + 1u;
            off += 1u + a->slen;
            break;
        }
        }
    }
    return off;
}

static bool emb__is_int(char t)
{
    return t == EMB_LOG_ARG_I32 || t == EMB_LOG_ARG_U32 || t == EMB_LOG_ARG_I64 ||
           t == EMB_LOG_ARG_U64 || t == EMB_LOG_ARG_PTR;
}

/* Bytes of the C type a length modifier names, on the target: %ld of a 32-bit target's
 * long prints its 32 bits, whatever the host's long is. */
static unsigned emb__target_int_bytes(const struct emb_logdb *db, const char *len)
{
    if (!strcmp(len, "hh")) return 1u;
    if (!strcmp(len, "h")) return 2u;
    if (!strcmp(len, "l")) return db->long_bytes;
    if (!strcmp(len, "ll") || !strcmp(len, "q") || !strcmp(len, "L") || !strcmp(len, "j")) return 8u;
    if (!strcmp(len, "z") || !strcmp(len, "Z")) return db->size_bytes;
    if (!strcmp(len, "t")) return db->ptrdiff_bytes;
    return db->int_bytes;
}

/* One conversion, formatted by the host's snprintf. An integer is first cut to the width
 * its length modifier has on the target (sign- or zero-extended back) and printed as a
 * long long (`spec` ends in "ll" and the conversion), so the text is what the target's
 * printf prints for it. */
static void emb__convert(const struct emb_logdb *db, struct emb__buf *b, const char *spec,
                         const char *written, size_t wlen, char conv, const char *len,
                         const struct emb__arg *a, bool *clipped, const char **mark)
{
    char tmp[512];
    int n = -1;
    char *heap = NULL;
#define EMB__FMT(value)                                                                        \
    do {                                                                                       \
        n = snprintf(tmp, sizeof tmp, spec, value);                                            \
        if (n >= (int)sizeof tmp && (heap = malloc((size_t)n + 1u)) != NULL)                  \
            snprintf(heap, (size_t)n + 1u, spec, value);                                       \
    } while (0)
    const char *why = "the argument recorded is not one it takes";
    switch (conv) {
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X': {
        if (!emb__is_int(a->type))
            break;
        unsigned bits = 8u * emb__target_int_bytes(db, len);
        uint64_t v = a->u, keep = bits >= 64u ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1u;
        v &= keep;
        if ((conv == 'd' || conv == 'i') && bits < 64u && (v >> (bits - 1u)) != 0u)
            v |= ~keep; /* negative on the target */
        if (conv == 'd' || conv == 'i')
            EMB__FMT((long long)v);
        else
            EMB__FMT((unsigned long long)v);
        break;
    }
    case 'c':
        if (emb__is_int(a->type))
            EMB__FMT((int)a->u);
        break;
    case 'p':
        if (a->type == EMB_LOG_ARG_STR)
            why = "a char or uint8_t pointer is recorded as the string it points to: cast it "
                  "to (void *) to log the address";
        else if (emb__is_int(a->type))
            EMB__FMT((void *)(uintptr_t)a->u);
        break;
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        if (a->type != EMB_LOG_ARG_F64)
            break;
        if (!strcmp(len, "L"))
            EMB__FMT((long double)a->f);
        else
            EMB__FMT(a->f);
        break;
    case 's': {
        if (a->type != EMB_LOG_ARG_STR) {
            if (a->type == EMB_LOG_ARG_PTR)
                why = "the argument is a pointer of a type recorded by address, not a string "
                      "(char *, uint8_t *)";
            break;
        }
        char text[128];
        memcpy(text, a->s, a->slen);
        text[a->slen] = '\0';
#if defined(__GLIBC__)
        EMB__FMT(a->snull ? (const char *)NULL : text); /* as printf prints NULL: "(null)" */
#else
        EMB__FMT(a->snull ? "(null)" : text);
#endif
        if (a->sclip && clipped != NULL)
            *clipped = true;
        break;
    }
    default:
        break;
    }
#undef EMB__FMT
    if (n < 0) {
        emb__buf_printf(b, "<%.*s: %s>", (int)wlen, written, why);
        if (*mark == NULL)
            *mark = why;
        return;
    }
    emb__buf_add(b, heap != NULL ? heap : tmp, heap != NULL || n < (int)sizeof tmp ? (size_t)n : sizeof tmp - 1u);
    free(heap);
    if (conv == 's' && a->sclip)
        emb__buf_add(b, EMB_LOG_CLIP_MARK, sizeof EMB_LOG_CLIP_MARK - 1u);
}

/* Why a conversion lies outside what the deferred log reproduces, or NULL. */
static const char *emb__unsupported(char conv, const char *len, bool positional)
{
    if (positional)
        return "positional arguments (%N$) are not supported: the arguments are recorded in "
               "call order";
    if (conv == '%') /* "%%" itself never gets here */
        return "%% takes no flags, width, precision or length";
    if (conv == 'm')
        return "%m prints the target's errno text, which is not recorded";
    if (conv == 'C' || conv == 'S' || ((conv == 'c' || conv == 's') && len[0] != '\0'))
        return "wide characters and strings (%lc, %ls, %C, %S) are not supported";
    if (strchr("diouxXcspnfFeEgGaA", conv) == NULL)
        return "not a printf conversion";
    if (strchr("diouxXn", conv) == NULL && len[0] != '\0' &&
        !(strchr("fFeEgGaA", conv) != NULL && (!strcmp(len, "L") || !strcmp(len, "l"))))
        return "a length modifier this conversion does not take";
    return NULL;
}

bool emb_log_format(const struct emb_logdb *db, const struct emb_log_site *site,
                    const uint8_t *args, size_t args_len, char **out, size_t *len, bool *clipped,
                    const char **mark)
{
    struct emb__buf b = {0};
    struct emb__arg av[256];
    const char *err;
    *clipped = false;
    *mark = NULL;
    long need = emb_log_args_size(db, site, args, args_len, &err);
    if (need < 0 || (size_t)need != args_len) {
        emb__buf_printf(&b, "<%s>", err != NULL ? err : "arguments do not match the call site");
        *out = b.p;
        *len = b.len;
        return false;
    }
    emb__decode_args(db, site, args, av);
    size_t next = 0;
    const char *f = site->fmt;
    while (*f != '\0') {
        const char *pct = strchr(f, '%');
        if (pct == NULL) {
            emb__buf_add(&b, f, strlen(f));
            break;
        }
        emb__buf_add(&b, f, (size_t)(pct - f));
        const char *p = pct + 1;
        if (*p == '%') {
            emb__buf_add(&b, "%", 1u);
            f = p + 1;
            continue;
        }
        /* A positional argument: digits and '$' right after the '%'. */
        const char *q = p;
        while (*q >= '0' && *q <= '9')
            q++;
        bool positional = q > p && *q == '$';
        if (positional)
            p = q + 1;
        /* Rebuild the conversion with '*' replaced by the recorded int. Flags may repeat
         * (printf takes any number): each is kept once. */
        char spec[96];
        size_t sn = 0;
        spec[sn++] = '%';
        char flags[8] = "";
        size_t nflags = 0;
        for (; *p != '\0' && strchr("-+ #0'I", *p) != NULL; p++)
            if (strchr(flags, *p) == NULL && nflags < sizeof flags - 1u) {
                flags[nflags++] = *p;
                spec[sn++] = *p;
            }
        for (int part = 0; part < 2; part++) {
            if (part == 1) {
                if (*p != '.')
                    break;
                spec[sn++] = *p++;
            }
            if (*p == '*') {
                p++;
                long v = next < site->nargs && emb__is_int(av[next].type) ? (long)(int)av[next].u : 0;
                next++;
                if (part == 0 && v < 0) {
                    if (strchr(flags, '-') == NULL)
                        spec[sn++] = '-';
                    v = -v;
                }
                if (part == 1 && v < 0)
                    sn--; /* a negative precision is no precision */
                else
                    sn += (size_t)snprintf(spec + sn, sizeof spec - sn, "%ld", v);
            } else {
                while (*p >= '0' && *p <= '9') {
                    if (sn < 60u)
                        spec[sn++] = *p;
                    p++;
                }
            }
        }
        char lenmod[3] = "";
        size_t ln = 0;
        while (*p != '\0' && strchr("hlLqjzZt", *p) != NULL && ln < 2u)
            lenmod[ln++] = *p++;
        lenmod[ln] = '\0';
        char conv = *p;
        if (conv == '\0') {
            emb__buf_add(&b, pct, strlen(pct));
            break;
        }
        f = p + 1;
        const char *why = emb__unsupported(conv, lenmod, positional);
        if (why != NULL) {
            emb__buf_add(&b, "<", 1u);
            emb__buf_add(&b, pct, (size_t)(f - pct));
            emb__buf_printf(&b, ": %s>", why);
            if (*mark == NULL)
                *mark = why;
            continue;
        }
        if (strchr("diouxX", conv) != NULL) {
            spec[sn++] = 'l'; /* printed as a long long (emb__convert) */
            spec[sn++] = 'l';
        } else {
            memcpy(spec + sn, lenmod, ln);
            sn += ln;
        }
        spec[sn++] = conv;
        spec[sn] = '\0';
        if (conv == 'n') {
            next++; /* %n stores, it prints nothing */
            continue;
        }
        if (next >= site->nargs) {
            emb__buf_printf(&b, "<%.*s: missing argument>", (int)(f - pct), pct);
            if (*mark == NULL)
                *mark = "missing argument";
            continue;
        }
        emb__convert(db, &b, spec, pct, (size_t)(f - pct), conv, lenmod, &av[next++], clipped, mark);
    }
    if (b.p == NULL)
        emb__buf_add(&b, "", 0u);
    *out = b.p;
    *len = b.len;
    return !b.oom;
}

/* ---- The stream decoder ---- */

struct emb__seg {
    size_t at;           /* index in the context's buffer where the segment starts */
    uint64_t offset;     /* stream offset of the frame (or byte) it came from */
    uint32_t pos;        /* ring position of its first byte */
};

struct emb__ctx {
    uint16_t id;
    bool raw;            /* bare records: offsets are exact, positions are offsets */
    char name[24];
    uint8_t *buf;
    size_t len, cap;
    struct emb__seg *segs;
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
    struct emb_log_hello hello;
    struct emb_log_decoder_summary sum;
    struct emb__ctx *ctx;
    size_t nctx;
    uint64_t raw_offset;  /* raw mode: stream offset of the next byte */
    uint64_t data_before_hello;
    bool warned_no_build_id;
    bool *site_marked;   /* by site index: its marked conversion was reported */
};

static void emb__problem(struct emb_log_decoder *d, uint64_t offset, bool error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void emb__problem(struct emb_log_decoder *d, uint64_t offset, bool error, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (error)
        d->sum.errors++;
    else
        d->sum.notices++;
    if (d->opt.problem != NULL)
        d->opt.problem(d->opt.arg, offset, error, msg);
}

static void emb__emit(struct emb_log_decoder *d, struct emb_logrec *r)
{
    if (d->opt.record != NULL)
        d->opt.record(d->opt.arg, r);
}

static struct emb__ctx *emb__ctx(struct emb_log_decoder *d, uint16_t id)
{
    for (size_t i = 0; i < d->nctx; i++)
        if (d->ctx[i].id == id)
            return &d->ctx[i];
    if (d->nctx >= 4096u)
        return NULL;
    struct emb__ctx *q = realloc(d->ctx, (d->nctx + 1u) * sizeof *q);
    if (q == NULL)
        return NULL;
    d->ctx = q;
    struct emb__ctx *c = &d->ctx[d->nctx++];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->first_sync = true;
    snprintf(c->name, sizeof c->name, "ctx%u", id);
    return c;
}

/* Stream offset and ring position of buffer index `at`. */
static void emb__where(const struct emb__ctx *c, size_t at, uint64_t *offset, uint32_t *pos)
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

static void emb__consume(struct emb__ctx *c, size_t n)
{
    if (n == 0u)
        return;
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
    size_t keep = 0;
    for (size_t s = 0; s < c->nsegs; s++) {
        struct emb__seg g = c->segs[s];
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

static bool emb__append(struct emb__ctx *c, const uint8_t *data, size_t len, uint64_t offset,
                        uint32_t pos, bool raw)
{
    if (len == 0u)
        return true;
    if (c->len + len > c->cap) {
        size_t cap = c->cap ? c->cap : 4096u;
        while (cap < c->len + len)
            cap *= 2u;
        uint8_t *q = realloc(c->buf, cap);
        if (q == NULL)
            return false;
        c->buf = q;
        c->cap = cap;
    }
    if (!raw || c->nsegs == 0u) {
        if (c->nsegs == c->seg_cap) {
            size_t cap = c->seg_cap ? c->seg_cap * 2u : 16u;
            struct emb__seg *q = realloc(c->segs, cap * sizeof *q);
            if (q == NULL)
                return false;
            c->segs = q;
            c->seg_cap = cap;
        }
        c->segs[c->nsegs++] = (struct emb__seg){c->len, offset, pos};
    }
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    return true;
}

static size_t emb__hdr(const struct emb_log_decoder *d)
{
    return (size_t)d->opt.db->id_bytes + d->opt.db->ts_bytes;
}

static uint32_t emb__id(const struct emb_log_decoder *d, const uint8_t *p)
{
    return d->opt.db->id_bytes == 2u ? emb_get_le16(p) : emb_get_le32(p);
}

static void emb__lose_sync(struct emb_log_decoder *d, struct emb__ctx *c, uint64_t offset)
{
    (void)d;
    c->synced = false;
    c->skipped = 0;
    c->skip_offset = offset;
}

/* Looks for a sync marker in the buffer: zero id, then the magic after the timestamp.
 * Returns its index, or the count of bytes that can no longer hold the start of one. */
static bool emb__find_sync(const struct emb_log_decoder *d, const struct emb__ctx *c, size_t *at)
{
    static const uint8_t magic[EMB_LOG_SYNC_MAGIC_SIZE] = EMB_LOG_SYNC_MAGIC;
    size_t hdr = emb__hdr(d), size = hdr + EMB_LOG_SYNC_PAYLOAD;
    for (size_t i = 0; i + hdr + sizeof magic <= c->len; i++) {
        if (memcmp(c->buf + i + hdr, magic, sizeof magic) != 0 || emb__id(d, c->buf + i) != 0u)
            continue;
        *at = i;
        return true;
    }
    *at = c->len > size ? c->len - size : 0u;
    return false;
}

/* A record whose format has a conversion the decoder cannot reproduce: a finding, marked
 * in its text, and reported once per call site. */
static void emb__marked(struct emb_log_decoder *d, const struct emb_log_site *site, uint64_t offset,
                        const char *why, struct emb_logrec *r)
{
    r->marked = true;
    d->sum.marked++;
    size_t i = (size_t)(site - d->opt.db->sites);
    if (d->site_marked[i])
        return;
    d->site_marked[i] = true;
    emb__problem(d, offset, false, "call site %s:%u, format \"%s\": %s (marked <...> in the text)",
                 site->file, site->line, site->fmt, why);
}

static void emb__record(struct emb_log_decoder *d, struct emb__ctx *c, const struct emb_log_site *site,
                        const uint8_t *rec, size_t size, uint64_t ts, uint64_t offset, uint32_t pos)
{
    size_t hdr = emb__hdr(d);
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
        const char *mark;
        if (!emb_log_format(d->opt.db, site, rec + hdr, size - hdr, &text, &text_len, &r.clipped,
                            &mark))
            emb__problem(d, offset, true, "ctx %s: record of %s:%u: %s", c->name, site->file,
                         site->line, text != NULL ? text : "cannot format");
        else if (mark != NULL)
            emb__marked(d, site, offset, mark, &r);
        r.text = text != NULL ? text : "";
        r.text_len = text_len;
    }
    d->sum.records++;
    emb__emit(d, &r);
    free(text);
}

/* Decodes what the context's buffer holds; leaves an incomplete record for later. */
static void emb__parse(struct emb_log_decoder *d, struct emb__ctx *c)
{
    const struct emb_logdb *db = d->opt.db;
    size_t hdr = emb__hdr(d);
    for (;;) {
        uint64_t offset;
        uint32_t pos;
        if (!c->synced) {
            size_t at;
            bool found = emb__find_sync(d, c, &at);
            if (at > 0u) {
                if (c->skipped == 0u)
                    emb__where(c, 0, &c->skip_offset, &pos);
                c->skipped += at;
                d->sum.skipped_bytes += at;
                emb__consume(c, at);
            }
            if (!found || c->len < hdr + EMB_LOG_SYNC_PAYLOAD)
                return;
        }
        if (c->len < db->id_bytes)
            return;
        emb__where(c, 0, &offset, &pos);
        uint32_t id = emb__id(d, c->buf);
        const uint8_t *rec = c->buf;
        uint64_t ts = c->prev_ts;
        if (id == EMB_LOG_ID_SYNC) {
            static const uint8_t magic[EMB_LOG_SYNC_MAGIC_SIZE] = EMB_LOG_SYNC_MAGIC;
            size_t size = hdr + EMB_LOG_SYNC_PAYLOAD;
            if (c->len < size)
                return;
            const uint8_t *p = rec + hdr;
            uint64_t full = emb_get_le64(p + EMB_LOG_SYNC_OFF_TS);
            uint16_t ctx = emb_get_le16(p + EMB_LOG_SYNC_OFF_CONTEXT);
            const char *bad = NULL;
            if (memcmp(p, magic, sizeof magic) != 0)
                bad = "sync marker without its magic";
            else if (!d->opt.raw && ctx != c->id)
                bad = "sync marker of another context";
            else if (db->ts_bytes != 0u && emb_get_le32(rec + db->id_bytes) != (uint32_t)full)
                bad = "sync marker whose two timestamps disagree";
            else if (c->have_ts && full < c->prev_ts)
                bad = "sync marker earlier than the record before it";
            if (bad != NULL) {
                emb__problem(d, offset, true, "ctx %s: ring position %" PRIu32 ": %s", c->name, pos, bad);
                emb__consume(c, 1u);
                emb__lose_sync(d, c, offset);
                continue;
            }
            if (!c->synced && (c->skipped > 0u || !c->first_sync)) {
                struct emb_logrec r = {.type = EMB_LREC_RESYNC, .ctx = c->id, .ctx_name = c->name,
                                       .has_ts = true, .ts = full, .offset = c->skip_offset,
                                       .ring_pos = pos, .count = c->skipped};
                d->sum.resyncs++;
                emb__emit(d, &r);
            }
            c->synced = true;
            c->first_sync = false;
            c->skipped = 0;
            c->prev_ts = full;
            c->have_ts = true;
            emb__consume(c, size);
            continue;
        }
        if (db->ts_bytes != 0u) {
            if (c->len < hdr)
                return;
            uint32_t ts32 = emb_get_le32(rec + db->id_bytes);
            ts = c->prev_ts + (uint32_t)(ts32 - (uint32_t)c->prev_ts);
        }
        if (id == EMB_LOG_ID_DROPPED) {
            size_t size = hdr + EMB_LOG_DROPPED_PAYLOAD;
            if (c->len < size)
                return;
            uint16_t n = emb_get_le16(rec + hdr);
            struct emb_logrec r = {.type = EMB_LREC_DROPPED, .ctx = c->id, .ctx_name = c->name,
                                   .has_ts = db->ts_bytes != 0u, .ts = ts, .offset = offset,
                                   .ring_pos = pos, .id = id, .count = n};
            if (n == 0u)
                emb__problem(d, offset, true, "ctx %s: ring position %" PRIu32 ": dropped record with a zero count", c->name, pos);
            c->announced += n;
            d->sum.dropped += n;
            c->prev_ts = ts;
            emb__emit(d, &r);
            emb__consume(c, size);
            continue;
        }
        const struct emb_log_site *site = emb_logdb_site(db, id);
        if (site == NULL) {
            /* Its size is unknown: show what follows, then skip to the next sync marker. */
            bool outside = id < EMB_LOG_ID_BIAS || id - EMB_LOG_ID_BIAS >= db->region_size;
            emb__problem(d, offset, true, "ctx %s: ring position %" PRIu32 ": id 0x%" PRIx32 " %s; "
                         "skipping to the next sync marker", c->name, pos, id,
                         outside ? "outside the log metadata region" : "names no call site");
            size_t show = c->len < 32u ? c->len : 32u;
            struct emb_logrec r = {.type = EMB_LREC_UNKNOWN, .ctx = c->id, .ctx_name = c->name,
                                   .has_ts = db->ts_bytes != 0u && c->len >= hdr, .ts = ts,
                                   .offset = offset, .ring_pos = pos, .id = id, .data = rec,
                                   .data_len = show};
            d->sum.unknown++;
            emb__emit(d, &r);
            emb__consume(c, 1u);
            emb__lose_sync(d, c, offset);
            c->skipped = 1;
            d->sum.skipped_bytes++;
            continue;
        }
        const char *err;
        long args = emb_log_args_size(db, site, rec + hdr, c->len - hdr, &err);
        if (args == EMB_LOG_ARGS_MORE) {
            if (hdr + (size_t)db->record_max <= c->len) {
                err = "record longer than the build's maximum";
            } else {
                return; /* wait for the rest */
            }
        }
        if (args < 0 || (args > 0 && hdr + (size_t)args > db->record_max)) {
            emb__problem(d, offset, true, "ctx %s: ring position %" PRIu32 ": record of %s:%u: %s; "
                         "skipping to the next sync marker", c->name, pos, site->file, site->line,
                         err != NULL ? err : "record longer than the build's maximum");
            emb__consume(c, 1u);
            emb__lose_sync(d, c, offset);
            c->skipped = 1;
            d->sum.skipped_bytes++;
            continue;
        }
        size_t size = hdr + (size_t)args;
        c->prev_ts = ts;
        emb__record(d, c, site, rec, size, ts, offset, pos);
        emb__consume(c, size);
    }
}

/* ---- Frames ---- */

static void emb__hello(struct emb_log_decoder *d, const struct emb_frame_view *f)
{
    const uint8_t *p = f->payload;
    const struct emb_logdb *db = d->opt.db;
    if (f->len < EMB_LOG_HELLO_SIZE || emb_get_le32(p + EMB_LOG_HELLO_OFF_MAGIC) != EMB_LOG_HELLO_MAGIC ||
        emb_get_le16(p + EMB_LOG_HELLO_OFF_SIZE) < EMB_LOG_HELLO_SIZE ||
        emb_get_le16(p + EMB_LOG_HELLO_OFF_SIZE) > f->len) {
        emb__problem(d, f->offset, true, "malformed hello frame (%zu bytes)", f->len);
        return;
    }
    if (p[EMB_LOG_HELLO_OFF_VERSION] != EMB_LOG_HELLO_VERSION) {
        emb__problem(d, f->offset, true, "hello frame version %u; this emb reads version %u",
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
        emb__problem(d, f->offset, true, "hello frame: build id of %u bytes (at most %u)",
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
        emb__problem(d, f->offset, true, "build id mismatch: the stream is from build %s, the "
                     "ELF %s is build %s; refusing to decode", a, db->path, b);
        d->sum.fatal = true;
        return;
    }
    if (h.id_bytes != db->id_bytes || h.ts_bytes != db->ts_bytes || h.ptr_bytes != db->ptr_bytes) {
        emb__problem(d, f->offset, true, "the stream's records (id %u, timestamp %u, pointer %u "
                     "bytes) are not the ELF's (%u, %u, %u); refusing to decode", h.id_bytes,
                     h.ts_bytes, h.ptr_bytes, db->id_bytes, db->ts_bytes, db->ptr_bytes);
        d->sum.fatal = true;
        return;
    }
    if (h.build_id_len == 0u && !d->opt.no_build_id_check) {
        emb__problem(d, f->offset, true, "the stream carries no build id, so nothing shows it is "
                     "from the build of %s; refusing to decode (the firmware reads its id from "
                     "the GNU build id note: link it with -Wl,--build-id; or decode anyway with "
                     "--no-build-id-check)", db->path);
        d->sum.fatal = true;
        return;
    }
    if (!d->warned_no_build_id && (h.build_id_len == 0u || db->build_id_len == 0u)) {
        d->warned_no_build_id = true;
        emb__problem(d, f->offset, false, "%s carries no build id: cannot check that the ELF "
                     "matches the stream", h.build_id_len == 0u ? "the stream" : "the ELF");
    }
    if (h.clock_hz == 0u) {
        emb__problem(d, f->offset, true, "hello frame: clock frequency 0");
        return;
    }
    if (!d->hello.seen && d->data_before_hello > 0u)
        emb__problem(d, f->offset, false, "%" PRIu64 " ring bytes arrived before the first hello "
                     "frame and were skipped (a stream joined mid-way)", d->data_before_hello);
    d->hello = h;
}

static void emb__data(struct emb_log_decoder *d, const struct emb_frame_view *f)
{
    if (f->len < EMB_LOG_DATA_HEADER) {
        emb__problem(d, f->offset, true, "data frame of %zu bytes: shorter than its header", f->len);
        return;
    }
    size_t n = f->len - EMB_LOG_DATA_HEADER;
    if (!d->hello.seen) {
        d->data_before_hello += n;
        return;
    }
    uint16_t id = emb_get_le16(f->payload + EMB_LOG_DATA_OFF_CONTEXT);
    uint32_t pos = emb_get_le32(f->payload + EMB_LOG_DATA_OFF_POS);
    struct emb__ctx *c = emb__ctx(d, id);
    if (c == NULL) {
        emb__problem(d, f->offset, true, "too many contexts: data frame of context %u skipped", id);
        return;
    }
    if (c->known_pos && pos != c->next_pos) {
        uint32_t gap = pos - c->next_pos;
        if (gap < 0x80000000u) {
            struct emb_logrec r = {.type = EMB_LREC_LOST, .ctx = c->id, .ctx_name = c->name,
                                   .has_ts = c->have_ts, .ts = c->prev_ts, .offset = f->offset,
                                   .ring_pos = c->next_pos, .count = gap};
            d->sum.lost_bytes += gap;
            emb__problem(d, f->offset, true, "ctx %s: %" PRIu32 " ring bytes missing before this "
                         "frame (ring position %" PRIu32 ", expected %" PRIu32 ")", c->name, gap,
                         pos, c->next_pos);
            emb__emit(d, &r);
        } else {
            emb__problem(d, f->offset, true, "ctx %s: data frame goes back to ring position %"
                         PRIu32 " (expected %" PRIu32 ")", c->name, pos, c->next_pos);
        }
        c->from_start = false;
        emb__consume(c, c->len);
        emb__lose_sync(d, c, f->offset);
    }
    if (!c->known_pos)
        c->from_start = pos == 0u;
    c->known_pos = true;
    c->next_pos = pos + (uint32_t)n;
    if (!emb__append(c, f->payload + EMB_LOG_DATA_HEADER, n, f->offset, pos, false)) {
        emb__problem(d, f->offset, true, "out of memory");
        d->sum.fatal = true;
        return;
    }
    emb__parse(d, c);
}

static void emb__stats(struct emb_log_decoder *d, const struct emb_frame_view *f)
{
    if (f->len < EMB_LOG_STATS_SIZE) {
        emb__problem(d, f->offset, true, "stats frame of %zu bytes: too short", f->len);
        return;
    }
    const uint8_t *p = f->payload;
    struct emb__ctx *c = emb__ctx(d, emb_get_le16(p + EMB_LOG_STATS_OFF_CONTEXT));
    if (c == NULL)
        return;
    uint32_t total = emb_get_le32(p + EMB_LOG_STATS_OFF_DROPPED);
    uint32_t pending = emb_get_le32(p + EMB_LOG_STATS_OFF_PENDING);
    uint32_t pos = emb_get_le32(p + EMB_LOG_STATS_OFF_POS);
    d->sum.dropped_total += total;
    d->sum.pending += pending;
    if (c->known_pos && pos != c->next_pos)
        emb__problem(d, f->offset, true, "ctx %s: the stream stops %" PRIu32 " ring bytes short "
                     "of the context's last record", c->name, pos - c->next_pos);
    else if (c->from_start && c->announced + pending != total)
        emb__problem(d, f->offset, true, "ctx %s: drops do not add up: %" PRIu64 " announced + %"
                     PRIu32 " pending, but the ring counted %" PRIu32, c->name, c->announced,
                     pending, total);
    if (pending > 0u) {
        struct emb_logrec r = {.type = EMB_LREC_PENDING, .ctx = c->id, .ctx_name = c->name,
                               .has_ts = c->have_ts, .ts = c->prev_ts, .offset = f->offset,
                               .count = pending};
        emb__emit(d, &r);
    }
}

static void emb__on_frame(void *arg, const struct emb_frame_view *f)
{
    struct emb_log_decoder *d = arg;
    d->sum.frames++;
    if (d->sum.fatal || f->channel != 0u || f->len == 0u)
        return; /* other channels are someone else's */
    switch (f->payload[0]) {
    case EMB_LOG_FRAME_HELLO: emb__hello(d, f); break;
    case EMB_LOG_FRAME_DATA: emb__data(d, f); break;
    case EMB_LOG_FRAME_CONTEXT:
        if (f->len >= EMB_LOG_CTX_SIZE) {
            struct emb__ctx *c = emb__ctx(d, emb_get_le16(f->payload + EMB_LOG_CTX_OFF_CONTEXT));
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
            emb__problem(d, f->offset, true, "context frame of %zu bytes: too short", f->len);
        }
        break;
    case EMB_LOG_FRAME_STATS: emb__stats(d, f); break;
    default:
        emb__problem(d, f->offset, false, "log frame of unknown kind %u skipped", f->payload[0]);
        break;
    }
}

static void emb__on_frame_problem(void *arg, uint64_t offset, bool error, const char *message)
{
    struct emb_log_decoder *d = arg;
    if (error)
        d->sum.bad_frames++;
    emb__problem(d, offset, error, "%s", message);
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
    if (d->site_marked == NULL) {
        free(d);
        return NULL;
    }
    struct emb_frame_callbacks cb = {emb__on_frame, emb__on_frame_problem, d};
    if (!opt->raw && !emb_frame_decoder_init(&d->frames, 65536u, &cb)) {
        free(d->site_marked);
        free(d);
        return NULL;
    }
    if (opt->raw) {
        d->hello.seen = true; /* no identity to wait for */
        struct emb__ctx *c = emb__ctx(d, opt->raw_context);
        if (c == NULL) {
            free(d);
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
        free(d->ctx[i].buf);
        free(d->ctx[i].segs);
    }
    free(d->ctx);
    free(d->site_marked);
    free(d);
}

void emb_log_decoder_feed(struct emb_log_decoder *d, const uint8_t *data, size_t len)
{
    if (d->sum.fatal)
        return;
    if (!d->opt.raw) {
        emb_frame_decoder_feed(&d->frames, data, len);
        return;
    }
    struct emb__ctx *c = &d->ctx[0];
    if (!emb__append(c, data, len, d->raw_offset, (uint32_t)d->raw_offset, true)) {
        emb__problem(d, d->raw_offset, true, "out of memory");
        d->sum.fatal = true;
        return;
    }
    d->raw_offset += len;
    emb__parse(d, c);
}

void emb_log_decoder_finish(struct emb_log_decoder *d)
{
    if (!d->opt.raw && !d->sum.fatal)
        emb_frame_decoder_finish(&d->frames);
    if (d->sum.fatal)
        return;
    if (!d->hello.seen && d->data_before_hello > 0u)
        emb__problem(d, 0, true, "no hello frame: %" PRIu64 " ring bytes could not be placed",
                     d->data_before_hello);
    for (size_t i = 0; i < d->nctx; i++) {
        struct emb__ctx *c = &d->ctx[i];
        uint64_t offset;
        uint32_t pos;
        emb__where(c, 0, &offset, &pos);
        if (c->synced && c->len > 0u)
            emb__problem(d, offset, true, "ctx %s: ring position %" PRIu32 ": the stream ends inside a "
                         "record (%zu bytes of it)", c->name, pos, c->len);
        else if (!c->synced && c->skipped + c->len > 0u)
            emb__problem(d, c->skipped > 0u ? c->skip_offset : offset, c->first_sync,
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
