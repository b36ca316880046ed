/* The trace in the Chrome JSON trace format, for Perfetto's UI (ui.perfetto.dev) and
 * chrome://tracing. The mapping is written down in docs/perfetto.md. */
#include "trace_write.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "perfetto_json.h"

#define PID_CONTEXTS 1 /* one thread track per context */
#define PID_SCHED 2    /* one "running" track per context that records switches */
#define MAX_OPEN 64    /* open slices per context; deeper begins are shown as instants */

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
 * named "<event's object> <field>" keyed by `object`. */
struct counter {
    const char *event, *object, *field, *label;
};

static const struct counter counters[] = {
    {"msgq_send", "queue", "used", "msgq"},
    {"msgq_receive", "queue", "used", "msgq"},
};
#define NCOUNTERS (sizeof counters / sizeof counters[0])

struct open_slice {
    unsigned pair;
    uint64_t key;
    char name[48];
};

struct ctx_out {
    struct open_slice open[MAX_OPEN];
    unsigned nopen;
    bool running;      /* a "running" slice is open on the sched track */
    bool sched_named;  /* the sched track's name was written */
    uint64_t discarded; /* running total of the discarded counter */
};

struct writer {
    const struct emb_trace *t;
    struct emb_perfetto p;
    struct ctx_out *ctx;
    const struct emb_catalog_event *begin_ev[NPAIRS], *end_ev[NPAIRS];
    const struct emb_catalog_event *counter_ev[NCOUNTERS];
};

static const struct emb_catalog_field *field(const struct emb_catalog_event *ev, const char *name)
{
    for (size_t i = 0; ev && name && i < ev->nfields; i++)
        if (!strcmp(ev->fields[i].name, name))
            return &ev->fields[i];
    return NULL;
}

static void args_fields(struct writer *w, const struct emb_trace_event *e)
{
    emb_json_begin_object(&w->p.j, "args");
    for (size_t k = 0; e->ev && k < e->ev->nfields; k++)
        emb_trace_json_field(&w->p.j, &e->ev->fields[k], e->payload, true);
    if (e->kind != EMB_EVT_KIND_THREAD) {
        emb_json_string(&w->p.j, "kind", emb_trace_event_kind_name(e->kind));
        emb_json_uint(&w->p.j, "depth", e->depth);
    }
    emb_json_end_object(&w->p.j);
}

static void slice_begin(struct writer *w, const struct emb_trace_event *e, const char *name)
{
    emb_perfetto_slice_begin(&w->p, name, PID_CONTEXTS, e->context_id, e->ns);
    emb_json_string(&w->p.j, "cat", e->ev && e->ev->cls ? e->ev->cls->name : "emb");
    args_fields(w, e);
    emb_json_end_object(&w->p.j);
}

static void slice_end(struct writer *w, unsigned tid, uint64_t ns,
                      const struct emb_trace_event *e)
{
    emb_perfetto_slice_end(&w->p, PID_CONTEXTS, tid, ns);
    if (e)
        args_fields(w, e);
    emb_json_end_object(&w->p.j);
}

static void instant(struct writer *w, const struct emb_trace_event *e, const char *name)
{
    emb_perfetto_instant(&w->p, name, NULL, PID_CONTEXTS, e->context_id, e->ns);
    emb_json_string(&w->p.j, "cat", e->ev && e->ev->cls ? e->ev->cls->name : "emb");
    if (e->ev) {
        args_fields(w, e);
    } else {
        emb_json_begin_object(&w->p.j, "args");
        if (e->type == EMB_TREC_UNKNOWN) {
            emb_json_uint(&w->p.j, "id", e->id);
            emb_json_uint(&w->p.j, "raw_bytes", e->payload_size);
        } else {
            emb_json_uint(&w->p.j, "count", e->count);
        }
        emb_json_end_object(&w->p.j);
    }
    emb_json_end_object(&w->p.j);
}

/* Begin of a pair: push a slice. */
static void pair_begin(struct writer *w, struct ctx_out *c, const struct emb_trace_event *e,
                       unsigned p)
{
    const struct pair *pr = &pairs[p];
    const struct emb_catalog_field *kf = field(e->ev, pr->key);
    const struct emb_catalog_field *lf = field(e->ev, pr->label_field);
    uint64_t key = kf ? emb_catalog_field_get_uint(kf, e->payload) : 0;
    char name[48], buf[64];
    if (lf)
        snprintf(name, sizeof name, "%s %s", pr->label,
                 emb_trace_field_text(lf, e->payload, buf, sizeof buf));
    else if (kf)
        snprintf(name, sizeof name, "%s %s", pr->label,
                 emb_trace_field_text(kf, e->payload, buf, sizeof buf));
    else
        snprintf(name, sizeof name, "%s", pr->label);
    if (c->nopen == MAX_OPEN) {
        instant(w, e, e->ev->name);
        return;
    }
    struct open_slice *s = &c->open[c->nopen++];
    s->pair = p;
    s->key = key;
    memcpy(s->name, name, sizeof s->name);
    slice_begin(w, e, name);
}

/* End of a pair: closes the innermost matching slice. Slices opened inside it and still
 * open are closed and reopened around the end, so every slice nests and the file loads. */
static void pair_end(struct writer *w, struct ctx_out *c, const struct emb_trace_event *e,
                     unsigned p)
{
    const struct emb_catalog_field *kf = field(e->ev, pairs[p].key);
    uint64_t key = kf ? emb_catalog_field_get_uint(kf, e->payload) : 0;
    unsigned k = c->nopen;
    while (k > 0 && !(c->open[k - 1].pair == p && c->open[k - 1].key == key))
        k--;
    if (k == 0)
        return; /* an end whose begin is not in the trace: dropped */
    k--;
    for (unsigned i = c->nopen; i-- > k + 1;)
        slice_end(w, e->context_id, e->ns, NULL);
    slice_end(w, e->context_id, e->ns, e);
    for (unsigned i = k + 1; i < c->nopen; i++) {
        emb_perfetto_slice_begin(&w->p, c->open[i].name, PID_CONTEXTS, e->context_id, e->ns);
        emb_perfetto_close(&w->p);
    }
    memmove(&c->open[k], &c->open[k + 1], (c->nopen - k - 1) * sizeof c->open[0]);
    c->nopen--;
}

/* A switch: the context stops running one thread and runs another. */
static void sched_switch(struct writer *w, struct ctx_out *c, const struct emb_trace_event *e)
{
    const struct emb_trace_context *ctx = emb_trace_context(w->t, e->ctx);
    const struct emb_catalog_field *to = field(e->ev, "to");
    char name[64];
    if (!c->sched_named) {
        snprintf(name, sizeof name, "%s running", ctx->name);
        emb_perfetto_track_name(&w->p, "thread_name", PID_SCHED, e->context_id, name);
        emb_perfetto_track_sort(&w->p, "thread_sort_index", PID_SCHED, e->context_id,
                                (long long)e->ctx);
        c->sched_named = true;
    }
    if (c->running) {
        emb_perfetto_slice_end(&w->p, PID_SCHED, e->context_id, e->ns);
        emb_perfetto_close(&w->p);
    }
    snprintf(name, sizeof name, "thread %" PRIu64, to ? emb_catalog_field_get_uint(to, e->payload) : 0);
    emb_perfetto_slice_begin(&w->p, name, PID_SCHED, e->context_id, e->ns);
    emb_json_string(&w->p.j, "cat", "sched");
    args_fields(w, e);
    emb_json_end_object(&w->p.j);
    c->running = true;
}

static void record(struct writer *w, const struct emb_trace_event *e)
{
    struct ctx_out *c = &w->ctx[e->ctx];
    char name[96];
    if (e->type == EMB_TREC_DISCARDED) {
        snprintf(name, sizeof name, "events discarded (%s)", emb_trace_context(w->t, e->ctx)->name);
        c->discarded += e->count;
        emb_perfetto_counter(&w->p, name, PID_CONTEXTS, 0, e->ns, "total", c->discarded);
        instant(w, e, "events discarded");
        return;
    }
    if (e->type == EMB_TREC_LOST) {
        instant(w, e, "packets lost");
        return;
    }
    if (e->type == EMB_TREC_UNKNOWN) {
        snprintf(name, sizeof name, "unknown 0x%04x", e->id);
        instant(w, e, name);
        return;
    }
    for (unsigned p = 0; p < NPAIRS; p++) {
        if (e->ev == w->begin_ev[p]) {
            pair_begin(w, c, e, p);
            return;
        }
        if (e->ev == w->end_ev[p]) {
            pair_end(w, c, e, p);
            return;
        }
    }
    if (!strcmp(e->ev->name, "switch")) {
        sched_switch(w, c, e);
        return;
    }
    for (unsigned k = 0; k < NCOUNTERS; k++) {
        if (e->ev != w->counter_ev[k])
            continue;
        const struct emb_catalog_field *of = field(e->ev, counters[k].object);
        const struct emb_catalog_field *vf = field(e->ev, counters[k].field);
        if (of && vf) {
            char buf[48];
            snprintf(name, sizeof name, "%s %s %s", counters[k].label,
                     emb_trace_field_text(of, e->payload, buf, sizeof buf), counters[k].field);
            emb_perfetto_counter(&w->p, name, PID_CONTEXTS, 0, e->ns, counters[k].field,
                                 emb_catalog_field_get_uint(vf, e->payload));
        }
    }
    instant(w, e, e->ev->name);
}

int emb_trace_write_perfetto(const struct emb_trace *t, FILE *out)
{
    struct writer w = {.t = t};
    size_t nctx = emb_trace_context_count(t);
    w.ctx = calloc(nctx ? nctx : 1, sizeof *w.ctx);
    if (!w.ctx)
        return -1;
    const struct emb_catalog *cat = emb_trace_catalog(t);
    for (unsigned p = 0; p < NPAIRS; p++) {
        w.begin_ev[p] = emb_catalog_find(cat, pairs[p].begin);
        w.end_ev[p] = emb_catalog_find(cat, pairs[p].end);
        if (!w.begin_ev[p] || !w.end_ev[p])
            w.begin_ev[p] = w.end_ev[p] = NULL; /* a catalogue without the pair */
    }
    for (unsigned k = 0; k < NCOUNTERS; k++)
        w.counter_ev[k] = emb_catalog_find(cat, counters[k].event);

    emb_perfetto_open_document(&w.p, out, EMB_PERFETTO_NS, true);
    emb_json_string(&w.p.j, "displayTimeUnit", "ns");
    emb_perfetto_begin_events(&w.p);
    char name[64];
    const struct emb_trace_info *h = emb_trace_info(t);
    snprintf(name, sizeof name, "emb %s", h->port[0] ? h->port : "trace");
    emb_perfetto_track_name(&w.p, "process_name", PID_CONTEXTS, -1, name);
    emb_perfetto_track_name(&w.p, "process_name", PID_SCHED, -1, "scheduler");
    for (size_t i = 0; i < nctx; i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        emb_perfetto_track_name(&w.p, "thread_name", PID_CONTEXTS, c->id, c->name);
        emb_perfetto_track_sort(&w.p, "thread_sort_index", PID_CONTEXTS, c->id, (long long)i);
    }

    size_t n;
    const struct emb_trace_event *const *recs = emb_trace_events(t, &n);
    for (size_t i = 0; i < n; i++)
        record(&w, recs[i]);

    /* Whatever is still open ends with the trace, so every slice has an end. */
    uint64_t end = emb_trace_ticks_to_ns(h->end_ts - h->start_ts, h->clock_hz);
    if (n && recs[n - 1]->ns > end)
        end = recs[n - 1]->ns;
    for (size_t i = 0; i < nctx; i++) {
        struct ctx_out *c = &w.ctx[i];
        unsigned tid = emb_trace_context(t, i)->id;
        while (c->nopen) {
            slice_end(&w, tid, end, NULL);
            c->nopen--;
        }
        if (c->running) {
            emb_perfetto_slice_end(&w.p, PID_SCHED, tid, end);
            emb_perfetto_close(&w.p);
        }
    }
    emb_perfetto_end_events(&w.p);
    int rc = emb_perfetto_close_document(&w.p);
    free(w.ctx);
    return rc;
}
