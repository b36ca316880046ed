/* Trace rings: one per context, divided into CTF packets.
 *
 * Call sites use the generated EMB_TRACE_<event>() emitters (emb/trace_events.h); this
 * header holds the ring they write into, the reservation they make, and the calls that
 * configure modes and read packets out. The protocol (reservation, commit, publication,
 * packet switch, what a preempted producer costs) is written down in docs/formats/trace.md;
 * the inlined fast path is in emb/internal/trace_reserve.h, which this header includes:
 * not API.
 */
#ifndef EMB_TRACE_H
#define EMB_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <emb/config.h>
#include <emb/status.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A context's ring. Allocate it statically with its buffer and commit array; initialise
 * with emb_trace_ring_init(). Fields are public so a debugger and the descriptor can
 * describe them, not so code outside the library writes them. */
struct emb_trace_ring {
    /* Producer state: written only by the owning context and what preempts it, through
     * the port's context-local atomics. The fast path reads these three words. */
    uint32_t write_pos;      /* free-running byte offset of the next reservation */
    uint32_t packet_end;     /* write_pos at the end of the open packet; never beyond it */
    uint32_t ts_high;        /* high word of the open packet's timestamp_begin */
    uint32_t event_flags;    /* EMB_EVT_FLAG_* of what runs now, shifted left 16: or'ed with
                              * the event id, it is the event header's second word */
    uint8_t *buf;            /* packets * packet size bytes, packet-size aligned */
    uint32_t *commit;        /* [packets] bytes committed per slot, free-running */
    uint32_t buf_mask;       /* packets * packet size - 1 */
    uint32_t slot_mask;      /* packets - 1 */
    uint8_t packet_shift;    /* log2(packet size) */
    uint8_t slot_shift;      /* log2(packets) */
    uint16_t context_kind;   /* enum emb_context_kind */
    uint16_t context_id;
    /* Slow-path state (packet switches). */
    uint32_t packet_seq;     /* packet_seq_num of the next packet opened */
    uint32_t discarded;      /* events dropped so far: the CTF events_discarded total */
    uint32_t base_pos;       /* write_pos when the ring (or its window) started */
    uint32_t filled;         /* nonzero once every slot has held a packet */
    /* Consumer state: the streaming consumer claims and advances it; a producer that
     * needs the slot of the oldest unread packet moves it past that packet. */
    uint32_t read_pos;       /* first byte not yet handed to the sink; EMB_TRACE_READ_* */
    char name[EMB_TSF_NAME_MAX];
    /* Window mode: the next ring initialised since emb_trace_init(), so that the close of
     * the window can end every ring's open packet (docs/formats/trace.md). */
    struct emb_trace_ring *next_ring;
    /* The open packet's commit counter, for the fast path of a port without a reservation
     * section (EMB_TRACE_COMMIT_OPEN), and the flag that keeps the slow path's stores of it
     * and packet_end from interleaving with a preempting producer's (src/trace.c,
     * emb__publish_end()). */
    uint32_t *commit_open;
    uint32_t publishing;
};

/* read_pos flags: EMB_TRACE_READ_CLAIMED, _PUSHING and _BUSY (emb/trace_format.h), where a
 * host consumer reads them too. */

/* 4-byte words each event takes in a packet (its header included), indexed by event id,
 * emb_trace_event_words_len entries; 0 for an id the catalogue does not have. Generated
 * with the catalogue (gen/embgen.c): the ring reads it only to count the events of a
 * packet it overwrites unread. */
extern const uint8_t emb_trace_event_words[];
extern const uint32_t emb_trace_event_words_len;

/* One reservation in flight between emb_trace_try_reserve() and emb_trace_commit():
 * two words, so it travels in registers (returned in rax:rdx on x86-64). */
struct emb_trace_slot {
    uint8_t *payload; /* where the event's fields go; NULL when the event was dropped */
    uint32_t *commit; /* the packet's commit counter */
};

/* Run-time class mask: the one load every enabled call site makes. Bit n enables class
 * n of enum emb_trace_class. Written only through emb_trace_set_classes(). */
extern uint32_t emb_trace_class_mask;

/* The ring a context has before it owns one: its bounds send every event to the slow
 * path, which claims a real ring from the port. */
extern struct emb_trace_ring emb_trace_unclaimed_ring;

/* Sets the session identity written into every packet and the mode of every ring.
 * Call once before any ring is initialised. `classes` is the run-time class mask
 * (in window mode it takes effect when the window arms). */
void emb_trace_init(const uint8_t uuid[16], enum emb_trace_mode mode, uint32_t classes);

/* The uuid and mode given to emb_trace_init(). */
const uint8_t *emb_trace_uuid(void);
enum emb_trace_mode emb_trace_mode(void);

/* Prepares a ring over caller-supplied memory: `buf` holds `packets` packets of
 * CONFIG_EMB_TRACE_PACKET_SIZE bytes and is aligned to the packet size; `commit` holds
 * `packets` words; `packets` is a power of two, at least 2. */
emb_status emb_trace_ring_init(struct emb_trace_ring *ring, uint16_t context_id,
                               enum emb_context_kind kind, uint8_t *buf, uint32_t *commit,
                               uint32_t packets);

/* Events lost because the port had no ring to give their context. */
uint32_t emb_trace_lost_no_ring(void);

/* Enables classes at run time (bit per enum emb_trace_class); returns the previous mask. */
uint32_t emb_trace_set_classes(uint32_t mask);

/* Closes the ring's open packet so a reader can take it. Call from the owning context,
 * or when that context can no longer record (it has exited or is stopped). */
emb_status emb_trace_flush(struct emb_trace_ring *ring);

/* Window mode: arm now, or when emb_trace_frame_mark() sees `frame`. */
void emb_trace_window_arm(void);
void emb_trace_window_arm_at(uint32_t frame);
enum emb_trace_window_state emb_trace_window_state(void);
uint32_t emb_trace_window_armed_frame(void);

/* Called by the frame hook with each frame number; arms a waiting window on its frame.
 * Returns nonzero when this call armed the window. */
int emb_trace_frame_mark(uint32_t frame);

/* Receives one complete packet. The bytes are valid only during the call. */
typedef void (*emb_trace_packet_fn)(void *arg, const struct emb_trace_ring *ring,
                                    const uint8_t *packet, uint32_t size);

/* Streaming: hands every completed packet not yet consumed to `fn`, in order, then
 * releases their slots to the producers. Single consumer per ring. Returns the count.
 * A producer that finds the ring full of unread packets overwrites the oldest one that
 * is not being handed on (the flight recorder keeps the newest events): the consumer
 * then sees a packet_seq_num gap, and events_discarded counts the events it missed. */
uint32_t emb_trace_ring_consume(struct emb_trace_ring *ring, emb_trace_packet_fn fn, void *arg);

/* The same, handing `fn` a copy in `scratch` (CONFIG_EMB_TRACE_PACKET_SIZE bytes): the
 * packet is released before `fn` runs, so a sink that blocks (a full pipe, a dead link)
 * holds no slot, and the producers go on overwriting the oldest packets, keeping the
 * newest events for the flight recorder. emb_trace_ring_consume() holds the packet it
 * hands on until `fn` returns: fine for a sink that always returns soon. */
uint32_t emb_trace_ring_consume_copy(struct emb_trace_ring *ring, uint8_t *scratch,
                                     emb_trace_packet_fn fn, void *arg);

/* Snapshot: copies each complete packet still held, oldest first, into `scratch`
 * (CONFIG_EMB_TRACE_PACKET_SIZE bytes) and hands the copy to `fn` if no producer
 * overwrote the slot during the copy. Safe while producers run. Returns the count. */
uint32_t emb_trace_ring_snapshot(const struct emb_trace_ring *ring, uint8_t *scratch,
                                 emb_trace_packet_fn fn, void *arg);

/* A reader taking a packet raises its events_discarded to `discarded`, the ring's count
 * read before the copy (or once the consumer claimed it): every packet overwritten unread
 * by then was older than this one, so CTF readers place the loss before the packet, where
 * it happened, not at the later packet whose close first counted it. */
static inline void emb_trace_packet_raise_discarded(uint8_t *packet, uint32_t discarded)
{
    /* A window never overwrites: its only loss is its end, after every packet held. */
    if (emb_trace_mode() != EMB_TRACE_MODE_WINDOW &&
        (int32_t)(discarded - emb_get_le32(packet + EMB_PKT_OFF_DISCARDED)) > 0)
        emb_put_le32(packet + EMB_PKT_OFF_DISCARDED, discarded);
}

/* Event header flags while an interrupt (or signal handler) runs on the ring's context:
 * the hooks in emb/hooks.h call these, and they nest. */
static inline uint32_t emb_trace_flags(const struct emb_trace_ring *ring)
{
    return ring->event_flags >> 16;
}

static inline void emb_trace_enter_handler(struct emb_trace_ring *ring, uint32_t kind)
{
    uint32_t depth = ((emb_trace_flags(ring) & EMB_EVT_FLAG_DEPTH_MASK) >> EMB_EVT_FLAG_DEPTH_SHIFT) + 1u;
    if (depth > 63u)
        depth = 63u;
    ring->event_flags = (kind | (depth << EMB_EVT_FLAG_DEPTH_SHIFT)) << 16;
}

static inline void emb_trace_leave_handler(struct emb_trace_ring *ring)
{
    uint32_t depth = (emb_trace_flags(ring) & EMB_EVT_FLAG_DEPTH_MASK) >> EMB_EVT_FLAG_DEPTH_SHIFT;
    if (depth > 0u)
        depth--;
    ring->event_flags = ((depth > 0u ? EMB_EVT_KIND_ISR : EMB_EVT_KIND_THREAD) |
                         (depth << EMB_EVT_FLAG_DEPTH_SHIFT)) << 16;
}

/* The running context's ring, claiming one from the port if it has none; NULL if none
 * is left. For hooks that change a ring's state; emitters do not need it. */
struct emb_trace_ring *emb_trace_context_ring(void);

/* ---- The reservation every emitter makes ---- */

/* Fast path, then slow path: the slot's payload is NULL only when the event was dropped
 * (and counted). A slot with a payload must be committed with emb_trace_commit(). The
 * generated emitters call the two halves themselves, keeping the slow one out of line. */
static inline struct emb_trace_slot emb_trace_try_reserve(uint32_t id, uint32_t size);

/* Publishes a reserved event of `size` bytes to readers. */
static inline void emb_trace_commit(struct emb_trace_slot slot, uint32_t size);

/* The fast path, the slow path's entry and the definitions of the two above; not API. */
#include <emb/internal/trace_reserve.h>

#ifdef __cplusplus
}
#endif

#endif /* EMB_TRACE_H */
