/* The bare baseline: the least a per-thread ring write can do. Same clock read as the
 * native port, a 16-byte record shaped like a work_start event, and a release store of
 * the index a reader would acquire. No reservation protocol, no packets, no nesting. */
#include <string.h>

#include <emb/config.h>
#include <emb/port.h>

#include "bench.h"

_Thread_local struct bench_bare_ring *bench_bare_ring;

EMB_NOINLINE void bench_loop_bare(uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        struct bench_bare_ring *r = bench_bare_ring;
        uint32_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
        uint32_t rec[4] = {(uint32_t)emb_port_timestamp(), 0x00C2u, i, seed + i};
        memcpy(r->buf + (head & (BENCH_BARE_BYTES - 1u)), rec, sizeof rec);
        __atomic_store_n(&r->head, head + (uint32_t)sizeof rec, __ATOMIC_RELEASE);
    }
}

/* The clock read alone, to show how much of the bare write (and of an event) it is. */
EMB_NOINLINE void bench_loop_clock(uint32_t n, uint32_t seed)
{
    (void)seed;
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        uint32_t t = (uint32_t)emb_port_timestamp();
        BENCH_OPAQUE(t);
    }
}
