/* The trace event catalogue: YAML in, validated and laid-out events out.
 *
 * libyaml's document API gives a node tree with a mark on every node, so each check can
 * point at the line and column it is about. The tree is walked by the schema (top level,
 * class, event, field), so its depth is bounded even if an alias makes it cyclic.
 */
#define _POSIX_C_SOURCE 200809L

#include "catalog.h"
#include "catalog_internal.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "input_file.h"
#include "parse_number.h"
#include "problem.h"

struct catalog_parser {
    yaml_document_t doc;
    struct emb_problems *problems; /* NULL: problems are not reported */
    bool reported;                 /* a problem was reported (else a failure is memory) */
    struct emb_catalog *cat;
};

static void parse_error(struct catalog_parser *p, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The catalogue's problems name the line and column, as an editor does; libyaml's marks
 * count characters, not bytes, so there is no byte offset to give. */
static void parse_error(struct catalog_parser *p, yaml_mark_t mark, const char *fmt, ...)
{
    p->reported = true;
    if (p->problems == NULL)
        return;
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    emb_report(p->problems, EMB_ERROR, -1, "%zu:%zu: %s", mark.line + 1, mark.column + 1,
               message);
}

static void *alloc_array(size_t n, size_t size)
{
    return calloc(n == 0 ? 1 : n, size);
}

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* ---- Node helpers ---- */

static yaml_node_t *node_at(struct catalog_parser *p, yaml_node_item_t i)
{
    return yaml_document_get_node(&p->doc, i);
}

static const char *scalar(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static const char *node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return "a scalar";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

static bool expect(struct catalog_parser *p, const yaml_node_t *n, yaml_node_type_t type,
                   const char *what)
{
    if (n->type == type)
        return true;
    const char *want = type == YAML_SCALAR_NODE     ? "a scalar"
                       : type == YAML_SEQUENCE_NODE ? "a list"
                                                    : "a mapping";
    parse_error(p, n->start_mark, "%s must be %s, not %s", what, want, node_kind(n));
    return false;
}

/* Looks up the keys of a mapping against a closed list: an unknown key, a duplicate key or
 * a missing required key (named with a leading '!') is an error. out[i] gets the value of
 * keys[i], or NULL. */
static bool map_keys(struct catalog_parser *p, const yaml_node_t *map, const char *what,
                     const char *const *keys, size_t nkeys, yaml_node_t **out)
{
    if (!expect(p, map, YAML_MAPPING_NODE, what))
        return false;
    for (size_t i = 0; i < nkeys; i++)
        out[i] = NULL;
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
         pair < map->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = node_at(p, pair->key);
        yaml_node_t *v = node_at(p, pair->value);
        if (k == NULL || v == NULL)
            return false;
        if (k->type != YAML_SCALAR_NODE) {
            parse_error(p, k->start_mark, "a key of %s must be a scalar", what);
            return false;
        }
        size_t i;
        for (i = 0; i < nkeys; i++) {
            const char *key = keys[i][0] == '!' ? keys[i] + 1 : keys[i];
            if (strcmp(key, scalar(k)) == 0)
                break;
        }
        if (i == nkeys) {
            parse_error(p, k->start_mark, "unknown key `%s` in %s", scalar(k), what);
            return false;
        }
        if (out[i] != NULL) {
            parse_error(p, k->start_mark, "duplicate key `%s` in %s", scalar(k), what);
            return false;
        }
        out[i] = v;
    }
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i][0] == '!' && out[i] == NULL) {
            parse_error(p, map->start_mark, "%s has no `%s`", what, keys[i] + 1);
            return false;
        }
    }
    return true;
}

/* Integers as the catalogue writes them: decimal or 0x hexadecimal, optionally negative. */
static bool integer(struct catalog_parser *p, const yaml_node_t *n, int64_t min, int64_t max,
                    const char *what, int64_t *out)
{
    if (!expect(p, n, YAML_SCALAR_NODE, what))
        return false;
    const char *s = scalar(n);
    bool neg = s[0] == '-';
    const char *d = neg ? s + 1 : s;
    int base = 10;
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
        base = 16;
        d += 2;
    }
    bool digits = d[0] != '\0';
    for (const char *c = d; *c != '\0'; c++) {
        bool okc = base == 16 ? ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
                                 (*c >= 'A' && *c <= 'F'))
                              : (*c >= '0' && *c <= '9');
        if (!okc)
            digits = false;
    }
    if (!digits) {
        parse_error(p, n->start_mark, "%s must be an integer, not `%s`", what, s);
        return false;
    }
    int64_t v;
    if (emb_parse_i64(s, min, max, &v) != 0) {
        parse_error(p, n->start_mark, "%s %s is out of range %" PRId64 "..%" PRId64, what, s,
                    min, max);
        return false;
    }
    *out = v;
    return true;
}

static bool is_c_keyword(const char *s)
{
    static const char *const kw[] = {
        "auto",     "break",     "case",     "char",         "const",          "continue",
        "default",  "do",        "double",   "else",         "enum",           "extern",
        "float",    "for",       "goto",     "if",           "inline",         "int",
        "long",     "register",  "restrict", "return",       "short",          "signed",
        "sizeof",   "static",    "struct",   "switch",       "typedef",        "union",
        "unsigned", "void",      "volatile", "while",        "bool",           "true",
        "false",
    };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strcmp(s, kw[i]) == 0)
            return true;
    return false;
}

/* Names become C identifiers in the generated header: lower case, so the generated
 * EMB_TRACE_<event> macros never meet an upper-case EMB_TRACE_* constant. Keywords are
 * refused only where a name stands alone in C (field names are emitter parameters);
 * event, class and label names are always prefixed. */
static bool identifier(struct catalog_parser *p, const yaml_node_t *n, const char *what,
                       bool refuse_keywords)
{
    if (!expect(p, n, YAML_SCALAR_NODE, what))
        return false;
    const char *s = scalar(n);
    size_t len = strlen(s);
    bool valid = len > 0 && len <= CATALOG_MAX_NAME && s[0] >= 'a' && s[0] <= 'z';
    for (size_t i = 0; valid && i < len; i++) {
        char c = s[i];
        valid = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (!valid) {
        parse_error(p, n->start_mark,
                    "%s `%s` is not a lower-case C identifier (a letter, then letters, "
                    "digits or _; at most %u characters)",
                    what, s, CATALOG_MAX_NAME);
        return false;
    }
    if (strncmp(s, "emb_", 4) == 0) {
        parse_error(p, n->start_mark, "%s `%s` must not start with emb_ (reserved)", what, s);
        return false;
    }
    if (refuse_keywords && is_c_keyword(s)) {
        parse_error(p, n->start_mark, "%s `%s` is a C keyword", what, s);
        return false;
    }
    return true;
}

static bool text_value(struct catalog_parser *p, const yaml_node_t *n, const char *what,
                       char **out)
{
    if (n == NULL) {
        *out = NULL;
        return true;
    }
    if (!expect(p, n, YAML_SCALAR_NODE, what))
        return false;
    const char *s = scalar(n);
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' '))
        len--;
    *out = malloc(len + 1);
    if (*out == NULL)
        return false;
    memcpy(*out, s, len);
    (*out)[len] = '\0';
    return true;
}

static void type_range(const struct emb_catalog_field *f, int64_t *min, int64_t *max)
{
    if (emb_catalog_type_is_signed(f->type)) {
        *max = f->size == 8 ? INT64_MAX : (int64_t)((UINT64_C(1) << (8 * f->size - 1)) - 1);
        *min = -*max - 1;
    } else {
        *min = 0;
        *max = f->size == 8 ? INT64_MAX : (int64_t)((UINT64_C(1) << (8 * f->size)) - 1);
    }
}

static bool parse_type(struct catalog_parser *p, const yaml_node_t *n,
                       struct emb_catalog_field *f)
{
    if (!expect(p, n, YAML_SCALAR_NODE, "a field's type"))
        return false;
    const char *s = scalar(n);
    if (emb_catalog_type_lookup(s, &f->type, &f->size)) {
        f->align = f->size < 4 ? f->size : 4;
        return true;
    }
    if (strncmp(s, "char[", 5) == 0) {
        const char *d = s + 5;
        char *end;
        errno = 0;
        unsigned long n_chars = (d[0] >= '0' && d[0] <= '9') ? strtoul(d, &end, 10) : 0;
        if (errno == 0 && n_chars > 0 && end[0] == ']' && end[1] == '\0') {
            if (n_chars % 4 != 0 || n_chars > CATALOG_MAX_CHARS) {
                parse_error(p, n->start_mark,
                            "`%s`: N in char[N] must be a multiple of 4, at most %u", s,
                            CATALOG_MAX_CHARS);
                return false;
            }
            f->type = EMB_CAT_CHARS;
            f->size = (uint32_t)n_chars;
            f->align = 4;
            return true;
        }
    }
    parse_error(p, n->start_mark,
                "unknown type `%s` (u8 u16 u32 u64 i8 i16 i32 i64 bool char[N])", s);
    return false;
}

/* ---- Fields ---- */

static bool parse_compare(struct catalog_parser *p, const yaml_node_t *n,
                          struct emb_catalog_field *f)
{
    if (n->type == YAML_SCALAR_NODE) {
        if (strcmp(scalar(n), "exact") == 0) {
            f->compare = EMB_CAT_COMPARE_EXACT;
            return true;
        }
        if (strcmp(scalar(n), "ignore") == 0) {
            f->compare = EMB_CAT_COMPARE_IGNORE;
            return true;
        }
        parse_error(p, n->start_mark,
                    "unknown compare policy `%s` (exact, ignore, {tolerance: N}, "
                    "{tolerance_pct: N})",
                    scalar(n));
        return false;
    }
    static const char *const keys[] = {"tolerance", "tolerance_pct"};
    yaml_node_t *v[2];
    if (!map_keys(p, n, "a compare policy", keys, 2, v))
        return false;
    if ((v[0] == NULL) == (v[1] == NULL)) {
        parse_error(p, n->start_mark,
                    "a compare policy has exactly one of `tolerance` and `tolerance_pct`");
        return false;
    }
    yaml_node_t *t = v[0] != NULL ? v[0] : v[1];
    if (!expect(p, t, YAML_SCALAR_NODE, "a tolerance"))
        return false;
    double d;
    if (emb_parse_double(scalar(t), 0, DBL_MAX, &d) != 0) {
        parse_error(p, t->start_mark, "tolerance `%s` is not a number >= 0", scalar(t));
        return false;
    }
    if (!emb_catalog_type_is_integer(f->type)) {
        parse_error(p, n->start_mark, "a tolerance needs an integer field, not `%s`",
                    emb_catalog_type_name(f->type));
        return false;
    }
    f->compare = v[0] != NULL ? EMB_CAT_COMPARE_TOLERANCE : EMB_CAT_COMPARE_TOLERANCE_PCT;
    f->tolerance = d;
    return true;
}

static bool parse_values(struct catalog_parser *p, const yaml_node_t *n,
                         struct emb_catalog_field *f)
{
    if (!expect(p, n, YAML_MAPPING_NODE, "`values`"))
        return false;
    if (!emb_catalog_type_is_integer(f->type)) {
        parse_error(p, n->start_mark, "`values` needs an integer field, not `%s`",
                    emb_catalog_type_name(f->type));
        return false;
    }
    size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    f->values = alloc_array(count, sizeof *f->values);
    if (f->values == NULL)
        return false;
    int64_t min, max;
    type_range(f, &min, &max);
    if (min < INT32_MIN)
        min = INT32_MIN;
    if (max > INT32_MAX)
        max = INT32_MAX;
    for (size_t i = 0; i < count; i++) {
        yaml_node_pair_t *pair = &n->data.mapping.pairs.start[i];
        yaml_node_t *k = node_at(p, pair->key);
        yaml_node_t *v = node_at(p, pair->value);
        if (k == NULL || v == NULL)
            return false;
        if (!identifier(p, k, "a value label", false))
            return false;
        int64_t value;
        if (!integer(p, v, min, max, "an enumeration value", &value))
            return false;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(f->values[j].name, scalar(k)) == 0) {
                parse_error(p, k->start_mark, "duplicate label `%s`", scalar(k));
                return false;
            }
            if (f->values[j].value == value) {
                parse_error(p, v->start_mark, "value %" PRId64 " is already `%s`", value,
                            f->values[j].name);
                return false;
            }
        }
        f->values[i].name = copy_string(scalar(k));
        f->values[i].value = value;
        f->nvalues = i + 1;
        if (f->values[i].name == NULL)
            return false;
    }
    return true;
}

/* The start of a field, an event or a class: a mapping of known keys, the line it starts
 * on, and its name (v[0]) a valid one. */
static bool parse_named(struct catalog_parser *p, const yaml_node_t *n, const char *what,
                        const char *const *keys, size_t nkeys, yaml_node_t **v,
                        unsigned *line, const char *name_what, bool refuse_keywords)
{
    if (!map_keys(p, n, what, keys, nkeys, v))
        return false;
    *line = (unsigned)n->start_mark.line + 1;
    return identifier(p, v[0], name_what, refuse_keywords);
}

static bool parse_field(struct catalog_parser *p, const yaml_node_t *n,
                        struct emb_catalog_field *f)
{
    static const char *const keys[] = {"!name", "!type", "meaning", "display",
                                       "compare", "values", "doc"};
    yaml_node_t *v[7];
    if (!parse_named(p, n, "a field", keys, 7, v, &f->line, "field name", true))
        return false;
    f->name = copy_string(scalar(v[0]));
    if (f->name == NULL || !parse_type(p, v[1], f))
        return false;
    if (v[2] != NULL) {
        if (!expect(p, v[2], YAML_SCALAR_NODE, "`meaning`"))
            return false;
        f->meaning = emb_catalog_meaning_lookup(scalar(v[2]));
        if (f->meaning == EMB_CAT_MEANING_NONE) {
            parse_error(p, v[2]->start_mark,
                        "unknown meaning `%s` (thread handle irq pc cycles frame)",
                        scalar(v[2]));
            return false;
        }
        if (!emb_catalog_type_is_integer(f->type)) {
            parse_error(p, v[2]->start_mark, "`meaning` needs an integer field");
            return false;
        }
    }
    if (v[3] != NULL) {
        if (!expect(p, v[3], YAML_SCALAR_NODE, "`display`"))
            return false;
        if (strcmp(scalar(v[3]), "hex") != 0 && strcmp(scalar(v[3]), "dec") != 0) {
            parse_error(p, v[3]->start_mark, "unknown display `%s` (hex or dec)",
                        scalar(v[3]));
            return false;
        }
        f->hex = strcmp(scalar(v[3]), "hex") == 0;
        if (f->hex && !emb_catalog_type_is_integer(f->type)) {
            parse_error(p, v[3]->start_mark, "`display: hex` needs an integer field");
            return false;
        }
    }
    /* Cycle counts differ from run to run; the comparison looks at intervals instead. */
    f->compare = f->meaning == EMB_CAT_MEANING_CYCLES ? EMB_CAT_COMPARE_IGNORE
                                                      : EMB_CAT_COMPARE_EXACT;
    if (v[4] != NULL && !parse_compare(p, v[4], f))
        return false;
    if (v[5] != NULL && !parse_values(p, v[5], f))
        return false;
    return text_value(p, v[6], "a field's doc", &f->doc);
}

typedef bool (*parse_item_fn)(struct catalog_parser *p, const yaml_node_t *n, void *element,
                              void *owner);

static size_t sequence_length(const yaml_node_t *seq)
{
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

/* Reads each item of a sequence into the next `size`-byte element of `array` (room for
 * all of them) with `parse`; *n counts the elements begun, which emb_catalog_free frees
 * whether they were finished or not. */
static bool parse_items(struct catalog_parser *p, const yaml_node_t *seq, void *array,
                        size_t size, size_t *n, parse_item_fn parse, void *owner)
{
    if (array == NULL)
        return false;
    for (size_t i = 0; i < sequence_length(seq); i++) {
        yaml_node_t *item = node_at(p, seq->data.sequence.items.start[i]);
        if (item == NULL)
            return false;
        *n = i + 1;
        if (!parse(p, item, (char *)array + i * size, owner))
            return false;
    }
    return true;
}

/* A field of `event`, whose name no earlier field of the event has. */
static bool field_item(struct catalog_parser *p, const yaml_node_t *n, void *element,
                       void *event)
{
    struct emb_catalog_event *ev = event;
    struct emb_catalog_field *f = element;
    if (!parse_field(p, n, f))
        return false;
    for (const struct emb_catalog_field *g = ev->fields; g < f; g++) {
        if (strcmp(g->name, f->name) == 0) {
            parse_error(p, n->start_mark, "field `%s` appears twice in `%s`", f->name,
                        ev->name);
            return false;
        }
    }
    return true;
}

/* "WHAT name `NAME` is already used (line N)", N the line of its first use; false. */
static bool name_used(struct catalog_parser *p, const yaml_node_t *name, const char *what,
                      unsigned line)
{
    parse_error(p, name->start_mark, "%s name `%s` is already used (line %u)", what, scalar(name),
                line);
    return false;
}

/* A class parsed before, other than `cls`, with this name (NULL: with this id), or NULL. */
static const struct emb_catalog_class *other_class(const struct emb_catalog *cat,
                                                   const struct emb_catalog_class *cls,
                                                   const char *name, int64_t id)
{
    for (size_t i = 0; i < cat->nclasses; i++) {
        const struct emb_catalog_class *o = &cat->classes[i];
        if (o != cls && o->name != NULL &&
            (name != NULL ? strcmp(o->name, name) == 0 : o->id == (unsigned)id))
            return o;
    }
    return NULL;
}

static bool parse_event(struct catalog_parser *p, const yaml_node_t *n,
                        struct emb_catalog_event *ev)
{
    static const char *const keys[] = {"!name", "!id", "doc", "fields"};
    yaml_node_t *v[4];
    if (!parse_named(p, n, "an event", keys, 4, v, &ev->line, "event name", false))
        return false;
    const struct emb_catalog_event *other = emb_catalog_find(p->cat, scalar(v[0]));
    if (other != NULL)
        return name_used(p, v[0], "event", other->line);
    ev->name = copy_string(scalar(v[0]));
    int64_t id;
    if (ev->name == NULL || !integer(p, v[1], 1, 65535, "event id", &id))
        return false;
    other = p->cat->by_id[id];
    if (other != NULL) {
        parse_error(p, v[1]->start_mark, "event id 0x%04X is already `%s` (line %u)",
                    (unsigned)id, other->name, other->line);
        return false;
    }
    ev->id = (uint16_t)id;
    p->cat->by_id[id] = ev;
    if (!text_value(p, v[2], "an event's doc", &ev->doc))
        return false;
    if (v[3] != NULL) {
        if (!expect(p, v[3], YAML_SEQUENCE_NODE, "`fields`"))
            return false;
        size_t count = sequence_length(v[3]);
        if (count > CATALOG_MAX_PAYLOAD) {
            parse_error(p, v[3]->start_mark, "`%s` has more than %u fields", ev->name,
                        CATALOG_MAX_PAYLOAD);
            return false;
        }
        ev->fields = alloc_array(count, sizeof *ev->fields);
        if (!parse_items(p, v[3], ev->fields, sizeof *ev->fields, &ev->nfields, field_item, ev))
            return false;
    }
    emb_catalog_layout_event(ev);
    if (ev->payload_size > CATALOG_MAX_PAYLOAD) {
        parse_error(p, v[0]->start_mark,
                    "the payload of `%s` is %" PRIu32 " bytes, more than %u "
                    "(CONFIG_EMB_TRACE_MAX_PAYLOAD)",
                    ev->name, ev->payload_size, CATALOG_MAX_PAYLOAD);
        return false;
    }
    return true;
}

static bool event_item(struct catalog_parser *p, const yaml_node_t *n, void *element,
                       void *owner)
{
    (void)owner;
    return parse_event(p, n, element);
}

static bool parse_class(struct catalog_parser *p, const yaml_node_t *n,
                        struct emb_catalog_class *cls)
{
    static const char *const keys[] = {"!name", "!id", "doc", "!events"};
    yaml_node_t *v[4];
    if (!parse_named(p, n, "a class", keys, 4, v, &cls->line, "class name", false))
        return false;
    const struct emb_catalog_class *o = other_class(p->cat, cls, scalar(v[0]), -1);
    if (o != NULL)
        return name_used(p, v[0], "class", o->line);
    cls->name = copy_string(scalar(v[0]));
    int64_t id;
    if (cls->name == NULL ||
        !integer(p, v[1], 0, CATALOG_MAX_CLASSES - 1, "class id", &id))
        return false;
    if ((o = other_class(p->cat, cls, NULL, id)) != NULL) {
        parse_error(p, v[1]->start_mark, "class id %u is already `%s` (line %u)",
                    (unsigned)id, o->name, o->line);
        return false;
    }
    cls->id = (unsigned)id;
    if (!text_value(p, v[2], "a class's doc", &cls->doc))
        return false;
    if (!expect(p, v[3], YAML_SEQUENCE_NODE, "`events`"))
        return false;
    if (sequence_length(v[3]) > 65535) {
        parse_error(p, v[3]->start_mark, "too many events");
        return false;
    }
    cls->events = alloc_array(sequence_length(v[3]), sizeof *cls->events);
    return parse_items(p, v[3], cls->events, sizeof *cls->events, &cls->nevents, event_item,
                       NULL);
}

/* ---- Top level ---- */

static bool class_item(struct catalog_parser *p, const yaml_node_t *n, void *element,
                       void *owner)
{
    (void)owner;
    return parse_class(p, n, element);
}

static bool parse_root(struct catalog_parser *p, const yaml_node_t *root)
{
    static const char *const keys[] = {"!version", "!classes"};
    yaml_node_t *v[2];
    if (!map_keys(p, root, "the catalogue", keys, 2, v))
        return false;
    int64_t version;
    if (!integer(p, v[0], 1, 65535, "version", &version))
        return false;
    p->cat->version = (unsigned)version;
    if (!expect(p, v[1], YAML_SEQUENCE_NODE, "`classes`"))
        return false;
    size_t count = sequence_length(v[1]);
    if (count == 0 || count > CATALOG_MAX_CLASSES) {
        parse_error(p, v[1]->start_mark, "`classes` must hold 1 to %u classes",
                    CATALOG_MAX_CLASSES);
        return false;
    }
    p->cat->classes = alloc_array(count, sizeof *p->cat->classes);
    if (!parse_items(p, v[1], p->cat->classes, sizeof *p->cat->classes, &p->cat->nclasses,
                     class_item, NULL))
        return false;
    return emb_catalog_index(p->cat);
}

static void syntax_error(struct catalog_parser *p, const yaml_parser_t *parser,
                         const char *text, size_t len)
{
    yaml_mark_t mark = parser->problem_mark;
    if (parser->error == YAML_READER_ERROR) {
        /* The reader reports a byte offset, not a mark: count lines up to it. */
        size_t end = parser->problem_offset < len ? parser->problem_offset : len;
        mark.line = mark.column = 0;
        for (size_t i = 0; i < end; i++) {
            if (text[i] == '\n') {
                mark.line++;
                mark.column = 0;
            } else {
                mark.column++;
            }
        }
        parse_error(p, mark, "%s (byte %zu)", parser->problem ? parser->problem : "bad input",
                    parser->problem_offset);
        return;
    }
    if (parser->context != NULL)
        parse_error(p, mark, "YAML syntax error: %s (%s at line %zu)",
                    parser->problem ? parser->problem : "unknown", parser->context,
                    parser->context_mark.line + 1);
    else
        parse_error(p, mark, "YAML syntax error: %s",
                    parser->problem ? parser->problem : "unknown");
}

/* After the one document, anything but the end of the stream is refused. */
static bool parse_rest(struct catalog_parser *p, yaml_parser_t *parser, const char *text,
                       size_t len)
{
    yaml_document_t next;
    if (!yaml_parser_load(parser, &next)) {
        syntax_error(p, parser, text, len);
        return false;
    }
    yaml_node_t *extra = yaml_document_get_root_node(&next);
    if (extra != NULL)
        parse_error(p, extra->start_mark, "a second YAML document; the catalogue is one");
    yaml_document_delete(&next);
    return extra == NULL;
}

static bool parse_document(struct catalog_parser *p, yaml_parser_t *parser, const char *text,
                           size_t len)
{
    yaml_mark_t start = {0, 0, 0};
    if (!yaml_parser_load(parser, &p->doc)) {
        syntax_error(p, parser, text, len);
        return false;
    }
    bool ok = false;
    yaml_node_t *root = yaml_document_get_root_node(&p->doc);
    if (root == NULL) {
        parse_error(p, start, "the catalogue is empty");
    } else {
        ok = parse_root(p, root);
        if (!ok && !p->reported)
            parse_error(p, start, "out of memory");
    }
    yaml_document_delete(&p->doc);
    return ok && parse_rest(p, parser, text, len);
}

struct emb_catalog *emb_catalog_read(const char *text, size_t len, struct emb_problems *problems)
{
    struct catalog_parser p = {.problems = problems};
    yaml_mark_t start = {0, 0, 0};
    yaml_parser_t parser;
    p.cat = calloc(1, sizeof *p.cat);
    if (p.cat != NULL)
        p.cat->by_id = calloc(65536, sizeof *p.cat->by_id);
    if (p.cat == NULL || p.cat->by_id == NULL || !yaml_parser_initialize(&parser)) {
        parse_error(&p, start, "out of memory");
        emb_catalog_free(p.cat);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    bool ok = parse_document(&p, &parser, text, len);
    yaml_parser_delete(&parser);
    if (!ok) {
        emb_catalog_free(p.cat);
        return NULL;
    }
    return p.cat;
}

struct emb_catalog *emb_catalog_read_file(const char *path, struct emb_problems *problems)
{
    char err[256];
    size_t len;
    uint8_t *text = emb_input_read_max(path, CATALOG_MAX_FILE, &len, err, sizeof err);
    if (text == NULL && problems != NULL)
        emb_report(problems, EMB_ERROR, -1, "%s", err);
    struct emb_catalog *cat = text != NULL ? emb_catalog_read((const char *)text, len, problems) : NULL;
    free(text);
    return cat;
}

struct emb_catalog *emb_catalog_parse(const char *text, size_t len, const char *filename,
                                      char *err, size_t errlen)
{
    struct emb_problems ps;
    emb_problems_init(&ps, filename != NULL ? filename : "<catalogue>");
    ps.max_kept = 1;
    struct emb_catalog *cat = emb_catalog_read(text, len, &ps);
    if (cat == NULL && errlen > 0)
        snprintf(err, errlen, "%s:%s", ps.file, ps.n > 0 ? ps.items[0].message : "1:1: out of memory");
    else if (errlen > 0)
        err[0] = '\0';
    emb_problems_free(&ps);
    return cat;
}

struct emb_catalog *emb_catalog_load(const char *path, char *err, size_t errlen)
{
    char why[256];
    size_t len;
    uint8_t *text = emb_input_read_max(path, CATALOG_MAX_FILE, &len, why, sizeof why);
    if (text == NULL) {
        snprintf(err, errlen, "%s: %s", path, why);
        return NULL;
    }
    struct emb_catalog *cat = emb_catalog_parse((const char *)text, len, path, err, errlen);
    free(text);
    return cat;
}
