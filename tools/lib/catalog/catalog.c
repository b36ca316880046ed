/* The trace event catalogue: YAML in, validated and laid-out events out.
 *
 * libyaml's document API gives a node tree with a mark on every node, so each check can
 * point at the line and column it is about. The tree is walked by the schema (top level,
 * class, event, field), so its depth is bounded even if an alias makes it cyclic.
 */
#define _POSIX_C_SOURCE 200809L

#include "catalog.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include <emb/crc.h>
#include <emb/wire.h>

#define EMB__CAT_MAX_PAYLOAD 64u /* CONFIG_EMB_TRACE_MAX_PAYLOAD's default */
#define EMB__CAT_MAX_CHARS 32u
#define EMB__CAT_MAX_CLASSES 32u
#define EMB__CAT_MAX_NAME 64u
#define EMB__CAT_MAX_FILE (16u << 20)

struct emb__cat_parser {
    yaml_document_t doc;
    const char *file;
    char *err;
    size_t errlen;
    struct emb_catalog *cat;
};

static void emb__cat_error(struct emb__cat_parser *p, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void emb__cat_error(struct emb__cat_parser *p, yaml_mark_t mark, const char *fmt, ...)
{
    if (p->errlen == 0)
        return;
    int n = snprintf(p->err, p->errlen, "%s:%zu:%zu: ", p->file, mark.line + 1, mark.column + 1);
    if (n < 0 || (size_t)n >= p->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static void *emb__xcalloc(size_t n, size_t size)
{
    return calloc(n == 0 ? 1 : n, size);
}

static char *emb__xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* ---- Node helpers ---- */

static yaml_node_t *emb__node(struct emb__cat_parser *p, yaml_node_item_t i)
{
    return yaml_document_get_node(&p->doc, i);
}

static const char *emb__scalar(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static const char *emb__kind(const yaml_node_t *n)
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

static bool emb__expect(struct emb__cat_parser *p, const yaml_node_t *n, yaml_node_type_t type,
                        const char *what)
{
    if (n->type == type)
        return true;
    const char *want = type == YAML_SCALAR_NODE     ? "a scalar"
                       : type == YAML_SEQUENCE_NODE ? "a list"
                                                    : "a mapping";
    emb__cat_error(p, n->start_mark, "%s must be %s, not %s", what, want, emb__kind(n));
    return false;
}

/* Looks up the keys of a mapping against a closed list: an unknown key, a duplicate key or
 * a missing required key (named with a leading '!') is an error. out[i] gets the value of
 * keys[i], or NULL. */
static bool emb__map_keys(struct emb__cat_parser *p, const yaml_node_t *map, const char *what,
                          const char *const *keys, size_t nkeys, yaml_node_t **out)
{
    if (!emb__expect(p, map, YAML_MAPPING_NODE, what))
        return false;
    for (size_t i = 0; i < nkeys; i++)
        out[i] = NULL;
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
         pair < map->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = emb__node(p, pair->key);
        yaml_node_t *v = emb__node(p, pair->value);
        if (k == NULL || v == NULL)
            return false;
        if (k->type != YAML_SCALAR_NODE) {
            emb__cat_error(p, k->start_mark, "a key of %s must be a scalar", what);
            return false;
        }
        size_t i;
        for (i = 0; i < nkeys; i++) {
            const char *key = keys[i][0] == '!' ? keys[i] + 1 : keys[i];
            if (strcmp(key, emb__scalar(k)) == 0)
                break;
        }
        if (i == nkeys) {
            emb__cat_error(p, k->start_mark, "unknown key `%s` in %s", emb__scalar(k), what);
            return false;
        }
        if (out[i] != NULL) {
            emb__cat_error(p, k->start_mark, "duplicate key `%s` in %s", emb__scalar(k), what);
            return false;
        }
        out[i] = v;
    }
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i][0] == '!' && out[i] == NULL) {
            emb__cat_error(p, map->start_mark, "%s has no `%s`", what, keys[i] + 1);
            return false;
        }
    }
    return true;
}

/* Integers as the catalogue writes them: decimal or 0x hexadecimal, optionally negative. */
static bool emb__int(struct emb__cat_parser *p, const yaml_node_t *n, int64_t min, int64_t max,
                     const char *what, int64_t *out)
{
    if (!emb__expect(p, n, YAML_SCALAR_NODE, what))
        return false;
    const char *s = emb__scalar(n);
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
        emb__cat_error(p, n->start_mark, "%s must be an integer, not `%s`", what, s);
        return false;
    }
    errno = 0;
    unsigned long long u = strtoull(d, NULL, base);
    bool range = errno == 0;
    int64_t v = 0;
    if (range) {
        if (neg)
            range = u <= (unsigned long long)INT64_MAX + 1u;
        else
            range = u <= (unsigned long long)INT64_MAX;
    }
    if (range)
        v = neg ? (int64_t)(0u - u) : (int64_t)u;
    if (!range || v < min || v > max) {
        emb__cat_error(p, n->start_mark, "%s %s is out of range %" PRId64 "..%" PRId64, what, s,
                       min, max);
        return false;
    }
    *out = v;
    return true;
}

static bool emb__is_keyword(const char *s)
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
static bool emb__ident(struct emb__cat_parser *p, const yaml_node_t *n, const char *what,
                       bool refuse_keywords)
{
    if (!emb__expect(p, n, YAML_SCALAR_NODE, what))
        return false;
    const char *s = emb__scalar(n);
    size_t len = strlen(s);
    bool valid = len > 0 && len <= EMB__CAT_MAX_NAME && s[0] >= 'a' && s[0] <= 'z';
    for (size_t i = 0; valid && i < len; i++) {
        char c = s[i];
        valid = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (!valid) {
        emb__cat_error(p, n->start_mark,
                       "%s `%s` is not a lower-case C identifier (a letter, then letters, "
                       "digits or _; at most %u characters)",
                       what, s, EMB__CAT_MAX_NAME);
        return false;
    }
    if (strncmp(s, "emb_", 4) == 0) {
        emb__cat_error(p, n->start_mark, "%s `%s` must not start with emb_ (reserved)", what, s);
        return false;
    }
    if (refuse_keywords && emb__is_keyword(s)) {
        emb__cat_error(p, n->start_mark, "%s `%s` is a C keyword", what, s);
        return false;
    }
    return true;
}

static bool emb__string(struct emb__cat_parser *p, const yaml_node_t *n, const char *what,
                        char **out)
{
    if (n == NULL) {
        *out = NULL;
        return true;
    }
    if (!emb__expect(p, n, YAML_SCALAR_NODE, what))
        return false;
    const char *s = emb__scalar(n);
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

/* ---- Types ---- */

static const struct {
    const char *name;
    enum emb_catalog_type type;
    uint32_t size;
} emb__types[] = {
    {"u8", EMB_CAT_U8, 1},   {"u16", EMB_CAT_U16, 2}, {"u32", EMB_CAT_U32, 4},
    {"u64", EMB_CAT_U64, 8}, {"i8", EMB_CAT_I8, 1},   {"i16", EMB_CAT_I16, 2},
    {"i32", EMB_CAT_I32, 4}, {"i64", EMB_CAT_I64, 8}, {"bool", EMB_CAT_BOOL, 1},
};

const char *emb_catalog_type_name(enum emb_catalog_type type)
{
    for (size_t i = 0; i < sizeof emb__types / sizeof emb__types[0]; i++)
        if (emb__types[i].type == type)
            return emb__types[i].name;
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

static const char *const emb__meanings[] = {"", "thread", "handle", "irq", "pc", "cycles", "frame"};

const char *emb_catalog_meaning_name(enum emb_catalog_meaning meaning)
{
    if ((size_t)meaning < sizeof emb__meanings / sizeof emb__meanings[0])
        return emb__meanings[meaning];
    return "";
}

static bool emb__is_int(enum emb_catalog_type t)
{
    return t != EMB_CAT_BOOL && t != EMB_CAT_CHARS;
}

static bool emb__is_signed(enum emb_catalog_type t)
{
    return t == EMB_CAT_I8 || t == EMB_CAT_I16 || t == EMB_CAT_I32 || t == EMB_CAT_I64;
}

static void emb__type_range(const struct emb_catalog_field *f, int64_t *min, int64_t *max)
{
    if (emb__is_signed(f->type)) {
        *max = f->size == 8 ? INT64_MAX : (int64_t)((UINT64_C(1) << (8 * f->size - 1)) - 1);
        *min = -*max - 1;
    } else {
        *min = 0;
        *max = f->size == 8 ? INT64_MAX : (int64_t)((UINT64_C(1) << (8 * f->size)) - 1);
    }
}

static bool emb__parse_type(struct emb__cat_parser *p, const yaml_node_t *n,
                            struct emb_catalog_field *f)
{
    if (!emb__expect(p, n, YAML_SCALAR_NODE, "a field's type"))
        return false;
    const char *s = emb__scalar(n);
    for (size_t i = 0; i < sizeof emb__types / sizeof emb__types[0]; i++) {
        if (strcmp(s, emb__types[i].name) == 0) {
            f->type = emb__types[i].type;
            f->size = emb__types[i].size;
            f->align = f->size < 4 ? f->size : 4;
            return true;
        }
    }
    if (strncmp(s, "char[", 5) == 0) {
        const char *d = s + 5;
        char *end;
        errno = 0;
        unsigned long n_chars = (d[0] >= '0' && d[0] <= '9') ? strtoul(d, &end, 10) : 0;
        if (errno == 0 && n_chars > 0 && end[0] == ']' && end[1] == '\0') {
            if (n_chars % 4 != 0 || n_chars > EMB__CAT_MAX_CHARS) {
                emb__cat_error(p, n->start_mark,
                               "`%s`: N in char[N] must be a multiple of 4, at most %u", s,
                               EMB__CAT_MAX_CHARS);
                return false;
            }
            f->type = EMB_CAT_CHARS;
            f->size = (uint32_t)n_chars;
            f->align = 4;
            return true;
        }
    }
    emb__cat_error(p, n->start_mark,
                   "unknown type `%s` (u8 u16 u32 u64 i8 i16 i32 i64 bool char[N])", s);
    return false;
}

/* ---- Fields ---- */

static bool emb__parse_compare(struct emb__cat_parser *p, const yaml_node_t *n,
                               struct emb_catalog_field *f)
{
    if (n->type == YAML_SCALAR_NODE) {
        if (strcmp(emb__scalar(n), "exact") == 0) {
            f->compare = EMB_CAT_COMPARE_EXACT;
            return true;
        }
        if (strcmp(emb__scalar(n), "ignore") == 0) {
            f->compare = EMB_CAT_COMPARE_IGNORE;
            return true;
        }
        emb__cat_error(p, n->start_mark,
                       "unknown compare policy `%s` (exact, ignore, {tolerance: N}, "
                       "{tolerance_pct: N})",
                       emb__scalar(n));
        return false;
    }
    static const char *const keys[] = {"tolerance", "tolerance_pct"};
    yaml_node_t *v[2];
    if (!emb__map_keys(p, n, "a compare policy", keys, 2, v))
        return false;
    if ((v[0] == NULL) == (v[1] == NULL)) {
        emb__cat_error(p, n->start_mark,
                       "a compare policy has exactly one of `tolerance` and `tolerance_pct`");
        return false;
    }
    yaml_node_t *t = v[0] != NULL ? v[0] : v[1];
    if (!emb__expect(p, t, YAML_SCALAR_NODE, "a tolerance"))
        return false;
    char *end;
    errno = 0;
    double d = strtod(emb__scalar(t), &end);
    if (errno != 0 || end == emb__scalar(t) || *end != '\0' || !isfinite(d) || d < 0) {
        emb__cat_error(p, t->start_mark, "tolerance `%s` is not a number >= 0", emb__scalar(t));
        return false;
    }
    if (!emb__is_int(f->type)) {
        emb__cat_error(p, n->start_mark, "a tolerance needs an integer field, not `%s`",
                       emb_catalog_type_name(f->type));
        return false;
    }
    f->compare = v[0] != NULL ? EMB_CAT_COMPARE_TOLERANCE : EMB_CAT_COMPARE_TOLERANCE_PCT;
    f->tolerance = d;
    return true;
}

static bool emb__parse_values(struct emb__cat_parser *p, const yaml_node_t *n,
                              struct emb_catalog_field *f)
{
    if (!emb__expect(p, n, YAML_MAPPING_NODE, "`values`"))
        return false;
    if (!emb__is_int(f->type)) {
        emb__cat_error(p, n->start_mark, "`values` needs an integer field, not `%s`",
                       emb_catalog_type_name(f->type));
        return false;
    }
    size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    f->values = emb__xcalloc(count, sizeof *f->values);
    if (f->values == NULL)
        return false;
    int64_t min, max;
    emb__type_range(f, &min, &max);
    if (min < INT32_MIN)
        min = INT32_MIN;
    if (max > INT32_MAX)
        max = INT32_MAX;
    for (size_t i = 0; i < count; i++) {
        yaml_node_pair_t *pair = &n->data.mapping.pairs.start[i];
        yaml_node_t *k = emb__node(p, pair->key);
        yaml_node_t *v = emb__node(p, pair->value);
        if (k == NULL || v == NULL)
            return false;
        if (!emb__ident(p, k, "a value label", false))
            return false;
        int64_t value;
        if (!emb__int(p, v, min, max, "an enumeration value", &value))
            return false;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(f->values[j].name, emb__scalar(k)) == 0) {
                emb__cat_error(p, k->start_mark, "duplicate label `%s`", emb__scalar(k));
                return false;
            }
            if (f->values[j].value == value) {
                emb__cat_error(p, v->start_mark, "value %" PRId64 " is already `%s`", value,
                               f->values[j].name);
                return false;
            }
        }
        f->values[i].name = emb__xstrdup(emb__scalar(k));
        f->values[i].value = value;
        f->nvalues = i + 1;
        if (f->values[i].name == NULL)
            return false;
    }
    return true;
}

static bool emb__parse_field(struct emb__cat_parser *p, const yaml_node_t *n,
                             struct emb_catalog_field *f)
{
    static const char *const keys[] = {"!name", "!type", "meaning", "display",
                                       "compare", "values", "doc"};
    yaml_node_t *v[7];
    if (!emb__map_keys(p, n, "a field", keys, 7, v))
        return false;
    f->line = (unsigned)n->start_mark.line + 1;
    if (!emb__ident(p, v[0], "field name", true))
        return false;
    f->name = emb__xstrdup(emb__scalar(v[0]));
    if (f->name == NULL || !emb__parse_type(p, v[1], f))
        return false;
    if (v[2] != NULL) {
        if (!emb__expect(p, v[2], YAML_SCALAR_NODE, "`meaning`"))
            return false;
        size_t i;
        for (i = 1; i < sizeof emb__meanings / sizeof emb__meanings[0]; i++)
            if (strcmp(emb__scalar(v[2]), emb__meanings[i]) == 0)
                break;
        if (i == sizeof emb__meanings / sizeof emb__meanings[0]) {
            emb__cat_error(p, v[2]->start_mark,
                           "unknown meaning `%s` (thread handle irq pc cycles frame)",
                           emb__scalar(v[2]));
            return false;
        }
        if (!emb__is_int(f->type)) {
            emb__cat_error(p, v[2]->start_mark, "`meaning` needs an integer field");
            return false;
        }
        f->meaning = (enum emb_catalog_meaning)i;
    }
    if (v[3] != NULL) {
        if (!emb__expect(p, v[3], YAML_SCALAR_NODE, "`display`"))
            return false;
        if (strcmp(emb__scalar(v[3]), "hex") != 0 && strcmp(emb__scalar(v[3]), "dec") != 0) {
            emb__cat_error(p, v[3]->start_mark, "unknown display `%s` (hex or dec)",
                           emb__scalar(v[3]));
            return false;
        }
        f->hex = strcmp(emb__scalar(v[3]), "hex") == 0;
        if (f->hex && !emb__is_int(f->type)) {
            emb__cat_error(p, v[3]->start_mark, "`display: hex` needs an integer field");
            return false;
        }
    }
    /* Cycle counts differ from run to run; the comparison looks at intervals instead. */
    f->compare = f->meaning == EMB_CAT_MEANING_CYCLES ? EMB_CAT_COMPARE_IGNORE
                                                      : EMB_CAT_COMPARE_EXACT;
    if (v[4] != NULL && !emb__parse_compare(p, v[4], f))
        return false;
    if (v[5] != NULL && !emb__parse_values(p, v[5], f))
        return false;
    return emb__string(p, v[6], "a field's doc", &f->doc);
}

/* ---- Events and classes ---- */

static const struct emb_catalog_event *emb__find_event(const struct emb_catalog *cat,
                                                   const char *name)
{
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++)
            if (cat->classes[c].events[e].name != NULL &&
                strcmp(cat->classes[c].events[e].name, name) == 0)
                return &cat->classes[c].events[e];
    return NULL;
}

static bool emb__layout(struct emb__cat_parser *p, const yaml_node_t *n, struct emb_catalog_event *ev)
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
    if (ev->payload_size > EMB__CAT_MAX_PAYLOAD) {
        emb__cat_error(p, n->start_mark,
                       "the payload of `%s` is %" PRIu32 " bytes, more than %u "
                       "(CONFIG_EMB_TRACE_MAX_PAYLOAD)",
                       ev->name, ev->payload_size, EMB__CAT_MAX_PAYLOAD);
        return false;
    }
    return true;
}

static bool emb__parse_event(struct emb__cat_parser *p, const yaml_node_t *n,
                             struct emb_catalog_event *ev)
{
    static const char *const keys[] = {"!name", "!id", "doc", "fields"};
    yaml_node_t *v[4];
    if (!emb__map_keys(p, n, "an event", keys, 4, v))
        return false;
    ev->line = (unsigned)n->start_mark.line + 1;
    if (!emb__ident(p, v[0], "event name", false))
        return false;
    const struct emb_catalog_event *other = emb__find_event(p->cat, emb__scalar(v[0]));
    if (other != NULL) {
        emb__cat_error(p, v[0]->start_mark, "event name `%s` is already used (line %u)",
                       emb__scalar(v[0]), other->line);
        return false;
    }
    ev->name = emb__xstrdup(emb__scalar(v[0]));
    int64_t id;
    if (ev->name == NULL || !emb__int(p, v[1], 1, 65535, "event id", &id))
        return false;
    other = p->cat->by_id[id];
    if (other != NULL) {
        emb__cat_error(p, v[1]->start_mark, "event id 0x%04X is already `%s` (line %u)",
                       (unsigned)id, other->name, other->line);
        return false;
    }
    ev->id = (uint16_t)id;
    p->cat->by_id[id] = ev;
    if (!emb__string(p, v[2], "an event's doc", &ev->doc))
        return false;
    if (v[3] != NULL) {
        if (!emb__expect(p, v[3], YAML_SEQUENCE_NODE, "`fields`"))
            return false;
        size_t count = (size_t)(v[3]->data.sequence.items.top - v[3]->data.sequence.items.start);
        if (count > EMB__CAT_MAX_PAYLOAD) {
            emb__cat_error(p, v[3]->start_mark, "`%s` has more than %u fields", ev->name,
                           EMB__CAT_MAX_PAYLOAD);
            return false;
        }
        ev->fields = emb__xcalloc(count, sizeof *ev->fields);
        if (ev->fields == NULL)
            return false;
        for (size_t i = 0; i < count; i++) {
            yaml_node_t *fn = emb__node(p, v[3]->data.sequence.items.start[i]);
            if (fn == NULL)
                return false;
            ev->nfields = i + 1;
            if (!emb__parse_field(p, fn, &ev->fields[i]))
                return false;
            for (size_t j = 0; j < i; j++) {
                if (strcmp(ev->fields[j].name, ev->fields[i].name) == 0) {
                    emb__cat_error(p, fn->start_mark, "field `%s` appears twice in `%s`",
                                   ev->fields[i].name, ev->name);
                    return false;
                }
            }
        }
    }
    return emb__layout(p, v[0], ev);
}

static bool emb__parse_class(struct emb__cat_parser *p, const yaml_node_t *n,
                             struct emb_catalog_class *cls)
{
    static const char *const keys[] = {"!name", "!id", "doc", "!events"};
    yaml_node_t *v[4];
    if (!emb__map_keys(p, n, "a class", keys, 4, v))
        return false;
    cls->line = (unsigned)n->start_mark.line + 1;
    if (!emb__ident(p, v[0], "class name", false))
        return false;
    for (size_t i = 0; i < p->cat->nclasses; i++) {
        const struct emb_catalog_class *o = &p->cat->classes[i];
        if (o != cls && o->name != NULL && strcmp(o->name, emb__scalar(v[0])) == 0) {
            emb__cat_error(p, v[0]->start_mark, "class name `%s` is already used (line %u)",
                           o->name, o->line);
            return false;
        }
    }
    cls->name = emb__xstrdup(emb__scalar(v[0]));
    int64_t id;
    if (cls->name == NULL ||
        !emb__int(p, v[1], 0, EMB__CAT_MAX_CLASSES - 1, "class id", &id))
        return false;
    for (size_t i = 0; i < p->cat->nclasses; i++) {
        const struct emb_catalog_class *o = &p->cat->classes[i];
        if (o != cls && o->name != NULL && o->id == (unsigned)id) {
            emb__cat_error(p, v[1]->start_mark, "class id %u is already `%s` (line %u)",
                           (unsigned)id, o->name, o->line);
            return false;
        }
    }
    cls->id = (unsigned)id;
    if (!emb__string(p, v[2], "a class's doc", &cls->doc))
        return false;
    if (!emb__expect(p, v[3], YAML_SEQUENCE_NODE, "`events`"))
        return false;
    size_t count = (size_t)(v[3]->data.sequence.items.top - v[3]->data.sequence.items.start);
    if (count > 65535) {
        emb__cat_error(p, v[3]->start_mark, "too many events");
        return false;
    }
    cls->events = emb__xcalloc(count, sizeof *cls->events);
    if (cls->events == NULL)
        return false;
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *en = emb__node(p, v[3]->data.sequence.items.start[i]);
        if (en == NULL)
            return false;
        cls->nevents = i + 1;
        if (!emb__parse_event(p, en, &cls->events[i]))
            return false;
    }
    return true;
}

static int emb__class_cmp(const void *a, const void *b)
{
    const struct emb_catalog_class *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* ---- Checksum ---- */

static uint32_t emb__crc_line(uint32_t crc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static uint32_t emb__crc_line(uint32_t crc, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    return emb_crc32(crc, line, (size_t)n);
}

/* The canonical text of docs/formats/trace.md ("Catalogue checksum"): classes by id, then
 * events by id, each followed by its fields in order; decimal numbers, one space between
 * words, each line ending in '\n'. */
static uint32_t emb__checksum(const struct emb_catalog *cat)
{
    uint32_t crc = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        crc = emb__crc_line(crc, "class %u %s\n", cat->classes[c].id, cat->classes[c].name);
    for (uint32_t id = 1; id <= 65535u; id++) {
        const struct emb_catalog_event *ev = cat->by_id[id];
        if (ev == NULL)
            continue;
        crc = emb__crc_line(crc, "event %u %s %u\n", (unsigned)ev->id, ev->name, ev->cls->id);
        for (size_t i = 0; i < ev->nfields; i++) {
            char type[16];
            crc = emb__crc_line(crc, "field %s %s %" PRIu32 "\n", ev->fields[i].name,
                                emb_catalog_field_type_name(&ev->fields[i], type, sizeof type),
                                ev->fields[i].offset);
        }
    }
    return crc;
}

/* ---- Top level ---- */

static bool emb__parse_root(struct emb__cat_parser *p, const yaml_node_t *root)
{
    static const char *const keys[] = {"!version", "!classes"};
    yaml_node_t *v[2];
    if (!emb__map_keys(p, root, "the catalogue", keys, 2, v))
        return false;
    int64_t version;
    if (!emb__int(p, v[0], 1, 65535, "version", &version))
        return false;
    p->cat->version = (unsigned)version;
    if (!emb__expect(p, v[1], YAML_SEQUENCE_NODE, "`classes`"))
        return false;
    size_t count = (size_t)(v[1]->data.sequence.items.top - v[1]->data.sequence.items.start);
    if (count == 0 || count > EMB__CAT_MAX_CLASSES) {
        emb__cat_error(p, v[1]->start_mark, "`classes` must hold 1 to %u classes",
                       EMB__CAT_MAX_CLASSES);
        return false;
    }
    p->cat->classes = emb__xcalloc(count, sizeof *p->cat->classes);
    if (p->cat->classes == NULL)
        return false;
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *cn = emb__node(p, v[1]->data.sequence.items.start[i]);
        if (cn == NULL)
            return false;
        p->cat->nclasses = i + 1;
        if (!emb__parse_class(p, cn, &p->cat->classes[i]))
            return false;
    }
    /* Sorting moves the classes, so the id table and back pointers are rebuilt after. */
    qsort(p->cat->classes, p->cat->nclasses, sizeof *p->cat->classes, emb__class_cmp);
    for (size_t c = 0; c < p->cat->nclasses; c++) {
        struct emb_catalog_class *cls = &p->cat->classes[c];
        for (size_t e = 0; e < cls->nevents; e++) {
            cls->events[e].cls = cls;
            p->cat->by_id[cls->events[e].id] = &cls->events[e];
        }
    }
    p->cat->checksum = emb__checksum(p->cat);
    return true;
}

static void emb__syntax_error(struct emb__cat_parser *p, const yaml_parser_t *parser,
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
        emb__cat_error(p, mark, "%s (byte %zu)", parser->problem ? parser->problem : "bad input",
                       parser->problem_offset);
        return;
    }
    if (parser->context != NULL)
        emb__cat_error(p, mark, "YAML syntax error: %s (%s at line %zu)",
                       parser->problem ? parser->problem : "unknown", parser->context,
                       parser->context_mark.line + 1);
    else
        emb__cat_error(p, mark, "YAML syntax error: %s",
                       parser->problem ? parser->problem : "unknown");
}

struct emb_catalog *emb_catalog_parse(const char *text, size_t len, const char *filename,
                                      char *err, size_t errlen)
{
    struct emb__cat_parser p = {.file = filename != NULL ? filename : "<catalogue>",
                                .err = err,
                                .errlen = errlen};
    yaml_mark_t start = {0, 0, 0};
    if (errlen > 0)
        err[0] = '\0';
    p.cat = calloc(1, sizeof *p.cat);
    if (p.cat != NULL)
        p.cat->by_id = calloc(65536, sizeof *p.cat->by_id);
    if (p.cat == NULL || p.cat->by_id == NULL) {
        emb__cat_error(&p, start, "out of memory");
        emb_catalog_free(p.cat);
        return NULL;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        emb__cat_error(&p, start, "out of memory");
        emb_catalog_free(p.cat);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    bool ok = false;
    if (!yaml_parser_load(&parser, &p.doc)) {
        emb__syntax_error(&p, &parser, text, len);
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&p.doc);
        if (root == NULL) {
            emb__cat_error(&p, start, "the catalogue is empty");
        } else {
            ok = emb__parse_root(&p, root);
            if (!ok && errlen > 0 && err[0] == '\0')
                emb__cat_error(&p, start, "out of memory");
        }
        yaml_document_delete(&p.doc);
        if (ok) {
            yaml_document_t next;
            if (!yaml_parser_load(&parser, &next)) {
                emb__syntax_error(&p, &parser, text, len);
                ok = false;
            } else {
                yaml_node_t *extra = yaml_document_get_root_node(&next);
                if (extra != NULL) {
                    emb__cat_error(&p, extra->start_mark,
                                   "a second YAML document; the catalogue is one");
                    ok = false;
                }
                yaml_document_delete(&next);
            }
        }
    }
    yaml_parser_delete(&parser);
    if (!ok) {
        emb_catalog_free(p.cat);
        return NULL;
    }
    return p.cat;
}

struct emb_catalog *emb_catalog_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
        if (len == cap) {
            if (cap >= EMB__CAT_MAX_FILE) {
                snprintf(err, errlen, "%s: larger than %u bytes", path, EMB__CAT_MAX_FILE);
                free(buf);
                fclose(f);
                return NULL;
            }
            char *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (buf == NULL || read_error) {
        snprintf(err, errlen, "%s: %s", path, buf == NULL ? "out of memory" : "read error");
        free(buf);
        return NULL;
    }
    struct emb_catalog *cat = emb_catalog_parse(buf, len, path, err, errlen);
    free(buf);
    return cat;
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
                free(f->values);
                free(f->name);
                free(f->doc);
            }
            free(ev->fields);
            free(ev->name);
            free(ev->doc);
        }
        free(cls->events);
        free(cls->name);
        free(cls->doc);
    }
    free(cat->classes);
    free(cat->by_id);
    free(cat);
}

/* ---- Queries ---- */

const struct emb_catalog_event *emb_catalog_event(const struct emb_catalog *cat, uint16_t id)
{
    return cat->by_id[id];
}

const struct emb_catalog_event *emb_catalog_find(const struct emb_catalog *cat, const char *name)
{
    return emb__find_event(cat, name);
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
    if (!emb__is_signed(f->type))
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

/* ---- CTF 1.8 metadata ---- */

/* Field names that are TSDL keywords get CTF's escape, a leading underscore, which readers
 * strip again (catalogue names never start with one). */
static const char *emb__tsdl_prefix(const char *name)
{
    static const char *const kw[] = {
        "align",  "callsite", "const", "char",   "clock",   "double",         "enum",
        "env",    "event",    "floating_point",  "float",   "integer",        "int",
        "long",   "short",    "signed",          "stream",  "string",         "struct",
        "trace",  "typealias", "typedef",        "unsigned", "variant",       "void",
        "_Bool",  "_Complex", "_Imaginary",
    };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strcmp(name, kw[i]) == 0)
            return "_";
    return "";
}

static void emb__tsdl_integer(FILE *out, const struct emb_catalog_field *f)
{
    unsigned bits = (unsigned)f->size * 8u;
    unsigned align = (unsigned)f->align * 8u;
    fprintf(out, "integer { size = %u; align = %u; signed = %s;%s }", bits, align,
            emb__is_signed(f->type) ? "true" : "false", f->hex ? " base = 16;" : "");
}

/* Padding the layout has but `align` cannot express, as one unsigned integer of the
 * missing bytes. The leading underscore is CTF 1.8's escape, which readers strip, so it
 * shows as emb_pad... (catalogue names never start with emb_). */
static void emb__tsdl_pad(FILE *out, uint32_t bytes, const char *suffix)
{
    fprintf(out, "\t\tinteger { size = %" PRIu32 "; align = 8; signed = false; } _emb_pad%s;\n",
            bytes * 8u, suffix);
}

/* `pos` is where a CTF reader is after the previous field. Integers carry their own
 * alignment; a char[N] is an array, which CTF aligns by its element (one byte), so when
 * the reader would not already be at the 4-byte boundary the layout puts it on, explicit
 * padding comes first. */
static void emb__tsdl_field(FILE *out, const struct emb_catalog_field *f, uint32_t *pos)
{
    const char *esc = emb__tsdl_prefix(f->name);
    if (f->type == EMB_CAT_CHARS && *pos < f->offset) {
        char suffix[80];
        snprintf(suffix, sizeof suffix, "_%s", f->name);
        emb__tsdl_pad(out, f->offset - *pos, suffix);
    }
    *pos = f->offset + f->size;
    fprintf(out, "\t\t");
    if (f->type == EMB_CAT_CHARS) {
        fprintf(out, "integer { size = 8; align = 8; signed = false; encoding = UTF8; } ");
        fprintf(out, "%s%s[%" PRIu32 "];", esc, f->name, f->size);
    } else if (f->nvalues > 0) {
        fprintf(out, "enum : ");
        emb__tsdl_integer(out, f);
        fprintf(out, " {");
        for (size_t i = 0; i < f->nvalues; i++)
            fprintf(out, "%s \"%s\" = %" PRId64, i ? "," : "", f->values[i].name,
                    f->values[i].value);
        fprintf(out, " } %s%s;", esc, f->name);
    } else {
        emb__tsdl_integer(out, f);
        fprintf(out, " %s%s;", esc, f->name);
    }
    fputc('\n', out);
}

static void emb__tsdl_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if (*s == '\n')
            fputc(' ', out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

int emb_catalog_write_tsdl(const struct emb_catalog *cat, const struct emb_tsdl_params *p,
                           FILE *out)
{
    const uint8_t *u = p->uuid;
    char uuid[37];
    snprintf(uuid, sizeof uuid,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    uint64_t hz = p->clock_hz != 0 ? p->clock_hz : 1000000000u;
    /* offset_s + offset/freq = clock_offset_ns, with 0 <= offset < freq. */
    int64_t ns = p->clock_offset_ns;
    int64_t offset_s = ns / 1000000000;
    int64_t rem_ns = ns % 1000000000;
    if (rem_ns < 0) {
        rem_ns += 1000000000;
        offset_s -= 1;
    }
    uint64_t offset_cycles = (uint64_t)rem_ns * (hz / 1000000000u) +
                             (uint64_t)rem_ns * (hz % 1000000000u) / 1000000000u;

    fprintf(out, "/* CTF 1.8 */\n\n"
                 "/* Trace format version 1 (docs/formats/trace.md), catalogue version %u, "
                 "checksum 0x%08" PRIX32 ". */\n\n",
            cat->version, cat->checksum);
    fprintf(out, "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
                 "typealias integer { size = 16; align = 16; signed = false; } := uint16_t;\n"
                 "typealias integer { size = 32; align = 32; signed = false; } := uint32_t;\n"
                 "typealias integer { size = 64; align = 32; signed = false; } := uint64_t;\n"
                 "\n");
    fprintf(out,
            "trace {\n"
            "\tmajor = 1;\n"
            "\tminor = 8;\n"
            "\tuuid = \"%s\";\n"
            "\tbyte_order = le;\n"
            "\tpacket.header := struct {\n"
            "\t\tuint32_t magic;\n"
            "\t\tuint8_t uuid[16];\n"
            "\t\tuint32_t stream_id;\n"
            "\t\tuint32_t stream_instance_id;\n"
            "\t};\n"
            "};\n\n",
            uuid);
    fprintf(out,
            "env {\n"
            "\tdomain = \"emb\";\n"
            "\ttracer_name = \"emb\";\n"
            "\ttrace_format_version = 1;\n"
            "\tcatalog_version = %u;\n"
            "\tcatalog_checksum = %" PRIu32 ";\n",
            cat->version, cat->checksum);
    if (p->port != NULL) {
        fprintf(out, "\tport = ");
        emb__tsdl_string(out, p->port);
        fprintf(out, ";\n");
    }
    if (p->build_id_hex != NULL) {
        fprintf(out, "\tbuild_id = ");
        emb__tsdl_string(out, p->build_id_hex);
        fprintf(out, ";\n");
    }
    fprintf(out, "};\n\n");
    fprintf(out,
            "clock {\n"
            "\tname = emb_clock;\n"
            "\tdescription = \"emb_port_timestamp()\";\n"
            "\tfreq = %" PRIu64 ";\n"
            "\tprecision = 1;\n"
            "\toffset_s = %" PRId64 ";\n"
            "\toffset = %" PRIu64 ";\n"
            "\tabsolute = %s;\n"
            "};\n\n",
            hz, offset_s, offset_cycles, p->clock_offset_ns != 0 ? "true" : "false");
    fprintf(out,
            "typealias integer { size = 64; align = 32; signed = false; "
            "map = clock.emb_clock.value; } := uint64_clock_t;\n"
            "typealias integer { size = 32; align = 32; signed = false; "
            "map = clock.emb_clock.value; } := uint32_clock_t;\n\n");
    /* The event header's flags word is declared as the stream's event context: same bytes
     * (offset 6 of the event), but babeltrace2 ignores, with a warning on every run, any
     * event header field other than id and timestamp. */
    fprintf(out,
            "stream {\n"
            "\tid = 0;\n"
            "\tpacket.context := struct {\n"
            "\t\tuint32_t packet_seq_num;\n"
            "\t\tuint64_clock_t timestamp_begin;\n"
            "\t\tuint64_clock_t timestamp_end;\n"
            "\t\tuint32_t content_size;\n"
            "\t\tuint32_t packet_size;\n"
            "\t\tuint32_t events_discarded;\n"
            "\t\tuint16_t context_id;\n"
            "\t\tuint16_t context_kind;\n"
            "\t};\n"
            "\tevent.header := struct {\n"
            "\t\tuint32_clock_t timestamp;\n"
            "\t\tuint16_t id;\n"
            "\t};\n"
            "\tevent.context := struct {\n"
            "\t\tuint16_t flags;\n"
            "\t};\n"
            "};\n");
    for (uint32_t id = 1; id <= 65535u; id++) {
        const struct emb_catalog_event *ev = cat->by_id[id];
        if (ev == NULL)
            continue;
        fprintf(out, "\nevent {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n", ev->name,
                (unsigned)ev->id);
        if (ev->nfields > 0) {
            fprintf(out, "\tfields := struct {\n");
            uint32_t pos = 0;
            for (size_t i = 0; i < ev->nfields; i++)
                emb__tsdl_field(out, &ev->fields[i], &pos);
            /* babeltrace2 2.0 looks for the end of a packet's content before aligning to
             * the next event header, so a last event whose padding were left implicit
             * would send it reading a header out of the padding. */
            if (pos < ev->payload_size)
                emb__tsdl_pad(out, ev->payload_size - pos, "");
            fprintf(out, "\t};\n");
        }
        fprintf(out, "};\n");
    }
    return ferror(out) ? -1 : 0;
}
