/* The catalogue of a foreign CTF trace: its event classes written as catalogue YAML and
 * parsed by the one catalogue parser (so layout and checksum follow the project's rules),
 * and the plan that writes each event's payload into that layout. */
#define _POSIX_C_SOURCE 200809L
#include "ctf_import_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include <emb/wire.h>

#define CTF_STRING_BYTES 32u /* a string field: char[32], NUL-padded, cut to 31 bytes */

static const char *const C_KEYWORDS[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false"};

void emb_ctf_name(const char *name, char *out, size_t len)
{
    size_t o = 0;
    if (len == 0)
        return;
    if (isdigit((unsigned char)name[0]) || !strncmp(name, "emb_", 4))
        out[o++] = 'x';
    for (size_t i = 0; name[i] != '\0' && o + 2 < len; i++) {
        unsigned char c = (unsigned char)tolower((unsigned char)name[i]);
        out[o++] = (char)(isalnum(c) || c == '_' ? c : '_');
    }
    if (o == 0)
        out[o++] = 'x';
    out[o] = '\0';
}

void emb_ctf_field_name(const char *name, char *out, size_t len)
{
    emb_ctf_name(name, out, len);
    size_t o = strlen(out);
    for (size_t k = 0; k < sizeof C_KEYWORDS / sizeof C_KEYWORDS[0]; k++)
        if (!strcmp(out, C_KEYWORDS[k]) && o + 1 < len) {
            out[o++] = '_';
            out[o] = '\0';
        }
}

/* The building of one event's fields. */
struct walk {
    struct emb_buf *yaml;
    struct ctf_event_plan *e;
    size_t cap;
    const char *trace, *event;
    struct emb_problems *ps;
    uint16_t path[CTF_MAX_DEPTH];
};

static int refuse(struct walk *w, const char *field, const char *what)
{
    emb_report(w->ps, EMB_ERROR, -1, "the CTF trace's event `%s` field `%s` is %s, which the "
               "catalogue cannot hold (docs/ctf-foreign.md): not read", w->event,
               field, what);
    return -1;
}

static const char *refused_kind(bt_field_class_type t)
{
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_REAL))
        return "a floating-point number";
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY))
        return "an array or sequence";
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_VARIANT))
        return "a variant";
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_OPTION))
        return "an option";
    return "of an unknown kind";
}

/* The catalogue type of an integer of `bits` bits. */
static const char *int_type(bool is_signed, uint64_t bits)
{
    static const char *const u[] = {"u8", "u16", "u32", "u64"}, *const s[] = {"i8", "i16", "i32", "i64"};
    unsigned k = bits <= 8 ? 0 : bits <= 16 ? 1 : bits <= 32 ? 2 : 3;
    return is_signed ? s[k] : u[k];
}

/* An enumeration's labels as `values: {...}` when each names one value (the catalogue's
 * labels are identifiers of single values); else nothing: the numbers are shown. */
/* Mapping i of an enumeration: its label, and whether it names one value that fits an
 * int32 (*value; the catalogue's enumeration values are int32). A range, several ranges or
 * a value out of int32 says false, read from the trace's own bounds (an unsigned bound past
 * INT32_MAX is no value of int32, never clamped into one). */
static bool mapping_one_value(const bt_field_class *fc, bool sig, uint64_t i, const char **label, int64_t *value)
{
    if (sig) {
        const bt_field_class_enumeration_signed_mapping *sm =
            bt_field_class_enumeration_signed_borrow_mapping_by_index_const(fc, i);
        *label = bt_field_class_enumeration_mapping_get_label(
            bt_field_class_enumeration_signed_mapping_as_mapping_const(sm));
        const bt_integer_range_set_signed *r = bt_field_class_enumeration_signed_mapping_borrow_ranges_const(sm);
        if (bt_integer_range_set_get_range_count(bt_integer_range_set_signed_as_range_set_const(r)) != 1)
            return false;
        const bt_integer_range_signed *r0 = bt_integer_range_set_signed_borrow_range_by_index_const(r, 0);
        int64_t lo = bt_integer_range_signed_get_lower(r0);
        *value = lo;
        return lo == bt_integer_range_signed_get_upper(r0) && lo >= INT32_MIN && lo <= INT32_MAX;
    }
    const bt_field_class_enumeration_unsigned_mapping *um =
        bt_field_class_enumeration_unsigned_borrow_mapping_by_index_const(fc, i);
    *label = bt_field_class_enumeration_mapping_get_label(
        bt_field_class_enumeration_unsigned_mapping_as_mapping_const(um));
    const bt_integer_range_set_unsigned *r = bt_field_class_enumeration_unsigned_mapping_borrow_ranges_const(um);
    if (bt_integer_range_set_get_range_count(bt_integer_range_set_unsigned_as_range_set_const(r)) != 1)
        return false;
    const bt_integer_range_unsigned *r0 = bt_integer_range_set_unsigned_borrow_range_by_index_const(r, 0);
    uint64_t lo = bt_integer_range_unsigned_get_lower(r0);
    *value = (int64_t)(lo <= INT32_MAX ? lo : 0u);
    return lo == bt_integer_range_unsigned_get_upper(r0) && lo <= INT32_MAX;
}

/* The catalogue's `values:` of an enumeration when each label names one value, met once;
 * else "" (the field shows its numbers). */
static void enum_values(const bt_field_class *fc, bool sig, char *out, size_t len)
{
    uint64_t n = bt_field_class_enumeration_get_mapping_count(fc);
    size_t used = (size_t)snprintf(out, len, ", values: {");
    for (uint64_t i = 0; i < n && n <= 256; i++) {
        const char *raw;
        int64_t value;
        if (!mapping_one_value(fc, sig, i, &raw, &value))
            break; /* a range: numbers only */
        char label[64], key[72];
        emb_ctf_name(raw, label, sizeof label);
        snprintf(key, sizeof key, "%s%s: ", i ? ", " : "{", label);
        if (strstr(out, key + (i ? 0 : 1)) != NULL)
            break; /* a label met twice: numbers only */
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%s: %" PRId64, i ? ", " : "", label, value);
        if (i + 1 == n && used + 2 < len) {
            snprintf(out + used, len - used, "}");
            return;
        }
    }
    out[0] = '\0';
}

static int add_leaf(struct walk *w, const char *name, const bt_field_class *fc, uint8_t depth)
{
    bt_field_class_type t = bt_field_class_get_type(fc);
    const char *type;
    struct ctf_leaf leaf = {.depth = depth};
    memcpy(leaf.path, w->path, sizeof leaf.path);
    bool hex = false;
    char values[2048] = "";
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_INTEGER)) {
        bool sig = bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
        if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION))
            enum_values(fc, sig, values, sizeof values);
        leaf.kind = sig ? CTF_LEAF_SINT : CTF_LEAF_UINT;
        type = int_type(sig, bt_field_class_integer_get_field_value_range(fc));
        hex = bt_field_class_integer_get_preferred_display_base(fc) ==
              BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL;
    } else if (t == BT_FIELD_CLASS_TYPE_BOOL) {
        leaf.kind = CTF_LEAF_BOOL;
        type = "bool";
    } else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
        leaf.kind = CTF_LEAF_BITS;
        type = int_type(false, bt_field_class_bit_array_get_length(fc));
        hex = true;
    } else if (t == BT_FIELD_CLASS_TYPE_STRING) {
        leaf.kind = CTF_LEAF_STRING;
        type = "'char[32]'";
    } else {
        return refuse(w, name, refused_kind(t));
    }
    if (w->e->nleaves == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        struct ctf_leaf *l = realloc(w->e->leaves, cap * sizeof *l);
        if (l == NULL)
            return refuse(w, name, "more than memory allows");
        w->e->leaves = l;
        w->cap = cap;
    }
    w->e->leaves[w->e->nleaves++] = leaf;
    emb_buf_printf(w->yaml, "          - {name: %s, type: %s%s%s}\n", name, type, hex ? ", display: hex" : "",
                   values);
    return 0;
}

/* The members of a structure, nested ones flattened as `outer_inner`. */
static int add_struct(struct walk *w, const bt_field_class *fc, const char *prefix, uint8_t depth)
{
    uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n; i++) {
        const bt_field_class_structure_member *m = bt_field_class_structure_borrow_member_by_index_const(fc, i);
        const bt_field_class *mfc = bt_field_class_structure_member_borrow_field_class_const(m);
        char raw[160], name[160];
        snprintf(raw, sizeof raw, "%s%s%s", prefix, *prefix ? "_" : "", bt_field_class_structure_member_get_name(m));
        emb_ctf_field_name(raw, name, sizeof name);
        if (depth >= CTF_MAX_DEPTH)
            return refuse(w, name, "nested more than 8 structures deep");
        w->path[depth] = (uint16_t)i;
        int rc = bt_field_class_get_type(mfc) == BT_FIELD_CLASS_TYPE_STRUCTURE
                     ? add_struct(w, mfc, raw, (uint8_t)(depth + 1))
                     : add_leaf(w, name, mfc, (uint8_t)(depth + 1));
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void yaml_quoted(struct emb_buf *y, const char *s)
{
    emb_buf_printf(y, "'");
    for (; *s; s++)
        emb_buf_printf(y, *s == '\'' ? "''" : "%c", isprint((unsigned char)*s) ? *s : '?');
    emb_buf_printf(y, "'");
}

/* The event's catalogue name: its CTF name made an identifier, made unique with `_N`. */
static void event_name(const struct ctf_plan *p, const char *raw, char *name, size_t len)
{
    char base[120];
    emb_ctf_name(raw, base, sizeof base);
    snprintf(name, len, "%s", base);
    for (unsigned k = 2;; k++) {
        bool taken = false;
        for (size_t i = 0; i < p->nevents && !taken; i++)
            taken = !strcmp(p->events[i].name, name);
        if (!taken)
            return;
        snprintf(name, len, "%s_%u", base, k);
    }
}

static int add_event(struct ctf_plan *p, struct emb_buf *y, const bt_event_class *ec,
                     const char *trace, struct emb_problems *ps)
{
    struct ctf_event_plan *e = &p->events[p->nevents];
    const char *raw = bt_event_class_get_name(ec) ? bt_event_class_get_name(ec) : "event";
    *e = (struct ctf_event_plan){.ec = ec, .id = (uint16_t)(p->nevents + 1)};
    event_name(p, raw, e->name, sizeof e->name);
    p->nevents++;
    emb_buf_printf(y, "      - name: %s\n        id: %u\n        doc: ", e->name, e->id);
    yaml_quoted(y, raw);
    emb_buf_printf(y, "\n        fields:\n");
    struct walk w = {.yaml = y, .e = e, .trace = trace, .event = raw, .ps = ps};
    const bt_field_class *pfc = bt_event_class_borrow_payload_field_class_const(ec);
    if (pfc == NULL) {
        emb_buf_printf(y, "          []\n");
        return 0;
    }
    return add_struct(&w, pfc, "", 0);
}

/* The catalogue parsed; each plan points at its event and fields. */
static int link_catalog(struct ctf_plan *p, const char *yaml, size_t len, const char *trace,
                        struct emb_problems *ps)
{
    char err[512];
    p->catalog = emb_catalog_parse(yaml, len, trace, err, sizeof err);
    if (p->catalog == NULL) {
        emb_report(ps, EMB_ERROR, -1, "the CTF trace's events make no catalogue: %s", err);
        return -1;
    }
    for (size_t i = 0; i < p->nevents; i++) {
        struct ctf_event_plan *e = &p->events[i];
        e->ev = emb_catalog_event(p->catalog, e->id);
        if (e->ev == NULL || e->ev->nfields != e->nleaves) {
            emb_report(ps, EMB_ERROR, -1, "event `%s`: its catalogue entry does not hold its "
                       "fields", e->name);
            return -1;
        }
        for (size_t f = 0; f < e->nleaves; f++)
            e->leaves[f].field = &e->ev->fields[f];
    }
    return 0;
}

static size_t slot_of(const struct ctf_plan *p, const bt_event_class *ec)
{
    return (size_t)(((uintptr_t)ec >> 4) * 0x9E3779B97F4A7C15ull % p->nslots);
}

static int index_events(struct ctf_plan *p)
{
    p->nslots = p->nevents * 2 + 1;
    p->slots = calloc(p->nslots, sizeof *p->slots);
    if (p->slots == NULL)
        return -1;
    for (size_t i = 0; i < p->nevents; i++) {
        size_t s = slot_of(p, p->events[i].ec);
        while (p->slots[s] != 0)
            s = (s + 1) % p->nslots;
        p->slots[s] = i + 1;
    }
    return 0;
}

static int by_stream_and_name(const void *a, const void *b)
{
    const bt_event_class *x = *(const bt_event_class *const *)a, *y = *(const bt_event_class *const *)b;
    uint64_t sx = bt_stream_class_get_id(bt_event_class_borrow_stream_class_const(x));
    uint64_t sy = bt_stream_class_get_id(bt_event_class_borrow_stream_class_const(y));
    if (sx != sy)
        return sx < sy ? -1 : 1;
    const char *nx = bt_event_class_get_name(x), *ny = bt_event_class_get_name(y);
    int c = strcmp(nx ? nx : "", ny ? ny : "");
    if (c != 0)
        return c;
    uint64_t ix = bt_event_class_get_id(x), iy = bt_event_class_get_id(y);
    return ix < iy ? -1 : ix > iy;
}

int ctf_plan_build(struct ctf_plan *p, const bt_trace_class *tc, const char *trace,
                   struct emb_problems *ps)
{
    memset(p, 0, sizeof *p);
    size_t total = 0;
    for (uint64_t s = 0; s < bt_trace_class_get_stream_class_count(tc); s++)
        total += bt_stream_class_get_event_class_count(bt_trace_class_borrow_stream_class_by_index_const(tc, s));
    if (total > 65535u) {
        emb_report(ps, EMB_ERROR, -1, "the CTF trace has %zu event classes, more than the 65535 "
                   "a catalogue holds: not read", total);
        return -1;
    }
    p->events = calloc(total ? total : 1, sizeof *p->events);
    struct emb_buf y = {0};
    emb_buf_printf(&y, "# The events of a CTF trace (made by the CTF import).\nversion: 1\n"
                   "classes:\n  - name: ctf\n    id: 0\n    doc: The trace's events.\n    events:\n");
    const bt_event_class **order = calloc(total ? total : 1, sizeof *order);
    int rc = p->events && order ? 0 : -1;
    size_t k = 0;
    for (uint64_t s = 0; rc == 0 && s < bt_trace_class_get_stream_class_count(tc); s++) {
        const bt_stream_class *sc = bt_trace_class_borrow_stream_class_by_index_const(tc, s);
        for (uint64_t e = 0; e < bt_stream_class_get_event_class_count(sc); e++)
            order[k++] = bt_stream_class_borrow_event_class_by_index_const(sc, e);
    }
    /* By name: a tracer numbers its event classes in the order they registered, which
     * two runs of one program need not share; the catalogue (and its checksum) must. */
    if (rc == 0)
        qsort(order, total, sizeof *order, by_stream_and_name);
    for (size_t i = 0; rc == 0 && i < total; i++)
        rc = add_event(p, &y, order[i], trace, ps);
    free(order);
    if (rc == 0 && total == 0)
        emb_buf_printf(&y, "      []\n");
    if (rc == 0)
        rc = link_catalog(p, (const char *)y.data, y.len, trace, ps);
    if (rc == 0)
        rc = index_events(p);
    if (rc == 0)
        p->yaml = (char *)emb_buf_take(&y, &p->yaml_len);
    emb_buf_free(&y);
    return rc;
}

const struct ctf_event_plan *ctf_plan_find(const struct ctf_plan *p, const bt_event_class *ec)
{
    for (size_t s = slot_of(p, ec); p->slots[s] != 0; s = (s + 1) % p->nslots)
        if (p->events[p->slots[s] - 1].ec == ec)
            return &p->events[p->slots[s] - 1];
    return NULL;
}

static void put_le(uint8_t *out, uint64_t v, uint32_t size)
{
    for (uint32_t i = 0; i < size; i++)
        out[i] = (uint8_t)(v >> (8u * i));
}

static unsigned encode_leaf(const struct ctf_leaf *l, const bt_field *f, uint8_t *payload)
{
    uint8_t *out = payload + l->field->offset;
    switch (l->kind) {
    case CTF_LEAF_UINT: put_le(out, bt_field_integer_unsigned_get_value(f), l->field->size); return 0;
    case CTF_LEAF_SINT: put_le(out, (uint64_t)bt_field_integer_signed_get_value(f), l->field->size); return 0;
    case CTF_LEAF_BOOL: out[0] = bt_field_bool_get_value(f) ? 1u : 0u; return 0;
    case CTF_LEAF_BITS: put_le(out, bt_field_bit_array_get_value_as_integer(f), l->field->size); return 0;
    default: {
        const char *s = bt_field_string_get_value(f);
        size_t n = bt_field_string_get_length(f);
        size_t keep = n < l->field->size ? n : l->field->size - 1u;
        memcpy(out, s, keep);
        memset(out + keep, 0, l->field->size - keep);
        return n > keep;
    }
    }
}

unsigned ctf_plan_encode(const struct ctf_event_plan *e, const bt_field *payload, uint8_t *out)
{
    unsigned cut = 0;
    memset(out, 0, e->ev->payload_size);
    for (size_t i = 0; i < e->nleaves; i++) {
        const struct ctf_leaf *l = &e->leaves[i];
        const bt_field *f = payload;
        for (uint8_t d = 0; d < l->depth; d++)
            f = bt_field_structure_borrow_member_field_by_index_const(f, l->path[d]);
        cut += encode_leaf(l, f, out);
    }
    return cut;
}

void ctf_plan_free(struct ctf_plan *p)
{
    for (size_t i = 0; i < p->nevents; i++)
        free(p->events[i].leaves);
    free(p->events);
    free(p->slots);
    free(p->yaml);
    memset(p, 0, sizeof *p);
}
