/* Trace rings: the slow path of the reservation (packet switches, ring claims, drops),
 * flush, window mode, and the two readers. The protocol is in docs/formats/trace.md;
 * the fast path is emb_trace_try_reserve() in emb/trace.h. */
#include <emb/trace.h>

#include "trace_ring.h"

uint32_t emb_trace_class_mask;

/* packet_end = 0 sends every event to the slow path (no position is below it). All
 * zeros, so it takes no flash for an initialiser. */
struct emb_trace_ring emb_trace_unclaimed_ring;

static struct {
    /* Aligned, so that opening a packet copies it in register-sized stores, not a
     * memcpy call. */
    union {
        uint8_t bytes[16];
        uintptr_t words[16 / sizeof(uintptr_t)];
    } uuid;
    uint8_t mode;
    uint32_t window_state;  /* enum emb_trace_window_state */
    uint32_t window_frame;  /* frame that arms a waiting window; UINT32_MAX: by call only */
    uint32_t armed_classes; /* mask to enable when the window arms */
    uint32_t lost_no_ring;  /* events from contexts the port could not give a ring */
#if CONFIG_EMB_TRACE_WINDOW
    struct emb_trace_ring *rings; /* window mode: every ring, for the close to end */
#endif
} emb__trace;

#define EMB__PACKET_SIZE CONFIG_EMB_TRACE_PACKET_SIZE
/* Where events stop in a packet: before its tail word when events count themselves there
 * (EMB_TRACE_COUNT_IN_TAIL), else at its end. */
#define EMB__PACKET_LIMIT (EMB__PACKET_SIZE - EMB_TRACE_PACKET_TAIL)

/* packet_end for the packet at `start`: where its events stop. The packet just below
 * 2^32 gets 0, as it does without a tail (its end wraps to 0), so that the fast path's
 * `pos + size` never wraps past it: all its events take the slow path. */
static uint32_t emb__events_end(uint32_t start)
{
    uint32_t end = start + EMB__PACKET_SIZE;
    return end == 0u ? 0u : end - EMB_TRACE_PACKET_TAIL;
}

void emb_trace_init(const uint8_t uuid[16], enum emb_trace_mode mode, uint32_t classes)
{
    memcpy(emb__trace.uuid.bytes, uuid, sizeof emb__trace.uuid.bytes);
    emb__trace.mode = (uint8_t)mode;
    emb__trace.window_frame = UINT32_MAX;
    emb__trace.armed_classes = classes;
#if CONFIG_EMB_TRACE_WINDOW
    __atomic_store_n(&emb__trace.rings, NULL, __ATOMIC_RELAXED);
#endif
    if (CONFIG_EMB_TRACE_WINDOW && mode == EMB_TRACE_MODE_WINDOW) {
        __atomic_store_n(&emb__trace.window_state, EMB_TRACE_WINDOW_WAITING, __ATOMIC_RELAXED);
        __atomic_store_n(&emb_trace_class_mask, 0u, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(&emb__trace.window_state, EMB_TRACE_WINDOW_OFF, __ATOMIC_RELAXED);
        __atomic_store_n(&emb_trace_class_mask, classes, __ATOMIC_RELEASE);
    }
}

const uint8_t *emb_trace_uuid(void)
{
    return emb__trace.uuid.bytes;
}

enum emb_trace_mode emb_trace_mode(void)
{
    return (enum emb_trace_mode)emb__trace.mode;
}

uint32_t emb_trace_lost_no_ring(void)
{
    return __atomic_load_n(&emb__trace.lost_no_ring, __ATOMIC_RELAXED);
}

/* The rings the close of a window ends, pushed as they are initialised (a claim may run
 * in any context, so the push is a swap; rings are never removed until emb_trace_init()
 * starts a new list). */
#if CONFIG_EMB_TRACE_WINDOW
static void emb__window_list(struct emb_trace_ring *ring)
{
    if (emb__trace.mode != EMB_TRACE_MODE_WINDOW)
        return;
    struct emb_trace_ring *head = __atomic_load_n(&emb__trace.rings, __ATOMIC_ACQUIRE);
    for (const struct emb_trace_ring *r = head; r != NULL; r = r->next_ring)
        if (r == ring)
            return; /* listed already: initialised again */
    do
        ring->next_ring = head;
    while (!__atomic_compare_exchange_n(&emb__trace.rings, &head, ring, true, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE));
}
#else
static void emb__window_list(struct emb_trace_ring *ring)
{
    (void)ring;
}
#endif

/* log2 of a power of two, at least 1. */
static uint8_t emb__log2(uint32_t v)
{
    return (uint8_t)__builtin_ctzl((unsigned long)v); /* unsigned long: 32 bits at least */
}

emb_status emb_trace_ring_init(struct emb_trace_ring *ring, uint16_t context_id,
                               enum emb_context_kind kind, uint8_t *buf, uint32_t *commit,
                               uint32_t packets)
{
    if (ring == NULL || buf == NULL || commit == NULL || packets < 2u ||
        (packets & (packets - 1u)) != 0u || ((uintptr_t)buf & (EMB__PACKET_SIZE - 1u)) != 0u)
        return EMB_E_INVALID;
    /* next_ring is left alone: a ring initialised again keeps its place in the list. */
    memset(ring, 0, offsetof(struct emb_trace_ring, next_ring));
    memset(commit, 0, packets * sizeof *commit);
    ring->buf = buf;
    ring->commit = commit;
    ring->packet_shift = emb__log2(EMB__PACKET_SIZE);
    ring->slot_shift = emb__log2(packets);
    ring->buf_mask = packets * EMB__PACKET_SIZE - 1u;
    ring->slot_mask = packets - 1u;
    ring->context_id = context_id;
    ring->context_kind = (uint16_t)kind;
    ring->ts_high = 0xFFFFFFFFu; /* no packet open: force the slow path */
#if EMB_TRACE_COMMIT_OPEN
    ring->commit_open = commit;
    ring->publishing = 0u;
#endif
    if (ring->packet_shift != EMB_TRACE_PACKET_SHIFT)
        return EMB_E_INVALID;
    emb__window_list(ring);
    return EMB_OK;
}

uint32_t emb_trace_set_classes(uint32_t mask)
{
    if (CONFIG_EMB_TRACE_WINDOW && emb__trace.mode == EMB_TRACE_MODE_WINDOW) {
        /* The mask is the window's switch: remember it, apply it only while armed. */
        uint32_t old = emb__trace.armed_classes;
        emb__trace.armed_classes = mask;
        if (__atomic_load_n(&emb__trace.window_state, __ATOMIC_ACQUIRE) == EMB_TRACE_WINDOW_ARMED)
            __atomic_store_n(&emb_trace_class_mask, mask, __ATOMIC_RELEASE);
        return old;
    }
    return __atomic_exchange_n(&emb_trace_class_mask, mask, __ATOMIC_ACQ_REL);
}

/* ---- Packet bookkeeping ---- */

static inline uint32_t emb__slot_of(const struct emb_trace_ring *ring, uint32_t pos)
{
    /* The packet shift is the compile-time one (emb_trace_ring_init() checks it). */
    return (pos >> EMB_TRACE_PACKET_SHIFT) & ring->slot_mask;
}

/* The open packet's end, as the slow path publishes it to the fast path. In window mode
 * the close may have ended every ring's packet (packet_end 0) since this context checked
 * the window: the store and the check after it are sequentially consistent, as are the
 * close's state change and its stores, so either the close's 0 lands after this store or
 * the check sees the window closed and stores the 0 itself. */
static void emb__store_end(struct emb_trace_ring *ring, uint32_t end)
{
#if CONFIG_EMB_TRACE_WINDOW
    if (emb__trace.mode == EMB_TRACE_MODE_WINDOW) {
        __atomic_store_n(&ring->packet_end, end, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&emb__trace.window_state, __ATOMIC_SEQ_CST) ==
            EMB_TRACE_WINDOW_CLOSED)
            __atomic_store_n(&ring->packet_end, 0u, __ATOMIC_RELAXED);
        return;
    }
#endif
    __atomic_store_n(&ring->packet_end, end, __ATOMIC_RELAXED);
}

#if EMB_TRACE_COMMIT_OPEN
/* Where a port for tests runs a preempting producer in the middle of a publication
 * (tests/target/testport); nothing elsewhere. */
#ifndef EMB_PORT_PREEMPT_IN_PUBLISH
#define EMB_PORT_PREEMPT_IN_PUBLISH() ((void)0)
#endif

/* Publishes the open packet's end and its commit counter (commit_open) to the fast path,
 * which trusts the counter whenever an event fits below packet_end. Two words, so the
 * order matters against producers that preempt this one (run to completion in between):
 * - packet_end is 0 (no event fits) while commit_open changes, and is stored only if
 *   write_pos is still in the packet: a publisher that producers preempted after its swap
 *   and before this call (they moved on to a later packet and published it) would
 *   otherwise pair its older counter with their later packet_end, and an event in the
 *   later packet would commit to the older packet's counter (one never completes, the
 *   other overflows: events neither read nor counted). Left at 0, the fast path stays
 *   closed until the next slow path publishes.
 * - `publishing` keeps a preempting slow path from publishing in the middle of this one
 *   (it would restore a packet_end that the counter stored after it no longer matches);
 *   the preempted publication then checks write_pos after it, or stores the older
 *   packet's end, which no later position is below.
 * Compiler-only fences: every producer of a ring runs on one context. */
static void emb__publish_end(struct emb_trace_ring *ring, uint32_t start)
{
    if (__atomic_load_n(&ring->publishing, __ATOMIC_RELAXED) != 0u)
        return;
    __atomic_store_n(&ring->publishing, 1u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ring->packet_end, 0u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ring->commit_open, &ring->commit[emb__slot_of(ring, start)],
                     __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    EMB_PORT_PREEMPT_IN_PUBLISH();
    if (__atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED) - start - 1u < EMB__PACKET_SIZE - 1u)
        emb__store_end(ring, emb__events_end(start));
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ring->publishing, 0u, __ATOMIC_RELAXED);
}
#else
static void emb__publish_end(struct emb_trace_ring *ring, uint32_t start)
{
    emb__store_end(ring, emb__events_end(start));
}
#endif

/* True when the use of a slot that starts at `start` is complete: every byte of it has
 * been committed (emb/ring_read.h). */
static bool emb__packet_complete(const struct emb_trace_ring *ring, uint32_t start)
{
    const struct emb_ring_geometry g = emb__ring_geometry(ring);
    return emb_ring_packet_complete(&g, start, emb__ring_commit(ring, start));
}

/* True when the slot about to hold the packet starting at `start` has finished its
 * previous use (nobody still writing into it): nothing is committed to the new use. */
static bool emb__slot_reusable(const struct emb_trace_ring *ring, uint32_t start)
{
    const struct emb_ring_geometry g = emb__ring_geometry(ring);
    return emb_ring_committed(&g, start, emb__ring_commit(ring, start)) == 0u;
}

static void emb__drop(struct emb_trace_ring *ring)
{
    emb_port_local_add32_release(&ring->discarded, 1u);
}

#if CONFIG_EMB_TRACE_WINDOW
/* Ends every ring's open packet for the fast path (packet_end 0: no position is below
 * it), so that each event after the close, on any ring, reaches the slow path, which
 * refuses and counts it: the window ends at the same point for every context, and its
 * drop count is every event lost after it. The class mask stays as it was, so events of
 * disabled classes still cost only the gate (docs/formats/trace.md, "Window mode"). */
static void emb__window_close(void)
{
    uint32_t armed = EMB_TRACE_WINDOW_ARMED;
    if (!__atomic_compare_exchange_n(&emb__trace.window_state, &armed, EMB_TRACE_WINDOW_CLOSED,
                                     false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        return;
    for (struct emb_trace_ring *r = __atomic_load_n(&emb__trace.rings, __ATOMIC_ACQUIRE);
         r != NULL; r = r->next_ring)
        __atomic_store_n(&r->packet_end, 0u, __ATOMIC_SEQ_CST);
}

static bool emb__window_closed(void)
{
    return emb__trace.mode == EMB_TRACE_MODE_WINDOW &&
           __atomic_load_n(&emb__trace.window_state, __ATOMIC_ACQUIRE) == EMB_TRACE_WINDOW_CLOSED;
}
#else
static bool emb__window_closed(void)
{
    return false;
}
#endif

#if EMB_TRACE_COUNT_IN_TAIL
/* The tail word of the slot that holds `start`: the count its events made there (since
 * its opener took off what the slot's previous use had left). */
static uint32_t *emb__tail(const struct emb_trace_ring *ring, uint32_t start)
{
    return emb__trace_tail(ring->buf + (start & ring->buf_mask));
}

/* Events in the closed packet at `start`: what they counted in its tail. O(1). */
static uint32_t emb__packet_events(const struct emb_trace_ring *ring, uint32_t start)
{
    return __atomic_load_n(emb__tail(ring, start), __ATOMIC_RELAXED);
}
#elif CONFIG_EMB_TRACE_COUNT_OVERWRITTEN
/* Events in the closed packet at `start`, walked with the catalogue's sizes. Runs only
 * when a packet is recycled unread (the slow path of a packet switch), never per event.
 * An id the catalogue does not know ends the walk counting one event for the rest. */
static uint32_t emb__packet_events(const struct emb_trace_ring *ring, uint32_t start)
{
    const uint8_t *pkt = ring->buf + (start & ring->buf_mask);
    uint32_t content = emb_get_le32(pkt + EMB_PKT_OFF_CONTENT_SIZE) / 8u;
    if (content > EMB__PACKET_SIZE)
        content = EMB__PACKET_SIZE;
    const uint32_t known = emb_trace_event_words_len;
    uint32_t events = 0;
    for (uint32_t off = EMB_PKT_HEADER_SIZE; off + EMB_EVT_HEADER_SIZE <= content; events++) {
        uint32_t id = emb_get_le16(pkt + off + EMB_EVT_OFF_ID);
        uint32_t words = id < known ? emb_port_rom_read8(&emb_trace_event_words[id]) : 0u;
        if (words == 0u)
            return events + 1u;
        off += words * 4u;
    }
    return events;
}
#else
/* Not counted: the packet_seq_num gap is what says a recycled packet was lost. */
static uint32_t emb__packet_events(const struct emb_trace_ring *ring, uint32_t start)
{
    (void)ring;
    (void)start;
    return 0u;
}
#endif

/* Can the packet starting at `start` be opened now? *lost receives the events of the
 * packet it recycles unread (a snapshot ring's oldest packet), for the opener to count
 * once its reservation has succeeded; they are counted before any later packet closes,
 * so the next events_discarded a reader sees includes them. */
static bool emb__may_open(struct emb_trace_ring *ring, uint32_t start, uint32_t *lost)
{
    const uint32_t ring_bytes = ring->buf_mask + 1u;
    *lost = 0u;
    if (!emb__slot_reusable(ring, start))
        return false; /* a preempted producer is still writing a whole ring ago */
    switch ((enum emb_trace_mode)emb__trace.mode) {
#if CONFIG_EMB_TRACE_STREAMING
    case EMB_TRACE_MODE_STREAMING:
        for (;;) {
            /* The slot's previous packet must have been handed to the sink, or be taken
             * from the consumer: the oldest unconsumed packet gives way to the newest
             * events (LTTng's overwrite mode), unless the consumer is handing it on right
             * now (the claim bit), then this event is dropped. */
            uint32_t read = emb_port_load32_acquire(&ring->read_pos);
            uint32_t oldest = start - ring_bytes; /* the unread packet in the slot */
            /* Signed: a `start` gone stale (interrupts that preempted this producer filled
             * packets that the consumer then read) is behind read_pos; the swap on
             * write_pos fails then, and the caller starts over. Taking read_pos back to
             * it would count packets that were read. */
            if ((int32_t)(start + EMB__PACKET_SIZE - (read & ~EMB_TRACE_READ_BUSY)) <=
                (int32_t)ring_bytes)
                return true;
            if ((read & EMB_TRACE_READ_BUSY) != 0u)
                return false;
            uint32_t events = emb__packet_events(ring, oldest);
            /* Taken in two steps, so that a consumer never claims the next packet before
             * the count of this one is in `discarded`: move read_pos past it marked
             * "pushing" (no claim succeeds then), count, then clear the mark. */
            if (__atomic_compare_exchange_n(&ring->read_pos, &read,
                                            oldest + EMB__PACKET_SIZE + EMB_TRACE_READ_PUSHING,
                                            false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                emb_port_local_add32_release(&ring->discarded, events);
                emb_port_store32_release(&ring->read_pos, oldest + EMB__PACKET_SIZE);
                return true;
            }
        }
#endif
#if CONFIG_EMB_TRACE_WINDOW
    case EMB_TRACE_MODE_WINDOW:
        if (start - ring->base_pos >= ring_bytes) {
            emb__window_close();
            return false;
        }
        return true;
#endif
    case EMB_TRACE_MODE_SNAPSHOT:
    default:
        /* Once every slot has held a packet, each opening recycles the oldest. */
        if (CONFIG_EMB_TRACE_COUNT_OVERWRITTEN && __atomic_load_n(&ring->filled, __ATOMIC_RELAXED) != 0u)
            *lost = emb__packet_events(ring, start - ring_bytes);
        return true;
    }
}

/* Writes the fields a packet gets when it opens. The closing fields (timestamp_end,
 * content_size, events_discarded) are written by whoever closes it: disjoint bytes, so a
 * preempting producer that closes the packet first is never overwritten by the opener. */
static void emb__packet_open(struct emb_trace_ring *ring, uint32_t start, uint64_t now)
{
    uint8_t *pkt = ring->buf + (start & ring->buf_mask);
    emb_put_le32(pkt + EMB_PKT_OFF_MAGIC, EMB_PKT_MAGIC);
    for (unsigned i = 0; i < 16u / sizeof(uintptr_t); i++)
        EMB_WIRE_COPY(pkt + EMB_PKT_OFF_UUID + sizeof(uintptr_t) * i, &emb__trace.uuid.words[i],
                      sizeof(uintptr_t));
    emb_put_le32(pkt + EMB_PKT_OFF_STREAM_ID, 0u);
    emb_put_le32(pkt + EMB_PKT_OFF_INSTANCE, ring->context_id);
    emb_put_le32(pkt + EMB_PKT_OFF_SEQ, (start - ring->base_pos) >> EMB_TRACE_PACKET_SHIFT);
    emb_put_le64(pkt + EMB_PKT_OFF_TS_BEGIN, now);
    emb_put_le32(pkt + EMB_PKT_OFF_PACKET_SIZE, EMB__PACKET_SIZE * 8u);
    emb_put_le16(pkt + EMB_PKT_OFF_CONTEXT_ID, ring->context_id);
    emb_put_le16(pkt + EMB_PKT_OFF_CONTEXT_KIND, ring->context_kind);
    emb_port_local_add32_release(&ring->commit[emb__slot_of(ring, start)], EMB_PKT_HEADER_SIZE);
}

/* Closes the packet holding `pos` (its content ends at `pos`) and commits its padding. */
static void emb__packet_close(struct emb_trace_ring *ring, uint32_t pos, uint64_t now)
{
    uint32_t off = pos & (EMB__PACKET_SIZE - 1u);
    uint8_t *pkt = ring->buf + ((pos - off) & ring->buf_mask);
    emb_put_le64(pkt + EMB_PKT_OFF_TS_END, now);
    emb_put_le32(pkt + EMB_PKT_OFF_CONTENT_SIZE, off * 8u);
    emb_put_le32(pkt + EMB_PKT_OFF_DISCARDED,
                 __atomic_load_n(&ring->discarded, __ATOMIC_RELAXED));
    emb_port_local_add32_release(&ring->commit[emb__slot_of(ring, pos)], EMB__PACKET_SIZE - off);
}

static struct emb_trace_slot emb__write_header(struct emb_trace_ring *ring, uint32_t pos,
                                                uint32_t id, uint64_t now)
{
    uint8_t *event = ring->buf + (pos & ring->buf_mask);
    emb_put_le32(event + EMB_EVT_OFF_TS, (uint32_t)now);
    emb_put_le32(event + EMB_EVT_OFF_ID, ring->event_flags | id);
    return (struct emb_trace_slot){event + EMB_EVT_HEADER_SIZE,
                                   &ring->commit[emb__slot_of(ring, pos)]};
}

static const struct emb_trace_slot emb__dropped = {NULL, NULL};

struct emb_trace_ring *emb_trace_context_ring(void)
{
    struct emb_trace_ring *ring = emb_port_trace_ring();
    return ring == &emb_trace_unclaimed_ring ? emb_port_trace_ring_claim() : ring;
}

/* What one attempt of the slow path came to. */
enum emb__attempt { EMB__RETRY, EMB__DROP, EMB__RESERVED };

/* Closes the packet holding `pos` (if one is open) and opens the next with the event in
 * it; sets *at to the event's position. */
static enum emb__attempt emb__switch_packet(struct emb_trace_ring *ring, uint32_t pos,
                                            uint32_t size, uint64_t now, uint32_t *at)
{
    uint32_t off = pos & (EMB__PACKET_SIZE - 1u);
    uint32_t next = off != 0u ? pos - off + EMB__PACKET_SIZE : pos;
    uint32_t lost;
    if (!emb__may_open(ring, next, &lost)) {
        /* A producer that preempted this one after `pos` was loaded may have opened
         * `next` itself (its commits then say the slot is in use): the view is stale,
         * not the ring full. */
        return __atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED) != pos ? EMB__RETRY : EMB__DROP;
    }
#if EMB_TRACE_COUNT_IN_TAIL
    /* What the slot's previous use left in the tail (its count, or whatever the buffer held
     * before a first use): read after the check that the use is complete, so no producer
     * adds to it until the slot is opened again; taken off once the swap made the slot
     * ours, by an add, since producers preempting this one may count in it already. */
    uint32_t *tail = emb__tail(ring, next);
    uint32_t left = __atomic_load_n(tail, __ATOMIC_RELAXED);
#endif
    *at = next + EMB_PKT_HEADER_SIZE;
    if (!emb_port_local_cas32(&ring->write_pos, pos, *at + size))
        return EMB__RETRY;
#if EMB_TRACE_COUNT_IN_TAIL
    emb_port_local_add32_release(tail, 0u - left);
#endif
    if (lost != 0u)
        emb_port_local_add32_release(&ring->discarded, lost);

    /* The swap made [pos, next + header + size) ours: the old packet's padding, the
     * new header and the event. Refresh the hints before anything slow. */
    __atomic_store_n(&ring->ts_high, (uint32_t)(now >> 32), __ATOMIC_RELAXED);
    if (next - ring->base_pos >= ring->buf_mask + 1u - EMB__PACKET_SIZE)
        __atomic_store_n(&ring->filled, 1u, __ATOMIC_RELAXED);
    emb__publish_end(ring, next);
    emb__packet_open(ring, next, now);
    if (off != 0u)
        emb__packet_close(ring, pos, now);
    return EMB__RESERVED;
}

/* Reserves in the open packet when the event still fits (a hint was stale: a preempting
 * producer switched packets and has not refreshed packet_end yet, or the 2^32 wrap of
 * positions), else switches packets. */
static enum emb__attempt emb__reserve_attempt(struct emb_trace_ring *ring, uint32_t size,
                                              uint64_t *now_out, uint32_t *at)
{
    uint32_t pos = __atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED);
    /* The clock after the position: a producer that preempts in between makes the swap
     * fail, so timestamps follow positions. */
    uint64_t now = *now_out = emb_port_timestamp();
    uint32_t off = pos & (EMB__PACKET_SIZE - 1u);
    if (off != 0u && off + size < EMB__PACKET_LIMIT &&
        (uint32_t)(now >> 32) == __atomic_load_n(&ring->ts_high, __ATOMIC_RELAXED)) {
        if (!emb_port_local_cas32(&ring->write_pos, pos, pos + size))
            return EMB__RETRY;
        emb__publish_end(ring, pos - off);
        *at = pos;
        return EMB__RESERVED;
    }
    return emb__switch_packet(ring, pos, size, now, at);
}

struct emb_trace_slot emb_trace_reserve_slow(struct emb_trace_ring *ring, uint32_t id, uint32_t size)
{
    if (ring == &emb_trace_unclaimed_ring) {
        ring = emb_port_trace_ring_claim();
        if (ring == NULL) {
            __atomic_fetch_add(&emb__trace.lost_no_ring, 1u, __ATOMIC_RELAXED);
            return emb__dropped;
        }
    }
    EMB_ASSERT(size >= EMB_EVT_HEADER_SIZE && size % EMB_EVT_ALIGN == 0u &&
               size <= EMB_EVT_HEADER_SIZE + CONFIG_EMB_TRACE_MAX_PAYLOAD);

    enum emb__attempt result = EMB__DROP;
    uint64_t now = 0;
    uint32_t at = 0;
    if (!emb__window_closed())
        while ((result = emb__reserve_attempt(ring, size, &now, &at)) == EMB__RETRY) {
        }
    if (result == EMB__DROP) {
        emb__drop(ring);
        return emb__dropped;
    }
    return emb__write_header(ring, at, id, now);
}

emb_status emb_trace_flush(struct emb_trace_ring *ring)
{
    if (ring == NULL || ring == &emb_trace_unclaimed_ring || ring->buf == NULL)
        return EMB_E_INVALID;
    for (;;) {
        uint32_t pos = __atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED);
        /* The closing time is read before the swap, as a reservation's is: a producer that
         * preempts after the swap opens the next packet later than this one ends. */
        uint64_t now = emb_port_timestamp();
        uint32_t off = pos & (EMB__PACKET_SIZE - 1u);
        if (off == 0u)
            return EMB_OK; /* nothing open */
        uint32_t next = pos - off + EMB__PACKET_SIZE;
        if (!emb_port_local_cas32(&ring->write_pos, pos, next))
            continue;
        __atomic_store_n(&ring->packet_end, next, __ATOMIC_RELAXED);
        emb__packet_close(ring, pos, now);
        return EMB_OK;
    }
}

/* ---- Window mode ---- */

static void emb__window_open(void)
{
    uint32_t waiting = EMB_TRACE_WINDOW_WAITING;
    if (__atomic_compare_exchange_n(&emb__trace.window_state, &waiting, EMB_TRACE_WINDOW_ARMED,
                                    false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        __atomic_store_n(&emb_trace_class_mask, emb__trace.armed_classes, __ATOMIC_RELEASE);
}

void emb_trace_window_arm(void)
{
    if (emb__trace.mode == EMB_TRACE_MODE_WINDOW)
        emb__window_open();
}

void emb_trace_window_arm_at(uint32_t frame)
{
    __atomic_store_n(&emb__trace.window_frame, frame, __ATOMIC_RELEASE);
}

enum emb_trace_window_state emb_trace_window_state(void)
{
    return (enum emb_trace_window_state)__atomic_load_n(&emb__trace.window_state, __ATOMIC_ACQUIRE);
}

uint32_t emb_trace_window_armed_frame(void)
{
    return __atomic_load_n(&emb__trace.window_frame, __ATOMIC_ACQUIRE);
}

int emb_trace_frame_mark(uint32_t frame)
{
    if (__atomic_load_n(&emb__trace.window_state, __ATOMIC_ACQUIRE) != EMB_TRACE_WINDOW_WAITING ||
        __atomic_load_n(&emb__trace.window_frame, __ATOMIC_ACQUIRE) != frame)
        return 0;
    emb__window_open();
    return 1;
}

/* ---- Readers ---- */

/* Hands the oldest unread packet on, in place under a claim, or (scratch not NULL) as a
 * copy taken like a snapshot reader's, so that the claim lasts only for the copy and a
 * sink that blocks never holds a slot the producers need. */
static uint32_t emb__consume(struct emb_trace_ring *ring, uint8_t *scratch, emb_trace_packet_fn fn,
                             void *arg)
{
    uint32_t count = 0;
    for (;;) {
        uint32_t read = emb_port_load32_acquire(&ring->read_pos);
        if ((read & EMB_TRACE_READ_PUSHING) != 0u)
            break; /* a producer is taking the oldest packet: try again next time */
        read &= ~EMB_TRACE_READ_CLAIMED;
        uint32_t pos = emb_port_load32_acquire(&ring->write_pos);
        /* Only packets wholly before the open one can be complete. */
        if ((uint32_t)(pos - read) < EMB__PACKET_SIZE || !emb__packet_complete(ring, read))
            break;
        /* Claim the packet before reading it: a producer overwrites the oldest unread
         * packet only by moving read_pos past it, which fails while it is claimed; when
         * the claim fails, a producer took the packet and read_pos says what comes next. */
        uint32_t expected = read;
        if (!__atomic_compare_exchange_n(&ring->read_pos, &expected, read | EMB_TRACE_READ_CLAIMED,
                                         false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        /* Claimed and complete: no producer writes these bytes. Every push counted so
         * far took a packet older than this one. */
        uint32_t discarded = __atomic_load_n(&ring->discarded, __ATOMIC_ACQUIRE);
        uint8_t *packet = ring->buf + (read & ring->buf_mask);
        if (scratch != NULL) {
            memcpy(scratch, packet, EMB__PACKET_SIZE);
            emb_port_store32_release(&ring->read_pos, read + EMB__PACKET_SIZE);
            packet = scratch;
        }
        emb_trace_packet_raise_discarded(packet, discarded);
        fn(arg, ring, packet, EMB__PACKET_SIZE);
        if (scratch == NULL)
            emb_port_store32_release(&ring->read_pos, read + EMB__PACKET_SIZE);
        count++;
    }
    return count;
}

uint32_t emb_trace_ring_consume(struct emb_trace_ring *ring, emb_trace_packet_fn fn, void *arg)
{
    return emb__consume(ring, NULL, fn, arg);
}

uint32_t emb_trace_ring_consume_copy(struct emb_trace_ring *ring, uint8_t *scratch,
                                     emb_trace_packet_fn fn, void *arg)
{
    return scratch != NULL ? emb__consume(ring, scratch, fn, arg) : 0u;
}

uint32_t emb_trace_ring_snapshot(const struct emb_trace_ring *ring, uint8_t *scratch,
                                 emb_trace_packet_fn fn, void *arg)
{
    const struct emb_ring_geometry g = emb__ring_geometry(ring);
    /* write_pos first: the acquire orders the load of `filled` after it. */
    uint32_t pos = emb_port_load32_acquire(&ring->write_pos);
    const struct emb_ring_held held =
        emb_ring_held(&g, pos, __atomic_load_n(&ring->filled, __ATOMIC_RELAXED));
    uint32_t count = 0;
    for (uint32_t start = held.oldest; start != held.open_start; start += EMB__PACKET_SIZE) {
        if (!emb__packet_complete(ring, start))
            continue;
        /* Read before the copy: what it counts was overwritten before this packet was. */
        uint32_t discarded = __atomic_load_n(&ring->discarded, __ATOMIC_ACQUIRE);
        memcpy(scratch, ring->buf + (start & ring->buf_mask), EMB__PACKET_SIZE);
        if (!emb_ring_copy_intact(&g, start, emb_port_load32_acquire(&ring->write_pos)))
            continue;
        emb_trace_packet_raise_discarded(scratch, discarded);
        fn(arg, ring, scratch, EMB__PACKET_SIZE);
        count++;
    }
    return count;
}
