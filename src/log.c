/* Log rings: the slow path of the reservation (ring claims, dropped records, sync
 * markers, crossing the ring's end, drops), the drain into frames, IMMEDIATE mode and the
 * ELF note. The protocol is in docs/formats/log.md; the fast path is emb_log_try_reserve()
 * in emb/log.h. */
#include <emb/log.h>

/* limit 0 with write_pos 0 sends every record to the slow path, which claims a ring.
 * All zeros, so it takes no flash for an initialiser. */
struct emb_log_ring emb_log_unclaimed_ring;

static struct {
    uint32_t lost_no_ring;
    struct emb_log_output output;  /* IMMEDIATE mode and the text backend */
    uint32_t output_lock;          /* one writer of the output at a time, across contexts */
    uint32_t hello_epoch;          /* bumped by each hello: rings compare their own copy */
} emb__log;

/* A note is read as an array of notes: clang's AddressSanitizer would pad it with a
 * redzone (a section named like .note.* is not a C identifier, so it is instrumented),
 * which the reader of the PT_NOTE segment meets as a malformed note. GCC leaves globals
 * in named sections alone. */
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMB__NOTE_UNPADDED __attribute__((no_sanitize("address")))
#endif
#endif
#ifndef EMB__NOTE_UNPADDED
#define EMB__NOTE_UNPADDED
#endif

/* What the decoder must know about this build's records, in the ELF (docs/formats/log.md).
 * Notes use the target's byte order, as every ELF structure does. */
static const struct {
    uint32_t namesz, descsz, type;
    char name[4];
    uint16_t version;
    uint8_t id_bytes, ts_bytes, ptr_bytes, str_max;
    uint16_t hex_max;
    uint32_t sync_interval;
    uint32_t record_max;
    uint8_t int_bytes, long_bytes, size_bytes, ptrdiff_bytes;
} emb__log_note EMB__NOTE_UNPADDED __attribute__((section(EMB_LOG_NOTE_SECTION), aligned(4), used)) = {
    4u, EMB_LOG_NOTE_DESC_SIZE, EMB_LOG_NOTE_TYPE, EMB_LOG_NOTE_NAME,
    CONFIG_EMB_PARTITIONS ? EMB_LOG_NOTE_VERSION_PARTITIONS : EMB_LOG_NOTE_VERSION, CONFIG_EMB_LOG_ID_BYTES, CONFIG_EMB_LOG_TIMESTAMP ? 4u : 0u,
    (uint8_t)sizeof(void *), CONFIG_EMB_LOG_STR_MAX, CONFIG_EMB_LOG_HEXDUMP_MAX,
    CONFIG_EMB_LOG_SYNC_INTERVAL, CONFIG_EMB_LOG_RECORD_MAX,
    (uint8_t)sizeof(int), (uint8_t)sizeof(long), (uint8_t)sizeof(size_t), (uint8_t)sizeof(ptrdiff_t),
};

/* Weak: a program without call sites has no emb_log section, and these stay 0. */
extern const uint8_t emb__log_start[] __asm__("__start_emb_log") __attribute__((weak));
extern const uint8_t emb__log_stop[] __asm__("__stop_emb_log") __attribute__((weak));

emb_status emb_log_init(void)
{
    /* A reference from code every logging program runs, so no link step finds the note
     * unreferenced. Not a read: on a microcontroller the note is in no memory at all
     * (ports/cortex-m/emb_log.ld keeps it in the file only). */
    __asm__ __volatile__("" : : "r"(&emb__log_note));
    uintptr_t size = (uintptr_t)emb__log_stop - (uintptr_t)emb__log_start;
    if (EMB_LOG_ID_BYTES == 2u && size > 0x10000u - EMB_LOG_ID_BIAS) /* size + bias > 0x10000 */
        return EMB_E_NOSPACE; /* a fixed 2 (or a linker script that chose wrongly) */
    if (EMB_LOG_ID_BYTES != 2u && EMB_LOG_ID_BYTES != 4u)
        return EMB_E_INVALID;
    return EMB_OK;
}

uint32_t emb_log_lost_no_ring(void)
{
    return __atomic_load_n(&emb__log.lost_no_ring, __ATOMIC_RELAXED);
}

uint8_t emb_log_module_set_level(struct emb_log_module *module, uint8_t level)
{
    if (level > CONFIG_EMB_LOG_MAX_LEVEL)
        level = CONFIG_EMB_LOG_MAX_LEVEL;
    return __atomic_exchange_n(&module->level, level, __ATOMIC_RELAXED);
}

emb_status emb_log_ring_init(struct emb_log_ring *ring, uint16_t context_id, uint16_t kind,
                             uint8_t *buf, uint32_t size)
{
    if (ring == NULL || buf == NULL || size < 256u || (size & (size - 1u)) != 0u ||
        size < 2u * EMB_LOG_RESERVE_MAX)
        return EMB_E_INVALID;
    memset(ring, 0, sizeof *ring);
    ring->buf = buf;
    ring->mask = size - 1u;
    ring->ts_high = 0xFFFFFFFFu; /* no marker yet: the first record brings one */
    ring->context_id = context_id;
    ring->context_kind = kind;
    return EMB_OK;
}

/* ---- Slow path ---- */

/* Takes up to EMB_LOG_DROPPED_MAX unannounced drops for the caller to announce. */
static uint32_t emb__take_pending(struct emb_log_ring *ring)
{
    for (;;) {
        uint32_t n = __atomic_load_n(&ring->pending, __ATOMIC_RELAXED);
        if (n == 0u)
            return 0u;
        uint32_t take = n < EMB_LOG_DROPPED_MAX ? n : EMB_LOG_DROPPED_MAX;
        if (emb_port_local_cas32(&ring->pending, n, n - take))
            return take;
    }
}

/* The nearer of two positions ahead of `from` (modulo 2^32). */
static uint32_t emb__nearer(uint32_t from, uint32_t a, uint32_t b)
{
    return a - from < b - from ? a : b;
}

static uint8_t *emb__put_sync(struct emb_log_ring *ring, uint8_t *rec, uint64_t now)
{
    static const uint8_t magic[EMB_LOG_SYNC_MAGIC_SIZE] = EMB_LOG_SYNC_MAGIC;
    emb__log_put_header(rec, EMB_LOG_ID_SYNC, now);
    uint8_t *p = rec + EMB_LOG_RECORD_HEADER;
    memcpy(p + EMB_LOG_SYNC_OFF_MAGIC, magic, sizeof magic);
    emb_put_le16(p + EMB_LOG_SYNC_OFF_CONTEXT, ring->context_id);
    emb_put_le64(p + EMB_LOG_SYNC_OFF_TS, now);
    emb_put_le32(p + EMB_LOG_SYNC_OFF_DROPPED, __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED));
    return rec + EMB_LOG_SYNC_SIZE;
}

static uint8_t *emb__put_dropped(uint8_t *rec, uint32_t count, uint64_t now)
{
    emb__log_put_header(rec, EMB_LOG_ID_DROPPED, now);
    emb_put_le16(rec + EMB_LOG_RECORD_HEADER, (uint16_t)count);
    return rec + EMB_LOG_DROPPED_SIZE;
}

static void emb__drop(struct emb_log_ring *ring, uint32_t count, uint32_t pos)
{
    emb_port_local_add32_release(&ring->pending, count);
    emb_port_local_add32_release(&ring->dropped, 1u);
    __atomic_store_n(&ring->limit, pos, __ATOMIC_RELAXED); /* the next record announces it */
}

uint8_t *emb_log_reserve_slow(struct emb_log_reservation *res, struct emb_log_ring *ring,
                              uint32_t id, uint32_t size)
{
    if (ring == &emb_log_unclaimed_ring) {
        ring = emb_port_log_ring_claim();
        if (ring == NULL) {
            __atomic_fetch_add(&emb__log.lost_no_ring, 1u, __ATOMIC_RELAXED);
            return NULL;
        }
    }
    const uint32_t cap = ring->mask + 1u;
    uint32_t taken = 0; /* drops this record will announce */
    for (;;) {
        uint32_t pos = __atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED);
        uint64_t now = emb_port_timestamp();
        /* Taken before the swap: a producer that preempts us from here on finds nothing
         * pending, so the drops are announced once, by us. */
        taken += emb__take_pending(ring);
        bool sync = __atomic_load_n(&ring->sync_countdown, __ATOMIC_RELAXED) == 0u ||
                    (uint32_t)(now >> 32) != __atomic_load_n(&ring->ts_high, __ATOMIC_RELAXED);
        uint32_t total = (taken > 0u ? EMB_LOG_DROPPED_SIZE : 0u) +
                         (sync ? EMB_LOG_SYNC_SIZE : 0u) + size;
        uint32_t read = emb_port_load32_acquire(&ring->read_pos);
        if (size > CONFIG_EMB_LOG_RECORD_MAX || pos + total - read > cap) {
            emb__drop(ring, taken + 1u, pos); /* what we took goes back, with us */
            return NULL;
        }
        if (!emb_port_local_cas32(&ring->write_pos, pos, pos + total))
            continue;

        /* [pos, end) is ours. Refresh the hints, then re-check what forces the slow path:
         * a producer that preempted us before the stores may have set them meanwhile. */
        uint32_t end = pos + total;
        uint32_t lap_end = (pos | ring->mask) + 1u;
        if (total > lap_end - pos) {
            /* Crossing the ring's end: the bytes past it go into the slack. */
            __atomic_store_n(&ring->spill_pos, lap_end, __ATOMIC_RELAXED);
            __atomic_store_n(&ring->spill, end - lap_end, __ATOMIC_RELAXED);
        } else if ((pos & ring->mask) == 0u || (end & ring->mask) == 0u) {
            /* At an end, without crossing it: a reader must not use a stale spill. */
            __atomic_store_n(&ring->spill_pos, (pos & ring->mask) == 0u ? pos : end,
                             __ATOMIC_RELAXED);
            __atomic_store_n(&ring->spill, 0u, __ATOMIC_RELAXED);
        }
        uint32_t left = __atomic_load_n(&ring->sync_countdown, __ATOMIC_RELAXED);
        if (sync) {
            __atomic_store_n(&ring->ts_high, (uint32_t)(now >> 32), __ATOMIC_RELAXED);
            left = CONFIG_EMB_LOG_SYNC_INTERVAL;
        }
        left = left > 0u ? left - 1u : 0u;
        __atomic_store_n(&ring->sync_countdown, left, __ATOMIC_RELAXED);
        __atomic_store_n(&ring->limit, emb__nearer(end, read + cap, (end | ring->mask) + 1u),
                         __ATOMIC_RELAXED);
        if (__atomic_load_n(&ring->pending, __ATOMIC_RELAXED) != 0u ||
            __atomic_load_n(&ring->sync_countdown, __ATOMIC_RELAXED) == 0u)
            __atomic_store_n(&ring->limit, end, __ATOMIC_RELAXED);

        uint8_t *rec = ring->buf + (pos & ring->mask);
        if (taken > 0u)
            rec = emb__put_dropped(rec, taken, now);
        if (sync)
            rec = emb__put_sync(ring, rec, now);
        emb__log_put_header(rec, id, now);
        res->ring = ring;
        res->size = total;
        return rec + EMB_LOG_RECORD_HEADER;
    }
}

uint8_t *emb_log_reserve(struct emb_log_reservation *res, uint32_t id, uint32_t size)
{
    return emb_log_try_reserve(res, id, size);
}

void emb_log_commit_out(const struct emb_log_reservation *res)
{
    emb_log_commit(res);
}

/* ---- Frames ---- */

static emb_status emb__frame(const struct emb_log_output *out, const uint8_t *payload, uint32_t len)
{
    struct emb_frame_encoder enc;
    emb_frame_encode_begin(&enc, out->write, out->arg, EMB_FRAME_CH_LOG);
    emb_frame_encode_put(&enc, payload, len);
    return emb_frame_encode_end(&enc);
}

emb_status emb_log_write_hello(const struct emb_log_output *out, const struct emb_log_identity *id)
{
    uint8_t p[EMB_LOG_HELLO_SIZE];
    const struct emb_log_hello_info h = {
        .clock_hz = emb_port_timestamp_hz(),
        .clock_offset_ns = emb_port_clock_offset_ns(),
        .id_bytes = (uint8_t)EMB_LOG_ID_BYTES,
        .ts_bytes = CONFIG_EMB_LOG_TIMESTAMP ? 4u : 0u,
        .ptr_bytes = (uint8_t)sizeof(void *),
        .build_id = id != NULL ? id->build_id : NULL,
        .build_id_len = id != NULL ? id->build_id_len : 0u,
        .port = EMB_PORT_NAME,
    };
    emb_log_encode_hello(p, &h);
    __atomic_fetch_add(&emb__log.hello_epoch, 1u, __ATOMIC_RELAXED);
    return emb__frame(out, p, sizeof p);
}

emb_status emb_log_write_context(const struct emb_log_output *out, struct emb_log_ring *ring)
{
    uint8_t p[EMB_LOG_CTX_SIZE];
    emb_log_encode_context(p, ring->context_id, (uint8_t)ring->context_kind, ring->name);
    /* announced holds the hello epoch plus one, so zero means "never". */
    ring->announced = __atomic_load_n(&emb__log.hello_epoch, __ATOMIC_RELAXED) + 1u;
    return emb__frame(out, p, sizeof p);
}

emb_status emb_log_write_stats(const struct emb_log_output *out, const struct emb_log_ring *ring)
{
    uint8_t p[EMB_LOG_STATS_SIZE];
    emb_log_encode_stats(p, ring->context_id, __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED),
                         __atomic_load_n(&ring->pending, __ATOMIC_RELAXED),
                         emb_port_load32_acquire(&ring->write_pos));
    return emb__frame(out, p, sizeof p);
}

static emb_status emb__drain(struct emb_log_ring *ring, const struct emb_log_output *out,
                             uint32_t *bytes);

emb_status emb_log_drain(struct emb_log_ring *ring, const struct emb_log_output *out,
                         uint32_t *bytes)
{
    if (bytes != NULL)
        *bytes = 0u;
    if (ring == NULL || ring == &emb_log_unclaimed_ring || ring->buf == NULL)
        return EMB_E_INVALID;
    if (__atomic_exchange_n(&ring->draining, 1u, __ATOMIC_ACQUIRE) != 0u)
        return EMB_E_BUSY;
    emb_status status = emb__drain(ring, out, bytes);
    __atomic_store_n(&ring->draining, 0u, __ATOMIC_RELEASE);
    return status;
}

static emb_status emb__drain(struct emb_log_ring *ring, const struct emb_log_output *out,
                             uint32_t *bytes)
{
    /* committed, then write_pos: equal means that at the first load nothing was reserved
     * and uncommitted, so every byte before them is complete. Nested reservations commit
     * in reverse order, so this holds as soon as no producer is mid-record. */
    uint32_t committed = emb_port_load32_acquire(&ring->committed);
    uint32_t write = emb_port_load32_acquire(&ring->write_pos);
    if (committed != write)
        return EMB_E_BUSY;
    uint32_t read = ring->read_pos;
    if (read == write)
        return EMB_OK;
    uint32_t epoch = __atomic_load_n(&emb__log.hello_epoch, __ATOMIC_RELAXED) + 1u;
    if (ring->announced != epoch) {
        emb_status s = emb_log_write_context(out, ring);
        if (s != EMB_OK)
            return s;
    }
    /* The spill a crossing in [read, write) left is stable here: a producer can set a new
     * one only at a ring end a whole ring later, which it cannot reserve up to until the
     * reader has passed this one. A newer one read by chance lies past `write` and is
     * ignored when the range is encoded. */
    const struct emb_log_ring_image img = {ring->buf, ring->mask,
                                           __atomic_load_n(&ring->spill_pos, __ATOMIC_RELAXED),
                                           __atomic_load_n(&ring->spill, __ATOMIC_RELAXED)};
    emb_status status = EMB_OK;
    uint32_t done = 0;
    while (read != write) {
        uint32_t n = write - read;
        if (n > CONFIG_EMB_LOG_FRAME_DATA_MAX)
            n = CONFIG_EMB_LOG_FRAME_DATA_MAX;
        status = emb_log_write_ring_data(out->write, out->arg, ring->context_id, &img, read,
                                         read + n, n);
        /* A failed write loses the bytes (the output counts it); the ring moves on. */
        read += n;
        done += n;
        emb_port_store32_release(&ring->read_pos, read);
        if (status != EMB_OK)
            break;
    }
    if (bytes != NULL)
        *bytes = done;
    return status;
}

/* ---- IMMEDIATE mode ---- */

void emb_log_set_output(const struct emb_log_output *out)
{
    emb_port_irq_state s = emb_port_irq_save();
    while (__atomic_exchange_n(&emb__log.output_lock, 1u, __ATOMIC_ACQUIRE) != 0u) {
    }
    if (out != NULL)
        emb__log.output = *out;
    else
        emb__log.output.write = NULL;
    __atomic_store_n(&emb__log.output_lock, 0u, __ATOMIC_RELEASE);
    emb_port_irq_restore(s);
}

const struct emb_log_output *emb_log_output_acquire(void)
{
    while (__atomic_exchange_n(&emb__log.output_lock, 1u, __ATOMIC_ACQUIRE) != 0u) {
    }
    if (emb__log.output.write != NULL)
        return &emb__log.output;
    __atomic_store_n(&emb__log.output_lock, 0u, __ATOMIC_RELEASE);
    return NULL;
}

void emb_log_output_release(void)
{
    __atomic_store_n(&emb__log.output_lock, 0u, __ATOMIC_RELEASE);
}

void emb_log_immediate_flush(struct emb_log_ring *ring)
{
    emb_port_irq_state s = emb_port_irq_save();
    const struct emb_log_output *out = emb_log_output_acquire();
    if (out != NULL) {
        /* Busy when this commit preempted a producer (or a drain) of the same ring: the
         * preempted one's own commit flushes both. */
        (void)emb_log_drain(ring, out, NULL);
        emb_log_output_release();
    }
    emb_port_irq_restore(s);
}
