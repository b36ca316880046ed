/* Output formatted by hand into one large buffer: decimal, zero-padded hex, fixed-point
 * seconds, aligned columns and JSON strings, written a block at a time. The trace's text
 * and NDJSON writers and `emb log` use it on their hot paths, where one printf per field
 * cost most of the time (docs/benchmarks.md); each helper writes exactly what the printf
 * conversion named in its comment writes. */
#ifndef EMB_BASE_OUT_BUF_H
#define EMB_BASE_OUT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EMB_OUT_BLOCK (1u << 20) /* bytes gathered before one write */

struct emb_out {
    FILE *file;
    char *buf;
    size_t len;
    bool failed; /* a write failed or the buffer could not be had: later output is dropped */
};

/* Starts output to `file` (the bytes go after anything already written to it). False when
 * out of memory. */
bool emb_out_init(struct emb_out *o, FILE *file);
/* Writes what is gathered to the file. */
void emb_out_flush(struct emb_out *o);
/* Flushes and releases the buffer: 0, or -1 when a write failed. */
int emb_out_finish(struct emb_out *o);

/* Room for n more bytes (n at most EMB_OUT_BLOCK): the place to write them. */
static inline char *emb_out_room(struct emb_out *o, size_t n)
{
    if (o->len + n > EMB_OUT_BLOCK)
        emb_out_flush(o);
    return o->buf + o->len;
}

void emb_out_bytes_long(struct emb_out *o, const void *bytes, size_t n);

static inline void emb_out_bytes(struct emb_out *o, const void *bytes, size_t n)
{
    if (n > 256u) {
        emb_out_bytes_long(o, bytes, n);
        return;
    }
    memcpy(emb_out_room(o, n), bytes, n);
    o->len += n;
}

static inline void emb_out_str(struct emb_out *o, const char *s) { emb_out_bytes(o, s, strlen(s)); }

/* n bytes at s, n at most 32, where 32 bytes can be read at s (text kept with padding
 * after it): one fixed-size copy, no call. */
static inline void emb_out_short(struct emb_out *o, const char *s, size_t n)
{
    memcpy(emb_out_room(o, 32), s, 32);
    o->len += n;
}

static inline void emb_out_char(struct emb_out *o, char c)
{
    *emb_out_room(o, 1) = c;
    o->len++;
}

/* The digits of v ("%" PRIu64) at dst, at most 20 bytes: returns how many. */
size_t emb_fmt_u64(char *dst, uint64_t v);
/* "%" PRId64: at most 20 bytes. */
size_t emb_fmt_i64(char *dst, int64_t v);
/* "%0*" PRIx64 with width `digits` (lowercase): at most max(16, digits) bytes. */
size_t emb_fmt_hex(char *dst, uint64_t v, unsigned digits);
/* "%09" PRIu32 of v < 1e9: 9 bytes. */
size_t emb_fmt_nine_digits(char *dst, uint32_t v);
/* Nanoseconds as seconds, "%" PRIu64 ".%09" PRIu64 of ns / 1e9 and ns % 1e9: at most 30
 * bytes. */
size_t emb_fmt_seconds_ns(char *dst, uint64_t ns);
/* printf("%.9Lf", v) exactly, for a finite v of magnitude below 2^64: the binary value
 * rounded to nearest, ties to even, as the C library does. At most 32 bytes. */
size_t emb_fmt_ldouble9(char *dst, long double v);

static inline void emb_out_u64(struct emb_out *o, uint64_t v)
{
    o->len += emb_fmt_u64(emb_out_room(o, 20), v);
}

static inline void emb_out_i64(struct emb_out *o, int64_t v)
{
    o->len += emb_fmt_i64(emb_out_room(o, 20), v);
}

/* "%0*" PRIx64, digits at most 32. */
static inline void emb_out_hex(struct emb_out *o, uint64_t v, unsigned digits)
{
    o->len += emb_fmt_hex(emb_out_room(o, 32), v, digits);
}

void emb_out_spaces_long(struct emb_out *o, size_t n);

/* n spaces. */
static inline void emb_out_spaces(struct emb_out *o, size_t n)
{
    if (n > 64u) {
        emb_out_spaces_long(o, n);
        return;
    }
    memset(emb_out_room(o, 64), ' ', 64); /* a fixed size: one store sequence, no call */
    o->len += n;
}

/* "%*s" (right-aligned) and "%-*s" (left-aligned) of n bytes in a column of `width`. */
static inline void emb_out_align_right(struct emb_out *o, const char *s, size_t n, size_t width)
{
    if (width > n)
        emb_out_spaces(o, width - n);
    emb_out_bytes(o, s, n);
}

static inline void emb_out_align_left(struct emb_out *o, const char *s, size_t n, size_t width)
{
    emb_out_bytes(o, s, n);
    if (width > n)
        emb_out_spaces(o, width - n);
}

/* A JSON string as emb_json_write_string() writes it (json.h). */
void emb_out_json_string(struct emb_out *o, const char *s, size_t n);

#endif /* EMB_BASE_OUT_BUF_H */
