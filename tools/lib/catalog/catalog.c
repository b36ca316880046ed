/* The trace event catalogue once read: the layout rule, the checksum, the type names and
 * the queries the decoder and the writers use. catalog_parse.c reads the YAML,
 * catalog_tsdl.c writes the CTF metadata.
 */
#define _POSIX_C_SOURCE 200809L

#include "catalog.h"
#include "catalog_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/crc.h>
#include <emb/wire.h>

#include "buffer.h"

static const struct {
    const char *name;
    enum emb_catalog_type type;
    uint32_t size;
} types[] = {
    {"u8", EMB_CAT_U8, 1},   {"u16", EMB_CAT_U16, 2}, {"u32", EMB_CAT_U32, 4},
    {"u64", EMB_CAT_U64, 8}, {"i8", EMB_CAT_I8, 1},   {"i16", EMB_CAT_I16, 2},
    {"i32", EMB_CAT_I32, 4}, {"i64", EMB_CAT_I64, 8}, {"bool", EMB_CAT_BOOL, 1},
};

const char *emb_catalog_type_name(enum emb_catalog_type type)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].type == type)
            return types[i].name;
    return "char";
}

const char *emb_catalog_field_type_name(const struct emb_catalog_field *f, char *buf, size_t len)
{
    if (f->type == EMB_CAT_CHARS)
        snprintf(buf, len, "char[%" PRIu32 "]", f->size);
    else
        snprintf(buf, len, "%s", emb_catalog_type_name(f->type));
    return buf;
}

static const char *const meanings[] = {"", "thread", "handle", "irq", "pc", "cycles", "frame"};

const char *emb_catalog_meaning_name(enum emb_catalog_meaning meaning)
{
    if ((size_t)meaning < sizeof meanings / sizeof meanings[0])
        return meanings[meaning];
    return "";
}

bool emb_catalog_type_is_integer(enum emb_catalog_type t)
{
    return t != EMB_CAT_BOOL && t != EMB_CAT_CHARS;
}

bool emb_catalog_type_is_signed(enum emb_catalog_type t)
{
    return t == EMB_CAT_I8 || t == EMB_CAT_I16 || t == EMB_CAT_I32 || t == EMB_CAT_I64;
}

bool emb_catalog_type_lookup(const char *name, enum emb_catalog_type *type, uint32_t *size)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcmp(name, types[i].name) == 0) {
            *type = types[i].type;
            *size = types[i].size;
            return true;
        }
    }
    return false;
}

enum emb_catalog_meaning emb_catalog_meaning_lookup(const char *name)
{
    for (size_t i = 1; i < sizeof meanings / sizeof meanings[0]; i++)
        if (strcmp(name, meanings[i]) == 0)
            return (enum emb_catalog_meaning)i;
    return EMB_CAT_MEANING_NONE;
}

void emb_catalog_layout_event(struct emb_catalog_event *ev)
{
    uint32_t off = 0;
    for (size_t i = 0; i < ev->nfields; i++) {
        struct emb_catalog_field *f = &ev->fields[i];
        off = (off + f->align - 1) & ~(f->align - 1);
        f->offset = off;
        off += f->size;
    }
    ev->payload_size = (off + 3u) & ~3u;
    ev->size = 8u + ev->payload_size;
}

/* The canonical text of docs/formats/trace.md ("Catalogue checksum"): classes by id, then
 * events by id, each followed by its fields in order; decimal numbers, one space between
 * words, each line ending in '\n'. False when out of memory. */
static bool catalog_checksum(const struct emb_catalog *cat, uint32_t *crc)
{
    struct emb_buf text = {0};
    for (size_t c = 0; c < cat->nclasses; c++)
        emb_buf_printf(&text, "class %u %s\n", cat->classes[c].id, cat->classes[c].name);
    for (uint32_t id = 1; id <= 65535u; id++) {
        const struct emb_catalog_event *ev = cat->by_id[id];
        if (ev == NULL)
            continue;
        emb_buf_printf(&text, "event %u %s %u\n", (unsigned)ev->id, ev->name, ev->cls->id);
        for (size_t i = 0; i < ev->nfields; i++) {
            char type[16];
            emb_buf_printf(&text, "field %s %s %" PRIu32 "\n", ev->fields[i].name,
                           emb_catalog_field_type_name(&ev->fields[i], type, sizeof type),
                           ev->fields[i].offset);
        }
    }
    bool ok = !text.failed;
    *crc = emb_crc32(0, text.data, text.len);
    emb_buf_free(&text);
    return ok;
}

static int class_by_id(const void *a, const void *b)
{
    const struct emb_catalog_class *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

bool emb_catalog_index(struct emb_catalog *cat)
{
    /* Sorting moves the classes, so the id table and back pointers are rebuilt after. */
    qsort(cat->classes, cat->nclasses, sizeof *cat->classes, class_by_id);
    for (size_t c = 0; c < cat->nclasses; c++) {
        struct emb_catalog_class *cls = &cat->classes[c];
        for (size_t e = 0; e < cls->nevents; e++) {
            cls->events[e].cls = cls;
            cat->by_id[cls->events[e].id] = &cls->events[e];
        }
    }
    return catalog_checksum(cat, &cat->checksum);
}

void emb_catalog_free(struct emb_catalog *cat)
{
    if (cat == NULL)
        return;
    for (size_t c = 0; c < cat->nclasses; c++) {
        struct emb_catalog_class *cls = &cat->classes[c];
        for (size_t e = 0; e < cls->nevents; e++) {
            struct emb_catalog_event *ev = &cls->events[e];
            for (size_t i = 0; i < ev->nfields; i++) {
                struct emb_catalog_field *f = &ev->fields[i];
                for (size_t v = 0; v < f->nvalues; v++)
                    free(f->values[v].name);
                EMB_FREE_ALL(f->values, f->name, f->doc);
            }
            EMB_FREE_ALL(ev->fields, ev->name, ev->doc);
        }
        EMB_FREE_ALL(cls->events, cls->name, cls->doc);
    }
    EMB_FREE_ALL(cat->classes, cat->by_id, cat);
}

const struct emb_catalog_event *emb_catalog_event(const struct emb_catalog *cat, uint16_t id)
{
    return cat->by_id[id];
}

const struct emb_catalog_event *emb_catalog_find(const struct emb_catalog *cat, const char *name)
{
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++)
            if (cat->classes[c].events[e].name != NULL &&
                strcmp(cat->classes[c].events[e].name, name) == 0)
                return &cat->classes[c].events[e];
    return NULL; /* names are NULL only while the catalogue is being read */
}

const struct emb_catalog_class *emb_catalog_class(const struct emb_catalog *cat, const char *name)
{
    for (size_t c = 0; c < cat->nclasses; c++)
        if (strcmp(cat->classes[c].name, name) == 0)
            return &cat->classes[c];
    return NULL;
}

const char *emb_catalog_value_label(const struct emb_catalog_field *field, int64_t v)
{
    for (size_t i = 0; i < field->nvalues; i++)
        if (field->values[i].value == v)
            return field->values[i].name;
    return NULL;
}

uint64_t emb_catalog_field_get_uint(const struct emb_catalog_field *f, const uint8_t *payload)
{
    const uint8_t *q = payload + f->offset;
    switch (f->size) {
    case 1:
        return f->type == EMB_CAT_CHARS ? 0 : q[0];
    case 2:
        return emb_get_le16(q);
    case 4:
        return f->type == EMB_CAT_CHARS ? 0 : emb_get_le32(q);
    case 8:
        return f->type == EMB_CAT_CHARS ? 0 : emb_get_le64(q);
    default:
        return 0;
    }
}

int64_t emb_catalog_field_get_int(const struct emb_catalog_field *f, const uint8_t *payload)
{
    uint64_t u = emb_catalog_field_get_uint(f, payload);
    if (!emb_catalog_type_is_signed(f->type))
        return (int64_t)u;
    switch (f->size) {
    case 1:
        return (int8_t)(uint8_t)u;
    case 2:
        return (int16_t)(uint16_t)u;
    case 4:
        return (int32_t)(uint32_t)u;
    default:
        return (int64_t)u;
    }
}

