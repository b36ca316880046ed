/* Call-site formats read once, records formatted by hand from them (log_plan.h). */
#include "log_plan.h"

#include <stdlib.h>
#include <string.h>

#include <emb/log_format.h>
#include <emb/wire.h>

#include "out_buf.h"

struct plan_step {
    const char *lit;     /* literal text before the conversion, in the site's format */
    size_t lit_len;
    char conv;           /* 'd' (for %d and %i), 'u', 'x', 's'; 0: the literal alone */
    char type;           /* the argument's recorded type (the site's signature) */
    uint8_t bits;        /* an integer conversion's width on the target */
};

struct emb_log_plan {
    size_t nsteps;
    struct plan_step steps[];
};

unsigned emb_log_target_int_bytes(const struct emb_logdb *db, const char *len)
{
    if (!strcmp(len, "hh")) return 1u;
    if (!strcmp(len, "h")) return 2u;
    if (!strcmp(len, "l")) return db->long_bytes;
    if (!strcmp(len, "ll") || !strcmp(len, "q") || !strcmp(len, "L") || !strcmp(len, "j")) return 8u;
    if (!strcmp(len, "z") || !strcmp(len, "Z")) return db->size_bytes;
    if (!strcmp(len, "t")) return db->ptrdiff_bytes;
    return db->int_bytes;
}

bool emb_log_arg_is_int(char t)
{
    return t == EMB_LOG_ARG_I32 || t == EMB_LOG_ARG_U32 || t == EMB_LOG_ARG_I64 ||
           t == EMB_LOG_ARG_U64 || t == EMB_LOG_ARG_PTR;
}

/* The conversion at `pct` (not "%%") as a step, read as emb_log_format reads it: a length
 * modifier of at most two characters, then the conversion. Returns where the format goes
 * on, or NULL when the conversion is not one a plan writes. */
static const char *plan_conversion(const struct emb_logdb *db, const struct emb_log_site *site,
                                   size_t arg, const char *pct, struct plan_step *step)
{
    const char *p = pct + 1;
    char len[3] = {0};
    size_t ln = 0;
    while (*p != '\0' && strchr("hlLqjzZt", *p) != NULL && ln < 2u)
        len[ln++] = *p++;
    char conv = *p == 'i' ? 'd' : *p;
    if (arg >= site->nargs || conv == '\0')
        return NULL;
    step->type = site->sig[arg];
    step->conv = conv;
    if (conv == 's')
        return ln == 0u && step->type == EMB_LOG_ARG_STR ? p + 1 : NULL;
    unsigned bytes = emb_log_target_int_bytes(db, len);
    if (strchr("dux", conv) == NULL || !emb_log_arg_is_int(step->type) || bytes == 0u || bytes > 8u)
        return NULL;
    step->bits = (uint8_t)(8u * bytes);
    return p + 1;
}

/* A site's plan, or NULL when its format has a conversion only the general path writes
 * (or memory ran out). *text_max gets the longest text it can make. */
static struct emb_log_plan *plan_site(const struct emb_logdb *db, const struct emb_log_site *site,
                                      size_t *text_max)
{
    size_t cap = 1;
    for (const char *q = site->fmt; (q = strchr(q, '%')) != NULL; q++)
        cap++;
    struct emb_log_plan *plan = malloc(sizeof *plan + cap * sizeof plan->steps[0]);
    if (plan == NULL)
        return NULL;
    size_t n = 0, arg = 0, max = 0;
    const char *lit = site->fmt;
    for (;;) {
        struct plan_step *s = &plan->steps[n++];
        memset(s, 0, sizeof *s);
        s->lit = lit;
        const char *pct = strchr(lit, '%');
        if (pct == NULL) {
            s->lit_len = strlen(lit);
            max += s->lit_len;
            break;
        }
        s->lit_len = (size_t)(pct - lit) + (pct[1] == '%'); /* "%%": the one '%' is literal */
        max += s->lit_len;
        if (pct[1] == '%') {
            lit = pct + 2;
            continue;
        }
        if ((lit = plan_conversion(db, site, arg++, pct, s)) == NULL) {
            free(plan);
            return NULL;
        }
        max += s->conv == 's' ? (size_t)db->str_max + sizeof EMB_LOG_CLIP_MARK : 20u;
    }
    plan->nsteps = n;
    *text_max = max;
    return plan;
}

/* Bytes a site's arguments always take, or -1 when a %s makes them vary. */
static long fixed_args(const struct emb_logdb *db, const struct emb_log_site *site)
{
    long n = 0;
    if (site->kind != EMB_LOG_SITE_PRINTF)
        return -1;
    for (size_t i = 0; i < site->nargs; i++)
        switch (site->sig[i]) {
        case EMB_LOG_ARG_STR: return -1;
        case EMB_LOG_ARG_I32:
        case EMB_LOG_ARG_U32: n += 4; break;
        case EMB_LOG_ARG_PTR: n += db->ptr_bytes; break;
        default: n += 8; break;
        }
    return n;
}

bool emb_log_plan_sites(struct emb_logdb *db)
{
    db->plan_text_max = 1u + PLAN_SLACK;
    for (size_t i = 0; i < db->nsites; i++) {
        struct emb_log_site *site = &db->sites[i];
        size_t max = 0;
        site->args_fixed = fixed_args(db, site);
        site->plan = site->kind == EMB_LOG_SITE_PRINTF ? plan_site(db, site, &max) : NULL;
        if (site->plan != NULL && max + 1u + PLAN_SLACK > db->plan_text_max)
            db->plan_text_max = max + 1u + PLAN_SLACK;
    }
    return true;
}

void emb_log_plans_free(struct emb_logdb *db)
{
    for (size_t i = 0; i < db->nsites; i++)
        free((void *)db->sites[i].plan);
}

/* An integer argument at *off, as the general path reads it (zero- or sign-extended). */
static uint64_t read_int(const struct emb_logdb *db, char type, const uint8_t *p, size_t *off)
{
    uint64_t v;
    switch (type) {
    case EMB_LOG_ARG_I32: v = (uint64_t)(int64_t)(int32_t)emb_get_le32(p + *off); *off += 4u; break;
    case EMB_LOG_ARG_U32: v = emb_get_le32(p + *off); *off += 4u; break;
    case EMB_LOG_ARG_PTR:
        v = db->ptr_bytes == 8u   ? emb_get_le64(p + *off)
            : db->ptr_bytes == 4u ? emb_get_le32(p + *off)
                                  : emb_get_le16(p + *off);
        *off += db->ptr_bytes;
        break;
    default: v = emb_get_le64(p + *off); *off += 8u; break;
    }
    return v;
}

/* The digits of an integer cut to the width it has on the target, as printf("%ll?")
 * writes the value sign- or zero-extended back. */
static size_t write_int(char *o, const struct plan_step *s, uint64_t v)
{
    uint64_t keep = s->bits >= 64u ? ~(uint64_t)0 : ((uint64_t)1 << s->bits) - 1u;
    v &= keep;
    if (s->conv == 'u')
        return emb_fmt_u64(o, v);
    if (s->conv == 'x')
        return emb_fmt_hex(o, v, 0);
    if (s->bits < 64u && (v >> (s->bits - 1u)) != 0u)
        v |= ~keep; /* negative on the target */
    return emb_fmt_i64(o, (int64_t)v);
}

bool emb_log_format_planned(const struct emb_logdb *db, const struct emb_log_site *site,
                            const uint8_t *args, char *out, size_t *len, bool *clipped)
{
    const struct emb_log_plan *plan = site->plan;
    if (plan == NULL)
        return false;
    char *o = out;
    size_t off = 0;
    *clipped = false;
    for (size_t i = 0; i < plan->nsteps; i++) {
        const struct plan_step *s = &plan->steps[i];
        if (s->lit_len <= PLAN_SLACK)
            memcpy(o, s->lit, PLAN_SLACK); /* a fixed size: no call (log_plan.h) */
        else
            memcpy(o, s->lit, s->lit_len);
        o += s->lit_len;
        if (s->conv == 0)
            continue;
        if (s->conv != 's') {
            o += write_int(o, s, read_int(db, s->type, args, &off));
            continue;
        }
        uint8_t b = args[off];
        if (b == EMB_LOG_STR_NULL)
            return false; /* printf's "(null)": the general path */
        size_t n = b & 0x7Fu;
        const uint8_t *str = args + off + 1u, *nul = memchr(str, 0, n);
        size_t keep = nul != NULL ? (size_t)(nul - str) : n;
        memcpy(o, str, keep);
        o += keep;
        off += 1u + n;
        if ((b & EMB_LOG_STR_CLIPPED) != 0u && n > 0u) {
            *clipped = true;
            memcpy(o, EMB_LOG_CLIP_MARK, sizeof EMB_LOG_CLIP_MARK - 1u);
            o += sizeof EMB_LOG_CLIP_MARK - 1u;
        }
    }
    *len = (size_t)(o - out);
    return true;
}
