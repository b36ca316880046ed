/* The argument values the generated call sites pass and the tests expect: a fixed
 * function of (event id, field index, pass). Every event is recorded twice; the second
 * pass takes the complement of the first, so every bit of every field is seen as 0 and
 * as 1, and every signed field is negative once. */
#ifndef EMB_TEST_CALLSITE_VALUES_H
#define EMB_TEST_CALLSITE_VALUES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "catalog.h"

#define EMB_TEST_PASSES 2

static inline uint64_t emb_test_value(uint16_t id, size_t field, unsigned pass)
{
    uint64_t z = ((uint64_t)id << 8 | field) + 0x9E3779B97F4A7C15u; /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return pass == 0 ? z : ~z;
}

/* The field's value as its type holds it: truncated, sign-extended, 0/1 for bool, or a
 * label's value for an enumeration (so a reader prints the label). */
static inline int64_t emb_test_field_value(const struct emb_catalog_event *ev, size_t i,
                                           unsigned pass)
{
    const struct emb_catalog_field *f = &ev->fields[i];
    uint64_t v = emb_test_value(ev->id, i, pass);
    if (f->nvalues > 0)
        return f->values[v % f->nvalues].value;
    switch (f->type) {
    case EMB_CAT_BOOL:
        return (int64_t)(v & 1u);
    case EMB_CAT_U8:
        return (uint8_t)v;
    case EMB_CAT_U16:
        return (uint16_t)v;
    case EMB_CAT_U32:
        return (uint32_t)v;
    case EMB_CAT_I8:
        return (int8_t)(uint8_t)v;
    case EMB_CAT_I16:
        return (int16_t)(uint16_t)v;
    case EMB_CAT_I32:
        return (int32_t)(uint32_t)v;
    default:
        return (int64_t)v;
    }
}

/* The string a char[N] field is given: 0 to N+5 lower-case letters, so some are cut. */
static inline void emb_test_field_string(const struct emb_catalog_event *ev, size_t i,
                                         unsigned pass, char *out, size_t len)
{
    uint64_t v = emb_test_value(ev->id, i, pass);
    size_t n = (size_t)(v % (ev->fields[i].size + 6u));
    if (n + 1 > len)
        n = len - 1;
    for (size_t k = 0; k < n; k++)
        out[k] = (char)('a' + ((v >> 8) + k) % 26u);
    out[n] = '\0';
}

#endif /* EMB_TEST_CALLSITE_VALUES_H */
