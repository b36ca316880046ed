/* Deferred logging (SPEC-015 §2).
 *
 *     EMB_LOG_MODULE_DEFINE(sensor, EMB_LOG_LEVEL_INF);   once, in one .c file
 *     EMB_LOG_MODULE_DECLARE(sensor, EMB_LOG_LEVEL_INF);  in every other file that logs
 *     EMB_LOG_MODULE_DEFINE_PARTITION(radio, EMB_LOG_LEVEL_INF, 2, "radio");  partition 2's
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
 * docs/formats/log.md. What the macros expand to (the reservation, the argument capture,
 * the call site's metadata) is in emb/internal/, which this header includes: not API.
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

/* Defines module `name` as EMB_LOG_MODULE_DEFINE does, for code of partition `partition`
 * (an integer constant below CONFIG_EMB_PARTITIONS, emb/partition.h) called
 * `partition_name` (a string literal of at most 15 characters, the name given to
 * emb_partition_define()). The partition is metadata in the ELF (a module record,
 * docs/formats/log.md): `emb log` shows it on every record of the module's call sites,
 * which stay as they are (EMB_LOG_MODULE_DECLARE in the other files), records too. With
 * CONFIG_EMB_PARTITIONS 0, or the text backend, it is EMB_LOG_MODULE_DEFINE. */
#define EMB_LOG_MODULE_DEFINE_PARTITION(name, level, partition, partition_name)             \
    EMB__LOG_MODULE_RECORD(name, partition, partition_name)                                  \
    EMB_LOG_MODULE_DEFINE(name, level)

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

/* The text backend (CONFIG_EMB_LOG_TEXT): formats one line on the target with
 * emb_vsnprintf() and writes it to the output of emb_log_set_output() at once:
 * "[seconds] <level> module: text (file:line)". */
void emb_log_text(uint8_t level, const char *module, const char *file, uint32_t line,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void emb_log_text_hexdump(uint8_t level, const char *module, const char *file, uint32_t line,
                          const void *buf, uint32_t len, const char *title);

/* The machinery behind the call-site macros above; not API. */
#include <emb/internal/log_reserve.h>
#include <emb/internal/log_args.h>
#include <emb/internal/log_site.h>

EMB_STATIC_ASSERT(EMB_LOG_RECORD_HEADER_MAX + 2u + CONFIG_EMB_LOG_HEXDUMP_MAX <= CONFIG_EMB_LOG_RECORD_MAX,
                  "CONFIG_EMB_LOG_HEXDUMP_MAX does not fit CONFIG_EMB_LOG_RECORD_MAX");

#ifdef __cplusplus
}
#endif

#endif /* EMB_LOG_H */
