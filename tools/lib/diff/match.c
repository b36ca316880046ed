/* The matching of one context: its edit script, then what the unmatched events are: the
 * same event in another order (reorder), with other values (argument), or missing and
 * extra, with what is set aside at the context's edges and after a window closed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

static uint64_t op_identity(const struct emb_diff_ctx *c, const struct emb_diff_op *op)
{
    return op->t == EMB_DIFF_OP_DEL ? c->ev[0][op->ia].identity : c->ev[1][op->ib].identity;
}

struct keyed {
    uint64_t key;
    uint32_t region;
    size_t op;
};

/* Region, then identity: how an unmatched event of one run finds its reordered
 * counterpart in the other. */
static int keyed_order(const struct keyed *a, const struct keyed *b)
{
    int c = emb_diff_order_u64(a->region, b->region);
    return c ? c : emb_diff_order_u64(a->key, b->key);
}

static int cmp_keyed(const void *x, const void *y)
{
    const struct keyed *a = x, *b = y;
    int c = keyed_order(a, b);
    return c ? c : emb_diff_order_u64(a->op, b->op);
}

/* The first field that differs under its policy between two events of one name. */
static int differing_field(const struct emb_diff_work *w, const struct emb_trace_event *a,
                           const struct emb_trace_event *b, bool tolerance_only)
{
    const struct emb_catalog_event *ev = a->ev;
    for (size_t f = 0; f < ev->nfields; f++) {
        double tol;
        enum emb_catalog_compare p = emb_diff_policy_of(&w->d->rules, ev, f, b->payload, &tol);
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
                va = emb_diff_thread_value(w, 0, va);
                vb = emb_diff_thread_value(w, 1, vb);
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

/* The same events in another order within one context: an unmatched event of the good
 * run and one of the bad run with one identity, between the same two stretches of
 * agreement (EMB_DIFF_RESYNC matches in a row). */
static void pair_reorders(struct emb_diff_work *w, uint32_t ci, struct emb_diff_ops *o)
{
    struct emb_diff *d = w->d;
    struct emb_diff_ctx *c = &d->ctx[ci];
    size_t nd = 0, ni = 0;
    for (size_t i = 0; i < o->n; i++) {
        nd += o->v[i].t == EMB_DIFF_OP_DEL && !o->v[i].used;
        ni += o->v[i].t == EMB_DIFF_OP_INS && !o->v[i].used;
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
        const struct emb_diff_op *x = &o->v[i];
        if (x->used || x->t == EMB_DIFF_OP_MATCH)
            continue;
        struct keyed k = {op_identity(c, x), x->region, i};
        if (x->t == EMB_DIFF_OP_DEL)
            dk[nd++] = k;
        else
            ik[ni++] = k;
    }
    qsort(dk, nd, sizeof *dk, cmp_keyed);
    qsort(ik, ni, sizeof *ik, cmp_keyed);
    for (size_t i = 0, j = 0; i < nd && j < ni;) {
        int cmp = keyed_order(&dk[i], &ik[j]);
        if (cmp < 0) {
            i++;
            continue;
        }
        if (cmp > 0) {
            j++;
            continue;
        }
        struct emb_diff_op *x = &o->v[dk[i].op], *y = &o->v[ik[j].op];
        x->used = y->used = true;
        c->ev[0][x->ia].peer = (int32_t)y->ib;
        c->ev[1][y->ib].peer = (int32_t)x->ia;
        int32_t ep = c->ev[1][y->ib].epoch;
        if (emb_diff_compared(d, ep) || emb_diff_compared(d, c->ev[0][x->ia].epoch)) {
            struct emb_diff_item *it = emb_diff_add_item(w, EMB_DIFF_REORDER, emb_diff_compared(d, ep) ? ep : c->ev[0][x->ia].epoch, ci);
            if (it) {
                it->a = x->ia;
                it->b = y->ib;
                emb_diff_set_offset(d, it);
            }
        }
        i++, j++;
    }
    free(dk);
    free(ik);
}

/* A context only one run has: all of its compared events are missing or extra. */
static int match_lone_context(struct emb_diff_work *w, uint32_t ci)
{
    struct emb_diff *d = w->d;
    struct emb_diff_ctx *c = &d->ctx[ci];
    int s = c->present[0] ? 0 : 1;
    for (size_t k = c->epoch_start[s][0]; k < c->epoch_start[s][d->epochs]; k++) {
        struct emb_diff_item *it =
            emb_diff_add_item(w, s == 0 ? EMB_DIFF_MISSING : EMB_DIFF_EXTRA, c->ev[s][k].epoch, ci);
        if (!it)
            continue;
        if (s == 0)
            it->a = (int64_t)k;
        else
            it->b = (int64_t)k;
        emb_diff_set_offset(d, it);
    }
    return w->oom ? -1 : 0;
}

/* Regions between stretches of agreement (EMB_DIFF_RESYNC matches in a row), and the
 * peers of matches. Returns the last region. */
static uint32_t mark_regions(struct emb_diff_ctx *c, struct emb_diff_ops *o)
{
    uint32_t region = 0;
    size_t run = 0;
    for (size_t i = 0; i < o->n; i++) {
        struct emb_diff_op *x = &o->v[i];
        if (x->t == EMB_DIFF_OP_MATCH) {
            c->ev[0][x->ia].peer = (int32_t)x->ib;
            c->ev[1][x->ib].peer = (int32_t)x->ia;
            if (++run == EMB_DIFF_RESYNC)
                region++;
        } else {
            run = 0;
        }
        x->region = region;
    }
    return region;
}

/* The edges: what a context other than the anchor's did in the first compared epoch
 * before its first stretch of agreement, or in the last one after its last, depends on
 * when another context opened and closed the recording, not on this context. */
static void set_aside_edges(struct emb_diff *d, uint32_t ci, struct emb_diff_ops *o,
                            uint32_t last_region)
{
    const struct emb_diff_ctx *c = &d->ctx[ci];
    for (size_t i = 0; i < o->n && ci != d->anchor_ctx; i++) {
        struct emb_diff_op *x = &o->v[i];
        if (x->t == EMB_DIFF_OP_MATCH)
            continue;
        int32_t ep = x->t == EMB_DIFF_OP_DEL ? c->ev[0][x->ia].epoch : c->ev[1][x->ib].epoch;
        if ((x->region == 0 && ep <= 0) ||
            (x->region == last_region && ep >= (int32_t)d->epochs - 1)) {
            x->used = true;
            d->edge++;
        }
    }
}

/* After a run's window closed, nothing more was recorded in it: what the other run has
 * after this context's last match has no counterpart to miss. */
static void set_aside_after_close(struct emb_diff_work *w, struct emb_diff_ops *o)
{
    size_t last_match = o->n;
    for (size_t i = o->n; i-- > 0;)
        if (o->v[i].t == EMB_DIFF_OP_MATCH) {
            last_match = i;
            break;
        }
    for (size_t i = last_match == o->n ? 0 : last_match + 1; i < o->n; i++) {
        struct emb_diff_op *x = &o->v[i];
        if (!x->used && w->closed_ctx[x->t == EMB_DIFF_OP_DEL ? 1 : 0] >= 0) {
            x->used = true;
            w->d->after_close++;
        }
    }
}

/* A match inside the compared range: counted, and an argument difference when a field
 * compared with a tolerance is outside it. */
static void check_match(struct emb_diff_work *w, uint32_t ci, const struct emb_diff_op *x)
{
    struct emb_diff *d = w->d;
    const struct emb_diff_ctx *c = &d->ctx[ci];
    const struct emb_diff_event *ea = &c->ev[0][x->ia], *eb = &c->ev[1][x->ib];
    if (!emb_diff_compared(d, eb->epoch) && !emb_diff_compared(d, ea->epoch))
        return;
    d->matched++;
    if (ci != d->anchor_ctx && ea->epoch != eb->epoch)
        d->boundary_shifts++;
    if (!emb_diff_has_tolerance(w, emb_diff_event_def(d, eb), emb_diff_payload(d, 1, eb)))
        return;
    struct emb_trace_event ra = emb_diff_event_record(d, 0, ea), rb = emb_diff_event_record(d, 1, eb);
    int f = differing_field(w, &ra, &rb, true);
    struct emb_diff_item *it =
        f >= 0 ? emb_diff_add_item(w, EMB_DIFF_ARGUMENT,
                                   emb_diff_compared(d, eb->epoch) ? eb->epoch : ea->epoch, ci)
               : NULL;
    if (it) {
        it->a = x->ia;
        it->b = x->ib;
        it->field = f;
        emb_diff_set_offset(d, it);
    } else if (f < 0) {
        d->within_tolerance++;
    }
}

/* Inside a run of unmatched operations [i, j): the same event with other values, the
 * first deletion paired with the first insertion of its event. */
static void pair_same_events(struct emb_diff_work *w, uint32_t ci, struct emb_diff_ops *o,
                             size_t i, size_t j)
{
    struct emb_diff *d = w->d;
    struct emb_diff_ctx *c = &d->ctx[ci];
    for (size_t p = i; p < j; p++) {
        struct emb_diff_op *del = &o->v[p];
        if (del->t != EMB_DIFF_OP_DEL || del->used)
            continue;
        for (size_t q = i; q < j; q++) {
            struct emb_diff_op *ins = &o->v[q];
            if (ins->t != EMB_DIFF_OP_INS || ins->used ||
                emb_diff_event_id(&c->ev[0][del->ia]) != emb_diff_event_id(&c->ev[1][ins->ib]))
                continue;
            del->used = ins->used = true;
            c->ev[0][del->ia].peer = (int32_t)ins->ib;
            c->ev[1][ins->ib].peer = (int32_t)del->ia;
            int32_t ep = c->ev[1][ins->ib].epoch;
            if (!emb_diff_compared(d, ep))
                ep = c->ev[0][del->ia].epoch;
            struct emb_diff_item *it =
                emb_diff_compared(d, ep) ? emb_diff_add_item(w, EMB_DIFF_ARGUMENT, ep, ci) : NULL;
            if (it) {
                it->a = del->ia;
                it->b = ins->ib;
                struct emb_trace_event ra = emb_diff_event_record(d, 0, &c->ev[0][del->ia]);
                struct emb_trace_event rb = emb_diff_event_record(d, 1, &c->ev[1][ins->ib]);
                it->field = differing_field(w, &ra, &rb, false);
                emb_diff_set_offset(d, it);
            }
            break;
        }
    }
}

/* What is left of a run of unmatched operations [i, j) is missing or extra; its
 * neighbourhood in the other run centres after that run's last event before it. */
static void report_unmatched(struct emb_diff_work *w, uint32_t ci, const struct emb_diff_ops *o,
                             size_t i, size_t j, int64_t *last_a, int64_t *last_b)
{
    struct emb_diff *d = w->d;
    const struct emb_diff_ctx *c = &d->ctx[ci];
    for (size_t p = i; p < j; p++) {
        const struct emb_diff_op *y = &o->v[p];
        if (y->t == EMB_DIFF_OP_DEL)
            *last_a = y->ia;
        if (y->t == EMB_DIFF_OP_INS)
            *last_b = y->ib;
        if (y->used)
            continue;
        int32_t ep = y->t == EMB_DIFF_OP_DEL ? c->ev[0][y->ia].epoch : c->ev[1][y->ib].epoch;
        if (!emb_diff_compared(d, ep))
            continue;
        struct emb_diff_item *it =
            emb_diff_add_item(w, y->t == EMB_DIFF_OP_DEL ? EMB_DIFF_MISSING : EMB_DIFF_EXTRA, ep, ci);
        if (!it)
            continue;
        if (y->t == EMB_DIFF_OP_DEL) {
            it->a = y->ia;
            it->b_near = *last_b + 1;
        } else {
            it->b = y->ib;
            it->a_near = *last_a + 1;
        }
        emb_diff_set_offset(d, it);
    }
}

int emb_diff_match_context(struct emb_diff_work *w, uint32_t ci)
{
    struct emb_diff *d = w->d;
    struct emb_diff_ctx *c = &d->ctx[ci];
    if (!c->present[0] || !c->present[1])
        return match_lone_context(w, ci);
    /* the room of the last context's script, written again rather than fresh pages */
    struct emb_diff_ops o = {.v = w->ops, .cap = w->ops_cap};
    if (!(o.v = emb_diff_grow(w, o.v, &o.cap, c->n[0] + c->n[1] + 1, sizeof *o.v)))
        return -1;
    int rc = emb_diff_sequences(c->ev[0], c->n[0], c->ev[1], c->n[1], &o, &d->diff_fallbacks);
    w->ops = o.v;
    w->ops_cap = o.cap;
    if (rc != 0) {
        w->oom = true;
        return -1;
    }
    uint32_t last_region = mark_regions(c, &o);
    set_aside_edges(d, ci, &o, last_region);
    set_aside_after_close(w, &o);
    pair_reorders(w, ci, &o);
    int64_t last_a = -1, last_b = -1;
    for (size_t i = 0; i < o.n;) {
        struct emb_diff_op *x = &o.v[i];
        if (x->t == EMB_DIFF_OP_MATCH) {
            check_match(w, ci, x);
            last_a = x->ia;
            last_b = x->ib;
            i++;
            continue;
        }
        size_t j = i;
        while (j < o.n && o.v[j].t != EMB_DIFF_OP_MATCH)
            j++;
        pair_same_events(w, ci, &o, i, j);
        report_unmatched(w, ci, &o, i, j, &last_a, &last_b);
        i = j;
    }
    return w->oom ? -1 : 0;
}
