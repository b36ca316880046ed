/* The Cortex-M ITM writer (ports/cortex-m/itm.c, built here with EMB_ITM_MODEL) run on the
 * native port against a model of the ITM (itm_model.h), for tests/integration/test_itm.py:
 * QEMU does not model the ITM, so this is the nearest real thing. The deferred log goes
 * out through emb_itm_log_output() (stimulus port 0), the streaming worker's header and
 * packets through emb_itm_trace_send() (port 1, the header repeated every 8 packets), and
 * the model writes the SWO byte stream the ITM and the TPIU would have put out.
 *
 *   itm_e2e MODE OUT.swo COUNT
 *
 * MODE: on        the ITM and ports 0 and 1 enabled; the FIFO full at every third poll
 *       log-off   port 0 disabled in ITM_TER: log frames dropped and counted
 *       itm-off   ITM_TCR.ITMENA clear (no probe set it up): everything dropped, no wait
 *       toggle    the ITM switched off every 3000 stimulus writes, and on again soon
 *       toggle-log  the same every 300 writes to port 0 (the log's frames get cut)
 *       cut-header  the ITM off once, at the 10th write to port 1: inside the first stream
 *                 header, which is cut short
 *
 * Two threads each record COUNT user_event(id = i mod 65536, a = thread 1 or 2, b = i) and
 * log every tenth: "itm N from main" (INF) and "itm2 N x=-N" (WRN). Prints the writer's
 * and the model's counts as key=value lines. */
#define _GNU_SOURCE
#include <emb/itm.h>
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_link.h>
#include <emb/native_log.h>
#include <emb/trace_events.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itm_model.h"

EMB_LOG_MODULE_DEFINE(itm, EMB_LOG_LEVEL_INF);

#define LOG_EVERY 10u

static unsigned long count;

static void pace(unsigned long i)
{
    if ((i & 127u) == 127u) {
        struct timespec t = {0, 300 * 1000};
        nanosleep(&t, NULL);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < count; i++) {
        EMB_TRACE_user_event((uint16_t)i, 2u, (uint32_t)i);
        if (i % LOG_EVERY == 0u)
            EMB_LOG_WRN(itm, "itm2 %u x=%d", (unsigned)i, -(int)i);
        pace(i);
    }
    return NULL;
}

/* The streaming worker's output: the ITM's port 1, the header again every 8 packets. */
static uint32_t since_header;

static int sink_start(void *arg, const uint8_t *header, size_t len)
{
    (void)arg;
    since_header = 0;
    emb_itm_trace_send(NULL, 1, header, len); /* dropped when the ITM is off: counted */
    return 0;
}

static int sink_packet(void *arg, const uint8_t *packet, size_t len)
{
    (void)arg;
    if (++since_header > 8u) {
        static uint8_t header[4096];
        size_t hn = emb_native_stream_header(header, sizeof header);
        if (hn > 0u && emb_itm_trace_send(NULL, 1, header, hn) == EMB_OK)
            since_header = 1;
    }
    return emb_itm_trace_send(NULL, 1, packet, len) == EMB_OK ? 0 : -1;
}

static void sink_stop(void *arg)
{
    (void)arg;
}

static void print_port(const char *name, uint32_t port)
{
    struct emb_itm_port_stats st;
    emb_itm_stats(port, &st);
    printf("%s_writes=%u\n%s_bytes=%u\n%s_dropped=%u\n%s_cut=%u\n%s_waits=%u\n", name, st.writes,
           name, st.bytes, name, st.dropped, name, st.cut, name, st.waits);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: itm_e2e on|log-off|itm-off|toggle|toggle-log|cut-header OUT.swo COUNT\n");
        return 2;
    }
    const char *mode = argv[1];
    count = strtoul(argv[3], NULL, 10);
    struct itm_model_config mc = {.tcr = 1, .ter = 0x3, .busy_every = 3, .sync_every = 500,
                                  .ts_every = 37, .off_port = -1};
    if (!strcmp(mode, "log-off")) {
        mc.ter = 0x2;
    } else if (!strcmp(mode, "itm-off")) {
        mc.tcr = 0;
    } else if (!strcmp(mode, "toggle")) {
        mc.off_after_writes = 3000;
        mc.off_reads = 4;
    } else if (!strcmp(mode, "toggle-log")) {
        mc.off_after_writes = 300;
        mc.off_reads = 4;
        mc.off_port = 0;
    } else if (!strcmp(mode, "cut-header")) {
        mc.off_after_writes = 10;
        mc.off_reads = 4;
        mc.off_port = 1;
        mc.off_times = 1;
    } else if (strcmp(mode, "on") != 0) {
        fprintf(stderr, "itm_e2e: unknown mode %s\n", mode);
        return 2;
    }
    itm_model_init(&mc);

    static const struct emb_native_sink sink = {sink_start, sink_packet, sink_stop, NULL};
    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_STREAMING,
        .ring_packets = 256,
        .stream_fd = -1,
        .stream_period_us = 500,
        .stream_sink = &sink,
    };
    emb_native_set_identity("itm-model 1", "transport=itm", 0);
    if (emb_native_init(&config) != EMB_OK) {
        fprintf(stderr, "itm_e2e: emb_native_init failed\n");
        return 1;
    }
    struct emb_native_log_config lc = {.fd = -1, .hello_period_ms = 100,
                                       .output = emb_itm_log_output()};
    if (emb_native_log_start(&lc) != EMB_OK) {
        fprintf(stderr, "itm_e2e: emb_native_log_start failed\n");
        return 1;
    }
    struct emb_native_thread t;
    emb_native_thread_create(&t, "worker", worker, NULL);
    for (unsigned long i = 0; i < count; i++) {
        EMB_TRACE_user_event((uint16_t)i, 1u, (uint32_t)i);
        if (i % LOG_EVERY == 0u)
            EMB_LOG_INF(itm, "itm %u from %s", (unsigned)i, "main");
        pace(i);
    }
    emb_native_thread_join(&t, NULL);
    emb_native_flush();
    emb_native_log_stop();
    emb_native_shutdown();

    size_t len;
    const uint8_t *swo = itm_model_stream(&len);
    FILE *f = fopen(argv[2], "wb");
    if (f == NULL || (len > 0u && fwrite(swo, 1, len, f) != len) || fclose(f) != 0) {
        perror("itm_e2e: writing the SWO stream");
        return 1;
    }
    struct emb_native_log_stats ls;
    emb_native_log_stats_get(&ls);
    struct itm_model_counts n;
    itm_model_counts(&n);
    print_port("log", EMB_ITM_PORT_LOG);
    print_port("trace", EMB_ITM_PORT_TRACE);
    printf("log_ring_dropped=%llu\n", (unsigned long long)ls.dropped);
    for (unsigned p = 0; p < 2; p++)
        printf("model_port%u_1=%llu\nmodel_port%u_2=%llu\nmodel_port%u_4=%llu\nmodel_port%u_bytes=%llu\n"
               "model_port%u_ignored=%llu\n",
               p, (unsigned long long)n.packets[p][1], p, (unsigned long long)n.packets[p][2], p,
               (unsigned long long)n.packets[p][4], p, (unsigned long long)n.bytes[p], p,
               (unsigned long long)n.ignored_port[p]);
    printf("model_polls=%llu\nmodel_busy=%llu\nmodel_violations=%llu\nmodel_ignored=%llu\n"
           "model_syncs=%llu\nmodel_timestamps=%llu\nmodel_switched_off=%llu\nswo_bytes=%zu\n",
           (unsigned long long)n.polls, (unsigned long long)n.busy,
           (unsigned long long)n.violations, (unsigned long long)n.ignored,
           (unsigned long long)n.syncs, (unsigned long long)n.timestamps,
           (unsigned long long)n.switched_off, len);
    return 0;
}
