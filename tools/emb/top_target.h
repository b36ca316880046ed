/* What `emb top` reads from the target itself beside the trace: the debug descriptor,
 * through a QEMU guest's machine protocol (QMP, read while the guest runs, never halting
 * it): every thread's stack high-water (the kernel's layout block: its stack and the
 * paint the kernel laid), and each ring's fill and its own drop count (the trace rings
 * of the contexts, the log rings).
 *
 * The reads run on a thread of their own, one every interval: a source that is a link of
 * the same guest (a UART into a socket) must be drained while QMP is waited for, or a
 * guest blocked writing to its link would hold QEMU's main loop, which serves QMP. Each
 * view takes the latest figures (top_target_apply). */
#ifndef EMB_TOP_TARGET_H
#define EMB_TOP_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "live_model.h"
#include "problem.h"

struct top_target;

/* Connects to QMP at `qmp` (a Unix socket or HOST:PORT), finds the descriptor of the
 * firmware `elf` and starts reading it every `interval_ms`. NULL after reporting why not. */
struct top_target *top_target_open(const char *qmp, const char *elf, uint64_t interval_ms,
                                   struct emb_problems *problems);
/* The latest figures into the model; with `fresh`, first waits (a few seconds at most)
 * for a read that started after this call. False, after reporting why, when the reading
 * failed (it stops then). */
bool top_target_apply(struct top_target *t, struct emb_live_model *model, bool fresh,
                      struct emb_problems *problems);
void top_target_close(struct top_target *t);

#endif /* EMB_TOP_TARGET_H */
