/* A growing trace stream decoded round by round (tools/lib/live/live_stream.h), on the
 * native port's own stream file (trace_known: the real library recording a known
 * sequence, sealed as the port writes it): fed a packet at a time and at odd cuts, the
 * rounds give every record of the whole file's decoding, each context's in order, losses
 * where they are (a packet taken out of the file: one LOST marker, as the whole file
 * has); and the decoding is linear: every byte after the header is decoded once, the
 * header once a round (a decoder that re-read the stream so far, as `emb trace --follow`
 * did, decodes the sum of every prefix). The live model counts what trace_known recorded.
 *
 * usage: test_live_stream TRACE_KNOWN WORKDIR */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "catalog.h"
#include "harness.h"
#include "input_file.h"
#include "live_model.h"
#include "live_stream.h"

#define FRAMES 400u
#define WRITES 300u

/* One record as compared: its context, time, id, type and count. */
struct rec {
    uint16_t ctx;
    uint8_t type;
    uint16_t id;
    uint32_t count;
    uint64_t ts;
};

struct recs {
    struct rec *r;
    size_t n, cap;
};

static void keep(struct recs *out, const struct emb_trace *t)
{
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        for (size_t k = 0; k < c->nrecs; k++) {
            if (out->n == out->cap) {
                out->cap = out->cap ? 2 * out->cap : 1024;
                out->r = realloc(out->r, out->cap * sizeof *out->r);
            }
            const struct emb_trace_event *e = &c->recs[k];
            out->r[out->n++] = (struct rec){c->id, e->type, e->id, e->count, e->ts};
        }
    }
}

/* Records by context, each context's in its order (insertion sort: stable). */
static void order(struct recs *r)
{
    for (size_t i = 1; i < r->n; i++)
        for (size_t j = i; j > 0 && r->r[j - 1].ctx > r->r[j].ctx; j--) {
            struct rec t = r->r[j];
            r->r[j] = r->r[j - 1];
            r->r[j - 1] = t;
        }
}

static bool same(const struct recs *a, const struct recs *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct rec *x = &a->r[i], *y = &b->r[i];
        if (x->ctx != y->ctx || x->type != y->type || x->id != y->id || x->count != y->count ||
            x->ts != y->ts)
            return false;
    }
    return true;
}

static struct recs whole(const uint8_t *p, size_t n, const struct emb_catalog *cat, uint64_t *lost)
{
    struct emb_trace_options o = {.catalog = cat};
    struct emb_trace *t = emb_trace_decode(p, n, &o);
    struct recs r = {0};
    keep(&r, t);
    order(&r);
    *lost = emb_trace_summary(t)->lost_packets;
    emb_trace_free(t);
    return r;
}

/* Feeds the stream `step` bytes at a time, a round after each; the model counts. */
static struct recs rounds(const uint8_t *p, size_t n, size_t step, const struct emb_catalog *cat,
                          struct emb_live_stream_stats *st, struct emb_live_model *model, uint64_t *lost)
{
    struct emb_trace_options o = {.catalog = cat};
    struct emb_live_stream *s = emb_live_stream_new(&o);
    emb_live_stream_set_catalog(s, cat);
    struct recs r = {0};
    *lost = 0;
    bool oom = false;
    for (size_t off = 0; off <= n; off += step) {
        size_t len = off + step <= n ? step : n - off;
        emb_live_stream_bytes(s, p + off, len);
        const struct emb_trace *t = emb_live_stream_next(s, off + step > n, &oom);
        if (t != NULL) {
            keep(&r, t);
            *lost += emb_trace_summary(t)->lost_packets;
            if (model != NULL)
                emb_live_model_add(model, t);
        }
    }
    ok(!oom, "no round ran out of memory");
    order(&r);
    *st = *emb_live_stream_stats(s);
    emb_live_stream_free(s);
    return r;
}

static void check_model(struct emb_live_model *m)
{
    const struct emb_live_view *v = emb_live_model_view(m, EMB_LIVE_SORT_LOAD);
    ok(v->nirqs == 1 && v->irqs[0].irq == 5 && v->irqs[0].count == FRAMES / 10,
       "interrupts per vector: irq 5 entered every tenth frame (%zu vectors)", v->nirqs);
    uint64_t frame_starts = 0, pipe_writes = 0;
    for (size_t i = 0; i < v->ntop; i++) {
        if (!strcmp(v->top[i].name, "frame_start"))
            frame_starts = v->top[i].count;
        if (!strcmp(v->top[i].name, "pipe_write"))
            pipe_writes = v->top[i].count;
    }
    ok(frame_starts == FRAMES && pipe_writes == WRITES,
       "event rates count what was recorded: %llu frame_start, %llu pipe_write",
       (unsigned long long)frame_starts, (unsigned long long)pipe_writes);
    uint64_t events = 0;
    for (size_t i = 0; i < v->ncontexts; i++)
        events += v->contexts[i].events;
    ok(v->ncontexts == 2 && events == v->events && v->lost_packets == 0 && v->discarded == 0,
       "two contexts, their events summed, nothing lost");
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: test_live_stream TRACE_KNOWN WORKDIR\n"), 2;
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/known.embt", argv[2]);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s' '%s' %u %u", argv[2], argv[1], path, FRAMES, WRITES);
    if (system(cmd) != 0)
        return fprintf(stderr, "trace_known failed\n"), 1;
    size_t n;
    char why[256];
    uint8_t *p = emb_input_read(path, &n, why, sizeof why);
    const struct emb_catalog *cat = emb_catalog_builtin();
    size_t hlen = emb_get_le16(p + EMB_TSF_OFF_HEADER_SIZE);
    size_t stride = emb_get_le32(p + EMB_TSF_OFF_PACKET_SIZE) + EMB_TSF_PACKET_CRC_SIZE;
    size_t npackets = (n - hlen) / stride;
    ok(emb_get_le16(p + EMB_TSF_OFF_VERSION) == EMB_TSF_VERSION_SEALED && npackets > 20,
       "the port's sealed stream: %zu packets", npackets);

    uint64_t lost_whole, lost_rounds;
    struct recs ref = whole(p, n, cat, &lost_whole);
    struct emb_live_stream_stats st;
    struct emb_live_model *model = emb_live_model_new();
    struct recs got = rounds(p, n, stride, cat, &st, model, &lost_rounds);
    ok(same(&got, &ref), "a packet a round: every record once, each context's in order (%zu of %zu)",
       got.n, ref.n);
    ok(st.rounds >= npackets, "a round per packet: %llu", (unsigned long long)st.rounds);
    ok(st.bytes_decoded == st.rounds * hlen + (n - hlen),
       "linear: %llu bytes decoded = %llu rounds x %zu header bytes + the %zu after the header once",
       (unsigned long long)st.bytes_decoded, (unsigned long long)st.rounds, hlen, n - hlen);
    ok(st.packets_decoded == npackets, "each packet decoded once: %llu", (unsigned long long)st.packets_decoded);
    check_model(model);
    emb_live_model_free(model);
    free(got.r);

    got = rounds(p, n, 777, cat, &st, NULL, &lost_rounds);
    ok(same(&got, &ref), "cut every 777 bytes: the same records (%zu of %zu)", got.n, ref.n);
    ok(st.bytes_decoded == st.rounds * hlen + (n - hlen), "linear at odd cuts too");
    free(got.r);
    free(ref.r);

    /* A packet taken out of the middle: the rounds count its loss where the file does. */
    size_t cut = hlen + (npackets / 2) * stride;
    memmove(p + cut, p + cut + stride, n - cut - stride);
    n -= stride;
    ref = whole(p, n, cat, &lost_whole);
    got = rounds(p, n, stride, cat, &st, NULL, &lost_rounds);
    ok(lost_whole == 1 && lost_rounds == 1, "a packet missing: one lost, in the rounds as in the file");
    ok(same(&got, &ref), "its LOST marker where the whole file has it (%zu of %zu records)", got.n, ref.n);
    free(got.r);
    free(ref.r);
    free(p);
    return emb_test_done();
}
