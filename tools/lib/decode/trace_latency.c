#include "trace_latency.h"

#include <stdlib.h>
#include <string.h>

#define PENDING 4096u /* threads followed by index; others are not measured */
#define NEST 16

static void add(struct emb_latency_stat *s, uint64_t v)
{
    if (s->count == 0 || v < s->min)
        s->min = v;
    if (v > s->max)
        s->max = v;
    s->sum += v;
    s->count++;
}

static int64_t field(const struct emb_trace_event *e, const char *name)
{
    for (size_t k = 0; k < e->ev->nfields; k++)
        if (strcmp(e->ev->fields[k].name, name) == 0)
            return (int64_t)emb_catalog_field_get_uint(&e->ev->fields[k], e->payload);
    return -1;
}

struct follow {
    uint64_t woken_isr[PENDING], blocked[PENDING], resumed[PENDING];
    uint64_t irq_t0[NEST], preempt;
    int nirq;
};

static bool thread_ok(int64_t t)
{
    return t >= 0 && t < (int64_t)PENDING;
}

static void on_event(struct follow *f, struct emb_trace_latency *out, const struct emb_trace_event *e)
{
    const char *n = e->ev->name;
    uint64_t ts = e->ts + 1; /* 0 means "none pending" */
    if (strcmp(n, "wake") == 0 && field(e, "source") == 1 && thread_ok(field(e, "thread"))) {
        f->woken_isr[field(e, "thread")] = ts;
    } else if (strcmp(n, "wait_begin") == 0 && thread_ok(field(e, "thread"))) {
        f->blocked[field(e, "thread")] = ts;
    } else if (strcmp(n, "wait_end") == 0 && thread_ok(field(e, "thread"))) {
        int64_t th = field(e, "thread");
        if (f->woken_isr[th])
            add(&out->m[EMB_LAT_ISR_TO_THREAD], ts - f->woken_isr[th]);
        if (f->resumed[th])
            add(&out->m[EMB_LAT_SWITCH_TO_RESUME], ts - f->resumed[th]);
        f->woken_isr[th] = f->resumed[th] = 0;
    } else if (strcmp(n, "switch") == 0) {
        int64_t from = field(e, "from"), to = field(e, "to");
        if (thread_ok(from) && f->blocked[from])
            add(&out->m[EMB_LAT_BLOCK_TO_SWITCH], ts - f->blocked[from]);
        else if (f->preempt)
            add(&out->m[EMB_LAT_PREEMPT_TO_SWITCH], ts - f->preempt);
        if (thread_ok(from))
            f->blocked[from] = 0;
        if (thread_ok(to))
            f->resumed[to] = ts;
        f->preempt = 0;
    } else if (strcmp(n, "irq_enter") == 0) {
        if (f->nirq < NEST)
            f->irq_t0[f->nirq] = ts;
        f->nirq++;
    } else if (strcmp(n, "irq_exit") == 0 && f->nirq > 0) {
        if (--f->nirq < NEST)
            add(&out->m[EMB_LAT_IRQ], ts - f->irq_t0[f->nirq]);
        if (field(e, "switched") == 1)
            f->preempt = ts;
    } else if (strcmp(n, "sched_unlock") == 0) {
        add(&out->m[EMB_LAT_SCHED_LOCK], (uint64_t)field(e, "duration"));
    } else if (strcmp(n, "irq_lock_max") == 0) {
        add(&out->m[EMB_LAT_IRQ_LOCK_MAX], (uint64_t)field(e, "cycles"));
    }
}

int emb_trace_latency_compute(const struct emb_trace *t, struct emb_trace_latency *out)
{
    memset(out, 0, sizeof *out);
    struct follow *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    /* One pass in time order: a streaming decode keeps no records. */
    struct emb_trace_cursor *cur = emb_trace_cursor_open(t);
    if (cur == NULL) {
        free(f);
        return -1;
    }
    for (const struct emb_trace_event *e; (e = emb_trace_cursor_next(cur)) != NULL;)
        if (e->type == EMB_TREC_EVENT)
            on_event(f, out, e);
    emb_trace_cursor_close(cur);
    free(f);
    return 0;
}

const char *emb_latency_metric_name(enum emb_latency_metric m)
{
    static const char *const names[] = {"isr_to_thread", "block_to_switch", "preempt_to_switch",
                                        "switch_to_resume", "irq", "sched_lock", "irq_lock_max"};
    return (unsigned)m < EMB_LAT_COUNT ? names[m] : "?";
}
