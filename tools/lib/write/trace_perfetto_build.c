/* The Perfetto model of a trace: which catalogue events become slices, counters, flows and
 * instants (docs/perfetto.md, "Events"). */
#include "trace_perfetto_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#define MAX_OPEN 64     /* open slices per context; deeper begins are shown as instants */
#define MAX_PENDING 256 /* requests waiting for the event that serves them (flows) */

/* A begin/end pair of catalogue events that becomes a slice. */
struct pair {
    const char *begin, *end;
    const char *key;    /* field that must match between begin and end, or NULL */
    const char *label;  /* slice name: label, then " <key value>" when there is a key */
    const char *label_field; /* or: label, then " <this field>" of the begin (wait reason) */
};

static const struct pair pairs[] = {
    {"irq_enter", "irq_exit", "irq", "irq", NULL},
    {"wait_begin", "wait_end", "thread", "wait", "reason"},
    {"work_start", "work_end", "item", "work", NULL},
    {"frame_start", "frame_end", "frame", "frame", NULL},
    {"sched_lock", "sched_unlock", NULL, "sched_lock", NULL},
    {"idle_enter", "idle_exit", NULL, "idle", NULL},
    {"state_enter", "state_exit", "state", "power state", NULL},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* Level counters: the value of `field` of `event` is a level, shown as a counter track
 * named "<label> <object> <field>". */
struct counter {
    const char *event, *object, *field, *label;
};

static const struct counter counters[] = {
    {"msgq_send", "queue", "used", "msgq"},
    {"msgq_receive", "queue", "used", "msgq"},
};
#define NCOUNTERS (sizeof counters / sizeof counters[0])

/* A request and the event that serves it, joined by a flow when `key` matches: the oldest
 * request still waiting is served first (work queues and message queues are FIFO). */
struct request {
    const char *request, *served, *key;
    const char *ok; /* a field of the request that is negative when it failed, or NULL */
};

static const struct request requests[] = {
    {"work_submit", "work_start", "item", "result"},
    {"msgq_send", "msgq_receive", "queue", NULL},
};
#define NREQUESTS (sizeof requests / sizeof requests[0])

struct open_slice {
    unsigned pair;
    uint64_t key;
    uint32_t name;
    uint32_t flow_in;
    uint64_t ts, order;
    const struct emb_trace_event *begin;
};

struct ctx_state {
    struct open_slice open[MAX_OPEN];
    unsigned nopen;
    uint32_t track, sched_track; /* sched_track: UINT32_MAX until the first switch */
    struct open_slice running;   /* the sched track's open slice, when name != 0 */
    uint64_t discarded, lost;    /* running totals */
};

struct pending {
    unsigned request;
    uint64_t key;
    size_t item; /* the request's item */
    bool used;
};

struct builder {
    struct emb_perfetto_model *m;
    struct ctx_state *ctx;
    const struct emb_catalog_event *begin_ev[NPAIRS], *end_ev[NPAIRS];
    const struct emb_catalog_event *counter_ev[NCOUNTERS];
    const struct emb_catalog_event *request_ev[NREQUESTS], *served_ev[NREQUESTS];
    const struct emb_catalog_event *switch_ev;
    struct pending pending[MAX_PENDING]; /* a ring: the oldest is overwritten when full */
    size_t npending;
};

static uint32_t category(struct emb_perfetto_model *m, const struct emb_trace_event *e)
{
    return emb_perfetto_intern(m, e->ev && e->ev->cls ? e->ev->cls->name : "emb");
}

static struct emb_perfetto_item *instant(struct builder *b, const struct emb_trace_event *e,
                                   const char *name, uint64_t order)
{
    struct emb_perfetto_item *it = emb_perfetto_item_add(b->m, EMB_PERFETTO_INSTANT, b->ctx[e->ctx].track, e->ns,
                                             order);
    it->ev = e;
    it->name = emb_perfetto_intern(b->m, name);
    it->cat = category(b->m, e);
    return it;
}

static void counter(struct builder *b, const char *track, uint64_t ns, uint64_t order,
                    int64_t value)
{
    uint32_t tr = emb_perfetto_counter_track(b->m, track);
    struct emb_perfetto_item *it = emb_perfetto_item_add(b->m, EMB_PERFETTO_COUNTER, tr, ns, order);
    it->value = value;
    it->name = b->m->tracks[tr].name;
    it->cat = emb_perfetto_intern(b->m, "counter");
}

static void slice(struct builder *b, uint32_t track, const struct open_slice *s, uint64_t end_ns,
                  const struct emb_trace_event *end)
{
    struct emb_perfetto_item *it = emb_perfetto_item_add(b->m, EMB_PERFETTO_SLICE, track, s->ts, s->order);
    it->dur = end_ns - s->ts;
    it->ev = s->begin;
    it->end = end;
    it->name = s->name;
    it->cat = track == b->ctx[s->begin->ctx].sched_track ? emb_perfetto_intern(b->m, "sched")
                                                         : category(b->m, s->begin);
    it->flow_in = s->flow_in;
}

/* A field's value as the text writer shows it. */
static const char *display(struct builder *b, const struct emb_catalog_field *f,
                           const uint8_t *payload, char *buf, size_t len)
{
    return emb_trace_field_display(b->m->names, emb_trace_info(b->m->t)->clock_hz, f, payload,
                                   buf, len);
}

/* The flow into an event that serves a request: the oldest request waiting with its key. */
static uint32_t served(struct builder *b, const struct emb_trace_event *e)
{
    for (unsigned r = 0; r < NREQUESTS; r++) {
        if (e->ev != b->served_ev[r])
            continue;
        const struct emb_catalog_field *kf = emb_perfetto_field(e->ev, requests[r].key);
        uint64_t key = emb_catalog_field_get_uint(kf, e->payload);
        size_t n = b->npending < MAX_PENDING ? b->npending : MAX_PENDING;
        for (size_t k = b->npending - n; k < b->npending; k++) {
            struct pending *p = &b->pending[k % MAX_PENDING];
            if (p->used || p->request != r || p->key != key)
                continue;
            p->used = true;
            b->m->items[p->item].flow_out = ++b->m->flows;
            return b->m->flows;
        }
    }
    return 0;
}

/* A request: remembered until the event that serves it. */
static void request(struct builder *b, const struct emb_trace_event *e, size_t item)
{
    for (unsigned r = 0; r < NREQUESTS; r++) {
        if (e->ev != b->request_ev[r])
            continue;
        const struct emb_catalog_field *ok = emb_perfetto_field(e->ev, requests[r].ok);
        if (ok && emb_catalog_field_get_int(ok, e->payload) < 0)
            continue; /* refused: nothing will serve it */
        const struct emb_catalog_field *kf = emb_perfetto_field(e->ev, requests[r].key);
        b->pending[b->npending++ % MAX_PENDING] = (struct pending){
            .request = r, .key = emb_catalog_field_get_uint(kf, e->payload), .item = item};
    }
}

static void pair_begin(struct builder *b, struct ctx_state *c, const struct emb_trace_event *e,
                       unsigned p, uint64_t order)
{
    const struct pair *pr = &pairs[p];
    const struct emb_catalog_field *kf = emb_perfetto_field(e->ev, pr->key);
    const struct emb_catalog_field *lf = emb_perfetto_field(e->ev, pr->label_field);
    char name[96], buf[64];
    if (lf || kf)
        snprintf(name, sizeof name, "%s %s", pr->label,
                 display(b, lf ? lf : kf, e->payload, buf, sizeof buf));
    else
        snprintf(name, sizeof name, "%s", pr->label);
    uint32_t flow_in = served(b, e);
    if (c->nopen == MAX_OPEN) {
        instant(b, e, e->ev->name, order)->flow_in = flow_in;
        return;
    }
    c->open[c->nopen++] = (struct open_slice){
        .pair = p, .key = kf ? emb_catalog_field_get_uint(kf, e->payload) : 0,
        .name = emb_perfetto_intern(b->m, name), .flow_in = flow_in, .ts = e->ns, .order = order,
        .begin = e};
}

/* End of a pair: closes the innermost matching slice. Slices opened inside it and still
 * open are closed and reopened at the end, so every slice nests and the file loads. */
static void pair_end(struct builder *b, struct ctx_state *c, const struct emb_trace_event *e,
                     unsigned p, uint64_t order)
{
    const struct emb_catalog_field *kf = emb_perfetto_field(e->ev, pairs[p].key);
    uint64_t key = kf ? emb_catalog_field_get_uint(kf, e->payload) : 0;
    unsigned k = c->nopen;
    while (k > 0 && !(c->open[k - 1].pair == p && c->open[k - 1].key == key))
        k--;
    if (k == 0)
        return; /* an end whose begin is not in the trace: dropped */
    k--;
    for (unsigned i = c->nopen; i-- > k + 1;)
        slice(b, c->track, &c->open[i], e->ns, NULL);
    slice(b, c->track, &c->open[k], e->ns, e);
    memmove(&c->open[k], &c->open[k + 1], (c->nopen - k - 1) * sizeof c->open[0]);
    c->nopen--;
    for (unsigned i = k; i < c->nopen; i++) { /* reopened, in their order, after the end */
        c->open[i].ts = e->ns;
        c->open[i].order = order + 1 + (i - k);
        c->open[i].flow_in = 0;
    }
}

/* A switch: the context stops running one thread and runs another, named as the text
 * writer names it ("audio(2)", "none"). */
static void sched_switch(struct builder *b, struct ctx_state *c, const struct emb_trace_event *e,
                         uint64_t order)
{
    if (c->sched_track == UINT32_MAX) {
        const struct emb_trace_context *ctx = emb_trace_context(b->m->t, e->ctx);
        char name[64];
        snprintf(name, sizeof name, "%s running", ctx->name);
        c->sched_track = emb_perfetto_track_add(b->m, EMB_PERFETTO_TRACK_SCHED, e->context_id, e->ctx, name);
    }
    if (c->running.name)
        slice(b, c->sched_track, &c->running, e->ns, NULL);
    const struct emb_catalog_field *to = emb_perfetto_field(e->ev, "to");
    char buf[64];
    c->running = (struct open_slice){
        .name = emb_perfetto_intern(b->m, to ? display(b, to, e->payload, buf, sizeof buf) : "?"),
        .ts = e->ns, .order = order, .begin = e};
}

static void level_counter(struct builder *b, const struct emb_trace_event *e, unsigned k,
                          uint64_t order)
{
    const struct emb_catalog_field *of = emb_perfetto_field(e->ev, counters[k].object);
    const struct emb_catalog_field *vf = emb_perfetto_field(e->ev, counters[k].field);
    if (!of || !vf)
        return;
    char name[128], buf[64];
    snprintf(name, sizeof name, "%s %s %s", counters[k].label,
             display(b, of, e->payload, buf, sizeof buf), counters[k].field);
    counter(b, name, e->ns, order, (int64_t)emb_catalog_field_get_uint(vf, e->payload));
}

/* A loss marker: an instant, and the running total of its counter. */
static void loss(struct builder *b, struct ctx_state *c, const struct emb_trace_event *e,
                 uint64_t order)
{
    bool discarded = e->type == EMB_TREC_DISCARDED;
    uint64_t *total = discarded ? &c->discarded : &c->lost;
    const char *what = discarded ? "events discarded" : "packets lost";
    char name[96];
    snprintf(name, sizeof name, "%s (%s)", what, emb_trace_context(b->m->t, e->ctx)->name);
    *total += e->count;
    counter(b, name, e->ns, order + 1, (int64_t)*total);
    instant(b, e, what, order);
}

static void record(struct builder *b, const struct emb_trace_event *e, uint64_t order)
{
    struct ctx_state *c = &b->ctx[e->ctx];
    if (e->type == EMB_TREC_DISCARDED || e->type == EMB_TREC_LOST) {
        loss(b, c, e, order);
        return;
    }
    if (e->type == EMB_TREC_UNKNOWN) {
        char name[32];
        snprintf(name, sizeof name, "unknown 0x%04x", e->id);
        instant(b, e, name, order);
        return;
    }
    for (unsigned p = 0; p < NPAIRS; p++) {
        if (e->ev == b->begin_ev[p]) {
            pair_begin(b, c, e, p, order);
            return;
        }
        if (e->ev == b->end_ev[p]) {
            pair_end(b, c, e, p, order);
            return;
        }
    }
    if (e->ev == b->switch_ev) {
        sched_switch(b, c, e, order);
        return;
    }
    for (unsigned k = 0; k < NCOUNTERS; k++)
        if (e->ev == b->counter_ev[k])
            level_counter(b, e, k, order + 1);
    uint32_t flow_in = served(b, e);
    instant(b, e, e->ev->name, order)->flow_in = flow_in;
    if (!b->m->failed)
        request(b, e, b->m->nitems - 1);
}

static void find_events(struct builder *b, const struct emb_catalog *cat)
{
    for (unsigned p = 0; p < NPAIRS; p++) {
        b->begin_ev[p] = emb_catalog_find(cat, pairs[p].begin);
        b->end_ev[p] = emb_catalog_find(cat, pairs[p].end);
        if (!b->begin_ev[p] || !b->end_ev[p])
            b->begin_ev[p] = b->end_ev[p] = NULL; /* a catalogue without the pair */
    }
    for (unsigned k = 0; k < NCOUNTERS; k++)
        b->counter_ev[k] = emb_catalog_find(cat, counters[k].event);
    for (unsigned r = 0; r < NREQUESTS; r++) {
        b->request_ev[r] = emb_catalog_find(cat, requests[r].request);
        b->served_ev[r] = emb_catalog_find(cat, requests[r].served);
        if (!b->request_ev[r] || !b->served_ev[r])
            b->request_ev[r] = b->served_ev[r] = NULL;
    }
    b->switch_ev = emb_catalog_find(cat, "switch");
}

/* Whatever is still open ends with the trace, so every slice has an end. */
static void close_all(struct builder *b)
{
    for (size_t i = 0; i < emb_trace_context_count(b->m->t); i++) {
        struct ctx_state *c = &b->ctx[i];
        while (c->nopen)
            slice(b, c->track, &c->open[--c->nopen], b->m->end_ns, NULL);
        if (c->running.name)
            slice(b, c->sched_track, &c->running, b->m->end_ns, NULL);
    }
}

static uint32_t context_track(struct emb_perfetto_model *m, uint16_t id)
{
    for (size_t i = 0; i < m->ntracks; i++)
        if (m->tracks[i].kind == EMB_PERFETTO_TRACK_CONTEXT && m->tracks[i].tid == id)
            return (uint32_t)i;
    char name[32];
    snprintf(name, sizeof name, "ctx %u", id);
    return emb_perfetto_track_add(m, EMB_PERFETTO_TRACK_CONTEXT, id, (uint32_t)m->ntracks, name);
}

/* Log lines on the context that logged them, at their time on the trace's clock; a line
 * from before the trace's start has no place on it and is left out. */
static void log_lines(struct emb_perfetto_model *m, const struct emb_perfetto_logs *logs,
                      uint64_t order)
{
    const struct emb_trace_info *h = emb_trace_info(m->t);
    uint64_t hz = logs->clock_hz ? logs->clock_hz : h->clock_hz;
    uint64_t start = emb_trace_ticks_to_ns(h->start_ts, h->clock_hz);
    uint32_t cat = emb_perfetto_intern(m, "log");
    for (size_t i = 0; i < logs->n; i++) {
        const struct emb_perfetto_log_line *l = &logs->lines[i];
        uint64_t ns = emb_trace_ticks_to_ns(l->ts, hz);
        if (ns < start)
            continue;
        struct emb_perfetto_item *it = emb_perfetto_item_add(m, EMB_PERFETTO_LOG, context_track(m, l->context),
                                                 ns - start, order + i);
        it->log = l;
        it->name = emb_perfetto_intern(m, l->text);
        it->cat = cat;
    }
}

static int by_time(const void *pa, const void *pb)
{
    const struct emb_perfetto_item *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static void tracks(struct builder *b)
{
    struct emb_perfetto_model *m = b->m;
    const struct emb_trace_info *h = emb_trace_info(m->t);
    char name[64];
    snprintf(name, sizeof name, "emb %s", h->port[0] ? h->port : "trace");
    m->process = emb_perfetto_intern(m, name);
    for (size_t i = 0; i < emb_trace_context_count(m->t); i++) {
        const struct emb_trace_context *c = emb_trace_context(m->t, i);
        b->ctx[i].track = emb_perfetto_track_add(m, EMB_PERFETTO_TRACK_CONTEXT, c->id, (uint32_t)i, c->name);
        b->ctx[i].sched_track = UINT32_MAX;
    }
}

int emb_perfetto_model_build(struct emb_perfetto_model *m, const struct emb_trace *t,
                       const struct emb_perfetto_logs *logs)
{
    memset(m, 0, sizeof *m);
    m->t = t;
    m->names = emb_trace_names_build(t);
    size_t nctx = emb_trace_context_count(t), n;
    struct builder *b = calloc(1, sizeof *b);
    if (b)
        b->ctx = calloc(nctx ? nctx : 1, sizeof *b->ctx);
    if (!m->names || !b || !b->ctx) {
        if (b)
            free(b->ctx);
        free(b);
        return -1;
    }
    b->m = m;
    find_events(b, emb_trace_catalog(t));
    tracks(b);
    const struct emb_trace_info *h = emb_trace_info(t);
    const struct emb_trace_event *const *recs = emb_trace_events(t, &n);
    if (!recs && emb_trace_record_count(t))
        m->failed = true; /* the merged array could not be built */
    m->end_ns = emb_trace_ticks_to_ns(h->end_ts - h->start_ts, h->clock_hz);
    if (n && recs[n - 1]->ns > m->end_ns)
        m->end_ns = recs[n - 1]->ns;
    for (size_t i = 0; i < n && !m->failed; i++)
        record(b, recs[i], (uint64_t)i << 8);
    close_all(b);
    emb_perfetto_cpu_load(m);
    emb_perfetto_thread_load(m);
    emb_perfetto_ring_fill(m);
    if (logs)
        log_lines(m, logs, (uint64_t)n << 8);
    free(b->ctx);
    free(b);
    if (m->failed)
        return -1;
    if (m->nitems) /* an empty trace has no array to sort */
        qsort(m->items, m->nitems, sizeof *m->items, by_time);
    return 0;
}
