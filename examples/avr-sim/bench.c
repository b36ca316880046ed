/* Cycles per recording call on the ATmega328P, counted by simavr (bench/avr.sh): each
 * loop is bracketed by rising edges of PB0, whose cycle counts avr_run logs. N two-word
 * events (user_event(id, a, b), the `user` class built in), N log calls with two
 * arguments into an output that discards the line (the formatting alone), N into USART0
 * (formatting and the wire at 38400 baud), and an empty loop of the same shape; the
 * difference over N is what one call costs. Built with BENCH_PRINTF, the same line goes
 * through avr-libc's printf instead, for comparison; with BENCH_DEFERRED (the deferred
 * log, CONFIG_EMB_LOG_TEXT=0) the third loop records into a RAM ring and the fourth drains
 * the N records over USART0 as log frames. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>

#include <emb/avr.h>
#include <emb/log.h>
#include <emb/trace_events.h>

#ifdef BENCH_PRINTF
#include <stdio.h>
#endif

EMB_LOG_MODULE_DEFINE(bench, EMB_LOG_LEVEL_INF);

#define N 32u
#define PACKETS 2u
static struct emb_trace_ring ring;
static uint8_t ring_buf[PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE] __attribute__((aligned(CONFIG_EMB_TRACE_PACKET_SIZE)));
static uint32_t ring_commit[PACKETS];

static void mark(void)
{
    PORTB |= 1u;
    PORTB &= (uint8_t)~1u;
}

#ifdef BENCH_DEFERRED
/* The deferred log (CONFIG_EMB_LOG_TEXT=0): records into a ring with room for all N. */
#define LOG_SIZE 1024u
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(LOG_SIZE)] __attribute__((aligned(4)));
static struct emb_log_ring log_ring;
#endif

#ifdef BENCH_PRINTF
static int put(char c, FILE *f)
{
    (void)f;
    emb_avr_uart_write((const uint8_t *)&c, 1u);
    return 0;
}

static int put_discard(char c, FILE *f)
{
    (void)c;
    (void)f;
    return 0;
}

static FILE uart_file = FDEV_SETUP_STREAM(put, NULL, _FDEV_SETUP_WRITE);
static FILE null_file = FDEV_SETUP_STREAM(put_discard, NULL, _FDEV_SETUP_WRITE);
/* The line the plain-text log writes: tick time, level, module, file:line, message. */
#define LINE(f, i) fprintf(f, "%lu.%06u INF bench %s:%u  value %u of %u\n", 0ul, 0u, __FILE__, \
                           (unsigned)__LINE__, (unsigned)(i), (unsigned)N)
#else
#ifndef BENCH_DEFERRED
static emb_status discard(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    (void)bytes;
    (void)len;
    return EMB_OK;
}
#endif

static emb_status uart(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    emb_avr_uart_write(bytes, len);
    return EMB_OK;
}
#endif

/* Marks: | empty loop | events | lines discarded | lines on the UART | */
static void loops(void)
{
    mark();
    for (uint8_t i = 0; i < N; i++)
        __asm__ __volatile__("" ::"r"(i) : "memory");
    mark();
    for (uint8_t i = 0; i < N; i++) {
        EMB_TRACE_user_event(1u, i, i);
        __asm__ __volatile__("" ::"r"(i) : "memory");
    }
    mark();
#ifdef BENCH_PRINTF
    for (uint8_t i = 0; i < N; i++)
        LINE(&null_file, i);
    mark();
    for (uint8_t i = 0; i < N; i++)
        LINE(&uart_file, i);
#elif defined(BENCH_DEFERRED)
    for (uint8_t i = 0; i < N; i++)
        EMB_LOG_INF(bench, "value %u of %u", (unsigned)i, (unsigned)N);
    mark();
    const struct emb_log_output uart_output = {uart, (void *)0};
    while (emb_log_drain(&log_ring, &uart_output, (uint32_t *)0) == EMB_E_BUSY) {
    }
#else
    const struct emb_log_output null_output = {discard, (void *)0};
    emb_log_set_output(&null_output);
    for (uint8_t i = 0; i < N; i++)
        EMB_LOG_INF(bench, "value %u of %u", (unsigned)i, (unsigned)N);
    mark();
    const struct emb_log_output uart_output = {uart, (void *)0};
    emb_log_set_output(&uart_output);
    for (uint8_t i = 0; i < N; i++)
        EMB_LOG_INF(bench, "value %u of %u", (unsigned)i, (unsigned)N);
#endif
    mark();
}

int main(void)
{
    const struct emb_avr_config config = {
        .cpu_hz = F_CPU, .baud = 38400u, .ring = &ring, .ring_buf = ring_buf,
        .ring_commit = ring_commit, .ring_packets = PACKETS, .classes = 1ul << EMB_TRACE_CLASS_USER,
    };
    DDRB |= 1u;
    if (emb_avr_start(&config) != EMB_OK)
        return 0;
#ifdef BENCH_DEFERRED
    if (emb_log_init() != EMB_OK ||
        emb_log_ring_init(&log_ring, 0u, EMB_CONTEXT_CPU, log_buf, LOG_SIZE) != EMB_OK)
        return 0;
    emb_avr_set_log_ring(&log_ring);
    const struct emb_log_output uart_output = {uart, (void *)0};
    const struct emb_log_identity id = {(const uint8_t *)0, 0u};
    (void)emb_log_write_hello(&uart_output, &id); /* so that `emb log` reads the drain */
#endif
    loops();
    cli();
    sleep_enable();
    sleep_cpu();
    for (;;) {
    }
}
