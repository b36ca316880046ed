/* The records of every context merged by time (trace_decode.h): a k-way merge of the
 * contexts, each already in time order, instead of a sort of every record. A context
 * whose records go back in time (a damaged packet's) is put in order by itself first, so
 * the order is always the one a stable sort by timestamp, then context, would give. */
#include <stdlib.h>

#include "trace_decoder.h"

/* One context's records, in time order: its array, or the pointers that order it. */
struct merge_run {
    const struct emb_trace_event *head;
    const struct emb_trace_event *rec, *rec_end;
    const struct emb_trace_event *const *ptr, *const *ptr_end;
};

struct emb_trace_cursor {
    struct merge_run *heap; /* runs with a head, the earliest at [0] */
    size_t n;
};

static void run_advance(struct merge_run *r)
{
    if (r->ptr != NULL)
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
        if (l < c->n && run_before(&c->heap[l], &c->heap[m]))
            m = l;
        if (l + 1 < c->n && run_before(&c->heap[l + 1], &c->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        struct merge_run tmp = c->heap[i];
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

struct emb_trace_cursor *emb_trace_cursor_open(const struct emb_trace *t)
{
    struct emb_trace_cursor *c = calloc(1, sizeof *c);
    if (c == NULL || (t->nctx && !(c->heap = calloc(t->nctx, sizeof *c->heap)))) {
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < t->nctx; i++) {
        const struct ctx_state *s = &t->ctx[i];
        struct merge_run *r = &c->heap[c->n];
        if (s->sorted != NULL) {
            r->ptr = (const struct emb_trace_event *const *)s->sorted;
            r->ptr_end = r->ptr + s->nrecs;
        } else {
            r->rec = s->recs;
            r->rec_end = s->recs + s->nrecs;
        }
        run_advance(r);
        c->n += r->head != NULL;
    }
    for (size_t i = c->n / 2; i-- > 0;)
        sift_down(c, i);
    return c;
}

const struct emb_trace_event *emb_trace_cursor_next(struct emb_trace_cursor *c)
{
    if (c->n == 0)
        return NULL;
    const struct emb_trace_event *e = c->heap[0].head;
    run_advance(&c->heap[0]);
    if (c->heap[0].head == NULL)
        c->heap[0] = c->heap[--c->n];
    sift_down(c, 0);
    return e;
}

void emb_trace_cursor_close(struct emb_trace_cursor *c)
{
    if (c != NULL)
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
