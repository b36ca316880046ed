/* The generic descriptor reader (docs/formats/descriptor.md): what the descriptor points
 * at, read through a memory source, every count and size bounded before use. */
#define _GNU_SOURCE

#include "desc_read.h"
#include "desc_read_internal.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/ring_read.h>
#include <emb/wire.h>

void emb_desc_report(struct emb_problems *ps, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(ps, EMB_WARNING, -1, fmt, ap);
    va_end(ap);
}

/* ---- Reading what it points at ---- */


/* A structure a pointer read from the target leads to must lie in the image's RAM (when
 * the source knows it: a probe). Anything else is refused, said once per pointer. */
bool emb_desc_read_in_ram(struct emb_desc_reader *r, uint64_t addr, uint64_t len, const char *what)
{
    if (emb_mem_in_ram(r->m, addr, len))
        return true;
    char regions[512];
    emb_desc_report(r->is, "%s at 0x%" PRIx64 " (%" PRIu64 " bytes) lies outside the image's RAM: refused "
                  "(RAM: %s)", what, addr, len, emb_mem_ram_text(r->m, regions, sizeof regions));
    return false;
}

bool emb_desc_read_full(struct emb_desc_reader *r, uint64_t addr, void *buf, size_t len)
{
    return addr != 0 && emb_mem_read(r->m, addr, buf, len) == len;
}

bool emb_desc_read_uint(struct emb_desc_reader *r, uint64_t addr, unsigned size, uint64_t *v)
{
    uint8_t b[8];
    if (size == 0 || size > 8 || !emb_desc_read_full(r, addr, b, size))
        return false;
    *v = get_uint(b, size, r->d->little);
    return true;
}

bool emb_desc_read_word(struct emb_desc_reader *r, uint64_t addr, uint64_t *v)
{
    return emb_desc_read_uint(r, addr, r->d->ptr_size, v);
}

static uint64_t word_or(const struct emb_desc_image *d, unsigned kind, unsigned i, uint64_t dflt)
{
    uint64_t v;
    return emb_desc_word(d, kind, i, &v) ? v : dflt;
}

/* A u32 (or other size) variable the word points at. */
static bool deref(struct emb_desc_reader *r, unsigned kind, unsigned i, unsigned size, uint64_t *v)
{
    uint64_t p;
    return emb_desc_word(r->d, kind, i, &p) && emb_desc_read_uint(r, p, size, v);
}

void emb_desc_read_string(struct emb_desc_reader *r, uint64_t ptr, char *out, size_t cap)
{
    out[0] = '\0';
    if (!ptr)
        return;
    size_t got = emb_mem_read(r->m, ptr, out, cap - 1);
    out[got] = '\0';
    for (size_t i = 0; i < got; i++)
        if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7F)
            out[i] = out[i] == '\0' ? '\0' : '?';
}

/* Value of a field inside a structure read into buf[0..len); false when it does not fit. */
bool emb_desc_read_field_value(const struct emb_desc_reader *r, const uint8_t *buf, size_t len, uint64_t w, uint64_t *v)
{
    struct field f = field_of(w);
    if (f.size == 0 || f.off + f.size > len)
        return false;
    if (f.type == EMB_DESC_U64_PAIR && f.size == 8) {
        *v = get_uint(buf + f.off, 4, r->d->little) | get_uint(buf + f.off + 4, 4, r->d->little) << 32;
        return true;
    }
    if (f.size > 8)
        return false;
    *v = get_uint(buf + f.off, f.size, r->d->little);
    if (f.type == EMB_DESC_SIGNED && f.size < 8 && (*v >> (8 * f.size - 1)) & 1u)
        *v |= ~0ull << (8 * f.size);
    return true;
}

uint64_t emb_desc_read_field(const struct emb_desc_reader *r, const uint8_t *buf, size_t len, uint64_t w)
{
    uint64_t v = 0;
    emb_desc_read_field_value(r, buf, len, w, &v);
    return v;
}

void emb_desc_read_field_text(const uint8_t *buf, size_t len, uint64_t w, char *out, size_t cap)
{
    struct field f = field_of(w);
    out[0] = '\0';
    if (f.size == 0 || f.off + f.size > len)
        return;
    size_t n = f.size < cap - 1 ? f.size : cap - 1;
    size_t i = 0;
    for (; i < n && buf[f.off + i]; i++)
        out[i] = buf[f.off + i] >= 0x20 && buf[f.off + i] < 0x7F ? (char)buf[f.off + i] : '?';
    out[i] = '\0';
}

/* The extent a set of field words needs: every offset + size. */
uint32_t emb_desc_read_extent(const uint64_t *words, size_t n)
{
    uint32_t end = 0;
    for (size_t i = 0; i < n; i++) {
        struct field f = field_of(words[i]);
        if (f.off + f.size > end)
            end = f.off + f.size;
    }
    return end;
}

/* A named-field table: pairs of (name pointer, field word). */
size_t emb_desc_read_named_fields(struct emb_desc_reader *r, uint64_t table, uint64_t count, const uint8_t *block,
                                size_t block_len, struct emb_desc_stat *out, const char *what)
{
    size_t n = 0;
    if (count > EMB_DESC_MAX_FIELDS) {
        emb_desc_report(r->is, "%s: %" PRIu64 " statistics fields, reading the first %u", what, count,
              EMB_DESC_MAX_FIELDS);
        count = EMB_DESC_MAX_FIELDS;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t name, w;
        if (!emb_desc_read_word(r, table + i * 2u * r->d->ptr_size, &name) ||
            !emb_desc_read_word(r, table + (i * 2u + 1u) * r->d->ptr_size, &w))
            break;
        if (field_of(w).off + field_of(w).size > block_len) {
            emb_desc_report(r->is, "%s: field %" PRIu64 " lies outside its block", what, i);
            continue;
        }
        emb_desc_read_string(r, name, out[n].name, sizeof out[n].name);
        emb_desc_read_field_value(r, block, block_len, w, &out[n].value);
        n++;
    }
    return n;
}

/* Identity version 2's words; an older image has none, and the model keeps "" and 0. */
static void read_firmware(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    uint64_t v;
    emb_desc_read_string(r, word_or(r->d, EMB_DESC_IDENTITY, ID_FIRMWARE, 0), md->firmware, sizeof md->firmware);
    emb_desc_read_string(r, word_or(r->d, EMB_DESC_IDENTITY, ID_CONFIG, 0), md->config, sizeof md->config);
    if (deref(r, EMB_DESC_IDENTITY, ID_SESSION, 8, &v))
        md->session_id = v;
}

static void read_identity(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    uint64_t v;
    md->config_hash = (uint32_t)word_or(r->d, EMB_DESC_IDENTITY, ID_HASH, 0);
    md->lib_version = (uint32_t)word_or(r->d, EMB_DESC_IDENTITY, ID_LIBVER, 0);
    md->catalog_checksum = (uint32_t)word_or(r->d, EMB_DESC_IDENTITY, ID_CATALOG, 0);
    emb_desc_read_string(r, word_or(r->d, EMB_DESC_IDENTITY, ID_PORT, 0), md->port, sizeof md->port);
    emb_desc_read_string(r, word_or(r->d, EMB_DESC_IDENTITY, ID_PROFILE, 0), md->profile, sizeof md->profile);
    if (deref(r, EMB_DESC_IDENTITY, ID_BUILD_ID_LEN, 4, &v) && v <= sizeof md->build_id &&
        emb_desc_read_full(r, word_or(r->d, EMB_DESC_IDENTITY, ID_BUILD_ID, 0), md->build_id, (size_t)v))
        md->build_id_len = (uint32_t)v;
    md->ready = deref(r, EMB_DESC_IDENTITY, ID_READY, 4, &v) && v == 1;
    if (deref(r, EMB_DESC_IDENTITY, ID_CLOCK_HZ, 8, &v))
        md->clock_hz = v;
    if (deref(r, EMB_DESC_IDENTITY, ID_CLOCK_OFFSET, 8, &v))
        md->clock_offset_ns = (int64_t)v;
    md->packet_size = (uint32_t)word_or(r->d, EMB_DESC_RINGS, RG_PACKET_SIZE, 0);
    if (deref(r, EMB_DESC_RINGS, RG_RING_PACKETS, 4, &v))
        md->ring_packets = (uint32_t)v;
    if (deref(r, EMB_DESC_RINGS, RG_CLASS_MASK, 4, &v))
        md->class_mask = (uint32_t)v;
    if (deref(r, EMB_DESC_RINGS, RG_MODE, 4, &v))
        md->trace_mode = (uint32_t)v;
    emb_desc_read_full(r, word_or(r->d, EMB_DESC_RINGS, RG_UUID, 0), md->uuid, sizeof md->uuid);
    md->unclaimed = word_or(r->d, EMB_DESC_RINGS, RG_UNCLAIMED, 0);
    if (deref(r, EMB_DESC_RINGS, RG_CONSUMER, 4, &v))
        md->probe_consumer = v == 1;
    md->elf_machine = (uint32_t)word_or(r->d, EMB_DESC_ARCH, AR_MACHINE, 0);
    md->fault_layout = (uint32_t)word_or(r->d, EMB_DESC_ARCH, AR_LAYOUT, 0);
    md->status_count = (uint32_t)word_or(r->d, EMB_DESC_ARCH, AR_STATUS, 0);
    md->gpr_count = (uint32_t)word_or(r->d, EMB_DESC_ARCH, AR_GPRS, 0);
    const struct emb_desc_image_section *log = emb_desc_image_section(r->d, EMB_DESC_LOG);
    md->has_log = log != NULL;
    md->log_version = log ? log->version : 0;
    md->log_words = log ? log->words : 0;
}

/* Names from an array of string pointers. */
void emb_desc_read_name_from(struct emb_desc_reader *r, uint64_t array, uint64_t count, uint64_t i, char *out,
                             size_t cap)
{
    uint64_t p;
    out[0] = '\0';
    if (i < count && count <= 4096 && emb_desc_read_word(r, array + i * r->d->ptr_size, &p))
        emb_desc_read_string(r, p, out, cap);
}

static bool is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

int emb_desc_read_struct(struct emb_desc_reader *r, uint64_t addr, const uint64_t *fields, size_t n, uint8_t *buf,
                       const char *what)
{
    uint32_t size = emb_desc_read_extent(fields, n);
    if (size == 0 || size > EMB_DESC_READ_MAX_STRUCT) {
        emb_desc_report(r->is, "%s: its fields span %" PRIu32 " bytes: not read", what, size);
        return -1;
    }
    if (!emb_desc_read_in_ram(r, addr, size, what))
        return -2;
    if (!emb_desc_read_full(r, addr, buf, size)) {
        emb_desc_report(r->is, "%s at 0x%" PRIx64 ": unreadable", what, addr);
        return -1;
    }
    return (int)size;
}

/* A member of a host structure that a described field fills: the section word that
 * describes the field, and where the member lies in the structure and its width. */
struct member {
    unsigned word;
    size_t offset, size;
};

#define MEMBER(word, type, name) {word, offsetof(type, name), sizeof(((type *)0)->name)}

static const struct member ring_members[] = {
    MEMBER(RG_F_WRITE_POS, struct emb_desc_context, write_pos),
    MEMBER(RG_F_CONTEXT_ID, struct emb_desc_context, context_id),
    MEMBER(RG_F_BUF, struct emb_desc_context, buf),
    MEMBER(RG_F_COMMIT, struct emb_desc_context, commit),
    MEMBER(RG_F_BUF_MASK, struct emb_desc_context, buf_mask),
    MEMBER(RG_F_SLOT_MASK, struct emb_desc_context, slot_mask),
    MEMBER(RG_F_PACKET_SHIFT, struct emb_desc_context, packet_shift),
    MEMBER(RG_F_SLOT_SHIFT, struct emb_desc_context, slot_shift),
    MEMBER(RG_F_CONTEXT_KIND, struct emb_desc_context, context_kind),
    MEMBER(RG_F_DISCARDED, struct emb_desc_context, discarded),
    MEMBER(RG_F_BASE_POS, struct emb_desc_context, base_pos),
    MEMBER(RG_F_FILLED, struct emb_desc_context, filled),
    MEMBER(RG_F_READ_POS, struct emb_desc_context, read_pos),
};

static const struct member log_ring_members[] = {
    MEMBER(LG_F_WRITE_POS, struct emb_desc_logring, write_pos),
    MEMBER(LG_F_COMMITTED, struct emb_desc_logring, committed),
    MEMBER(LG_F_READ_POS, struct emb_desc_logring, read_pos),
    MEMBER(LG_F_BUF, struct emb_desc_logring, buf),
    MEMBER(LG_F_MASK, struct emb_desc_logring, mask),
    MEMBER(LG_F_SPILL_POS, struct emb_desc_logring, spill_pos),
    MEMBER(LG_F_SPILL, struct emb_desc_logring, spill),
    MEMBER(LG_F_DROPPED, struct emb_desc_logring, dropped),
    MEMBER(LG_F_PENDING, struct emb_desc_logring, pending),
    MEMBER(LG_F_DRAINING, struct emb_desc_logring, draining),
    MEMBER(LG_F_CONTEXT_ID, struct emb_desc_logring, context_id),
    MEMBER(LG_F_CONTEXT_KIND, struct emb_desc_logring, context_kind),
};

/* Each member set to its field's value in buf (truncated to the member's width). */
static void set_members(const struct emb_desc_reader *r, const uint8_t *buf, size_t len, const uint64_t *words,
                        const struct member *m, size_t n, void *object)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = emb_desc_read_field(r, buf, len, words[m[i].word]);
        void *at = (uint8_t *)object + m[i].offset;
        if (m[i].size == 1)
            *(uint8_t *)at = (uint8_t)v;
        else if (m[i].size == 2)
            *(uint16_t *)at = (uint16_t)v;
        else if (m[i].size == 4)
            *(uint32_t *)at = (uint32_t)v;
        else
            *(uint64_t *)at = v;
    }
}

static void read_ring(struct emb_desc_reader *r, struct emb_desc_model *md, struct emb_desc_context *c)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(r->d, EMB_DESC_RINGS);
    if (!s || s->words <= RG_F_NAME || c->ring == 0 || c->ring == md->unclaimed) {
        c->ring = 0;
        return;
    }
    uint8_t buf[EMB_DESC_READ_MAX_STRUCT];
    char what[48];
    snprintf(what, sizeof what, "context %u: its ring", c->index);
    int size = emb_desc_read_struct(r, c->ring, &s->w[RG_F_WRITE_POS], RG_F_NAME - RG_F_WRITE_POS + 1, buf,
                                  what);
    if (size == -2)
        c->ring = 0;
    if (size < 0)
        return;
    set_members(r, buf, (size_t)size, s->w, ring_members, sizeof ring_members / sizeof ring_members[0], c);
    emb_desc_read_field_text(buf, (size_t)size, s->w[RG_F_NAME], c->name, sizeof c->name);
    uint64_t bytes = (uint64_t)c->buf_mask + 1u;
    uint32_t p = md->packet_size;
    c->ring_ok = is_pow2(p) && p >= 128 && c->packet_shift < 32 && (1ull << c->packet_shift) == p &&
                 is_pow2(bytes) && bytes <= EMB_DESC_MAX_RING_BYTES && bytes >= 2ull * p &&
                 (uint64_t)c->slot_mask + 1u == bytes / p && c->slot_shift < 32 &&
                 (1ull << c->slot_shift) == (uint64_t)c->slot_mask + 1u && c->buf && c->commit;
    if (!c->ring_ok) {
        emb_desc_report(r->is, "context %u: ring at 0x%" PRIx64 " is inconsistent (%" PRIu64
              " bytes, packet shift %u, %u slots): not read", c->index, c->ring, bytes,
              c->packet_shift, c->slot_mask + 1u);
        return;
    }
    snprintf(what, sizeof what, "context %u: its ring's buffer", c->index);
    c->ring_ok = emb_desc_read_in_ram(r, c->buf, bytes, what);
    snprintf(what, sizeof what, "context %u: its ring's commit counts", c->index);
    c->ring_ok = c->ring_ok && emb_desc_read_in_ram(r, c->commit, 4ull * (c->slot_mask + 1u), what);
    if (!c->ring_ok)
        return;
    const struct emb_ring_geometry g = {c->base_pos, (uint8_t)c->packet_shift, (uint8_t)c->slot_shift};
    struct emb_ring_held h = emb_ring_held(&g, c->write_pos, c->filled);
    c->open_bytes = h.open_used;
    c->packets_opened = emb_ring_packets_opened(&g, c->write_pos);
    c->packets_held = h.count;
}

/* Stack used: the painted bytes still untouched from the low end tell the high-water. */
static void read_stack(struct emb_desc_reader *r, struct emb_desc_context *c)
{
    if (c->stack_painted > c->stack_size || c->stack_painted > (64u << 20)) {
        emb_desc_report(r->is, "context %u: %u painted stack bytes of %u (at most 64 MiB): not read", c->index,
              c->stack_painted, c->stack_size);
        return;
    }
    if (c->stack_painted == 0 || c->state != EMB_CONTEXT_LIVE)
        return;
    char what[48];
    snprintf(what, sizeof what, "context %u: its painted stack", c->index);
    if (!emb_desc_read_in_ram(r, c->stack_low, c->stack_painted, what))
        return;
    uint8_t *buf = malloc(c->stack_painted);
    if (!buf)
        return;
    size_t got = emb_mem_read(r->m, c->stack_low, buf, c->stack_painted);
    uint8_t paint = (uint8_t)word_or(r->d, EMB_DESC_CONTEXTS, CX_PAINT, EMB_STACK_PAINT);
    size_t untouched = 0;
    while (untouched < got && buf[untouched] == paint)
        untouched++;
    if (got == c->stack_painted)
        c->stack_used = c->stack_size - (uint32_t)untouched;
    free(buf);
}

/* A registry table: base (through a pointer variable), stride, capacity, count. */
struct table {
    uint64_t base;
    uint32_t stride, capacity, count;
    uint32_t need; /* bytes of an entry the fields cover: what is read of each */
};

static bool read_table(struct emb_desc_reader *r, unsigned kind, unsigned i_table, unsigned i_stride, unsigned i_cap,
                       unsigned i_count, uint32_t need, uint32_t max, struct table *t, const char *what)
{
    uint64_t v = 0; /* an unreadable stride says 0 */
    memset(t, 0, sizeof *t);
    uint64_t table_ptr;
    if (!emb_desc_word(r->d, kind, i_table, &table_ptr) || !table_ptr)
        return false;
    if (!emb_desc_read_word(r, table_ptr, &t->base)) {
        emb_desc_report(r->is, "%s: the table pointer at 0x%" PRIx64 " is unreadable", what, table_ptr);
        return false;
    }
    if (t->base == 0)
        return false; /* not set up yet */
    if (!deref(r, kind, i_stride, 4, &v) || v < need || v > 65536) {
        emb_desc_report(r->is, "%s: entry stride %" PRIu64 " is out of range (%u to 65536)", what, v, need);
        return false;
    }
    t->stride = (uint32_t)v;
    t->need = need;
    if (!deref(r, kind, i_cap, 4, &v))
        return false;
    t->capacity = (uint32_t)(v > max ? max : v);
    if (v > max)
        emb_desc_report(r->is, "%s: capacity %" PRIu64 " is absurd, reading at most %u", what, v, max);
    if (!deref(r, kind, i_count, 4, &v))
        return false;
    if (v > t->capacity) {
        emb_desc_report(r->is, "%s: %" PRIu64 " entries in a table of %u, reading %u", what, v, t->capacity,
              t->capacity);
        v = t->capacity;
    }
    t->count = (uint32_t)v;
    if (t->base + (uint64_t)t->stride * t->count < t->base) {
        emb_desc_report(r->is, "%s: table at 0x%" PRIx64 " wraps around the address space", what, t->base);
        return false;
    }
    char table[48];
    snprintf(table, sizeof table, "%s: the table", what);
    return emb_desc_read_in_ram(r, t->base, (uint64_t)t->stride * (t->count ? t->count : 1u), table);
}

static void read_contexts(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(r->d, EMB_DESC_CONTEXTS);
    if (!s || s->words <= CX_STATS_COUNT)
        return;
    uint64_t fields[] = {s->w[CX_F_RING], s->w[CX_F_STATE], s->w[CX_F_OS_ID], s->w[CX_F_STACK_LOW],
                         s->w[CX_F_STACK_SIZE], s->w[CX_F_STACK_PAINTED], s->w[CX_F_ENTRY], s->w[CX_F_STATS],
                         word_or(r->d, EMB_DESC_CONTEXTS, CX_F_PARTITION, 0)};
    struct table t;
    if (!read_table(r, EMB_DESC_CONTEXTS, CX_TABLE, CX_STRIDE, CX_CAPACITY, CX_COUNT,
                    emb_desc_read_extent(fields, sizeof fields / sizeof fields[0]), EMB_DESC_MAX_CONTEXTS, &t,
                    "contexts"))
        return;
    md->context_capacity = t.capacity;
    md->contexts = calloc(t.count ? t.count : 1, sizeof *md->contexts);
    uint8_t *entry = malloc(t.need);
    if (!md->contexts || !entry) {
        free(entry);
        return;
    }
    uint64_t names = word_or(r->d, EMB_DESC_TYPES, TY_STATE_NAMES, 0);
    uint64_t nnames = word_or(r->d, EMB_DESC_TYPES, TY_STATE_COUNT, 0);
    struct field stats = field_of(s->w[CX_F_STATS]);
    for (uint32_t i = 0; i < t.count && !emb_mem_budget_spent(r->m); i++) {
        uint64_t at = t.base + (uint64_t)i * t.stride;
        if (!emb_desc_read_full(r, at, entry, t.need)) {
            emb_desc_report(r->is, "context %u: entry at 0x%" PRIx64 " unreadable", i, at);
            continue;
        }
        struct emb_desc_context *c = &md->contexts[md->ncontexts];
        memset(c, 0, sizeof *c);
        c->index = i;
        c->entry_addr = at;
        c->state = (uint32_t)emb_desc_read_field(r, entry, t.need, s->w[CX_F_STATE]);
        if (c->state == EMB_CONTEXT_FREE)
            continue;
        emb_desc_read_name_from(r, names, nnames, c->state, c->state_name, sizeof c->state_name);
        if (!c->state_name[0])
            snprintf(c->state_name, sizeof c->state_name, "state %u", c->state);
        c->os_id = (int32_t)emb_desc_read_field(r, entry, t.need, s->w[CX_F_OS_ID]);
        c->ring = emb_desc_read_field(r, entry, t.need, s->w[CX_F_RING]);
        c->stack_low = emb_desc_read_field(r, entry, t.need, s->w[CX_F_STACK_LOW]);
        c->stack_size = (uint32_t)emb_desc_read_field(r, entry, t.need, s->w[CX_F_STACK_SIZE]);
        c->stack_painted = (uint32_t)emb_desc_read_field(r, entry, t.need, s->w[CX_F_STACK_PAINTED]);
        c->entry = emb_desc_read_field(r, entry, t.need, s->w[CX_F_ENTRY]);
        c->partition = (uint32_t)emb_desc_read_field(r, entry, t.need, fields[8]);
        if (stats.off + stats.size <= t.need)
            c->nstats = emb_desc_read_named_fields(r, s->w[CX_STATS_FIELDS], s->w[CX_STATS_COUNT], entry + stats.off,
                                          stats.size, c->stats, "thread statistics");
        for (size_t k = 0; k < c->nstats; k++)
            if (!strcmp(c->stats[k].name, "stack_high_water"))
                c->stack_used = (uint32_t)c->stats[k].value;
        read_stack(r, c);
        read_ring(r, md, c);
        if (!c->name[0])
            snprintf(c->name, sizeof c->name, "ctx %u", i);
        md->ncontexts++;
    }
    free(entry);
}

/* CPUs with blocks of their own: a v2 word, 1 when absent (or out of range: said). */
static uint32_t cpus_of(struct emb_desc_reader *r, unsigned kind, unsigned word, const char *what)
{
    uint64_t n = 1;
    if (!emb_desc_word(r->d, kind, word, &n) || n == 0)
        return 1;
    if (n > EMB_DESC_MAX_CPUS) {
        emb_desc_report(r->is, "%s: %" PRIu64 " CPUs (at most %u): CPU 0's read", what, n, EMB_DESC_MAX_CPUS);
        return 1;
    }
    return (uint32_t)n;
}

static void monitor_of(struct emb_desc_reader *r, const struct emb_desc_image_section *s, const uint8_t *b,
                       uint64_t stride, uint64_t i, uint32_t cpu, uint32_t cpus, struct emb_desc_monitor *mo)
{
    mo->category = (uint32_t)i;
    mo->cpu = cpu;
    mo->worst = (uint32_t)emb_desc_read_field(r, b, stride, s->w[MO_F_WORST]);
    mo->pc = emb_desc_read_field(r, b, stride, s->w[MO_F_PC]);
    mo->threshold = (uint32_t)emb_desc_read_field(r, b, stride, s->w[MO_F_THRESHOLD]);
    mo->over = (uint32_t)emb_desc_read_field(r, b, stride, s->w[MO_F_OVER]);
    mo->action = (uint32_t)emb_desc_read_field(r, b, stride, s->w[MO_F_ACTION]);
    char name[sizeof mo->name];
    if (i >= s->w[MO_ISR_FIRST])
        snprintf(name, sizeof name, "isr %" PRIu64, i - s->w[MO_ISR_FIRST]);
    else
        emb_desc_read_name_from(r, s->w[MO_NAMES], s->w[MO_NAME_COUNT], i, name, sizeof name);
    if (cpus > 1)
        snprintf(mo->name, sizeof mo->name, "%.14s/cpu%u", name, cpu);
    else
        snprintf(mo->name, sizeof mo->name, "%s", name);
}

/* Every CPU's blocks, CPU c's `count` blocks after CPU c - 1's. */
static void read_monitors(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(r->d, EMB_DESC_MONITORS);
    if (!s || s->words <= MO_ISR_FIRST || !s->w[MO_BLOCKS])
        return;
    uint64_t count = s->w[MO_COUNT], stride = s->w[MO_STRIDE];
    uint32_t cpus = md->monitor_cpus = cpus_of(r, EMB_DESC_MONITORS, MO_CPUS, "monitors");
    uint32_t need = emb_desc_read_extent(&s->w[MO_F_WORST], MO_F_ACTION - MO_F_WORST + 1);
    if (count * cpus > EMB_DESC_MAX_MONITORS || stride < need || stride > 1024) {
        emb_desc_report(r->is, "monitors: %" PRIu64 " blocks of %" PRIu64 " bytes: out of range",
                        count * cpus, stride);
        return;
    }
    uint64_t total = count * cpus;
    if (!emb_desc_read_in_ram(r, s->w[MO_BLOCKS], total * stride, "the monitor blocks"))
        return;
    uint8_t *blocks = malloc(total * stride + 1);
    md->monitors = calloc(total + 1, sizeof *md->monitors);
    if (!blocks || !md->monitors || !emb_desc_read_full(r, s->w[MO_BLOCKS], blocks, total * stride)) {
        if (blocks && md->monitors)
            emb_desc_report(r->is, "monitors: blocks at 0x%" PRIx64 " unreadable", s->w[MO_BLOCKS]);
        free(blocks);
        return;
    }
    for (uint64_t k = 0; k < total; k++)
        monitor_of(r, s, blocks + k * stride, stride, k % count, (uint32_t)(k / count), cpus,
                   &md->monitors[md->nmonitors++]);
    free(blocks);
}

static void read_objects(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(r->d, EMB_DESC_STATS);
    if (!s || s->words <= ST_OBJ_FIELD_COUNT)
        return;
    uint64_t fields[] = {s->w[ST_F_HANDLE], s->w[ST_F_TYPE], s->w[ST_F_NAME], s->w[ST_F_STATE], s->w[ST_F_STATS]};
    struct table t;
    if (!read_table(r, EMB_DESC_STATS, ST_OBJECTS, ST_OBJ_STRIDE, ST_OBJ_CAPACITY, ST_OBJ_COUNT,
                    emb_desc_read_extent(fields, 5), EMB_DESC_MAX_OBJECTS, &t, "objects"))
        return;
    md->objects = calloc(t.count ? t.count : 1, sizeof *md->objects);
    uint8_t *entry = malloc(t.need);
    if (!md->objects || !entry) {
        free(entry);
        return;
    }
    struct field stats = field_of(s->w[ST_F_STATS]);
    for (uint32_t i = 0; i < t.count && !emb_mem_budget_spent(r->m); i++) {
        if (!emb_desc_read_full(r, t.base + (uint64_t)i * t.stride, entry, t.need))
            continue;
        if (emb_desc_read_field(r, entry, t.need, s->w[ST_F_STATE]) != 1)
            continue;
        struct emb_desc_object *o = &md->objects[md->nobjects++];
        o->handle = (uint32_t)emb_desc_read_field(r, entry, t.need, s->w[ST_F_HANDLE]);
        o->type = (uint16_t)emb_desc_read_field(r, entry, t.need, s->w[ST_F_TYPE]);
        emb_desc_read_field_text(entry, t.need, s->w[ST_F_NAME], o->name, sizeof o->name);
        emb_desc_read_name_from(r, word_or(r->d, EMB_DESC_TYPES, TY_OBJ_NAMES, 0),
                  word_or(r->d, EMB_DESC_TYPES, TY_OBJ_COUNT, 0), o->type, o->type_name, sizeof o->type_name);
        if (stats.off + stats.size <= t.need)
            o->nstats = emb_desc_read_named_fields(r, s->w[ST_OBJ_FIELDS], s->w[ST_OBJ_FIELD_COUNT],
                                          entry + stats.off, stats.size, o->stats, "object statistics");
    }
    free(entry);
}

static size_t read_cpu_block(struct emb_desc_reader *r, const struct emb_desc_image_section *s, uint64_t addr,
                             struct emb_desc_stat *out)
{
    uint8_t block[256];
    if (!emb_desc_read_full(r, addr, block, sizeof block)) {
        /* A smaller block near the end of a region: read what the fields need. */
        memset(block, 0, sizeof block);
        if (!emb_desc_read_full(r, addr, block, 64))
            return 0;
    }
    return emb_desc_read_named_fields(r, s->w[ST_CPU_FIELDS], s->w[ST_CPU_COUNT], block, sizeof block, out,
                                    "CPU statistics");
}

/* CPU 0's block, and with statistics v2 every CPU's, `stride` bytes apart. */
static void read_cpu(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(r->d, EMB_DESC_STATS);
    if (!s || s->words <= ST_CPU_COUNT || !s->w[ST_CPU] || !s->w[ST_CPU_FIELDS])
        return;
    md->ncpu = read_cpu_block(r, s, s->w[ST_CPU], md->cpu);
    uint32_t cpus = cpus_of(r, EMB_DESC_STATS, ST_CPUS, "CPU statistics");
    uint64_t stride = 0;
    if (cpus < 2 || !emb_desc_word(r->d, EMB_DESC_STATS, ST_CPU_STRIDE, &stride))
        return;
    if (stride < 8 || stride > 256) {
        emb_desc_report(r->is, "CPU statistics: %" PRIu64 " bytes from one CPU's block to the next", stride);
        return;
    }
    md->cpus = calloc(cpus, sizeof *md->cpus);
    if (!md->cpus)
        return;
    md->stats_cpus = cpus;
    for (uint32_t c = 0; c < cpus; c++)
        md->cpus[c].nstats = read_cpu_block(r, s, s->w[ST_CPU] + c * stride, md->cpus[c].stats);
}

static void read_crash(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    uint64_t v, area;
    if (deref(r, EMB_DESC_CRASH, CR_RECORD, r->d->ptr_size, &area) && area &&
        deref(r, EMB_DESC_CRASH, CR_CAP, 4, &v)) {
        md->crash_cap = (uint32_t)(v > 65535 ? 65535 : v);
        if (!emb_desc_read_in_ram(r, area, md->crash_cap, "the crash record area"))
            return;
        md->has_crash = true;
        md->crash_area = area;
        md->crash_version = (uint32_t)word_or(r->d, EMB_DESC_CRASH, CR_VERSION, 0);
        if (deref(r, EMB_DESC_CRASH, CR_FOUND, 4, &v))
            md->crash_found = (uint32_t)v;
        if (deref(r, EMB_DESC_CRASH, CR_FOUND_LENGTH, 4, &v))
            md->crash_found_length = (uint32_t)v;
        /* The region may not be in the image (a core leaves shared file mappings out):
         * then the record is not shown, which is no fault of the image. */
        md->crash_bytes = malloc(md->crash_cap ? md->crash_cap : 1);
        if (md->crash_bytes && !emb_desc_read_full(r, area, md->crash_bytes, md->crash_cap)) {
            free(md->crash_bytes);
            md->crash_bytes = NULL;
        }
    }
    if (deref(r, EMB_DESC_MINI, MI_RING, r->d->ptr_size, &area) && area) {
        md->has_mini = true;
        md->mini_area = area;
        md->mini_entries = (uint32_t)word_or(r->d, EMB_DESC_MINI, MI_ENTRIES, 0);
        md->mini_entry_size = (uint32_t)word_or(r->d, EMB_DESC_MINI, MI_ENTRY_SIZE, 0);
        if (md->mini_entries > 1024 || md->mini_entry_size != 32) {
            emb_desc_report(r->is, "mini-record ring: %u entries of %u bytes: out of range", md->mini_entries,
                  md->mini_entry_size);
            md->mini_entries = 0;
            return;
        }
        md->mini_bytes = malloc((size_t)md->mini_entries * 32 + 1);
        if (md->mini_bytes && !emb_desc_read_full(r, area, md->mini_bytes, (size_t)md->mini_entries * 32)) {
            free(md->mini_bytes);
            md->mini_bytes = NULL;
        }
    }
}

/* The log rings (section 5, version 1): an array of ring addresses, each a struct whose
 * fields the section describes. */
static void read_logring(struct emb_desc_reader *r, const struct emb_desc_image_section *s, struct emb_desc_model *md,
                         struct emb_desc_logring *l)
{
    uint8_t buf[EMB_DESC_READ_MAX_STRUCT];
    char what[48];
    snprintf(what, sizeof what, "log ring %u", l->index);
    int size = emb_desc_read_struct(r, l->addr, &s->w[LG_F_WRITE_POS], LG_F_NAME - LG_F_WRITE_POS + 1, buf,
                                  what);
    if (size < 0)
        return;
    set_members(r, buf, (size_t)size, s->w, log_ring_members,
                sizeof log_ring_members / sizeof log_ring_members[0], l);
    emb_desc_read_field_text(buf, (size_t)size, s->w[LG_F_NAME], l->name, sizeof l->name);
    uint64_t bytes = (uint64_t)l->mask + 1u;
    l->ok = is_pow2(bytes) && bytes >= 256u && bytes <= EMB_DESC_MAX_RING_BYTES && l->buf &&
            l->spill <= md->log_slack && (uint32_t)(l->write_pos - l->read_pos) <= bytes &&
            (uint32_t)(l->committed - l->read_pos) <= (uint32_t)(l->write_pos - l->read_pos);
    if (!l->ok) {
        emb_desc_report(r->is, "log ring %u at 0x%" PRIx64 " is inconsistent (%" PRIu64 " bytes, positions %u"
                      " written, %u committed, %u read, %u spilled): not read", l->index, l->addr,
                      bytes, l->write_pos, l->committed, l->read_pos, l->spill);
        return;
    }
    snprintf(what, sizeof what, "log ring %u: its buffer", l->index);
    l->ok = emb_desc_read_in_ram(r, l->buf, bytes + md->log_slack, what);
}

static void read_log(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(r->d, EMB_DESC_LOG);
    uint64_t array, count;
    if (!s || s->version < 1 || s->words <= LG_F_NAME)
        return;
    md->log_id_bytes = (uint32_t)s->w[LG_ID_BYTES];
    md->log_ts_bytes = (uint32_t)s->w[LG_TS_BYTES];
    md->log_slack = (uint32_t)s->w[LG_SLACK];
    if ((md->log_id_bytes != 2 && md->log_id_bytes != 4) || (md->log_ts_bytes != 0 && md->log_ts_bytes != 4) ||
        md->log_slack > EMB_DESC_MAX_LOG_SLACK) {
        emb_desc_report(r->is, "log section: %u-byte ids, %u-byte timestamps, %u bytes of slack: not a log layout",
                      md->log_id_bytes, md->log_ts_bytes, md->log_slack);
        return;
    }
    if (!emb_desc_read_word(r, s->w[LG_RINGS], &array) || !deref(r, EMB_DESC_LOG, LG_COUNT, 4, &count) || !array ||
        !count)
        return; /* no log ring (yet) */
    if (count > EMB_DESC_MAX_LOG_RINGS) {
        emb_desc_report(r->is, "log section: %" PRIu64 " rings, reading %u", count, EMB_DESC_MAX_LOG_RINGS);
        count = EMB_DESC_MAX_LOG_RINGS;
    }
    if (!emb_desc_read_in_ram(r, array, count * r->d->ptr_size, "the log ring array"))
        return;
    md->logrings = calloc(count, sizeof *md->logrings);
    if (!md->logrings)
        return;
    for (uint64_t i = 0; i < count && !emb_mem_budget_spent(r->m); i++) {
        struct emb_desc_logring *l = &md->logrings[md->nlogrings];
        memset(l, 0, sizeof *l);
        l->index = (uint32_t)i;
        if (!emb_desc_read_word(r, array + i * r->d->ptr_size, &l->addr) || !l->addr)
            continue;
        read_logring(r, s, md, l);
        md->nlogrings++;
    }
}

int emb_desc_read(struct emb_mem *m, const struct emb_desc_image *d, struct emb_desc_model *md,
                struct emb_problems *issues)
{
    memset(md, 0, sizeof *md);
    struct emb_desc_reader r = {m, d, issues};
    read_identity(&r, md);
    read_firmware(&r, md);
    if (!md->ready)
        emb_desc_report(issues, "the registry is not filled in: the library has not started (or the image is not live)");
    read_contexts(&r, md);
    read_monitors(&r, md);
    read_objects(&r, md);
    read_cpu(&r, md);
    read_crash(&r, md);
    read_log(&r, md);
    emb_desc_read_kernel(&r, md);
    emb_desc_read_partitions(&r, md);
    if (emb_mem_budget_spent(m))
        emb_desc_report(issues, "stopped: the read budget is spent (a hostile or huge image)");
    return 0;
}

void emb_desc_model_free(struct emb_desc_model *md)
{
    free(md->contexts);
    free(md->monitors);
    free(md->cpus);
    free(md->partitions);
    free(md->objects);
    free(md->crash_bytes);
    free(md->mini_bytes);
    free(md->logrings);
    emb_desc_read_kernel_free(md);
    memset(md, 0, sizeof *md);
}

/* ---- Pulling the rings out ---- */

long emb_desc_dump_trace(struct emb_mem *m, const struct emb_desc_image *d, const struct emb_desc_model *md,
                       const struct emb_catalog *cat, FILE *out, struct emb_problems *issues)
{
    const struct emb_desc_follow_options o = {.cat = cat};
    struct emb_desc_follow *f = emb_desc_follow_new(d, md, &o);
    if (!f) {
        emb_desc_report(issues, "out of memory");
        return -1;
    }
    emb_desc_follow_finish(f, m, issues);
    size_t len = 0;
    uint8_t *trace = emb_desc_follow_trace(f, &len);
    long count = (long)emb_desc_follow_stats(f)->packets;
    if (!trace || fwrite(trace, 1, len, out) != len) {
        emb_desc_report(issues, "cannot write the trace");
        count = -1;
    }
    free(trace);
    emb_desc_follow_free(f);
    return count;
}
