/* One work_start call site in a loop. CMakeLists.txt compiles this file once per variant:
 * BENCH_LOOP_FN names the function, CONFIG_EMB_TRACE_CLASSES=0 compiles the call site
 * out, EMB_NATIVE_TSAN gives the port's bus-locked atomics, BENCH_LOOP_EMPTY drops the
 * call site. The emitter is inline, so the call site's configuration is the one that
 * counts. */
#include <emb/trace_events.h>

#include "bench.h"

EMB_NOINLINE void BENCH_LOOP_FN(uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
#ifndef BENCH_LOOP_EMPTY
        EMB_TRACE_work_start(i, seed + i);
#else
        (void)seed;
#endif
    }
}
