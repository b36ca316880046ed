/* The Cortex-M port's set-up calls. */
#ifndef EMB_CORTEX_M_H
#define EMB_CORTEX_M_H

#include <stdint.h>

#include <emb/status.h>
#include <emb/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts the cycle counter and makes `ring` (over `buf` and `commit`) the CPU's ring.
 * `cpu_hz` is the core clock, the trace clock's frequency. */
emb_status emb_cm_init(uint32_t cpu_hz, const uint8_t uuid[16], enum emb_trace_mode mode,
                       uint32_t classes, struct emb_trace_ring *ring, uint8_t *buf,
                       uint32_t *commit, uint32_t packets);

struct emb_log_ring;

/* Makes `ring` (over `buf`, EMB_LOG_RING_BUF_SIZE(size) bytes) the CPU's log ring, after
 * emb_log_init()'s check of the metadata region. A worker, an idle loop or a transport
 * drains it with emb_log_drain(). */
emb_status emb_cm_log_init(struct emb_log_ring *ring, uint8_t *buf, uint32_t size);

#ifdef __cplusplus
}
#endif

#endif /* EMB_CORTEX_M_H */
