/* The trace stream file's packets: each header checked, its events decoded, losses
 * marked where they happened, and a bad packet skipped to the next (docs/formats/trace.md). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "buffer.h"
#include "trace_decoder.h"

/* Checks a packet header at `off`, which has at least EMB_PKT_HEADER_SIZE bytes. Writes
 * the reason into `why` and returns false when it is not a packet of this trace. */
static bool packet_header_ok(struct emb_trace *t, size_t off, char *why, size_t whylen)
{
    const uint8_t *p = emb_trace_at(t, off, EMB_PKT_HEADER_SIZE);
    uint32_t P = t->info.packet_size;
    uint32_t magic = emb_get_le32(p + EMB_PKT_OFF_MAGIC);
    if (magic != EMB_PKT_MAGIC) {
        snprintf(why, whylen, "bad packet magic 0x%08" PRIx32 ", expected 0x%08x", magic,
                 EMB_PKT_MAGIC);
        return false;
    }
    if (memcmp(p + EMB_PKT_OFF_UUID, t->info.uuid, 16) != 0) {
        snprintf(why, whylen, "packet uuid differs from the file's");
        return false;
    }
    uint32_t stream_id = emb_get_le32(p + EMB_PKT_OFF_STREAM_ID);
    if (stream_id != 0) {
        snprintf(why, whylen, "stream_id %" PRIu32 ", expected 0", stream_id);
        return false;
    }
    uint32_t instance = emb_get_le32(p + EMB_PKT_OFF_INSTANCE);
    uint16_t ctx_id = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_ID);
    if (instance != ctx_id) {
        snprintf(why, whylen, "stream_instance_id %" PRIu32 " differs from context_id %u",
                 instance, ctx_id);
        return false;
    }
    if (ctx_id == NO_CONTEXT_ID) {
        snprintf(why, whylen, "context id 0x%04x is reserved", ctx_id);
        return false;
    }
    uint16_t kind = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_KIND);
    if (kind > EMB_CONTEXT_THREAD) {
        snprintf(why, whylen, "unknown context_kind %u", kind);
        return false;
    }
    uint32_t psize = emb_get_le32(p + EMB_PKT_OFF_PACKET_SIZE);
    if (psize != 8u * P) {
        snprintf(why, whylen, "packet_size %" PRIu32 " bits, expected %" PRIu32, psize, 8u * P);
        return false;
    }
    uint32_t csize = emb_get_le32(p + EMB_PKT_OFF_CONTENT_SIZE);
    if (csize < 8u * EMB_PKT_HEADER_SIZE || csize > 8u * P || csize % 32u) {
        snprintf(why, whylen,
                 "content_size %" PRIu32 " bits is outside [%u, %" PRIu32 "] or not a multiple of 32",
                 csize, 8u * EMB_PKT_HEADER_SIZE, 8u * P);
        return false;
    }
    uint64_t b = emb_get_le64(p + EMB_PKT_OFF_TS_BEGIN), e = emb_get_le64(p + EMB_PKT_OFF_TS_END);
    if (e < b) {
        snprintf(why, whylen, "timestamp_end %" PRIu64 " is before timestamp_begin %" PRIu64, e, b);
        return false;
    }
    return true;
}

/* Where the next packet of this trace may start, scanning from `from` in 4-byte steps:
 * the packet magic followed by the trace's uuid. Returns t->size when there is none. */
static size_t resync(struct emb_trace *t, size_t from)
{
    for (size_t q = from; q + 20 <= t->size; q += 4) {
        const uint8_t *at = emb_trace_at(t, q, 20);
        if (emb_get_le32(at) == EMB_PKT_MAGIC && !memcmp(at + 4, t->info.uuid, 16))
            return q;
    }
    return t->size;
}

enum emb_trace_step emb_trace_step_event(const struct emb_trace *t, const uint8_t *p,
                                         uint32_t pos, uint32_t content, uint64_t prev,
                                         struct emb_trace_event *r)
{
    if (content - pos < EMB_EVT_HEADER_SIZE)
        return EMB_STEP_SHORT;
    const uint8_t *e = p + pos;
    uint16_t flags = emb_get_le16(e + EMB_EVT_OFF_FLAGS);
    if (flags & 0xFF00u || (flags & EMB_EVT_FLAG_KIND_MASK) > EMB_EVT_KIND_FAULT)
        return EMB_STEP_FLAGS;
    /* 32-bit timestamps unwrap against the previous event, as a CTF reader does. */
    uint64_t ts = (prev & ~(uint64_t)0xFFFFFFFFu) | emb_get_le32(e + EMB_EVT_OFF_TS);
    if (ts < prev)
        ts += (uint64_t)1 << 32;
    r->id = emb_get_le16(e + EMB_EVT_OFF_ID);
    r->ev = emb_catalog_event(t->cat, r->id);
    if (r->ev && r->ev->size > content - pos)
        return EMB_STEP_PAST_END;
    r->ts = ts;
    r->kind = (uint8_t)(flags & EMB_EVT_FLAG_KIND_MASK);
    r->depth = (uint8_t)((flags & EMB_EVT_FLAG_DEPTH_MASK) >> EMB_EVT_FLAG_DEPTH_SHIFT);
    r->payload = e + EMB_EVT_HEADER_SIZE;
    if (!r->ev) {
        /* Sizes are unknown past this point: keep the bytes, stop the packet. */
        r->type = EMB_TREC_UNKNOWN;
        r->payload_size = content - pos - EMB_EVT_HEADER_SIZE;
        return EMB_STEP_UNKNOWN;
    }
    r->type = EMB_TREC_EVENT;
    r->payload_size = r->ev->payload_size;
    return EMB_STEP_EVENT;
}

/* Why the event at `at` was not decoded, reported. */
static void report_step(struct emb_trace *t, const struct ctx_state *c, enum emb_trace_step step,
                        long long at, const uint8_t *bytes, uint32_t left,
                        const struct emb_trace_event *r)
{
    if (step == EMB_STEP_SHORT)
        emb_trace_report(t, EMB_WARNING, at, "ctx %s: %" PRIu32 " bytes before content end, too few for an event header",
              c->pub.name, left);
    else if (step == EMB_STEP_FLAGS)
        emb_trace_report(t, EMB_WARNING, at + EMB_EVT_OFF_FLAGS, "ctx %s: event flags 0x%04x are not valid",
              c->pub.name, emb_get_le16(bytes + EMB_EVT_OFF_FLAGS));
    else if (step == EMB_STEP_PAST_END)
        emb_trace_report(t, EMB_WARNING, at, "ctx %s: event %s (%" PRIu32 " bytes) runs past the content end (%" PRIu32
              " bytes left)", c->pub.name, r->ev->name, r->ev->size, left);
    else
        emb_trace_report(t, EMB_WARNING, at, "ctx %s: unknown event id 0x%04x; the rest of the packet (%" PRIu32
              " bytes) is not decoded", c->pub.name, r->id, r->payload_size);
}

/* A streaming decode's first walk over a packet's events: it counts them and notes their
 * order as emb_trace_step_event() and emb_trace_note_record() would, reading only each
 * event's header (the cursor reads them again). It stops at the first event that is not a
 * plain catalogue event, which decode_events() then reads the long way; returns its pos. */
static uint32_t count_events(struct emb_trace *t, struct ctx_state *c, const uint8_t *p,
                             uint32_t pos, uint32_t content, uint64_t *prev_io)
{
    if (c->scratch_held) { /* the marker held comes first */
        c->scratch_held = false;
        emb_trace_note_record(t, c, c->scratch.ts);
    }
    uint64_t prev = *prev_io, last = c->last_seen_ts, latest = t->last_ts, events = 0;
    size_t seen = c->nseen;
    bool back = c->back_in_time;
    while (content - pos >= EMB_EVT_HEADER_SIZE) {
        const uint8_t *e = p + pos;
        uint16_t flags = emb_get_le16(e + EMB_EVT_OFF_FLAGS);
        const struct emb_catalog_event *ev = emb_catalog_event(t->cat, emb_get_le16(e + EMB_EVT_OFF_ID));
        if (flags & 0xFF00u || (flags & EMB_EVT_FLAG_KIND_MASK) > EMB_EVT_KIND_FAULT ||
            ev == NULL || ev->size > content - pos)
            break;
        uint64_t ts = (prev & ~(uint64_t)0xFFFFFFFFu) | emb_get_le32(e + EMB_EVT_OFF_TS);
        if (ts < prev)
            ts += (uint64_t)1 << 32;
        if (seen++ != 0 && ts < last)
            back = true;
        last = prev = ts;
        latest = ts > latest ? ts : latest;
        t->event_count[ev->id]++;
        events++;
        pos += ev->size;
    }
    c->nseen = seen;
    c->last_seen_ts = last;
    c->back_in_time = back;
    t->last_ts = latest;
    c->pub.events += events;
    t->sum.events += events;
    *prev_io = prev;
    return pos;
}

/* Decodes the events of a packet whose header is valid. Returns false when an event
 * could not be decoded (the ones before it are kept). */
static bool decode_events(struct emb_trace *t, struct ctx_state *c, size_t off,
                          const struct emb_trace_packet *pk)
{
    const uint8_t *p = pk->data;
    uint32_t content = pk->content_size;
    uint64_t prev = pk->ts_begin;
    uint32_t pos = EMB_PKT_HEADER_SIZE;
    if (t->stream)
        pos = count_events(t, c, p, pos, content, &prev);
    while (pos < content) {
        long long at = (long long)(off + pos);
        struct emb_trace_event e = {0};
        enum emb_trace_step step = emb_trace_step_event(t, p, pos, content, prev, &e);
        if (step != EMB_STEP_EVENT && step != EMB_STEP_UNKNOWN) {
            report_step(t, c, step, at, p + pos, content - pos, &e);
            return false;
        }
        if (t->stream) { /* counted only: the cursor reads the event again */
            emb_trace_note_record(t, c, e.ts);
        } else {
            struct emb_trace_event *r = emb_trace_push_record(t, c);
            if (!r)
                return false;
            e.ctx = r->ctx;
            e.context_id = r->context_id;
            e.offset = emb_trace_source_offset(t, at);
            *r = e;
        }
        if (step == EMB_STEP_UNKNOWN) {
            c->pub.unknown++;
            t->sum.unknown++;
            report_step(t, c, step, at, p + pos, content - pos, &e);
            return false;
        }
        c->pub.events++;
        t->sum.events++;
        t->event_count[e.id]++;
        prev = e.ts;
        pos += e.ev->size;
    }
    if (pk->ts_end < prev) {
        emb_trace_report(t, EMB_WARNING, (long long)off + EMB_PKT_OFF_TS_END,
              "ctx %s: timestamp_end %" PRIu64 " is before the packet's last event at %" PRIu64,
              c->pub.name, pk->ts_end, prev);
        return false;
    }
    return true;
}

/* The packet follows its context's last in order: false (reported, the packet skipped)
 * when its sequence number or its start goes back. */
static bool in_order(struct emb_trace *t, const struct ctx_state *c,
                     const struct emb_trace_packet *pk, size_t off)
{
    if (pk->seq <= c->prev_seq) {
        emb_trace_report(t, EMB_WARNING, (long long)off + EMB_PKT_OFF_SEQ,
                         "ctx %s: packet_seq_num %" PRIu32 " does not follow %" PRIu32
                         "; packet skipped", c->pub.name, pk->seq, c->prev_seq);
        t->sum.bad_packets++;
        return false;
    }
    if (pk->ts_begin < c->prev_ts_end) {
        emb_trace_report(t, EMB_WARNING, (long long)off + EMB_PKT_OFF_TS_BEGIN,
                         "ctx %s: timestamp_begin %" PRIu64 " is before the previous packet's "
                         "end %" PRIu64 "; packet skipped", c->pub.name, pk->ts_begin,
                         c->prev_ts_end);
        t->sum.bad_packets++;
        return false;
    }
    return true;
}

/* Packets missing between the context's last and this one: overwritten by the ring, or a
 * LOST marker. False when out of memory. */
static bool count_gap(struct emb_trace *t, struct ctx_state *c, struct emb_trace_packet *pk)
{
    uint32_t gap = pk->seq - c->prev_seq - 1;
    if (gap == 0)
        return true;
    if (pk->discarded >= c->prev_discarded && pk->discarded - c->prev_discarded >= gap) {
        /* The ring overwrote them unread (a stalled consumer): every packet holds an
         * event, and the reader raised this packet's events_discarded by theirs, so
         * they are counted as discarded events, not as packets lost on the way. */
        c->pub.overwritten_packets += gap;
        t->sum.overwritten_packets += gap;
        return true;
    }
    if (!emb_trace_push_marker(t, c, EMB_TREC_LOST, pk->ts_begin, pk->offset, gap))
        return false;
    pk->lost_before = gap;
    c->pub.lost_packets += gap;
    t->sum.lost_packets += gap;
    return true;
}

/* The packet is its context's latest: sequence, end and the trace's time span. */
static void accept(struct emb_trace *t, struct ctx_state *c, const struct emb_trace_packet *pk)
{
    if (!c->have_prev)
        c->pub.first_seq = pk->seq;
    c->have_prev = true;
    c->prev_seq = pk->seq;
    c->prev_ts_end = pk->ts_end;
    c->pub.packets++;
    t->sum.packets++;
    if (!t->start_known && (t->info.start_ts > pk->ts_begin || t->sum.packets == 1))
        t->info.start_ts = pk->ts_begin;
    if (t->info.end_ts < pk->ts_end)
        t->info.end_ts = pk->ts_end;
}

/* The packet's running events_discarded: a DISCARDED marker when it rose. False when out
 * of memory. */
static bool count_discarded(struct emb_trace *t, struct ctx_state *c,
                            struct emb_trace_packet *pk, size_t off)
{
    if (pk->discarded < c->prev_discarded) {
        emb_trace_report(t, EMB_WARNING, (long long)off + EMB_PKT_OFF_DISCARDED,
                         "ctx %s: events_discarded went down from %" PRIu32 " to %" PRIu32,
                         c->pub.name, c->prev_discarded, pk->discarded);
        pk->clean = false;
    } else if (pk->discarded > c->prev_discarded) {
        /* Drops happen when the packet after this one could not open: by its close. */
        if (!emb_trace_push_marker(t, c, EMB_TREC_DISCARDED, pk->ts_end, pk->offset,
                                   pk->discarded - c->prev_discarded))
            return false;
        pk->discarded_after = pk->discarded - c->prev_discarded;
        c->prev_discarded = pk->discarded;
        c->pub.discarded = pk->discarded;
    }
    return true;
}

/* Takes the packet at `off`, whose header is valid and whose bytes are all present.
 * Returns false when it is refused as a whole (it breaks its context's order). */
static bool take_packet(struct emb_trace *t, size_t off)
{
    const uint8_t *p = emb_trace_packet_bytes(t, off);
    if (p == NULL)
        return false;
    struct emb_trace_packet pk = {
        .offset = emb_trace_source_offset(t, off),
        .data = p,
        .seq = emb_get_le32(p + EMB_PKT_OFF_SEQ),
        .ts_begin = emb_get_le64(p + EMB_PKT_OFF_TS_BEGIN),
        .ts_end = emb_get_le64(p + EMB_PKT_OFF_TS_END),
        .content_size = emb_get_le32(p + EMB_PKT_OFF_CONTENT_SIZE) / 8u,
        .discarded = emb_get_le32(p + EMB_PKT_OFF_DISCARDED),
    };
    uint16_t id = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_ID);
    uint16_t kind = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_KIND);
    long ci = t->ctx_index[id];
    if (ci < 0 && (ci = emb_trace_add_context(t, id, kind)) < 0)
        return false;
    struct ctx_state *c = &t->ctx[ci];
    pk.ctx = (uint32_t)ci;
    if (c->have_prev && (!in_order(t, c, &pk, off) || !count_gap(t, c, &pk)))
        return false;
    accept(t, c, &pk);
    pk.clean = decode_events(t, c, off, &pk);
    if (!count_discarded(t, c, &pk, off))
        return false;
    struct emb_trace_packet *pkts = emb_array_grow(t->pkts, &t->pkt_cap, t->npkts + 1, sizeof *pkts);
    if (!pkts) {
        t->oom = true;
        return false;
    }
    t->pkts = pkts;
    t->pkts[t->npkts++] = pk;
    return true;
}

void emb_trace_walk_packets(struct emb_trace *t)
{
    uint32_t P = t->info.packet_size;
    size_t off = t->info.header_size;
    uint64_t next_progress = 0, next_release = 1u << 22;
    char why[256];
    while (off < t->size && !t->oom) {
        if (t->stream && off >= next_release) { /* nothing before `off` is read again here */
            emb_trace_release_before(t, emb_trace_sealed_offset(&t->seal, off));
            next_release = off + (1u << 22);
        }
        if (t->opt->progress && off >= next_progress) {
            t->opt->progress(t->opt->progress_arg, off, t->size);
            next_progress = off + (1u << 20);
        }
        size_t left = t->size - off;
        bool header_ok = left >= EMB_PKT_HEADER_SIZE && packet_header_ok(t, off, why, sizeof why);
        if (header_ok && left >= P) {
            take_packet(t, off);
            off += P;
            continue;
        }
        if (header_ok || (left < EMB_PKT_HEADER_SIZE && left >= 4 &&
                          emb_get_le32(emb_trace_at(t, off, 4)) == EMB_PKT_MAGIC)) {
            emb_trace_report(t, EMB_WARNING, (long long)off, "truncated packet: %zu of %" PRIu32 " bytes", left, P);
            t->sum.bad_packets++;
            break;
        }
        if (left < EMB_PKT_HEADER_SIZE)
            snprintf(why, sizeof why, "%zu trailing bytes are not a packet", left);
        size_t next = resync(t, off + 4);
        if (next < t->size)
            emb_trace_report(t, EMB_WARNING, (long long)off, "%s; skipped %zu bytes to the next packet", why, next - off);
        else
            emb_trace_report(t, EMB_WARNING, (long long)off, "%s; no packet follows in the last %zu bytes", why, left);
        t->sum.bad_packets++;
        off = next;
    }
    if (t->opt->progress)
        t->opt->progress(t->opt->progress_arg, t->size, t->size);
}