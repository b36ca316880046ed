/* The AVR port's inline half of the port contract (include/emb/port.h), for an 8-bit
 * ATmega (ATmega328P under simavr) in the tiny profile (docs/profiles.md).
 *
 * One context: the main loop and its interrupts record into one ring, an interrupt that
 * preempts a producer mid-record being the nested producer the ring protocol is built
 * for. The AVR has no atomic read-modify-write at all: a context-local update masks
 * interrupts (SREG's I bit) around the load and the store, and publication is a plain
 * store (one core, in order: a compiler barrier orders it). The clock is the kernel tick
 * (SPEC-015 §9: tiny has tick timestamps), a 32-bit count the port's timer interrupt
 * advances, read with interrupts masked because the AVR reads it a byte at a time. */
#ifndef EMB_PORT_IMPL_H
#define EMB_PORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/config.h>

#if !defined(__AVR__)
#error "the avr port is for 8-bit AVR parts"
#endif

#define EMB_PORT_NAME "avr/tick"

/* The catalogue's table of event sizes in flash: constant data is copied to RAM on an AVR,
 * and the slow path that reads it can afford an LPM per event (emb/port.h). */
#include <avr/pgmspace.h>
#define EMB_PORT_ROM PROGMEM
#define emb_port_rom_read8(p) pgm_read_byte(p)
#define EMB_PORT_CONTEXTS_MAX 1u

struct emb_trace_ring;
struct emb_log_ring;

/* The tick count and the running context's rings (ports/avr/avr.c). */
extern volatile uint32_t emb_avr_ticks;
extern struct emb_trace_ring *emb_avr_ring;
extern struct emb_log_ring *emb_avr_log_ring;

/* ---- Critical sections: SREG, whose bit 7 is the global interrupt enable ---- */

typedef uint8_t emb_port_irq_state;

static inline emb_port_irq_state emb_port_irq_save(void)
{
    uint8_t sreg;
    __asm__ __volatile__("in %0, __SREG__\n\tcli" : "=r"(sreg)::"memory");
    return sreg;
}

static inline void emb_port_irq_restore(emb_port_irq_state state)
{
    __asm__ __volatile__("out __SREG__, %0" ::"r"(state) : "memory");
}

/* ---- The clock: the tick ---- */

static inline uint64_t emb_port_timestamp(void)
{
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t t = emb_avr_ticks;
    emb_port_irq_restore(s);
    return t;
}

static inline struct emb_trace_ring *emb_port_trace_ring(void)
{
    return emb_avr_ring;
}

static inline struct emb_log_ring *emb_port_log_ring(void)
{
    return emb_avr_log_ring;
}

/* ---- Context-local atomics: a load and a store with interrupts masked ---- */

static inline bool emb_port_local_cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    emb_port_irq_state s = emb_port_irq_save();
    bool ok = *(volatile uint32_t *)p == expected;
    if (ok)
        *(volatile uint32_t *)p = desired;
    emb_port_irq_restore(s);
    return ok;
}

static inline void emb_port_local_add32_release(uint32_t *p, uint32_t v)
{
    emb_port_irq_state s = emb_port_irq_save();
    *(volatile uint32_t *)p += v;
    emb_port_irq_restore(s);
}

/* A 32-bit load or store is four byte accesses: masked, so an interrupt never sees half. */
static inline uint32_t emb_port_load32_acquire(const uint32_t *p)
{
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t v = *(const volatile uint32_t *)p;
    emb_port_irq_restore(s);
    return v;
}

static inline void emb_port_store32_release(uint32_t *p, uint32_t v)
{
    emb_port_irq_state s = emb_port_irq_save();
    *(volatile uint32_t *)p = v;
    emb_port_irq_restore(s);
}

#endif /* EMB_PORT_IMPL_H */
