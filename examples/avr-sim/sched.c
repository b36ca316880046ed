/* The AVR example with the `sched` class (ports/avr, tiny profile with
 * CONFIG_EMB_TRACE_CLASSES=0x1u): an ATmega328P at 16 MHz under simavr. It records
 * FW_SWITCHES switch events (from i to i + 1), a tick apart every 8, into a snapshot ring
 * of 2 packets of 256 bytes, which keeps the newest and counts the rest as discarded (the
 * slow path walks each recycled packet with the catalogue's event sizes, which the port
 * keeps in flash). Then it writes what the ring holds over USART0 as a trace stream file
 * (docs/formats/trace.md: the stream header, then the packets) and stops (sleep with
 * interrupts off, which ends simavr). tests/sim/avr_sched.sh decodes the UART's bytes. */
#include <avr/interrupt.h>
#include <avr/sleep.h>

#include <emb/avr.h>
#include <emb/trace_events.h>

#define FW_SWITCHES 100u
#define PACKETS 2u

static struct emb_trace_ring ring;
static uint8_t ring_buf[PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE]
    __attribute__((aligned(CONFIG_EMB_TRACE_PACKET_SIZE)));
static uint32_t ring_commit[PACKETS];

__attribute__((noreturn)) static void stop(void)
{
    cli();
    sleep_enable();
    for (;;)
        sleep_cpu();
}

static void next_tick(void)
{
    uint32_t now = (uint32_t)emb_port_timestamp();
    while ((uint32_t)emb_port_timestamp() == now) {
    }
}

static void send_packet(void *arg, const struct emb_trace_ring *r, const uint8_t *packet,
                        uint32_t size)
{
    (void)arg;
    (void)r;
    emb_avr_uart_write(packet, size);
}

/* The stream header (one context: this CPU) and the packets, on the stack: the run is
 * over, nothing else needs it. */
static void send_trace(void)
{
    uint8_t header[EMB_TSF_HEADER_BYTES(1)];
    uint8_t scratch[CONFIG_EMB_TRACE_PACKET_SIZE];
    const struct emb_tsf_info info = {
        .catalog_checksum = EMB_TRACE_CATALOG_CHECKSUM, .packet_size = sizeof scratch,
        .clock_hz = emb_port_timestamp_hz(), .pointer_size = 2u, .port = EMB_PORT_NAME,
    };
    const struct emb_tsf_context cpu = {
        .id = 0u, .kind = EMB_CONTEXT_CPU, .discarded = ring.discarded, .name = "avr",
    };
    size_t n = emb_tsf_encode_header(header, sizeof header, &info, &cpu, 1u);
    emb_avr_uart_write(header, (uint32_t)n);
    (void)emb_trace_ring_snapshot(&ring, scratch, send_packet, (void *)0);
}

int main(void)
{
    const struct emb_avr_config config = {
        .cpu_hz = F_CPU, .baud = 38400u, .ring = &ring, .ring_buf = ring_buf,
        .ring_commit = ring_commit, .ring_packets = PACKETS, .classes = 1u,
    };
    if (emb_avr_start(&config) != EMB_OK)
        stop();
    for (uint16_t i = 0; i < FW_SWITCHES; i++) {
        if (i % 8u == 0u)
            next_tick();
        EMB_TRACE_switch(i, (uint16_t)(i + 1u), 0u);
    }
    (void)emb_trace_flush(&ring);
    send_trace();
    stop();
}
