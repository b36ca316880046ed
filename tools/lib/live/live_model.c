/* The live model (live_model.h): counters kept across rounds, a window closed per view. */
#define _POSIX_C_SOURCE 200809L
#include "live_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define OBJ_TYPE_THREAD 0u /* obj_init's type for a thread (catalog/trace_events.yaml) */
#define NO_THREAD 0xFFFFu

/* The catalogue's events the model reads, and their fields. */
struct fields {
    const struct emb_catalog *cat;
    const struct emb_catalog_event *sw, *init, *irq, *lock;
    const struct emb_catalog_field *sw_from, *sw_to, *init_type, *init_handle, *init_name;
    const struct emb_catalog_field *irq_n, *lock_cycles, *lock_pc;
};

struct emb_live_model {
    struct fields f;
    struct emb_live_context *ctx;
    size_t nctx, ctx_cap;
    struct emb_live_thread th[EMB_LIVE_MAX_THREADS];
    size_t nth; /* threads followed, at most EMB_LIVE_MAX_THREADS */
    struct emb_live_irq irqs[EMB_LIVE_MAX_IRQS];
    size_t nirqs;
    struct emb_live_ring rings[EMB_LIVE_MAX_RINGS];
    uint64_t count[65536], window_count[65536]; /* per event id */
    int64_t running;               /* index into th, or -1 */
    uint64_t since;                /* when it was switched to */
    bool have_ts;
    uint64_t first_ts, last_ts, window_start;
    struct emb_live_view view, shown;
    /* The view's copies: the counters go on while a view is drawn. */
    struct emb_live_context *vctx;
    size_t vctx_cap;
    struct emb_live_thread vth[EMB_LIVE_MAX_THREADS];
    struct emb_live_irq virqs[EMB_LIVE_MAX_IRQS];
};

struct emb_live_model *emb_live_model_new(void)
{
    struct emb_live_model *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->running = -1;
    return m;
}

void emb_live_model_free(struct emb_live_model *m)
{
    if (m == NULL)
        return;
    free(m->ctx);
    free(m->vctx);
    free(m);
}

static const struct emb_catalog_field *field(const struct emb_catalog_event *ev, const char *name)
{
    for (size_t k = 0; ev != NULL && k < ev->nfields; k++)
        if (strcmp(ev->fields[k].name, name) == 0)
            return &ev->fields[k];
    return NULL;
}

/* The events read, found once per catalogue by name. */
static void find_fields(struct fields *f, const struct emb_catalog *cat)
{
    if (f->cat == cat)
        return;
    memset(f, 0, sizeof *f);
    f->cat = cat;
    f->sw = emb_catalog_find(cat, "switch");
    f->sw_from = field(f->sw, "from");
    f->sw_to = field(f->sw, "to");
    f->init = emb_catalog_find(cat, "obj_init");
    f->init_type = field(f->init, "type");
    f->init_handle = field(f->init, "handle");
    f->init_name = field(f->init, "name");
    f->irq = emb_catalog_find(cat, "irq_enter");
    f->irq_n = field(f->irq, "irq");
    f->lock = emb_catalog_find(cat, "irq_lock_max");
    f->lock_cycles = field(f->lock, "cycles");
    f->lock_pc = field(f->lock, "pc");
    if (!f->sw_from || !f->sw_to)
        f->sw = NULL;
    if (!f->init_type || !f->init_handle || !f->init_name)
        f->init = NULL;
    if (!f->irq_n)
        f->irq = NULL;
    if (!f->lock_cycles || !f->lock_pc)
        f->lock = NULL;
}

/* The thread of an index, added when first named or switched; NULL past the limit. */
static struct emb_live_thread *thread(struct emb_live_model *m, uint32_t index)
{
    for (size_t i = 0; i < m->nth; i++)
        if (m->th[i].index == index)
            return &m->th[i];
    if (m->nth == EMB_LIVE_MAX_THREADS) {
        m->view.ignored++;
        return NULL;
    }
    struct emb_live_thread *t = &m->th[m->nth++];
    memset(t, 0, sizeof *t);
    t->index = index;
    return t;
}

/* The running thread's time up to `ts`. */
static void credit_running(struct emb_live_model *m, uint64_t ts)
{
    if (m->running >= 0 && ts > m->since) {
        m->th[m->running].run_ticks += ts - m->since;
        m->th[m->running].window_ticks += ts - m->since;
    }
    if (ts > m->since)
        m->since = ts;
}

static void on_switch(struct emb_live_model *m, const struct emb_trace_event *e)
{
    const struct fields *f = &m->f;
    uint32_t from = (uint32_t)emb_catalog_field_get_uint(f->sw_from, e->payload);
    uint32_t to = (uint32_t)emb_catalog_field_get_uint(f->sw_to, e->payload);
    credit_running(m, e->ts);
    m->view.switches++;
    struct emb_live_thread *out = from != NO_THREAD ? thread(m, from) : NULL;
    if (out != NULL)
        out->switches_out++;
    m->running = -1;
    if (to == NO_THREAD)
        return;
    struct emb_live_thread *t = thread(m, to);
    if (t != NULL) {
        t->switches_in++;
        t->window_switches++;
        m->running = t - m->th;
    }
}

static void on_init(struct emb_live_model *m, const struct emb_trace_event *e)
{
    const struct fields *f = &m->f;
    if (emb_catalog_field_get_uint(f->init_type, e->payload) != OBJ_TYPE_THREAD)
        return;
    struct emb_live_thread *t = thread(m, (uint32_t)emb_catalog_field_get_uint(f->init_handle, e->payload));
    if (t == NULL)
        return;
    const char *text;
    size_t n = emb_trace_field_chars(f->init_name, e->payload, &text);
    if (n >= sizeof t->name)
        n = sizeof t->name - 1u;
    memcpy(t->name, text, n);
    t->name[n] = '\0';
}

static void on_irq(struct emb_live_model *m, const struct emb_trace_event *e)
{
    uint32_t irq = (uint32_t)emb_catalog_field_get_uint(m->f.irq_n, e->payload);
    size_t i = 0;
    while (i < m->nirqs && m->irqs[i].irq != irq)
        i++;
    if (i == m->nirqs) {
        if (m->nirqs == EMB_LIVE_MAX_IRQS)
            return;
        m->irqs[m->nirqs++] = (struct emb_live_irq){.irq = irq};
    }
    m->irqs[i].count++;
    m->irqs[i].window_count++;
}

static void on_lock(struct emb_live_model *m, const struct emb_trace_event *e)
{
    struct emb_live_monitor *mon = &m->view.monitor;
    uint64_t cycles = emb_catalog_field_get_uint(m->f.lock_cycles, e->payload);
    mon->name = m->f.lock->name;
    mon->reports++;
    if (cycles >= mon->worst_cycles) {
        mon->worst_cycles = cycles;
        mon->opener_pc = emb_catalog_field_get_uint(m->f.lock_pc, e->payload);
    }
}

static void on_event(struct emb_live_model *m, const struct emb_trace_event *e)
{
    if (!m->have_ts) {
        m->have_ts = true;
        m->first_ts = m->window_start = m->since = e->ts;
    }
    if (e->ts > m->last_ts)
        m->last_ts = e->ts;
    if (e->type != EMB_TREC_EVENT)
        return;
    m->count[e->id]++;
    m->window_count[e->id]++;
    m->view.events++;
    m->view.window_events++;
    const struct emb_catalog_event *ev = e->ev;
    if (ev == m->f.sw && ev != NULL)
        on_switch(m, e);
    else if (ev == m->f.init && ev != NULL)
        on_init(m, e);
    else if (ev == m->f.irq && ev != NULL)
        on_irq(m, e);
    else if (ev == m->f.lock && ev != NULL)
        on_lock(m, e);
}

/* The model's row of a context id, added when first seen; NULL when out of memory. */
static struct emb_live_context *context(struct emb_live_model *m, const struct emb_trace_context *c)
{
    for (size_t i = 0; i < m->nctx; i++)
        if (m->ctx[i].id == c->id)
            return &m->ctx[i];
    struct emb_live_context *ctx = emb_array_grow(m->ctx, &m->ctx_cap, m->nctx + 1, sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    m->ctx = ctx;
    struct emb_live_context *r = &m->ctx[m->nctx++];
    memset(r, 0, sizeof *r);
    r->id = c->id;
    return r;
}

static int add_contexts(struct emb_live_model *m, const struct emb_trace *round)
{
    for (size_t i = 0; i < emb_trace_context_count(round); i++) {
        const struct emb_trace_context *c = emb_trace_context(round, i);
        struct emb_live_context *r = context(m, c);
        if (r == NULL)
            return -1;
        r->kind = c->kind;
        memcpy(r->name, c->name, sizeof r->name);
        r->events += c->events;
        r->window_events += c->events;
        r->packets += c->packets;
        r->discarded = c->discarded;
        r->lost_packets += c->lost_packets + c->overwritten_packets;
    }
    return 0;
}

int emb_live_model_add(struct emb_live_model *m, const struct emb_trace *round)
{
    find_fields(&m->f, emb_trace_catalog(round));
    m->view.clock_hz = emb_trace_info(round)->clock_hz;
    m->view.rounds++;
    if (add_contexts(m, round) != 0)
        return -1;
    struct emb_trace_cursor *cur = emb_trace_cursor_open(round);
    if (cur == NULL)
        return -1;
    for (const struct emb_trace_event *e; (e = emb_trace_cursor_next(cur)) != NULL;)
        on_event(m, e);
    emb_trace_cursor_close(cur);
    return 0;
}

void emb_live_model_set_stack(struct emb_live_model *m, uint32_t index, const char *name, uint32_t used,
                              uint32_t size)
{
    struct emb_live_thread *t = thread(m, index);
    if (t == NULL)
        return;
    if (t->name[0] == '\0' && name != NULL)
        snprintf(t->name, sizeof t->name, "%s", name);
    t->has_stack = true;
    t->stack_used = used;
    t->stack_size = size;
}

void emb_live_model_set_rings(struct emb_live_model *m, const struct emb_live_ring *rings, size_t n)
{
    if (n > EMB_LIVE_MAX_RINGS)
        n = EMB_LIVE_MAX_RINGS;
    memcpy(m->rings, rings, n * sizeof *rings);
    m->view.rings = m->rings;
    m->view.nrings = n;
    m->view.target_reads++;
}

/* ---- the view ---- */

static double per_s(uint64_t n, double span_s)
{
    return span_s > 0 ? (double)n / span_s : 0.0;
}

static int by_load(const void *a, const void *b)
{
    const struct emb_live_thread *x = a, *y = b;
    if (x->window_ticks != y->window_ticks)
        return x->window_ticks < y->window_ticks ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_switches(const void *a, const void *b)
{
    const struct emb_live_thread *x = a, *y = b;
    if (x->window_switches != y->window_switches)
        return x->window_switches < y->window_switches ? 1 : -1;
    return by_load(a, b);
}

static int by_name(const void *a, const void *b)
{
    const struct emb_live_thread *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : by_load(a, b);
}

/* The busiest event types of the window, then the busiest of the run. */
static void top_events(struct emb_live_model *m, struct emb_live_view *v)
{
    v->ntop = 0;
    for (uint32_t id = 0; id <= 0xFFFFu; id++) {
        if (m->count[id] == 0)
            continue;
        struct emb_live_event_rate r = {.id = (uint16_t)id, .count = m->count[id],
                                        .window_count = m->window_count[id],
                                        .per_s = per_s(m->window_count[id], v->span_s)};
        const struct emb_catalog_event *ev = m->f.cat ? emb_catalog_event(m->f.cat, (uint16_t)id) : NULL;
        r.name = ev != NULL ? ev->name : "(unknown)";
        size_t at = v->ntop;
        while (at > 0 && (v->top[at - 1].window_count < r.window_count ||
                          (v->top[at - 1].window_count == r.window_count && v->top[at - 1].count < r.count)))
            at--;
        if (at >= EMB_LIVE_TOP_EVENTS)
            continue;
        size_t n = v->ntop < EMB_LIVE_TOP_EVENTS ? v->ntop : EMB_LIVE_TOP_EVENTS - 1u;
        memmove(&v->top[at + 1], &v->top[at], (n - at) * sizeof r);
        v->top[at] = r;
        if (v->ntop < EMB_LIVE_TOP_EVENTS)
            v->ntop++;
    }
    memset(m->window_count, 0, 65536 * sizeof *m->window_count);
}

/* Contexts into the view, their window figures, and the totals over them. */
static bool view_contexts(struct emb_live_model *m, struct emb_live_view *v)
{
    struct emb_live_context *c = emb_array_grow(m->vctx, &m->vctx_cap, m->nctx + 1, sizeof *c);
    if (c == NULL)
        return false;
    m->vctx = c;
    v->packets = v->discarded = v->lost_packets = 0;
    for (size_t i = 0; i < m->nctx; i++) {
        struct emb_live_context *r = &m->ctx[i];
        r->events_per_s = per_s(r->window_events, v->span_s);
        m->vctx[i] = *r;
        r->window_events = 0;
        v->packets += r->packets;
        v->discarded += r->discarded;
        v->lost_packets += r->lost_packets;
    }
    v->contexts = m->vctx;
    v->ncontexts = m->nctx;
    return true;
}

static void view_threads(struct emb_live_model *m, struct emb_live_view *v, uint64_t span,
                         enum emb_live_sort sort)
{
    for (size_t i = 0; i < m->nth; i++) {
        struct emb_live_thread *t = &m->th[i];
        t->load = span > 0 ? (double)t->window_ticks / (double)span : 0.0;
        t->running = (int64_t)i == m->running;
        m->vth[i] = *t;
        t->window_ticks = t->window_switches = 0;
    }
    qsort(m->vth, m->nth, sizeof m->vth[0],
          sort == EMB_LIVE_SORT_NAME ? by_name : sort == EMB_LIVE_SORT_SWITCHES ? by_switches : by_load);
    v->threads = m->vth;
    v->nthreads = m->nth;
    for (size_t i = 0; i < m->nirqs; i++) {
        m->irqs[i].per_s = per_s(m->irqs[i].window_count, v->span_s);
        m->virqs[i] = m->irqs[i];
        m->irqs[i].window_count = 0;
    }
    v->irqs = m->virqs;
    v->nirqs = m->nirqs;
}

const struct emb_live_view *emb_live_model_view(struct emb_live_model *m, enum emb_live_sort sort)
{
    struct emb_live_view *v = &m->view;
    credit_running(m, m->last_ts);
    uint64_t span = m->last_ts - m->window_start;
    double hz = v->clock_hz ? (double)v->clock_hz : 1e9;
    v->span_s = (double)span / hz;
    v->elapsed_s = (double)(m->last_ts - m->first_ts) / hz;
    v->events_per_s = per_s(v->window_events, v->span_s);
    if (v->monitor.reports)
        v->monitor.worst_us = (double)v->monitor.worst_cycles / hz * 1e6;
    if (!view_contexts(m, v))
        v->ncontexts = 0;
    view_threads(m, v, span, sort);
    top_events(m, v);
    m->window_start = m->last_ts;
    /* The window's event count stays in the view; the next window counts from zero. */
    m->shown = *v;
    v->window_events = 0;
    return &m->shown;
}
