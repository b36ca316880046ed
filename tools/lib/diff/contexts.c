/* The comparison's contexts: each run's records laid out by thread (the ring's name), by
 * interrupt (its number, across every ring it landed on) and the fault handler, and each
 * event's identity, the hash the matching compares. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "diff_internal.h"

long emb_diff_ctx_find(struct emb_diff *d, const char *name, uint8_t kind)
{
    for (size_t i = 0; i < d->nctx; i++)
        if (d->ctx[i].kind == kind && !strcmp(d->ctx[i].name, name))
            return (long)i;
    return -1;
}

/* The context of this name and kind, made when new; -1 out of memory. */
static long ctx_get(struct emb_diff_work *w, const char *name, uint8_t kind)
{
    struct emb_diff *d = w->d;
    long i = emb_diff_ctx_find(d, name, kind);
    if (i >= 0)
        return i;
    struct emb_diff_ctx *ctx = emb_diff_grow(w, d->ctx, &w->ctx_cap, d->nctx + 1, sizeof *ctx);
    if (!ctx)
        return -1;
    d->ctx = ctx;
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
    int c = emb_diff_order_u64(a->rec->ns, b->rec->ns);
    if (!c)
        c = emb_diff_order_u64(a->ring, b->ring);
    return c ? c : emb_diff_order_u64(a->pos, b->pos);
}

/* One run's records, a list per context (index as in d->ctx). */
struct pending_lists {
    struct pending **v;
    size_t *count, *cap;
    size_t n;
};

void emb_diff_thread_key(const struct emb_diff *d, int side, size_t ring, char *buf, size_t len)
{
    const struct emb_trace *t = d->trace[side];
    const struct emb_trace_context *c = emb_trace_context(t, ring);
    for (size_t i = 0; i < d->rules.npairs; i++) {
        const struct emb_diff_pair *p = &d->rules.pairs[i];
        if (!strcmp(side ? p->bad : p->good, c->name)) {
            snprintf(buf, len, "%s", p->good);
            return;
        }
    }
    unsigned same = 0;
    for (size_t i = 0; i < ring; i++)
        same += !strcmp(emb_trace_context(t, i)->name, c->name);
    if (same)
        snprintf(buf, len, "%s#%u", c->name, same + 1);
    else
        snprintf(buf, len, "%s", c->name);
}

/* The context a record of a ring belongs to: the interrupt it ran in (irq_at: the number
 * of the interrupt entered at each nesting depth), the fault handler, or the ring's thread.
 * -1 out of memory. */
static long record_context(struct emb_diff_work *w, const struct emb_trace_event *rec,
                           long thread, int32_t *irq_at)
{
    char key[64];
    if (rec->kind == EMB_EVT_KIND_ISR) {
        unsigned depth = rec->depth < 64 ? rec->depth : 63;
        if (rec->ev == w->irq_enter && rec->ev->nfields > 0)
            irq_at[depth] = (int32_t)emb_catalog_field_get_uint(&rec->ev->fields[0], rec->payload);
        if (irq_at[depth] >= 0)
            snprintf(key, sizeof key, "irq %d", (int)irq_at[depth]);
        else
            snprintf(key, sizeof key, "irq ?");
        return ctx_get(w, key, EMB_DIFF_CTX_IRQ);
    }
    if (rec->kind == EMB_EVT_KIND_FAULT)
        return ctx_get(w, "fault", EMB_DIFF_CTX_FAULT);
    return thread;
}

/* Ring r's events, each into its context's list. */
static int collect_ring(struct emb_diff_work *w, int side, size_t r, struct pending_lists *l)
{
    const struct emb_trace *t = w->d->trace[side];
    const struct emb_trace_context *c = emb_trace_context(t, r);
    char key[64];
    emb_diff_thread_key(w->d, side, r, key, sizeof key);
    long tc = ctx_get(w, key, EMB_DIFF_CTX_THREAD);
    if (tc < 0)
        return -1;
    w->tid_map[side][c->id] = (uint32_t)tc;
    int32_t irq_at[64];
    for (int i = 0; i < 64; i++)
        irq_at[i] = -1;
    for (size_t k = 0; k < c->nrecs; k++) {
        const struct emb_trace_event *rec = &c->recs[k];
        if (rec->type != EMB_TREC_EVENT)
            continue;
        long target = record_context(w, rec, tc, irq_at);
        if (target < 0 || (size_t)target >= l->n) {
            w->oom = w->oom || target < 0;
            return -1;
        }
        struct pending *list = emb_diff_grow(w, l->v[target], &l->cap[target], l->count[target] + 1,
                                             sizeof *list);
        if (!list)
            return -1;
        l->v[target] = list;
        list[l->count[target]++] = (struct pending){rec, (uint32_t)r, (uint32_t)k};
    }
    return 0;
}

static bool has_ring_named(const struct emb_diff *d, int side, const char *name)
{
    char key[64];
    for (size_t r = 0; r < emb_trace_context_count(d->trace[side]); r++) {
        emb_diff_thread_key(d, side, r, key, sizeof key);
        if (!strcmp(key, name))
            return true;
    }
    return false;
}

/* The lists become the contexts' events of this run: an interrupt's merged across rings
 * in time order; a thread is present when the run has its ring, even without events. */
static int lay_out(struct emb_diff_work *w, int side, struct pending_lists *l)
{
    struct emb_diff *d = w->d;
    for (size_t i = 0; i < d->nctx; i++) {
        struct emb_diff_ctx *c = &d->ctx[i];
        size_t n = l->count[i];
        if (!n && c->kind != EMB_DIFF_CTX_THREAD)
            continue;
        if (c->kind == EMB_DIFF_CTX_THREAD) {
            if (!has_ring_named(d, side, c->name))
                continue;
        } else {
            qsort(l->v[i], n, sizeof **l->v, cmp_pending);
        }
        c->present[side] = true;
        c->n[side] = n;
        c->ev[side] = calloc(n ? n : 1, sizeof *c->ev[side]);
        if (!c->ev[side]) {
            w->oom = true;
            return -1;
        }
        for (size_t k = 0; k < n; k++) {
            c->ev[side][k].rec = l->v[i][k].rec;
            c->ev[side][k].ns = l->v[i][k].rec->ns;
            c->ev[side][k].peer = -1;
        }
    }
    return 0;
}

int emb_diff_build_contexts(struct emb_diff_work *w, int side)
{
    struct emb_diff *d = w->d;
    size_t nrings = emb_trace_context_count(d->trace[side]);
    struct pending_lists l = {.n = d->nctx + nrings + 64};
    l.v = calloc(l.n, sizeof *l.v);
    l.count = calloc(l.n, sizeof *l.count);
    l.cap = calloc(l.n, sizeof *l.cap);
    /* thread id -> name index shared by both runs, for `meaning: thread` fields */
    w->tid_map[side] = malloc(65536 * sizeof(uint32_t));
    int rc = -1;
    if (!l.v || !l.count || !l.cap || !w->tid_map[side]) {
        w->oom = true;
        goto out;
    }
    memset(w->tid_map[side], 0xFF, 65536 * sizeof(uint32_t));
    rc = 0;
    for (size_t r = 0; r < nrings && rc == 0; r++)
        rc = collect_ring(w, side, r, &l);
    if (rc == 0)
        rc = lay_out(w, side, &l);
out:
    for (size_t i = 0; l.v && i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    free(l.count);
    free(l.cap);
    return rc;
}

enum emb_catalog_compare emb_diff_policy_of(const struct emb_diff_rules *r,
                                            const struct emb_catalog_event *ev, size_t f,
                                            const uint8_t *payload, double *tol)
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

uint64_t emb_diff_thread_value(const struct emb_diff_work *w, int side, uint64_t v)
{
    if (v < 65536 && w->tid_map[side][v] != UINT32_MAX)
        return 0x100000000u + w->tid_map[side][v];
    return v;
}

/* The hash of an event's name and of the fields compared exactly: a thread field by the
 * thread's name, so two runs whose thread ids differ still agree. */
static uint64_t identity(const struct emb_diff_work *w, int side, const struct emb_trace_event *r)
{
    const struct emb_catalog_event *ev = r->ev;
    uint64_t h = emb_key_mix64(0x1234567u, ev->id);
    for (size_t f = 0; f < ev->nfields; f++) {
        double tol;
        if (emb_diff_policy_of(&w->d->rules, ev, f, r->payload, &tol) != EMB_CAT_COMPARE_EXACT)
            continue;
        const struct emb_catalog_field *fd = &ev->fields[f];
        if (fd->type == EMB_CAT_CHARS) {
            for (uint32_t i = 0; i < fd->size; i++)
                h = emb_key_mix64(h, r->payload[fd->offset + i]);
            continue;
        }
        uint64_t v = emb_catalog_field_get_uint(fd, r->payload);
        if (fd->meaning == EMB_CAT_MEANING_THREAD)
            v = emb_diff_thread_value(w, side, v);
        h = emb_key_mix64(h, v);
    }
    return h;
}

void emb_diff_identities(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    for (size_t i = 0; i < d->nctx; i++)
        for (int s = 0; s < 2; s++)
            for (size_t k = 0; k < d->ctx[i].n[s]; k++)
                d->ctx[i].ev[s][k].identity = identity(w, s, d->ctx[i].ev[s][k].rec);
}
