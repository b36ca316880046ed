/* Explicit little-endian encoding, shared by the target library and the host tool.
 *
 * Every byte that leaves the target goes through these helpers: no packed structs, no
 * host-order fwrite. On a little-endian CPU each helper is one store or load.
 */
#ifndef EMB_WIRE_H
#define EMB_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* memcpy of a fixed small size is how C spells an unaligned load or store; the builtin
 * keeps it one instruction even under -ffreestanding. */
#if defined(__GNUC__)
#define EMB_WIRE_COPY __builtin_memcpy
#else
#define EMB_WIRE_COPY memcpy
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define EMB_WIRE_NATIVE_LE 1
#else
#define EMB_WIRE_NATIVE_LE 0
#endif

static inline void emb_put_le16(void *dst, uint16_t v)
{
    if (EMB_WIRE_NATIVE_LE) {
        EMB_WIRE_COPY(dst, &v, sizeof v);
    } else {
        uint8_t *p = (uint8_t *)dst;
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
    }
}

static inline void emb_put_le32(void *dst, uint32_t v)
{
    if (EMB_WIRE_NATIVE_LE) {
        EMB_WIRE_COPY(dst, &v, sizeof v);
    } else {
        uint8_t *p = (uint8_t *)dst;
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
    }
}

static inline void emb_put_le64(void *dst, uint64_t v)
{
    if (EMB_WIRE_NATIVE_LE) {
        EMB_WIRE_COPY(dst, &v, sizeof v);
    } else {
        emb_put_le32(dst, (uint32_t)v);
        emb_put_le32((uint8_t *)dst + 4, (uint32_t)(v >> 32));
    }
}

static inline uint16_t emb_get_le16(const void *src)
{
    const uint8_t *p = (const uint8_t *)src;
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t emb_get_le32(const void *src)
{
    const uint8_t *p = (const uint8_t *)src;
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t emb_get_le64(const void *src)
{
    const uint8_t *p = (const uint8_t *)src;
    return (uint64_t)emb_get_le32(p) | ((uint64_t)emb_get_le32(p + 4) << 32);
}

/* Writes `text` into a fixed text field of `field` bytes: at most field - 1 bytes of it,
 * then zeros to the end, so the field is always NUL-terminated. NULL writes an empty one. */
static inline void emb_put_text(uint8_t *dst, const char *text, size_t field)
{
    size_t i = 0;
    if (text != NULL)
        for (; i + 1u < field && text[i] != '\0'; i++)
            dst[i] = (uint8_t)text[i];
    for (; i < field; i++)
        dst[i] = 0u;
}

#endif /* EMB_WIRE_H */
