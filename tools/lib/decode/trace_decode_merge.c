/* The records of every context merged by time (trace_decode.h): a k-way merge of the
 * contexts, each already in time order, instead of a sort of every record. A context
 * whose records go back in time (a damaged packet's) is put in order by itself first, so
 * the order is always the one a stable sort by timestamp, then context, would give. */
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "buffer.h"

#include "trace_decoder.h"

/* One context's records, in time order: its array, the pointers that order it, or (a
 * streaming decode) its packets, read again one event at a time. */
struct merge_run {
    const struct emb_trace_event *head;
    const struct emb_trace_event *rec, *rec_end;
    const struct emb_trace_event *const *ptr, *const *ptr_end;
    /* Reading packets. */
    const struct emb_trace *t;
    uint32_t ctx;
    size_t next_pkt;                /* where to look for the context's next packet */
    const struct emb_trace_packet *pk;
    enum { AT_LOST, AT_EVENTS, AT_DISCARDED, AT_DONE } phase;
    uint32_t pos;
    uint64_t prev;
    uint64_t pk_at;  /* the packet's offset in the data decoded */
    bool pk_linear;  /* its bytes are contiguous in the source: offsets are pk->offset + pos */
    /* The input offset where the run's latest stretch of its own packets (no other
     * context's between them) begins, and how many packets it holds so far: the stretch
     * is let go as the run leaves it, since contexts written in blocks lie far apart. */
    uint64_t own_from;
    size_t own_packets;
    size_t pk_last; /* the index of the packet taken last */
    bool final_pending;
    struct emb_trace_event now;
    /* A streaming context that goes back in time: its records read, then ordered. */
    struct emb_trace_event *owned;
    const struct emb_trace_event **owned_order;
};

struct emb_trace_cursor {
    struct merge_run *runs;
    struct merge_run **heap; /* runs with a head, the earliest at [0] */
    size_t n, nruns;
    struct emb_trace_event out; /* the record returned, when its run reads packets */
    unsigned since_release;
};

static const struct emb_trace_event *emit_marker(struct merge_run *r, uint8_t type,
                                                 uint64_t ts, uint64_t offset, uint32_t n)
{
    struct emb_trace_event *e = &r->now;
    memset(e, 0, sizeof *e);
    e->type = type;
    e->ts = ts;
    e->offset = offset;
    e->count = n;
    e->ctx = r->ctx;
    e->context_id = r->t->ctx[r->ctx].pub.id;
    emb_trace_set_times(r->t, e);
    return e;
}

/* The packet's next event, as the walk decoded it; NULL where the walk stopped. */
static const struct emb_trace_event *packet_event(struct merge_run *r)
{
    const struct emb_trace_packet *pk = r->pk;
    struct emb_trace_event *e = &r->now;
    if (r->pos >= pk->content_size)
        return NULL;
    memset(e, 0, sizeof *e);
    enum emb_trace_step step =
        emb_trace_step_event(r->t, pk->data, r->pos, pk->content_size, r->prev, e);
    if (step != EMB_STEP_EVENT && step != EMB_STEP_UNKNOWN) {
        r->pos = pk->content_size;
        return NULL;
    }
    e->ctx = r->ctx;
    e->context_id = r->t->ctx[r->ctx].pub.id;
    e->offset = r->pk_linear ? pk->offset + r->pos
                             : emb_trace_source_offset(r->t, r->pk_at + r->pos);
    emb_trace_set_times(r->t, e);
    r->prev = e->ts;
    r->pos = step == EMB_STEP_UNKNOWN ? pk->content_size : r->pos + e->ev->size;
    return e;
}

/* Where the packet just taken lies in the data decoded, and whether its events' source
 * offsets follow from its own (in a sealed file, unless it crosses a CRC). */
static void packet_place(struct merge_run *r)
{
    const struct emb_trace_unsealed *u = &r->t->seal;
    r->pk_at = emb_trace_unsealed_offset(u, r->pk->offset - r->t->base);
    r->pk_linear = !u->sealed || r->pk_at < u->header_size ||
                   (r->pk_at - u->header_size) % u->packet_size == 0u;
}

/* Before the run takes the packet at r->next_pkt: the stretch of its own packets it has
 * read is let go when this one does not follow it, or every 256 packets. */
static void release_own(struct merge_run *r, const struct emb_trace_packet *pkts, size_t npk)
{
    uint64_t at = pkts[r->next_pkt].offset - r->t->base;
    bool follows = r->pk_last + 1u == r->next_pkt && r->own_packets != 0u;
    if (follows && ++r->own_packets % 256u != 0u)
        return;
    if (r->own_packets != 0u) { /* up to the packet after its last: another context's */
        uint64_t end = r->pk_last + 1u < npk ? pkts[r->pk_last + 1u].offset - r->t->base : at;
        emb_trace_release_range(r->t, r->own_from, end);
    }
    r->own_from = at;
    r->own_packets = 1u;
}

/* The context's next record from its packets: the order the walk pushed them in. */
static const struct emb_trace_event *packet_run_next(struct merge_run *r)
{
    size_t npk;
    const struct emb_trace_packet *pkts = emb_trace_packets(r->t, &npk);
    for (;;) {
        if (r->pk == NULL) {
            while (r->next_pkt < npk && pkts[r->next_pkt].ctx != r->ctx)
                r->next_pkt++;
            if (r->next_pkt == npk) {
                const struct ctx_state *c = &r->t->ctx[r->ctx];
                if (!r->final_pending)
                    return NULL;
                r->final_pending = false;
                return emit_marker(r, EMB_TREC_DISCARDED, c->final_ts,
                                   emb_trace_source_offset(r->t, EMB_TSF_FIXED_SIZE),
                                   c->final_discarded);
            }
            release_own(r, pkts, npk);
            r->pk_last = r->next_pkt;
            r->pk = &pkts[r->next_pkt++];
            r->phase = AT_LOST;
            packet_place(r);
        }
        const struct emb_trace_packet *pk = r->pk;
        const struct emb_trace_event *e;
        switch (r->phase) {
        case AT_LOST:
            r->phase = AT_EVENTS;
            r->pos = EMB_PKT_HEADER_SIZE;
            r->prev = pk->ts_begin;
            if (pk->lost_before)
                return emit_marker(r, EMB_TREC_LOST, pk->ts_begin, pk->offset, pk->lost_before);
            break;
        case AT_EVENTS:
            if ((e = packet_event(r)) != NULL)
                return e;
            r->phase = AT_DISCARDED;
            break;
        case AT_DISCARDED:
            r->phase = AT_DONE;
            if (pk->discarded_after)
                return emit_marker(r, EMB_TREC_DISCARDED, pk->ts_end, pk->offset,
                                   pk->discarded_after);
            break;
        case AT_DONE: r->pk = NULL; break;
        }
    }
}

static void run_advance(struct merge_run *r)
{
    if (r->t != NULL)
        r->head = packet_run_next(r);
    else if (r->ptr != NULL)
        r->head = r->ptr < r->ptr_end ? *r->ptr++ : NULL;
    else
        r->head = r->rec < r->rec_end ? r->rec++ : NULL;
}

static bool run_before(const struct merge_run *a, const struct merge_run *b)
{
    if (a->head->ts != b->head->ts)
        return a->head->ts < b->head->ts;
    return a->head->ctx < b->head->ctx;
}

static void sift_down(struct emb_trace_cursor *c, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < c->n && run_before(c->heap[l], c->heap[m]))
            m = l;
        if (l + 1 < c->n && run_before(c->heap[l + 1], c->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        struct merge_run *tmp = c->heap[i];
        c->heap[i] = c->heap[m];
        c->heap[m] = tmp;
        i = m;
    }
}

static int cmp_ts_then_ring(const void *a, const void *b)
{
    const struct emb_trace_event *x = *(const struct emb_trace_event *const *)a;
    const struct emb_trace_event *y = *(const struct emb_trace_event *const *)b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x < y ? -1 : x > y; /* one array: ring order */
}

bool emb_trace_order_context(struct emb_trace *t, struct ctx_state *c)
{
    bool ordered = true;
    for (size_t k = 1; k < c->nrecs && ordered; k++)
        ordered = c->recs[k - 1].ts <= c->recs[k].ts;
    if (ordered)
        return true;
    c->sorted = malloc(c->nrecs * sizeof *c->sorted);
    if (c->sorted == NULL) {
        t->oom = true;
        return false;
    }
    for (size_t k = 0; k < c->nrecs; k++)
        c->sorted[k] = &c->recs[k];
    qsort(c->sorted, c->nrecs, sizeof *c->sorted, cmp_ts_then_ring);
    return true;
}

/* A streaming context that goes back in time (a damaged packet): its records read into
 * an array and ordered, as a decode that keeps them orders them. False when out of memory. */
static bool run_materialise(struct merge_run *r)
{
    size_t n = 0, cap = 0;
    const struct emb_trace_event *e;
    while ((e = packet_run_next(r)) != NULL) {
        struct emb_trace_event *more = emb_array_grow(r->owned, &cap, n + 1, sizeof *more);
        if (more == NULL)
            return false;
        r->owned = more;
        r->owned[n++] = *e;
    }
    if (n != 0 && !(r->owned_order = malloc(n * sizeof *r->owned_order)))
        return false;
    for (size_t k = 0; k < n; k++)
        r->owned_order[k] = &r->owned[k];
    if (n > 1)
        qsort(r->owned_order, n, sizeof *r->owned_order, cmp_ts_then_ring);
    r->t = NULL;
    r->ptr = (const struct emb_trace_event *const *)r->owned_order;
    r->ptr_end = r->ptr + n;
    return true;
}

static bool run_init(struct merge_run *r, const struct emb_trace *t, size_t i)
{
    const struct ctx_state *s = &t->ctx[i];
    if (t->stream) {
        r->t = t;
        r->ctx = (uint32_t)i;
        r->final_pending = s->final_discarded != 0;
        if (s->back_in_time && !run_materialise(r))
            return false;
    } else if (s->sorted != NULL) {
        r->ptr = (const struct emb_trace_event *const *)s->sorted;
        r->ptr_end = r->ptr + s->nrecs;
    } else if (s->recs != NULL) { /* a context with no records holds no array */
        r->rec = s->recs;
        r->rec_end = s->recs + s->nrecs;
    }
    run_advance(r);
    return true;
}

struct emb_trace_cursor *emb_trace_cursor_open(const struct emb_trace *t)
{
    struct emb_trace_cursor *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->runs = calloc(t->nctx + 1, sizeof *c->runs);
    c->heap = calloc(t->nctx + 1, sizeof *c->heap);
    c->nruns = t->nctx;
    for (size_t i = 0; c->runs && c->heap && i < t->nctx; i++) {
        if (!run_init(&c->runs[i], t, i)) {
            emb_trace_cursor_close(c);
            return NULL;
        }
        if (c->runs[i].head != NULL)
            c->heap[c->n++] = &c->runs[i];
    }
    if (c->runs == NULL || c->heap == NULL) {
        emb_trace_cursor_close(c);
        return NULL;
    }
    for (size_t i = c->n / 2; i-- > 0;)
        sift_down(c, i);
    return c;
}

/* The mapped file's pages before every run's packet are let go now and then. */
static void release_behind(struct emb_trace_cursor *c)
{
    uint64_t low = UINT64_MAX;
    const struct emb_trace *t = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct merge_run *r = c->heap[i];
        if (r->t == NULL)
            continue;
        t = r->t;
        if (r->pk != NULL && r->pk->offset - t->base < low)
            low = r->pk->offset - t->base;
    }
    if (t != NULL && low != UINT64_MAX)
        emb_trace_release_before(t, low);
}

const struct emb_trace_event *emb_trace_cursor_next(struct emb_trace_cursor *c)
{
    if (c->n == 0)
        return NULL;
    struct merge_run *r = c->heap[0];
    const struct emb_trace_event *e = r->head;
    if (r->t != NULL) { /* the run's record is overwritten by its next */
        c->out = *e;
        e = &c->out;
        if (++c->since_release == 1u << 16) {
            c->since_release = 0;
            release_behind(c);
        }
    }
    run_advance(r);
    if (r->head == NULL)
        c->heap[0] = c->heap[--c->n];
    sift_down(c, 0);
    return e;
}

void emb_trace_cursor_close(struct emb_trace_cursor *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; c->runs && i < c->nruns; i++) {
        free(c->runs[i].owned);
        free(c->runs[i].owned_order);
    }
    free(c->runs);
    free(c->heap);
    free(c);
}

bool emb_trace_merge(struct emb_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nctx; i++)
        n += t->ctx[i].nrecs;
    if (n == 0)
        return true;
    struct emb_trace_cursor *c = emb_trace_cursor_open(t);
    t->merged = malloc(n * sizeof *t->merged);
    if (c == NULL || t->merged == NULL) {
        emb_trace_cursor_close(c);
        free(t->merged);
        t->merged = NULL;
        return false;
    }
    const struct emb_trace_event *e;
    while ((e = emb_trace_cursor_next(c)) != NULL)
        t->merged[t->nmerged++] = e;
    emb_trace_cursor_close(c);
    return true;
}
