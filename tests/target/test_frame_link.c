/* emb_frame_link (emb/frame_link.h) on the test port: a trace ring and a log ring sent as
 * frames through a byte sink, read back by the host's frame decoder the way
 * `emb capture --serial` reads a line (joining mid-stream). Checks the stream starts with
 * a delimiter (the log's hello, the first frame, is not skipped), every frame the link
 * counted arrives on its channel, the trace header goes first and is repeated, and a sink
 * that refuses writes costs exactly the frames it refused: the next frame starts clean; a
 * crash record sent between the others arrives as one channel 2 frame, byte for byte, and
 * the host's crash decoder takes it. */
#include <emb/crash.h>
#include <emb/frame_link.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/wire.h>

#include "crash_decode.h"
#include "frame_decode.h"
#include "harness.h"

uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);
struct emb_log_ring *emb_test_log_ring;

uint64_t emb_port_timestamp_hz(void) { return 1000000000u; }
int64_t emb_port_clock_offset_ns(void) { return 0; }
struct emb_trace_ring *emb_port_trace_ring_claim(void) { return NULL; }
struct emb_log_ring *emb_port_log_ring_claim(void) { return NULL; }

EMB_LOG_MODULE_DEFINE(t, EMB_LOG_LEVEL_DBG);

#define P CONFIG_EMB_TRACE_PACKET_SIZE
#define NPKT 8u
#define EV_SIZE 16u
#define EV_ID 0x7001u

static _Alignas(P) uint8_t ring_buf[NPKT * P];
static uint32_t ring_commit[NPKT];
static struct emb_trace_ring ring;
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(4096u)];
static struct emb_log_ring log_ring;
static uint8_t header[EMB_TSF_HEADER_BYTES(1) + EMB_TSF_EXT_MAX];
static struct emb_frame_link link;

/* The line: what the sink took; writes number `refuse_from` to `refuse_to` are refused. */
static uint8_t line[1u << 20];
static size_t line_len;
static unsigned writes, refuse_from, refuse_to;

static emb_status sink(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    writes++;
    if (writes >= refuse_from && writes <= refuse_to)
        return EMB_E_IO;
    if (line_len + len > sizeof line)
        return EMB_E_NOSPACE;
    memcpy(line + line_len, bytes, len);
    line_len += len;
    return EMB_OK;
}

static void setup(unsigned from, unsigned to)
{
    static const uint8_t uuid[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
    emb_test_clock = 1000;
    emb_test_clock_step = 10;
    emb_trace_init(uuid, EMB_TRACE_MODE_STREAMING, 0xFFFFFFFFu);
    emb_trace_ring_init(&ring, 0, EMB_CONTEXT_CPU, ring_buf, ring_commit, NPKT);
    emb_test_ring = &ring;
    emb_log_ring_init(&log_ring, 0, EMB_CONTEXT_CPU, log_buf, 4096u);
    emb_test_log_ring = &log_ring;
    line_len = 0;
    writes = 0;
    refuse_from = from;
    refuse_to = to;
    static const struct emb_tsf_info info = {.catalog_checksum = 1, .packet_size = P,
                                             .clock_hz = 1000000000u, .pointer_size = 4,
                                             .port = "test"};
    static const struct emb_tsf_context cpu0 = {.id = 0, .kind = EMB_CONTEXT_CPU, .name = "cpu0"};
    const struct emb_frame_link_config c = {
        .write = sink, .trace_ring = &ring, .header = header, .header_cap = sizeof header,
        .info = &info, .contexts = &cpu0, .count = 1, .header_every = 4, .log_ring = &log_ring,
    };
    ok_eq(emb_frame_link_init(&link, &c), EMB_OK, "the link starts");
}

/* A run: events and log records, polled now and then, flushed at the end. */
static void run(unsigned events)
{
    for (unsigned i = 0; i < events; i++) {
        struct emb_trace_slot slot = emb_trace_try_reserve(EV_ID, EV_SIZE);
        if (slot.payload != NULL) {
            emb_put_le32(slot.payload, i);
            emb_trace_commit(slot, EV_SIZE);
        }
        if (i % 16u == 0u)
            EMB_LOG_INF(t, "event %u", i);
        if (i % 200u == 0u)
            emb_frame_link_poll(&link);
    }
    emb_frame_link_flush(&link);
}

static void left_behind(void *arg, const struct emb_trace_ring *r, const uint8_t *p, uint32_t size)
{
    (void)arg;
    (void)r;
    (void)p;
    (void)size;
}

struct got {
    unsigned frames[16];
    unsigned headers, packets, hello_first;
    uint8_t crash[512];
    size_t crash_len;
};

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct got *g = arg;
    if (g->frames[0] + g->frames[1] == 0u)
        g->hello_first = ch == EMB_FRAME_CH_LOG && len > 0 && p[0] == EMB_LOG_FRAME_HELLO;
    g->frames[ch & 15u]++;
    if (ch == EMB_FRAME_CH_TRACE && len >= 4u) {
        g->headers += emb_get_le32(p) == EMB_TSF_MAGIC;
        g->packets += emb_get_le32(p) != EMB_TSF_MAGIC;
    }
    if (ch == EMB_FRAME_CH_CRASH && len <= sizeof g->crash) {
        memcpy(g->crash, p, len);
        g->crash_len = len;
    }
}

static const struct emb_frame_stats *decode(struct got *g)
{
    static struct emb_frame_dec *d;
    if (d != NULL)
        emb_frame_dec_free(d);
    memset(g, 0, sizeof *g);
    d = emb_frame_dec_new(0, true, on_frame, NULL, g);
    emb_frame_dec_feed(d, line, line_len);
    emb_frame_dec_finish(d);
    return emb_frame_dec_stats(d);
}

int main(void)
{
    struct got g;

    setup(0, 0);
    run(3000);
    const struct emb_frame_stats *fs = decode(&g);
    ok(line_len > 0 && line[0] == EMB_FRAME_DELIMITER && g.hello_first,
       "the stream starts with a delimiter, then the log's hello: a reader joining a line takes it");
    ok(fs->frames == link.stats.frames && g.frames[0] == link.stats.log_frames &&
           g.frames[1] == link.stats.trace_frames && fs->dropped == 0 && line_len == link.stats.bytes,
       "every frame the link counted arrived: %llu of %u (%u log, %u trace), %zu bytes, none damaged",
       (unsigned long long)fs->frames, link.stats.frames, g.frames[0], g.frames[1], line_len);
    ok(g.packets == link.trace.packets && g.packets > 8u && g.headers == link.trace.headers &&
           g.headers >= g.packets / 5u && link.stats.failed == 0,
       "%u trace packets, the header first and every 4 packets (%u headers)", g.packets, g.headers);
    ok(link.trace.dropped == 0 && emb_trace_ring_consume(&ring, left_behind, NULL) == 0,
       "no packet dropped by the link, none left in the ring after the flush");

    /* The sink refuses writes 40 to 45: the frames they belong to are lost, counted; every
     * other frame arrives whole. */
    setup(40, 45);
    run(3000);
    fs = decode(&g);
    ok(link.stats.failed > 0 && fs->frames == link.stats.frames &&
           g.frames[0] == link.stats.log_frames && g.frames[1] == link.stats.trace_frames,
       "a sink that refuses 6 writes: %u frames lost and counted, the %u others arrived whole",
       link.stats.failed, link.stats.frames);
    ok(fs->dropped <= link.stats.failed,
       "the cut frames cost themselves only: %llu damaged frames seen for %u lost",
       (unsigned long long)fs->dropped, link.stats.failed);

    /* A crash record between the log and trace frames: one channel 2 frame, whole. */
    setup(0, 0);
    static const uint8_t id[20] = {1, 2, 3, 4, 5, 6, 7, 8};
    const struct emb_crash_info info = {.build_id = id, .build_id_len = 20, .fault_class = EMB_FAULT_BUS,
                                        .fault_address = 0x50000000u, .pc = 0x84eu, .sp = 0x2000dca8u};
    uint8_t record[256];
    size_t n = emb_crash_encode_v1(record, sizeof record, &info);
    run(500);
    ok_eq(emb_frame_link_send_crash(&link, record, (uint32_t)n), EMB_OK, "a %zu-byte crash record sent", n);
    run(500);
    fs = decode(&g);
    struct emb_crash_record r;
    ok(g.frames[EMB_FRAME_CH_CRASH] == 1u && link.stats.crash_frames == 1u && g.crash_len == n &&
           !memcmp(g.crash, record, n) && emb_crash_decode(g.crash, g.crash_len, &r, NULL) == 0 &&
           r.fault_address == 0x50000000u,
       "it arrives as one channel 2 frame, byte for byte, and decodes as the bus fault it is");
    ok(fs->frames == link.stats.frames && fs->dropped == 0 &&
           g.frames[0] + g.frames[1] + g.frames[2] == link.stats.frames,
       "the other frames around it arrive whole (%llu frames)", (unsigned long long)fs->frames);
    ok(emb_frame_link_send_crash(&link, record, 0) == EMB_E_INVALID &&
           emb_frame_link_send_crash(&link, NULL, 8) == EMB_E_INVALID,
       "an empty record is refused");
    return emb_test_done();
}
