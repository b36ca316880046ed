/* Reading a retained ring out of a memory image (retained_host.h). */
#include "retained_host.h"

#include <stdio.h>
#include <string.h>

#include <emb/retained.h>

static uint32_t emb__u32(const uint8_t *p, bool be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint16_t emb__u16(const uint8_t *p, bool be)
{
    return be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

int emb_retained_find(const uint8_t *img, size_t n, size_t from, struct emb_retained_view *v,
                      char *err, size_t errlen)
{
    bool refused = false;
    for (size_t off = (from + 3u) & ~(size_t)3u; off + EMB_RETAINED_HEADER_SIZE <= n; off += 4u) {
        const uint8_t *h = img + off;
        bool be;
        if (emb__u32(h, false) == EMB_RETAINED_MAGIC)
            be = false;
        else if (emb__u32(h, true) == EMB_RETAINED_MAGIC)
            be = true;
        else
            continue;
        uint16_t version = emb__u16(h + 4, be), hsize = emb__u16(h + 6, be);
        uint32_t size = emb__u32(h + 8, be), head = emb__u32(h + 12, be), tail = emb__u32(h + 16, be);
        const char *why = NULL;
        if (version != EMB_RETAINED_VERSION)
            why = "unknown version";
        else if (hsize != EMB_RETAINED_HEADER_SIZE)
            why = "header size is not 40";
        else if (size < EMB_RETAINED_MIN_DATA || size > n - off - hsize)
            why = "data area beyond the image";
        else if (head >= size || tail >= size)
            why = "head or tail beyond the data area";
        if (why != NULL) {
            if (!refused && err != NULL)
                snprintf(err, errlen, "byte %zu: a retained ring's magic, but %s (version %u, "
                         "header %u, size %u, head %u, tail %u)", off, why, version, hsize, size,
                         head, tail);
            refused = true;
            continue;
        }
        v->offset = off;
        v->big_endian = be;
        v->size = size;
        v->head = head;
        v->tail = tail;
        v->starts = emb__u32(h + 20, be);
        v->dropped = emb__u32(h + 24, be);
        v->cut = emb__u32(h + 28, be);
        v->lost = emb__u32(h + 32, be);
        v->state = emb__u32(h + 36, be);
        v->pending = head >= tail ? head - tail : size - tail + head;
        return 0;
    }
    if (!refused && err != NULL)
        snprintf(err, errlen, "no retained ring in %zu bytes (no \"EMBR\" header)", n);
    return -1;
}

void emb_retained_copy(const uint8_t *img, const struct emb_retained_view *v, uint8_t *out)
{
    const uint8_t *d = img + v->offset + EMB_RETAINED_HEADER_SIZE;
    if (v->tail <= v->head) {
        memcpy(out, d + v->tail, v->head - v->tail);
    } else {
        memcpy(out, d + v->tail, v->size - v->tail);
        memcpy(out + (v->size - v->tail), d, v->head);
    }
}
