/* A minimal firmware on the emb library: it starts the Cortex-M port with a trace ring, a
 * log ring and the retained crash region, records its own trace event (pump_speed, from
 * events.yaml) and a log line per step, then stops recording. A debug probe reads it all
 * through the debug descriptor while the core idles:
 *
 *   emb capture --gdb HOST:PORT --elf template.elf --until-closed -o run.emb \
 *       --save-trace run.embt --save-log run.log
 *   emb trace --catalog build/emb-gen/catalog.yaml run.embt
 *   emb log --elf template.elf run.log */
#include <emb/cortex_m.h>
#include <emb/descriptor.h>
#include <emb/log.h>
#include <emb/trace_events.h>

#include "board.h"

EMB_LOG_MODULE_DEFINE(pump, EMB_LOG_LEVEL_INF);

#define RING_PACKETS 8u /* trace ring: 8 packets of CONFIG_EMB_TRACE_PACKET_SIZE bytes */
#define LOG_SIZE 2048u  /* log ring bytes, a power of two */
#define STEPS 24u

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[RING_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[RING_PACKETS];
static struct emb_trace_ring ring;
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(LOG_SIZE)];
static struct emb_log_ring log_ring;

/* The retained region (mps2.ld's NOINIT): the crash record area and a boot count, which
 * survive a reset. */
static __attribute__((section(".noinit"), aligned(8))) uint8_t crash_region[2048];
static __attribute__((section(".noinit"))) uint32_t boots[2]; /* magic, count */
#define BOOTS_MAGIC 0xB007C0DEu

/* The linker script's main stack. */
extern uint32_t __stack_low, __stack_top;

/* This run's session id: the build id's first word and the boot count, so two runs of one
 * build and two builds stay apart (a board with a TRNG or an RTC would use that). */
static uint64_t session_id(void)
{
    if (boots[0] != BOOTS_MAGIC) {
        boots[0] = BOOTS_MAGIC;
        boots[1] = 0u;
    }
    const uint8_t *id;
    uint32_t n = emb_cm_build_id(&id);
    uint32_t high = n >= 4u ? (uint32_t)id[0] << 24 | (uint32_t)id[1] << 16 | (uint32_t)id[2] << 8 | id[3] : 0u;
    return (uint64_t)high << 32 | ++boots[1];
}

int main(void)
{
    const struct emb_cm_config cfg = {
        .cpu_hz = BOARD_CPU_HZ,
        .mode = EMB_TRACE_MODE_STREAMING,
        .classes = EMB_TRACE_CLASSES_ALL,
        .ring = &ring,
        .ring_buf = ring_buf,
        .ring_commit = ring_commit,
        .ring_packets = RING_PACKETS,
        .log_ring = &log_ring,
        .log_buf = log_buf,
        .log_size = LOG_SIZE,
        .retained = crash_region,
        .retained_size = sizeof crash_region,
        .stack_low = (uintptr_t)&__stack_low,
        .stack_size = (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)&__stack_low),
        .paint_stack = true,
        .probe_consumer = true, /* the probe frees what it read */
    };
    /* Before the start: a probe that sees the registry ready sees the session too. */
    emb_debug_registry_session(session_id());
    if (emb_cm_start(&cfg) != EMB_OK) {
        board_puts("template: emb_cm_start failed\n");
        return 1;
    }
    for (uint32_t step = 0; step < STEPS; step++) {
        uint32_t rpm = 1000u + 125u * step;
        EMB_TRACE_pump_speed((uint16_t)step, rpm);
        EMB_LOG_INF(pump, "step %u: %u rpm", (unsigned)step, (unsigned)rpm);
    }
    /* Last: a probe that sees the class mask at zero has everything (--until-closed). */
    emb_trace_set_classes(0u);
    board_puts("template: done\n");
    return 0;
}
