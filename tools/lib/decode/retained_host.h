/* The host side of the retained ring transport (docs/formats/retained.md): finds the ring
 * in a memory image (the native port's region file, or a dump of a target's `.noinit`
 * region), validates its header as emb_retained_attach() would, and hands out its frames
 * oldest first. Either byte order; never trusts a size or an offset it has not checked
 * against the image.
 */
#ifndef EMB_HOST_RETAINED_H
#define EMB_HOST_RETAINED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emb_retained_view {
    uint64_t offset;       /* of the header in the image */
    bool big_endian;
    uint32_t size, head, tail;
    uint32_t starts, dropped, cut, lost, state;
    uint32_t pending;      /* bytes of frames between tail and head */
};

/* Looks for a valid ring header at 4-aligned offsets from `from`. 0 when found; -1 with a
 * message (the first reason a candidate was refused, or that there was none). */
int emb_retained_find(const uint8_t *img, size_t n, size_t from, struct emb_retained_view *v,
                      char *err, size_t errlen);

/* Copies the pending bytes, oldest first, to `out` (room for v->pending bytes). */
void emb_retained_copy(const uint8_t *img, const struct emb_retained_view *v, uint8_t *out);

#endif /* EMB_HOST_RETAINED_H */
