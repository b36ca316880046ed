/* Where the comparison is incomplete: the records each run dropped or lost inside the
 * compared range (a gap, and a difference), those after it (the window closing, by
 * design), and a window one run closed early. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "diff_internal.h"

static void add_gap(struct emb_diff_work *w, int side, const char *where, int32_t epoch,
                    uint64_t count, const char *what)
{
    struct emb_diff *d = w->d;
    struct emb_diff_gap *gaps = emb_diff_grow(w, d->gaps, &w->gap_cap, d->ngaps + 1, sizeof *gaps);
    if (!gaps)
        return;
    d->gaps = gaps;
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

/* One run's compared range and the end of its recording. */
struct loss_scope {
    int side;
    bool window;             /* a window capture */
    uint64_t T0, TE, end;    /* first and last compared marker; the last event recorded */
};

/* One loss record of a ring (key, context ci), which happened after `from`. */
static void place_loss(struct emb_diff_work *w, const struct loss_scope *sc, const char *key,
                       long ci, const struct emb_diff_loss *rec, uint64_t from, bool closed)
{
    struct emb_diff *d = w->d;
    int side = sc->side;
    const char *what = rec->type == EMB_TREC_LOST ? "packets lost" : "events dropped";
    if (from >= sc->TE) {
        if (rec->type == EMB_TREC_DISCARDED)
            d->dropped_after[side] += rec->count;
        if (closed && ci >= 0 && w->closed_ctx[side] < 0) {
            w->closed_ctx[side] = ci;
            w->closed_ns[side] = from;
            w->closed_count[side] = rec->count;
        }
        return;
    }
    if (rec->ns < sc->T0)
        return;
    uint64_t at = from > sc->T0 ? from : sc->T0;
    int32_t ep = epoch_at(d, side, at);
    add_gap(w, side, key, ep, rec->count, what);
    struct emb_diff_item *it = ci >= 0 ? emb_diff_add_item(w, EMB_DIFF_DROPS, ep, (uint32_t)ci) : NULL;
    if (it) {
        it->side = (uint8_t)side;
        it->count = rec->count;
        it->offset_ns = (int64_t)(at - d->epoch_ns[side][ep]);
    }
}

/* The loss records of ring r, whose first packet is f (NULL: none). */
static void ring_losses(struct emb_diff_work *w, const struct loss_scope *sc, size_t r,
                        const struct emb_trace_packet *f)
{
    struct emb_diff *d = w->d;
    const struct emb_trace *t = d->trace[sc->side];
    const struct emb_trace_context *c = emb_trace_context(t, r);
    char key[64];
    emb_diff_thread_key(d, sc->side, r, key, sizeof key);
    long ci = emb_diff_ctx_find(d, key, EMB_DIFF_CTX_THREAD);
    uint32_t ring_packets = emb_trace_info(t)->ring_packets;
    bool filled = ring_packets == 0 || c->packets >= ring_packets;
    uint64_t events = w->ring_events[sc->side][r];
    for (size_t k = 0; k < w->nloss[sc->side]; k++) {
        const struct emb_diff_loss *rec = &w->loss[sc->side][k];
        if (rec->ring != r)
            continue;
        if (rec->type == EMB_TREC_DISCARDED && f && f->seq > 0 && rec->offset == f->offset)
            continue; /* the overwritten packets' events: the gap below */
        uint64_t from = rec->prev_ns;
        /* no event of the ring after it */
        bool closed = sc->window && rec->type == EMB_TREC_DISCARDED && rec->events_before == events;
        if (closed && sc->end > from)
            from = sc->end;
        /* Every ring counts the events fired after the close; the one that closed the
         * window is the one that filled (when the file says how many packets a ring has). */
        place_loss(w, sc, key, ci, rec, from, closed && filled);
    }
    if (!f || f->seq == 0)
        return;
    const struct emb_trace_info *h = emb_trace_info(t);
    uint64_t ns = emb_trace_ticks_to_ns(f->ts_begin - h->start_ts, h->clock_hz);
    if (ns <= sc->T0)
        return;
    /* Files from before the readers raised events_discarded say only how many packets
     * went. */
    if (f->discarded > 0)
        add_gap(w, sc->side, key, epoch_at(d, sc->side, ns), f->discarded,
                "events overwritten with the oldest packets");
    else
        add_gap(w, sc->side, key, epoch_at(d, sc->side, ns), f->seq, "oldest packets overwritten");
}

/* Losses: inside the compared range they make the comparison incomplete (and are a
 * difference); after it they are the window closing, by design. A loss happened after the
 * ring's last event before it; when the ring stored nothing after it in a window capture,
 * the ring filled and closed the window, and nothing was recorded after that: the loss
 * is placed at the end of the recording, after the last frame marker recorded before it,
 * never at the ring's last event, which may lie epochs earlier. */
void emb_diff_find_losses(struct emb_diff_work *w, int side)
{
    struct emb_diff *d = w->d;
    const struct emb_trace *t = d->trace[side];
    struct loss_scope sc = {
        .side = side,
        .window = emb_capture_window(d->cap[side])->armed_frame != EMB_CAP_NO_FRAME,
        .T0 = d->epoch_ns[side][0],
        .TE = d->epoch_ns[side][d->epochs],
        .end = w->last_event_ns[side],
    };
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
    for (size_t r = 0; r < nctx; r++)
        ring_losses(w, &sc, r, first ? first[r] : NULL);
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
void emb_diff_window_closed_early(struct emb_diff_work *w)
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
        struct emb_diff_item *it = emb_diff_add_item(w, EMB_DIFF_DROPS, ep, (uint32_t)ci);
        if (it) {
            it->side = (uint8_t)s;
            it->count = w->closed_count[s];
            it->closed = true;
            it->offset_ns = (int64_t)(w->closed_ns[s] - d->epoch_ns[s][ep]);
        }
    }
}
