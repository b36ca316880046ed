/* The Cortex-M benchmark's loops (bench/cortex_m.sh, docs/benchmarks.md "Cortex-M"). */
#ifndef BENCH_CM_H
#define BENCH_CM_H

#include <stdint.h>

/* Hides the loop counter from the optimiser without touching memory. */
#define BENCH_OPAQUE(x) __asm__ __volatile__("" : "+r"(x))

void bench_cm_trace_on(uint32_t n);
void bench_cm_trace_out(uint32_t n);
void bench_cm_log_on(uint32_t n);
void bench_cm_log_out(uint32_t n);

#endif /* BENCH_CM_H */
