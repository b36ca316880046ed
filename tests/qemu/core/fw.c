/* The reduced core (docs/benchmarks.md, "Flash per feature set": snapshot trace, deferred
 * log, the crash record without the last packets, the reduced descriptor, DWT clock; built
 * with the options tests/CMakeLists.txt gives it, at -Os) as a firmware on the MPS2 M3.
 * The first boot records CORE_EVENTS trace events and log records, then reads a device
 * that is not there: the port's fault handler writes the crash record into the retained
 * region and resets. The second boot finds the record, records again, says so in the log,
 * and waits (core_state 2) for the host to read the trace ring, the log ring and the crash
 * record through the reduced descriptor (tests/qemu/core/core.sh). */
#include <emb/cortex_m.h>
#include <emb/crash.h>
#include <emb/log.h>
#include <emb/trace_events.h>

#include "mps2.h"

EMB_LOG_MODULE_DEFINE(core, EMB_LOG_LEVEL_INF);

#define CORE_EVENTS 12u
#define RING_PACKETS 4u
#define LOG_BYTES 1024u

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[RING_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[RING_PACKETS];
static struct emb_trace_ring ring;
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(LOG_BYTES)];
static struct emb_log_ring log_ring;
/* Retained across the reset (ports/cortex-m/mps2/mps2.ld). */
static __attribute__((section(".noinit"), aligned(8))) uint8_t crash_region[1024];

/* 1: the first boot is recording; 2: the second boot is done, the host reads. */
volatile uint32_t core_state;

/* A read of an address nothing decodes on MPS2: a precise bus fault. Kept a function of
 * its own, so the crash record's pc names it. */
__attribute__((noinline, noipa)) uint32_t core_read_absent(void)
{
    return *(volatile uint32_t *)0x50000000u;
}

int main(void)
{
    mps2_uart_init();
    const struct emb_cm_config cfg = {
        .cpu_hz = MPS2_CPU_HZ,
        .mode = EMB_TRACE_MODE_SNAPSHOT,
        .classes = EMB_TRACE_CLASSES_ALL,
        .ring = &ring,
        .ring_buf = ring_buf,
        .ring_commit = ring_commit,
        .ring_packets = RING_PACKETS,
        .log_ring = &log_ring,
        .log_buf = log_buf,
        .log_size = LOG_BYTES,
        .retained = crash_region,
        .retained_size = sizeof crash_region,
        .stack_low = mps2_stack_low(),
        .stack_size = mps2_stack_size(),
        .probe_consumer = 1,
    };
    if (emb_cm_start(&cfg) != EMB_OK) {
        mps2_uart_puts("core: emb_cm_start failed\n");
        mps2_exit(1);
    }
    const uint8_t *record;
    uint32_t length = 0;
    const unsigned boot = emb_crash_record_get(&record, &length) == EMB_OK ? 2u : 1u;
    core_state = 1u;
    for (uint32_t i = 0; i < CORE_EVENTS; i++) {
        EMB_TRACE_user_event(boot, i, 3u * i);
        EMB_LOG_INF(core, "boot %u: step %u", boot, (unsigned)i);
    }
    if (boot == 1u) {
        mps2_uart_puts("core: reading an absent device\n");
        (void)core_read_absent();
        mps2_uart_puts("core: no fault\n");
        mps2_exit(1);
    }
    EMB_LOG_INF(core, "the crash record found: %u bytes", (unsigned)length);
    emb_trace_flush(&ring);
    mps2_uart_puts("core: done\n");
    core_state = 2u;
    for (;;)
        __asm__ __volatile__("wfi");
}
