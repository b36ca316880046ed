/* The trace ring protocol, case by case, on a port whose clock and preemption points the
 * test controls (tests/target/testport). Each test reads the packets back through the ring's
 * own readers and checks every byte that matters. */
#include <emb/trace.h>
#include <emb/trace_events.h>

#include <stdlib.h>
#include <string.h>

#include "harness.h"

uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);

uint64_t emb_port_timestamp_hz(void) { return 1000000000u; }
int64_t emb_port_clock_offset_ns(void) { return 0; }
struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    if (emb_test_claim_ring != NULL)
        emb_test_ring = emb_test_claim_ring;
    return emb_test_claim_ring;
}

#define P CONFIG_EMB_TRACE_PACKET_SIZE
#define NPKT 4u
/* A catalogue event of 16 bytes (the ring counts an overwritten packet's events by the
 * catalogue's sizes); its payload here is the test's seq (u32) and tag (u32). */
#define EV_SIZE EMB_TRACE_SIZE_SWITCH
#define EV_ID EMB_TRACE_ID_SWITCH
_Static_assert(EMB_TRACE_SIZE_SWITCH == 16u, "the test's event is 16 bytes");

static _Alignas(P) uint8_t ring_buf[NPKT * P];
static uint32_t ring_commit[NPKT];
static struct emb_trace_ring ring;

static const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void setup(enum emb_trace_mode mode)
{
    emb_trace_init(uuid, mode, 0xFFFFFFFFu);
    emb_trace_ring_init(&ring, 7, EMB_CONTEXT_CPU, ring_buf, ring_commit, NPKT);
    emb_test_ring = &ring;
    emb_test_claim_ring = NULL;
    emb_test_preempt = NULL;
    emb_test_clock = 1000;
    emb_test_clock_step = 10;
}

/* Records one test event; returns 1 if recorded, 0 if dropped. */
static int emit(uint32_t seq, uint32_t tag)
{
    struct emb_trace_slot slot = emb_trace_try_reserve(EV_ID, EV_SIZE);
    if (slot.payload == NULL)
        return 0;
    emb_put_le32(slot.payload, seq);
    emb_put_le32(slot.payload + 4, tag);
    emb_trace_commit(slot, EV_SIZE);
    return 1;
}

/* ---- Reading back ---- */

struct event {
    uint64_t ts;
    uint16_t flags;
    uint32_t seq, tag;
    uint32_t packet_seq;
};

struct readout {
    struct event events[4096];
    unsigned nevents;
    unsigned npackets;
    uint32_t packet_seqs[64];
    uint32_t discarded; /* from the last packet */
    uint64_t last_end;  /* timestamp_end of the previous packet */
    int bad;            /* a packet broke a rule */
};

static struct readout out;

static void take_packet(void *arg, const struct emb_trace_ring *r, const uint8_t *pkt, uint32_t size)
{
    struct readout *o = arg;
    (void)r;
    uint32_t content = emb_get_le32(pkt + EMB_PKT_OFF_CONTENT_SIZE) / 8u;
    uint64_t begin = emb_get_le64(pkt + EMB_PKT_OFF_TS_BEGIN);
    uint64_t end = emb_get_le64(pkt + EMB_PKT_OFF_TS_END);
    uint32_t pseq = emb_get_le32(pkt + EMB_PKT_OFF_SEQ);
    if (size != P || emb_get_le32(pkt) != EMB_PKT_MAGIC || memcmp(pkt + 4, uuid, 16) != 0 ||
        emb_get_le32(pkt + EMB_PKT_OFF_PACKET_SIZE) != P * 8u || content < EMB_PKT_HEADER_SIZE ||
        content >= P || emb_get_le16(pkt + EMB_PKT_OFF_CONTEXT_ID) != 7u || end < begin) {
        o->bad++;
        return;
    }
    /* Packets of a context follow each other in time, as a CTF reader requires. */
    if (o->npackets > 0 && begin < o->last_end)
        o->bad++;
    o->last_end = end;
    if (o->npackets < 64)
        o->packet_seqs[o->npackets] = pseq;
    o->npackets++;
    o->discarded = emb_get_le32(pkt + EMB_PKT_OFF_DISCARDED);
    uint64_t prev = begin;
    for (uint32_t off = EMB_PKT_HEADER_SIZE; off < content; off += EV_SIZE) {
        const uint8_t *e = pkt + off;
        if (emb_get_le16(e + 4) != EV_ID || off + EV_SIZE > content) {
            o->bad++;
            return;
        }
        /* Unwrap against the previous event, as a CTF reader does. */
        uint32_t ts32 = emb_get_le32(e);
        uint64_t ts = prev + (uint32_t)(ts32 - (uint32_t)prev);
        if (ts > end || (ts >> 32) != (begin >> 32))
            o->bad++;
        prev = ts;
        if (o->nevents < 4096)
            o->events[o->nevents++] = (struct event){ts, emb_get_le16(e + 6), emb_get_le32(e + 8),
                                                     emb_get_le32(e + 12), pseq};
    }
}

static void read_snapshot(void)
{
    static uint8_t scratch[P];
    memset(&out, 0, sizeof out);
    emb_trace_ring_snapshot(&ring, scratch, take_packet, &out);
}

static int events_in_order(void)
{
    for (unsigned i = 1; i < out.nevents; i++)
        if (out.events[i].ts < out.events[i - 1].ts)
            return 0;
    return 1;
}

/* ---- Cases ---- */

static void test_basic(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    for (uint32_t i = 0; i < 10; i++)
        ok(emit(i, 0xAB), "event %u recorded", i);
    read_snapshot();
    ok_eq(out.npackets, 0, "an open packet is not readable");
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.bad, 0, "packet is well formed");
    ok_eq(out.npackets, 1, "one packet after flush");
    ok_eq(out.nevents, 10, "ten events");
    ok(out.events[0].ts >= 1000 && out.events[0].ts <= 1020, "first timestamp from the clock");
    ok_eq(out.events[9].seq, 9, "last event's payload");
    ok(events_in_order(), "timestamps in order");
    ok_eq(ring_commit[0], P, "slot fully committed");
}

static void test_packet_switch(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE; /* never exactly full */
    unsigned n = per_packet * 2 + 5;
    for (unsigned i = 0; i < n; i++)
        emit(i, 0);
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.bad, 0, "packets well formed");
    ok_eq(out.npackets, 3, "three packets");
    ok_eq(out.nevents, n, "every event read back");
    ok(out.packet_seqs[0] == 0 && out.packet_seqs[1] == 1 && out.packet_seqs[2] == 2,
       "packet_seq_num counts packets");
    int seq_ok = 1;
    for (unsigned i = 0; i < out.nevents; i++)
        seq_ok &= out.events[i].seq == i;
    ok(seq_ok, "events in recording order across packets");
}

static void test_snapshot_overwrite(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    unsigned n = per_packet * 10 + 3; /* 11 packets through a 4-packet ring */
    for (unsigned i = 0; i < n; i++)
        emit(i, 0);
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.bad, 0, "packets well formed");
    ok_eq(out.npackets, NPKT, "a full ring holds its packet count");
    ok_eq(out.packet_seqs[0], 7, "the oldest kept packet is the 8th: 7 were overwritten");
    ok_eq(out.events[out.nevents - 1].seq, n - 1, "the newest event is kept");
    /* SPEC-015 §3.2: overflow drops the oldest packet and increments events_discarded.
     * Seven packets of per_packet events each were overwritten. */
    ok_eq(ring.discarded, 7u * per_packet, "the ring counts every overwritten event");
    ok_eq(out.discarded, 7u * per_packet, "the newest packet's events_discarded says so");
    ok_eq(out.events[0].seq, 7u * per_packet, "and they are exactly the events before the oldest kept");
}

static void test_clock_high_word(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    /* Several 32-bit wraps, a few events each: every packet must stay within one high word
     * so a reader's 32-bit unwrapping is exact. */
    emb_test_clock_step = 0;
    for (uint32_t i = 0; i < 20; i++) {
        emb_test_clock = 0xFFFFFF00u + (uint64_t)i * 0x40000000u; /* four events per wrap */
        emit(i, 0);
    }
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.bad, 0, "packets well formed and events inside their packet's high word");
    int exact = 1;
    for (unsigned i = 0; i < out.nevents; i++)
        exact &= out.events[i].ts == 0xFFFFFF00u + (uint64_t)out.events[i].seq * 0x40000000u;
    ok(exact, "64-bit times rebuilt exactly across five wraps");
    ok(out.nevents >= 12, "events of the last packets kept (%u)", out.nevents);
    ok(events_in_order(), "monotonic");
}

/* A producer preempted after reading the clock: the preempting event goes first and the
 * preempted one retries with a fresh timestamp. */
static uint32_t nested_seq;
static void preempt_emit(enum emb_test_point point)
{
    (void)point;
    emb_test_clock += 5;
    uint32_t saved = ring.event_flags;
    emb_trace_enter_handler(&ring, EMB_EVT_KIND_ISR);
    emit(nested_seq, 0x15);
    emb_trace_leave_handler(&ring);
    ok_eq(ring.event_flags, saved, "handler flags restored");
}

static void test_preempt_after_clock(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    emit(0, 0);
    nested_seq = 100;
    emb_test_preempt = preempt_emit; /* fires at the next clock read */
    emit(1, 0);
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.nevents, 3, "three events");
    ok(out.nevents == 3 && out.events[1].seq == 100 && out.events[2].seq == 1,
       "the preempting event precedes the preempted one");
    ok(out.nevents == 3 && (out.events[1].flags & EMB_EVT_FLAG_KIND_MASK) == EMB_EVT_KIND_ISR &&
           ((out.events[1].flags & EMB_EVT_FLAG_DEPTH_MASK) >> EMB_EVT_FLAG_DEPTH_SHIFT) == 1,
       "the preempting event carries the ISR kind and depth 1");
    ok(out.nevents == 3 && out.events[2].flags == 0, "the thread event carries kind thread");
    ok(events_in_order(), "timestamps follow reservation order");
}

/* Preempted between reservation and commit: the packet is incomplete until the preempted
 * producer commits, so a reader never sees its half-written record. */
static int readable_during_preempt = -1;
static void preempt_and_read(enum emb_test_point point)
{
    (void)point;
    emit(200, 0x15);
    emb_trace_flush(&ring); /* a flush from the handler closes the packet under the writer */
    static uint8_t scratch[P];
    struct readout *o = calloc(1, sizeof *o);
    readable_during_preempt = (int)emb_trace_ring_snapshot(&ring, scratch, take_packet, o);
    free(o);
}

static void test_preempt_before_commit(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    emit(0, 0);
    emb_test_preempt = NULL;
    /* Reserve by hand so the preemption lands between the payload and the commit. */
    struct emb_trace_slot slot = emb_trace_try_reserve(EV_ID, EV_SIZE);
    emb_put_le32(slot.payload, 1);
    emb_put_le32(slot.payload + 4, 0);
    emb_test_preempt = preempt_and_read; /* fires inside the commit, before the add */
    emb_trace_commit(slot, EV_SIZE);
    ok_eq(readable_during_preempt, 0, "packet with an uncommitted record is not readable");
    read_snapshot();
    ok_eq(out.bad, 0, "packet well formed");
    ok_eq(out.nevents, 3, "after the commit every record is there, whole");
    ok(out.nevents == 3 && out.events[1].seq == 1 && out.events[2].seq == 200,
       "the preempted record keeps its place");
}

/* Preempted in the middle of a packet switch, after the swap and before the new header is
 * written: the preempting producer records into the new packet and may even close it. */
static unsigned switch_hits;
static void preempt_in_switch(enum emb_test_point point)
{
    if (point != EMB_TEST_AT_SWAPPED) {
        emb_test_preempt = preempt_in_switch; /* wait for the swap */
        return;
    }
    switch_hits++;
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    for (unsigned i = 0; i < per_packet + 2; i++) /* fills the new packet and switches again */
        emit(1000 + i, 0x15);
}

static void test_preempt_in_switch(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    for (unsigned i = 0; i < per_packet; i++)
        emit(i, 0);
    emb_test_preempt = preempt_in_switch;
    emit(per_packet, 0); /* this one switches packets */
    emit(per_packet + 1, 0);
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(switch_hits, 1, "preempted inside the switch");
    ok_eq(out.bad, 0, "every packet well formed: opener and closer did not overwrite each other");
    ok_eq(out.nevents, per_packet * 2 + 4, "every event read back");
    ok(events_in_order(), "timestamps in order");
}

/* A preempting producer that goes all the way round the ring while the preempted one
 * holds a reservation: it must drop (and count) rather than overwrite the held slot. */
static unsigned dropped_in_handler;
static void preempt_flood(enum emb_test_point point)
{
    (void)point;
    for (unsigned i = 0; i < 400; i++)
        if (!emit(5000 + i, 0x15))
            dropped_in_handler++;
}

static void test_preempt_floods_ring(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    emit(0, 0);
    struct emb_trace_slot slot = emb_trace_try_reserve(EV_ID, EV_SIZE);
    emb_put_le32(slot.payload, 1);
    emb_put_le32(slot.payload + 4, 0);
    emb_test_preempt = preempt_flood;
    emb_trace_commit(slot, EV_SIZE);
    ok(dropped_in_handler > 0, "the flood dropped events (%u) instead of overwriting", dropped_in_handler);
    ok_eq(ring.discarded, dropped_in_handler, "every drop counted");
    read_snapshot();
    ok_eq(out.bad, 0, "packets well formed");
    ok(out.nevents > 2 && out.events[0].seq == 0 && out.events[1].seq == 1 &&
           out.events[1].tag == 0 && out.events[2].seq == 5000,
       "the preempted record survived whole, ahead of the flood");
    emit(2, 0);
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.bad, 0, "packets well formed after the ring moves on");
    /* 403 events were emitted: 0, 1, the flood's 400 and 2. Those not read back were
     * dropped during the flood or overwritten when recording resumed (the packet
     * holding 0, 1 and the flood's first events gave its slot to 2). */
    ok(out.discarded > dropped_in_handler, "the overwritten packet adds to the drops");
    ok_eq(out.nevents + out.discarded, 403u, "events_discarded published in the packet header");
    ok_eq(out.events[out.nevents - 1].seq, 2, "recording resumes once the slot is free");
}

/* A slow path preempted between its swap and its publication of the open packet (its
 * commit counter, commit_open, then packet_end) by a producer that fills that packet and
 * publishes the next; then, in the middle of the late publication, by one more event. Had
 * the late publisher paired its counter with the preempting producer's packet_end, that
 * event would pass the fast path's check and commit to the older packet's counter: one
 * packet never complete, the other over-full, both lost to readers and uncounted. */
static unsigned late_publish_hits;
static void preempt_in_late_publish(enum emb_test_point point)
{
    if (point != EMB_TEST_AT_PUBLISH) {
        emb_test_preempt = preempt_in_late_publish;
        return;
    }
    late_publish_hits++;
    emit(9000, 0x17);
}

static void preempt_before_publish(enum emb_test_point point)
{
    if (point != EMB_TEST_AT_SWAPPED) {
        emb_test_preempt = preempt_before_publish;
        return;
    }
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    for (unsigned i = 0; i < per_packet + 2; i++) /* fills the packet and opens the next */
        emit(100 + i, 0x16);
    emb_test_preempt = preempt_in_late_publish;
}

static void test_preempt_late_publish(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    emb_test_preempt = preempt_before_publish;
    emit(0, 0); /* opens the first packet: the slow path */
    emb_test_preempt = NULL;
    ok_eq(late_publish_hits, 1, "preempted inside the late publication");
    emit(1, 0);
    emit(2, 0);
    emb_trace_flush(&ring);
    read_snapshot();
    unsigned produced = 1u + per_packet + 2u + 1u + 2u;
    ok_eq(out.bad, 0, "packets well formed");
    ok_eq(out.nevents, produced, "every event read back (%u of %u)", out.nevents, produced);
    ok_eq(ring.discarded, 0, "none dropped");
    ok(events_in_order(), "timestamps in order");
}

static void consume_into(void *arg, const struct emb_trace_ring *r, const uint8_t *pkt, uint32_t size)
{
    take_packet(arg, r, pkt, size);
}

/* A flush preempted just after its swap by a producer that opens the next packet: the
 * flushed packet must end no later than the next one begins. */
static void preempt_after_flush_swap(enum emb_test_point point)
{
    if (point != EMB_TEST_AT_SWAPPED) {
        emb_test_preempt = preempt_after_flush_swap;
        return;
    }
    emit(300, 0x15);
}

static void test_preempt_flush(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    emit(0, 0);
    emit(1, 0);
    emb_test_preempt = preempt_after_flush_swap;
    emb_trace_flush(&ring);
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.npackets, 2, "the flushed packet and the one the preempting producer opened");
    ok_eq(out.bad, 0, "the flushed packet ends before the next begins");
    ok(out.nevents == 3 && out.events[2].seq == 300, "the preempting event is in the second packet");
}

static void test_streaming(void)
{
    setup(EMB_TRACE_MODE_STREAMING);
    memset(&out, 0, sizeof out);
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    unsigned recorded = 0, dropped = 0, emitted = per_packet * 6;
    /* The consumer is absent: once the ring is full the producer overwrites the oldest
     * unread packet, so the ring holds the newest events (the flight recorder's need). */
    for (unsigned i = 0; i < emitted; i++)
        emit(i, 0) ? recorded++ : dropped++;
    ok_eq(dropped, 0, "a stalled consumer makes the producer overwrite, not drop");
    /* Six packets' worth went through a four-packet ring: packets 0 and 1 were taken
     * from the consumer before it read them. */
    ok_eq(ring.discarded, 2u * per_packet, "the overwritten events are counted");
    uint32_t n = emb_trace_ring_consume(&ring, consume_into, &out);
    ok_eq(n, NPKT - 1, "completed packets handed over");
    ok_eq(out.packet_seqs[0], 2, "the consumer resumes at the oldest packet still held");
    ok_eq(out.events[0].seq, 2u * per_packet, "its first event follows the last one overwritten");
    ok_eq(out.discarded, 2u * per_packet, "events_discarded tells the consumer what it missed");
    for (unsigned i = 0; i < per_packet * 2; i++)
        emit(100000 + i, 0) ? recorded++ : dropped++;
    emb_trace_flush(&ring);
    emb_trace_ring_consume(&ring, consume_into, &out);
    ok_eq(out.bad, 0, "packets well formed");
    ok_eq(out.nevents + out.discarded, recorded, "every event is consumed or counted");
    ok_eq(out.events[out.nevents - 1].seq, 100000u + per_packet * 2 - 1u, "the newest event arrives");
    int ordered = 1;
    for (unsigned i = 1; i < out.nevents; i++)
        ordered &= out.events[i].packet_seq >= out.events[i - 1].packet_seq;
    ok(ordered, "packets consumed in order");
}

/* A producer that needs the slot of the packet the consumer is handing on at that moment
 * (another context, run here from inside the sink) must not write into it. */
static unsigned claimed_calls, claimed_dropped;
static uint8_t claimed_copy[P];

static void consume_while_producing(void *arg, const struct emb_trace_ring *r, const uint8_t *pkt,
                                    uint32_t size)
{
    if (claimed_calls++ == 0u) {
        memcpy(claimed_copy, pkt, size);
        /* The ring is full of unread packets and the open one is full: the next switch
         * wants the slot being handed on. */
        for (unsigned i = 0; i < 10u; i++)
            claimed_dropped += emit(50000 + i, 0) ? 0u : 1u;
        ok(memcmp(claimed_copy, pkt, size) == 0, "the packet being handed on was not overwritten");
    }
    take_packet(arg, r, pkt, size);
}

static void test_streaming_claim(void)
{
    setup(EMB_TRACE_MODE_STREAMING);
    memset(&out, 0, sizeof out);
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    for (unsigned i = 0; i < per_packet * NPKT; i++)
        emit(i, 0);
    claimed_calls = claimed_dropped = 0;
    uint32_t discarded_before = ring.discarded;
    emb_trace_ring_consume(&ring, consume_while_producing, &out);
    ok_eq(claimed_dropped, 10u, "events that needed the claimed slot were dropped");
    ok_eq(ring.discarded - discarded_before, 10u, "and counted");
    ok_eq(out.bad, 0, "packets well formed");
    ok_eq(out.events[0].seq, 0, "the consumer got the packet it claimed, whole");
}

/* Interrupts that preempt a producer in its packet switch, after it found the next slot
 * free and before it reads read_pos, fill packets that the consumer then reads: the
 * producer's next packet is behind read_pos. It must start over, not take read_pos back
 * (counting packets that were read as overwritten). */
static unsigned stale_loads;
static struct readout stale_out;
static void preempt_stale_switch(void)
{
    /* The slow path's first acquire load is the slot's commit count, the second read_pos. */
    if (++stale_loads < 2u) {
        emb_test_preempt_load = preempt_stale_switch;
        return;
    }
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    for (unsigned i = 0; i < per_packet * 3u; i++)
        emit(2000 + i, 0x15);
    emb_trace_ring_consume(&ring, consume_into, &stale_out);
}

static void test_streaming_stale_switch(void)
{
    setup(EMB_TRACE_MODE_STREAMING);
    memset(&stale_out, 0, sizeof stale_out);
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    for (unsigned i = 0; i < per_packet; i++) /* the open packet is full */
        emit(i, 0);
    emb_trace_ring_consume(&ring, consume_into, &stale_out);
    stale_loads = 0;
    emb_test_preempt_load = preempt_stale_switch;
    ok(emit(per_packet, 0), "the preempted event is recorded");
    emb_test_preempt_load = NULL;
    ok_eq(stale_loads, 2, "preempted between the slot check and the read_pos load");
    emb_trace_flush(&ring);
    emb_trace_ring_consume(&ring, consume_into, &stale_out);
    unsigned emitted = per_packet + per_packet * 3u + 1u;
    ok_eq(ring.discarded, 0, "nothing was lost, nothing is counted");
    ok_eq(stale_out.nevents, emitted, "every event consumed once");
    ok_eq(stale_out.bad, 0, "packets well formed");
}

static void test_window(void)
{
    setup(EMB_TRACE_MODE_WINDOW);
    emb_trace_window_arm_at(600);
    ok_eq(emb_trace_window_state(), EMB_TRACE_WINDOW_WAITING, "window waits");
    ok_eq(emb_trace_class_mask, 0, "nothing enabled before arming");
    ok_eq(emb_trace_frame_mark(599), 0, "frame 599 does not arm");
    ok_eq(emb_trace_frame_mark(600), 1, "frame 600 arms");
    ok_eq(emb_trace_window_state(), EMB_TRACE_WINDOW_ARMED, "armed");
    ok_eq(emb_trace_class_mask, 0xFFFFFFFFu, "classes enabled while armed");
    unsigned recorded = 0, i = 0;
    for (; i < 1000 && emb_trace_window_state() != EMB_TRACE_WINDOW_CLOSED; i++)
        recorded += (unsigned)emit(i, 0);
    ok_eq(emb_trace_window_state(), EMB_TRACE_WINDOW_CLOSED, "a full ring closes the window");
    ok_eq(recorded, i - 1u, "the event that found the window full was refused");
    ok_eq(emb_trace_frame_mark(600), 0, "a closed window does not re-arm");
    ok_eq(emb_trace_class_mask, 0xFFFFFFFFu, "the class gate stays as it was");
    ok_eq(ring.packet_end, 0u, "the close ended the open packet for the fast path");
    /* Every event after the close reaches the slow path and is counted, the small ones
     * that would still fit in the last packet's tail included. */
    unsigned after = 0;
    for (unsigned k = 0; k < 25u; k++)
        after += (unsigned)!emit(10000u + k, 0);
    /* A 12-byte event: it fits in the 16 bytes the last packet has left. */
    struct emb_trace_slot small = emb_trace_try_reserve(EMB_TRACE_ID_TICK, EMB_TRACE_SIZE_TICK);
    after += small.payload == NULL;
    if (small.payload != NULL)
        emb_trace_commit(small, EMB_TRACE_SIZE_TICK);
    ok_eq(after, 26u, "every event after the close is refused");
    ok_eq(ring.discarded, 27u, "and counted, with the one that closed the window");
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.bad, 0, "packets well formed");
    ok_eq(out.npackets, NPKT, "the window filled the ring once");
    ok_eq(out.nevents, recorded, "every recorded event is in the window");
    ok_eq(out.discarded, 27u, "the last packet's events_discarded counts them all");
    ok(out.nevents > 0 && out.events[0].seq == 0, "the window starts at the arming point");
}

static void test_position_wrap(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    /* Start just below 2^32 so the free-running position wraps during the test. */
    uint32_t start = 0u - 2u * P;
    ring.write_pos = ring.base_pos = ring.packet_end = start;
    unsigned per_packet = (P - EMB_PKT_HEADER_SIZE - 1u) / EV_SIZE;
    for (unsigned i = 0; i < per_packet * 5; i++)
        emit(i, 0);
    emb_trace_flush(&ring);
    read_snapshot();
    ok_eq(out.bad, 0, "packets well formed across the 2^32 position wrap");
    ok_eq(out.npackets, NPKT, "ring full");
    ok_eq(out.events[out.nevents - 1].seq, per_packet * 5 - 1, "newest kept");
    ok(events_in_order(), "order kept");
}

static void test_claim(void)
{
    setup(EMB_TRACE_MODE_SNAPSHOT);
    emb_test_ring = &emb_trace_unclaimed_ring;
    emb_test_claim_ring = NULL;
    uint32_t lost = emb_trace_lost_no_ring();
    ok_eq(emit(1, 0), 0, "no ring to claim: dropped");
    ok_eq(emb_trace_lost_no_ring(), lost + 1, "and counted");
    emb_test_claim_ring = &ring;
    ok_eq(emit(2, 0), 1, "claimed on first event");
    ok(emb_test_ring == &ring, "context now owns the ring");
}

int main(void)
{
    test_basic();
    test_packet_switch();
    test_snapshot_overwrite();
    test_clock_high_word();
    test_preempt_after_clock();
    test_preempt_before_commit();
    test_preempt_in_switch();
    test_preempt_floods_ring();
    test_preempt_flush();
    test_preempt_late_publish();
    test_streaming();
    test_streaming_claim();
    test_streaming_stale_switch();
    test_window();
    test_position_wrap();
    test_claim();
    return emb_test_done();
}
