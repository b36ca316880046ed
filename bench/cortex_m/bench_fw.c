/* The Cortex-M benchmark firmware (bench/cortex_m.sh), run under
 * `qemu-system-arm -icount shift=0`: one guest instruction is one nanosecond of virtual
 * time, so the CMSDK timer at 25 MHz counts one tick per 40 instructions. Each loop runs
 * N iterations, best of 5 rounds; the script subtracts the empty loop. Prints one line per
 * loop on UART0: "bench NAME TICKS N", then "check ..." lines that say nothing was
 * dropped (a dropped event costs less than a recorded one): the snapshot ring wraps, so
 * every trace event is either held in it or counted as overwritten (its discarded). */
#include <emb/cortex_m.h>
#include <emb/log.h>
#include <emb/port.h>
#include <emb/trace_events.h>

#include "bench_cm.h"
#include "mps2.h"

EMB_LOG_MODULE_DEFINE(bench, EMB_LOG_LEVEL_INF);

#define PACKETS 8u
#define LOG_SIZE (128u * 1024u)
#define N_TRACE 100000u
#define N_LOG 8000u /* a round's records fit the log ring: nothing is dropped */
#define ROUNDS 5

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[PACKETS];
static struct emb_trace_ring ring;
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(LOG_SIZE)];
static struct emb_log_ring log_ring;

#define TIMER1_VALUE (*(volatile uint32_t *)0x40001004u)
#define TIMER1_RELOAD (*(volatile uint32_t *)0x40001008u)
#define TIMER1_CTRL (*(volatile uint32_t *)0x40001000u)

/* The loop alone. */
EMB_NOINLINE static void loop_empty(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        BENCH_OPAQUE(i);
}

/* The bare baseline: a 16-byte record shaped like the event (four plain stores) and the
 * index bump: what writing an event costs with no clock, no reservation, no packets. */
static uint32_t bare_buf[1024];
static uint32_t bare_head;

EMB_NOINLINE static void loop_bare(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        uint32_t h = bare_head;
        uint32_t *p = bare_buf + (h & 1023u);
        p[0] = i;
        p[1] = 0x00C2u;
        p[2] = i;
        p[3] = i + 1u;
        bare_head = h + 4u;
    }
}

/* The clock read alone. */
EMB_NOINLINE static void loop_clock(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        BENCH_OPAQUE(i);
        uint32_t t = (uint32_t)emb_port_timestamp();
        BENCH_OPAQUE(t);
    }
}

static emb_status discard(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    (void)bytes;
    (void)len;
    return EMB_OK;
}

/* Events in the packets the ring still holds: every event here is a 16-byte work_start. */
static uint32_t held_events;
static uint8_t scratch[CONFIG_EMB_TRACE_PACKET_SIZE];

static void count_held(void *arg, const struct emb_trace_ring *r, const uint8_t *packet, uint32_t size)
{
    (void)arg;
    (void)r;
    (void)size;
    held_events += (emb_get_le32(packet + EMB_PKT_OFF_CONTENT_SIZE) / 8u - EMB_PKT_HEADER_SIZE) /
                   EMB_TRACE_SIZE_WORK_START;
}

static void measure(const char *name, void (*fn)(uint32_t), uint32_t n)
{
    static const struct emb_log_output out = {discard, 0};
    uint32_t best = 0xFFFFFFFFu;
    for (int r = 0; r < ROUNDS; r++) {
        emb_log_drain(&log_ring, &out, 0);
        uint32_t t0 = TIMER1_VALUE;
        fn(n);
        uint32_t t1 = TIMER1_VALUE;
        if (t0 - t1 < best)
            best = t0 - t1;
    }
    mps2_uart_puts("bench ");
    mps2_uart_puts(name);
    mps2_uart_puts(" ");
    mps2_uart_dec(best);
    mps2_uart_puts(" ");
    mps2_uart_dec(n);
    mps2_uart_puts("\n");
}

int main(void)
{
    mps2_uart_init();
    TIMER1_CTRL = 0u;
    TIMER1_RELOAD = 0xFFFFFFFFu;
    TIMER1_VALUE = 0xFFFFFFFFu;
    TIMER1_CTRL = 1u; /* enable, no interrupt: a free-running down-counter */
    const struct emb_cm_config cfg = {
        .cpu_hz = MPS2_CPU_HZ,
        .mode = EMB_TRACE_MODE_SNAPSHOT,
        .classes = EMB_TRACE_CLASSES_ALL,
        .ring = &ring,
        .ring_buf = ring_buf,
        .ring_commit = ring_commit,
        .ring_packets = PACKETS,
        .log_ring = &log_ring,
        .log_buf = log_buf,
        .log_size = LOG_SIZE,
    };
    if (emb_cm_start(&cfg) != EMB_OK) {
        mps2_uart_puts("bench: emb_cm_start failed\n");
        mps2_exit(1);
    }
#if defined(BENCH_CM_AUTO_AS_DWT)
    /* QEMU's DWT does not count, so the port chose SysTick. Take the path a core whose
     * counter counts takes in the default build (the same code; the counter reads a
     * constant here, which changes no instruction count). */
    emb_cm.dwt_state = 0u;
    emb_cm.clock_kind = EMB_CM_CLOCK_DWT;
#endif
    mps2_uart_puts("port ");
    mps2_uart_puts(emb_cm_port_name);
    mps2_uart_puts("\n");
    measure("empty", loop_empty, N_TRACE);
    measure("bare", loop_bare, N_TRACE);
    measure("clock", loop_clock, N_TRACE);
    measure("trace", bench_cm_trace_on, N_TRACE);
    measure("trace_out", bench_cm_trace_out, N_TRACE);
    emb_trace_set_classes(EMB_TRACE_CLASSES_ALL & ~(1u << EMB_TRACE_CLASS_WORK));
    measure("trace_off", bench_cm_trace_on, N_TRACE);
    emb_trace_set_classes(EMB_TRACE_CLASSES_ALL);
    measure("empty_log", loop_empty, N_LOG);
    measure("log", bench_cm_log_on, N_LOG);
    measure("log_out", bench_cm_log_out, N_LOG);
    emb_log_set_level(bench, EMB_LOG_LEVEL_ERR);
    measure("log_off", bench_cm_log_on, N_LOG);
    emb_trace_flush(&ring);
    (void)emb_trace_ring_snapshot(&ring, scratch, count_held, 0);
    /* Without the count of overwritten events (CONFIG_EMB_TRACE_COUNT_OVERWRITTEN 0)
     * discarded counts drops alone, and there must be none. */
    mps2_uart_puts("check trace_unaccounted ");
    mps2_uart_dec(CONFIG_EMB_TRACE_COUNT_OVERWRITTEN ? ROUNDS * N_TRACE - held_events - ring.discarded
                                                     : ring.discarded);
    mps2_uart_puts("\ncheck trace_discarded ");
    mps2_uart_dec(ring.discarded);
    mps2_uart_puts("\ncheck log_dropped ");
    mps2_uart_dec(log_ring.dropped);
    mps2_uart_puts("\n");
    mps2_exit(0);
}
