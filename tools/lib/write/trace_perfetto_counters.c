/* Counters the Perfetto model derives from a whole context rather than from one event: the
 * CPU load of a context (its switch and idle events), each thread's load (the switch
 * events) and the fill of its ring (its packets). docs/perfetto.md, "Counters". */
#include "trace_perfetto_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define LOAD_WINDOW_NS 1000000u /* 1 ms windows ... */
#define LOAD_MAX_WINDOWS 1000u  /* ... widened tenfold until the trace has at most this many */
#define LOAD_THREADS_MAX 256u   /* threads given a load counter; later ones are left out */

/* +1 the event makes the context busy, -1 idle, 0 neither. Idle is idle_enter up to
 * idle_exit, and a switch to no thread ("none") up to the next switch. */
static int busy_change(const struct emb_perfetto_loads *l, const struct emb_trace_event *e);

/* Adds the busy time [from, to) to the windows it covers. */
static void add_busy(uint64_t *acc, size_t nwin, uint64_t window, uint64_t from, uint64_t to)
{
    while (from < to) {
        size_t w = (size_t)(from / window);
        if (w >= nwin)
            return;
        uint64_t edge = (uint64_t)(w + 1) * window;
        uint64_t until = to < edge ? to : edge;
        acc[w] += until - from;
        from = until;
    }
}

/* A counter of `name`: each window's busy time in percent of the window, a point at its
 * start. */
static void window_counter(struct emb_perfetto_model *m, const char *name, const uint64_t *acc,
                           uint64_t window, size_t nwin)
{
    uint32_t track = emb_perfetto_counter_track(m, name);
    uint32_t cat = emb_perfetto_intern(m, "counter");
    for (size_t w = 0; w < nwin; w++) {
        uint64_t start = (uint64_t)w * window;
        uint64_t len = m->end_ns - start < window ? m->end_ns - start : window;
        struct emb_perfetto_item *it = emb_perfetto_item_add(m, EMB_PERFETTO_COUNTER, track, start, 0);
        it->value = len ? (int64_t)((acc[w] * 100 + len / 2) / len) : 0;
        it->name = m->tracks[track].name;
        it->cat = cat;
    }
}

/* The load counters' window: 1 ms, widened tenfold until the trace has fewer than
 * LOAD_MAX_WINDOWS; *nwin windows cover the trace. */
static uint64_t load_window(const struct emb_perfetto_model *m, size_t *nwin)
{
    uint64_t window = LOAD_WINDOW_NS;
    while (m->end_ns / window >= LOAD_MAX_WINDOWS)
        window *= 10;
    *nwin = (size_t)(m->end_ns / window) + 1;
    return window;
}

/* A context's busy state, and the thread it runs (switch events). */
struct context_load {
    int first;          /* its first change (0: none yet): before it, the other state */
    bool busy;
    uint64_t since;
    uint64_t *acc;      /* its busy time per window, from its first change */
    long running;       /* the row of the thread it runs, -1 none */
    uint64_t run_since;
};

/* A thread the switch events name: its busy time per window, and where it is first named
 * in the order that orders the counters (each context's records in turn, as `emb trace
 * --summary` counts them): by the first context that runs it, then by record. */
struct thread_row {
    uint32_t ctx;
    uint64_t order;
    const uint8_t *named; /* the payload of a switch naming it, for its name */
    uint64_t *acc;
};

struct emb_perfetto_loads {
    const struct emb_catalog_event *idle_enter, *idle_exit, *sw;
    const struct emb_catalog_field *to;
    uint64_t window;
    size_t nwin, nctx;
    struct context_load *ctx;
    uint16_t *slot;     /* thread number -> its row + 1; 0 none yet */
    struct thread_row *rows;
    size_t nrows, rows_cap;
    bool failed;
};

static int busy_change(const struct emb_perfetto_loads *l, const struct emb_trace_event *e)
{
    if (e->ev == l->idle_enter)
        return -1;
    if (e->ev == l->idle_exit)
        return 1;
    if (l->to == NULL)
        return 0;
    uint64_t v = emb_catalog_field_get_uint(l->to, e->payload);
    return l->to->size == 2 && v == 0xFFFFu ? -1 : 1;
}

struct emb_perfetto_loads *emb_perfetto_loads_new(const struct emb_perfetto_model *m)
{
    const struct emb_catalog *cat = emb_trace_catalog(m->t);
    struct emb_perfetto_loads *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->idle_enter = emb_catalog_find(cat, "idle_enter");
    l->idle_exit = emb_catalog_find(cat, "idle_exit");
    l->sw = emb_catalog_find(cat, "switch");
    l->to = l->sw ? emb_perfetto_field(l->sw, "to") : NULL;
    l->window = load_window(m, &l->nwin);
    l->nctx = emb_trace_context_count(m->t);
    l->ctx = calloc(l->nctx ? l->nctx : 1, sizeof *l->ctx);
    l->slot = l->to ? calloc(0xFFFFu, sizeof *l->slot) : NULL;
    if (l->ctx == NULL || (l->to && l->slot == NULL)) {
        EMB_FREE_ALL(l->ctx, l->slot, l);
        return NULL;
    }
    for (size_t i = 0; i < l->nctx; i++)
        l->ctx[i].running = -1;
    return l;
}

/* The row of thread `index`, first seen in context `ctx` at `order`; -1 for none. */
static long thread_row(struct emb_perfetto_loads *l, uint64_t index, uint32_t ctx, uint64_t order,
                       const uint8_t *payload)
{
    if (index >= 0xFFFFu)
        return -1;
    if (l->slot[index] == 0) {
        struct thread_row *a = emb_array_grow(l->rows, &l->rows_cap, l->nrows + 1, sizeof *a);
        uint64_t *acc = calloc(l->nwin, sizeof *acc);
        if (a == NULL || acc == NULL) {
            free(acc);
            if (a != NULL)
                l->rows = a;
            l->failed = true;
            return -1;
        }
        l->rows = a;
        a[l->nrows] = (struct thread_row){.ctx = ctx, .order = order, .named = payload, .acc = acc};
        l->slot[index] = (uint16_t)++l->nrows;
    }
    struct thread_row *r = &l->rows[l->slot[index] - 1];
    if (ctx < r->ctx) { /* an earlier context runs it too: it orders the row */
        r->ctx = ctx;
        r->order = order;
    }
    return (long)l->slot[index] - 1;
}

/* A switch: the thread the context ran until now was busy since the last one. */
static void thread_switch(struct emb_perfetto_loads *l, const struct emb_trace_event *e,
                          uint64_t order)
{
    struct context_load *c = &l->ctx[e->ctx];
    if (c->running >= 0)
        add_busy(l->rows[c->running].acc, l->nwin, l->window, c->run_since, e->ns);
    c->running = thread_row(l, emb_catalog_field_get_uint(l->to, e->payload), e->ctx, order,
                            e->payload);
    c->run_since = e->ns;
}

void emb_perfetto_loads_record(struct emb_perfetto_loads *l, const struct emb_trace_event *e,
                               uint64_t order)
{
    if (e->type != EMB_TREC_EVENT || e->ev == NULL || e->ctx >= l->nctx ||
        (e->ev != l->idle_enter && e->ev != l->idle_exit && e->ev != l->sw))
        return;
    if (e->ev == l->sw && l->to != NULL)
        thread_switch(l, e, order);
    int d = busy_change(l, e);
    struct context_load *c = &l->ctx[e->ctx];
    if (d == 0)
        return;
    if (c->first == 0) {
        if (!(c->acc = calloc(l->nwin, sizeof *c->acc))) {
            l->failed = true;
            return;
        }
        c->first = d;
        c->busy = d < 0; /* before its first change it was in the other state */
        c->since = 0;
    }
    if ((d > 0) == c->busy)
        return;
    if (c->busy)
        add_busy(c->acc, l->nwin, l->window, c->since, e->ns);
    c->busy = d > 0;
    c->since = e->ns;
}

/* Per-thread load: the first LOAD_THREADS_MAX threads, in the order that names them. */
static void thread_counters(struct emb_perfetto_loads *l, struct emb_perfetto_model *m)
{
    struct emb_perfetto_order *order = malloc((l->nrows + 1) * sizeof *order);
    if (order == NULL) {
        m->failed = true;
        return;
    }
    for (size_t r = 0; r < l->nrows; r++)
        order[r] = (struct emb_perfetto_order){.first = l->rows[r].ctx,
                                               .second = l->rows[r].order, .index = (uint32_t)r};
    if (l->nrows > 1)
        qsort(order, l->nrows, sizeof *order, emb_perfetto_by_order);
    for (size_t k = 0; k < l->nrows && k < LOAD_THREADS_MAX && !m->failed; k++) {
        const struct thread_row *r = &l->rows[order[k].index];
        char who[64], name[96];
        emb_trace_field_display(m->names, emb_trace_info(m->t)->clock_hz, l->to, r->named, who,
                                sizeof who);
        snprintf(name, sizeof name, "thread load (%s)", who);
        window_counter(m, name, r->acc, l->window, l->nwin);
    }
    free(order);
}

void emb_perfetto_loads_finish(struct emb_perfetto_loads *l, struct emb_perfetto_model *m)
{
    if (l->failed)
        m->failed = true;
    for (size_t i = 0; i < l->nctx && !m->failed; i++) {
        struct context_load *c = &l->ctx[i];
        if (c->running >= 0)
            add_busy(l->rows[c->running].acc, l->nwin, l->window, c->run_since, m->end_ns);
        if (c->first == 0)
            continue; /* the context records neither switches nor idle */
        if (c->busy)
            add_busy(c->acc, l->nwin, l->window, c->since, m->end_ns);
        char name[64];
        snprintf(name, sizeof name, "cpu load (%s)", emb_trace_context(m->t, i)->name);
        window_counter(m, name, c->acc, l->window, l->nwin);
    }
    if (l->to != NULL && !m->failed)
        thread_counters(l, m);
    for (size_t i = 0; i < l->nctx; i++)
        free(l->ctx[i].acc);
    for (size_t r = 0; r < l->nrows; r++)
        free(l->rows[r].acc);
    EMB_FREE_ALL(l->rows, l->ctx, l->slot, l);
}

/* The packets a context's ring has taken since the trace began, in percent of the ring
 * (the header's ring block), at the start of each packet: 100 is where a snapshot ring
 * begins to overwrite and a window capture closes. */
void emb_perfetto_ring_fill(struct emb_perfetto_model *m)
{
    const struct emb_trace_info *h = emb_trace_info(m->t);
    if (!h->ring_packets)
        return; /* the header does not say how large the rings are */
    size_t npk, nctx = emb_trace_context_count(m->t);
    const struct emb_trace_packet *pk = emb_trace_packets(m->t, &npk);
    uint64_t *held = calloc(2 * (nctx ? nctx : 1), sizeof *held); /* packets, track */
    if (!held) {
        m->failed = true;
        return;
    }
    uint32_t cat = emb_perfetto_intern(m, "counter");
    for (size_t i = 0; i < npk; i++) {
        const struct emb_trace_packet *p = &pk[i];
        if (p->ctx >= nctx || p->ts_begin < h->start_ts)
            continue;
        uint64_t n = ++held[2 * p->ctx];
        if (n == 1) { /* the context's track, made where its first packet is */
            char name[64];
            snprintf(name, sizeof name, "ring fill (%s)", emb_trace_context(m->t, p->ctx)->name);
            held[2 * p->ctx + 1] = emb_perfetto_counter_track(m, name);
        }
        uint32_t track = (uint32_t)held[2 * p->ctx + 1];
        uint64_t ns = emb_trace_ticks_to_ns(p->ts_begin - h->start_ts, h->clock_hz);
        struct emb_perfetto_item *it = emb_perfetto_item_add(m, EMB_PERFETTO_COUNTER, track, ns, 0);
        it->value = (int64_t)((n < h->ring_packets ? n : h->ring_packets) * 100 / h->ring_packets);
        it->name = m->tracks[track].name;
        it->cat = cat;
    }
    free(held);
}
