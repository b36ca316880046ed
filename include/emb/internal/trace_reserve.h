/* Not API: the trace reservation every emitter inlines, part of emb/trace.h and included
 * by it alone; names here change without notice. Each step's ordering argument is in
 * docs/formats/trace.md ("Ring protocol"). */
#ifndef EMB_INTERNAL_TRACE_RESERVE_H
#define EMB_INTERNAL_TRACE_RESERVE_H

#ifndef EMB_TRACE_H
#error "emb/internal/trace_reserve.h is part of emb/trace.h: include <emb/trace.h>"
#endif

#include <emb/port.h>

/* log2 of the packet size, as a constant the fast path can shift by. */
#define EMB_TRACE_PACKET_SHIFT                                                                     \
    (CONFIG_EMB_TRACE_PACKET_SIZE >= 65536u   ? 16u                                                \
     : CONFIG_EMB_TRACE_PACKET_SIZE >= 32768u ? 15u                                                \
     : CONFIG_EMB_TRACE_PACKET_SIZE >= 16384u ? 14u                                                \
     : CONFIG_EMB_TRACE_PACKET_SIZE >= 8192u  ? 13u                                                \
     : CONFIG_EMB_TRACE_PACKET_SIZE >= 4096u  ? 12u                                                \
     : CONFIG_EMB_TRACE_PACKET_SIZE >= 2048u  ? 11u                                                \
     : CONFIG_EMB_TRACE_PACKET_SIZE >= 1024u  ? 10u                                                \
     : CONFIG_EMB_TRACE_PACKET_SIZE >= 512u   ? 9u                                                 \
                                              : 8u)

/* The clock split in halves: the fast path compares the high half with the open packet's
 * and stores the low half. A port may provide EMB_PORT_TIMESTAMP_SPLIT (x86-64's rdtsc
 * returns the halves in two registers); otherwise they come from emb_port_timestamp(). */
static inline uint32_t emb__trace_clock(uint32_t *high)
{
#if defined(EMB_PORT_TIMESTAMP_SPLIT)
    return emb_port_timestamp_split(high);
#else
    uint64_t now = emb_port_timestamp();
    *high = (uint32_t)(now >> 32);
    return (uint32_t)now;
#endif
}

/* True when a reservation ending at `end` reaches the open packet's end, `*packet_end`:
 * the one fast-path word another context may store (the close of a window stores 0 into
 * every ring's), so it is read atomically. A port may provide EMB_PORT_COMPARE_AT_LEAST,
 * a compare against memory in one instruction (x86-64: an atomic load to the processor,
 * where compilers do not fold an atomic load into the compare). */
static inline bool emb__trace_reaches(const uint32_t *packet_end, uint32_t end)
{
#if defined(EMB_PORT_COMPARE_AT_LEAST)
    return emb_port_compare_at_least(end, packet_end);
#else
    return end >= __atomic_load_n(packet_end, __ATOMIC_RELAXED);
#endif
}

/* Where the port's context-local add is one instruction (EMB_PORT_LOCAL_ADD_ONE_INSN,
 * x86-64), each event counts itself in the last word of its packet, the packet's tail,
 * which no event reaches (packet_end stops EMB_TRACE_PACKET_TAIL bytes short of the
 * packet's end; the tail is padding to readers, after content_size): the slow path then
 * reads an overwritten packet's event count in O(1) where it would walk its events. Two
 * instructions per event against the walk's twelve (docs/benchmarks.md). Elsewhere
 * (LDREX/STREX, interrupt masking) an add costs more than the walk, which they keep. */
#if CONFIG_EMB_TRACE_COUNT_OVERWRITTEN && defined(EMB_PORT_LOCAL_ADD_ONE_INSN)
#define EMB_TRACE_COUNT_IN_TAIL 1
#define EMB_TRACE_PACKET_TAIL 4u
#else
#define EMB_TRACE_COUNT_IN_TAIL 0
#define EMB_TRACE_PACKET_TAIL 0u
#endif

/* The tail word of the packet holding `in_packet` (any byte of it but the tail itself):
 * the packet is packet-size aligned in memory (emb_trace_ring_init() checks it). */
static inline uint32_t *emb__trace_tail(uint8_t *in_packet)
{
    return (uint32_t *)(((uintptr_t)in_packet | (CONFIG_EMB_TRACE_PACKET_SIZE - 1u)) - 3u);
}

/* The fast path takes the open packet's commit counter from the ring's commit_open where
 * the port has no reservation section: one load where the array's base, a shift and an
 * index cost two more instructions. The slow path publishes it with packet_end so that a
 * producer preempting the publication never sees the one without the other
 * (emb__publish_end() in src/trace.c; docs/formats/trace.md, "Ring protocol"). Inside a
 * section (Cortex-M) the array is read with buf in one LDRD and indexed in the same add,
 * so the cached word would save nothing; on an 8-bit core (AVR) a pointer takes two
 * loads, which an interrupt may split. */
#if !defined(EMB_PORT_LOCAL_RESERVE) && __SIZEOF_POINTER__ >= 4
#define EMB_TRACE_COMMIT_OPEN 1
#else
#define EMB_TRACE_COMMIT_OPEN 0
#endif

/* Slow path: opens a packet, claims a ring, or drops and counts the event. Returns the
 * slot, whose payload is NULL when the event was dropped. */
struct emb_trace_slot emb_trace_reserve_slow(struct emb_trace_ring *ring, uint32_t id,
                                             uint32_t size);

/* The fast path alone: reserves `size` bytes (event header included, a multiple of 4) in
 * the open packet of the running context's ring and writes the event header, or returns
 * a slot with a NULL payload when that needs the slow path (a packet to open, a ring to
 * claim). The reservation and the timestamp are taken in one step, so events in a ring
 * are in timestamp order even when an interrupt records between them. */
static inline struct emb_trace_slot emb_trace_reserve_fast(uint32_t id, uint32_t size)
{
    struct emb_trace_ring *ring = emb_port_trace_ring();
    uint32_t pos, low;
#if defined(EMB_PORT_LOCAL_RESERVE)
    /* The port's reservation section (LDREX ... STREX, or interrupts masked): whatever
     * preempts the producer inside it makes the end fail, and the slow path then tries
     * again with everything read anew; so the clock needs no consistency check here. */
    struct emb_trace_slot slow = {NULL, NULL};
    emb_port_reserve_state state;
    pos = emb_port_local_reserve_begin(&ring->write_pos, &state);
    /* Side by side, read together (one LDRD on Cortex-M). */
    uint32_t packet_end = ring->packet_end;
    uint32_t ts_high = ring->ts_high;
    /* An event never fills a packet exactly: write_pos on a boundary means "closed". */
    if (EMB_UNLIKELY(!emb_port_timestamp_low_in(state, ts_high, &low) || pos + size >= packet_end)) {
        emb_port_local_reserve_abort(state);
        return slow;
    }
    if (EMB_UNLIKELY(!emb_port_local_reserve_end(&ring->write_pos, pos + size, state)))
        return slow;
#else
    uint32_t high;
    /* Plain loads: only this context (and what preempts it) writes these words, and the
     * swap re-validates `pos`. packet_end alone is read atomically (emb__trace_reaches).
     * The clock is read after `pos`: a producer that preempts in between makes the swap
     * fail, so timestamps follow positions. A failed swap goes to the slow path, which
     * starts over with everything read again (and reserves in the open packet when the
     * event still fits): no retry loop here. */
    pos = ring->write_pos;
#if EMB_TRACE_COMMIT_OPEN
    /* Before the swap (a compiler-only fence: the nested producers are this context's
     * interrupts or signal handlers): one that switches packets after it makes the swap
     * fail; and the word and packet_end always belong together (emb__publish_end()). */
    uint32_t *commit_open = __atomic_load_n(&ring->commit_open, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_ACQUIRE);
#endif
    low = emb__trace_clock(&high);
    /* An event never fills a packet exactly: write_pos on a boundary means "closed". */
    if (EMB_UNLIKELY(emb__trace_reaches(&ring->packet_end, pos + size) ||
                     high != ring->ts_high ||
                     !emb_port_local_cas32(&ring->write_pos, pos, pos + size))) {
        struct emb_trace_slot slow = {NULL, NULL};
        return slow;
    }
#endif
    /* buf and commit side by side, read together: one LDRD on Cortex-M. */
    uint8_t *buf = ring->buf;
    uint32_t offset = pos & ring->buf_mask;
    uint8_t *event = buf + offset;
    emb_put_le32(event + EMB_EVT_OFF_TS, low);
    emb_put_le32(event + EMB_EVT_OFF_ID, ring->event_flags | id);
#if EMB_TRACE_COMMIT_OPEN
    struct emb_trace_slot slot = {event + EMB_EVT_HEADER_SIZE, commit_open};
#else
    struct emb_trace_slot slot = {event + EMB_EVT_HEADER_SIZE,
                                  &ring->commit[offset >> EMB_TRACE_PACKET_SHIFT]};
#endif
    return slot;
}

/* emb_trace_try_reserve() (emb/trace.h). */
static inline struct emb_trace_slot emb_trace_try_reserve(uint32_t id, uint32_t size)
{
    struct emb_trace_slot slot = emb_trace_reserve_fast(id, size);
    return EMB_LIKELY(slot.payload != NULL)
               ? slot
               : emb_trace_reserve_slow(emb_port_trace_ring(), id, size);
}

/* The reservation of the generated out-of-line emitters (emb_trace_emit_slow_*): the
 * slow path alone when call sites try the fast path inline, both when they do not
 * (CONFIG_EMB_TRACE_INLINE 0). */
static inline struct emb_trace_slot emb__trace_reserve_out(uint32_t id, uint32_t size)
{
#if CONFIG_EMB_TRACE_INLINE
    return emb_trace_reserve_slow(emb_port_trace_ring(), id, size);
#else
    return emb_trace_try_reserve(id, size);
#endif
}

/* emb_trace_commit() (emb/trace.h). */
static inline void emb_trace_commit(struct emb_trace_slot slot, uint32_t size)
{
#if EMB_TRACE_COUNT_IN_TAIL
    /* Before the commit: a complete packet's count is final. From the event's start, as
     * the payload's stores address it, so no register holds the payload pointer. */
    emb_port_local_add32_release(emb__trace_tail(slot.payload - EMB_EVT_HEADER_SIZE), 1u);
#endif
    emb_port_local_add32_release(slot.commit, size);
}

#endif /* EMB_INTERNAL_TRACE_RESERVE_H */
