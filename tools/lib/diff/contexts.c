/* The comparison's contexts: each run's events laid out by thread (the ring's name), by
 * interrupt (its number, across every ring it landed on) and the fault handler in one walk
 * of the decoder's cursor, each packed with its identity, the hash the matching compares
 * (the rules' policies found once per event id, not per event). */
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

/* A context of one run while the walk fills it. It becomes a comparison context at the
 * end, in the order a walk of ring after ring would have met it: by the first ring it
 * appears in, then its first record there (a ring's thread before its records). */
struct slot {
    char name[40];
    uint8_t kind;
    uint32_t ring;
    uint64_t pos;
    struct emb_diff_event *ev;
    size_t n, cap;
    uint32_t *cls;              /* good run: [event] its interval's class (emb_diff_ctx's) */
    size_t cls_cap;
    uint32_t *markers;          /* the epoch markers' values (emb_diff_ctx.marker_value) */
    size_t nmarkers, markers_cap;
};

/* One run's walk of the decoder's cursor, which keeps each ring's records in ring order
 * and merges the rings by time, as the interrupt contexts want them. */
struct walk {
    struct emb_diff_work *w;
    int side;
    size_t nrings;
    struct slot *slots;
    size_t nslots, cap;
    long *ring_slot;            /* [ring] its thread's slot */
    int32_t (*irq_at)[64];      /* [ring][depth] the interrupt entered there, -1 none */
    long (*irq_slot)[64];       /* [ring][depth] its slot, -1 not looked up */
    uint64_t *pos;              /* [ring] records walked */
    uint64_t *last_ns;          /* [ring] its last event's time */
};

/* The slot of this name and kind, first met at record `pos` of `ring`; -1 out of memory. */
static long slot_get(struct walk *k, const char *name, uint8_t kind, uint32_t ring, uint64_t pos)
{
    for (size_t i = 0; i < k->nslots; i++) {
        struct slot *s = &k->slots[i];
        if (s->kind != kind || strcmp(s->name, name))
            continue;
        if (ring < s->ring) {
            s->ring = ring;
            s->pos = pos;
        }
        return (long)i;
    }
    struct slot *slots = emb_diff_grow(k->w, k->slots, &k->cap, k->nslots + 1, sizeof *slots);
    if (!slots)
        return -1;
    k->slots = slots;
    slots[k->nslots] = (struct slot){.kind = kind, .ring = ring, .pos = pos};
    snprintf(slots[k->nslots].name, sizeof slots->name, "%s", name);
    return (long)k->nslots++;
}

/* The slot a record of ring r belongs to: the interrupt it ran in (the number of the
 * interrupt entered at its nesting depth), the fault handler, or the ring's thread. */
static long record_slot(struct walk *k, const struct emb_trace_event *rec, uint64_t pos)
{
    uint32_t r = rec->ctx;
    if (rec->kind == EMB_EVT_KIND_FAULT)
        return slot_get(k, "fault", EMB_DIFF_CTX_FAULT, r, pos + 1);
    if (rec->kind != EMB_EVT_KIND_ISR)
        return k->ring_slot[r];
    unsigned depth = rec->depth < 64 ? rec->depth : 63;
    if (rec->ev == k->w->irq_enter && rec->ev->nfields > 0) {
        int32_t v = (int32_t)emb_catalog_field_get_uint(&rec->ev->fields[0], rec->payload);
        if (v != k->irq_at[r][depth])
            k->irq_slot[r][depth] = -1;
        k->irq_at[r][depth] = v;
    }
    if (k->irq_slot[r][depth] < 0) {
        char key[64];
        if (k->irq_at[r][depth] >= 0)
            snprintf(key, sizeof key, "irq %d", (int)k->irq_at[r][depth]);
        else
            snprintf(key, sizeof key, "irq ?");
        k->irq_slot[r][depth] = slot_get(k, key, EMB_DIFF_CTX_IRQ, r, pos + 1);
    }
    return k->irq_slot[r][depth];
}

static uint64_t identity(struct emb_diff_work *w, int side, const struct emb_trace_event *r);

/* What a later step would read the event's payload again for, kept while it is in reach
 * (reading them later faulted in the capture file's pages again): an epoch marker's value
 * (align.c) and, in the good run, the class of the interval that ends at it (timing.c).
 * The event is s->ev[s->n], not yet counted. */
static int keep_for_later(struct walk *k, struct slot *s, uint32_t si, const struct emb_trace_event *rec)
{
    struct emb_diff *d = k->w->d;
    if (d->anchor_field && rec->id == d->anchor->id) {
        uint32_t *mv = emb_diff_grow(k->w, s->markers, &s->markers_cap, s->nmarkers + 1, sizeof *mv);
        if (!mv)
            return -1;
        s->markers = mv;
        mv[s->nmarkers++] = (uint32_t)emb_catalog_field_get_uint(d->anchor_field, rec->payload);
    }
    if (k->side != 0)
        return 0;
    if (s->n >= s->cls_cap) { /* grown only when full: this runs for every event */
        uint32_t *cls = emb_diff_grow(k->w, s->cls, &s->cls_cap, s->n + 1, sizeof *cls);
        if (!cls)
            return -1;
        s->cls = cls;
    }
    s->cls[s->n] = s->n ? emb_diff_interval_class(k->w, si, &s->ev[s->n - 1], &s->ev[s->n])
                             : UINT32_MAX;
    return k->w->oom ? -1 : 0;
}

/* One EVENT record into its slot, packed. */
static int add_event(struct walk *k, const struct emb_trace_event *rec, uint64_t pos)
{
    long si = record_slot(k, rec, pos);
    if (si < 0)
        return -1;
    const uint8_t *base = k->w->d->bytes[k->side];
    uint64_t at = (uint64_t)(rec->payload - EMB_EVT_HEADER_SIZE - base);
    if (at > EMB_DIFF_OFFSET_MASK)
        return emb_diff_refuse(k->w, "%s: an event past byte 2^48", k->w->d->name[k->side]);
    struct slot *s = &k->slots[si];
    if (s->n == INT32_MAX)
        return emb_diff_refuse(k->w, "%s: context %s holds more than 2^31 events",
                               k->w->d->name[k->side], s->name);
    if (s->n >= s->cap) {
        struct emb_diff_event *ev = emb_diff_grow(k->w, s->ev, &s->cap, s->n + 1, sizeof *ev);
        if (!ev)
            return -1;
        s->ev = ev;
    }
    s->ev[s->n] = (struct emb_diff_event){.identity = identity(k->w, k->side, rec), .ns = rec->ns,
                                          .at = at | (uint64_t)rec->id << 48, .peer = -1};
    if (keep_for_later(k, s, (uint32_t)si, rec) != 0)
        return -1;
    s->n++;
    k->last_ns[rec->ctx] = rec->ns;
    k->w->ring_events[k->side][rec->ctx]++;
    return 0;
}

/* A loss record, kept for losses.c with what the ring had recorded before it. */
static int add_loss(struct walk *k, const struct emb_trace_event *rec)
{
    struct emb_diff_work *w = k->w;
    int side = k->side;
    struct emb_diff_loss *l = emb_diff_grow(w, w->loss[side], &w->loss_cap[side], w->nloss[side] + 1,
                                            sizeof *l);
    if (!l)
        return -1;
    w->loss[side] = l;
    uint64_t before = w->ring_events[side][rec->ctx];
    l[w->nloss[side]++] = (struct emb_diff_loss){
        .ring = rec->ctx, .type = rec->type, .count = rec->count, .ns = rec->ns,
        .offset = rec->offset, .prev_ns = before ? k->last_ns[rec->ctx] : 0,
        .events_before = before};
    return 0;
}

static int walk_records(struct walk *k)
{
    struct emb_trace_cursor *cur = emb_trace_cursor_open(k->w->d->trace[k->side]);
    if (!cur) {
        k->w->oom = true;
        return -1;
    }
    int rc = 0;
    for (const struct emb_trace_event *rec; rc == 0 && (rec = emb_trace_cursor_next(cur)) != NULL;) {
        if (rec->ctx >= k->nrings)
            continue;
        uint64_t pos = k->pos[rec->ctx]++;
        if (rec->type == EMB_TREC_EVENT)
            rc = add_event(k, rec, pos);
        else if (rec->type == EMB_TREC_DISCARDED || rec->type == EMB_TREC_LOST)
            rc = add_loss(k, rec);
    }
    emb_trace_cursor_close(cur);
    return rc;
}

/* A `meaning: thread` field's value names a thread by its ring's name: numbered in the
 * order both runs' rings are met, the same number for the same name in either run. */
static long thread_number(struct emb_diff_work *w, const char *name)
{
    for (size_t i = 0; i < w->nthreads; i++)
        if (!strcmp(w->threads[i], name))
            return (long)i;
    char (*names)[64] = emb_diff_grow(w, w->threads, &w->thread_cap, w->nthreads + 1, sizeof *names);
    if (!names)
        return -1;
    w->threads = names;
    snprintf(w->threads[w->nthreads], sizeof *names, "%s", name);
    return (long)w->nthreads++;
}

/* Each ring's thread slot, and its thread id's number. */
static int ring_slots(struct walk *k)
{
    struct emb_diff_work *w = k->w;
    const struct emb_trace *t = w->d->trace[k->side];
    for (size_t r = 0; r < k->nrings; r++) {
        char key[64];
        emb_diff_thread_key(w->d, k->side, r, key, sizeof key);
        long n = thread_number(w, key);
        if ((k->ring_slot[r] = slot_get(k, key, EMB_DIFF_CTX_THREAD, (uint32_t)r, 0)) < 0 || n < 0)
            return -1;
        w->tid_map[k->side][emb_trace_context(t, r)->id] = (uint32_t)n;
        for (int i = 0; i < 64; i++) {
            k->irq_at[r][i] = -1;
            k->irq_slot[r][i] = -1;
        }
    }
    return 0;
}

static int cmp_slot(const void *x, const void *y)
{
    const struct slot *a = *(const struct slot *const *)x, *b = *(const struct slot *const *)y;
    int c = emb_diff_order_u64(a->ring, b->ring);
    return c ? c : emb_diff_order_u64(a->pos, b->pos);
}

/* The slots become the run's comparison contexts, made in the order of first meeting. */
static int lay_out(struct walk *k)
{
    struct emb_diff_work *w = k->w;
    struct slot **order = malloc((k->nslots + 1) * sizeof *order);
    if (!order) {
        w->oom = true;
        return -1;
    }
    for (size_t i = 0; i < k->nslots; i++)
        order[i] = &k->slots[i];
    qsort(order, k->nslots, sizeof *order, cmp_slot);
    int rc = 0;
    for (size_t i = 0; i < k->nslots && rc == 0; i++) {
        struct slot *s = order[i];
        long ci = ctx_get(w, s->name, s->kind);
        if (ci < 0 || (!s->ev && !(s->ev = calloc(1, sizeof *s->ev)))) {
            w->oom = true;
            rc = -1;
            break;
        }
        struct emb_diff_ctx *c = &w->d->ctx[ci];
        c->present[k->side] = true;
        c->ev[k->side] = s->ev;
        c->n[k->side] = s->n;
        c->marker_value[k->side] = s->markers;
        if (k->side == 0)
            c->interval_class = s->cls;
        s->ev = NULL;
        s->markers = s->cls = NULL;
    }
    free(order);
    return rc;
}

static void walk_free(struct walk *k)
{
    for (size_t i = 0; k->slots && i < k->nslots; i++) {
        free(k->slots[i].ev);
        free(k->slots[i].cls);
        free(k->slots[i].markers);
    }
    free(k->slots);
    free(k->ring_slot);
    free(k->irq_at);
    free(k->irq_slot);
    free(k->pos);
    free(k->last_ns);
}

int emb_diff_build_contexts(struct emb_diff_work *w, int side)
{
    struct walk k = {.w = w, .side = side, .nrings = emb_trace_context_count(w->d->trace[side])};
    size_t n = k.nrings + 1;
    k.ring_slot = calloc(n, sizeof *k.ring_slot);
    k.irq_at = calloc(n, sizeof *k.irq_at);
    k.irq_slot = calloc(n, sizeof *k.irq_slot);
    k.pos = calloc(n, sizeof *k.pos);
    k.last_ns = calloc(n, sizeof *k.last_ns);
    w->ring_events[side] = calloc(n, sizeof *w->ring_events[side]);
    /* thread id -> thread number shared by both runs, for `meaning: thread` fields */
    w->tid_map[side] = malloc(65536 * sizeof(uint32_t));
    int rc = -1;
    if (!k.ring_slot || !k.irq_at || !k.irq_slot || !k.pos || !k.last_ns || !w->ring_events[side] ||
        !w->tid_map[side]) {
        w->oom = true;
        goto out;
    }
    memset(w->tid_map[side], 0xFF, 65536 * sizeof(uint32_t));
    rc = ring_slots(&k);
    if (rc == 0)
        rc = walk_records(&k);
    if (rc == 0)
        rc = lay_out(&k);
    for (size_t r = 0; r < k.nrings; r++)
        if (w->ring_events[side][r] && k.last_ns[r] > w->last_event_ns[side])
            w->last_event_ns[side] = k.last_ns[r];
out:
    walk_free(&k);
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

const struct emb_diff_event_rules *emb_diff_event_rules(struct emb_diff_work *w,
                                                        const struct emb_catalog_event *ev)
{
    static const struct emb_diff_event_rules varies = {.known = true, .varies = true};
    if (!w->event_rules && !(w->event_rules = calloc(65536, sizeof *w->event_rules))) {
        w->oom = true;
        return &varies;
    }
    struct emb_diff_event_rules *er = &w->event_rules[ev->id];
    if (er->known)
        return er;
    er->known = true;
    er->varies = ev->nfields > 64;
    for (size_t i = 0; i < w->d->rules.npolicies; i++)
        er->varies |= w->d->rules.policies[i].event == ev && w->d->rules.policies[i].has_when;
    for (size_t f = 0; !er->varies && f < ev->nfields; f++) {
        double tol;
        /* no `when` policy for this event: the payload is not read */
        enum emb_catalog_compare c = emb_diff_policy_of(&w->d->rules, ev, f, NULL, &tol);
        er->exact |= (uint64_t)(c == EMB_CAT_COMPARE_EXACT) << f;
        er->tolerance |= c == EMB_CAT_COMPARE_TOLERANCE || c == EMB_CAT_COMPARE_TOLERANCE_PCT;
    }
    return er;
}

bool emb_diff_field_exact(const struct emb_diff_work *w, const struct emb_diff_event_rules *er,
                          const struct emb_catalog_event *ev, size_t f, const uint8_t *payload)
{
    double tol;
    if (!er->varies)
        return er->exact >> f & 1u;
    return emb_diff_policy_of(&w->d->rules, ev, f, payload, &tol) == EMB_CAT_COMPARE_EXACT;
}

bool emb_diff_has_tolerance(struct emb_diff_work *w, const struct emb_catalog_event *ev,
                            const uint8_t *payload)
{
    const struct emb_diff_event_rules *er = emb_diff_event_rules(w, ev);
    if (!er->varies)
        return er->tolerance;
    for (size_t f = 0; f < ev->nfields; f++) {
        double tol;
        enum emb_catalog_compare p = emb_diff_policy_of(&w->d->rules, ev, f, payload, &tol);
        if (p == EMB_CAT_COMPARE_TOLERANCE || p == EMB_CAT_COMPARE_TOLERANCE_PCT)
            return true;
    }
    return false;
}

/* The hash of an event's name and of the fields compared exactly: a thread field by the
 * thread's name, so two runs whose thread ids differ still agree. */
static uint64_t identity(struct emb_diff_work *w, int side, const struct emb_trace_event *r)
{
    const struct emb_catalog_event *ev = r->ev;
    const struct emb_diff_event_rules *er = emb_diff_event_rules(w, ev);
    uint64_t h = emb_key_mix64(0x1234567u, ev->id);
    for (size_t f = 0; f < ev->nfields; f++) {
        if (!emb_diff_field_exact(w, er, ev, f, r->payload))
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
