/* LTTng-UST tracepoint provider for the benchmark peer: the same two u32 fields as the
 * catalogue's work_start. `work_start` is enabled by bench/trace.sh's session;
 * `work_start_idle` is identical and never enabled, for the not-traced cost. */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER emb_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(EMB_BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define EMB_BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(emb_bench, work_start,
    TP_ARGS(uint32_t, item, uint32_t, latency),
    TP_FIELDS(
        ctf_integer(uint32_t, item, item)
        ctf_integer(uint32_t, latency, latency)))

TRACEPOINT_EVENT(emb_bench, work_start_idle,
    TP_ARGS(uint32_t, item, uint32_t, latency),
    TP_FIELDS(
        ctf_integer(uint32_t, item, item)
        ctf_integer(uint32_t, latency, latency)))

#endif /* EMB_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
