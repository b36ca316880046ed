/* Priority inheritance chains from a trace's scheduler events: thread A waits for a mutex
 * held by B, which waits for one held by C, and so on (SPEC-015's prio_inherit records
 * each raise; the chain is what ties them). The threads' state as trace_threads follows it
 * (who waits for which mutex, who holds which) is walked up and down from one thread. */
#ifndef EMB_HOST_TRACE_PI_H
#define EMB_HOST_TRACE_PI_H

#include <stddef.h>
#include <stdint.h>

#define EMB_TRACE_PI_LINKS 8u   /* links of a chain followed */
#define EMB_TRACE_PI_CHAINS 32u /* distinct chains kept; later ones are counted only */

struct emb_trace_threads;
struct emb_trace_thread;

/* thread[0] waits for mutex[0], held by thread[1], which waits for mutex[1] ... held by
 * thread[links]. */
struct emb_trace_pi_chain {
    uint32_t thread[EMB_TRACE_PI_LINKS + 1];
    uint32_t mutex[EMB_TRACE_PI_LINKS];
    char mutex_name[EMB_TRACE_PI_LINKS][20]; /* obj_init's name, or "" */
    size_t links;
    uint64_t count;    /* waits that began with the chain standing */
    uint64_t first_ts; /* the first of them */
};

/* The chain through `t` as the threads' state stands: up through the threads waiting
 * for a mutex `t` holds, down through the mutex `t` waits for and its holder. Returns its
 * links (0: `t` is in no chain). Mutex names are left empty. */
size_t emb_trace_pi_chain_through(const struct emb_trace_threads *th, const struct emb_trace_thread *t,
                                  struct emb_trace_pi_chain *out);

/* The distinct chains standing as th leaves the threads (a flight recorder: at the
 * fault), at most `cap` of them into `out`; their number. */
size_t emb_trace_pi_standing(const struct emb_trace_threads *th, struct emb_trace_pi_chain *out, size_t cap);

/* Adds `c` to th's distinct chains (or counts it again). */
void emb_trace_pi_chain_note(struct emb_trace_threads *th, const struct emb_trace_pi_chain *c, uint64_t ts);

/* "sensor(4) -> i2c -> control(3) -> spi -> logger(2)". Returns buf. */
const char *emb_trace_pi_chain_text(const struct emb_trace_threads *th, const struct emb_trace_pi_chain *c,
                                    char *buf, size_t len);

#endif /* EMB_HOST_TRACE_PI_H */
