/* The port contract: what the library needs from a platform.
 *
 * A port is a directory ports/<name>/ whose include/emb_port_impl.h provides the inline
 * half of this contract and whose sources provide the rest. The build puts exactly one
 * port's include directory on the include path.
 *
 * Inline, in emb_port_impl.h (hot path; each must be a handful of instructions):
 *
 *   uint64_t emb_port_timestamp(void);
 *       Free-running 64-bit time in ticks of emb_port_timestamp_hz(), monotonic within a
 *       context and consistent across contexts.
 *
 *   struct emb_trace_ring *emb_port_trace_ring(void);
 *       The trace ring of the running context (a CPU on a microcontroller, a thread on the
 *       native port). Never NULL: before a context owns a ring this returns a placeholder
 *       (emb_trace_unclaimed_ring) whose bounds force the slow path, which then calls
 *       emb_port_trace_ring_claim().
 *
 *   struct emb_log_ring *emb_port_log_ring(void);
 *       The log ring of the running context, the same way: never NULL, the placeholder
 *       emb_log_unclaimed_ring until the context owns one (emb_port_log_ring_claim()).
 *
 *   bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired);
 *   void emb_port_local_add32_release(uint32_t *p, uint32_t v);
 *       Context-local atomics: indivisible with respect to anything that preempts the caller
 *       on the same context (an interrupt, a signal handler), not with respect to other
 *       CPUs. Like Linux's local_t: on x86-64 one unlocked instruction, on ARMv7-M
 *       LDREX/STREX (an exception clears the monitor), on ARMv6-M interrupt masking.
 *       The add publishes every earlier store of the caller before the new value.
 *
 *   Optional: EMB_PORT_LOCAL_ADD_ONE_INSN, defined when emb_port_local_add32_release() is
 *   one instruction (x86-64): the trace fast path then counts each event in its packet's
 *   tail word, so the slow path reads an overwritten packet's count instead of walking it
 *   (emb/internal/trace_reserve.h). Defined alike for every translation unit.
 *
 *   Optional, when the port defines EMB_PORT_LOCAL_RESERVE: a reservation section, the
 *   fast paths' cheaper form of "load, check, compare-and-swap":
 *
 *   uint32_t emb_port_local_reserve_begin(uint32_t *p, emb_port_reserve_state *s);
 *   bool emb_port_local_reserve_end(uint32_t *p, uint32_t v, emb_port_reserve_state s);
 *   void emb_port_local_reserve_abort(emb_port_reserve_state s);
 *       begin loads *p; end stores v into it and returns true only if nothing preempted
 *       the caller since begin (LDREX ... STREX on ARMv7-M, whose monitor an exception
 *       clears; or interrupts masked from begin to end); abort leaves the section
 *       without storing. Between begin and end, only loads.
 *
 *   bool emb_port_timestamp_low_in(emb_port_reserve_state s, uint32_t high, uint32_t *low);
 *       Inside the reservation section begun with `s`: stores the clock's low word in
 *       *low and returns true when its high word is `high`. May return false spuriously
 *       (the callers then take the slow path, which reads emb_port_timestamp() in full).
 *
 *   uint32_t emb_port_load32_acquire(const uint32_t *p);
 *   void emb_port_store32_release(uint32_t *p, uint32_t v);
 *       Cross-context publication between producers and a consumer.
 *
 *   emb_port_irq_state emb_port_irq_save(void);
 *   void emb_port_irq_restore(emb_port_irq_state s);
 *       Critical section against everything on the current context (masking interrupts,
 *       or blocking signals on the native port). Only used off the hot path.
 *
 *   EMB_PORT_NAME        a string naming the port and variant, e.g. "native-x86_64".
 *   EMB_PORT_CONTEXTS_MAX (optional) the most contexts the port ever has, when it is
 *                        a constant (1 on a single-CPU microcontroller): code for the
 *                        others compiles out.
 *
 * Out of line, in the port's sources:
 */
#ifndef EMB_PORT_H
#define EMB_PORT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct emb_trace_ring;
struct emb_log_ring;

/* Frequency of emb_port_timestamp() in Hz; fixed once the port is initialised. */
uint64_t emb_port_timestamp_hz(void);

/* Wall-clock time at timestamp 0 in nanoseconds since the Unix epoch, or 0 when the
 * platform has no wall clock. Lets a decoder place events on the calendar. */
int64_t emb_port_clock_offset_ns(void);

/* Gives the running context a ring of its own, or returns NULL when none is left (the
 * caller counts the event as lost). Called only from the trace slow path. */
struct emb_trace_ring *emb_port_trace_ring_claim(void);

/* Monitors (CONFIG_EMB_MONITOR or CONFIG_EMB_STATS): the running context's open
 * intervals (interrupt lock, scheduler lock, interrupt nesting). One per CPU on a
 * microcontroller, one per thread on the native port. Never NULL. */
struct emb_monitor_ctx;
struct emb_monitor_ctx *emb_port_monitor_ctx(void);

/* Statistics (CONFIG_EMB_STATS): zeroes the per-thread and per-object counts the port
 * keeps (emb_stats_thread_get() and emb_stats_object_get() are the port's too). */
void emb_port_stats_reset(void);

/* A fault the library raises itself (a monitor's FAULT action): writes a crash record of
 * `fault_class` and `code` with `pc` as the program counter, `value` as its fault_address
 * and `limit` as its lr_or_ra (a monitor: the interval and the threshold, in cycles;
 * docs/formats/crash.md), then stops the system the way the port stops on a fault (reset,
 * or the default action of SIGABRT). */
void emb_port_fault(uint8_t fault_class, uint8_t code, uintptr_t pc, uint32_t value,
                    uint32_t limit);

/* Gives the running context a log ring of its own, or returns NULL when none is left (the
 * caller counts the record as lost). Called only from the log's slow path. */
struct emb_log_ring *emb_port_log_ring_claim(void);

#include <emb_port_impl.h>

/* Where a constant table the library reads only on a slow path (the catalogue's event
 * sizes) lives, and how it is read: a port whose constant data would otherwise take RAM
 * (the AVR) puts it in flash. Default: ordinary constant data. */
#ifndef EMB_PORT_ROM
#define EMB_PORT_ROM
#endif
#ifndef emb_port_rom_read8
#define emb_port_rom_read8(p) (*(p))
#endif

#ifdef __cplusplus
}
#endif

#endif /* EMB_PORT_H */
