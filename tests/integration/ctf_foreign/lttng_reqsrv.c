/* A request server traced with LTTng-UST, for the foreign-CTF tests: it serves REQUESTS
 * requests, each a request_begin, one query, a cache_miss every fifth request and a
 * request_end, with jitter in the query's latency_us field and in the time between events
 * (seeded by JITTER). With SEED_AT >= 0, request SEED_AT's query returns one row more and
 * its cache_miss happens though it would not: the difference `emb diff` must name first.
 *
 * usage: lttng_reqsrv REQUESTS SEED_AT JITTER */
#define _POSIX_C_SOURCE 200809L
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "reqsrv_tp.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned next_random(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 16;
}

/* Outside the function, so no compiler drops the loop or calls the variable unused. */
static volatile unsigned spin_sink;

static void spin(unsigned units)
{
    for (unsigned i = 0; i < units * 50u; i++)
        spin_sink += i;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: lttng_reqsrv REQUESTS SEED_AT JITTER\n");
        return 2;
    }
    int requests = atoi(argv[1]), seed_at = atoi(argv[2]);
    unsigned jitter = (unsigned)strtoul(argv[3], NULL, 10) | 1u;
    for (int i = 0; i < requests; i++) {
        lttng_ust_tracepoint(reqsrv, request_begin, i, i % 3 ? "/item" : "/cart");
        spin(next_random(&jitter) % 64u);
        unsigned rows = (unsigned)(i * 7 % 13) + (i == seed_at);
        lttng_ust_tracepoint(reqsrv, query, i, rows, 100u + next_random(&jitter) % 50u);
        if (i % 5 == 0 || i == seed_at)
            lttng_ust_tracepoint(reqsrv, cache_miss, i, 0x1000u + (uint64_t)i);
        spin(next_random(&jitter) % 64u);
        lttng_ust_tracepoint(reqsrv, request_end, i, 0);
    }
    return 0;
}
