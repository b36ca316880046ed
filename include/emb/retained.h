/* The retained ring transport (SPEC-015 §7, docs/formats/retained.md): frames (emb/frame.h)
 * kept in memory that survives a reset, read after it. On Cortex-M the ring lives in a
 * `.noinit` (or `.retained`) region the startup code leaves alone; on the native port in a
 * file mapped MAP_SHARED (emb_native_retained_map()), which outlives a killed process the
 * way retained RAM outlives a reset.
 *
 * The ring holds whole encoded frames, zero-delimited, oldest first. When a frame does
 * not fit, the oldest whole frames are dropped (counted) to make room; a frame longer than
 * the ring is lost. emb_retained_write() has the signature of emb_frame_write_fn, so a
 * frame encoder (the deferred log's output, emb_frame_enc_*) writes into the ring
 * directly. On the next start emb_retained_attach() validates what the region holds and
 * ends a frame a reset cut short, so the reader drops just that one (its CRC fails);
 * emb_retained_read() hands the frames out, in order, to any transport, and
 * emb_retained_clear() empties the ring once they are safe.
 *
 * One writer at a time (the caller serialises, e.g. the log worker); reading happens
 * while nobody writes (after a reset, or with the writer stopped). The header is written
 * field by field in an order that leaves it consistent wherever a reset strikes:
 * data bytes before `head`, `tail` before the bytes it frees are overwritten.
 */
#ifndef EMB_RETAINED_H
#define EMB_RETAINED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EMB_RETAINED_MAGIC 0x52424D45u  /* "EMBR" in memory order (little-endian) */
#define EMB_RETAINED_VERSION 1u
#define EMB_RETAINED_HEADER_SIZE 40u
#define EMB_RETAINED_MIN_DATA 64u       /* smallest data area accepted */

/* The header at the start of the region; the data area follows it. All fields are in the
 * target's byte order; offsets in docs/formats/retained.md. */
struct emb_retained_ring {
    uint32_t magic;        /* EMB_RETAINED_MAGIC once initialised (written last) */
    uint16_t version;      /* EMB_RETAINED_VERSION */
    uint16_t header_size;  /* EMB_RETAINED_HEADER_SIZE: the data area's offset */
    uint32_t size;         /* bytes in the data area; one stays free */
    uint32_t head;         /* next byte written, in [0, size) */
    uint32_t tail;         /* first byte of the oldest frame, in [0, size); head == tail: empty */
    uint32_t starts;       /* attaches that found the ring intact (resets survived) */
    uint32_t dropped;      /* whole frames dropped for room since the last clear */
    uint32_t cut;          /* frames a reset left open since the last clear (the reader
                              drops each, unless only its delimiter was missing) */
    uint32_t lost;         /* frames longer than the ring, lost, since the last clear */
    uint32_t state;        /* bit 0: discarding the rest of an overlong frame */
};

/* What emb_retained_attach() found. */
struct emb_retained_info {
    bool intact;           /* the region held a valid ring: its frames were kept */
    uint32_t bytes;        /* bytes of frames waiting to be read */
    uint32_t starts, dropped, cut, lost;  /* the header's counters */
};

/* Attaches to `bytes` bytes of retained memory at `region` (4-aligned): keeps a valid ring
 * (ending a frame cut by the reset), initialises anything else. EMB_E_INVALID when the
 * region is too small. `info` may be NULL. */
emb_status emb_retained_attach(void *region, size_t bytes, struct emb_retained_info *info);

/* Appends encoded frame bytes (an emb_frame_write_fn: `arg` is the ring). Frames are
 * recognised by their zero delimiter; room is made by dropping the oldest whole frames. */
emb_status emb_retained_write(void *arg, const uint8_t *bytes, uint32_t len);

/* Encodes one frame of `payload` on `channel` straight into the ring. */
emb_status emb_retained_put_frame(struct emb_retained_ring *ring, uint8_t channel,
                                  const void *payload, size_t len);

/* Bytes of frames waiting. */
uint32_t emb_retained_pending(const struct emb_retained_ring *ring);

/* Hands the waiting bytes, oldest first, to `write` (in at most two pieces); the ring is
 * left as it is. Returns the first error `write` returned. */
emb_status emb_retained_read(const struct emb_retained_ring *ring,
                             emb_status (*write)(void *arg, const uint8_t *bytes, uint32_t len),
                             void *arg);

/* Empties the ring and zeroes its drop counters (after the frames were uploaded). */
void emb_retained_clear(struct emb_retained_ring *ring);

#ifdef __cplusplus
}
#endif

#endif /* EMB_RETAINED_H */
