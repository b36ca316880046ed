/* The replay encoder: target trace rings on the host, fed with times given by the caller. */
#define _POSIX_C_SOURCE 200809L
#include "trace_replay.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <emb/port.h>
#include <emb/trace.h>

#include "buffer.h"
#include "trace_catalog.h"

#define PACKET_SIZE CONFIG_EMB_TRACE_PACKET_SIZE
#define RING_PACKETS 4u /* drained after every event: two would do, four leave slack */

static struct emb_replay *open_replay;

struct replay_context {
    struct emb_trace_ring ring;
    uint8_t *buf;
    uint32_t commit[RING_PACKETS];
    uint64_t last_ts;
    uint32_t packets;
    char name[EMB_TSF_NAME_MAX];
};

struct emb_replay {
    struct emb_tsf_info info;
    uint8_t build_id[EMB_TSF_BUILD_ID_MAX];
    char port[EMB_TSF_PORT_MAX];
    struct replay_context *ctx[EMB_TSF_MAX_CONTEXTS];
    unsigned nctx;
    struct emb_buf out;    /* packets, in the order they completed */
    uint64_t events;
    char *catalog_text;    /* carried in the header's catalog block, or NULL */
    size_t catalog_text_len;
};

struct emb_replay *emb_replay_new(const struct emb_tsf_info *info)
{
    if (open_replay != NULL || info == NULL || info->build_id_len > EMB_TSF_BUILD_ID_MAX)
        return NULL;
    struct emb_replay *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->info = *info;
    r->info.packet_size = PACKET_SIZE;
    if (info->build_id_len > 0u)
        memcpy(r->build_id, info->build_id, info->build_id_len);
    r->info.build_id = r->build_id;
    if (info->port != NULL)
        strncpy(r->port, info->port, sizeof r->port - 1u);
    r->info.port = r->port;
    open_replay = r;
    emb_replay_clock_hz = 1000000000u; /* the replay's events are timed in ns */
    /* Streaming: the encoder drains each ring as it goes; the class mask is unused. */
    emb_trace_init(info->uuid, EMB_TRACE_MODE_STREAMING, 0u);
    return r;
}

int emb_replay_context(struct emb_replay *r, uint16_t id, uint16_t kind, const char *name)
{
    if (r->nctx >= EMB_TSF_MAX_CONTEXTS - 1u)
        return -1;
    struct replay_context *c = calloc(1, sizeof *c);
    uint8_t *buf = aligned_alloc(PACKET_SIZE, (size_t)RING_PACKETS * PACKET_SIZE);
    if (c == NULL || buf == NULL) {
        free(c);
        free(buf);
        return -1;
    }
    c->buf = buf;
    emb_trace_ring_init(&c->ring, id, (enum emb_context_kind)kind, buf, c->commit, RING_PACKETS);
    if (name != NULL) {
        strncpy(c->name, name, sizeof c->name - 1u);
        memcpy(c->ring.name, c->name, sizeof c->ring.name);
    }
    r->ctx[r->nctx] = c;
    return (int)r->nctx++;
}

static void take_packet(void *arg, const struct emb_trace_ring *ring, const uint8_t *packet,
                        uint32_t size)
{
    (void)ring;
    struct emb_replay *r = arg;
    emb_buf_append(&r->out, packet, size);
}

int emb_replay_event(struct emb_replay *r, int ctx, uint64_t ts, uint16_t id,
                     const void *payload, uint32_t len)
{
    if (ctx < 0 || (unsigned)ctx >= r->nctx || len > CONFIG_EMB_TRACE_MAX_PAYLOAD ||
        (len > 0u && payload == NULL))
        return -1;
    struct replay_context *c = r->ctx[ctx];
    if (ts < c->last_ts)
        ts = c->last_ts;
    c->last_ts = ts;
    emb_replay_clock = ts;
    emb_replay_ring = &c->ring;
    uint32_t padded = (len + EMB_EVT_ALIGN - 1u) & ~(EMB_EVT_ALIGN - 1u);
    uint32_t size = EMB_EVT_HEADER_SIZE + padded;
    struct emb_trace_slot slot = emb_trace_try_reserve(id, size);
    if (slot.payload != NULL) {
        if (len > 0u)
            memcpy(slot.payload, payload, len);
        memset(slot.payload + len, 0, padded - len);
        emb_trace_commit(slot, size);
        r->events++;
    }
    /* Drained at once, so the ring never runs out of free packets. */
    emb_trace_ring_consume(&c->ring, take_packet, r);
    emb_replay_ring = &emb_trace_unclaimed_ring;
    return 0;
}

void emb_replay_lost(struct emb_replay *r, int ctx, uint32_t n)
{
    if (ctx >= 0 && (unsigned)ctx < r->nctx)
        r->ctx[ctx]->ring.discarded += n;
}

uint64_t emb_replay_events(const struct emb_replay *r)
{
    return r->events;
}

int emb_replay_write(struct emb_replay *r, FILE *out)
{
    static struct emb_tsf_context table[EMB_TSF_MAX_CONTEXTS];
    for (unsigned i = 0; i < r->nctx; i++) {
        struct replay_context *c = r->ctx[i];
        emb_replay_clock = c->last_ts;
        emb_trace_flush(&c->ring);
        emb_trace_ring_consume(&c->ring, take_packet, r);
        table[i] = (struct emb_tsf_context){
            .id = c->ring.context_id,
            .kind = c->ring.context_kind,
            .discarded = c->ring.discarded,
            .packets = c->ring.packet_seq,
            .name = c->name,
        };
    }
    if (r->out.failed) {
        errno = ENOMEM;
        return -1;
    }
    static uint8_t header[EMB_TSF_HEADER_BYTES(EMB_TSF_MAX_CONTEXTS)];
    size_t hs = emb_tsf_encode_header(header, sizeof header, &r->info, table, (uint16_t)r->nctx);
    if (hs == 0u) {
        errno = EINVAL;
        return -1;
    }
    uint8_t *carrying = NULL;
    if (r->catalog_text != NULL) {
        char err[256];
        carrying = emb_trace_with_catalog_text(header, hs, r->catalog_text, r->catalog_text_len, &hs,
                                               err, sizeof err);
        if (carrying == NULL) {
            errno = EOVERFLOW; /* a catalogue too large for a stream header */
            return -1;
        }
    }
    int rc = fwrite(carrying != NULL ? carrying : header, 1, hs, out) != hs ||
             (r->out.len > 0u && fwrite(r->out.data, 1, r->out.len, out) != r->out.len) ? -1 : 0;
    free(carrying);
    return rc;
}

int emb_replay_carry_catalog(struct emb_replay *r, const char *text, size_t len)
{
    char *copy = malloc(len + 1u);
    if (copy == NULL)
        return -1;
    memcpy(copy, text, len);
    copy[len] = 0;
    free(r->catalog_text);
    r->catalog_text = copy;
    r->catalog_text_len = len;
    return 0;
}

void emb_replay_free(struct emb_replay *r)
{
    if (r == NULL)
        return;
    for (unsigned i = 0; i < r->nctx; i++) {
        free(r->ctx[i]->buf);
        free(r->ctx[i]);
    }
    emb_buf_free(&r->out);
    free(r->catalog_text);
    if (open_replay == r) {
        open_replay = NULL;
        emb_replay_clock_hz = 0;
    }
    free(r);
}
