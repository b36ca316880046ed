/* Counters the Perfetto model derives from a whole context rather than from one event: the
 * CPU load of a context (its switch and idle events), each thread's load (the switch
 * events) and the fill of its ring (its packets). docs/perfetto.md, "Counters". */
#include "trace_perfetto_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOAD_WINDOW_NS 1000000u /* 1 ms windows ... */
#define LOAD_MAX_WINDOWS 1000u  /* ... widened tenfold until the trace has at most this many */
#define LOAD_THREADS_MAX 256u   /* threads given a load counter; later ones are left out */

/* +1 the event makes the context busy, -1 idle, 0 neither. Idle is idle_enter up to
 * idle_exit, and a switch to no thread ("none") up to the next switch. */
static int busy_change(const struct emb_trace_event *e, const struct emb_catalog_event *idle_enter,
                       const struct emb_catalog_event *idle_exit, const struct emb_catalog_event *sw)
{
    if (e->type != EMB_TREC_EVENT || !e->ev)
        return 0;
    if (e->ev == idle_enter)
        return -1;
    if (e->ev == idle_exit)
        return 1;
    if (e->ev != sw)
        return 0;
    const struct emb_catalog_field *to = emb_perfetto_field(sw, "to");
    if (!to)
        return 0;
    uint64_t v = emb_catalog_field_get_uint(to, e->payload);
    return to->size == 2 && v == 0xFFFFu ? -1 : 1;
}

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

/* One context's load: percent of each window it was busy, as a counter. */
static void context_load(struct emb_perfetto_model *m, const struct emb_trace_context *c,
                         const struct emb_catalog_event *const ev[3], uint64_t window,
                         uint64_t *acc, size_t nwin)
{
    int first = 0;
    for (size_t i = 0; i < c->nrecs && !first; i++)
        first = busy_change(&c->recs[i], ev[0], ev[1], ev[2]);
    if (!first)
        return; /* the context records neither switches nor idle */
    memset(acc, 0, nwin * sizeof *acc);
    bool busy = first < 0; /* before its first change it was in the other state */
    uint64_t since = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        int d = busy_change(&c->recs[i], ev[0], ev[1], ev[2]);
        if (!d || (d > 0) == busy)
            continue;
        if (busy)
            add_busy(acc, nwin, window, since, c->recs[i].ns);
        busy = d > 0;
        since = c->recs[i].ns;
    }
    if (busy)
        add_busy(acc, nwin, window, since, m->end_ns);
    char name[64];
    snprintf(name, sizeof name, "cpu load (%s)", c->name);
    window_counter(m, name, acc, window, nwin);
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

void emb_perfetto_cpu_load(struct emb_perfetto_model *m)
{
    const struct emb_catalog *cat = emb_trace_catalog(m->t);
    const struct emb_catalog_event *const ev[3] = {
        emb_catalog_find(cat, "idle_enter"), emb_catalog_find(cat, "idle_exit"),
        emb_catalog_find(cat, "switch")};
    size_t nwin;
    uint64_t window = load_window(m, &nwin);
    uint64_t *acc = calloc(nwin, sizeof *acc);
    if (!acc) {
        m->failed = true;
        return;
    }
    for (size_t i = 0; i < emb_trace_context_count(m->t); i++)
        context_load(m, emb_trace_context(m->t, i), ev, window, acc, nwin);
    free(acc);
}

/* Per-thread load: the threads the switch events name, each with its busy time per
 * window. A thread runs from a switch naming it `to` until the next switch on the same
 * context, as `emb trace --summary` counts it (nothing before a context's first switch). */
struct thread_loads {
    uint16_t *slot;          /* by thread index: its row + 1, 0 none */
    uint64_t *acc;           /* LOAD_THREADS_MAX rows of nwin windows */
    uint32_t index[LOAD_THREADS_MAX];
    const struct emb_trace_event *named[LOAD_THREADS_MAX]; /* a switch naming it, for its name */
    size_t n, nwin;
};

/* The row of thread `index` (first seen in `e`), or -1 past LOAD_THREADS_MAX or for none. */
static long thread_row(struct thread_loads *l, uint64_t index, const struct emb_trace_event *e)
{
    if (index >= 0xFFFFu)
        return -1;
    if (l->slot[index] == 0) {
        if (l->n == LOAD_THREADS_MAX)
            return -1;
        l->index[l->n] = (uint32_t)index;
        l->named[l->n] = e;
        l->slot[index] = (uint16_t)++l->n;
    }
    return (long)l->slot[index] - 1;
}

static void context_thread_load(struct emb_perfetto_model *m, const struct emb_trace_context *c,
                                const struct emb_catalog_event *sw, struct thread_loads *l,
                                uint64_t window)
{
    const struct emb_catalog_field *to = emb_perfetto_field(sw, "to");
    long running = -1;
    uint64_t since = 0;
    for (size_t i = 0; to != NULL && i < c->nrecs; i++) {
        const struct emb_trace_event *e = &c->recs[i];
        if (e->type != EMB_TREC_EVENT || e->ev != sw)
            continue;
        if (running >= 0)
            add_busy(l->acc + (size_t)running * l->nwin, l->nwin, window, since, e->ns);
        running = thread_row(l, emb_catalog_field_get_uint(to, e->payload), e);
        since = e->ns;
    }
    if (running >= 0)
        add_busy(l->acc + (size_t)running * l->nwin, l->nwin, window, since, m->end_ns);
}

void emb_perfetto_thread_load(struct emb_perfetto_model *m)
{
    const struct emb_catalog_event *sw = emb_catalog_find(emb_trace_catalog(m->t), "switch");
    const struct emb_catalog_field *to = sw ? emb_perfetto_field(sw, "to") : NULL;
    if (to == NULL)
        return;
    struct thread_loads l = {.slot = calloc(0xFFFFu, sizeof(uint16_t))};
    uint64_t window = load_window(m, &l.nwin);
    l.acc = calloc(LOAD_THREADS_MAX * l.nwin, sizeof *l.acc);
    if (l.slot == NULL || l.acc == NULL) {
        m->failed = true;
    } else {
        for (size_t i = 0; i < emb_trace_context_count(m->t); i++)
            context_thread_load(m, emb_trace_context(m->t, i), sw, &l, window);
    }
    for (size_t r = 0; r < l.n && !m->failed; r++) {
        char who[64], name[96];
        emb_trace_field_display(m->names, emb_trace_info(m->t)->clock_hz, to, l.named[r]->payload,
                                who, sizeof who);
        snprintf(name, sizeof name, "thread load (%s)", who);
        window_counter(m, name, l.acc + r * l.nwin, window, l.nwin);
    }
    free(l.slot);
    free(l.acc);
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
    uint64_t *held = calloc(nctx ? nctx : 1, sizeof *held);
    if (!held) {
        m->failed = true;
        return;
    }
    uint32_t cat = emb_perfetto_intern(m, "counter");
    for (size_t i = 0; i < npk; i++) {
        const struct emb_trace_packet *p = &pk[i];
        if (p->ctx >= nctx || p->ts_begin < h->start_ts)
            continue;
        uint64_t n = ++held[p->ctx];
        char name[64];
        snprintf(name, sizeof name, "ring fill (%s)", emb_trace_context(m->t, p->ctx)->name);
        uint32_t track = emb_perfetto_counter_track(m, name);
        uint64_t ns = emb_trace_ticks_to_ns(p->ts_begin - h->start_ts, h->clock_hz);
        struct emb_perfetto_item *it = emb_perfetto_item_add(m, EMB_PERFETTO_COUNTER, track, ns, 0);
        it->value = (int64_t)((n < h->ring_packets ? n : h->ring_packets) * 100 / h->ring_packets);
        it->name = m->tracks[track].name;
        it->cat = cat;
    }
    free(held);
}
