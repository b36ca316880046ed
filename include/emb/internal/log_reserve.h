/* Not API: the log reservation every deferred call site inlines, part of emb/log.h and
 * included by it alone; names here change without notice. The ring protocol it follows
 * is docs/formats/log.md ("Ring protocol"). */
#ifndef EMB_INTERNAL_LOG_RESERVE_H
#define EMB_INTERNAL_LOG_RESERVE_H

#ifndef EMB_LOG_H
#error "emb/internal/log_reserve.h is part of emb/log.h: include <emb/log.h>"
#endif

#include <emb/port.h>

/* One reservation between emb_log_try_reserve() and emb_log_commit(). */
struct emb_log_reservation {
    struct emb_log_ring *ring;
    uint32_t size;
};

/* Slow path: claims a ring, adds a dropped record and a sync marker when due, crosses the
 * ring's end, or drops and counts the record. Returns the argument pointer or NULL. */
uint8_t *emb_log_reserve_slow(struct emb_log_reservation *res, struct emb_log_ring *ring,
                              uint32_t id, uint32_t size);

/* The slow path through a copy: the caller's reservation never has its address passed
 * out of line, so the compiler keeps it in registers on the fast path (a spill to the
 * stack and two reloads per record otherwise, on Cortex-M). */
static inline uint8_t *emb__log_reserve_slow_copy(struct emb_log_reservation *res,
                                                  struct emb_log_ring *ring, uint32_t id,
                                                  uint32_t size)
{
    struct emb_log_reservation r;
    uint8_t *p = emb_log_reserve_slow(&r, ring, id, size);
    *res = r;
    return p;
}

static inline void emb__log_put_header(uint8_t *rec, uint32_t id, uint64_t now)
{
    if (CONFIG_EMB_LOG_ID_BYTES == 2) {
        emb_put_le16(rec, (uint16_t)id);
    } else if (CONFIG_EMB_LOG_ID_BYTES == 4 || CONFIG_EMB_LOG_TIMESTAMP) {
        /* With a timestamp, a link-time width needs no branch: the four id bytes, then the
         * timestamp over the two that are not the id's when ids are 2 bytes (and 0). */
        emb_put_le32(rec, id);
    } else {
        emb_put_le16(rec, (uint16_t)id);
        if (EMB_LOG_ID_BYTES == 4u)
            emb_put_le16(rec + 2, (uint16_t)(id >> 16));
    }
    if (CONFIG_EMB_LOG_TIMESTAMP)
        emb_put_le32(rec + EMB_LOG_ID_BYTES, (uint32_t)now);
}

/* Reserves `size` bytes (header included) on the running context's ring, writes the id
 * and timestamp, and returns where the arguments go, or NULL when the record was dropped
 * (and counted). The clock is read inside the reservation loop, so a ring's records are
 * in timestamp order even when an interrupt records in between. Every successful
 * reservation must be followed by emb_log_commit(). */
static inline uint8_t *emb_log_try_reserve(struct emb_log_reservation *res, uint32_t id,
                                           uint32_t size)
{
    struct emb_log_ring *ring = emb_port_log_ring();
    uint32_t pos;
    uint64_t now = 0;
#if defined(EMB_PORT_LOCAL_RESERVE)
    /* The port's reservation section: a preemption inside it makes the end fail, and the
     * slow path tries again with everything read anew (emb/port.h). */
    emb_port_reserve_state state;
    uint32_t low = 0;
    pos = emb_port_local_reserve_begin(&ring->write_pos, &state);
    if (EMB_UNLIKELY((int32_t)(__atomic_load_n(&ring->limit, __ATOMIC_RELAXED) - (pos + size)) < 0 ||
                     (CONFIG_EMB_LOG_TIMESTAMP &&
                      !emb_port_timestamp_low_in(state, __atomic_load_n(&ring->ts_high, __ATOMIC_RELAXED),
                                                 &low)))) {
        emb_port_local_reserve_abort(state);
        return emb__log_reserve_slow_copy(res, ring, id, size);
    }
    if (EMB_UNLIKELY(!emb_port_local_reserve_end(&ring->write_pos, pos + size, state)))
        return emb__log_reserve_slow_copy(res, ring, id, size);
    now = low;
#else
    do {
        pos = __atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED);
        if (CONFIG_EMB_LOG_TIMESTAMP)
            now = emb_port_timestamp();
        if (EMB_UNLIKELY((int32_t)(__atomic_load_n(&ring->limit, __ATOMIC_RELAXED) - (pos + size)) < 0 ||
                         (CONFIG_EMB_LOG_TIMESTAMP &&
                          (uint32_t)(now >> 32) != __atomic_load_n(&ring->ts_high, __ATOMIC_RELAXED))))
            return emb__log_reserve_slow_copy(res, ring, id, size);
    } while (!emb_port_local_cas32(&ring->write_pos, pos, pos + size));
#endif
    uint8_t *rec = ring->buf + (pos & ring->mask);
    emb__log_put_header(rec, id, now);
    res->ring = ring;
    res->size = size;
    /* A lost decrement (an interrupt between load and store) only delays a marker. */
    uint32_t left = __atomic_load_n(&ring->sync_countdown, __ATOMIC_RELAXED) - 1u;
    __atomic_store_n(&ring->sync_countdown, left, __ATOMIC_RELAXED);
    if (EMB_UNLIKELY(left == 0u))
        __atomic_store_n(&ring->limit, pos, __ATOMIC_RELAXED); /* next record: slow path */
    return rec + EMB_LOG_RECORD_HEADER;
}

/* Publishes a reserved record to the consumer. */
static inline void emb_log_commit(const struct emb_log_reservation *res)
{
    emb_port_local_add32_release(&res->ring->committed, res->size);
    if (CONFIG_EMB_LOG_IMMEDIATE)
        emb_log_immediate_flush(res->ring);
}

/* emb_log_try_reserve() and emb_log_commit() out of line (log.c): what call sites use
 * when CONFIG_EMB_LOG_INLINE is 0 (builds that optimise for size). */
uint8_t *emb_log_reserve(struct emb_log_reservation *res, uint32_t id, uint32_t size);
void emb_log_commit_out(const struct emb_log_reservation *res);

#if CONFIG_EMB_LOG_INLINE
#define EMB__LOG_RESERVE emb_log_try_reserve
#define EMB__LOG_COMMIT emb_log_commit
#else
#define EMB__LOG_RESERVE emb_log_reserve
#define EMB__LOG_COMMIT emb_log_commit_out
#endif

#endif /* EMB_INTERNAL_LOG_RESERVE_H */
