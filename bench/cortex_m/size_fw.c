/* The smallest firmware that uses the library's core (bench/cortex_m.sh, sizes): the port
 * started with a trace ring, a log ring and a crash region, one trace event and one log
 * call in a loop. Built per feature set (CONFIG_EMB_* on the command line); the script
 * reads from the link map what the library's objects add. */
#include <emb/cortex_m.h>
#include <emb/log.h>
#include <emb/trace_events.h>

#include "mps2.h"

EMB_LOG_MODULE_DEFINE(app, EMB_LOG_LEVEL_INF);

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[4 * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[4];
static struct emb_trace_ring ring;
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(1024u)];
static struct emb_log_ring log_ring;
static __attribute__((section(".noinit"), aligned(8))) uint8_t crash_region[2048];

int main(void)
{
    const struct emb_cm_config cfg = {
        .cpu_hz = MPS2_CPU_HZ,
        .mode = EMB_TRACE_MODE_SNAPSHOT,
        .classes = EMB_TRACE_CLASSES_ALL,
        .ring = &ring,
        .ring_buf = ring_buf,
        .ring_commit = ring_commit,
        .ring_packets = 4,
        .log_ring = &log_ring,
        .log_buf = log_buf,
        .log_size = 1024u,
        .retained = crash_region,
        .retained_size = sizeof crash_region,
    };
    emb_cm_start(&cfg);
    for (uint32_t i = 0;; i++) {
        EMB_TRACE_work_start(i, i + 1u);
        EMB_LOG_INF(app, "sensor %d failed: %d", (int)i, -(int)i);
    }
}
