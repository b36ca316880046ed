/* Instructions per recording call on RV32IMAC, counted by minstret under QEMU's -icount
 * (one instruction per count; bench/riscv.sh). One hart, a snapshot ring: N two-word
 * events (user_event(id, a, b)), N log calls with two arguments, against an empty loop of
 * the same shape; the difference over N is what one call costs. Printed on the UART as
 * `bench: NAME INSTRUCTIONS_X100`, then the test device ends the run. */
#include <emb/log.h>
#include <emb/riscv.h>
#include <emb/trace_events.h>

#include "virt.h"

EMB_LOG_MODULE_DEFINE(bench, EMB_LOG_LEVEL_INF);

#define N 4096u
#define RING_PACKETS 16u
static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[RING_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[RING_PACKETS];
static struct emb_trace_ring ring;
/* Room for every record of the loop: none is dropped (a drop costs less). */
static _Alignas(8) uint8_t log_buf[128u * 1024u];
static struct emb_log_ring log_ring;

static uint32_t instret(void)
{
    uint32_t v;
    __asm__ __volatile__("csrr %0, minstret" : "=r"(v));
    return v;
}

static EMB_NOINLINE uint32_t empty_loop(void)
{
    uint32_t t0 = instret();
    for (uint32_t i = 0; i < N; i++)
        __asm__ __volatile__("" ::"r"(i) : "memory");
    return instret() - t0;
}

static EMB_NOINLINE uint32_t event_loop(void)
{
    uint32_t t0 = instret();
    for (uint32_t i = 0; i < N; i++) {
        EMB_TRACE_user_event(1u, i, i);
        __asm__ __volatile__("" ::"r"(i) : "memory");
    }
    return instret() - t0;
}

static EMB_NOINLINE uint32_t log_loop(void)
{
    uint32_t t0 = instret();
    for (uint32_t i = 0; i < N; i++) {
        EMB_LOG_INF(bench, "value %u of %u", (unsigned)i, (unsigned)N);
        __asm__ __volatile__("" ::"r"(i) : "memory");
    }
    return instret() - t0;
}

static void report(const char *name, uint32_t total, uint32_t empty)
{
    virt_uart_puts("bench: ");
    virt_uart_puts(name);
    virt_uart_putc(' ');
    virt_uart_dec((uint32_t)(((uint64_t)(total - empty) * 100u) / N));
    virt_uart_putc('\n');
}

void virt_main(const void *fdt)
{
    (void)fdt;
    const struct emb_rv_hart_config hart = {
        .ring = &ring, .ring_buf = ring_buf, .ring_commit = ring_commit,
        .log_ring = &log_ring, .log_buf = log_buf, .log_size = sizeof log_buf,
    };
    const struct emb_rv_config cfg = {
        .clock_hz = VIRT_TIMEBASE_HZ, .mode = EMB_TRACE_MODE_SNAPSHOT,
        .classes = EMB_TRACE_CLASSES_ALL, .ring_packets = RING_PACKETS, .harts = 1u, .hart = &hart,
    };
    if (emb_rv_start(&cfg) != EMB_OK)
        virt_exit(1);
    uint32_t empty = empty_loop();
    report("event", event_loop(), empty);
    report("log", log_loop(), empty);
    virt_exit(0);
}

void virt_hart_main(uint32_t hart)
{
    (void)hart;
}
