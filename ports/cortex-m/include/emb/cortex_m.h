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

#ifdef __cplusplus
}
#endif

#endif /* EMB_CORTEX_M_H */
