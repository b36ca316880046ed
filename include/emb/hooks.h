/* The hooks a kernel (or a bare-metal main loop) calls. They record the trace events of
 * what happened and keep per-context state (interrupt nesting for the event flags; the
 * one-shot window's arming frame). A port's thread, mutex and timer wrappers call them;
 * bare-metal firmware calls them from its interrupts and main loop. */
#ifndef EMB_HOOKS_H
#define EMB_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* First and last thing an interrupt handler (a signal handler on the native port) does.
 * Events recorded in between carry the interrupt kind and nesting depth in their flags. */
void emb_isr_enter(uint16_t irq);
void emb_isr_exit(uint16_t irq, bool switched);

/* Marks the start and end of frame `frame` of the main loop. A window armed at this frame
 * starts recording here (and records window_armed first). */
void emb_frame_start(uint32_t frame);
void emb_frame_end(uint32_t frame);

#ifdef __cplusplus
}
#endif

#endif /* EMB_HOOKS_H */
