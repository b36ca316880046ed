/* A hostile target's memory for fuzz targets that read it through an accessor: the input
 * is a sparse image, [flags:u8] then regions [addr:u64 le][len:u32 le][len bytes], the way
 * a debugger sees a process (a control block here, its buffers there, the rest unreadable).
 * tests/fuzz/fuzz_memchan_seed.c writes such images of the target's own memory. */
#ifndef EMB_FUZZ_IMAGE_H
#define EMB_FUZZ_IMAGE_H

#include <stdint.h>
#include <string.h>

#define EMB_FUZZ_IMAGE_REGIONS 16u

struct emb_fuzz_image {
    uint8_t flags;
    unsigned n;
    struct {
        uint64_t addr;
        uint8_t *bytes; /* a writable copy */
        uint32_t len;
    } region[EMB_FUZZ_IMAGE_REGIONS];
    uint8_t store[1u << 20];
};

/* Parses `data` into `img`; a region cut short by the end keeps what there is. */
static inline void emb_fuzz_image_parse(struct emb_fuzz_image *img, const uint8_t *data, size_t size)
{
    img->n = 0;
    img->flags = size > 0 ? data[0] : 0;
    size_t used = 0;
    for (size_t i = 1; i + 12 <= size && img->n < EMB_FUZZ_IMAGE_REGIONS;) {
        uint64_t addr = 0;
        uint32_t len = 0;
        for (int b = 0; b < 8; b++)
            addr |= (uint64_t)data[i + b] << (8 * b);
        for (int b = 0; b < 4; b++)
            len |= (uint32_t)data[i + 8 + b] << (8 * b);
        i += 12;
        if (len > size - i)
            len = (uint32_t)(size - i);
        if (len > sizeof img->store - used)
            break;
        memcpy(img->store + used, data + i, len);
        img->region[img->n].addr = addr;
        img->region[img->n].bytes = img->store + used;
        img->region[img->n].len = len;
        img->n++;
        used += len;
        i += len;
    }
}

/* The bytes at [addr, addr + n) if one region holds all of them, else NULL. */
static inline uint8_t *emb_fuzz_image_at(struct emb_fuzz_image *img, uint64_t addr, size_t n)
{
    for (unsigned r = 0; r < img->n; r++) {
        uint64_t a = img->region[r].addr, len = img->region[r].len;
        if (addr >= a && addr - a <= len && n <= len - (addr - a))
            return img->region[r].bytes + (addr - a);
    }
    return NULL;
}

#endif /* EMB_FUZZ_IMAGE_H */
