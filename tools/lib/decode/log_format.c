/* The formatter of the deferred log: a call site's recorded arguments formatted by the
 * host's printf, exactly as the target's printf formats the same call (log_decode.h,
 * docs/formats/log.md). */
#define _POSIX_C_SOURCE 200809L

#include "log_decode.h"
#include "log_plan.h"
#include "out_buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <emb/log_format.h>
#include <emb/wire.h>

#include "buffer.h"

/* ---- Arguments ---- */

long emb_log_args_size(const struct emb_logdb *db, const struct emb_log_site *site,
                       const uint8_t *args, size_t avail, const char **err)
{
    size_t off = 0;
    *err = NULL;
    if (site->args_fixed >= 0) /* no %s: the size the plan counted (log_plan.c) */
        return avail >= (size_t)site->args_fixed ? site->args_fixed : EMB_LOG_ARGS_MORE;
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


struct arg_value {
    char type;
    uint64_t u;          /* integer bits, zero- or sign-extended to 64 */
    double f;
    const uint8_t *s;
    size_t slen;
    bool snull, sclip;
};

static size_t decode_args(const struct emb_logdb *db, const struct emb_log_site *site,
                               const uint8_t *p, struct arg_value *out)
{
    size_t off = 0;
    for (size_t i = 0; i < site->nargs; i++) {
        struct arg_value *a = &out[i];
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
            a->u = db->ptr_bytes == 8u   ? emb_get_le64(p + off)
                   : db->ptr_bytes == 4u ? emb_get_le32(p + off)
                                         : emb_get_le16(p + off); /* a 16-bit target: AVR */
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


/* An integer cut to the width its length modifier has on the target (sign- or
 * zero-extended back) and printed as a long long (`spec` ends in "ll" and the
 * conversion), so the text is what the target's printf prints for it. */
static void format_integer(const struct emb_logdb *db, struct emb_buf *b, const char *spec,
                           char conv, const char *len, uint64_t v)
{
    unsigned bits = 8u * emb_log_target_int_bytes(db, len);
    uint64_t keep = bits >= 64u ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1u;
    v &= keep;
    if ((conv == 'd' || conv == 'i') && bits < 64u && (v >> (bits - 1u)) != 0u)
        v |= ~keep; /* negative on the target */
    if (spec[0] == '%' && spec[1] == 'l' && spec[2] == 'l' && spec[4] == '\0' &&
        (conv == 'd' || conv == 'i' || conv == 'u' || conv == 'x')) {
        /* No flag, width or precision: the digits by hand (out_buf.h), as printf writes them. */
        char digits[24];
        size_t n = conv == 'u'   ? emb_fmt_u64(digits, v)
                   : conv == 'x' ? emb_fmt_hex(digits, v, 0)
                                 : emb_fmt_i64(digits, (int64_t)v);
        emb_buf_append(b, digits, n);
    } else if (conv == 'd' || conv == 'i') {
        emb_buf_printf(b, spec, (long long)v);
    } else {
        emb_buf_printf(b, spec, (unsigned long long)v);
    }
}

static bool format_string(struct emb_buf *b, const char *spec, const struct arg_value *a,
                          const char **why)
{
    if (a->type != EMB_LOG_ARG_STR) {
        if (a->type == EMB_LOG_ARG_PTR)
            *why = "the argument is a pointer of a type recorded by address, not a string "
                   "(char *, uint8_t *)";
        return false;
    }
    if (!a->snull && spec[0] == '%' && spec[1] == 's' && spec[2] == '\0') {
        const uint8_t *nul = memchr(a->s, 0, a->slen); /* "%s": the text, to a NUL */
        emb_buf_append(b, a->s, nul != NULL ? (size_t)(nul - a->s) : a->slen);
        return true;
    }
    char text[128];
    memcpy(text, a->s, a->slen);
    text[a->slen] = '\0';
#if defined(__GLIBC__)
    emb_buf_printf(b, spec, a->snull ? (const char *)NULL : text); /* as printf prints NULL */
#else
    emb_buf_printf(b, spec, a->snull ? "(null)" : text);
#endif
    return true;
}

/* One conversion, formatted by the host's printf. False when the argument recorded is not
 * of a kind the conversion takes (*why may say more). */
static bool format_arg(const struct emb_logdb *db, struct emb_buf *b, const char *spec,
                       char conv, const char *len, const struct arg_value *a, const char **why)
{
    switch (conv) {
    case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
        if (!emb_log_arg_is_int(a->type))
            return false;
        format_integer(db, b, spec, conv, len, a->u);
        return true;
    case 'c':
        if (!emb_log_arg_is_int(a->type))
            return false;
        emb_buf_printf(b, spec, (int)a->u);
        return true;
    case 'p':
        if (a->type == EMB_LOG_ARG_STR)
            *why = "a char or uint8_t pointer is recorded as the string it points to: cast it "
                   "to (void *) to log the address";
        if (!emb_log_arg_is_int(a->type))
            return false;
        emb_buf_printf(b, spec, (void *)(uintptr_t)a->u);
        return true;
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        if (a->type != EMB_LOG_ARG_F64)
            return false;
        if (!strcmp(len, "L"))
            emb_buf_printf(b, spec, (long double)a->f);
        else
            emb_buf_printf(b, spec, a->f);
        return true;
    case 's':
        return format_string(b, spec, a, why);
    default:
        return false;
    }
}

/* Formats one conversion (`written` is its text in the format, for a mark), followed by
 * the clip mark when a %s was clipped on the target. */
static void convert(const struct emb_logdb *db, struct emb_buf *b, const char *spec,
                    const char *written, size_t wlen, char conv, const char *len,
                    const struct arg_value *a, bool *clipped, const char **mark)
{
    const char *why = "the argument recorded is not one it takes";
    if (!format_arg(db, b, spec, conv, len, a, &why)) {
        emb_buf_printf(b, "<%.*s: %s>", (int)wlen, written, why);
        if (*mark == NULL)
            *mark = why;
        return;
    }
    if (conv == 's' && a->sclip) {
        if (clipped != NULL)
            *clipped = true;
        emb_buf_append(b, EMB_LOG_CLIP_MARK, sizeof EMB_LOG_CLIP_MARK - 1u);
    }
}


/* Why a conversion lies outside what the deferred log reproduces, or NULL. */
static const char *unsupported(char conv, const char *len, bool positional)
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


/* One conversion of a format, read: the spec rebuilt for the host's printf ('*' replaced
 * by the recorded int, each flag once), its length modifier and conversion character. */
struct conversion {
    char spec[96];
    size_t sn;
    char flags[8];
    char lenmod[3];
    char conv;
    bool positional;
};

/* The width (part 0) or precision (part 1) of a conversion at *p: digits, or '*' taken
 * from the argument at *next. */
static void read_width(struct conversion *cv, int part, const char **p,
                       const struct arg_value *av, size_t nargs, size_t *next)
{
    if (**p == '*') {
        (*p)++;
        long v = *next < nargs && emb_log_arg_is_int(av[*next].type) ? (long)(int)av[*next].u : 0;
        (*next)++;
        if (part == 0 && v < 0) {
            if (strchr(cv->flags, '-') == NULL)
                cv->spec[cv->sn++] = '-';
            v = -v;
        }
        if (part == 1 && v < 0)
            cv->sn--; /* a negative precision is no precision */
        else
            cv->sn += (size_t)snprintf(cv->spec + cv->sn, sizeof cv->spec - cv->sn, "%ld", v);
        return;
    }
    while (**p >= '0' && **p <= '9') {
        if (cv->sn < 60u)
            cv->spec[cv->sn++] = **p;
        (*p)++;
    }
}

/* Reads the conversion whose '%' is at `pct`. Returns where the format goes on after it,
 * or NULL when the format ends inside it. */
static const char *read_conversion(const char *pct, struct conversion *cv,
                                   const struct arg_value *av, size_t nargs, size_t *next)
{
    memset(cv, 0, sizeof *cv);
    const char *p = pct + 1;
    /* A positional argument: digits and '$' right after the '%'. */
    const char *q = p;
    while (*q >= '0' && *q <= '9')
        q++;
    cv->positional = q > p && *q == '$';
    if (cv->positional)
        p = q + 1;
    cv->spec[cv->sn++] = '%';
    /* Flags may repeat (printf takes any number): each is kept once. */
    size_t nflags = 0;
    for (; *p != '\0' && strchr("-+ #0'I", *p) != NULL; p++)
        if (strchr(cv->flags, *p) == NULL && nflags < sizeof cv->flags - 1u) {
            cv->flags[nflags++] = *p;
            cv->spec[cv->sn++] = *p;
        }
    read_width(cv, 0, &p, av, nargs, next);
    if (*p == '.') {
        cv->spec[cv->sn++] = *p++;
        read_width(cv, 1, &p, av, nargs, next);
    }
    size_t ln = 0;
    while (*p != '\0' && strchr("hlLqjzZt", *p) != NULL && ln < 2u)
        cv->lenmod[ln++] = *p++;
    cv->conv = *p;
    return cv->conv == '\0' ? NULL : p + 1;
}

/* Writes a conversion read by read_conversion(); `written` (wlen bytes) is its text. */
static void write_conversion(const struct emb_logdb *db, const struct emb_log_site *site,
                             const struct arg_value *av, size_t *next, struct conversion *cv,
                             const char *written, size_t wlen, struct emb_buf *b, bool *clipped,
                             const char **mark)
{
    const char *why = unsupported(cv->conv, cv->lenmod, cv->positional);
    if (why != NULL) {
        emb_buf_printf(b, "<%.*s: %s>", (int)wlen, written, why);
        if (*mark == NULL)
            *mark = why;
        return;
    }
    if (strchr("diouxX", cv->conv) != NULL) {
        cv->spec[cv->sn++] = 'l'; /* printed as a long long (format_integer) */
        cv->spec[cv->sn++] = 'l';
    } else {
        size_t ln = strlen(cv->lenmod);
        memcpy(cv->spec + cv->sn, cv->lenmod, ln);
        cv->sn += ln;
    }
    cv->spec[cv->sn++] = cv->conv;
    cv->spec[cv->sn] = '\0';
    if (cv->conv == 'n') {
        (*next)++; /* %n stores, it prints nothing */
        return;
    }
    if (*next >= site->nargs) {
        emb_buf_printf(b, "<%.*s: missing argument>", (int)wlen, written);
        if (*mark == NULL)
            *mark = "missing argument";
        return;
    }
    convert(db, b, cv->spec, written, wlen, cv->conv, cv->lenmod, &av[(*next)++], clipped, mark);
}

/* Hands the text over NUL-terminated; false when memory ran out. */
static bool take_text(struct emb_buf *b, char **out, size_t *len)
{
    emb_buf_append_byte(b, 0);
    *out = (char *)emb_buf_take(b, len);
    if (*out == NULL)
        return false;
    (*len)--;
    return true;
}

bool emb_log_format(const struct emb_logdb *db, const struct emb_log_site *site,
                    const uint8_t *args, size_t args_len, char **out, size_t *len, bool *clipped,
                    const char **mark)
{
    struct emb_buf b = {0};
    struct arg_value av[256];
    const char *err;
    *clipped = false;
    *mark = NULL;
    long need = emb_log_args_size(db, site, args, args_len, &err);
    if (need < 0 || (size_t)need != args_len) {
        emb_buf_printf(&b, "<%s>", err != NULL ? err : "arguments do not match the call site");
        take_text(&b, out, len);
        return false;
    }
    if (site->plan != NULL && emb_buf_reserve(&b, db->plan_text_max) &&
        emb_log_format_planned(db, site, args, (char *)b.data, &b.len, clipped)) {
        *out = (char *)b.data;
        *len = b.len;
        (*out)[b.len] = '\0';
        return true;
    }
    decode_args(db, site, args, av);
    size_t next = 0;
    const char *f = site->fmt;
    while (*f != '\0') {
        const char *pct = strchr(f, '%');
        if (pct == NULL) {
            emb_buf_append(&b, f, strlen(f));
            break;
        }
        emb_buf_append(&b, f, (size_t)(pct - f));
        if (pct[1] == '%') {
            emb_buf_append(&b, "%", 1u);
            f = pct + 2;
            continue;
        }
        struct conversion cv;
        f = read_conversion(pct, &cv, av, site->nargs, &next);
        if (f == NULL) {
            emb_buf_append(&b, pct, strlen(pct));
            break;
        }
        write_conversion(db, site, av, &next, &cv, pct, (size_t)(f - pct), &b, clipped, mark);
    }
    return take_text(&b, out, len);
}
