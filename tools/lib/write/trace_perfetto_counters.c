/* Counters the Perfetto model derives from a whole context rather than from one event: the
 * CPU load of a context (its switch and idle events) and the fill of its ring (its
 * packets). docs/perfetto.md, "Counters". */
#include "trace_perfetto_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOAD_WINDOW_NS 1000000u /* 1 ms windows ... */
#define LOAD_MAX_WINDOWS 1000u  /* ... widened tenfold until the trace has at most this many */

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
    const struct emb_catalog_field *to = emb_pf_field(sw, "to");
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

/* One context's load: percent of each window it was busy, as a counter. */
static void context_load(struct emb_pf_model *m, const struct emb_trace_context *c,
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
    uint32_t track = emb_pf_counter_track(m, name);
    uint32_t cat = emb_pf_intern(m, "counter");
    for (size_t w = 0; w < nwin; w++) {
        uint64_t start = (uint64_t)w * window;
        uint64_t len = m->end_ns - start < window ? m->end_ns - start : window;
        struct emb_pf_item *it = emb_pf_item_add(m, EMB_PF_COUNTER, track, start, 0);
        it->value = len ? (int64_t)((acc[w] * 100 + len / 2) / len) : 0;
        it->name = m->tracks[track].name;
        it->cat = cat;
    }
}

void emb_pf_cpu_load(struct emb_pf_model *m)
{
    const struct emb_catalog *cat = emb_trace_catalog(m->t);
    const struct emb_catalog_event *const ev[3] = {
        emb_catalog_find(cat, "idle_enter"), emb_catalog_find(cat, "idle_exit"),
        emb_catalog_find(cat, "switch")};
    uint64_t window = LOAD_WINDOW_NS;
    while (m->end_ns / window >= LOAD_MAX_WINDOWS)
        window *= 10;
    size_t nwin = (size_t)(m->end_ns / window) + 1;
    uint64_t *acc = calloc(nwin, sizeof *acc);
    if (!acc) {
        m->failed = true;
        return;
    }
    for (size_t i = 0; i < emb_trace_context_count(m->t); i++)
        context_load(m, emb_trace_context(m->t, i), ev, window, acc, nwin);
    free(acc);
}

/* The packets a context's ring has taken since the trace began, in percent of the ring
 * (the header's ring block), at the start of each packet: 100 is where a snapshot ring
 * begins to overwrite and a window capture closes. */
void emb_pf_ring_fill(struct emb_pf_model *m)
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
    uint32_t cat = emb_pf_intern(m, "counter");
    for (size_t i = 0; i < npk; i++) {
        const struct emb_trace_packet *p = &pk[i];
        if (p->ctx >= nctx || p->ts_begin < h->start_ts)
            continue;
        uint64_t n = ++held[p->ctx];
        char name[64];
        snprintf(name, sizeof name, "ring fill (%s)", emb_trace_context(m->t, p->ctx)->name);
        uint32_t track = emb_pf_counter_track(m, name);
        uint64_t ns = emb_trace_ticks_to_ns(p->ts_begin - h->start_ts, h->clock_hz);
        struct emb_pf_item *it = emb_pf_item_add(m, EMB_PF_COUNTER, track, ns, 0);
        it->value = (int64_t)((n < h->ring_packets ? n : h->ring_packets) * 100 / h->ring_packets);
        it->name = m->tracks[track].name;
        it->cat = cat;
    }
    free(held);
}
