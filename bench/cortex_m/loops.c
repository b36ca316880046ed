/* The measured loops of the Cortex-M benchmark (bench/cortex_m.sh). Compiled twice into
 * the benchmark firmware: as is (LOOP_SUFFIX _on), and by loops_out.c with the trace
 * classes and the log compiled out (LOOP_SUFFIX _out), so each call site's configuration
 * is the one of its translation unit. Each loop is a function of its own, noinline. */
#include <emb/log.h>
#include <emb/trace_events.h>

#include "bench_cm.h"

#ifndef LOOP_SUFFIX
#define LOOP_SUFFIX _on
#endif
#define LOOP_CAT(a, b) LOOP_CAT_(a, b)
#define LOOP_CAT_(a, b) a##b
#define LOOP(name) LOOP_CAT(bench_cm_##name, LOOP_SUFFIX)

EMB_LOG_MODULE_DECLARE(bench, EMB_LOG_LEVEL_INF);

/* EMB_TRACE_work_start(item, latency): two u32 fields, a 16-byte event. */
EMB_NOINLINE void LOOP(trace)(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        EMB_TRACE_work_start(i, i + 1u);
    }
}

/* Two int arguments: id, timestamp and 8 bytes of arguments, a 14-byte record. */
EMB_NOINLINE void LOOP(log)(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        EMB_LOG_INF(bench, "sensor %d failed: %d", (int)i, -(int)i);
    }
}
