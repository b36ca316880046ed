/* emb_vsnprintf: the log text backend's formatter (emb/printf.h). Freestanding: no libc
 * beyond memcpy/memset, no floating-point arithmetic (a %f is expanded from the double's
 * bits with integer arithmetic, so it is exact and costs no FPU or soft-float library). */
#include <emb/printf.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct emb__out {
    char *buf;
    size_t size;
    size_t n; /* bytes the full output has so far */
};

static void emb__put(struct emb__out *o, char c)
{
    if (o->n + 1u < o->size)
        o->buf[o->n] = c;
    o->n++;
}

static void emb__put_n(struct emb__out *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        emb__put(o, s[i]);
}

static void emb__pad(struct emb__out *o, char c, int count)
{
    for (; count > 0; count--)
        emb__put(o, c);
}

enum emb__len { EMB__L_NONE, EMB__L_HH, EMB__L_H, EMB__L_L, EMB__L_LL, EMB__L_Z, EMB__L_J, EMB__L_T };

struct emb__spec {
    bool left, plus, space, alt, zero;
    int width;
    int prec; /* -1: none */
    enum emb__len len;
    char conv;
};

/* Writes `body` (len bytes) with an optional sign/prefix, zeros and padding per the spec. */
static void emb__field(struct emb__out *o, const struct emb__spec *sp, const char *prefix,
                       size_t prefix_len, int zeros, const char *body, size_t len, bool zero_pad)
{
    int total = (int)prefix_len + zeros + (int)len;
    int fill = sp->width > total ? sp->width - total : 0;
    if (!sp->left && !zero_pad)
        emb__pad(o, ' ', fill);
    emb__put_n(o, prefix, prefix_len);
    if (!sp->left && zero_pad)
        emb__pad(o, '0', fill);
    emb__pad(o, '0', zeros);
    emb__put_n(o, body, len);
    if (sp->left)
        emb__pad(o, ' ', fill);
}

static void emb__int(struct emb__out *o, const struct emb__spec *sp, uint64_t mag, bool neg,
                     unsigned base, bool is_signed)
{
    const char *digits = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    char rev[24], body[24];
    size_t nd = 0;
    if (!(mag == 0u && sp->prec == 0)) {
        do {
            rev[nd++] = digits[mag % base];
            mag /= base;
        } while (mag != 0u);
    }
    for (size_t i = 0; i < nd; i++)
        body[i] = rev[nd - 1u - i];
    char prefix[3];
    size_t np = 0;
    if (is_signed && neg)
        prefix[np++] = '-';
    else if (is_signed && sp->plus)
        prefix[np++] = '+';
    else if (is_signed && sp->space)
        prefix[np++] = ' ';
    if (sp->alt && base == 16u && nd > 0u && !(nd == 1u && body[0] == '0')) {
        prefix[np++] = '0';
        prefix[np++] = sp->conv == 'X' ? 'X' : 'x';
    }
    int zeros = sp->prec > (int)nd ? sp->prec - (int)nd : 0;
    if (sp->alt && base == 8u && zeros == 0 && (nd == 0u || body[0] != '0'))
        zeros = 1; /* '#' makes an octal number start with 0 */
    emb__field(o, sp, prefix, np, zeros, body, nd, sp->zero && sp->prec < 0 && !sp->left);
}

/* ---- %f, exactly: big integers of 32-bit words, least significant first ---- */

#define EMB__BIG_WORDS 36 /* 1152 bits: 2^1024 and a 1074-bit fraction times 16 */
#define EMB__FRAC_DIGITS_MAX 60

struct emb__big {
    uint32_t w[EMB__BIG_WORDS];
};

/* b = m << shift */
static void emb__big_set(struct emb__big *b, uint64_t m, unsigned shift)
{
    memset(b->w, 0, sizeof b->w);
    unsigned word = shift / 32u, bit = shift % 32u;
    uint64_t lo = m << bit;
    uint64_t hi = bit != 0u ? m >> (64u - bit) : 0u;
    uint32_t parts[3] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi};
    for (unsigned i = 0; i < 3u && word + i < EMB__BIG_WORDS; i++)
        b->w[word + i] = parts[i];
}

static bool emb__big_zero(const struct emb__big *b)
{
    for (unsigned i = 0; i < EMB__BIG_WORDS; i++)
        if (b->w[i] != 0u)
            return false;
    return true;
}

/* b /= d; returns the remainder */
static uint32_t emb__big_div(struct emb__big *b, uint32_t d)
{
    uint64_t rem = 0;
    for (unsigned i = EMB__BIG_WORDS; i-- > 0;) {
        uint64_t cur = (rem << 32) | b->w[i];
        b->w[i] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    return (uint32_t)rem;
}

static void emb__big_mul(struct emb__big *b, uint32_t m)
{
    uint64_t carry = 0;
    for (unsigned i = 0; i < EMB__BIG_WORDS; i++) {
        uint64_t cur = (uint64_t)b->w[i] * m + carry;
        b->w[i] = (uint32_t)cur;
        carry = cur >> 32;
    }
}

static bool emb__big_bit(const struct emb__big *b, unsigned bit)
{
    return (b->w[bit / 32u] >> (bit % 32u)) & 1u;
}

/* Bits [0, n) not all zero. */
static bool emb__big_low_nonzero(const struct emb__big *b, unsigned n)
{
    for (unsigned i = 0; i < n / 32u; i++)
        if (b->w[i] != 0u)
            return true;
    return n % 32u != 0u && (b->w[n / 32u] & ((1u << (n % 32u)) - 1u)) != 0u;
}

/* Adds one to the decimal string digits[0..n); returns true when it overflows (999 -> 000). */
static bool emb__dec_inc(char *digits, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (digits[i] != '9') {
            digits[i]++;
            return false;
        }
        digits[i] = '0';
    }
    return true;
}

/* Integer digits of a double: at most 309, and 9 per division of the big integer. */
#define EMB__INT_DIGITS_MAX 315

/* The sign's character, as v's sign bit and the flags ask: '-', '+', ' ', or '\0' for none. */
static char emb__float_sign(const struct emb__spec *sp, bool neg)
{
    if (neg)
        return '-';
    if (sp->plus)
        return '+';
    if (sp->space)
        return ' ';
    return '\0';
}

/* The integer digits of m * 2^e, written backwards to end at idig[EMB__INT_DIGITS_MAX], with
 * one spare '0' in front for a carry out of rounding (9.99 -> 10.0). Returns the index of
 * that spare digit. */
static size_t emb__float_int_digits(char *idig, struct emb__big *big, uint64_t m, int e)
{
    size_t first = EMB__INT_DIGITS_MAX;
    if (e >= 0)
        emb__big_set(big, m, (unsigned)e);
    else
        emb__big_set(big, -e < 64 ? m >> -e : 0u, 0u);
    do {
        uint32_t chunk = emb__big_div(big, 1000000000u);
        for (int k = 0; k < 9; k++) {
            idig[--first] = (char)('0' + chunk % 10u);
            chunk /= 10u;
        }
    } while (!emb__big_zero(big));
    while (first < EMB__INT_DIGITS_MAX - 1u && idig[first] == '0')
        first++;
    idig[--first] = '0';
    return first;
}

/* The first `exact` fraction digits of m * 2^e into fdig: m's low -e bits over 2^-e, one
 * decimal digit per multiplication by 10, rounded to nearest, ties to even. A carry out of
 * them goes into the integer digits idig[first, EMB__INT_DIGITS_MAX). */
static void emb__float_frac_digits(char *fdig, int exact, char *idig, size_t first, struct emb__big *big,
                                   uint64_t m, int e)
{
    for (int i = 0; i < exact; i++)
        fdig[i] = '0';
    if (e >= 0)
        return;
    unsigned k = (unsigned)-e;
    emb__big_set(big, k < 64u ? m & ((UINT64_C(1) << k) - 1u) : m, 0u);
    for (int i = 0; i < exact; i++) {
        emb__big_mul(big, 10u);
        unsigned word = k / 32u, bit = k % 32u;
        uint64_t window = big->w[word];
        if (word + 1u < EMB__BIG_WORDS)
            window |= (uint64_t)big->w[word + 1u] << 32;
        fdig[i] = (char)('0' + ((window >> bit) & 0xFu));
        big->w[word] &= bit != 0u ? (1u << bit) - 1u : 0u;
        if (word + 1u < EMB__BIG_WORDS)
            big->w[word + 1u] = 0u;
    }
    /* What is left against one half (bit k - 1). */
    if (emb__big_bit(big, k - 1u)) {
        char lastd = exact > 0 ? fdig[exact - 1] : idig[EMB__INT_DIGITS_MAX - 1u];
        if (emb__big_low_nonzero(big, k - 1u) || ((lastd - '0') & 1) != 0) {
            if (emb__dec_inc(fdig, (size_t)exact))
                emb__dec_inc(idig + first, EMB__INT_DIGITS_MAX - first);
        }
    }
}

/* Writes the number within the field: the padding the width and flags ask for, the sign,
 * the integer digits, the point, the exact fraction digits and zeros up to the precision. */
static void emb__float_put(struct emb__out *o, const struct emb__spec *sp, const char *prefix, size_t np,
                           const char *idig, size_t ni, const char *fdig, int exact, int prec)
{
    bool point = prec > 0 || sp->alt;
    int total = (int)np + (int)ni + (point ? 1 : 0) + prec;
    int fill = sp->width > total ? sp->width - total : 0;
    bool zero_pad = sp->zero && !sp->left;
    if (!sp->left && !zero_pad)
        emb__pad(o, ' ', fill);
    emb__put_n(o, prefix, np);
    if (zero_pad)
        emb__pad(o, '0', fill);
    emb__put_n(o, idig, ni);
    if (point)
        emb__put(o, '.');
    emb__put_n(o, fdig, (size_t)exact);
    emb__pad(o, '0', prec - exact); /* beyond the digits computed exactly */
    if (sp->left)
        emb__pad(o, ' ', fill);
}

static void emb__float(struct emb__out *o, const struct emb__spec *sp, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned exp = (unsigned)(bits >> 52) & 0x7FFu;
    uint64_t mant = bits & ((UINT64_C(1) << 52) - 1u);
    /* One char, always written, so the sign is never read uninitialised (np says whether
     * it is printed). */
    const char sign = emb__float_sign(sp, (bits >> 63) != 0u);
    const char *prefix = &sign;
    size_t np = sign != '\0' ? 1u : 0u;
    bool upper = sp->conv == 'F';
    if (exp == 0x7FFu) {
        const char *text = mant != 0u ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        emb__field(o, sp, prefix, np, 0, text, 3u, false);
        return;
    }
    uint64_t m = exp != 0u ? mant | (UINT64_C(1) << 52) : mant;
    int e = exp != 0u ? (int)exp - 1075 : -1074; /* v = m * 2^e */
    struct emb__big big; /* one scratch number for both parts */
    char idig[EMB__INT_DIGITS_MAX];
    size_t first = emb__float_int_digits(idig, &big, m, e);
    int prec = sp->prec < 0 ? 6 : sp->prec;
    int exact = prec < EMB__FRAC_DIGITS_MAX ? prec : EMB__FRAC_DIGITS_MAX;
    char fdig[EMB__FRAC_DIGITS_MAX];
    emb__float_frac_digits(fdig, exact, idig, first, &big, m, e);
    if (idig[first] == '0')
        first++; /* the spare digit was not needed */
    emb__float_put(o, sp, prefix, np, idig + first, EMB__INT_DIGITS_MAX - first, fdig, exact, prec);
}

/* ---- The format walk ---- */

/* Digits past this stop counting: no field is wider, and n * 10 + 9 stays an int (16 bits
 * on AVR). */
#if INT_MAX > 1000009
#define EMB__NUMBER_CAP 100000
#else
#define EMB__NUMBER_CAP ((INT_MAX - 9) / 10)
#endif

static int emb__number(const char **p)
{
    int n = 0;
    while (**p >= '0' && **p <= '9') {
        if (n < EMB__NUMBER_CAP)
            n = n * 10 + (**p - '0');
        (*p)++;
    }
    return n;
}

static int64_t emb__signed_arg(enum emb__len len, va_list *ap)
{
    switch (len) {
    case EMB__L_HH: return (signed char)va_arg(*ap, int);
    case EMB__L_H: return (short)va_arg(*ap, int);
    case EMB__L_L: return va_arg(*ap, long);
    case EMB__L_LL: return va_arg(*ap, long long);
    case EMB__L_Z: return sizeof(size_t) == 8u ? (int64_t)va_arg(*ap, size_t) : (int32_t)va_arg(*ap, size_t);
    case EMB__L_J: return va_arg(*ap, intmax_t);
    case EMB__L_T: return va_arg(*ap, ptrdiff_t);
    default: return va_arg(*ap, int);
    }
}

static uint64_t emb__unsigned_arg(enum emb__len len, va_list *ap)
{
    switch (len) {
    case EMB__L_HH: return (unsigned char)va_arg(*ap, unsigned int);
    case EMB__L_H: return (unsigned short)va_arg(*ap, unsigned int);
    case EMB__L_L: return va_arg(*ap, unsigned long);
    case EMB__L_LL: return va_arg(*ap, unsigned long long);
    case EMB__L_Z: return va_arg(*ap, size_t);
    case EMB__L_J: return va_arg(*ap, uintmax_t);
    case EMB__L_T: return sizeof(ptrdiff_t) == 8u ? (uint64_t)va_arg(*ap, ptrdiff_t) : (uint32_t)va_arg(*ap, ptrdiff_t);
    default: return va_arg(*ap, unsigned int);
    }
}

/* Parses one conversion after '%'; returns false when it is not one this formatter knows. */
static bool emb__parse(const char **pp, struct emb__spec *sp, va_list *ap)
{
    const char *p = *pp;
    memset(sp, 0, sizeof *sp);
    sp->prec = -1;
    for (;; p++) {
        if (*p == '-') sp->left = true;
        else if (*p == '+') sp->plus = true;
        else if (*p == ' ') sp->space = true;
        else if (*p == '#') sp->alt = true;
        else if (*p == '0') sp->zero = true;
        else break;
    }
    if (*p == '*') {
        sp->width = va_arg(*ap, int);
        if (sp->width < 0) {
            sp->left = true;
            sp->width = sp->width == INT_MIN ? 0 : -sp->width;
        }
        p++;
    } else {
        sp->width = emb__number(&p);
    }
    if (*p == '.') {
        p++;
        if (*p == '*') {
            sp->prec = va_arg(*ap, int);
            if (sp->prec < 0)
                sp->prec = -1;
            p++;
        } else {
            sp->prec = emb__number(&p);
        }
    }
    if (p[0] == 'h' && p[1] == 'h') { sp->len = EMB__L_HH; p += 2; }
    else if (p[0] == 'h') { sp->len = EMB__L_H; p++; }
    else if (p[0] == 'l' && p[1] == 'l') { sp->len = EMB__L_LL; p += 2; }
    else if (p[0] == 'l') { sp->len = EMB__L_L; p++; }
    else if (p[0] == 'z') { sp->len = EMB__L_Z; p++; }
    else if (p[0] == 'j') { sp->len = EMB__L_J; p++; }
    else if (p[0] == 't') { sp->len = EMB__L_T; p++; }
    sp->conv = *p;
    static const char known[] = "diuoxXcspfF%";
    bool found = false;
    for (const char *k = known; *k != '\0'; k++)
        found |= *k == *p;
    if (!found)
        return false;
    *pp = p + 1;
    return true;
}

int emb_vsnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
    struct emb__out o = {buf, size, 0};
    va_list ap;
    va_copy(ap, args);
    const char *p = fmt;
    while (*p != '\0') {
        if (*p != '%') {
            emb__put(&o, *p++);
            continue;
        }
        const char *start = p++;
        struct emb__spec sp;
        /* An unknown conversion is copied as written; the arguments read for its width
         * or precision are consumed, as they would be by a printf that knew it. */
        if (!emb__parse(&p, &sp, &ap)) {
            emb__put(&o, *start);
            p = start + 1;
            continue;
        }
        switch (sp.conv) {
        case 'd':
        case 'i': {
            int64_t v = emb__signed_arg(sp.len, &ap);
            uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            emb__int(&o, &sp, mag, v < 0, 10u, true);
            break;
        }
        case 'u': emb__int(&o, &sp, emb__unsigned_arg(sp.len, &ap), false, 10u, false); break;
        case 'o': emb__int(&o, &sp, emb__unsigned_arg(sp.len, &ap), false, 8u, false); break;
        case 'x':
        case 'X': emb__int(&o, &sp, emb__unsigned_arg(sp.len, &ap), false, 16u, false); break;
        case 'c': {
            char c = (char)va_arg(ap, int);
            emb__field(&o, &sp, "", 0u, 0, &c, 1u, false);
            break;
        }
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL)
                s = sp.prec < 0 || sp.prec >= 6 ? "(null)" : "";
            size_t len = 0;
            while ((sp.prec < 0 || len < (size_t)sp.prec) && s[len] != '\0')
                len++;
            emb__field(&o, &sp, "", 0u, 0, s, len, false);
            break;
        }
        case 'p': {
            const void *ptr = va_arg(ap, const void *);
            if (ptr == NULL) {
                emb__field(&o, &sp, "", 0u, 0, "(nil)", 5u, false);
            } else {
                /* glibc prints %p as %#x that takes the sign flags: %+p is +0x1. */
                sp.alt = true;
                sp.conv = 'x';
                emb__int(&o, &sp, (uintptr_t)ptr, false, 16u, true);
            }
            break;
        }
        case 'f':
        case 'F': emb__float(&o, &sp, va_arg(ap, double)); break;
        default: emb__put(&o, '%'); break;
        }
    }
    va_end(ap);
    if (size > 0u)
        buf[o.n < size ? o.n : size - 1u] = '\0';
    return o.n > (size_t)INT32_MAX ? INT32_MAX : (int)o.n;
}

int emb_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = emb_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
