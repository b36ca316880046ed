/* The Perfetto model of a trace: which catalogue events become slices, counters, flows and
 * instants (docs/perfetto.md, "Events"), in one walk of the trace's cursor that keeps every
 * item and sorts them (KEEP: the protobuf and speedscope writers), or in two that keep no
 * record's item (the JSON writer, on a streaming decode): the first (SCAN) learns what the
 * second must know when it reaches an item's time, each slice's end (16 bytes a slice) and
 * each request's flow (4 bytes a request), and makes the tracks, the strings, the counters
 * of whole contexts and the log lines; the second (EMIT) hands over each item in the order
 * the sort gives. That order is the records' (a record's items take the record's time, or
 * a slice its begin's, and keys from its place in the merge), so the second walk writes a
 * record's items as the merge reaches it and merges in the kept items by time and key; at
 * one time and key (0: the first record's) the record's item goes first, as it was made
 * first and the sort is stable. */
#include "trace_perfetto_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "buffer.h"

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
    uint32_t id;        /* SCAN, EMIT: the slice's number, where its end is kept */
    uint64_t ts, order;
    const struct emb_trace_event *begin; /* KEEP: the record, which the item points at */
    struct emb_trace_event copy;         /* the begin record (SCAN, EMIT) */
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
    size_t item; /* KEEP: the request's item; SCAN, EMIT: the request's number */
    bool used;
};

enum walk { KEEP, SCAN, EMIT };

/* Where a slice ended: its time and the end event's payload (NULL: no end event). */
struct slice_end {
    uint64_t ns;
    const uint8_t *payload;
};

/* What a catalogue event is to the model, found once per event id. */
enum { ROLE_BEGIN = 1, ROLE_END = 2, ROLE_SWITCH = 4, ROLE_OTHER = 8 };

struct event_role {
    const struct emb_catalog_event *ev; /* whose role this is (NULL: not found yet) */
    uint32_t name, cat;                 /* interned when first used (0: not yet) */
    uint8_t role, pair;
    bool plain; /* only ever an instant: no pair, switch, counter or flow */
};

#define MAX_RECORD_ITEMS (MAX_OPEN + 4) /* items one record makes */

struct emb_perfetto_walk {
    struct emb_perfetto_model *m;
    enum walk walk;
    struct ctx_state *ctx;
    const struct emb_catalog_event *begin_ev[NPAIRS], *end_ev[NPAIRS];
    const struct emb_catalog_event *counter_ev[NCOUNTERS];
    const struct emb_catalog_event *request_ev[NREQUESTS], *served_ev[NREQUESTS];
    const struct emb_catalog_event *switch_ev, *idle_enter, *idle_exit; /* (the loads') */
    struct pending pending[MAX_PENDING]; /* a ring: the oldest is overwritten when full */
    size_t npending;
    struct event_role *roles;            /* by event id */
    struct event_role spare;             /* an id two catalogue events share */
    uint32_t sched_cat, counter_cat;
    uint64_t nrecords;
    /* SCAN learns, EMIT reads. */
    struct slice_end *ends;
    uint32_t nslices, nends;             /* slices begun in this walk; SCAN's */
    size_t ends_cap;
    uint32_t *request_flow;              /* by request number: its flow (0 none) */
    size_t nrequests, nrequests_seen, requests_cap;
    uint32_t *kept_order;                /* the kept items (counters, logs) by time */
    size_t nkept;
    /* EMIT: one record's items, handed over in key order, and the merge of the kept. */
    struct emb_perfetto_item items[MAX_RECORD_ITEMS];
    struct emb_trace_event ends_of[MAX_RECORD_ITEMS];
    unsigned nitems;
    size_t next_kept;
    void (*emit)(void *arg, const struct emb_perfetto_item *it);
    void *arg;
};

typedef struct emb_perfetto_walk builder;

static struct event_role *role_of(builder *b, const struct emb_catalog_event *ev)
{
    struct event_role *r = &b->roles[ev->id];
    if (r->ev != ev) {
        if (r->ev != NULL) {
            r = &b->spare;
            if (r->ev == ev)
                return r;
        }
        *r = (struct event_role){.ev = ev, .role = ROLE_OTHER};
        for (unsigned p = 0; p < NPAIRS; p++) {
            if (ev == b->begin_ev[p] || ev == b->end_ev[p]) {
                r->role = ev == b->begin_ev[p] ? ROLE_BEGIN : ROLE_END;
                r->pair = (uint8_t)p;
                break;
            }
        }
        if (r->role == ROLE_OTHER && ev == b->switch_ev)
            r->role = ROLE_SWITCH;
        r->plain = r->role == ROLE_OTHER && ev != b->idle_enter && ev != b->idle_exit;
        for (unsigned k = 0; k < NCOUNTERS; k++)
            r->plain = r->plain && ev != b->counter_ev[k];
        for (unsigned q = 0; q < NREQUESTS; q++)
            r->plain = r->plain && ev != b->request_ev[q] && ev != b->served_ev[q];
    }
    return r;
}

static uint32_t category(builder *b, const struct emb_trace_event *e)
{
    if (!e->ev || !e->ev->cls)
        return emb_perfetto_intern(b->m, "emb");
    struct event_role *r = role_of(b, e->ev);
    if (r->cat == 0)
        r->cat = emb_perfetto_intern(b->m, e->ev->cls->name);
    return r->cat;
}

/* A new item: kept (KEEP), held for the record's end (EMIT), or dropped (SCAN). */
static struct emb_perfetto_item *put(builder *b, uint8_t kind, uint32_t track, uint64_t ts,
                                     uint64_t key)
{
    static struct emb_perfetto_item dropped;
    if (b->walk == KEEP)
        return emb_perfetto_item_add(b->m, kind, track, ts, key);
    struct emb_perfetto_item *it = &dropped;
    if (b->walk == EMIT && b->nitems < MAX_RECORD_ITEMS)
        it = &b->items[b->nitems++];
    *it = (struct emb_perfetto_item){.kind = kind, .track = track, .ts = ts, .key = key};
    return it;
}

static struct emb_perfetto_item *instant(builder *b, const struct emb_trace_event *e,
                                         const char *name, uint64_t order)
{
    struct emb_perfetto_item *it = put(b, EMB_PERFETTO_INSTANT, b->ctx[e->ctx].track, e->ns,
                                       order);
    it->ev = e;
    if (e->ev && name == e->ev->name) {
        struct event_role *r = role_of(b, e->ev);
        if (r->name == 0)
            r->name = emb_perfetto_intern(b->m, name);
        it->name = r->name;
    } else {
        it->name = emb_perfetto_intern(b->m, name);
    }
    it->cat = category(b, e);
    return it;
}

static void counter(builder *b, const char *track, uint64_t ns, uint64_t order, int64_t value)
{
    uint32_t tr = emb_perfetto_counter_track(b->m, track);
    struct emb_perfetto_item *it = put(b, EMB_PERFETTO_COUNTER, tr, ns, order);
    it->value = value;
    it->name = b->m->tracks[tr].name;
    if (b->counter_cat == 0)
        b->counter_cat = emb_perfetto_intern(b->m, "counter");
    it->cat = b->counter_cat;
}

static uint32_t slice_category(builder *b, const struct ctx_state *c, uint32_t track,
                               const struct open_slice *s)
{
    if (track != c->sched_track)
        return category(b, &s->copy);
    if (b->sched_cat == 0)
        b->sched_cat = emb_perfetto_intern(b->m, "sched");
    return b->sched_cat;
}

/* A slice ends: KEEP makes its item, SCAN keeps where it ended for EMIT (which made the
 * item at its begin). */
static void slice(builder *b, const struct ctx_state *c, uint32_t track, const struct open_slice *s,
                  uint64_t end_ns, const struct emb_trace_event *end)
{
    if (b->walk == KEEP) {
        struct emb_perfetto_item *it = put(b, EMB_PERFETTO_SLICE, track, s->ts, s->order);
        it->dur = end_ns - s->ts;
        it->ev = s->begin;
        it->end = end;
        it->name = s->name;
        it->cat = slice_category(b, c, track, s);
        it->flow_in = s->flow_in;
        return;
    }
    if (b->walk == EMIT)
        return;
    slice_category(b, c, track, s); /* its string, for the writer */
    if (s->id < b->nslices)
        b->ends[s->id] = (struct slice_end){
            .ns = end_ns, .payload = end ? (end->payload ? end->payload : (const uint8_t *)"")
                                         : NULL};
}

/* A slice begins: SCAN numbers it, EMIT makes its item from where SCAN saw it end. */
static void slice_open(builder *b, const struct ctx_state *c, uint32_t track, struct open_slice *s,
                       const struct emb_trace_event *begin)
{
    if (b->walk == KEEP) {
        s->begin = begin;
        s->copy.ev = begin->ev;
        return;
    }
    s->copy = *begin;
    s->id = b->nslices;
    if (b->walk == SCAN) {
        struct slice_end *a = emb_array_grow(b->ends, &b->ends_cap, b->nslices + 1, sizeof *a);
        if (a == NULL) {
            b->m->failed = true;
            return;
        }
        b->ends = a;
        b->ends[b->nslices++] = (struct slice_end){0};
        return;
    }
    if (b->nslices++ >= b->nends)
        return; /* not seen by SCAN: cannot be */
    const struct slice_end *end = &b->ends[s->id];
    struct emb_perfetto_item *it = put(b, EMB_PERFETTO_SLICE, track, s->ts, s->order);
    it->dur = end->ns - s->ts;
    it->ev = &s->copy;
    it->name = s->name;
    it->cat = slice_category(b, c, track, s);
    it->flow_in = s->flow_in;
    if (end->payload && b->nitems && it == &b->items[b->nitems - 1]) {
        struct emb_trace_event *e = &b->ends_of[b->nitems - 1];
        *e = (struct emb_trace_event){.ev = b->end_ev[s->pair], .payload = end->payload};
        it->end = e;
    }
}

/* A field's value as the text writer shows it. */
static const char *display(builder *b, const struct emb_catalog_field *f, const uint8_t *payload,
                           char *buf, size_t len)
{
    return emb_trace_field_display(b->m->names, emb_trace_info(b->m->t)->clock_hz, f, payload,
                                   buf, len);
}

/* The flow into an event that serves a request: the oldest request waiting with its key. */
static uint32_t served(builder *b, const struct emb_trace_event *e)
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
            uint32_t flow = ++b->m->flows;
            if (b->walk == KEEP)
                b->m->items[p->item].flow_out = flow;
            else if (b->walk == SCAN && p->item < b->nrequests)
                b->request_flow[p->item] = flow;
            return flow;
        }
    }
    return 0;
}

/* A request: remembered until the event that serves it. `it` is its item, just made. */
static void request(builder *b, const struct emb_trace_event *e, struct emb_perfetto_item *it)
{
    for (unsigned r = 0; r < NREQUESTS; r++) {
        if (e->ev != b->request_ev[r])
            continue;
        const struct emb_catalog_field *ok = emb_perfetto_field(e->ev, requests[r].ok);
        if (ok && emb_catalog_field_get_int(ok, e->payload) < 0)
            continue; /* refused: nothing will serve it */
        const struct emb_catalog_field *kf = emb_perfetto_field(e->ev, requests[r].key);
        size_t item = b->m->nitems - 1;
        if (b->walk != KEEP) {
            item = b->nrequests;
            if (b->walk == SCAN) {
                uint32_t *a = emb_array_grow(b->request_flow, &b->requests_cap, item + 1,
                                             sizeof *a);
                if (a == NULL) {
                    b->m->failed = true;
                    return;
                }
                b->request_flow = a;
                a[item] = 0;
            } else if (item < b->nrequests_seen) {
                it->flow_out = b->request_flow[item];
            }
            b->nrequests++;
        }
        b->pending[b->npending++ % MAX_PENDING] = (struct pending){
            .request = r, .key = emb_catalog_field_get_uint(kf, e->payload), .item = item};
    }
}

static void pair_begin(builder *b, struct ctx_state *c, const struct emb_trace_event *e,
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
    struct open_slice *s = &c->open[c->nopen++];
    *s = (struct open_slice){
        .pair = p, .key = kf ? emb_catalog_field_get_uint(kf, e->payload) : 0,
        .name = emb_perfetto_intern(b->m, name), .flow_in = flow_in, .ts = e->ns, .order = order};
    slice_open(b, c, c->track, s, e);
}

/* End of a pair: closes the innermost matching slice. Slices opened inside it and still
 * open are closed and reopened at the end, so every slice nests and the file loads. */
static void pair_end(builder *b, struct ctx_state *c, const struct emb_trace_event *e, unsigned p,
                     uint64_t order)
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
        slice(b, c, c->track, &c->open[i], e->ns, NULL);
    slice(b, c, c->track, &c->open[k], e->ns, e);
    memmove(&c->open[k], &c->open[k + 1], (c->nopen - k - 1) * sizeof c->open[0]);
    c->nopen--;
    for (unsigned i = k; i < c->nopen; i++) { /* reopened, in their order, after the end */
        struct open_slice *s = &c->open[i];
        s->ts = e->ns;
        s->order = order + 1 + (i - k);
        s->flow_in = 0;
        struct emb_trace_event begin = s->copy;
        slice_open(b, c, c->track, s, b->walk == KEEP ? s->begin : &begin);
    }
}

/* A switch: the context stops running one thread and runs another, named as the text
 * writer names it ("audio(2)", "none"). */
static void sched_switch(builder *b, struct ctx_state *c, const struct emb_trace_event *e,
                         uint64_t order)
{
    if (c->sched_track == UINT32_MAX) {
        const struct emb_trace_context *ctx = emb_trace_context(b->m->t, e->ctx);
        char name[64];
        snprintf(name, sizeof name, "%s running", ctx->name);
        c->sched_track = emb_perfetto_track_add(b->m, EMB_PERFETTO_TRACK_SCHED, e->context_id,
                                                e->ctx, name);
    }
    if (c->running.name)
        slice(b, c, c->sched_track, &c->running, e->ns, NULL);
    const struct emb_catalog_field *to = emb_perfetto_field(e->ev, "to");
    char buf[64];
    c->running = (struct open_slice){
        .name = emb_perfetto_intern(b->m, to ? display(b, to, e->payload, buf, sizeof buf) : "?"),
        .ts = e->ns, .order = order};
    slice_open(b, c, c->sched_track, &c->running, e);
}

static void level_counter(builder *b, const struct emb_trace_event *e, unsigned k, uint64_t order)
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
static void loss(builder *b, struct ctx_state *c, const struct emb_trace_event *e, uint64_t order)
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

/* An event that is neither a pair's nor a switch: its counters, flows and instant. */
static void other(builder *b, const struct emb_trace_event *e, uint64_t order)
{
    for (unsigned k = 0; k < NCOUNTERS; k++)
        if (e->ev == b->counter_ev[k])
            level_counter(b, e, k, order + 1);
    uint32_t flow_in = served(b, e);
    struct emb_perfetto_item *it = instant(b, e, e->ev->name, order);
    it->flow_in = flow_in;
    if (!b->m->failed)
        request(b, e, it);
}

static void emit_kept(builder *b, const struct emb_perfetto_item *it);

/* EMIT: the instant of an event that is only ever one, once its strings are known. */
static void plain_instant(builder *b, const struct emb_trace_event *e, const struct event_role *r,
                          uint64_t order)
{
    struct emb_perfetto_item it = {.kind = EMB_PERFETTO_INSTANT, .track = b->ctx[e->ctx].track,
                                   .ts = e->ns, .key = order, .ev = e, .name = r->name,
                                   .cat = r->cat};
    emit_kept(b, &it);
    b->emit(b->arg, &it);
}

static void record(builder *b, const struct emb_trace_event *e, uint64_t order)
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
    const struct event_role *r = role_of(b, e->ev);
    if (r->plain && r->name && r->cat && b->walk != KEEP) {
        if (b->walk == EMIT) /* as other() would make it, without the lookups */
            plain_instant(b, e, r, order);
        return; /* SCAN: it has nothing more to learn from it */
    }
    if (r->role == ROLE_BEGIN)
        pair_begin(b, c, e, r->pair, order);
    else if (r->role == ROLE_END)
        pair_end(b, c, e, r->pair, order);
    else if (r->role == ROLE_SWITCH)
        sched_switch(b, c, e, order);
    else
        other(b, e, order);
}

static void find_events(builder *b, const struct emb_catalog *cat)
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
    b->idle_enter = emb_catalog_find(cat, "idle_enter");
    b->idle_exit = emb_catalog_find(cat, "idle_exit");
}

/* Whatever is still open ends with the trace, so every slice has an end. */
static void close_all(builder *b)
{
    for (size_t i = 0; i < emb_trace_context_count(b->m->t); i++) {
        struct ctx_state *c = &b->ctx[i];
        while (c->nopen) {
            c->nopen--;
            slice(b, c, c->track, &c->open[c->nopen], b->m->end_ns, NULL);
        }
        if (c->running.name)
            slice(b, c, c->sched_track, &c->running, b->m->end_ns, NULL);
    }
}

static int by_time(const void *pa, const void *pb)
{
    const struct emb_perfetto_item *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static void tracks(builder *b)
{
    struct emb_perfetto_model *m = b->m;
    const struct emb_trace_info *h = emb_trace_info(m->t);
    char name[64];
    snprintf(name, sizeof name, "emb %s", h->port[0] ? h->port : "trace");
    m->process = emb_perfetto_intern(m, name);
    for (size_t i = 0; i < emb_trace_context_count(m->t); i++) {
        const struct emb_trace_context *c = emb_trace_context(m->t, i);
        b->ctx[i].track = emb_perfetto_track_add(m, EMB_PERFETTO_TRACK_CONTEXT, c->id, (uint32_t)i,
                                                 c->name);
    }
}

/* The trace's end: its last packet's, or its last record's when that is later. */
static uint64_t trace_end(const struct emb_trace *t)
{
    const struct emb_trace_info *h = emb_trace_info(t);
    uint64_t end = emb_trace_ticks_to_ns(h->end_ts - h->start_ts, h->clock_hz);
    if (emb_trace_record_count(t)) {
        struct emb_trace_event last = {.ts = emb_trace_last_ts(t)};
        emb_trace_set_times(t, &last);
        if (last.ns > end)
            end = last.ns;
    }
    return end;
}

static builder *builder_new(struct emb_perfetto_model *m, const struct emb_trace *t)
{
    memset(m, 0, sizeof *m);
    m->t = t;
    m->names = emb_trace_names_build(t);
    builder *b = calloc(1, sizeof *b);
    size_t nctx = emb_trace_context_count(t);
    if (b) {
        b->ctx = calloc(nctx ? nctx : 1, sizeof *b->ctx);
        b->roles = calloc(65536, sizeof *b->roles);
    }
    if (!m->names || !b || !b->ctx || !b->roles) {
        if (b) {
            free(b->ctx);
            free(b->roles);
        }
        free(b);
        return NULL;
    }
    b->m = m;
    find_events(b, emb_trace_catalog(t));
    tracks(b);
    m->end_ns = trace_end(t);
    return b;
}

void emb_perfetto_walk_free(struct emb_perfetto_walk *b)
{
    if (b == NULL)
        return;
    EMB_FREE_ALL(b->ctx, b->roles, b->ends, b->request_flow, b->kept_order, b);
}

/* A state for each context before a walk. */
static void walk_start(builder *b, enum walk walk)
{
    b->walk = walk;
    b->npending = 0;
    b->nrecords = 0;
    b->nslices = 0;
    b->nrequests = 0;
    b->m->flows = 0;
    for (size_t i = 0; i < emb_trace_context_count(b->m->t); i++) {
        struct ctx_state *c = &b->ctx[i];
        uint32_t track = c->track, sched = walk == EMIT ? c->sched_track : UINT32_MAX;
        memset(c, 0, sizeof *c);
        c->track = track;
        c->sched_track = sched;
    }
}

/* One walk of the trace's records: the model's items (KEEP), what EMIT needs (SCAN), or
 * every item handed over (EMIT). */
static void walk(builder *b, struct emb_perfetto_loads *loads, void (*record_done)(builder *))
{
    struct emb_trace_cursor *cur = emb_trace_cursor_open(b->m->t);
    if (cur == NULL) {
        b->m->failed = true;
        return;
    }
    const struct emb_trace_event *e;
    while (!b->m->failed && (e = emb_trace_cursor_next(cur)) != NULL) {
        uint64_t order = b->nrecords++ << 8;
        if (loads && !(e->type == EMB_TREC_EVENT && e->ev && role_of(b, e->ev)->plain))
            emb_perfetto_loads_record(loads, e, order); /* (a plain event is no load's) */
        record(b, e, order);
        if (record_done)
            record_done(b);
    }
    emb_trace_cursor_close(cur);
}

/* What a walk that keeps items ends with: the slices still open, the counters of whole
 * contexts, the log lines. */
static void walk_finish(builder *b, struct emb_perfetto_loads *loads,
                        const struct emb_perfetto_logs *logs)
{
    struct emb_perfetto_model *m = b->m;
    close_all(b);
    if (loads)
        emb_perfetto_loads_finish(loads, m);
    else
        m->failed = true;
    emb_perfetto_ring_fill(m);
    if (logs)
        emb_perfetto_log_items(m, logs, b->nrecords << 8);
}

int emb_perfetto_model_build(struct emb_perfetto_model *m, const struct emb_trace *t,
                             const struct emb_perfetto_logs *logs)
{
    builder *b = builder_new(m, t);
    if (b == NULL)
        return -1;
    walk_start(b, KEEP);
    struct emb_perfetto_loads *loads = emb_perfetto_loads_new(m);
    if (loads)
        walk(b, loads, NULL);
    walk_finish(b, loads, logs);
    emb_perfetto_walk_free(b);
    if (m->failed)
        return -1;
    if (m->nitems) /* an empty trace has no array to sort */
        qsort(m->items, m->nitems, sizeof *m->items, by_time);
    return 0;
}

/* The kept items in order of time and key, then of when they were made. */
static bool order_kept(builder *b)
{
    struct emb_perfetto_model *m = b->m;
    struct emb_perfetto_order *k = malloc((m->nitems + 1) * sizeof *k);
    b->kept_order = malloc((m->nitems + 1) * sizeof *b->kept_order);
    if (k == NULL || b->kept_order == NULL) {
        free(k);
        return false;
    }
    for (size_t i = 0; i < m->nitems; i++)
        k[i] = (struct emb_perfetto_order){.first = m->items[i].ts, .second = m->items[i].key,
                                           .index = (uint32_t)i};
    if (m->nitems > 1)
        qsort(k, m->nitems, sizeof *k, emb_perfetto_by_order);
    for (size_t i = 0; i < m->nitems; i++)
        b->kept_order[i] = k[i].index;
    b->nkept = m->nitems;
    free(k);
    return true;
}

int emb_perfetto_model_scan(struct emb_perfetto_model *m, const struct emb_trace *t,
                            const struct emb_perfetto_logs *logs)
{
    builder *b = builder_new(m, t);
    if (b == NULL)
        return -1;
    m->walk = b;
    walk_start(b, SCAN);
    struct emb_perfetto_loads *loads = emb_perfetto_loads_new(m);
    if (loads)
        walk(b, loads, NULL);
    walk_finish(b, loads, logs);
    b->nends = b->nslices;
    b->nrequests_seen = b->nrequests;
    if (!m->failed && !order_kept(b))
        m->failed = true;
    return m->failed ? -1 : 0;
}

/* EMIT: the kept items due before `it` (all of them when NULL). At one time and key the
 * record's item goes first: it was made first. */
static void emit_kept(builder *b, const struct emb_perfetto_item *it)
{
    const struct emb_perfetto_item *items = b->m->items;
    for (; b->next_kept < b->nkept; b->next_kept++) {
        const struct emb_perfetto_item *k = &items[b->kept_order[b->next_kept]];
        if (it && (k->ts > it->ts || (k->ts == it->ts && k->key >= it->key)))
            return;
        b->emit(b->arg, k);
    }
}

/* EMIT: a record's items, in key order, each after the kept items due before it. */
static void record_done(builder *b)
{
    for (unsigned i = 1; i < b->nitems; i++) { /* a handful: insertion sort */
        struct emb_perfetto_item x = b->items[i];
        unsigned j = i;
        for (; j > 0 && b->items[j - 1].key > x.key; j--)
            b->items[j] = b->items[j - 1];
        b->items[j] = x;
    }
    for (unsigned i = 0; i < b->nitems; i++) {
        emit_kept(b, &b->items[i]);
        b->emit(b->arg, &b->items[i]);
    }
    b->nitems = 0;
}

int emb_perfetto_model_emit(struct emb_perfetto_model *m,
                            void (*emit)(void *arg, const struct emb_perfetto_item *it), void *arg)
{
    builder *b = m->walk;
    if (b == NULL || m->failed)
        return -1;
    walk_start(b, EMIT);
    b->emit = emit;
    b->arg = arg;
    b->next_kept = 0;
    b->nitems = 0;
    walk(b, NULL, record_done);
    emit_kept(b, NULL);
    return m->failed ? -1 : 0;
}
