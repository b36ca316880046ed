/* Per-thread CPU time and blocked time, from a decoded trace's scheduler events: a
 * thread runs from the switch that names it `to` until the switch that names it `from`
 * (the one running at the end, until the last event), and is blocked from its wait_begin
 * to its wait_end. What `emb trace --summary` shows as each thread's load. */
#ifndef EMB_HOST_TRACE_THREADS_H
#define EMB_HOST_TRACE_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "trace_decode.h"
#include "trace_pi.h"

#define EMB_TRACE_THREADS_MAX 4096u /* threads followed; later ones are counted in `ignored` */

#define EMB_TRACE_THREAD_HELD 8u

enum emb_trace_thread_state {
    EMB_TRACE_THREAD_UNKNOWN = 0, /* named, never switched */
    EMB_TRACE_THREAD_RUNNING,
    EMB_TRACE_THREAD_READY,       /* switched out, or made ready, not waiting */
    EMB_TRACE_THREAD_BLOCKED,     /* a wait_begin without its wait_end */
};

struct emb_trace_thread {
    uint32_t index;
    char name[20];            /* from obj_init, or "" */
    uint64_t run_ticks;       /* clock ticks it ran */
    uint64_t blocked_ticks;   /* wait_begin to wait_end */
    uint64_t switches_in, switches_out, waits;
    /* As the last event leaves it (a flight recorder: at the fault). */
    enum emb_trace_thread_state state;
    char wait_reason[12];     /* while blocked: wait_begin's reason */
    uint32_t wait_object;
    uint32_t held[EMB_TRACE_THREAD_HELD];   /* mutexes it took (or was handed) and has not given back */
    uint64_t held_since[EMB_TRACE_THREAD_HELD];
    size_t nheld;
    const struct emb_trace_event *woken_by;    /* the last wake event of it, or NULL */
    const struct emb_trace_event *notified_by; /* the last notify_set that woke it, or NULL */
    /* Their copies, which woken_by and notified_by point at: a streaming decode keeps no
     * records (payloads point into the decoded bytes). */
    struct emb_trace_event woken_rec, notified_rec;
    int32_t woken_in_irq;     /* the interrupt that ran when it was last woken; -1 none */
};

struct emb_trace_threads {
    struct emb_trace_thread *items; /* by first appearance */
    size_t n;
    uint64_t switches;        /* switch events */
    uint64_t span_ticks;      /* from the first switch to the last event */
    uint64_t ignored;         /* events about threads past EMB_TRACE_THREADS_MAX */
    int64_t running;          /* the index of the thread running at the end; -1 none */
    /* Priority inheritance chains standing when a thread began to wait for a mutex. */
    struct emb_trace_pi_chain pi[EMB_TRACE_PI_CHAINS];
    size_t npi;
    uint64_t pi_unkept;       /* distinct chains past EMB_TRACE_PI_CHAINS */
    size_t pi_deepest;        /* the most links any of them had */
};

/* Fills `out` (zeroed first). Returns 0, or -1 when out of memory. A trace without switch
 * events has no threads. */
int emb_trace_threads_compute(const struct emb_trace *t, struct emb_trace_threads *out);
void emb_trace_threads_free(struct emb_trace_threads *th);

/* The item of a thread index, or NULL. */
const struct emb_trace_thread *emb_trace_thread_find(const struct emb_trace_threads *th, uint32_t index);
const char *emb_trace_thread_state_name(enum emb_trace_thread_state s);

/* A thread's share of the span, 0 to 1. */
double emb_trace_thread_load(const struct emb_trace_threads *th, const struct emb_trace_thread *t);

#endif /* EMB_HOST_TRACE_THREADS_H */
