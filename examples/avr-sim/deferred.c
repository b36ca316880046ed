/* The AVR example with the deferred log (ports/avr, tiny profile with
 * CONFIG_EMB_LOG_TEXT=0): an ATmega328P at 16 MHz under simavr. The call sites are the
 * plain-text example's, but a record holds only the call site's id, the tick timestamp
 * and the arguments; the format strings stay in the ELF (ports/cortex-m/emb_log.ld, an
 * INFO section no memory holds), and `emb log --elf` formats them on the host. The ring
 * is drained as log frames (docs/formats/frame.md) over USART0 after each step; then the
 * firmware stops (sleep with interrupts off, which ends simavr). tests/sim/avr_log.sh
 * decodes what the UART carried. */
#include <avr/interrupt.h>
#include <avr/sleep.h>

#include <emb/avr.h>
#include <emb/log.h>

EMB_LOG_MODULE_DEFINE(app, EMB_LOG_LEVEL_INF);

#define LOG_SIZE 256u
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(LOG_SIZE)] __attribute__((aligned(4)));
static struct emb_log_ring log_ring;

static emb_status uart_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    emb_avr_uart_write(bytes, len);
    return EMB_OK;
}

static const struct emb_log_output uart = {uart_write, (void *)0};

__attribute__((noreturn)) static void stop(void)
{
    cli();
    sleep_enable();
    for (;;)
        sleep_cpu();
}

static void drain(void)
{
    while (emb_log_drain(&log_ring, &uart, (uint32_t *)0) == EMB_E_BUSY) {
    }
}

int main(void)
{
    const struct emb_avr_config config = {.cpu_hz = F_CPU, .baud = 38400u};
    if (emb_avr_start(&config) != EMB_OK || emb_log_init() != EMB_OK ||
        emb_log_ring_init(&log_ring, 0u, EMB_CONTEXT_CPU, log_buf, LOG_SIZE) != EMB_OK)
        stop();
    emb_avr_set_log_ring(&log_ring);
    const struct emb_log_identity id = {(const uint8_t *)0, 0u};
    (void)emb_log_write_hello(&uart, &id);
    EMB_LOG_INF(app, "avr up, %u Hz tick", (unsigned)EMB_AVR_TICK_HZ);
    drain();
    for (uint16_t i = 0; i < 3u; i++) {
        EMB_LOG_INF(app, "step %u of %d, value %d", (unsigned)i, 3, -7 * (int)i);
        EMB_LOG_WRN(app, "long %lu, char %c, text %s", 100000ul * i, 'a' + i, "avr");
        drain();
    }
    EMB_LOG_INF(app, "ring at %p", (void *)&log_ring);
    EMB_LOG_ERR(app, "done");
    drain();
    stop();
}
