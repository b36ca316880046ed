/* Records runs with the real target library on the test port (tests/target/testport): a
 * clock the test sets, rings the test switches between (one per context), interrupts as
 * handler flags on a ring. The rings are read back by the library's own readers, the
 * stream header is encoded by emb_tsf_encode_header (with an identity block), and the
 * capture is sealed by emb_capture_encode: every byte a comparison sees comes from the
 * code that produces it in the field. Include once per test program. */
#ifndef EMB_TEST_RECORDER_H
#define EMB_TEST_RECORDER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace.h>
#include <emb/trace_events.h>

#include "capture.h"
#include "catalog.h"
#include "trace_decode.h"

uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);

uint64_t emb_port_timestamp_hz(void) { return 1000000000u; }
int64_t emb_port_clock_offset_ns(void) { return 0; }
struct emb_trace_ring *emb_port_trace_ring_claim(void) { return emb_test_claim_ring; }

#define REC_MAX_CTX 4
#define REC_PACKETS 64u

struct rec {
    struct emb_trace_ring rings[REC_MAX_CTX];
    const char *names[REC_MAX_CTX];
    int nctx;
    enum emb_trace_mode mode;
    uint8_t *stream;   /* packets consumed so far (streaming mode) */
    size_t len, cap;
};

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t rec_bufs[REC_MAX_CTX][REC_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t rec_commits[REC_MAX_CTX][REC_PACKETS];

/* Starts a run: contexts named `names`, ring `packets[i]` packets each (0: REC_PACKETS),
 * window mode armed at `arm_frame` (UINT32_MAX: streaming mode). */
static inline void rec_begin(struct rec *r, int nctx, const char *const *names,
                             const uint32_t *packets, uint32_t arm_frame, uint8_t seed)
{
    memset(r, 0, sizeof *r);
    uint8_t uuid[16];
    for (int i = 0; i < 16; i++)
        uuid[i] = (uint8_t)(seed * 16 + i + 1);
    r->mode = arm_frame == UINT32_MAX ? EMB_TRACE_MODE_STREAMING : EMB_TRACE_MODE_WINDOW;
    emb_trace_init(uuid, r->mode, 0xFFFFFFFFu);
    if (arm_frame != UINT32_MAX)
        emb_trace_window_arm_at(arm_frame);
    r->nctx = nctx;
    for (int i = 0; i < nctx; i++) {
        uint32_t n = packets && packets[i] ? packets[i] : REC_PACKETS;
        emb_trace_ring_init(&r->rings[i], (uint16_t)i, EMB_CONTEXT_THREAD, rec_bufs[i],
                            rec_commits[i], n);
        snprintf(r->rings[i].name, sizeof r->rings[i].name, "%s", names[i]);
        r->names[i] = names[i];
    }
    emb_test_clock = 1000000;
    emb_test_clock_step = 0;
    emb_test_preempt = NULL;
    emb_test_claim_ring = NULL;
    emb_test_ring = &r->rings[0];
}

/* The next events are recorded by context `ctx` at time `ns`. */
static inline void rec_at(struct rec *r, int ctx, uint64_t ns)
{
    emb_test_ring = &r->rings[ctx];
    emb_test_clock = ns;
}

static inline void rec_isr_enter(struct rec *r, int ctx, uint64_t ns, uint16_t irq)
{
    rec_at(r, ctx, ns);
    emb_trace_enter_handler(&r->rings[ctx], EMB_EVT_KIND_ISR);
    EMB_TRACE_irq_enter(irq);
}

static inline void rec_isr_exit(struct rec *r, int ctx, uint64_t ns, uint16_t irq)
{
    rec_at(r, ctx, ns);
    EMB_TRACE_irq_exit(irq, false);
    emb_trace_leave_handler(&r->rings[ctx]);
}

/* What the frame hook does (src/hooks.c), on context 0. */
static inline void rec_frame(struct rec *r, uint64_t ns, uint32_t frame)
{
    rec_at(r, 0, ns);
    if (emb_trace_frame_mark(frame))
        EMB_TRACE_window_armed(frame, r->rings[0].buf_mask + 1u);
    EMB_TRACE_frame_start(frame);
}

static void rec_take(void *arg, const struct emb_trace_ring *ring, const uint8_t *pkt, uint32_t size)
{
    (void)ring;
    struct rec *r = arg;
    if (r->len + size > r->cap) {
        r->cap = (r->len + size) * 2;
        r->stream = realloc(r->stream, r->cap);
        if (!r->stream)
            abort();
    }
    memcpy(r->stream + r->len, pkt, size);
    r->len += size;
}

/* Streaming: hands what each ring completed to the "sink" (a stream worker's pass). */
static inline void rec_consume(struct rec *r)
{
    for (int i = 0; i < r->nctx; i++)
        emb_trace_ring_consume(&r->rings[i], rec_take, r);
}

/* Ends the run: the trace stream file ("EMBT") bytes, malloc'd. */
static inline uint8_t *rec_stream(struct rec *r, const char *firmware, const char *config,
                                  uint64_t session, size_t *len)
{
    static uint8_t scratch[CONFIG_EMB_TRACE_PACKET_SIZE];
    emb_test_clock = 1000000000000ull; /* after everything: the packets close now */
    for (int i = 0; i < r->nctx; i++)
        emb_trace_flush(&r->rings[i]);
    if (r->mode == EMB_TRACE_MODE_STREAMING)
        rec_consume(r);
    else
        for (int i = 0; i < r->nctx; i++)
            emb_trace_ring_snapshot(&r->rings[i], scratch, rec_take, r);
    struct emb_tsf_context table[REC_MAX_CTX];
    for (int i = 0; i < r->nctx; i++)
        table[i] = (struct emb_tsf_context){
            .id = (uint16_t)i, .kind = EMB_CONTEXT_THREAD, .discarded = r->rings[i].discarded,
            .packets = r->rings[i].write_pos / CONFIG_EMB_TRACE_PACKET_SIZE, .name = r->names[i]};
    struct emb_tsf_identity id = {session, firmware, config};
    static const uint8_t build[8] = {0xB0, 0x1D, 0xFA, 0xCE, 0x00, 0x00, 0x00, 0x01};
    struct emb_tsf_info info = {
        .catalog_checksum = EMB_TRACE_CATALOG_CHECKSUM,
        .packet_size = CONFIG_EMB_TRACE_PACKET_SIZE,
        .clock_hz = 1000000000u,
        .build_id = build,
        .build_id_len = sizeof build,
        .pointer_size = 4,
        .port = "test",
        .identity = &id,
    };
    memcpy(info.uuid, emb_trace_uuid(), 16);
    uint8_t header[EMB_TSF_HEADER_BYTES(REC_MAX_CTX) + EMB_TSF_IDENTITY_SIZE];
    size_t hs = emb_tsf_encode_header(header, sizeof header, &info, table, (uint16_t)r->nctx);
    uint8_t *out = malloc(hs + r->len);
    if (!out || !hs)
        abort();
    memcpy(out, header, hs);
    memcpy(out + hs, r->stream, r->len);
    *len = hs + r->len;
    free(r->stream);
    r->stream = NULL;
    return out;
}

/* Seals a stream into a capture (malloc'd) as `emb capture` does. extra: optional log
 * bytes as a log section. */
static inline uint8_t *rec_seal(const uint8_t *stream, size_t slen, const char *label,
                                const uint8_t *log, size_t loglen, size_t *len)
{
    const struct emb_catalog *cat = emb_catalog_builtin();
    struct emb_trace_options to = {.catalog = cat, .name = "recorded"};
    struct emb_trace *t = emb_trace_decode(stream, slen, &to);
    if (!t || emb_trace_summary(t)->fatal || emb_trace_summary(t)->errors) {
        const struct emb_problems *found = t ? emb_trace_problems(t) : NULL;
        fprintf(stderr, "recorder: the stream does not decode: %s\n",
                found && found->n ? found->items[0].message : "?");
        abort();
    }
    struct emb_capture_parts p;
    memset(&p, 0, sizeof p);
    if (emb_capture_describe(t, label, "0123456789abcdef", &p.identity, &p.window) != 0)
        abort();
    char *meta = emb_capture_metadata(t, &p.metadata_len);
    p.metadata = meta;
    p.trace = stream;
    p.trace_len = slen;
    if (log)
        p.opaque[p.nopaque++] = (struct emb_capture_section){.type = EMB_CAP_SEC_LOG, .version = 1,
                                                         .data = log, .length = loglen};
    char err[128];
    uint8_t *out = emb_capture_encode(&p, len, err, sizeof err);
    if (!out)
        abort();
    free(meta);
    free(p.window.rows);
    emb_trace_free(t);
    return out;
}

#endif /* EMB_TEST_RECORDER_H */
