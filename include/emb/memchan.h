/* The memory channel (SPEC-015 §7, docs/formats/memchan.md): a control block at the
 * exported symbol `emb_memchan` describing up rings (target to host) and down rings (host
 * to target) in RAM, which a debug probe, a GDB server or a process reader polls while the
 * target runs. The block is published last: rings first, a barrier, then its identifier,
 * so a tool scanning memory never believes a half-initialised block.
 *
 * Each ring has one writer and one reader: the writer owns `wr`, the reader owns `rd`,
 * both offsets in [0, size); the ring is empty when they are equal and keeps one byte free
 * (SEGGER RTT's convention). Writes are all or nothing: a frame that does not fit is
 * dropped and counted, never split.
 *
 * CONFIG_EMB_MEMCHAN_RTT_COMPAT lays the block out as SEGGER RTT's, so existing probe
 * tooling finds and reads it unchanged; otherwise the native layout below is used.
 */
#ifndef EMB_MEMCHAN_H
#define EMB_MEMCHAN_H

#include <stddef.h>
#include <stdint.h>

#include <emb/config.h>
#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EMB_MEMCHAN_MAGIC 0x4D424D45u  /* "EMBM" in memory order (little-endian) */
#define EMB_MEMCHAN_VERSION 1u
#define EMB_MEMCHAN_RTT_ID "SEGGER RTT"

/* Ring flags (both layouts): the low two bits are RTT's mode, kept for its tools. */
#define EMB_MEMCHAN_MODE_SKIP 0u        /* drop what does not fit (always used here) */
#define EMB_MEMCHAN_FLAG_FRAMED 0x100u  /* the ring carries frames (emb/frame.h) */

#if CONFIG_EMB_MEMCHAN_RTT_COMPAT

/* SEGGER RTT's ring buffer descriptor, native pointers. */
struct emb_memchan_ring {
    const char *name;
    uint8_t *buf;
    uint32_t size;
    uint32_t wr;
    uint32_t rd;
    uint32_t flags;
};

/* SEGGER RTT's control block. */
struct emb_memchan {
    char id[16];      /* "SEGGER RTT", written last */
    int32_t max_up;
    int32_t max_down;
    struct emb_memchan_ring up[CONFIG_EMB_MEMCHAN_UP];
    struct emb_memchan_ring down[CONFIG_EMB_MEMCHAN_DOWN];
};
/* SEGGER_RTT.h's SEGGER_RTT_BUFFER_UP: two pointers, four unsigned (24 or 32 bytes). */
EMB_STATIC_ASSERT(sizeof(struct emb_memchan_ring) == 2u * sizeof(void *) + 16u,
                  "RTT buffer descriptor: two pointers and four unsigned");
EMB_STATIC_ASSERT(offsetof(struct emb_memchan, up) == 24u, "RTT control block header is 24 bytes");

#else

/* Native ring descriptor: 32 bytes, addresses as 64-bit values on every target. */
struct emb_memchan_ring {
    uint64_t buf;     /* address of the buffer */
    uint64_t name;    /* address of a NUL-terminated name, 0 if none */
    uint32_t size;    /* bytes in the buffer; one stays free */
    uint32_t wr;      /* next byte the writer fills */
    uint32_t rd;      /* next byte the reader takes */
    uint32_t flags;   /* EMB_MEMCHAN_FLAG_*, mode in bits 0-1 */
};

/* Native control block: a 32-byte header, then the up rings, then the down rings. */
struct emb_memchan {
    uint32_t magic;       /* EMB_MEMCHAN_MAGIC, written last */
    uint16_t version;     /* EMB_MEMCHAN_VERSION */
    uint16_t header_size; /* 32: where the first ring descriptor starts */
    uint8_t up_count;
    uint8_t down_count;
    uint8_t pointer_size; /* the target's, in bytes */
    uint8_t ring_size;    /* 32: bytes per ring descriptor */
    uint32_t generation;  /* incremented by every emb_memchan_init() */
    uint32_t drops;       /* writes dropped because a ring was full, all up rings */
    uint32_t reserved[3];
    struct emb_memchan_ring up[CONFIG_EMB_MEMCHAN_UP];
    struct emb_memchan_ring down[CONFIG_EMB_MEMCHAN_DOWN];
};

EMB_STATIC_ASSERT(sizeof(struct emb_memchan_ring) == 32u, "native ring descriptor is 32 bytes");
EMB_STATIC_ASSERT(offsetof(struct emb_memchan, up) == 32u, "native header is 32 bytes");

#endif

/* The control block tools look for. */
extern struct emb_memchan emb_memchan;

/* A buffer for one ring; `size` at least 16. */
struct emb_memchan_buffer {
    const char *name;
    uint8_t *buf;
    uint32_t size;
};

/* Sets up the rings over the caller's buffers (missing ones stay empty with size 0) and
 * publishes the block. May be called again to start over (generation + 1). */
emb_status emb_memchan_init(const struct emb_memchan_buffer *up, unsigned n_up,
                            const struct emb_memchan_buffer *down, unsigned n_down);

/* Free bytes in up ring `ring` (what one write can take). */
size_t emb_memchan_space(unsigned ring);

/* Writes all `len` bytes to up ring `ring`, or nothing when they do not fit (counted in
 * emb_memchan_drops()). Returns the bytes written. Safe from any context. */
size_t emb_memchan_write(unsigned ring, const void *data, size_t len);

/* Writes one frame (emb/frame.h) to up ring `ring`, all or nothing. EMB_E_NOSPACE when it
 * did not fit (counted). */
emb_status emb_memchan_send_frame(unsigned ring, uint8_t channel, const void *payload,
                                  size_t len);

/* Takes up to `cap` bytes the host wrote to down ring `ring`. Returns the bytes read. */
size_t emb_memchan_read(unsigned ring, void *buf, size_t cap);

/* Writes dropped because an up ring was full. */
uint32_t emb_memchan_drops(void);

/* Reads command frames from down ring `down` and answers each on up ring `up` (channel 3,
 * emb/shell.h). Returns the commands handled. Call it from the main loop or a worker. */
unsigned emb_memchan_poll_shell(unsigned down, unsigned up);

#ifdef __cplusplus
}
#endif

#endif /* EMB_MEMCHAN_H */
