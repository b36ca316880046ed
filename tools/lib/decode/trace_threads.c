#include "trace_threads.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "trace_names.h"

#define NO_THREAD 0xFFFFu

#define IRQ_NEST 16

/* What the pass follows of one item between its events. */
struct timing {
    uint64_t since;           /* when it started running */
    uint64_t blocked_since;   /* when it began to wait */
    bool running, blocked;
};

struct follow {
    struct emb_trace_threads *th;
    long current;             /* the running thread's item, -1 none */
    int32_t irqs[IRQ_NEST];   /* the interrupts running, innermost last */
    int nirq;
    struct timing *timing;    /* per item, as th->items */
    size_t cap;               /* items and timings room for */
    uint32_t *slot;           /* by thread index (u16): its item + 1, 0 none */
    const struct emb_trace_names *names;
};

static const struct emb_catalog_field *field_named(const struct emb_catalog_event *ev, const char *name)
{
    for (size_t k = 0; k < ev->nfields; k++)
        if (strcmp(ev->fields[k].name, name) == 0)
            return &ev->fields[k];
    return NULL;
}

static int64_t field_of(const struct emb_trace_event *e, const char *name)
{
    const struct emb_catalog_field *f = field_named(e->ev, name);
    return f != NULL ? (int64_t)emb_catalog_field_get_uint(f, e->payload) : -1;
}

/* Room for one more item, in the items and their timings alike. */
static int grow(struct follow *f)
{
    size_t need = f->th->n + 1u, items_cap = f->cap, timing_cap = f->cap;
    struct emb_trace_thread *items = emb_array_grow(f->th->items, &items_cap, need, sizeof *items);
    if (items == NULL)
        return -1;
    f->th->items = items;
    struct timing *timing = emb_array_grow(f->timing, &timing_cap, need, sizeof *timing);
    if (timing == NULL)
        return -1;
    f->timing = timing;
    f->cap = items_cap < timing_cap ? items_cap : timing_cap;
    return 0;
}

/* The item of a thread index, added on first sight; NULL past the limit or out of memory
 * (*oom set). */
static long item_of(struct follow *f, int64_t index, int *oom)
{
    if (index < 0 || index >= (int64_t)NO_THREAD)
        return -1;
    if (f->slot[index] != 0)
        return (long)f->slot[index] - 1;
    if (f->th->n >= EMB_TRACE_THREADS_MAX) {
        f->th->ignored++;
        return -1;
    }
    if (f->th->n == f->cap && grow(f) != 0) {
        *oom = 1;
        return -1;
    }
    size_t i = f->th->n++;
    f->slot[index] = (uint32_t)i + 1u;
    struct emb_trace_thread *t = &f->th->items[i];
    memset(t, 0, sizeof *t);
    t->index = (uint32_t)index;
    const char *name = emb_trace_names_thread(f->names, t->index);
    if (name != NULL)
        snprintf(t->name, sizeof t->name, "%s", name);
    f->timing[i].running = f->timing[i].blocked = false;
    t->woken_in_irq = -1;
    return (long)i;
}

static void on_switch(struct follow *f, const struct emb_trace_event *e, int *oom)
{
    long from = item_of(f, field_of(e, "from"), oom), to = item_of(f, field_of(e, "to"), oom);
    if (f->th->switches++ == 0)
        f->th->span_ticks = e->ts; /* the start, until the end is known */
    if (from >= 0 && f->timing[from].running) {
        f->th->items[from].run_ticks += e->ts - f->timing[from].since;
        f->th->items[from].switches_out++;
        f->timing[from].running = false;
    }
    if (from >= 0 && !f->timing[from].blocked)
        f->th->items[from].state = EMB_TRACE_THREAD_READY;
    if (to >= 0) {
        f->th->items[to].switches_in++;
        f->th->items[to].state = EMB_TRACE_THREAD_RUNNING;
        f->timing[to].running = true;
        f->timing[to].since = e->ts;
    }
    f->current = to;
}

/* A wait for a mutex: the chain it stands in, its mutexes named. */
static void note_chain(struct follow *f, const struct emb_trace_thread *t, uint64_t ts)
{
    struct emb_trace_pi_chain c;
    if (emb_trace_pi_chain_through(f->th, t, &c) == 0)
        return;
    for (size_t k = 0; k < c.links; k++) {
        const char *name = emb_trace_names_handle(f->names, c.mutex[k]);
        if (name != NULL)
            snprintf(c.mutex_name[k], sizeof c.mutex_name[k], "%s", name);
    }
    emb_trace_pi_chain_note(f->th, &c, ts);
}

static void hold(struct emb_trace_thread *t, uint32_t mutex, uint64_t ts)
{
    for (size_t k = 0; k < t->nheld; k++)
        if (t->held[k] == mutex)
            return; /* handed over at the unlock, taken now */
    if (t->nheld < EMB_TRACE_THREAD_HELD) {
        t->held_since[t->nheld] = ts;
        t->held[t->nheld++] = mutex;
    }
}

static void on_wait(struct follow *f, const struct emb_trace_event *e, bool begin, int *oom)
{
    long i = item_of(f, field_of(e, "thread"), oom);
    if (i < 0)
        return;
    struct emb_trace_thread *t = &f->th->items[i];
    if (begin) {
        f->timing[i].blocked = true;
        f->timing[i].blocked_since = e->ts;
        t->waits++;
        t->state = EMB_TRACE_THREAD_BLOCKED;
        const struct emb_catalog_field *reason = field_named(e->ev, "reason");
        if (reason != NULL)
            emb_trace_field_text(reason, e->payload, t->wait_reason, sizeof t->wait_reason);
        t->wait_object = (uint32_t)field_of(e, "object");
        if (strcmp(t->wait_reason, "mutex") == 0)
            note_chain(f, t, e->ts);
        return;
    }
    t->state = f->timing[i].running ? EMB_TRACE_THREAD_RUNNING : EMB_TRACE_THREAD_READY;
    t->wait_reason[0] = '\0';
    if (f->timing[i].blocked) {
        f->th->items[i].blocked_ticks += e->ts - f->timing[i].blocked_since;
        f->timing[i].blocked = false;
    }
}

/* Who woke a thread (wake, notify_set), made it ready, and which mutexes it holds. */
static void on_other(struct follow *f, const struct emb_trace_event *e, int *oom)
{
    const char *name = e->ev->name;
    if (strcmp(name, "irq_enter") == 0) {
        if (f->nirq < IRQ_NEST)
            f->irqs[f->nirq] = (int32_t)field_of(e, "irq");
        f->nirq++;
    } else if (strcmp(name, "irq_exit") == 0) {
        f->nirq -= f->nirq > 0;
    } else if (strcmp(name, "wake") == 0) {
        long i = item_of(f, field_of(e, "thread"), oom);
        if (i >= 0) {
            f->th->items[i].woken_rec = *e;
            f->th->items[i].woken_in_irq = f->nirq > 0 && f->nirq <= IRQ_NEST ? f->irqs[f->nirq - 1] : -1;
        }
    } else if (strcmp(name, "notify_set") == 0 && field_of(e, "woke") == 1) {
        long i = item_of(f, field_of(e, "target"), oom);
        if (i >= 0)
            f->th->items[i].notified_rec = *e;
    } else if (strcmp(name, "mutex_lock") == 0 && f->current >= 0) {
        hold(&f->th->items[f->current], (uint32_t)field_of(e, "mutex"), e->ts);
    } else if (strcmp(name, "mutex_unlock") == 0 && f->current >= 0) {
        /* A kernel that hands the mutex to its waiter: the waiter holds it from here. */
        long to = item_of(f, field_of(e, "handed_to"), oom);
        if (to >= 0 && to != f->current)
            hold(&f->th->items[to], (uint32_t)field_of(e, "mutex"), e->ts);
        struct emb_trace_thread *t = &f->th->items[f->current];
        uint32_t m = (uint32_t)field_of(e, "mutex");
        for (size_t k = t->nheld; k-- > 0;)
            if (t->held[k] == m) {
                memmove(&t->held[k], &t->held[k + 1], (t->nheld - k - 1) * sizeof t->held[0]);
                memmove(&t->held_since[k], &t->held_since[k + 1], (t->nheld - k - 1) * sizeof t->held_since[0]);
                t->nheld--;
                break;
            }
    }
}

int emb_trace_threads_compute(const struct emb_trace *t, struct emb_trace_threads *out)
{
    memset(out, 0, sizeof *out);
    struct follow f = {.th = out, .names = emb_trace_names_build(t), .current = -1,
                       .slot = calloc(NO_THREAD, sizeof(uint32_t))};
    /* One pass in time order: a streaming decode keeps no records. */
    struct emb_trace_cursor *cur = emb_trace_cursor_open(t);
    int oom = f.names == NULL || f.slot == NULL || cur == NULL;
    uint64_t start = 0, last = 0;
    for (const struct emb_trace_event *e; !oom && (e = emb_trace_cursor_next(cur)) != NULL;) {
        if (e->type != EMB_TREC_EVENT)
            continue;
        last = e->ts;
        if (strcmp(e->ev->name, "switch") == 0) {
            if (out->switches == 0)
                start = e->ts;
            on_switch(&f, e, &oom);
        } else if (out->switches > 0 && strcmp(e->ev->name, "wait_begin") == 0) {
            on_wait(&f, e, true, &oom);
        } else if (out->switches > 0 && strcmp(e->ev->name, "wait_end") == 0) {
            on_wait(&f, e, false, &oom);
        } else if (out->switches > 0) {
            on_other(&f, e, &oom);
        }
    }
    out->running = f.current >= 0 && !oom ? (int64_t)out->items[f.current].index : -1;
    for (size_t i = 0; i < out->n && !oom; i++)
        if (f.timing[i].running)
            out->items[i].run_ticks += last - f.timing[i].since;
    out->span_ticks = out->switches ? last - start : 0;
    for (size_t i = 0; i < out->n && !oom; i++) {
        struct emb_trace_thread *x = &out->items[i];
        x->woken_by = x->woken_rec.ev != NULL ? &x->woken_rec : NULL;
        x->notified_by = x->notified_rec.ev != NULL ? &x->notified_rec : NULL;
    }
    emb_trace_cursor_close(cur);
    emb_trace_names_free((struct emb_trace_names *)f.names);
    free(f.slot);
    free(f.timing);
    if (oom) {
        emb_trace_threads_free(out);
        return -1;
    }
    return 0;
}

void emb_trace_threads_free(struct emb_trace_threads *th)
{
    free(th->items);
    memset(th, 0, sizeof *th);
}

const struct emb_trace_thread *emb_trace_thread_find(const struct emb_trace_threads *th, uint32_t index)
{
    for (size_t i = 0; i < th->n; i++)
        if (th->items[i].index == index)
            return &th->items[i];
    return NULL;
}

const char *emb_trace_thread_state_name(enum emb_trace_thread_state s)
{
    static const char *const names[] = {"unknown", "running", "ready", "blocked"};
    return (unsigned)s < 4u ? names[s] : "?";
}

double emb_trace_thread_load(const struct emb_trace_threads *th, const struct emb_trace_thread *t)
{
    return th->span_ticks ? (double)t->run_ticks / (double)th->span_ticks : 0.0;
}
