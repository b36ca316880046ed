/* The partition table (descriptor section 15, docs/formats/descriptor.md): every
 * partition's name, state, contained faults and restarts, read from a memory image. */
#include "desc_read.h"
#include "desc_read_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTITIONS 255u

static void partition_of(struct emb_desc_reader *r, const struct emb_desc_image_section *s, const uint8_t *e,
                         uint32_t len, struct emb_desc_partition *p)
{
    memset(p, 0, sizeof *p);
    p->id = (uint32_t)emb_desc_read_field(r, e, len, s->w[PT_F_ID]);
    p->state = (uint32_t)emb_desc_read_field(r, e, len, s->w[PT_F_STATE]);
    p->faults = (uint32_t)emb_desc_read_field(r, e, len, s->w[PT_F_FAULTS]);
    p->restarts = (uint32_t)emb_desc_read_field(r, e, len, s->w[PT_F_RESTARTS]);
    p->fault_class = (uint32_t)emb_desc_read_field(r, e, len, s->w[PT_F_FAULT_CLASS]);
    p->fault_code = (uint32_t)emb_desc_read_field(r, e, len, s->w[PT_F_FAULT_CODE]);
    p->fault_pc = emb_desc_read_field(r, e, len, s->w[PT_F_FAULT_PC]);
    emb_desc_read_field_text(e, len, s->w[PT_F_NAME], p->name, sizeof p->name);
    emb_desc_read_name_from(r, s->w[PT_STATE_NAMES], s->w[PT_STATE_COUNT], p->state, p->state_name,
                     sizeof p->state_name);
    if (!p->state_name[0])
        snprintf(p->state_name, sizeof p->state_name, "state %u", p->state);
}

/* The partitions in use (state not 0), in table order. */
void emb_desc_read_partitions(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(r->d, EMB_DESC_PARTITIONS);
    if (!s || s->words <= PT_STATE_COUNT || !s->w[PT_TABLE])
        return;
    uint64_t count = s->w[PT_COUNT], stride = s->w[PT_STRIDE];
    uint32_t need = emb_desc_read_extent(&s->w[PT_F_ID], PT_F_FAULT_PC - PT_F_ID + 1);
    if (count > MAX_PARTITIONS || stride < need || stride > EMB_DESC_READ_MAX_STRUCT) {
        emb_desc_report(r->is, "partitions: %" PRIu64 " entries of %" PRIu64 " bytes: out of range", count,
                        stride);
        return;
    }
    if (count == 0 || !emb_desc_read_in_ram(r, s->w[PT_TABLE], count * stride, "the partition table"))
        return;
    uint8_t *table = malloc(count * stride);
    md->partitions = calloc(count, sizeof *md->partitions);
    if (!table || !md->partitions || !emb_desc_read_full(r, s->w[PT_TABLE], table, count * stride)) {
        if (table && md->partitions)
            emb_desc_report(r->is, "partitions: table at 0x%" PRIx64 " unreadable", s->w[PT_TABLE]);
        free(table);
        return;
    }
    for (uint64_t i = 0; i < count; i++) {
        struct emb_desc_partition *p = &md->partitions[md->npartitions];
        partition_of(r, s, table + i * stride, (uint32_t)stride, p);
        if (p->state != 0)
            md->npartitions++;
    }
    free(table);
}
