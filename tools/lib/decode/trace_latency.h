/* Latency metrics from a decoded trace of a kernel (SPEC-015 §8), in trace clock ticks:
 *   isr_to_thread     a wake from an interrupt handler to the woken thread's wait_end,
 *                     its first event once it runs again
 *   block_to_switch   a thread's wait_begin to the switch away from it (the switch path
 *                     entered from a thread: PendSV's entry and the choice)
 *   preempt_to_switch an irq_exit that asked for a switch to the switch (the tail-chained
 *                     switch after an interrupt)
 *   switch_to_resume  a switch to a thread that was blocked to its wait_end (the restore
 *                     path back into the thread)
 *   irq               each interrupt handler, irq_enter to irq_exit (nesting included)
 *   sched_lock        sched_unlock's duration field
 * What a trace cannot give: the time an interrupt was raised (interrupt latency) and the
 * interrupt-lock monitor's worst case unless it crossed its threshold (irq_lock_max);
 * those come from the monitors (emb desc). */
#ifndef EMB_HOST_TRACE_LATENCY_H
#define EMB_HOST_TRACE_LATENCY_H

#include <stdint.h>

#include "trace_decode.h"

struct emb_latency_stat {
    uint64_t count, min, max, sum;
};

enum emb_latency_metric {
    EMB_LAT_ISR_TO_THREAD,
    EMB_LAT_BLOCK_TO_SWITCH,
    EMB_LAT_PREEMPT_TO_SWITCH,
    EMB_LAT_SWITCH_TO_RESUME,
    EMB_LAT_IRQ,
    EMB_LAT_SCHED_LOCK,
    EMB_LAT_IRQ_LOCK_MAX,
    EMB_LAT_COUNT,
};

struct emb_trace_latency {
    struct emb_latency_stat m[EMB_LAT_COUNT];
};

/* Returns 0, or -1 when out of memory. */
int emb_trace_latency_compute(const struct emb_trace *t, struct emb_trace_latency *out);
const char *emb_latency_metric_name(enum emb_latency_metric m);

#endif /* EMB_HOST_TRACE_LATENCY_H */
