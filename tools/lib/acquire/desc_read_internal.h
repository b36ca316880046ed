/* What the descriptor reader (desc_read.c) and the ring follower (desc_follow.c) share:
 * the word indices of each section (docs/formats/descriptor.md) and the helpers that read
 * words and fields in the target's byte order. */
#ifndef EMB_HOST_DESC_READ_INTERNAL_H
#define EMB_HOST_DESC_READ_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "desc_read.h"

/* Word indices of each section's body (the descriptor format, version 1 of each). */
enum { ID_HASH, ID_LIBVER, ID_PORT, ID_PROFILE, ID_BUILD_ID, ID_BUILD_ID_LEN, ID_READY, ID_CLOCK_HZ,
       ID_CLOCK_OFFSET, ID_CATALOG, ID_FIRMWARE, ID_CONFIG, ID_SESSION };
enum { TY_OBJ_COUNT, TY_OBJ_NAMES, TY_STATE_COUNT, TY_STATE_NAMES };
enum { CX_TABLE, CX_STRIDE, CX_CAPACITY, CX_COUNT, CX_F_RING, CX_F_STATE, CX_F_OS_ID, CX_F_STACK_LOW,
       CX_F_STACK_SIZE, CX_F_STACK_PAINTED, CX_PAINT, CX_F_ENTRY, CX_F_STATS, CX_STATS_FIELDS,
       CX_STATS_COUNT };
enum { RG_PACKET_SIZE, RG_RING_PACKETS, RG_CLASS_MASK, RG_MODE, RG_UUID, RG_F_WRITE_POS, RG_F_PACKET_END,
       RG_F_TS_HIGH, RG_F_FLAGS, RG_F_CONTEXT_ID, RG_F_BUF, RG_F_COMMIT, RG_F_BUF_MASK, RG_F_SLOT_MASK,
       RG_F_PACKET_SHIFT, RG_F_SLOT_SHIFT, RG_F_CONTEXT_KIND, RG_F_PACKET_SEQ, RG_F_DISCARDED,
       RG_F_BASE_POS, RG_F_FILLED, RG_F_READ_POS, RG_F_NAME, RG_UNCLAIMED, RG_CONSUMER };
enum { CR_RECORD, CR_CAP, CR_VERSION, CR_FOUND, CR_FOUND_LENGTH };
enum { MI_RING, MI_ENTRIES, MI_ENTRY_SIZE };
enum { MO_BLOCKS, MO_COUNT, MO_STRIDE, MO_F_WORST, MO_F_PC, MO_F_THRESHOLD, MO_F_OVER, MO_F_ACTION,
       MO_NAMES, MO_NAME_COUNT, MO_ISR_FIRST };
enum { ST_CPU, ST_CPU_FIELDS, ST_CPU_COUNT, ST_OBJECTS, ST_OBJ_STRIDE, ST_OBJ_CAPACITY, ST_OBJ_COUNT,
       ST_F_HANDLE, ST_F_TYPE, ST_F_NAME, ST_F_STATE, ST_F_STATS, ST_OBJ_FIELDS, ST_OBJ_FIELD_COUNT };
enum { AR_MACHINE, AR_LAYOUT, AR_STATUS, AR_GPRS };
enum { LG_RINGS, LG_COUNT, LG_CONSUMER, LG_ID_BYTES, LG_TS_BYTES, LG_SLACK, LG_F_WRITE_POS, LG_F_COMMITTED,
       LG_F_READ_POS, LG_F_BUF, LG_F_MASK, LG_F_SPILL_POS, LG_F_SPILL, LG_F_DROPPED, LG_F_PENDING,
       LG_F_DRAINING, LG_F_CONTEXT_ID, LG_F_CONTEXT_KIND, LG_F_NAME };

static inline uint64_t get_uint(const uint8_t *p, unsigned size, bool little)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint64_t)p[little ? i : size - 1 - i] << (8 * i);
    return v;
}

static inline void put_uint(uint8_t *p, unsigned size, bool little, uint64_t v)
{
    for (unsigned i = 0; i < size; i++)
        p[little ? i : size - 1 - i] = (uint8_t)(v >> (8 * i));
}

/* A field descriptor word: offset | size << 16 | type << 24. */
struct field {
    uint32_t off, size, type;
};

static inline struct field field_of(uint64_t w)
{
    return (struct field){(uint32_t)(w & 0xFFFFu), (uint32_t)((w >> 16) & 0xFFu), (uint32_t)((w >> 24) & 0xFFu)};
}

/* A problem found while reading what the descriptor points at (a warning: the rest is
 * read); ps NULL drops it. */
void emb_desc_report(struct emb_problems *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* EMB_HOST_DESC_READ_INTERNAL_H */
