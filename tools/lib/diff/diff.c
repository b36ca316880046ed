/* The two-run comparison engine (docs/diff.md). */
#define _POSIX_C_SOURCE 200809L

#include "diff.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "input_file.h"

#define MYERS_MAX_D 2048u /* edit distance past which an epoch is not aligned (docs/diff.md) */

static const char *const rule_names[EMB_DIFF_NRULES] = {
    "missing", "extra", "reorder", "argument", "epoch-duration", "interval", "drops",
};

const char *emb_diff_rule_name(enum emb_diff_rule rule)
{
    return (unsigned)rule < EMB_DIFF_NRULES ? rule_names[rule] : "?";
}

/* ---- rules ---- */

void emb_diff_rules_default(struct emb_diff_rules *r)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < EMB_DIFF_NRULES; i++)
        r->enabled[i] = true;
    r->margin_pct = 25.0;
    r->margin_us = 20.0;
    r->quantile_pct = 5.0;
    r->repeat = 10;
    r->context_lines = 3;
    r->anchor_field = -2;
}

void emb_diff_rules_free(struct emb_diff_rules *r)
{
    free(r->policies);
    free(r->switches);
    r->policies = NULL;
    r->npolicies = 0;
    r->switches = NULL;
    r->nswitches = 0;
}

static int rule_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int rule_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static long find_field(const struct emb_catalog_event *ev, const char *name, size_t len)
{
    for (size_t f = 0; f < ev->nfields; f++)
        if (strlen(ev->fields[f].name) == len && !strncmp(ev->fields[f].name, name, len))
            return (long)f;
    return -1;
}

/* "EVENT.FIELD" or "EVENT": the event, and the field index (-1 none given). */
static int parse_event_field(const struct emb_catalog *cat, const char *spec,
                             const struct emb_catalog_event **ev, long *field, char *err, size_t errlen)
{
    const char *dot = strchr(spec, '.');
    size_t n = dot ? (size_t)(dot - spec) : strlen(spec);
    char name[80];
    if (n == 0 || n >= sizeof name)
        return rule_error(err, errlen, "'%s' is not EVENT or EVENT.FIELD", spec);
    memcpy(name, spec, n);
    name[n] = 0;
    if (!(*ev = emb_catalog_find(cat, name)))
        return rule_error(err, errlen, "no event '%s' in the catalogue", name);
    *field = -1;
    if (dot && (*field = find_field(*ev, dot + 1, strlen(dot + 1))) < 0)
        return rule_error(err, errlen, "event %s has no field '%s'", name, dot + 1);
    return 0;
}

int emb_diff_rules_anchor(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *spec,
                          char *err, size_t errlen)
{
    const struct emb_catalog_event *ev;
    long f;
    if (parse_event_field(cat, spec, &ev, &f, err, errlen) != 0)
        return -1;
    if (f >= 0 && ev->fields[f].type == EMB_CAT_CHARS)
        return rule_error(err, errlen, "the anchor field must be an integer, not %s", spec);
    r->anchor_event = ev;
    r->anchor_field = f;
    r->anchor_given = true;
    return 0;
}

static bool parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && !*end && errno == 0 && isfinite(*v) && *v >= 0;
}

/* Splits a line into at most 8 words; "double quotes" keep spaces in a word; '#' outside
 * quotes starts a comment. Returns the count, or -1 (too many words, an open quote). */
static int split(char *line, char **w)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            return n;
        if (n == 8)
            return -1;
        if (*p == '"') {
            w[n++] = ++p;
            while (*p && *p != '"')
                p++;
            if (!*p)
                return -1;
        } else {
            w[n++] = p;
            while (*p && !isspace((unsigned char)*p) && *p != '#')
                p++;
            if (*p == '#') {
                *p = 0;
                return n;
            }
        }
        if (*p)
            *p++ = 0;
    }
}

static int parse_compare(struct emb_diff_rules *r, const struct emb_catalog *cat, char **w, int n,
                         char *err, size_t errlen)
{
    /* compare EVENT.FIELD exact|ignore|tolerance N|tolerance_pct N [when FIELD=VALUE] */
    struct emb_diff_policy p = {0};
    long f;
    if (n < 3)
        return rule_error(err, errlen, "compare EVENT.FIELD POLICY [when FIELD=VALUE]");
    if (parse_event_field(cat, w[1], &p.event, &f, err, errlen) != 0)
        return -1;
    if (f < 0)
        return rule_error(err, errlen, "compare needs EVENT.FIELD, not '%s'", w[1]);
    p.field = (size_t)f;
    int at = 3;
    if (!strcmp(w[2], "exact")) {
        p.compare = EMB_CAT_COMPARE_EXACT;
    } else if (!strcmp(w[2], "ignore")) {
        p.compare = EMB_CAT_COMPARE_IGNORE;
    } else if (!strcmp(w[2], "tolerance") || !strcmp(w[2], "tolerance_pct")) {
        p.compare = w[2][9] ? EMB_CAT_COMPARE_TOLERANCE_PCT : EMB_CAT_COMPARE_TOLERANCE;
        if (n < 4 || !parse_double(w[3], &p.tolerance))
            return rule_error(err, errlen, "%s needs a number that is not negative", w[2]);
        if (p.event->fields[f].type == EMB_CAT_CHARS)
            return rule_error(err, errlen, "a tolerance needs an integer field");
        at = 4;
    } else {
        return rule_error(err, errlen, "policy '%s': exact, ignore, tolerance N or tolerance_pct N",
                          w[2]);
    }
    if (at < n) {
        char *eq = at + 1 < n ? strchr(w[at + 1], '=') : NULL;
        if (strcmp(w[at], "when") || !eq || at + 2 != n)
            return rule_error(err, errlen, "expected 'when FIELD=VALUE' after the policy");
        long wf = find_field(p.event, w[at + 1], (size_t)(eq - w[at + 1]));
        if (wf < 0 || p.event->fields[wf].type == EMB_CAT_CHARS)
            return rule_error(err, errlen, "event %s has no integer field '%.*s'", p.event->name,
                              (int)(eq - w[at + 1]), w[at + 1]);
        char *end;
        errno = 0;
        p.when_value = strtoll(eq + 1, &end, 0);
        if (end == eq + 1 || *end || errno)
            return rule_error(err, errlen, "'%s' is not a number", eq + 1);
        p.has_when = true;
        p.when_field = (size_t)wf;
    }
    void *q = realloc(r->policies, (r->npolicies + 1) * sizeof *r->policies);
    if (!q)
        return rule_error(err, errlen, "out of memory");
    r->policies = q;
    r->policies[r->npolicies++] = p;
    return 0;
}

int emb_diff_rules_line(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *text,
                        char *err, size_t errlen)
{
    char line[512], *w[8];
    if (strlen(text) >= sizeof line)
        return rule_error(err, errlen, "line too long");
    strcpy(line, text);
    int n = split(line, w);
    if (n < 0)
        return rule_error(err, errlen, "too many words");
    if (n == 0)
        return 0;
    double v;
    if (!strcmp(w[0], "rule")) {
        if (n != 3 || (strcmp(w[2], "on") && strcmp(w[2], "off")))
            return rule_error(err, errlen, "rule NAME on|off");
        for (int i = 0; i < EMB_DIFF_NRULES; i++)
            if (!strcmp(w[1], rule_names[i])) {
                r->enabled[i] = !strcmp(w[2], "on");
                return 0;
            }
        return rule_error(err, errlen, "no rule '%s' (missing, extra, reorder, argument, "
                          "epoch-duration, interval, drops)", w[1]);
    }
    if (!strcmp(w[0], "context")) {
        /* context NAME RULE on|off */
        if (n != 4 || (strcmp(w[3], "on") && strcmp(w[3], "off")) || !w[1][0] ||
            strlen(w[1]) >= sizeof r->switches[0].context)
            return rule_error(err, errlen, "context NAME RULE on|off (quote a NAME with spaces)");
        int rule = -1;
        for (int i = 0; i < EMB_DIFF_NRULES; i++)
            if (!strcmp(w[2], rule_names[i]))
                rule = i;
        if (rule < 0)
            return rule_error(err, errlen, "no rule '%s'", w[2]);
        void *q = realloc(r->switches, (r->nswitches + 1) * sizeof *r->switches);
        if (!q)
            return rule_error(err, errlen, "out of memory");
        r->switches = q;
        struct emb_diff_switch *sw = &r->switches[r->nswitches++];
        snprintf(sw->context, sizeof sw->context, "%s", w[1]);
        sw->rule = (uint8_t)rule;
        sw->enabled = !strcmp(w[3], "on");
        return 0;
    }
    if (!strcmp(w[0], "margin-pct") || !strcmp(w[0], "margin-us") || !strcmp(w[0], "repeat") ||
        !strcmp(w[0], "context-lines") || !strcmp(w[0], "quantile")) {
        if (n != 2 || !parse_double(w[1], &v))
            return rule_error(err, errlen, "%s needs one number that is not negative", w[0]);
        if (!strcmp(w[0], "quantile")) {
            if (v >= 50)
                return rule_error(err, errlen, "quantile takes a percentage below 50");
            r->quantile_pct = v;
        } else if (!strcmp(w[0], "margin-pct"))
            r->margin_pct = v;
        else if (!strcmp(w[0], "margin-us"))
            r->margin_us = v;
        else if (v < 1 || v > 1000 || v != floor(v))
            return rule_error(err, errlen, "%s takes a whole number from 1 to 1000", w[0]);
        else if (!strcmp(w[0], "repeat"))
            r->repeat = (unsigned)v;
        else
            r->context_lines = (unsigned)v;
        return 0;
    }
    if (!strcmp(w[0], "anchor")) {
        if (n != 2)
            return rule_error(err, errlen, "anchor EVENT[.FIELD]");
        return emb_diff_rules_anchor(r, cat, w[1], err, errlen);
    }
    if (!strcmp(w[0], "compare"))
        return parse_compare(r, cat, w, n, err, errlen);
    return rule_error(err, errlen, "unknown setting '%s' (rule, context, margin-pct, margin-us, "
                      "quantile, repeat, context-lines, anchor, compare)", w[0]);
}

int emb_diff_rules_load(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *path,
                        char *err, size_t errlen)
{
    /* Read whole and bounded: a directory or /dev/zero is refused, never read as no rules
     * or forever. */
    char why[400];
    size_t len = 0;
    uint8_t *text = emb_input_read_max(path, EMB_DIFF_RULES_MAX_BYTES, &len, why, sizeof why);
    if (!text)
        return rule_error(err, errlen, "%s: %s", path, why);
    const uint8_t *nul = memchr(text, 0, len);
    if (nul) {
        size_t at = (size_t)(nul - text);
        free(text);
        return rule_error(err, errlen, "%s: byte %zu: a NUL byte: not a text file", path, at);
    }
    unsigned no = 0;
    int rc = 0;
    for (char *line = (char *)text; rc == 0 && line < (char *)text + len;) {
        char *eol = strchr(line, '\n');
        char *next = eol ? eol + 1 : (char *)text + len;
        if (eol)
            *eol = 0;
        no++;
        line[strcspn(line, "\r")] = 0;
        if (strlen(line) >= 1024)
            rc = rule_error(err, errlen, "%s:%u: a line longer than 1023 bytes", path, no);
        else if (emb_diff_rules_line(r, cat, line, why, sizeof why) != 0)
            rc = rule_error(err, errlen, "%s:%u: %s", path, no, why);
        line = next;
    }
    free(text);
    return rc;
}

/* ---- small containers ---- */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

static uint64_t mix64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15u + (h << 6) + (h >> 2);
    h *= 0xFF51AFD7ED558CCDu;
    return h ^ (h >> 33);
}

/* Open addressing from a 64-bit key to an index. */
struct map {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, n;
};

static bool map_put(struct map *m, uint64_t key, uint32_t val);

static bool map_grow(struct map *m)
{
    struct map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->keys = malloc(m->cap * sizeof *m->keys);
    m->vals = malloc(m->cap * sizeof *m->vals);
    m->n = 0;
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        *m = old;
        return false;
    }
    memset(m->vals, 0xFF, m->cap * sizeof *m->vals);
    for (size_t i = 0; i < old.cap; i++)
        if (old.vals[i] != UINT32_MAX)
            map_put(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
    return true;
}

static uint32_t map_get(const struct map *m, uint64_t key)
{
    if (!m->cap)
        return UINT32_MAX;
    for (size_t i = mix64(0, key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->vals[i] == UINT32_MAX)
            return UINT32_MAX;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

static bool map_put(struct map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap && !map_grow(m))
        return false;
    size_t i = mix64(0, key) & (m->cap - 1);
    while (m->vals[i] != UINT32_MAX && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->vals[i] == UINT32_MAX)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

static void map_free(struct map *m)
{
    free(m->keys);
    free(m->vals);
}

/* ---- the comparison's state ---- */

struct work {
    struct emb_diff *d;
    const struct emb_catalog *cat;
    const struct emb_catalog_event *irq_enter;
    char *err;
    size_t errlen;
    bool oom;
    size_t ctx_cap, item_cap, gap_cap;
    /* thread id -> global thread-name index, per run */
    uint32_t *tid_map[2];
    size_t tid_n[2];
    size_t anchor_ctx[2];
    size_t *marker_pos[2];   /* [epochs + 1] index of marker k in the anchor context */
    size_t markers_after[2]; /* anchor markers a run has after the last compared one */
    long closed_ctx[2];      /* the ring that filled and closed the window, -1 none */
    uint64_t closed_ns[2], closed_count[2];
};

static int refuse(struct work *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct work *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static long ctx_find(struct emb_diff *d, const char *name, uint8_t kind)
{
    for (size_t i = 0; i < d->nctx; i++)
        if (d->ctx[i].kind == kind && !strcmp(d->ctx[i].name, name))
            return (long)i;
    return -1;
}

static long ctx_get(struct work *w, const char *name, uint8_t kind)
{
    struct emb_diff *d = w->d;
    long i = ctx_find(d, name, kind);
    if (i >= 0)
        return i;
    if (!grow((void **)&d->ctx, &w->ctx_cap, d->nctx + 1, sizeof *d->ctx)) {
        w->oom = true;
        return -1;
    }
    struct emb_diff_ctx *c = &d->ctx[d->nctx];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->kind = kind;
    return (long)d->nctx++;
}

/* Records in a diff context before they are laid out: for the merge of interrupt
 * contexts across rings. */
struct pending {
    const struct emb_trace_event *rec;
    uint32_t ring, pos;
};

static int cmp_pending(const void *x, const void *y)
{
    const struct pending *a = x, *b = y;
    if (a->rec->ns != b->rec->ns)
        return a->rec->ns < b->rec->ns ? -1 : 1;
    if (a->ring != b->ring)
        return a->ring < b->ring ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The name a thread context goes by: its ring's name, numbered when a run has two. */
static void thread_key(const struct emb_trace *t, size_t ring, char *buf, size_t len)
{
    const struct emb_trace_context *c = emb_trace_context(t, ring);
    unsigned same = 0;
    for (size_t i = 0; i < ring; i++)
        same += !strcmp(emb_trace_context(t, i)->name, c->name);
    if (same)
        snprintf(buf, len, "%s#%u", c->name, same + 1);
    else
        snprintf(buf, len, "%s", c->name);
}

static int build_contexts(struct work *w, int side)
{
    struct emb_diff *d = w->d;
    const struct emb_trace *t = d->trace[side];
    size_t nrings = emb_trace_context_count(t);
    struct pending **lists = calloc(d->nctx + nrings + 64, sizeof *lists);
    size_t *counts = NULL, *caps = NULL, nlists = d->nctx + nrings + 64;
    counts = calloc(nlists, sizeof *counts);
    caps = calloc(nlists, sizeof *caps);
    /* thread id -> name index shared by both runs, for `meaning: thread` fields */
    w->tid_map[side] = malloc(65536 * sizeof(uint32_t));
    if (!lists || !counts || !caps || !w->tid_map[side]) {
        free(lists);
        free(counts);
        free(caps);
        w->oom = true;
        return -1;
    }
    memset(w->tid_map[side], 0xFF, 65536 * sizeof(uint32_t));
    char key[64];
    int rc = 0;
    for (size_t r = 0; r < nrings && rc == 0; r++) {
        const struct emb_trace_context *c = emb_trace_context(t, r);
        thread_key(t, r, key, sizeof key);
        long tc = ctx_get(w, key, EMB_DIFF_CTX_THREAD);
        if (tc < 0) {
            rc = -1;
            break;
        }
        w->tid_map[side][c->id] = (uint32_t)tc;
        int32_t irq_at[64];
        for (int i = 0; i < 64; i++)
            irq_at[i] = -1;
        for (size_t k = 0; k < c->nrecs; k++) {
            const struct emb_trace_event *rec = &c->recs[k];
            if (rec->type != EMB_TREC_EVENT)
                continue;
            long target = tc;
            if (rec->kind == EMB_EVT_KIND_ISR) {
                unsigned depth = rec->depth < 64 ? rec->depth : 63;
                if (rec->ev == w->irq_enter && rec->ev->nfields > 0)
                    irq_at[depth] = (int32_t)emb_catalog_field_get_uint(&rec->ev->fields[0], rec->payload);
                if (irq_at[depth] >= 0)
                    snprintf(key, sizeof key, "irq %d", (int)irq_at[depth]);
                else
                    snprintf(key, sizeof key, "irq ?");
                target = ctx_get(w, key, EMB_DIFF_CTX_IRQ);
            } else if (rec->kind == EMB_EVT_KIND_FAULT) {
                target = ctx_get(w, "fault", EMB_DIFF_CTX_FAULT);
            }
            if (target < 0 || (size_t)target >= nlists) {
                rc = -1;
                w->oom = w->oom || target < 0;
                break;
            }
            if (!grow((void **)&lists[target], &caps[target], counts[target] + 1, sizeof **lists)) {
                w->oom = true;
                rc = -1;
                break;
            }
            lists[target][counts[target]++] = (struct pending){rec, (uint32_t)r, (uint32_t)k};
        }
    }
    for (size_t i = 0; i < d->nctx && rc == 0; i++) {
        struct emb_diff_ctx *c = &d->ctx[i];
        if (!counts[i] && c->kind != EMB_DIFF_CTX_THREAD)
            continue;
        if (c->kind == EMB_DIFF_CTX_THREAD) {
            /* present when the run has the ring, even without events */
            bool has = false;
            for (size_t r = 0; r < nrings && !has; r++) {
                thread_key(t, r, key, sizeof key);
                has = !strcmp(key, c->name);
            }
            if (!has)
                continue;
        } else {
            qsort(lists[i], counts[i], sizeof **lists, cmp_pending);
        }
        c->present[side] = true;
        c->n[side] = counts[i];
        c->ev[side] = calloc(counts[i] ? counts[i] : 1, sizeof *c->ev[side]);
        if (!c->ev[side]) {
            w->oom = true;
            rc = -1;
            break;
        }
        for (size_t k = 0; k < counts[i]; k++) {
            c->ev[side][k].rec = lists[i][k].rec;
            c->ev[side][k].ns = lists[i][k].rec->ns;
            c->ev[side][k].peer = -1;
        }
    }
    for (size_t i = 0; i < nlists; i++)
        free(lists[i]);
    free(lists);
    free(counts);
    free(caps);
    return rc;
}

/* ---- identity ---- */

static enum emb_catalog_compare policy_of(const struct emb_diff_rules *r, const struct emb_catalog_event *ev,
                                      size_t f, const uint8_t *payload, double *tol)
{
    const struct emb_catalog_field *fd = &ev->fields[f];
    enum emb_catalog_compare c = fd->compare;
    *tol = fd->tolerance;
    for (size_t i = 0; i < r->npolicies; i++) {
        const struct emb_diff_policy *p = &r->policies[i];
        if (p->event != ev || p->field != f)
            continue;
        if (p->has_when &&
            emb_catalog_field_get_int(&ev->fields[p->when_field], payload) != p->when_value)
            continue;
        c = p->compare;
        *tol = p->tolerance;
    }
    return c;
}

static uint64_t thread_value(const struct work *w, int side, uint64_t v)
{
    if (v < 65536 && w->tid_map[side][v] != UINT32_MAX)
        return 0x100000000u + w->tid_map[side][v];
    return v;
}

static uint64_t identity(const struct work *w, int side, const struct emb_trace_event *r)
{
    const struct emb_catalog_event *ev = r->ev;
    uint64_t h = mix64(0x1234567u, ev->id);
    for (size_t f = 0; f < ev->nfields; f++) {
        double tol;
        if (policy_of(&w->d->rules, ev, f, r->payload, &tol) != EMB_CAT_COMPARE_EXACT)
            continue;
        const struct emb_catalog_field *fd = &ev->fields[f];
        if (fd->type == EMB_CAT_CHARS) {
            for (uint32_t i = 0; i < fd->size; i++)
                h = mix64(h, r->payload[fd->offset + i]);
            continue;
        }
        uint64_t v = emb_catalog_field_get_uint(fd, r->payload);
        if (fd->meaning == EMB_CAT_MEANING_THREAD)
            v = thread_value(w, side, v);
        h = mix64(h, v);
    }
    return h;
}

/* ---- alignment ---- */

static const struct emb_catalog_field *frame_field(const struct emb_catalog_event *ev)
{
    for (size_t f = 0; f < ev->nfields; f++)
        if (ev->fields[f].meaning == EMB_CAT_MEANING_FRAME)
            return &ev->fields[f];
    return NULL;
}

struct markers {
    size_t *pos;      /* index in the anchor context */
    uint32_t *value;
    size_t n;
};

static int find_markers(struct work *w, int side, struct markers *m)
{
    struct emb_diff *d = w->d;
    size_t best = SIZE_MAX, best_n = 0;
    for (size_t i = 0; i < d->nctx; i++) {
        size_t n = 0;
        for (size_t k = 0; k < d->ctx[i].n[side]; k++)
            n += d->ctx[i].ev[side][k].rec->ev == d->anchor;
        if (n > best_n) {
            best_n = n;
            best = i;
        }
    }
    memset(m, 0, sizeof *m);
    if (best == SIZE_MAX)
        return 0;
    w->anchor_ctx[side] = best;
    m->pos = malloc(best_n * sizeof *m->pos);
    m->value = malloc(best_n * sizeof *m->value);
    if (!m->pos || !m->value) {
        w->oom = true;
        return -1;
    }
    const struct emb_diff_ctx *c = &d->ctx[best];
    for (size_t k = 0; k < c->n[side]; k++) {
        const struct emb_trace_event *r = c->ev[side][k].rec;
        if (r->ev != d->anchor)
            continue;
        m->pos[m->n] = k;
        m->value[m->n] = d->anchor_field ? (uint32_t)emb_catalog_field_get_uint(d->anchor_field, r->payload)
                                         : (uint32_t)m->n;
        m->n++;
    }
    return 0;
}

static long marker_index(const struct markers *m, uint32_t value)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->value[i] == value)
            return (long)i;
    return -1;
}

static int align(struct work *w)
{
    struct emb_diff *d = w->d;
    const struct emb_diff_rules *r = &d->rules;
    d->anchor = r->anchor_event ? r->anchor_event : emb_catalog_find(w->cat, "frame_start");
    if (!d->anchor)
        return refuse(w, "the catalogue has no frame_start event: choose an epoch marker with "
                         "--anchor EVENT[.FIELD]");
    d->anchor_field = r->anchor_field >= 0 ? &d->anchor->fields[r->anchor_field]
                      : r->anchor_field == -2 ? frame_field(d->anchor) : NULL;
    char spec[96];
    snprintf(spec, sizeof spec, "%s%s%s", d->anchor->name, d->anchor_field ? "." : "",
             d->anchor_field ? d->anchor_field->name : "");

    const struct emb_capture_window *win[2] = {emb_capture_window(d->cap[0]), emb_capture_window(d->cap[1])};
    bool armed[2] = {win[0]->armed_frame != EMB_CAP_NO_FRAME, win[1]->armed_frame != EMB_CAP_NO_FRAME};
    if (!r->anchor_given && (armed[0] != armed[1] ||
                             (armed[0] && win[0]->armed_frame != win[1]->armed_frame))) {
        char a[40], b[40];
        snprintf(a, sizeof a, armed[0] ? "armed at frame %" PRIu32 : "not an armed window", win[0]->armed_frame);
        snprintf(b, sizeof b, armed[1] ? "armed at frame %" PRIu32 : "not an armed window", win[1]->armed_frame);
        return refuse(w, "the captures are of different windows: %s is %s, %s is %s; compare "
                         "captures armed at the same frame, or choose the alignment with "
                         "--anchor EVENT[.FIELD]", d->name[0], a, d->name[1], b);
    }
    struct markers m[2];
    memset(m, 0, sizeof m);
    int rc = -1;
    for (int s = 0; s < 2; s++) {
        if (find_markers(w, s, &m[s]) != 0)
            goto out;
        if (!m[s].n) {
            refuse(w, "%s has no %s event: nothing to align on; choose an epoch marker with "
                      "--anchor EVENT[.FIELD]", d->name[s], d->anchor->name);
            goto out;
        }
    }
    long start[2] = {0, 0};
    d->anchor_armed = !r->anchor_given && armed[0] && d->anchor_field;
    if (d->anchor_armed) {
        for (int s = 0; s < 2; s++)
            if ((start[s] = marker_index(&m[s], win[s]->armed_frame)) < 0) {
                refuse(w, "%s has no %s = %" PRIu32 " (the armed frame): nothing to align on; "
                          "choose an epoch marker with --anchor EVENT[.FIELD]",
                       d->name[s], spec, win[s]->armed_frame);
                goto out;
            }
    } else if (d->anchor_field) {
        start[0] = -1;
        for (size_t i = 0; i < m[0].n && start[0] < 0; i++)
            if ((start[1] = marker_index(&m[1], m[0].value[i])) >= 0)
                start[0] = (long)i;
        if (start[0] < 0) {
            refuse(w, "no %s value is in both captures: nothing to align on; choose another "
                      "epoch marker with --anchor EVENT[.FIELD]", spec);
            goto out;
        }
    }
    size_t common = 0;
    while ((size_t)start[0] + common < m[0].n && (size_t)start[1] + common < m[1].n &&
           m[0].value[start[0] + common] == m[1].value[start[1] + common])
        common++;
    if (common < 2) {
        refuse(w, "no complete epoch in common: the captures share %zu %s marker%s from %s = "
                  "%" PRIu32, common, d->anchor->name, common == 1 ? "" : "s", spec,
               m[0].value[start[0]]);
        goto out;
    }
    d->epochs = common - 1;
    for (int s = 0; s < 2; s++)
        w->markers_after[s] = m[s].n - (size_t)start[s] - common;
    d->epoch_value = malloc((d->epochs + 1) * sizeof *d->epoch_value);
    for (int s = 0; s < 2; s++) {
        d->epoch_ns[s] = malloc((d->epochs + 1) * sizeof *d->epoch_ns[s]);
        w->marker_pos[s] = malloc((d->epochs + 1) * sizeof *w->marker_pos[s]);
        if (!d->epoch_ns[s] || !w->marker_pos[s] || !d->epoch_value) {
            w->oom = true;
            goto out;
        }
        const struct emb_diff_ctx *c = &d->ctx[w->anchor_ctx[s]];
        for (size_t k = 0; k <= d->epochs; k++) {
            w->marker_pos[s][k] = m[s].pos[start[s] + k];
            d->epoch_ns[s][k] = c->ev[s][w->marker_pos[s][k]].ns;
            d->epoch_value[k] = m[0].value[start[0] + k];
        }
    }
    d->anchor_ctx = (uint32_t)w->anchor_ctx[0];
    rc = 0;
out:
    for (int s = 0; s < 2; s++) {
        free(m[s].pos);
        free(m[s].value);
    }
    return rc;
}

/* Epoch of every event and the index where each compared epoch starts. */
static int assign_epochs(struct work *w)
{
    struct emb_diff *d = w->d;
    size_t E = d->epochs;
    for (size_t i = 0; i < d->nctx; i++) {
        struct emb_diff_ctx *c = &d->ctx[i];
        for (int s = 0; s < 2; s++) {
            if (!c->present[s])
                continue;
            c->epoch_start[s] = malloc((E + 1) * sizeof *c->epoch_start[s]);
            if (!c->epoch_start[s]) {
                w->oom = true;
                return -1;
            }
            const uint64_t *T = d->epoch_ns[s];
            size_t k = 0; /* the epoch, +1 (0 = before the anchor) */
            for (size_t j = 0; j < c->n[s]; j++) {
                struct emb_diff_event *e = &c->ev[s][j];
                if (i == w->anchor_ctx[s]) {
                    while (k <= E && j >= w->marker_pos[s][k])
                        k++;
                } else {
                    while (k <= E && e->ns >= T[k])
                        k++;
                }
                e->epoch = (int32_t)k - 1;
                if (k == 0 || k > E)
                    d->outside[s]++;
            }
            size_t j = 0;
            for (size_t e = 0; e <= E; e++) {
                while (j < c->n[s] && c->ev[s][j].epoch < (int32_t)e)
                    j++;
                c->epoch_start[s][e] = j;
            }
        }
    }
    return 0;
}

/* ---- findings ---- */

static bool rule_on(const struct emb_diff *d, enum emb_diff_rule rule, uint32_t ctx)
{
    bool on = d->rules.enabled[rule];
    for (size_t i = 0; ctx < d->nctx && i < d->rules.nswitches; i++)
        if (d->rules.switches[i].rule == rule && !strcmp(d->rules.switches[i].context, d->ctx[ctx].name))
            on = d->rules.switches[i].enabled;
    return on;
}

static struct emb_diff_item *add_item(struct work *w, enum emb_diff_rule rule, int32_t epoch,
                                      uint32_t ctx)
{
    struct emb_diff *d = w->d;
    if (!rule_on(d, rule, ctx)) {
        d->switched_off++;
        return NULL;
    }
    if (!grow((void **)&d->items, &w->item_cap, d->nitems + 1, sizeof *d->items)) {
        w->oom = true;
        return NULL;
    }
    struct emb_diff_item *it = &d->items[d->nitems++];
    memset(it, 0, sizeof *it);
    it->rule = (uint8_t)rule;
    it->epoch = epoch;
    it->ctx = ctx;
    it->a = it->b = it->a_prev = it->b_prev = it->a_near = it->b_near = -1;
    it->field = -1;
    return it;
}

static void set_offset(struct emb_diff *d, struct emb_diff_item *it)
{
    const struct emb_diff_ctx *c = &d->ctx[it->ctx];
    if (it->b >= 0)
        it->offset_ns = (int64_t)(c->ev[1][it->b].ns - d->epoch_ns[1][it->epoch]);
    else if (it->a >= 0)
        it->offset_ns = (int64_t)(c->ev[0][it->a].ns - d->epoch_ns[0][it->epoch]);
}

static void add_gap(struct work *w, int side, const char *where, int32_t epoch, uint64_t count,
                    const char *what)
{
    struct emb_diff *d = w->d;
    if (!grow((void **)&d->gaps, &w->gap_cap, d->ngaps + 1, sizeof *d->gaps)) {
        w->oom = true;
        return;
    }
    struct emb_diff_gap *g = &d->gaps[d->ngaps++];
    g->side = (uint8_t)side;
    snprintf(g->where, sizeof g->where, "%s", where);
    g->epoch = epoch;
    g->count = count;
    g->what = what;
    d->incomplete = true;
}

static int32_t epoch_at(const struct emb_diff *d, int side, uint64_t ns)
{
    const uint64_t *T = d->epoch_ns[side];
    if (ns < T[0])
        return -1;
    size_t lo = 0, hi = d->epochs; /* T[lo] <= ns < T[hi] */
    if (ns >= T[hi])
        return (int32_t)hi;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (T[mid] <= ns)
            lo = mid;
        else
            hi = mid;
    }
    return (int32_t)lo;
}

/* The last event recorded in any ring of a trace. */
static uint64_t last_event_ns(const struct emb_trace *t)
{
    uint64_t last = 0;
    for (size_t r = 0; r < emb_trace_context_count(t); r++) {
        const struct emb_trace_context *c = emb_trace_context(t, r);
        for (size_t k = c->nrecs; k-- > 0;)
            if (c->recs[k].type == EMB_TREC_EVENT) {
                if (c->recs[k].ns > last)
                    last = c->recs[k].ns;
                break;
            }
    }
    return last;
}

/* Losses: inside the compared range they make the comparison incomplete (and are a
 * difference); after it they are the window closing, by design. A loss happened after the
 * ring's last event before it; when the ring stored nothing after it in a window capture,
 * the ring filled and closed the window, and nothing was recorded after that: the loss
 * is placed at the end of the recording, after the last frame marker recorded before it,
 * never at the ring's last event, which may lie epochs earlier. */
static void find_losses(struct work *w, int side)
{
    struct emb_diff *d = w->d;
    const struct emb_trace *t = d->trace[side];
    const struct emb_trace_info *h = emb_trace_info(t);
    bool window = emb_capture_window(d->cap[side])->armed_frame != EMB_CAP_NO_FRAME;
    uint64_t T0 = d->epoch_ns[side][0], TE = d->epoch_ns[side][d->epochs];
    uint64_t end = last_event_ns(t);
    char key[64];
    /* Each context's first packet: a snapshot ring that overwrote its oldest packets
     * covers the range only from there on, and the events they held are that packet's
     * events_discarded (the ring's readers raise it so), counted once, as that gap. */
    size_t np;
    const struct emb_trace_packet *pk = emb_trace_packets(t, &np);
    size_t nctx = emb_trace_context_count(t);
    const struct emb_trace_packet **first = calloc(nctx + 1, sizeof *first);
    for (size_t i = 0; first && i < np; i++)
        if (!first[pk[i].ctx])
            first[pk[i].ctx] = &pk[i];
    for (size_t r = 0; r < nctx; r++) {
        const struct emb_trace_context *c = emb_trace_context(t, r);
        const struct emb_trace_packet *f = first ? first[r] : NULL;
        thread_key(t, r, key, sizeof key);
        long ci = ctx_find(d, key, EMB_DIFF_CTX_THREAD);
        uint64_t prev_ns = 0;
        bool seen = false;
        size_t last_event = SIZE_MAX;
        for (size_t k = 0; k < c->nrecs; k++)
            if (c->recs[k].type == EMB_TREC_EVENT)
                last_event = k;
        for (size_t k = 0; k < c->nrecs; k++) {
            const struct emb_trace_event *rec = &c->recs[k];
            if (rec->type == EMB_TREC_EVENT) {
                prev_ns = rec->ns;
                seen = true;
                continue;
            }
            if (rec->type != EMB_TREC_DISCARDED && rec->type != EMB_TREC_LOST)
                continue;
            if (rec->type == EMB_TREC_DISCARDED && f && f->seq > 0 && rec->offset == f->offset)
                continue; /* the overwritten packets' events: the gap below */
            uint64_t from = seen ? prev_ns : 0;
            bool closed = window && rec->type == EMB_TREC_DISCARDED &&
                          (last_event == SIZE_MAX || k > last_event);
            if (closed && end > from)
                from = end;
            const char *what = rec->type == EMB_TREC_LOST ? "packets lost" : "events dropped";
            if (from >= TE) {
                if (rec->type == EMB_TREC_DISCARDED)
                    d->dropped_after[side] += rec->count;
                if (closed && ci >= 0 && w->closed_ctx[side] < 0) {
                    w->closed_ctx[side] = ci;
                    w->closed_ns[side] = from;
                    w->closed_count[side] = rec->count;
                }
                continue;
            }
            if (rec->ns < T0)
                continue;
            int32_t ep = epoch_at(d, side, from > T0 ? from : T0);
            add_gap(w, side, key, ep, rec->count, what);
            struct emb_diff_item *it = ci >= 0 ? add_item(w, EMB_DIFF_DROPS, ep, (uint32_t)ci) : NULL;
            if (it) {
                it->side = (uint8_t)side;
                it->count = rec->count;
                it->offset_ns = (int64_t)((from > T0 ? from : T0) - d->epoch_ns[side][ep]);
            }
        }
        if (!f || f->seq == 0)
            continue;
        uint64_t ns = emb_trace_ticks_to_ns(f->ts_begin - h->start_ts, h->clock_hz);
        if (ns > T0) {
            /* Files from before the readers raised events_discarded say only how many
             * packets went. */
            if (f->discarded > 0)
                add_gap(w, side, key, epoch_at(d, side, ns), f->discarded,
                        "events overwritten with the oldest packets");
            else
                add_gap(w, side, key, epoch_at(d, side, ns), f->seq, "oldest packets overwritten");
        }
    }
    free(first);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    if (s->lost_no_context)
        add_gap(w, side, "(no ring)", -1, s->lost_no_context, "events with no ring, time unknown");
}

/* A run whose window closed (a ring filled) at the last compared marker while the other
 * run recorded on: the comparison ends there because of that run, which is a difference
 * at the frame it happened in, the first epoch not compared. Both windows closing when
 * the same ring of the same capacity filled is the window ending by design, whichever
 * frame each had reached: how many events fit in a ring depends on the timestamps' sizes,
 * so it is never one event count. Runs after matching. */
static void window_closed_early(struct work *w)
{
    struct emb_diff *d = w->d;
    for (int s = 0; s < 2; s++) {
        int o = 1 - s;
        if (w->closed_ctx[s] < 0 || w->markers_after[s] || !w->markers_after[o])
            continue;
        long ci = w->closed_ctx[s];
        if (w->closed_ctx[o] == ci &&
            emb_capture_window(d->cap[s])->capacity == emb_capture_window(d->cap[o])->capacity)
            continue;
        int32_t ep = (int32_t)d->epochs;
        add_gap(w, s, d->ctx[ci].name, ep, w->closed_count[s],
                "events dropped: the ring filled and closed the window");
        struct emb_diff_item *it = add_item(w, EMB_DIFF_DROPS, ep, (uint32_t)ci);
        if (it) {
            it->side = (uint8_t)s;
            it->count = w->closed_count[s];
            it->closed = true;
            it->offset_ns = (int64_t)(w->closed_ns[s] - d->epoch_ns[s][ep]);
        }
    }
}

/* ---- matching ---- */

enum { OP_MATCH, OP_DEL, OP_INS };

struct op {
    uint8_t t;
    bool used;
    uint32_t region;
    int64_t ia, ib;
};

struct ops {
    struct op *v;
    size_t n, cap;
};

static bool push_op(struct ops *o, uint8_t t, int64_t ia, int64_t ib)
{
    if (!grow((void **)&o->v, &o->cap, o->n + 1, sizeof *o->v))
        return false;
    o->v[o->n++] = (struct op){t, false, 0, ia, ib};
    return true;
}

/* Myers' greedy diff between a[0..n) and b[0..m) by identity, appending the edit script
 * with indices offset by a0, b0. Returns 1 when the distance passes MYERS_MAX_D (the
 * script is then every deletion and every insertion, unaligned), 0, or -1 (memory). */
static int myers(const struct emb_diff_event *a, long n, const struct emb_diff_event *b, long m,
                 int64_t a0, int64_t b0, struct ops *o)
{
    long maxd = n + m < (long)MYERS_MAX_D ? n + m : (long)MYERS_MAX_D;
    long off = maxd + 1;
    size_t width = (size_t)(2 * maxd + 3);
    long *V = calloc(width, sizeof *V);
    long *hist = NULL; /* row d holds V[-d..d] after step d */
    size_t hist_len = 0, hist_cap = 0;
    long D = -1;
    if (!V)
        return -1;
    for (long d = 0; d <= maxd && D < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && V[off + k - 1] < V[off + k + 1])) ? V[off + k + 1]
                                                                              : V[off + k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && a[x].identity == b[y].identity)
                x++, y++;
            V[off + k] = x;
            if (x >= n && y >= m) {
                D = d;
                break;
            }
        }
        if (!grow((void **)&hist, &hist_cap, hist_len + (size_t)(2 * d + 1), sizeof *hist)) {
            free(V);
            free(hist);
            return -1;
        }
        memcpy(hist + hist_len, V + off - d, (size_t)(2 * d + 1) * sizeof *V);
        hist_len += (size_t)(2 * d + 1);
    }
    free(V);
    int rc = 0;
    size_t start = o->n;
    if (D < 0) {
        for (long i = 0; i < n && rc == 0; i++)
            rc = push_op(o, OP_DEL, a0 + i, -1) ? 0 : -1;
        for (long j = 0; j < m && rc == 0; j++)
            rc = push_op(o, OP_INS, -1, b0 + j) ? 0 : -1;
        free(hist);
        return rc ? rc : 1;
    }
    long x = n, y = m;
    for (long d = D; d > 0 && rc == 0; d--) {
        const long *Vp = hist + (size_t)((d - 1) * (d - 1)) + (size_t)(d - 1); /* V[0] of row d-1 */
        long k = x - y;
        long pk = (k == -d || (k != d && Vp[k - 1] < Vp[k + 1])) ? k + 1 : k - 1;
        long px = Vp[pk], py = px - pk;
        while (x > px && y > py && rc == 0) {
            x--, y--;
            rc = push_op(o, OP_MATCH, a0 + x, b0 + y) ? 0 : -1;
        }
        if (rc == 0)
            rc = (pk == k + 1 ? push_op(o, OP_INS, -1, b0 + py) : push_op(o, OP_DEL, a0 + px, -1)) ? 0 : -1;
        x = px, y = py;
    }
    while (x > 0 && y > 0 && rc == 0) {
        x--, y--;
        rc = push_op(o, OP_MATCH, a0 + x, b0 + y) ? 0 : -1;
    }
    free(hist);
    for (size_t i = start, j = o->n ? o->n - 1 : 0; rc == 0 && i < j; i++, j--) {
        struct op t = o->v[i];
        o->v[i] = o->v[j];
        o->v[j] = t;
    }
    return rc;
}

/* A whole context's sequences, matched in order: identical stretches are walked in one
 * pass; where they part, Myers runs on a window of DIFF_WINDOW events of each side and its
 * script is kept up to the first DIFF_RESYNC matches in a row after the difference, where
 * the walk resumes. Linear in the events plus the differences' local cost. */
#define DIFF_WINDOW 4096
#define DIFF_RESYNC 16

static int diff_sequences(const struct emb_diff_event *a, size_t n, const struct emb_diff_event *b,
                          size_t m, struct ops *o, uint64_t *fallbacks)
{
    size_t i = 0, j = 0;
    struct ops t = {0};
    int rc = 0;
    while (rc == 0) {
        while (i < n && j < m && a[i].identity == b[j].identity) {
            if (!push_op(o, OP_MATCH, (int64_t)i, (int64_t)j)) {
                rc = -1;
                break;
            }
            i++, j++;
        }
        if (rc || i == n || j == m)
            break;
        size_t wa = n - i < DIFF_WINDOW ? n - i : DIFF_WINDOW, wb = m - j < DIFF_WINDOW ? m - j : DIFF_WINDOW;
        t.n = 0;
        int mr = myers(a + i, (long)wa, b + j, (long)wb, (int64_t)i, (int64_t)j, &t);
        if (mr < 0) {
            rc = -1;
            break;
        }
        *fallbacks += mr == 1;
        bool whole = wa == n - i && wb == m - j;
        size_t keep = t.n;
        if (!whole) {
            /* Keep the script up to a run of matches after the difference: past it the
             * window's cut edge could bend the alignment. */
            size_t run = 0, seen = 0;
            keep = 0;
            for (size_t k = 0; k < t.n; k++) {
                if (t.v[k].t != OP_MATCH) {
                    seen = 1;
                    run = 0;
                } else if (seen && ++run == DIFF_RESYNC) {
                    keep = k + 1 - DIFF_RESYNC;
                    break;
                }
            }
            if (!keep) /* no resynchronisation in the window: take its first half */
                for (size_t ca = 0, cb = 0; keep < t.n && ca < wa / 2 + 1 && cb < wb / 2 + 1; keep++) {
                    ca += t.v[keep].t != OP_INS;
                    cb += t.v[keep].t != OP_DEL;
                }
        }
        for (size_t k = 0; k < keep && rc == 0; k++) {
            if (!push_op(o, t.v[k].t, t.v[k].ia, t.v[k].ib))
                rc = -1;
            if (t.v[k].t != OP_INS)
                i++;
            if (t.v[k].t != OP_DEL)
                j++;
        }
        if (whole)
            break;
    }
    for (; rc == 0 && i < n; i++)
        rc = push_op(o, OP_DEL, (int64_t)i, -1) ? 0 : -1;
    for (; rc == 0 && j < m; j++)
        rc = push_op(o, OP_INS, -1, (int64_t)j) ? 0 : -1;
    free(t.v);
    return rc;
}

static uint64_t op_identity(const struct emb_diff_ctx *c, const struct op *op)
{
    return op->t == OP_DEL ? c->ev[0][op->ia].identity : c->ev[1][op->ib].identity;
}

struct keyed {
    uint64_t key;
    uint32_t region;
    size_t op;
};

static int cmp_keyed(const void *x, const void *y)
{
    const struct keyed *a = x, *b = y;
    if (a->region != b->region)
        return a->region < b->region ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

/* The first field that differs under its policy between two events of one name. */
static int differing_field(const struct work *w, const struct emb_trace_event *a,
                           const struct emb_trace_event *b, bool tolerance_only)
{
    const struct emb_catalog_event *ev = a->ev;
    for (size_t f = 0; f < ev->nfields; f++) {
        double tol;
        enum emb_catalog_compare p = policy_of(&w->d->rules, ev, f, b->payload, &tol);
        const struct emb_catalog_field *fd = &ev->fields[f];
        if (p == EMB_CAT_COMPARE_IGNORE || (tolerance_only && p == EMB_CAT_COMPARE_EXACT))
            continue;
        if (fd->type == EMB_CAT_CHARS) {
            if (memcmp(a->payload + fd->offset, b->payload + fd->offset, fd->size))
                return (int)f;
            continue;
        }
        if (p == EMB_CAT_COMPARE_EXACT) {
            uint64_t va = emb_catalog_field_get_uint(fd, a->payload), vb = emb_catalog_field_get_uint(fd, b->payload);
            if (fd->meaning == EMB_CAT_MEANING_THREAD) {
                va = thread_value(w, 0, va);
                vb = thread_value(w, 1, vb);
            }
            if (va != vb)
                return (int)f;
            continue;
        }
        double va = (double)emb_catalog_field_get_int(fd, a->payload);
        double vb = (double)emb_catalog_field_get_int(fd, b->payload);
        if (fd->type == EMB_CAT_U64) {
            va = (double)emb_catalog_field_get_uint(fd, a->payload);
            vb = (double)emb_catalog_field_get_uint(fd, b->payload);
        }
        double lim = p == EMB_CAT_COMPARE_TOLERANCE ? tol : tol / 100.0 * fabs(va);
        if (fabs(va - vb) > lim)
            return (int)f;
    }
    return -1;
}

static bool has_tolerance(const struct work *w, const struct emb_trace_event *r)
{
    for (size_t f = 0; f < r->ev->nfields; f++) {
        double tol;
        enum emb_catalog_compare p = policy_of(&w->d->rules, r->ev, f, r->payload, &tol);
        if (p == EMB_CAT_COMPARE_TOLERANCE || p == EMB_CAT_COMPARE_TOLERANCE_PCT)
            return true;
    }
    return false;
}

static bool compared(const struct emb_diff *d, int32_t epoch)
{
    return epoch >= 0 && (size_t)epoch < d->epochs;
}

/* The same events in another order within one context: an unmatched event of the good
 * run and one of the bad run with one identity, between the same two stretches of
 * agreement (DIFF_RESYNC matches in a row). */
static void pair_reorders(struct work *w, uint32_t ci, struct ops *o)
{
    struct emb_diff *d = w->d;
    struct emb_diff_ctx *c = &d->ctx[ci];
    size_t nd = 0, ni = 0;
    for (size_t i = 0; i < o->n; i++) {
        nd += o->v[i].t == OP_DEL && !o->v[i].used;
        ni += o->v[i].t == OP_INS && !o->v[i].used;
    }
    if (!nd || !ni)
        return;
    struct keyed *dk = malloc(nd * sizeof *dk), *ik = malloc(ni * sizeof *ik);
    if (!dk || !ik) {
        free(dk);
        free(ik);
        w->oom = true;
        return;
    }
    nd = ni = 0;
    for (size_t i = 0; i < o->n; i++) {
        const struct op *x = &o->v[i];
        if (x->used || x->t == OP_MATCH)
            continue;
        struct keyed k = {op_identity(c, x), x->region, i};
        if (x->t == OP_DEL)
            dk[nd++] = k;
        else
            ik[ni++] = k;
    }
    qsort(dk, nd, sizeof *dk, cmp_keyed);
    qsort(ik, ni, sizeof *ik, cmp_keyed);
    for (size_t i = 0, j = 0; i < nd && j < ni;) {
        int cmp = dk[i].region != ik[j].region ? (dk[i].region < ik[j].region ? -1 : 1)
                  : dk[i].key != ik[j].key     ? (dk[i].key < ik[j].key ? -1 : 1)
                                               : 0;
        if (cmp < 0) {
            i++;
            continue;
        }
        if (cmp > 0) {
            j++;
            continue;
        }
        struct op *x = &o->v[dk[i].op], *y = &o->v[ik[j].op];
        x->used = y->used = true;
        c->ev[0][x->ia].peer = (int32_t)y->ib;
        c->ev[1][y->ib].peer = (int32_t)x->ia;
        int32_t ep = c->ev[1][y->ib].epoch;
        if (compared(d, ep) || compared(d, c->ev[0][x->ia].epoch)) {
            struct emb_diff_item *it = add_item(w, EMB_DIFF_REORDER, compared(d, ep) ? ep : c->ev[0][x->ia].epoch, ci);
            if (it) {
                it->a = x->ia;
                it->b = y->ib;
                set_offset(d, it);
            }
        }
        i++, j++;
    }
    free(dk);
    free(ik);
}

static int match_context(struct work *w, uint32_t ci)
{
    struct emb_diff *d = w->d;
    struct emb_diff_ctx *c = &d->ctx[ci];
    if (!c->present[0] || !c->present[1]) {
        /* A context only one run has: all of its compared events are missing or extra. */
        int s = c->present[0] ? 0 : 1;
        for (size_t k = c->epoch_start[s][0]; k < c->epoch_start[s][d->epochs]; k++) {
            struct emb_diff_item *it =
                add_item(w, s == 0 ? EMB_DIFF_MISSING : EMB_DIFF_EXTRA, c->ev[s][k].epoch, ci);
            if (!it)
                continue;
            if (s == 0)
                it->a = (int64_t)k;
            else
                it->b = (int64_t)k;
            set_offset(d, it);
        }
        return w->oom ? -1 : 0;
    }
    struct ops o = {0};
    if (!grow((void **)&o.v, &o.cap, c->n[0] + c->n[1] + 1, sizeof *o.v)) {
        w->oom = true;
        return -1;
    }
    if (diff_sequences(c->ev[0], c->n[0], c->ev[1], c->n[1], &o, &d->diff_fallbacks) != 0) {
        free(o.v);
        w->oom = true;
        return -1;
    }
    /* Regions between stretches of agreement (DIFF_RESYNC matches in a row); peers of
     * matches. */
    uint32_t region = 0;
    size_t run = 0;
    for (size_t i = 0; i < o.n; i++) {
        struct op *x = &o.v[i];
        if (x->t == OP_MATCH) {
            c->ev[0][x->ia].peer = (int32_t)x->ib;
            c->ev[1][x->ib].peer = (int32_t)x->ia;
            if (++run == DIFF_RESYNC)
                region++;
        } else {
            run = 0;
        }
        x->region = region;
    }
    /* The edges: what a context other than the anchor's did in the first compared epoch
     * before its first stretch of agreement, or in the last one after its last, depends on
     * when another context opened and closed the recording, not on this context. */
    for (size_t i = 0; i < o.n && ci != d->anchor_ctx; i++) {
        struct op *x = &o.v[i];
        if (x->t == OP_MATCH)
            continue;
        int32_t ep = x->t == OP_DEL ? c->ev[0][x->ia].epoch : c->ev[1][x->ib].epoch;
        if ((x->region == 0 && ep <= 0) || (x->region == region && ep >= (int32_t)d->epochs - 1)) {
            x->used = true;
            d->edge++;
        }
    }
    /* After a run's window closed, nothing more was recorded in it: what the other run has
     * after this context's last match has no counterpart to miss. */
    size_t last_match = o.n;
    for (size_t i = o.n; i-- > 0;)
        if (o.v[i].t == OP_MATCH) {
            last_match = i;
            break;
        }
    for (size_t i = last_match == o.n ? 0 : last_match + 1; i < o.n; i++) {
        struct op *x = &o.v[i];
        if (!x->used && w->closed_ctx[x->t == OP_DEL ? 1 : 0] >= 0) {
            x->used = true;
            d->after_close++;
        }
    }
    pair_reorders(w, ci, &o);
    /* Inside each run of unmatched operations: the same event with other values. */
    int64_t last_a = -1, last_b = -1;
    for (size_t i = 0; i < o.n;) {
        struct op *x = &o.v[i];
        if (x->t == OP_MATCH) {
            const struct emb_diff_event *ea = &c->ev[0][x->ia], *eb = &c->ev[1][x->ib];
            if (compared(d, eb->epoch) || compared(d, ea->epoch)) {
                d->matched++;
                if (ci != d->anchor_ctx && ea->epoch != eb->epoch)
                    d->boundary_shifts++;
                if (has_tolerance(w, eb->rec)) {
                    int f = differing_field(w, ea->rec, eb->rec, true);
                    struct emb_diff_item *it = f >= 0 ? add_item(w, EMB_DIFF_ARGUMENT, compared(d, eb->epoch) ? eb->epoch : ea->epoch, ci) : NULL;
                    if (it) {
                        it->a = x->ia;
                        it->b = x->ib;
                        it->field = f;
                        set_offset(d, it);
                    } else if (f < 0) {
                        d->within_tolerance++;
                    }
                }
            }
            last_a = x->ia;
            last_b = x->ib;
            i++;
            continue;
        }
        size_t j = i;
        while (j < o.n && o.v[j].t != OP_MATCH)
            j++;
        for (size_t p = i; p < j; p++) {
            struct op *del = &o.v[p];
            if (del->t != OP_DEL || del->used)
                continue;
            for (size_t q = i; q < j; q++) {
                struct op *ins = &o.v[q];
                if (ins->t != OP_INS || ins->used ||
                    c->ev[0][del->ia].rec->ev != c->ev[1][ins->ib].rec->ev)
                    continue;
                del->used = ins->used = true;
                c->ev[0][del->ia].peer = (int32_t)ins->ib;
                c->ev[1][ins->ib].peer = (int32_t)del->ia;
                int32_t ep = c->ev[1][ins->ib].epoch;
                if (!compared(d, ep))
                    ep = c->ev[0][del->ia].epoch;
                struct emb_diff_item *it = compared(d, ep) ? add_item(w, EMB_DIFF_ARGUMENT, ep, ci) : NULL;
                if (it) {
                    it->a = del->ia;
                    it->b = ins->ib;
                    it->field = differing_field(w, c->ev[0][del->ia].rec, c->ev[1][ins->ib].rec, false);
                    set_offset(d, it);
                }
                break;
            }
        }
        for (size_t p = i; p < j; p++) {
            struct op *y = &o.v[p];
            if (y->t == OP_DEL)
                last_a = y->ia;
            if (y->t == OP_INS)
                last_b = y->ib;
            if (y->used)
                continue;
            int32_t ep = y->t == OP_DEL ? c->ev[0][y->ia].epoch : c->ev[1][y->ib].epoch;
            if (!compared(d, ep))
                continue;
            struct emb_diff_item *it =
                add_item(w, y->t == OP_DEL ? EMB_DIFF_MISSING : EMB_DIFF_EXTRA, ep, ci);
            if (!it)
                continue;
            if (y->t == OP_DEL) {
                it->a = y->ia;
                it->b_near = last_b + 1;
            } else {
                it->b = y->ib;
                it->a_near = last_a + 1;
            }
            set_offset(d, it);
        }
        i = j;
    }
    free(o.v);
    return w->oom ? -1 : 0;
}

/* ---- timing ---- */

/* A class of interval, and the two runs' spread in it. The band a bad value must leave to
 * be an outlier is [lo - margin, hi + margin]. */
struct tclass {
    double *v, *bv;           /* the good run's values; the bad run's, matched intervals */
    size_t n, cap, bn, bcap;
    double lo, hi, median;    /* the good run's quantiles q and 1 - q, and its median */
    double b_lo, b_hi, b_median;
    double margin;
    size_t bseen;             /* the bad run's occurrences checked so far */
};

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The p-quantile of sorted v[0..n), linear between the order statistics (Hyndman and
 * Fan's type 7, R's and NumPy's default). */
static double quantile(const double *v, size_t n, double p)
{
    double h = (double)(n - 1) * p;
    size_t i = (size_t)h;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

static void spread(double *v, size_t n, double q, double *lo, double *median, double *hi)
{
    if (!n) {
        *lo = *median = *hi = 0;
        return;
    }
    qsort(v, n, sizeof *v, cmp_double);
    *lo = quantile(v, n, q);
    *median = quantile(v, n, 0.5);
    *hi = quantile(v, n, 1.0 - q);
}

static void finish_class(struct tclass *t, const struct emb_diff_rules *r)
{
    double q = r->quantile_pct / 100.0;
    spread(t->v, t->n, q, &t->lo, &t->median, &t->hi);
    spread(t->bv, t->bn, q, &t->b_lo, &t->b_median, &t->b_hi);
    double m = r->margin_pct / 100.0 * t->median, floor_ns = r->margin_us * 1000.0;
    t->margin = m > floor_ns ? m : floor_ns;
}

static bool class_add(double **v, size_t *n, size_t *cap, double x)
{
    if (!grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = x;
    return true;
}

/* The application's own number of a generic event (user_event's `id`), or 0xFFFF. */
static uint64_t event_number(const struct emb_trace_event *r)
{
    for (size_t f = 0; f < r->ev->nfields; f++)
        if (!strcmp(r->ev->fields[f].name, "id") && r->ev->fields[f].type != EMB_CAT_CHARS)
            return emb_catalog_field_get_uint(&r->ev->fields[f], r->payload);
    return 0xFFFFu;
}

/* Which fields compared exactly change from p to e, two events of one kind: the same
 * packet event within a frame (its frame field unchanged) and across frames (changed). */
static uint64_t changed_fields(const struct emb_diff_rules *rules, const struct emb_trace_event *p,
                               const struct emb_trace_event *e)
{
    if (p->ev != e->ev)
        return 0;
    uint64_t mask = 0;
    for (size_t f = 0; f < e->ev->nfields && f < 64; f++) {
        const struct emb_catalog_field *fd = &e->ev->fields[f];
        double tol;
        if (fd->type == EMB_CAT_CHARS || fd->meaning == EMB_CAT_MEANING_CYCLES ||
            policy_of(rules, e->ev, f, e->payload, &tol) != EMB_CAT_COMPARE_EXACT)
            continue;
        if (emb_catalog_field_get_uint(fd, p->payload) != emb_catalog_field_get_uint(fd, e->payload))
            mask |= 1ull << f;
    }
    return mask;
}

/* What makes an interval one interval: its context, the event before and the event, and
 * where in the frame it falls, as the pair's fields tell it: the application's numbers of
 * generic events (user_event 3 -> 4 is not 4 -> 5) and which fields change between them
 * (a packet after a packet of the same frame is not the first packet of the next one), so
 * a context of user_events does not pool its gaps inside a frame with its gaps between
 * frames. (An ordinal within the epoch would say it too, until a late context's events
 * spill into the next epoch and shift every ordinal there.) Never 0. */
static uint64_t class_key(const struct emb_diff_rules *rules, uint32_t ci, const struct emb_trace_event *p,
                          const struct emb_trace_event *e)
{
    uint64_t h = mix64(mix64(ci + 1u, p->id), e->id);
    h = mix64(mix64(h, event_number(p)), event_number(e));
    return mix64(h, changed_fields(rules, p, e)) | 1u;
}

/* The class of the good run's interval ending at event j of context c (j > 0). */
static uint64_t good_class_key(const struct emb_diff *d, const struct emb_diff_ctx *c, uint32_t ci, size_t j)
{
    return class_key(&d->rules, ci, c->ev[0][j - 1].rec, c->ev[0][j].rec);
}

struct candidate {
    size_t cls;
    size_t seq;               /* the how-manieth of its class in the bad run */
    int sign;                 /* +1 above the band, -1 below */
    double dev;               /* value - good median */
    bool persistent;
    struct emb_diff_item item;
};

static int cmp_candidate(const void *x, const void *y)
{
    const struct candidate *a = x, *b = y;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* A candidate when v, the seq-th occurrence of class t in the bad run, lies outside its
 * band; NULL when inside (or out of memory). */
static struct candidate *add_candidate(struct work *w, struct candidate **cand, size_t *n,
                                       size_t *cap, const struct tclass *t, size_t cls, size_t seq,
                                       double v)
{
    int sign = v > t->hi + t->margin ? 1 : v < t->lo - t->margin ? -1 : 0;
    if (!sign)
        return NULL;
    if (!grow((void **)cand, cap, *n + 1, sizeof **cand)) {
        w->oom = true;
        return NULL;
    }
    struct candidate *c = &(*cand)[*n];
    memset(c, 0, sizeof *c);
    c->cls = cls;
    c->seq = seq;
    c->sign = sign;
    c->dev = v - t->median;
    (*n)++;
    struct emb_diff_item *it = &c->item;
    it->a = it->b = it->a_prev = it->b_prev = it->a_near = it->b_near = -1;
    it->field = -1;
    it->value = v;
    return c;
}

/* Persistence, in one direction: a class is significant where the bad run's occurrences
 * of it leave its band on one side and stay there, every occurrence in a row, `repeat`
 * occurrences or more over `repeat` epochs or more (in a row by occurrence, so a late
 * context whose events spill into the next epoch does not break its run; over epochs, so
 * one slow frame of a class that occurs ten times a frame is not a run). A run that pays back an opposite
 * excursion just before it is a catch-up: a loop paced on absolute deadlines runs short
 * after a stall until it is on time again. For epochs, the excursion is the lateness the
 * bad run had built up (late[k]: the sum of its epochs' excess over the good median before
 * k); for an interval, opposite outliers of its class in its first epoch or the `repeat`
 * before. Either must be worth at least half the run's own deviation. cand is sorted by
 * class, then occurrence. */
static void mark_persistent(struct emb_diff *d, struct candidate *cand, size_t ncand, const double *late)
{
    unsigned R = d->rules.repeat;
    for (size_t i = 0; i < ncand;) {
        size_t j = i + 1;
        while (j < ncand && cand[j].cls == cand[i].cls && cand[j].sign == cand[i].sign &&
               cand[j].seq == cand[j - 1].seq + 1)
            j++;
        int32_t first = cand[i].item.epoch;
        uint32_t span = (uint32_t)(cand[j - 1].item.epoch - first + 1);
        bool persistent = span >= R && j - i >= R;
        /* Short epochs from the start of the range: the stall they pay back may lie before
         * it, where nothing is compared. */
        if (cand[i].cls == 0 && cand[i].sign < 0 && first < (int32_t)R)
            persistent = false;
        if (persistent) {
            double dev = 0, repaid = 0;
            for (size_t k = i; k < j; k++)
                dev += fabs(cand[k].dev);
            if (cand[i].cls == 0) {
                repaid = cand[i].sign < 0 ? late[first] : 0;
            } else {
                for (size_t k = i; k-- > 0 && cand[k].cls == cand[i].cls &&
                                   cand[k].item.epoch >= first - (int32_t)R;)
                    if (cand[k].sign != cand[i].sign)
                        repaid += fabs(cand[k].dev);
            }
            persistent = repaid < 0.5 * dev;
        }
        for (size_t k = i; k < j; k++) {
            cand[k].persistent = persistent;
            cand[k].item.run = span;
        }
        i = j;
    }
}

/* The class of the bad run's interval ending at event j of context c: that of its good
 * counterpart when both of its events matched consecutive events of the good run inside
 * the compared range; UINT32_MAX otherwise. */
static uint32_t matched_class(const struct emb_diff *d, const struct emb_diff_ctx *c,
                              const uint32_t *good_class, size_t j, int32_t *pa, int32_t *pp)
{
    *pa = c->ev[1][j].peer;
    *pp = c->ev[1][j - 1].peer;
    if (*pa < 1 || *pp < 0 || *pa != *pp + 1 || !compared(d, c->ev[0][*pa].epoch))
        return UINT32_MAX;
    return good_class[*pa];
}

static int timing(struct work *w)
{
    struct emb_diff *d = w->d;
    size_t E = d->epochs;
    struct map classes = {0};
    struct tclass *cls = NULL;
    size_t ncls = 0, cls_cap = 0;
    struct candidate *cand = NULL;
    size_t ncand = 0, cand_cap = 0;
    bool *catching_up = NULL;
    double *late = NULL;
    uint32_t **gcls = calloc(d->nctx + 1, sizeof *gcls); /* class of each good interval */
    int rc = -1;
    if (!gcls)
        goto out;
    /* Class 0: epoch durations. */
    if (!grow((void **)&cls, &cls_cap, 1, sizeof *cls))
        goto out;
    memset(&cls[0], 0, sizeof cls[0]);
    ncls = 1;
    for (size_t k = 0; k < E; k++)
        if (!class_add(&cls[0].v, &cls[0].n, &cls[0].cap, (double)(d->epoch_ns[0][k + 1] - d->epoch_ns[0][k])) ||
            !class_add(&cls[0].bv, &cls[0].bn, &cls[0].bcap, (double)(d->epoch_ns[1][k + 1] - d->epoch_ns[1][k])))
            goto out;
    /* The good run's intervals between consecutive events of a context, by class. */
    for (uint32_t ci = 0; ci < d->nctx; ci++) {
        const struct emb_diff_ctx *c = &d->ctx[ci];
        if (!c->present[0] || !c->present[1])
            continue;
        if (!(gcls[ci] = malloc((c->n[0] + 1) * sizeof *gcls[ci])))
            goto out;
        memset(gcls[ci], 0xFF, (c->n[0] + 1) * sizeof *gcls[ci]);
        for (size_t j = c->epoch_start[0][0] + 1; j < c->epoch_start[0][E]; j++) {
            uint64_t key = good_class_key(d, c, ci, j);
            uint32_t x = map_get(&classes, key);
            if (x == UINT32_MAX) {
                if (!grow((void **)&cls, &cls_cap, ncls + 1, sizeof *cls) ||
                    !map_put(&classes, key, (uint32_t)ncls))
                    goto out;
                memset(&cls[ncls], 0, sizeof cls[ncls]);
                x = (uint32_t)ncls++;
            }
            gcls[ci][j] = x;
            struct tclass *t = &cls[x];
            if (!class_add(&t->v, &t->n, &t->cap, (double)(c->ev[0][j].ns - c->ev[0][j - 1].ns)))
                goto out;
        }
    }
    /* The bad run's intervals between consecutive events matched to consecutive events
     * of the good run, in the class of their counterpart. */
    for (uint32_t ci = 0; ci < d->nctx; ci++) {
        const struct emb_diff_ctx *c = &d->ctx[ci];
        if (!c->present[0] || !c->present[1])
            continue;
        for (size_t j = c->epoch_start[1][0] + 1; j < c->epoch_start[1][E]; j++) {
            int32_t pa, pp;
            uint32_t x = matched_class(d, c, gcls[ci], j, &pa, &pp);
            if (x == UINT32_MAX)
                continue;
            struct tclass *t = &cls[x];
            if (!class_add(&t->bv, &t->bn, &t->bcap, (double)(c->ev[1][j].ns - c->ev[1][j - 1].ns)))
                goto out;
        }
    }
    for (size_t i = 0; i < ncls; i++)
        if (cls[i].n)
            finish_class(&cls[i], &d->rules);
    /* The bad run against the good run's band. */
    const struct emb_diff_ctx *ac = &d->ctx[d->anchor_ctx];
    catching_up = calloc(E + 1, sizeof *catching_up);
    late = calloc(E + 1, sizeof *late);
    if (!catching_up || !late)
        goto out;
    for (size_t k = 0; k < E && cls[0].n; k++) {
        double v = (double)(d->epoch_ns[1][k + 1] - d->epoch_ns[1][k]);
        catching_up[k] = v < cls[0].lo - cls[0].margin;
        late[k + 1] = late[k] + v - cls[0].median;
    }
    for (size_t k = 0; k < E && cls[0].n; k++) {
        double v = (double)(d->epoch_ns[1][k + 1] - d->epoch_ns[1][k]);
        struct candidate *cd = add_candidate(w, &cand, &ncand, &cand_cap, &cls[0], 0, k, v);
        if (!cd)
            continue;
        struct emb_diff_item *it = &cd->item;
        it->rule = EMB_DIFF_EPOCH_DURATION;
        it->epoch = (int32_t)k;
        it->ctx = d->anchor_ctx;
        it->a_near = (int64_t)ac->epoch_start[0][k + 1];
        it->b_near = (int64_t)ac->epoch_start[1][k + 1];
        it->offset_ns = (int64_t)v;
    }
    for (uint32_t ci = 0; ci < d->nctx; ci++) {
        const struct emb_diff_ctx *c = &d->ctx[ci];
        if (!c->present[0] || !c->present[1])
            continue;
        for (size_t j = c->epoch_start[1][0] + 1; j < c->epoch_start[1][E]; j++) {
            int32_t pa, pp;
            uint32_t x = matched_class(d, c, gcls[ci], j, &pa, &pp);
            if (x == UINT32_MAX)
                continue;
            double v = (double)(c->ev[1][j].ns - c->ev[1][j - 1].ns);
            size_t seq = cls[x].bseen++;
            /* In an epoch shorter than the good run's band, the frame loop is catching up
             * with its deadlines: an interval shorter than its band there (the loop's idle
             * time, the gap to the next frame of a context the frames drive) is the
             * pacing's, never a shift of its own. A catch-up stretches nothing. */
            int32_t ep = c->ev[1][j].epoch;
            if (catching_up[ep] && v < cls[x].lo - cls[x].margin) {
                d->isolated_timing++;
                continue;
            }
            struct candidate *cd = add_candidate(w, &cand, &ncand, &cand_cap, &cls[x], x, seq, v);
            if (!cd)
                continue;
            struct emb_diff_item *it = &cd->item;
            it->rule = EMB_DIFF_INTERVAL;
            it->epoch = c->ev[1][j].epoch;
            it->ctx = ci;
            it->a = pa;
            it->a_prev = pp;
            it->b = (int64_t)j;
            it->b_prev = (int64_t)j - 1;
        }
    }
    if (w->oom)
        goto out;
    if (ncand)
        qsort(cand, ncand, sizeof *cand, cmp_candidate);
    mark_persistent(d, cand, ncand, late);
    for (size_t i = 0; i < ncand; i++) {
        const struct tclass *t = &cls[cand[i].cls];
        if (!cand[i].persistent) {
            d->isolated_timing++;
            continue;
        }
        struct emb_diff_item *it = add_item(w, cand[i].item.rule, cand[i].item.epoch, cand[i].item.ctx);
        if (!it)
            continue;
        *it = cand[i].item;
        it->lo = t->lo;
        it->hi = t->hi;
        it->median = t->median;
        it->margin = t->margin;
        it->b_lo = t->b_lo;
        it->b_hi = t->b_hi;
        it->b_median = t->b_median;
        it->good_n = (uint32_t)t->n;
        it->bad_n = (uint32_t)t->bn;
        if (it->rule == EMB_DIFF_INTERVAL)
            set_offset(d, it);
    }
    rc = w->oom ? -1 : 0;
out:
    if (rc)
        w->oom = true;
    for (size_t i = 0; i < ncls; i++) {
        free(cls[i].v);
        free(cls[i].bv);
    }
    free(cls);
    free(cand);
    free(catching_up);
    free(late);
    for (size_t i = 0; gcls && i < d->nctx; i++)
        free(gcls[i]);
    free(gcls);
    map_free(&classes);
    return rc;
}

/* ---- ordering and grouping ---- */

static int cmp_item(const void *x, const void *y)
{
    const struct emb_diff_item *a = x, *b = y;
    if (a->epoch != b->epoch)
        return a->epoch < b->epoch ? -1 : 1;
    if (a->offset_ns != b->offset_ns)
        return a->offset_ns < b->offset_ns ? -1 : 1;
    if (a->ctx != b->ctx)
        return a->ctx < b->ctx ? -1 : 1;
    return a->rule < b->rule ? -1 : a->rule > b->rule;
}

static uint16_t item_id(const struct emb_diff *d, const struct emb_diff_item *it, bool prev)
{
    if (it->rule == EMB_DIFF_EPOCH_DURATION || it->rule == EMB_DIFF_DROPS)
        return prev ? 0 : it->rule == EMB_DIFF_EPOCH_DURATION ? d->anchor->id : 0;
    const struct emb_diff_ctx *c = &d->ctx[it->ctx];
    if (prev)
        return it->b_prev >= 0 ? c->ev[1][it->b_prev].rec->id : 0;
    return it->b >= 0 ? c->ev[1][it->b].rec->id : c->ev[0][it->a].rec->id;
}

static int group_items(struct work *w)
{
    struct emb_diff *d = w->d;
    if (d->nitems)
        qsort(d->items, d->nitems, sizeof *d->items, cmp_item);
    struct map m = {0};
    size_t cap = 0;
    for (size_t i = 0; i < d->nitems; i++) {
        struct emb_diff_item *it = &d->items[i];
        uint16_t id = item_id(d, it, false), prev = item_id(d, it, true);
        uint64_t key = ((uint64_t)it->rule << 56) | ((uint64_t)(it->ctx & 0xFFFFFFu) << 32) |
                       ((uint64_t)prev << 16) | id;
        if (it->rule == EMB_DIFF_DROPS)
            key ^= (uint64_t)it->side << 55;
        uint32_t g = map_get(&m, key);
        if (g == UINT32_MAX) {
            if (!grow((void **)&d->groups, &cap, d->ngroups + 1, sizeof *d->groups) ||
                !map_put(&m, key, (uint32_t)d->ngroups)) {
                map_free(&m);
                w->oom = true;
                return -1;
            }
            g = (uint32_t)d->ngroups++;
            d->groups[g] = (struct emb_diff_group){.rule = it->rule, .ctx = it->ctx, .id = id,
                                                   .id_prev = prev, .first = i};
        }
        struct emb_diff_group *gr = &d->groups[g];
        gr->count += it->rule == EMB_DIFF_DROPS ? it->count : 1;
        gr->last_epoch = it->epoch;
        it->group = g;
        if (it->rule == EMB_DIFF_INTERVAL || it->rule == EMB_DIFF_EPOCH_DURATION) {
            double excess = it->value > it->hi ? it->value - it->hi : it->lo - it->value;
            if (excess > gr->worst)
                gr->worst = excess;
        }
    }
    map_free(&m);
    return 0;
}

/* ---- the run ---- */

static bool same_configuration(const struct emb_capture_identity *a, const struct emb_capture_identity *b)
{
    return a->build_id_len == b->build_id_len && !memcmp(a->build_id, b->build_id, a->build_id_len) &&
           !strcmp(a->firmware, b->firmware) && !strcmp(a->config, b->config);
}

struct emb_diff *emb_diff_run(const struct emb_capture *good, const struct emb_capture *bad,
                              const struct emb_diff_rules *rules, char *err, size_t errlen)
{
    struct emb_diff *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    struct work w = {.d = d, .err = err, .errlen = errlen};
    d->cap[0] = good;
    d->cap[1] = bad;
    d->trace[0] = emb_capture_trace(good);
    d->trace[1] = emb_capture_trace(bad);
    d->name[0] = emb_capture_name(good);
    d->name[1] = emb_capture_name(bad);
    d->rules = *rules;
    d->rules.policies = NULL;
    d->rules.npolicies = 0;
    d->rules.switches = NULL;
    d->rules.nswitches = 0;
    int rc = -1;
    if (rules->npolicies) {
        d->rules.policies = malloc(rules->npolicies * sizeof *rules->policies);
        if (!d->rules.policies)
            goto out;
        memcpy(d->rules.policies, rules->policies, rules->npolicies * sizeof *rules->policies);
        d->rules.npolicies = rules->npolicies;
    }
    if (rules->nswitches) {
        d->rules.switches = malloc(rules->nswitches * sizeof *rules->switches);
        if (!d->rules.switches)
            goto out;
        memcpy(d->rules.switches, rules->switches, rules->nswitches * sizeof *rules->switches);
        d->rules.nswitches = rules->nswitches;
    }
    w.cat = emb_trace_catalog(d->trace[0]);
    w.irq_enter = emb_catalog_find(w.cat, "irq_enter");
    const struct emb_capture_identity *ia = emb_capture_identity(good), *ib = emb_capture_identity(bad);
    if (ia->catalog_checksum != ib->catalog_checksum) {
        refuse(&w, "the captures use different catalogues: %s 0x%08" PRIx32 ", %s 0x%08" PRIx32,
               d->name[0], ia->catalog_checksum, d->name[1], ib->catalog_checksum);
        goto out;
    }
    if (!rules->same_build && same_configuration(ia, ib)) {
        char hex[65];
        refuse(&w, "both captures claim the same configuration (build %s, firmware \"%s\", flags "
                   "\"%s\"): a good and a bad run differ in build or flags. Two runs of one build "
                   "are a valid comparison when said so: --same-build",
               ia->build_id_len ? emb_capture_hex(ia->build_id, ia->build_id_len, hex) : "(none)",
               ia->firmware, ia->config);
        goto out;
    }
    /* Under --same-build, one session id on both sides is one recording sealed twice (or
     * one capture given twice), not two runs: the report says so. */
    d->same_run = rules->same_build && ia->session_id && ia->session_id == ib->session_id;
    if (build_contexts(&w, 0) || build_contexts(&w, 1))
        goto out;
    for (size_t i = 0; i < d->nctx; i++)
        for (int s = 0; s < 2; s++)
            for (size_t k = 0; k < d->ctx[i].n[s]; k++)
                d->ctx[i].ev[s][k].identity = identity(&w, s, d->ctx[i].ev[s][k].rec);
    if (align(&w) || assign_epochs(&w))
        goto out;
    w.closed_ctx[0] = w.closed_ctx[1] = -1;
    find_losses(&w, 0);
    find_losses(&w, 1);
    for (uint32_t ci = 0; ci < d->nctx; ci++)
        if (match_context(&w, ci))
            goto out;
    window_closed_early(&w);
    if (timing(&w) || group_items(&w))
        goto out;
    rc = w.oom ? -1 : 0;
out:
    if (w.oom)
        snprintf(err, errlen, "out of memory");
    free(w.tid_map[0]);
    free(w.tid_map[1]);
    free(w.marker_pos[0]);
    free(w.marker_pos[1]);
    if (rc) {
        emb_diff_free(d);
        return NULL;
    }
    return d;
}

void emb_diff_free(struct emb_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nctx; i++)
        for (int s = 0; s < 2; s++) {
            free(d->ctx[i].ev[s]);
            free(d->ctx[i].epoch_start[s]);
        }
    free(d->ctx);
    free(d->items);
    free(d->groups);
    free(d->gaps);
    free(d->epoch_value);
    free(d->epoch_ns[0]);
    free(d->epoch_ns[1]);
    free(d->rules.policies);
    free(d->rules.switches);
    free(d);
}

/* ---- words ---- */

char *emb_diff_event_text(const struct emb_trace_event *r, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "%s", r->ev ? r->ev->name : "?");
    for (size_t f = 0; r->ev && f < r->ev->nfields && o < len; f++) {
        char v[80];
        emb_trace_field_text(&r->ev->fields[f], r->payload, v, sizeof v);
        o += (size_t)snprintf(buf + o, len - o, " %s=%s", r->ev->fields[f].name, v);
    }
    return buf;
}

char *emb_diff_epoch_text(const struct emb_diff *d, int32_t epoch, char *buf, size_t len)
{
    if (epoch < 0 || (size_t)epoch > d->epochs)
        snprintf(buf, len, "%s", epoch < 0 ? "before the anchor" : "after the compared epochs");
    else if (d->anchor_field)
        snprintf(buf, len, "%d (%s %" PRIu32 ")", (int)epoch, d->anchor_field->name,
                 d->epoch_value[epoch]);
    else
        snprintf(buf, len, "%d", (int)epoch);
    return buf;
}

static void us_text(double ns, char *buf, size_t len)
{
    if (fabs(ns) >= 1e6)
        snprintf(buf, len, "%.3f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.1f us", ns / 1e3);
}

char *emb_diff_item_text(const struct emb_diff *d, const struct emb_diff_item *it, char *buf,
                         size_t len)
{
    const struct emb_diff_ctx *c = it->ctx < d->nctx ? &d->ctx[it->ctx] : NULL;
    char ev[256], ev2[256], v[32], lo[32], hi[32], m[32];
    switch (it->rule) {
    case EMB_DIFF_MISSING:
        snprintf(buf, len, "observed in the good run only: %s",
                 emb_diff_event_text(c->ev[0][it->a].rec, ev, sizeof ev));
        break;
    case EMB_DIFF_EXTRA:
        snprintf(buf, len, "observed in the bad run only: %s",
                 emb_diff_event_text(c->ev[1][it->b].rec, ev, sizeof ev));
        break;
    case EMB_DIFF_REORDER:
        snprintf(buf, len, "observed in another order within %s: %s (good #%" PRId64 ", bad #%" PRId64 ")",
                 c->name, emb_diff_event_text(c->ev[1][it->b].rec, ev, sizeof ev),
                 it->a - (int64_t)c->epoch_start[0][it->epoch < 0 ? 0 : it->epoch],
                 it->b - (int64_t)c->epoch_start[1][it->epoch < 0 ? 0 : it->epoch]);
        break;
    case EMB_DIFF_ARGUMENT: {
        const struct emb_trace_event *ra = c->ev[0][it->a].rec, *rb = c->ev[1][it->b].rec;
        if (it->field >= 0) {
            const struct emb_catalog_field *f = &ra->ev->fields[it->field];
            char va[80], vb[80];
            emb_trace_field_text(f, ra->payload, va, sizeof va);
            emb_trace_field_text(f, rb->payload, vb, sizeof vb);
            snprintf(buf, len, "%s.%s observed as %s in the good run, %s in the bad run",
                     ra->ev->name, f->name, va, vb);
        } else {
            snprintf(buf, len, "observed with other values: good %s, bad %s",
                     emb_diff_event_text(ra, ev, sizeof ev), emb_diff_event_text(rb, ev2, sizeof ev2));
        }
        break;
    }
    case EMB_DIFF_EPOCH_DURATION:
    case EMB_DIFF_INTERVAL: {
        char gm[32], bm[32], blo[32], bhi[32], what[320];
        us_text(it->value, v, sizeof v);
        us_text(it->lo, lo, sizeof lo);
        us_text(it->hi, hi, sizeof hi);
        us_text(it->margin, m, sizeof m);
        us_text(it->median, gm, sizeof gm);
        us_text(it->b_median, bm, sizeof bm);
        us_text(it->b_lo, blo, sizeof blo);
        us_text(it->b_hi, bhi, sizeof bhi);
        if (it->rule == EMB_DIFF_EPOCH_DURATION)
            snprintf(what, sizeof what, "epoch observed lasting %s", v);
        else
            snprintf(what, sizeof what, "%s observed %s after %s in %s", c->ev[1][it->b].rec->ev->name,
                     v, c->ev[1][it->b_prev].rec->ev->name, c->name);
        snprintf(buf, len, "%s, %s the good run's band for %" PRIu32 " epoch%s in a row; good run: "
                 "median %s, %g%%..%g%% %s .. %s (%" PRIu32 " values, margin %s); bad run: median "
                 "%s, %g%%..%g%% %s .. %s (%" PRIu32 " values)", what,
                 it->value > it->hi ? "above" : "below", it->run, it->run == 1 ? "" : "s", gm,
                 d->rules.quantile_pct, 100 - d->rules.quantile_pct, lo, hi, it->good_n, m, bm,
                 d->rules.quantile_pct, 100 - d->rules.quantile_pct, blo, bhi, it->bad_n);
        break;
    }
    case EMB_DIFF_DROPS:
        if (it->closed) {
            snprintf(buf, len, "the %s run's window closed here: ring %s filled (%" PRIu64 " events "
                     "dropped), while the %s run recorded on; nothing after is compared",
                     it->side ? "bad" : "good", c ? c->name : "?", it->count, it->side ? "good" : "bad");
            break;
        }
        snprintf(buf, len, "%" PRIu64 " events dropped or packets lost in the %s run (%s): the "
                 "comparison is incomplete here", it->count, it->side ? "bad" : "good",
                 c ? c->name : "?");
        break;
    default:
        snprintf(buf, len, "?");
    }
    return buf;
}
