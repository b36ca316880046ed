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
       CX_STATS_COUNT, CX_F_PARTITION };
enum { RG_PACKET_SIZE, RG_RING_PACKETS, RG_CLASS_MASK, RG_MODE, RG_UUID, RG_F_WRITE_POS, RG_F_PACKET_END,
       RG_F_TS_HIGH, RG_F_FLAGS, RG_F_CONTEXT_ID, RG_F_BUF, RG_F_COMMIT, RG_F_BUF_MASK, RG_F_SLOT_MASK,
       RG_F_PACKET_SHIFT, RG_F_SLOT_SHIFT, RG_F_CONTEXT_KIND, RG_F_PACKET_SEQ, RG_F_DISCARDED,
       RG_F_BASE_POS, RG_F_FILLED, RG_F_READ_POS, RG_F_NAME, RG_UNCLAIMED, RG_CONSUMER };
enum { PT_TABLE, PT_COUNT, PT_STRIDE, PT_F_ID, PT_F_STATE, PT_F_NAME, PT_F_FAULTS, PT_F_RESTARTS,
       PT_F_FAULT_CLASS, PT_F_FAULT_CODE, PT_F_FAULT_PC, PT_STATE_NAMES, PT_STATE_COUNT };
enum { CR_RECORD, CR_CAP, CR_VERSION, CR_FOUND, CR_FOUND_LENGTH };
enum { MI_RING, MI_ENTRIES, MI_ENTRY_SIZE };
enum { MO_BLOCKS, MO_COUNT, MO_STRIDE, MO_F_WORST, MO_F_PC, MO_F_THRESHOLD, MO_F_OVER, MO_F_ACTION,
       MO_NAMES, MO_NAME_COUNT, MO_ISR_FIRST, MO_CPUS };
enum { ST_CPU, ST_CPU_FIELDS, ST_CPU_COUNT, ST_OBJECTS, ST_OBJ_STRIDE, ST_OBJ_CAPACITY, ST_OBJ_COUNT,
       ST_F_HANDLE, ST_F_TYPE, ST_F_NAME, ST_F_STATE, ST_F_STATS, ST_OBJ_FIELDS, ST_OBJ_FIELD_COUNT,
       ST_CPUS, ST_CPU_STRIDE };
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

/* Reading what the descriptor points at (desc_read.c), for the readers of its sections. */
struct emb_desc_reader {
    struct emb_mem *m;
    const struct emb_desc_image *d;
    struct emb_problems *is;
};

/* addr..addr+len lies in the image's RAM (when the source knows it); else said, false. */
bool emb_desc_read_in_ram(struct emb_desc_reader *r, uint64_t addr, uint64_t len, const char *what);
bool emb_desc_read_full(struct emb_desc_reader *r, uint64_t addr, void *buf, size_t len);
bool emb_desc_read_uint(struct emb_desc_reader *r, uint64_t addr, unsigned size, uint64_t *v);
bool emb_desc_read_word(struct emb_desc_reader *r, uint64_t addr, uint64_t *v);
/* A NUL-terminated name at ptr, at most cap - 1 bytes, unprintable bytes as '?'. */
void emb_desc_read_string(struct emb_desc_reader *r, uint64_t ptr, char *out, size_t cap);
/* A field's value (or text) in a structure read into buf[0..len): 0 ("") when it does not
 * fit. */
bool emb_desc_read_field_value(const struct emb_desc_reader *r, const uint8_t *buf, size_t len, uint64_t w, uint64_t *v);
uint64_t emb_desc_read_field(const struct emb_desc_reader *r, const uint8_t *buf, size_t len, uint64_t w);
void emb_desc_read_field_text(const uint8_t *buf, size_t len, uint64_t w, char *out, size_t cap);
/* Bytes a set of field words spans. */
uint32_t emb_desc_read_extent(const uint64_t *words, size_t n);
/* The most bytes a structure whose fields a section describes may span. */
#define EMB_DESC_READ_MAX_STRUCT 4096u
/* Reads the structure at addr whose fields are the n words at `fields` into buf (at least
 * EMB_DESC_READ_MAX_STRUCT bytes), whole: its size; -1 after saying why not (its fields span
 * nothing or too much, or it is unreadable); -2 when it lies outside RAM (said too).
 * `what` names it in what is said. */
int emb_desc_read_struct(struct emb_desc_reader *r, uint64_t addr, const uint64_t *fields, size_t n, uint8_t *buf,
                       const char *what);
size_t emb_desc_read_named_fields(struct emb_desc_reader *r, uint64_t table, uint64_t count, const uint8_t *block,
                                size_t block_len, struct emb_desc_stat *out, const char *what);
/* Name i of an array of `count` name addresses. */
void emb_desc_read_name_from(struct emb_desc_reader *r, uint64_t array, uint64_t count, uint64_t i, char *out,
                             size_t cap);
/* The partition table (desc_partitions.c, descriptor section 15). */
void emb_desc_read_partitions(struct emb_desc_reader *r, struct emb_desc_model *md);
/* What a kernel's layout block describes (desc_kernel.c): threads, scheduler, objects. */
void emb_desc_read_kernel(struct emb_desc_reader *r, struct emb_desc_model *md);
void emb_desc_read_kernel_free(struct emb_desc_model *md);

#endif /* EMB_HOST_DESC_READ_INTERNAL_H */
