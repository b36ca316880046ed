/* Per-thread CPU time and blocked time, from a decoded trace's scheduler events: a
 * thread runs from the switch that names it `to` until the switch that names it `from`
 * (the one running at the end, until the last event), and is blocked from its wait_begin
 * to its wait_end. What `emb trace --summary` shows as each thread's load. */
#ifndef EMB_HOST_TRACE_THREADS_H
#define EMB_HOST_TRACE_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "trace_decode.h"

#define EMB_TRACE_THREADS_MAX 4096u /* threads followed; later ones are counted in `ignored` */

struct emb_trace_thread {
    uint32_t index;
    char name[20];            /* from obj_init, or "" */
    uint64_t run_ticks;       /* clock ticks it ran */
    uint64_t blocked_ticks;   /* wait_begin to wait_end */
    uint64_t switches_in, switches_out, waits;
};

struct emb_trace_threads {
    struct emb_trace_thread *items; /* by first appearance */
    size_t n;
    uint64_t switches;        /* switch events */
    uint64_t span_ticks;      /* from the first switch to the last event */
    uint64_t ignored;         /* events about threads past EMB_TRACE_THREADS_MAX */
};

/* Fills `out` (zeroed first). Returns 0, or -1 when out of memory. A trace without switch
 * events has no threads. */
int emb_trace_threads_compute(const struct emb_trace *t, struct emb_trace_threads *out);
void emb_trace_threads_free(struct emb_trace_threads *th);

/* A thread's share of the span, 0 to 1. */
double emb_trace_thread_load(const struct emb_trace_threads *th, const struct emb_trace_thread *t);

#endif /* EMB_HOST_TRACE_THREADS_H */
