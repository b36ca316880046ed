/* The AVR example (ports/avr, tiny profile): an ATmega328P at 16 MHz under simavr. The
 * first run logs through the same call sites as every port (plain text on USART0, tick
 * timestamps), records `sched` events when the class is built in, then faults on
 * purpose; the port writes the v2 crash record into `.noinit` and the watchdog resets
 * the chip. The second run finds the record, says so, and stops (sleep with interrupts
 * off, which ends simavr). tests/sim/avr_sim.sh reads the UART and the record. */
#include <avr/interrupt.h>
#include <avr/sleep.h>

#include <emb/avr.h>
#include <emb/crash.h>
#include <emb/log.h>
#include <emb/trace_events.h>

EMB_LOG_MODULE_DEFINE(app, EMB_LOG_LEVEL_INF);

#if CONFIG_EMB_TRACE_CLASSES & 1u
#define EMB__PACKETS 2u
static struct emb_trace_ring ring;
static uint8_t ring_buf[EMB__PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE] __attribute__((aligned(CONFIG_EMB_TRACE_PACKET_SIZE)));
static uint32_t ring_commit[EMB__PACKETS];
#endif

static void stop(void)
{
    cli();
    sleep_enable();
    sleep_cpu();
}

static void busy_ticks(uint32_t ticks)
{
    uint32_t until = (uint32_t)emb_port_timestamp() + ticks;
    while ((int32_t)((uint32_t)emb_port_timestamp() - until) < 0) {
    }
}

int main(void)
{
    const struct emb_avr_config config = {
        .cpu_hz = F_CPU, .baud = 38400u,
#if CONFIG_EMB_TRACE_CLASSES & 1u
        .ring = &ring, .ring_buf = ring_buf, .ring_commit = ring_commit,
        .ring_packets = EMB__PACKETS, .classes = 1u,
#endif
    };
    if (emb_avr_start(&config) != EMB_OK)
        stop();
    const uint8_t *record;
    uint32_t length;
    if (emb_crash_record_get(&record, &length) == EMB_OK) {
        EMB_LOG_WRN(app, "crash record %u B, MCUSR %02x", (unsigned)length,
                    (unsigned)emb_avr_reset_cause());
        stop();
    }
    EMB_LOG_INF(app, "avr up, %u Hz tick", (unsigned)EMB_AVR_TICK_HZ);
    for (uint16_t i = 0; i < 3u; i++) {
        EMB_TRACE_switch(i, (uint16_t)(i + 1u), 0u);
        busy_ticks(2u);
        EMB_LOG_INF(app, "step %u of %d, value %d", (unsigned)i, 3, -7 * (int)i);
    }
    EMB_LOG_ERR(app, "faulting on purpose");
    emb_avr_fault(EMB_FAULT_SOFTWARE, 42u);
}
