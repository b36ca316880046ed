/* Hand-written formatting into one large output buffer (out_buf.h). */
#include "out_buf.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "json.h"

bool emb_out_init(struct emb_out *o, FILE *file)
{
    o->file = file;
    o->len = 0;
    o->buf = malloc(EMB_OUT_BLOCK);
    o->failed = o->buf == NULL;
    return !o->failed;
}

void emb_out_flush(struct emb_out *o)
{
    if (o->len != 0 && !o->failed && fwrite(o->buf, 1, o->len, o->file) != o->len)
        o->failed = true;
    o->len = 0;
}

int emb_out_finish(struct emb_out *o)
{
    if (o->buf != NULL)
        emb_out_flush(o);
    free(o->buf);
    o->buf = NULL;
    return o->failed || ferror(o->file) ? -1 : 0;
}

void emb_out_bytes_long(struct emb_out *o, const void *bytes, size_t n)
{
    const char *p = bytes;
    while (n != 0) {
        size_t room = EMB_OUT_BLOCK - o->len, step = n < room ? n : room;
        memcpy(o->buf + o->len, p, step);
        o->len += step;
        p += step;
        n -= step;
        if (o->len == EMB_OUT_BLOCK)
            emb_out_flush(o);
    }
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* How many decimal digits v has: four at a time, most values being short. */
static size_t decimal_digits(uint64_t v)
{
    for (size_t n = 1;; n += 4, v /= 10000u) {
        if (v < 10u)
            return n;
        if (v < 100u)
            return n + 1;
        if (v < 1000u)
            return n + 2;
        if (v < 10000u)
            return n + 3;
    }
}

/* The digits are written in place from the last one: counting them first spares a copy
 * of variable length (a call to memcpy) from a scratch buffer. */
size_t emb_fmt_u64(char *dst, uint64_t v)
{
    size_t n = decimal_digits(v);
    char *p = dst + n;
    while (v >= 100u) {
        unsigned r = (unsigned)(v % 100u);
        v /= 100u;
        p -= 2;
        memcpy(p, digit_pairs + 2u * r, 2);
    }
    if (v >= 10u)
        memcpy(p - 2, digit_pairs + 2u * v, 2);
    else
        p[-1] = (char)('0' + v);
    return n;
}

size_t emb_fmt_i64(char *dst, int64_t v)
{
    if (v >= 0)
        return emb_fmt_u64(dst, (uint64_t)v);
    dst[0] = '-';
    return 1u + emb_fmt_u64(dst + 1, 0u - (uint64_t)v); /* INT64_MIN too */
}

size_t emb_fmt_hex(char *dst, uint64_t v, unsigned digits)
{
    static const char hexd[] = "0123456789abcdef";
    unsigned n = 1;
    while (n < 16u && (v >> (4u * n)) != 0u)
        n++;
    if (digits > n) {
        memset(dst, '0', digits - n);
        dst += digits - n;
    } else {
        digits = n;
    }
    for (unsigned k = n; k-- > 0; v >>= 4)
        dst[k] = hexd[v & 15u];
    return digits;
}

size_t emb_fmt_nine_digits(char *dst, uint32_t v)
{
    for (int k = 8; k > 0; k -= 2, v /= 100u)
        memcpy(dst + k - 1, digit_pairs + 2u * (v % 100u), 2);
    dst[0] = (char)('0' + v);
    return 9u;
}

size_t emb_fmt_seconds_ns(char *dst, uint64_t ns)
{
    size_t n = emb_fmt_u64(dst, ns / 1000000000u);
    dst[n++] = '.';
    emb_fmt_nine_digits(dst + n, (uint32_t)(ns % 1000000000u));
    return n + 9u;
}

size_t emb_fmt_ldouble9(char *dst, long double v)
{
#if LDBL_MANT_DIG <= 64 && defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;
    size_t n = 0;
    if (signbit(v))
        dst[n++] = '-';
    long double a = fabsl(v);
    u128 q = 0; /* a * 1e9, rounded */
    if (a != 0.0L) {
        int e;
        uint64_t m;
#if LDBL_MANT_DIG == 64 /* the x87 format: the significand's 64 bits, then the exponent */
        uint16_t se;
        memcpy(&m, &a, sizeof m);
        memcpy(&se, (const char *)&a + sizeof m, sizeof se);
        e = (int)(se & 0x7FFFu) - 16382; /* as frexpl() gives it, for a normal a */
        if ((se & 0x7FFFu) == 0u)
#endif
        {
            long double f = frexpl(a, &e); /* a = f * 2^e, f in [0.5, 1) */
            m = (uint64_t)ldexpl(f, 64); /* exact: the significand has at most 64 bits */
        }
        int shift = 64 - e;                   /* a = m / 2^shift, shift >= 0 below 2^64 */
        u128 scaled = (u128)m * 1000000000u;
        if (shift == 0) {
            q = scaled;
        } else if (shift < 128) {
            q = scaled >> shift;
            u128 rem = scaled - (q << shift), half = (u128)1 << (shift - 1);
            if (rem > half || (rem == half && (q & 1u)))
                q++;
        }
    }
    uint64_t whole, part;
    if ((q >> 64) == 0u) { /* a 64-bit division, not a call */
        whole = (uint64_t)q / 1000000000u;
        part = (uint64_t)q % 1000000000u;
    } else {
        whole = (uint64_t)(q / 1000000000u);
        part = (uint64_t)(q % 1000000000u);
    }
    n += emb_fmt_u64(dst + n, whole);
    dst[n++] = '.';
    emb_fmt_nine_digits(dst + n, (uint32_t)part);
    return n + 9u;
#else
    return (size_t)snprintf(dst, 32, "%.9Lf", v);
#endif
}

void emb_out_spaces_long(struct emb_out *o, size_t n)
{
    while (n != 0) {
        size_t step = n < 64u ? n : 64u;
        emb_out_spaces(o, step);
        n -= step;
    }
}

/* The escape of an ASCII byte that JSON needs escaped, or NULL. */
static const char *json_escape(unsigned char c, char *buf)
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: break;
    }
    if (c >= 0x20 && c != 0x7F)
        return NULL;
    memcpy(buf, "\\u00", 4);
    emb_fmt_hex(buf + 4, c, 2);
    buf[6] = '\0';
    return buf;
}

void emb_out_json_string(struct emb_out *o, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    emb_out_char(o, '"');
    size_t i = 0;
    while (i < n) {
        size_t plain = i; /* a run that passes through as it is */
        while (plain < n && p[plain] >= 0x20 && p[plain] < 0x7F && p[plain] != '"' &&
               p[plain] != '\\')
            plain++;
        emb_out_bytes(o, p + i, plain - i);
        if ((i = plain) == n)
            break;
        char esc[8];
        const char *e;
        size_t len;
        if (p[i] < 0x80) {
            if ((e = json_escape(p[i], esc)) != NULL)
                emb_out_str(o, e);
            else
                emb_out_char(o, (char)p[i]);
            i++;
        } else if ((len = emb_json_utf8_sequence(p + i, n - i)) == 2 && p[i] == 0xC2 &&
                   p[i + 1] < 0xA0) {
            emb_out_str(o, "\\u00"); /* a C1 control, escaped as emb_json_write_string does */
            emb_out_hex(o, p[i + 1], 2);
            i += len;
        } else if (len != 0) {
            emb_out_bytes(o, p + i, len);
            i += len;
        } else {
            emb_out_str(o, "\\ufffd"); /* as emb_json_write_string: the document stays valid */
            i++;
        }
    }
    emb_out_char(o, '"');
}
