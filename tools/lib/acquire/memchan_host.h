/* The host side of the memory channel (docs/formats/memchan.md): finds and checks a
 * target's control block (native "EMBM" or SEGGER RTT layout) through any memory accessor
 * (a GDB server, a live process), reads what its up rings hold and writes to its down
 * rings, moving the read and write offsets the way the target expects.
 *
 * Nothing the target's memory says is trusted: a ring whose size is absurd, whose buffer
 * lies outside the memory the caller allows, or whose offsets are out of range is refused
 * with a message naming the ring and the value.
 */
#ifndef EMB_HOST_MEMCHAN_HOST_H
#define EMB_HOST_MEMCHAN_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMB_MCH_MAX_RINGS 16u
#define EMB_MCH_MAX_RING_SIZE (16u << 20)

/* How to reach the target's memory. read/write return 0 or -1 with a message in err. */
struct emb_memchan_host_ops {
    int (*read)(void *arg, uint64_t addr, void *buf, size_t n, char *err, size_t errlen);
    int (*write)(void *arg, uint64_t addr, const void *buf, size_t n, char *err, size_t errlen);
    void *arg;
};

/* A span of target memory ring buffers may lie in. */
struct emb_memchan_host_range {
    uint64_t start, end; /* [start, end) */
};

struct emb_memchan_host_ring {
    uint64_t desc;   /* address of its descriptor */
    uint64_t buf;
    uint32_t size;
    uint32_t flags;
    char name[32];
};

struct emb_memchan_host {
    struct emb_memchan_host_ops ops;
    uint64_t addr;           /* of the control block */
    bool rtt;                /* SEGGER RTT layout */
    unsigned pointer_size;   /* 4 or 8 */
    unsigned nup, ndown;
    struct emb_memchan_host_ring up[EMB_MCH_MAX_RINGS], down[EMB_MCH_MAX_RINGS];
    uint32_t generation;     /* native layout: changes when the target starts over */
    uint64_t bytes_up, bytes_down;
};

/* Reads and checks the control block at `addr`. `pointer_size` (4 or 8) is needed for
 * the RTT layout, whose descriptors hold native pointers; the native layout says it. */
int emb_memchan_host_open(struct emb_memchan_host *m, const struct emb_memchan_host_ops *ops, uint64_t addr,
                 unsigned pointer_size, const struct emb_memchan_host_range *ranges, size_t nranges,
                 char *err, size_t errlen);

/* Looks for a published control block in the ranges, reading `chunk` bytes at a time.
 * Returns 0 with *addr set, or -1. */
int emb_memchan_host_find(const struct emb_memchan_host_ops *ops, const struct emb_memchan_host_range *ranges,
                 size_t nranges, uint64_t *addr, char *err, size_t errlen);

/* Takes up to `cap` bytes from up ring `ring`. *got = bytes taken (0: empty). The target
 * must not be producing a torn view: with an all-stop server, halt around the call. */
int emb_memchan_host_read_up(struct emb_memchan_host *m, unsigned ring, uint8_t *buf, size_t cap, size_t *got,
                    char *err, size_t errlen);

/* Writes all `len` bytes to down ring `ring`, or none when they do not fit (*written 0). */
int emb_memchan_host_write_down(struct emb_memchan_host *m, unsigned ring, const void *data, size_t len,
                       size_t *written, char *err, size_t errlen);

/* Whether the control block is still published with the generation first read (the
 * target did not start over). */
int emb_memchan_host_check(struct emb_memchan_host *m, bool *same, char *err, size_t errlen);

#endif /* EMB_HOST_MEMCHAN_HOST_H */
