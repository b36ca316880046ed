/* Reading and writing a target's memory channel from the host. */
#define _POSIX_C_SOURCE 200809L
#include "memchan_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/memchan.h>
#include <emb/wire.h>

#define NATIVE_HEADER 32u
#define NATIVE_RING 32u
#define RTT_HEADER 24u

static uint64_t get_pointer(const uint8_t *p, unsigned size)
{
    return size == 8u ? emb_get_le64(p) : emb_get_le32(p);
}

static bool in_ranges(const struct emb_memchan_host_range *r, size_t n, uint64_t start, uint64_t len)
{
    if (n == 0u)
        return true;
    for (size_t i = 0; i < n; i++)
        if (start >= r[i].start && start <= r[i].end && len <= r[i].end - start)
            return true;
    return false;
}

/* Where a descriptor's fields are, by layout. */
struct ring_layout {
    unsigned size;               /* descriptor bytes */
    unsigned name, buf, len, wr, rd, flags;
    unsigned ptr;                /* bytes of name and buf */
};

static struct ring_layout layout_of(const struct emb_memchan_host *m)
{
    if (!m->rtt)
        return (struct ring_layout){32, 8, 0, 16, 20, 24, 28, 8};
    unsigned p = m->pointer_size;
    return (struct ring_layout){2 * p + 16, 0, p, 2 * p, 2 * p + 4, 2 * p + 8, 2 * p + 12, p};
}

static int read_ring(struct emb_memchan_host *m, struct emb_memchan_host_ring *r, const char *what,
                          unsigned index, const struct emb_memchan_host_range *ranges, size_t nranges,
                          char *err, size_t errlen)
{
    struct ring_layout l = layout_of(m);
    uint8_t d[48];
    if (m->ops.read(m->ops.arg, r->desc, d, l.size, err, errlen))
        return -1;
    r->buf = get_pointer(d + l.buf, l.ptr);
    r->size = emb_get_le32(d + l.len);
    r->flags = emb_get_le32(d + l.flags);
    uint32_t wr = emb_get_le32(d + l.wr), rd = emb_get_le32(d + l.rd);
    uint64_t name = get_pointer(d + l.name, l.ptr);
    r->name[0] = '\0';
    if (r->size == 0u)
        return 0; /* an unused ring */
    if (r->size < 2u || r->size > EMB_MCH_MAX_RING_SIZE) {
        snprintf(err, errlen, "%s ring %u: size %u is absurd (2 to %u bytes)", what, index,
                 r->size, EMB_MCH_MAX_RING_SIZE);
        return -1;
    }
    if (!in_ranges(ranges, nranges, r->buf, r->size)) {
        snprintf(err, errlen, "%s ring %u: buffer 0x%llx..0x%llx lies outside the target's RAM",
                 what, index, (unsigned long long)r->buf,
                 (unsigned long long)(r->buf + r->size));
        return -1;
    }
    if (wr >= r->size || rd >= r->size) {
        snprintf(err, errlen, "%s ring %u: offsets %u and %u beyond its size %u", what, index, wr,
                 rd, r->size);
        return -1;
    }
    /* Names usually live in read-only memory outside the RAM ranges; reading one is only
     * for display, so a failed read leaves it empty. */
    if (name != 0u) {
        char tmp[32];
        char ignored[128];
        if (m->ops.read(m->ops.arg, name, tmp, sizeof tmp - 1, ignored, sizeof ignored) == 0) {
            tmp[sizeof tmp - 1] = '\0';
            for (size_t i = 0; i < sizeof tmp && tmp[i]; i++)
                if (tmp[i] < 0x20 || tmp[i] > 0x7E)
                    tmp[i] = '?';
            memcpy(r->name, tmp, sizeof r->name);
        }
    }
    return 0;
}

int emb_memchan_host_open(struct emb_memchan_host *m, const struct emb_memchan_host_ops *ops, uint64_t addr,
                 unsigned pointer_size, const struct emb_memchan_host_range *ranges, size_t nranges,
                 char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->ops = *ops;
    m->addr = addr;
    uint8_t h[NATIVE_HEADER];
    if (ops->read(ops->arg, addr, h, sizeof h, err, errlen))
        return -1;
    uint64_t rings;
    if (emb_get_le32(h) == EMB_MEMCHAN_MAGIC) {
        unsigned version = emb_get_le16(h + 4), header = emb_get_le16(h + 6);
        m->nup = h[8];
        m->ndown = h[9];
        m->pointer_size = h[10];
        unsigned ring = h[11];
        m->generation = emb_get_le32(h + 12);
        if (version != EMB_MEMCHAN_VERSION) {
            snprintf(err, errlen, "memory channel at 0x%llx: version %u (this tool reads %u)",
                     (unsigned long long)addr, version, EMB_MEMCHAN_VERSION);
            return -1;
        }
        if (header < NATIVE_HEADER || header > 4096u || ring != NATIVE_RING ||
            (m->pointer_size != 4u && m->pointer_size != 8u)) {
            snprintf(err, errlen, "memory channel at 0x%llx: header %u, descriptor %u, pointer "
                     "size %u: not a layout this tool knows", (unsigned long long)addr, header,
                     ring, m->pointer_size);
            return -1;
        }
        rings = addr + header;
    } else if (!memcmp(h, EMB_MEMCHAN_RTT_ID, sizeof EMB_MEMCHAN_RTT_ID)) {
        m->rtt = true;
        m->pointer_size = pointer_size;
        if (pointer_size != 4u && pointer_size != 8u) {
            snprintf(err, errlen, "an RTT control block needs the target's pointer size (4 or 8)");
            return -1;
        }
        int32_t up = (int32_t)emb_get_le32(h + 16), down = (int32_t)emb_get_le32(h + 20);
        if (up < 0 || down < 0 || up > (int32_t)EMB_MCH_MAX_RINGS || down > (int32_t)EMB_MCH_MAX_RINGS) {
            snprintf(err, errlen, "RTT control block at 0x%llx: %d up and %d down buffers is absurd",
                     (unsigned long long)addr, up, down);
            return -1;
        }
        m->nup = (unsigned)up;
        m->ndown = (unsigned)down;
        rings = addr + RTT_HEADER;
    } else {
        snprintf(err, errlen, "no memory channel at 0x%llx (neither \"EMBM\" nor \"SEGGER RTT\")",
                 (unsigned long long)addr);
        return -1;
    }
    if (m->nup > EMB_MCH_MAX_RINGS || m->ndown > EMB_MCH_MAX_RINGS) {
        snprintf(err, errlen, "memory channel at 0x%llx: %u up and %u down rings is absurd",
                 (unsigned long long)addr, m->nup, m->ndown);
        return -1;
    }
    unsigned dsize = layout_of(m).size;
    for (unsigned i = 0; i < m->nup + m->ndown; i++) {
        bool up = i < m->nup;
        struct emb_memchan_host_ring *r = up ? &m->up[i] : &m->down[i - m->nup];
        r->desc = rings + (uint64_t)i * dsize;
        if (read_ring(m, r, up ? "up" : "down", up ? i : i - m->nup, ranges, nranges, err,
                           errlen))
            return -1;
    }
    return 0;
}

int emb_memchan_host_find(const struct emb_memchan_host_ops *ops, const struct emb_memchan_host_range *ranges,
                 size_t nranges, uint64_t *addr, char *err, size_t errlen)
{
    enum { CHUNK = 65536, OVERLAP = 16 };
    uint8_t *buf = malloc(CHUNK + OVERLAP);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    static const uint8_t magic[4] = {'E', 'M', 'B', 'M'};
    for (size_t r = 0; r < nranges; r++) {
        for (uint64_t a = ranges[r].start; a < ranges[r].end; a += CHUNK) {
            size_t n = ranges[r].end - a < CHUNK + OVERLAP ? (size_t)(ranges[r].end - a)
                                                           : CHUNK + OVERLAP;
            if (ops->read(ops->arg, a, buf, n, err, errlen)) {
                free(buf);
                return -1;
            }
            /* Control blocks are 4-byte aligned. */
            for (size_t i = 0; i + 16 <= n; i += 4) {
                bool native = !memcmp(buf + i, magic, 4) &&
                              emb_get_le16(buf + i + 4) == EMB_MEMCHAN_VERSION &&
                              emb_get_le16(buf + i + 6) == NATIVE_HEADER;
                if (native || !memcmp(buf + i, EMB_MEMCHAN_RTT_ID, sizeof EMB_MEMCHAN_RTT_ID)) {
                    *addr = a + i;
                    free(buf);
                    return 0;
                }
            }
        }
    }
    free(buf);
    snprintf(err, errlen, "no published memory channel found in the memory searched");
    return -1;
}

/* Reads the writer's and reader's offsets of a ring, checked. */
static int read_offsets(struct emb_memchan_host *m, const struct emb_memchan_host_ring *r, uint32_t *wr,
                        uint32_t *rd, char *err, size_t errlen)
{
    struct ring_layout l = layout_of(m);
    uint8_t o[8];
    if (m->ops.read(m->ops.arg, r->desc + l.wr, o, 8, err, errlen))
        return -1;
    *wr = emb_get_le32(o);
    *rd = emb_get_le32(o + 4);
    if (*wr >= r->size || *rd >= r->size) {
        snprintf(err, errlen, "ring at 0x%llx: offsets %u and %u beyond its size %u",
                 (unsigned long long)r->desc, *wr, *rd, r->size);
        return -1;
    }
    return 0;
}

/* Up (or down) ring `index`, with its offsets read: NULL after saying why not. */
static struct emb_memchan_host_ring *ring_at(struct emb_memchan_host *m, bool up, unsigned index, uint32_t *wr,
                                             uint32_t *rd, char *err, size_t errlen)
{
    struct emb_memchan_host_ring *r = NULL;
    if (index < (up ? m->nup : m->ndown))
        r = up ? &m->up[index] : &m->down[index];
    if (r == NULL || r->size == 0u) {
        snprintf(err, errlen, "no %s ring %u", up ? "up" : "down", index);
        return NULL;
    }
    return read_offsets(m, r, wr, rd, err, errlen) == 0 ? r : NULL;
}

int emb_memchan_host_read_up(struct emb_memchan_host *m, unsigned ring, uint8_t *buf, size_t cap, size_t *got,
                    char *err, size_t errlen)
{
    *got = 0;
    uint32_t wr, rd;
    struct emb_memchan_host_ring *r = ring_at(m, true, ring, &wr, &rd, err, errlen);
    if (r == NULL)
        return -1;
    size_t avail = wr >= rd ? wr - rd : r->size - rd + wr;
    if (avail > cap)
        avail = cap;
    size_t first = r->size - rd < avail ? r->size - rd : avail;
    if (first > 0 && m->ops.read(m->ops.arg, r->buf + rd, buf, first, err, errlen))
        return -1;
    if (avail > first && m->ops.read(m->ops.arg, r->buf, buf + first, avail - first, err, errlen))
        return -1;
    if (avail == 0)
        return 0;
    uint32_t nrd = (uint32_t)((rd + avail) % r->size);
    uint8_t o[4];
    emb_put_le32(o, nrd);
    if (m->ops.write(m->ops.arg, r->desc + layout_of(m).rd, o, 4, err, errlen))
        return -1;
    *got = avail;
    m->bytes_up += avail;
    return 0;
}

int emb_memchan_host_write_down(struct emb_memchan_host *m, unsigned ring, const void *data, size_t len,
                       size_t *written, char *err, size_t errlen)
{
    *written = 0;
    uint32_t wr, rd;
    struct emb_memchan_host_ring *r = ring_at(m, false, ring, &wr, &rd, err, errlen);
    if (r == NULL)
        return -1;
    size_t space = rd > wr ? rd - wr - 1u : r->size - (wr - rd) - 1u;
    if (len > space || len == 0)
        return 0;
    const uint8_t *p = data;
    size_t first = r->size - wr < len ? r->size - wr : len;
    if (m->ops.write(m->ops.arg, r->buf + wr, p, first, err, errlen))
        return -1;
    if (len > first && m->ops.write(m->ops.arg, r->buf, p + first, len - first, err, errlen))
        return -1;
    /* The data first, then the offset that hands it over. */
    uint8_t o[4];
    emb_put_le32(o, (uint32_t)((wr + len) % r->size));
    if (m->ops.write(m->ops.arg, r->desc + layout_of(m).wr, o, 4, err, errlen))
        return -1;
    *written = len;
    m->bytes_down += len;
    return 0;
}

int emb_memchan_host_check(struct emb_memchan_host *m, bool *same, char *err, size_t errlen)
{
    uint8_t h[16];
    if (m->ops.read(m->ops.arg, m->addr, h, sizeof h, err, errlen))
        return -1;
    if (m->rtt)
        *same = !memcmp(h, EMB_MEMCHAN_RTT_ID, sizeof EMB_MEMCHAN_RTT_ID);
    else
        *same = emb_get_le32(h) == EMB_MEMCHAN_MAGIC && emb_get_le32(h + 12) == m->generation;
    return 0;
}
