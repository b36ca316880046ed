/* LTTng-UST's tracepoint with the same two u32 fields, in the same loop. */
#include "lttng_tp.h"

#include <emb/config.h>

#include "bench.h"

EMB_NOINLINE void bench_loop_lttng_traced(uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        tracepoint(emb_bench, work_start, i, seed + i);
    }
}

EMB_NOINLINE void bench_loop_lttng_idle(uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        tracepoint(emb_bench, work_start_idle, i, seed + i);
    }
}

int bench_lttng_traced_enabled(void)
{
    return tracepoint_enabled(emb_bench, work_start) ? 1 : 0;
}

int bench_lttng_idle_enabled(void)
{
    return tracepoint_enabled(emb_bench, work_start_idle) ? 1 : 0;
}
