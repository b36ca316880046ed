/* The hooks a kernel (or a bare-metal main loop) calls. They record the trace events of
 * what happened and keep per-context state (interrupt nesting for the event flags; the
 * one-shot window's arming frame; the monitors' open intervals and the statistics). A
 * port's thread, mutex and timer wrappers call them; bare-metal firmware calls them from
 * its interrupts and main loop. */
#ifndef EMB_HOOKS_H
#define EMB_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/port.h>

#ifdef __cplusplus
extern "C" {
#endif

/* First and last thing an interrupt handler (a signal handler on the native port) does.
 * Events recorded in between carry the interrupt kind and nesting depth in their flags;
 * the interval is the ISR(irq) monitor's, opened by the handler that called enter. */
void emb_isr_enter(uint16_t irq);
void emb_isr_exit(uint16_t irq, bool switched);

/* Marks the start and end of frame `frame` of the main loop. A window armed at this frame
 * starts recording here (and records window_armed first). */
void emb_frame_start(uint32_t frame);
void emb_frame_end(uint32_t frame);

/* The interrupt lock: masks interrupts (blocks signals on the native port) and opens the
 * IRQ_LOCK monitor's interval, whose opener is the caller. Nests: the outermost pair is
 * the interval. Returns what emb_irq_unlock() restores. */
emb_port_irq_state emb_irq_lock(void);
void emb_irq_unlock(emb_port_irq_state state);

/* A kernel calls these when it locks and unlocks its scheduler: they record sched_lock and
 * sched_unlock(duration) and the SCHED_LOCK monitor (opener: the caller). Nest. */
void emb_sched_lock(void);
void emb_sched_unlock(void);

/* The CPU has nothing to run from enter to exit: idle_enter and idle_exit events and the
 * idle residency of the CPU statistics. */
void emb_idle_enter(void);
void emb_idle_exit(void);

#ifdef __cplusplus
}
#endif

#endif /* EMB_HOOKS_H */
