/* The benchmark's loop functions: each runs `n` events (or none, for the empty loop) and
 * is noinline in a translation unit of its own, so callgrind attributes its instructions
 * and no variant's code generation leaks into another's. */
#ifndef EMB_BENCH_H
#define EMB_BENCH_H

#include <stdint.h>

/* Hides the loop counter from the optimiser without touching memory, so no loop is
 * deleted or vectorised and every variant pays the same loop overhead. */
#define BENCH_OPAQUE(x) __asm__ __volatile__("" : "+r"(x))

/* The catalogue's work_start(item, latency) call site, compiled four ways (loop_emb.c). */
void bench_loop_enabled(uint32_t n, uint32_t seed);      /* run-time class on */
void bench_loop_disabled(uint32_t n, uint32_t seed);     /* same code, class bit cleared */
void bench_loop_compiled_out(uint32_t n, uint32_t seed); /* CONFIG_EMB_TRACE_CLASSES=0 */
void bench_loop_locked(uint32_t n, uint32_t seed);       /* port atomics with the lock prefix */
void bench_loop_empty(uint32_t n, uint32_t seed);        /* the loop alone */

/* The bare ring write: a timestamp, one 16-byte store, an index bump and a release store
 * of the index (loop_bare.c), into the calling thread's array. */
#define BENCH_BARE_BYTES 65536u
struct bench_bare_ring {
    uint32_t head; /* free-running byte index, published with a release store */
    _Alignas(64) uint8_t buf[BENCH_BARE_BYTES];
};
extern _Thread_local struct bench_bare_ring *bench_bare_ring;
void bench_loop_bare(uint32_t n, uint32_t seed);
void bench_loop_clock(uint32_t n, uint32_t seed); /* the timestamp read alone */

/* LTTng-UST with the same two fields (loop_lttng.c): emb_bench:work_start, which the
 * session enables, and emb_bench:work_start_idle, which it never does. */
void bench_loop_lttng_traced(uint32_t n, uint32_t seed);
void bench_loop_lttng_idle(uint32_t n, uint32_t seed);
int bench_lttng_traced_enabled(void);
int bench_lttng_idle_enabled(void);

#endif /* EMB_BENCH_H */
