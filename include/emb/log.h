/* Deferred logging (SPEC-015 §2).
 *
 *     EMB_LOG_MODULE_DEFINE(sensor, EMB_LOG_LEVEL_INF);   once, in one .c file
 *     EMB_LOG_MODULE_DECLARE(sensor, EMB_LOG_LEVEL_INF);  in every other file that logs
 *     EMB_LOG_ERR(sensor, "sensor %u failed: %d", id, status);
 *     EMB_LOG_HEXDUMP_DBG(sensor, frame, len, "rx frame");
 *     emb_log_set_level(sensor, EMB_LOG_LEVEL_DBG);
 *
 * A call site keeps its format string, level, module, file, line and argument signature
 * in a static object in section `emb_log`, which a microcontroller links into a region no
 * loader copies (ports/cortex-m/emb_log.ld). The record holds only the object's offset
 * in that region, a timestamp and the raw arguments; `emb log` formats them on the host
 * from the ELF. A call site above its module's compile-time level (or
 * CONFIG_EMB_LOG_MAX_LEVEL) expands to nothing; below the run-time level it costs one
 * load and one compare. Records go into per-context lock-free rings; a worker drains them
 * into frames (emb_log_drain()). The formats and the ring protocol are in
 * docs/formats/log.md.
 */
#ifndef EMB_LOG_H
#define EMB_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/config.h>
#include <emb/frame.h>
#include <emb/log_format.h>
#include <emb/status.h>
#include <emb/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Modules ---- */

/* A module's run-time level. Defined by EMB_LOG_MODULE_DEFINE. */
struct emb_log_module {
    uint8_t level;
};

/* Defines module `name` with compile-time level `level` (also its initial run-time level).
 * Use once per module, in one .c file, instead of EMB_LOG_MODULE_DECLARE there. */
#define EMB_LOG_MODULE_DEFINE(name, level)                                                    \
    EMB_LOG_MODULE_DECLARE(name, level);                                                      \
    struct emb_log_module emb_log_module_##name = {                                           \
        (uint8_t)((level) < CONFIG_EMB_LOG_MAX_LEVEL ? (level) : CONFIG_EMB_LOG_MAX_LEVEL)}

/* Declares module `name` for the call sites of this file, with the compile-time level
 * `level` (EMB_LOG_LEVEL_*, e.g. CONFIG_EMB_LOG_LEVEL_SENSOR): calls above it compile to
 * nothing in this file. */
#define EMB_LOG_MODULE_DECLARE(name, level)                                                   \
    enum { emb__log_level_##name = (level) };                                                 \
    extern struct emb_log_module emb_log_module_##name

/* Sets a module's run-time level; returns the previous one. Above the module's
 * compile-time level there is nothing left to enable. */
#define emb_log_set_level(name, level) emb_log_module_set_level(&emb_log_module_##name, (level))
uint8_t emb_log_module_set_level(struct emb_log_module *module, uint8_t level);

/* ---- Call sites ---- */

#define EMB_LOG_ERR(module, ...) EMB__LOG(EMB_LOG_LEVEL_ERR, module, __VA_ARGS__)
#define EMB_LOG_WRN(module, ...) EMB__LOG(EMB_LOG_LEVEL_WRN, module, __VA_ARGS__)
#define EMB_LOG_INF(module, ...) EMB__LOG(EMB_LOG_LEVEL_INF, module, __VA_ARGS__)
#define EMB_LOG_DBG(module, ...) EMB__LOG(EMB_LOG_LEVEL_DBG, module, __VA_ARGS__)

/* Logs `title` (a string literal) and the first CONFIG_EMB_LOG_HEXDUMP_MAX of `len` bytes
 * at `buf`. */
#define EMB_LOG_HEXDUMP_ERR(module, buf, len, title) EMB__LOG_HEX(EMB_LOG_LEVEL_ERR, module, buf, len, title)
#define EMB_LOG_HEXDUMP_WRN(module, buf, len, title) EMB__LOG_HEX(EMB_LOG_LEVEL_WRN, module, buf, len, title)
#define EMB_LOG_HEXDUMP_INF(module, buf, len, title) EMB__LOG_HEX(EMB_LOG_LEVEL_INF, module, buf, len, title)
#define EMB_LOG_HEXDUMP_DBG(module, buf, len, title) EMB__LOG_HEX(EMB_LOG_LEVEL_DBG, module, buf, len, title)

/* ---- Rings ---- */

/* Bytes of a record's id: CONFIG_EMB_LOG_ID_BYTES, or, chosen at link time, the value of
 * the symbol emb_log_id_bytes the linker fragment computes from the region's size (a
 * constant the code loads as an address, no memory read). */
#if CONFIG_EMB_LOG_ID_BYTES == 0
#if defined(__PIC__) || defined(__PIE__)
#error "CONFIG_EMB_LOG_ID_BYTES 0 (chosen at link time) needs a static link; set it to 2 or 4"
#endif
extern const char emb_log_id_bytes_linked[] __asm__("emb_log_id_bytes");
#define EMB_LOG_ID_BYTES ((uint32_t)(uintptr_t)emb_log_id_bytes_linked)
#define EMB_LOG_ID_BYTES_MAX 4u
#else
#define EMB_LOG_ID_BYTES ((uint32_t)CONFIG_EMB_LOG_ID_BYTES)
#define EMB_LOG_ID_BYTES_MAX ((uint32_t)CONFIG_EMB_LOG_ID_BYTES)
#endif

/* Bytes a record's id and timestamp take (at most). */
#define EMB_LOG_RECORD_HEADER (EMB_LOG_ID_BYTES + (CONFIG_EMB_LOG_TIMESTAMP ? 4u : 0u))
#define EMB_LOG_RECORD_HEADER_MAX (EMB_LOG_ID_BYTES_MAX + (CONFIG_EMB_LOG_TIMESTAMP ? 4u : 0u))
#define EMB_LOG_SYNC_SIZE (EMB_LOG_RECORD_HEADER + EMB_LOG_SYNC_PAYLOAD)
#define EMB_LOG_DROPPED_SIZE (EMB_LOG_RECORD_HEADER + EMB_LOG_DROPPED_PAYLOAD)
/* Most bytes one reservation takes: a dropped record, a sync marker and the record. */
#define EMB_LOG_RESERVE_MAX                                                                   \
    (2u * EMB_LOG_RECORD_HEADER_MAX + EMB_LOG_DROPPED_PAYLOAD + EMB_LOG_SYNC_PAYLOAD +        \
     CONFIG_EMB_LOG_RECORD_MAX)
/* A ring of `size` bytes needs a buffer this big: a record that crosses the end is
 * written on past it, into the slack, and the reader takes it from there. */
#define EMB_LOG_RING_BUF_SIZE(size) ((size) + EMB_LOG_RESERVE_MAX)

/* A context's log ring. Allocate it statically with its buffer; initialise with
 * emb_log_ring_init(). Public so a debugger and the descriptor can describe it. */
struct emb_log_ring {
    /* Producer state: written by the owning context and what preempts it. */
    uint32_t write_pos;      /* free-running byte position of the next reservation */
    uint32_t limit;          /* the fast path reserves only up to here (a hint) */
    uint32_t ts_high;        /* high clock word of the last sync marker (a hint) */
    uint32_t sync_countdown; /* records left until the next sync marker */
    uint8_t *buf;            /* size + EMB_LOG_RESERVE_MAX bytes */
    uint32_t mask;           /* size - 1 */
    uint32_t committed;      /* free-running bytes committed */
    uint32_t pending;        /* records dropped and not yet announced */
    uint32_t dropped;        /* records dropped since init */
    uint32_t spill_pos;      /* ring end crossed by the last record that crossed one */
    uint32_t spill;          /* bytes of that record past the end (in the slack) */
    uint16_t context_id;
    uint16_t context_kind;   /* enum emb_context_kind */
    /* Consumer state. */
    uint32_t read_pos;       /* first byte not yet handed on */
    uint32_t announced;      /* hello count + 1 when its context frame went out */
    uint32_t draining;       /* a consumer is in emb_log_drain() */
    char name[EMB_LOG_CTX_NAME_MAX];
};

/* One reservation between emb_log_try_reserve() and emb_log_commit(). */
struct emb_log_reservation {
    struct emb_log_ring *ring;
    uint32_t size;
};

/* The ring a context has before it owns one: its limit sends every record to the slow
 * path, which claims a ring from the port (emb_port_log_ring_claim()). */
extern struct emb_log_ring emb_log_unclaimed_ring;

/* Prepares a ring over `buf`, which holds EMB_LOG_RING_BUF_SIZE(size) bytes; `size` is a
 * power of two, at least 256 and at least 2 * EMB_LOG_RESERVE_MAX. */
emb_status emb_log_ring_init(struct emb_log_ring *ring, uint16_t context_id, uint16_t kind,
                             uint8_t *buf, uint32_t size);

/* Checks the metadata region against the id width (EMB_E_NOSPACE when ids would not
 * fit) and keeps the ELF note linked in. Call once at start-up. */
emb_status emb_log_init(void);

/* Records lost because the port had no ring to give their context. */
uint32_t emb_log_lost_no_ring(void);

/* ---- Output: frames (docs/formats/frame.md, docs/formats/log.md) ---- */

struct emb_log_output {
    emb_frame_write_fn write;  /* receives encoded frame bytes */
    void *arg;
};

/* What the hello frame says. */
struct emb_log_identity {
    const uint8_t *build_id;  /* the image's GNU build id */
    uint8_t build_id_len;     /* at most EMB_LOG_BUILD_ID_MAX */
};

/* Writes a hello frame (identity, clock, record layout) and marks every ring passed to
 * emb_log_drain() since as needing its context frame again. */
emb_status emb_log_write_hello(const struct emb_log_output *out, const struct emb_log_identity *id);
/* Writes a context frame (id, kind, name) for `ring`. */
emb_status emb_log_write_context(const struct emb_log_output *out, struct emb_log_ring *ring);
/* Writes a stats frame (drops, unannounced drops, position) for `ring`. */
emb_status emb_log_write_stats(const struct emb_log_output *out, const struct emb_log_ring *ring);

/* Hands every complete record of `ring` not yet read to `out` as data frames (preceded
 * by a context frame when one is due), then frees their bytes for the producers. Returns
 * EMB_E_BUSY, having read nothing, when a producer of the ring is between reservation and
 * commit, or another consumer is draining it (try again soon); else the output's error.
 * `bytes` (may be NULL) receives the ring bytes handed on. */
emb_status emb_log_drain(struct emb_log_ring *ring, const struct emb_log_output *out,
                         uint32_t *bytes);

/* The output of IMMEDIATE mode and of the text backend (NULL: none; records stay in the
 * rings, text is dropped). Whoever drains rings into the same sink takes it too, so
 * frames never interleave: */
void emb_log_set_output(const struct emb_log_output *out);

/* Takes the output for one writer at a time across contexts (CPUs, native threads) and
 * returns it, or NULL, not taken, when none is set. Mask interrupts first
 * (emb_port_irq_save()): a handler on this context must not wait for the taker it
 * interrupted. */
const struct emb_log_output *emb_log_output_acquire(void);
void emb_log_output_release(void);

/* IMMEDIATE mode: drains the committing context's ring to the output set above. */
void emb_log_immediate_flush(struct emb_log_ring *ring);

/* ---- The reservation every call site inlines ---- */

#include <emb/port.h>

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

/* ---- Argument capture (internal) ---- */

/* The region's start: the linker's __start_emb_log (on a microcontroller the linker
 * fragment defines it). */
extern const uint8_t emb_log_region_start[] __asm__("__start_emb_log");

#define EMB__LOG_ID(site) \
    ((uint32_t)((uintptr_t)&(site) - (uintptr_t)emb_log_region_start) + EMB_LOG_ID_BIAS)

#if defined(__FILE_NAME__)
#define EMB__LOG_FILE __FILE_NAME__
#else
#define EMB__LOG_FILE __FILE__
#endif

/* A captured argument: the value's bits, or a string and its length byte. */
struct emb__log_val {
    uint64_t u;
    const char *s;
    uint32_t n;
};

static inline struct emb__log_val emb__lv_i32(int32_t v) { struct emb__log_val r = {(uint32_t)v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_u32(uint32_t v) { struct emb__log_val r = {v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_i64(int64_t v) { struct emb__log_val r = {(uint64_t)v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_u64(uint64_t v) { struct emb__log_val r = {v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_long(long v)
{
    struct emb__log_val r = {sizeof(long) == 8u ? (uint64_t)v : (uint32_t)v, 0, 0};
    return r;
}
static inline struct emb__log_val emb__lv_ulong(unsigned long v) { struct emb__log_val r = {v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_f64(double v)
{
    struct emb__log_val r = {0, 0, 0};
    EMB_WIRE_COPY(&r.u, &v, sizeof v);
    return r;
}
static inline struct emb__log_val emb__lv_ptr(const volatile void *v)
{
    struct emb__log_val r = {(uintptr_t)v, 0, 0};
    return r;
}
/* Measures at most CONFIG_EMB_LOG_STR_MAX + 1 bytes: a longer string is clipped. */
static inline struct emb__log_val emb__lv_str(const char *s)
{
    struct emb__log_val r = {0, s, EMB_LOG_STR_NULL};
    if (s == NULL)
        return r;
    uint32_t n = 0;
    while (n <= CONFIG_EMB_LOG_STR_MAX && s[n] != '\0')
        n++;
    r.n = n > CONFIG_EMB_LOG_STR_MAX ? (CONFIG_EMB_LOG_STR_MAX | EMB_LOG_STR_CLIPPED) : n;
    return r;
}
/* Firmware buffers are uint8_t: a %s of one is the string it holds, not its address. */
static inline struct emb__log_val emb__lv_ustr(const unsigned char *s) { return emb__lv_str((const char *)s); }
static inline struct emb__log_val emb__lv_sstr(const signed char *s) { return emb__lv_str((const char *)s); }

static inline uint8_t *emb__lp_32(uint8_t *p, struct emb__log_val v) { emb_put_le32(p, (uint32_t)v.u); return p + 4; }
static inline uint8_t *emb__lp_64(uint8_t *p, struct emb__log_val v) { emb_put_le64(p, v.u); return p + 8; }
static inline uint8_t *emb__lp_long(uint8_t *p, struct emb__log_val v)
{
    return sizeof(long) == 8u ? emb__lp_64(p, v) : emb__lp_32(p, v);
}
static inline uint8_t *emb__lp_ptr(uint8_t *p, struct emb__log_val v)
{
    return sizeof(void *) == 8u ? emb__lp_64(p, v) : emb__lp_32(p, v);
}
static inline uint8_t *emb__lp_str(uint8_t *p, struct emb__log_val v)
{
    uint32_t n = v.n & ~EMB_LOG_STR_CLIPPED;
    p[0] = (uint8_t)v.n;
    if (n > 0u)
        EMB_WIRE_COPY(p + 1, v.s, n);
    return p + 1 + n;
}

/* The argument types recorded as strings (signature 's'), as _Generic associations that
 * all select `e`. */
#define EMB__LOG_STR_TYPES(e)                                                                 \
    char *: e, const char *: e, unsigned char *: e, const unsigned char *: e, signed char *: e, \
        const signed char *: e

#define EMB__LOG_VAL(x)                                                                       \
    _Generic((x), _Bool: emb__lv_u32, char: emb__lv_i32, signed char: emb__lv_i32,            \
             unsigned char: emb__lv_u32, short: emb__lv_i32, unsigned short: emb__lv_u32,     \
             int: emb__lv_i32, unsigned int: emb__lv_u32, long: emb__lv_long,                 \
             unsigned long: emb__lv_ulong, long long: emb__lv_i64,                            \
             unsigned long long: emb__lv_u64, float: emb__lv_f64, double: emb__lv_f64,        \
             char *: emb__lv_str, const char *: emb__lv_str, unsigned char *: emb__lv_ustr,   \
             const unsigned char *: emb__lv_ustr, signed char *: emb__lv_sstr,                \
             const signed char *: emb__lv_sstr, default: emb__lv_ptr)(x)

#define EMB__LOG_PUTARG(x)                                                                    \
    _Generic((x), _Bool: emb__lp_32, char: emb__lp_32, signed char: emb__lp_32,               \
             unsigned char: emb__lp_32, short: emb__lp_32, unsigned short: emb__lp_32,        \
             int: emb__lp_32, unsigned int: emb__lp_32, long: emb__lp_long,                   \
             unsigned long: emb__lp_long, long long: emb__lp_64, unsigned long long: emb__lp_64, \
             float: emb__lp_64, double: emb__lp_64, EMB__LOG_STR_TYPES(emb__lp_str),         \
             default: emb__lp_ptr)

#define EMB__LOG_SIG(x)                                                                       \
    _Generic((x), _Bool: 'u', char: 'i', signed char: 'i', unsigned char: 'u', short: 'i',    \
             unsigned short: 'u', int: 'i', unsigned int: 'u',                                \
             long: (sizeof(long) == 8u ? 'I' : 'i'), unsigned long: (sizeof(long) == 8u ? 'U' : 'u'), \
             long long: 'I', unsigned long long: 'U', float: 'f', double: 'f',                \
             EMB__LOG_STR_TYPES('s'), default: 'p')

/* Bytes an argument takes in the record: its fixed size, or 1 + the copied length. */
#define EMB__LOG_FIXSIZE(x)                                                                   \
    _Generic((x), long: sizeof(long), unsigned long: sizeof(long), long long: 8u,             \
             unsigned long long: 8u, float: 8u, double: 8u, default: 4u)
#define EMB__LOG_ARGSIZE(x, v)                                                                \
    _Generic((x), EMB__LOG_STR_TYPES(1u + ((v).n & 0x7Fu)),                                  \
             _Bool: 4u, char: 4u, signed char: 4u, unsigned char: 4u, short: 4u,              \
             unsigned short: 4u, int: 4u, unsigned int: 4u, long: EMB__LOG_FIXSIZE(x),        \
             unsigned long: EMB__LOG_FIXSIZE(x), long long: 8u, unsigned long long: 8u,       \
             float: 8u, double: 8u, default: sizeof(void *))
#define EMB__LOG_ARGMAX(x)                                                                    \
    _Generic((x), EMB__LOG_STR_TYPES(1u + CONFIG_EMB_LOG_STR_MAX),                           \
             _Bool: 4u, char: 4u, signed char: 4u, unsigned char: 4u, short: 4u,              \
             unsigned short: 4u, int: 4u, unsigned int: 4u, long: EMB__LOG_FIXSIZE(x),        \
             unsigned long: EMB__LOG_FIXSIZE(x), long long: 8u, unsigned long long: 8u,       \
             float: 8u, double: 8u, default: sizeof(void *))

/* Argument lists: EMB__LOG_MAP(M, fmt, a1, ..., an) is M(1, a1) ... M(n, an). Up to 15
 * arguments after the format. */
#define EMB__LOG_CAT(a, b) EMB__LOG_CAT_(a, b)
#define EMB__LOG_CAT_(a, b) a##b
#define EMB__LOG_NARGS(...)                                                                   \
    EMB__LOG_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define EMB__LOG_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15,    \
                        a16, n, ...) n
#define EMB__LOG_FMT(...) EMB__LOG_FMT_(__VA_ARGS__, 0)
#define EMB__LOG_FMT_(fmt, ...) fmt
#define EMB__LOG_MAP(M, ...) EMB__LOG_CAT(EMB__LOG_MAP_, EMB__LOG_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define EMB__LOG_MAP_1(M, f)
#define EMB__LOG_MAP_2(M, f, a) M(1, a)
#define EMB__LOG_MAP_3(M, f, a, b) M(1, a) M(2, b)
#define EMB__LOG_MAP_4(M, f, a, b, c) M(1, a) M(2, b) M(3, c)
#define EMB__LOG_MAP_5(M, f, a, b, c, d) M(1, a) M(2, b) M(3, c) M(4, d)
#define EMB__LOG_MAP_6(M, f, a, b, c, d, e) EMB__LOG_MAP_5(M, f, a, b, c, d) M(5, e)
#define EMB__LOG_MAP_7(M, f, a, b, c, d, e, g) EMB__LOG_MAP_6(M, f, a, b, c, d, e) M(6, g)
#define EMB__LOG_MAP_8(M, f, a, b, c, d, e, g, h) EMB__LOG_MAP_7(M, f, a, b, c, d, e, g) M(7, h)
#define EMB__LOG_MAP_9(M, f, a, b, c, d, e, g, h, i)                                          \
    EMB__LOG_MAP_8(M, f, a, b, c, d, e, g, h) M(8, i)
#define EMB__LOG_MAP_10(M, f, a, b, c, d, e, g, h, i, j)                                      \
    EMB__LOG_MAP_9(M, f, a, b, c, d, e, g, h, i) M(9, j)
#define EMB__LOG_MAP_11(M, f, a, b, c, d, e, g, h, i, j, k)                                   \
    EMB__LOG_MAP_10(M, f, a, b, c, d, e, g, h, i, j) M(10, k)
#define EMB__LOG_MAP_12(M, f, a, b, c, d, e, g, h, i, j, k, l)                                \
    EMB__LOG_MAP_11(M, f, a, b, c, d, e, g, h, i, j, k) M(11, l)
#define EMB__LOG_MAP_13(M, f, a, b, c, d, e, g, h, i, j, k, l, m)                             \
    EMB__LOG_MAP_12(M, f, a, b, c, d, e, g, h, i, j, k, l) M(12, m)
#define EMB__LOG_MAP_14(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n)                          \
    EMB__LOG_MAP_13(M, f, a, b, c, d, e, g, h, i, j, k, l, m) M(13, n)
#define EMB__LOG_MAP_15(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n, o)                       \
    EMB__LOG_MAP_14(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n) M(14, o)
#define EMB__LOG_MAP_16(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n, o, q)                    \
    EMB__LOG_MAP_15(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n, o) M(15, q)

#define EMB__LOG_DECL(i, x) const struct emb__log_val emb__v##i = EMB__LOG_VAL(x);
#define EMB__LOG_SIZE(i, x) +EMB__LOG_ARGSIZE(x, emb__v##i)
#define EMB__LOG_MAXSIZE(i, x) +EMB__LOG_ARGMAX(x)
#define EMB__LOG_PUT(i, x) emb__p = EMB__LOG_PUTARG(x)(emb__p, emb__v##i);
#define EMB__LOG_SIGC(i, x) EMB__LOG_SIG(x),

/* Checks the arguments against the format as printf would (-Wformat); never called.
 * Repeated flags and a %% with flags or a width (%5%) are -Wformat warnings. Positional
 * arguments, %m and the wide %C and %S are GNU or POSIX printf, which the record cannot
 * reproduce; GCC names them only under -Wpedantic, and a diagnostic pragma around this
 * check would hold for the whole line of the call (GCC maps the argument tokens there: a
 * 0b101 argument would become an error), so `emb log` marks them instead
 * (docs/formats/log.md, "Decoding"). */
static inline void emb__log_check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void emb__log_check(const char *fmt, ...)
{
    (void)fmt;
}

/* Compile-time and run-time level checks. The first three terms are constants: when
 * they are false the call site is dead code and its metadata object unreferenced. */
#define EMB__LOG_ON(lvl, module)                                                              \
    (CONFIG_EMB_LOG && (lvl) <= CONFIG_EMB_LOG_MAX_LEVEL && (lvl) <= emb__log_level_##module && \
     (lvl) <= __atomic_load_n(&emb_log_module_##module.level, __ATOMIC_RELAXED))

/* The call site's metadata: header, signature, then the strings, in one object. */
#define EMB__LOG_SITE(kind_, lvl_, mod_, nsig_, sigs_, fmt_)                                \
    _Static_assert(sizeof(fmt_) <= 0xFFFFu && sizeof(#mod_) <= 0xFFu &&                       \
                       sizeof(EMB__LOG_FILE) <= 0xFFFFu,                                      \
                   "log format, module or file name too long");                               \
    static const struct {                                                                     \
        uint8_t kind, level, nargs, module_len;                                               \
        uint16_t fmt_len, file_len;                                                           \
        uint32_t line;                                                                        \
        char sig[nsig_];                                                                      \
        char module[sizeof(#mod_)];                                                           \
        char fmt[sizeof(fmt_)];                                                               \
        char file[sizeof(EMB__LOG_FILE)];                                                     \
    } emb__site __attribute__((section(EMB_LOG_SECTION), aligned(EMB_LOG_SITE_ALIGN))) = {   \
        (kind_), (lvl_), (uint8_t)((nsig_) - 1), (uint8_t)sizeof(#mod_), (uint16_t)sizeof(fmt_), \
        (uint16_t)sizeof(EMB__LOG_FILE), (uint32_t)__LINE__, sigs_, #mod_, fmt_, EMB__LOG_FILE}

/* The text backend (CONFIG_EMB_LOG_TEXT): formats one line on the target with
 * emb_vsnprintf() and writes it to the output of emb_log_set_output() at once:
 * "[seconds] <level> module: text (file:line)". */
void emb_log_text(uint8_t level, const char *module, const char *file, uint32_t line,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void emb_log_text_hexdump(uint8_t level, const char *module, const char *file, uint32_t line,
                          const void *buf, uint32_t len, const char *title);

#if CONFIG_EMB_LOG_TEXT

/* The text backend's call sites: plain varargs calls (C and C++). */
#define EMB__LOG(lvl, module, ...)                                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module))                                                         \
            emb_log_text((lvl), #module, EMB__LOG_FILE, (uint32_t)__LINE__, __VA_ARGS__);      \
    } while (0)

#define EMB__LOG_HEX(lvl, module, buf, len, title)                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module))                                                         \
            emb_log_text_hexdump((lvl), #module, EMB__LOG_FILE, (uint32_t)__LINE__, (buf),     \
                                 (uint32_t)(len), "" title);                                  \
    } while (0)

#elif defined(__cplusplus)

/* Deferred call sites take their argument types with C11 _Generic: C only, for now. */
#define EMB__LOG(lvl, module, ...)                                                            \
    static_assert(sizeof(emb_log_module_##module) == 0,                                       \
                  "deferred EMB_LOG_* call sites are C (C11 _Generic); in C++ use CONFIG_EMB_LOG_TEXT")
#define EMB__LOG_HEX(lvl, module, buf, len, title) EMB__LOG(lvl, module, title)

#else

#define EMB__LOG(lvl, module, ...)                                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module)) {                                                       \
            EMB__LOG_SITE(EMB_LOG_SITE_PRINTF, lvl, module, EMB__LOG_NARGS(__VA_ARGS__),       \
                          {EMB__LOG_MAP(EMB__LOG_SIGC, __VA_ARGS__) 0}, EMB__LOG_FMT(__VA_ARGS__)); \
            if (0)                                                                            \
                emb__log_check(__VA_ARGS__);                                                  \
            EMB__LOG_MAP(EMB__LOG_DECL, __VA_ARGS__)                                          \
            _Static_assert(EMB_LOG_RECORD_HEADER_MAX + 0u EMB__LOG_MAP(EMB__LOG_MAXSIZE, __VA_ARGS__) <= \
                               CONFIG_EMB_LOG_RECORD_MAX,                                     \
                           "log record may exceed CONFIG_EMB_LOG_RECORD_MAX");                \
            struct emb_log_reservation emb__res;                                              \
            uint8_t *emb__p = EMB__LOG_RESERVE(                                               \
                &emb__res, EMB__LOG_ID(emb__site),                                            \
                EMB_LOG_RECORD_HEADER + 0u EMB__LOG_MAP(EMB__LOG_SIZE, __VA_ARGS__));         \
            if (emb__p != NULL) {                                                             \
                EMB__LOG_MAP(EMB__LOG_PUT, __VA_ARGS__)                                       \
                (void)emb__p;                                                                 \
                EMB__LOG_COMMIT(&emb__res);                                                   \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#define EMB__LOG_HEX(lvl, module, buf, len, title)                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module)) {                                                       \
            EMB__LOG_SITE(EMB_LOG_SITE_HEXDUMP, lvl, module, 1, {0}, "" title);               \
            const uint8_t *emb__b = (const uint8_t *)(buf);                                   \
            uint32_t emb__n = (uint32_t)(len);                                                \
            uint32_t emb__c = emb__n > CONFIG_EMB_LOG_HEXDUMP_MAX ? CONFIG_EMB_LOG_HEXDUMP_MAX : emb__n; \
            struct emb_log_reservation emb__res;                                              \
            uint8_t *emb__p = EMB__LOG_RESERVE(&emb__res, EMB__LOG_ID(emb__site),             \
                                                  EMB_LOG_RECORD_HEADER + 2u + emb__c);       \
            if (emb__p != NULL) {                                                             \
                emb_put_le16(emb__p, (uint16_t)(emb__c | (emb__n > emb__c ? EMB_LOG_HEX_CLIPPED : 0u))); \
                if (emb__c > 0u)                                                              \
                    EMB_WIRE_COPY(emb__p + 2, emb__b, emb__c);                                \
                EMB__LOG_COMMIT(&emb__res);                                                   \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#endif /* CONFIG_EMB_LOG_TEXT */

EMB_STATIC_ASSERT(EMB_LOG_RECORD_HEADER_MAX + 2u + CONFIG_EMB_LOG_HEXDUMP_MAX <= CONFIG_EMB_LOG_RECORD_MAX,
                  "CONFIG_EMB_LOG_HEXDUMP_MAX does not fit CONFIG_EMB_LOG_RECORD_MAX");

#ifdef __cplusplus
}
#endif

#endif /* EMB_LOG_H */
