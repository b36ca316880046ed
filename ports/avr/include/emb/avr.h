/* The AVR port's application interface (ports/avr, docs/porting.md): start-up, the UART
 * the plain-text log writes to, and the fault path that leaves the v2 crash record in
 * `.noinit` and resets through the watchdog. */
#ifndef EMB_AVR_H
#define EMB_AVR_H

#include <stdint.h>

#include <emb/status.h>
#include <emb/trace.h>

struct emb_avr_config {
    uint32_t cpu_hz;               /* F_CPU: the UART's baud divisor and the tick timer */
    uint32_t baud;                 /* USART0, 8N1 */
    struct emb_trace_ring *ring;   /* NULL: no trace (the tiny default) */
    uint8_t *ring_buf;             /* packets * CONFIG_EMB_TRACE_PACKET_SIZE, aligned */
    uint32_t *ring_commit;         /* packets words */
    uint32_t ring_packets;
    uint32_t classes;              /* run-time class mask */
};

/* The tick rate: timer 0 in CTC mode interrupts at this rate, and the tick count is the
 * trace and log clock. */
#define EMB_AVR_TICK_HZ 1000u

/* Sets up USART0 and the log output, timer 0 and its tick, the ring when given, and the
 * crash record region in `.noinit` (the record of the previous run stays readable through
 * emb_crash_record_get()). Enables interrupts. */
emb_status emb_avr_start(const struct emb_avr_config *c);

/* Makes `ring` this CPU's deferred log ring (emb_avr_log_ring) and lists it in the
 * registry, where the reduced descriptor's log section points. */
struct emb_log_ring;
void emb_avr_set_log_ring(struct emb_log_ring *ring);

/* The chip's reset cause (MCUSR) as it was at start; the port clears the register. */
uint8_t emb_avr_reset_cause(void);

/* Writes bytes to USART0, polling. */
void emb_avr_uart_write(const uint8_t *bytes, uint32_t len);

/* Records a fault of class `fault_class` at the caller (its return address), writes the
 * v2 crash record and resets the chip through the watchdog. Does not return. */
void emb_avr_fault(uint8_t fault_class, uint8_t code) __attribute__((noreturn));

#endif /* EMB_AVR_H */
