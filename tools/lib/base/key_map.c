/* A 64-bit mix and an open-addressing map from a 64-bit key to an index (key_map.h). */
#include "key_map.h"

#include <stdlib.h>
#include <string.h>

uint64_t emb_key_mix64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15u + (h << 6) + (h >> 2);
    h *= 0xFF51AFD7ED558CCDu;
    return h ^ (h >> 33);
}

/* Twice the room, every entry placed again. */
static bool map_grow(struct emb_key_map *m)
{
    struct emb_key_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->keys = malloc(m->cap * sizeof *m->keys);
    m->vals = malloc(m->cap * sizeof *m->vals);
    m->n = 0;
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        *m = old;
        return false;
    }
    memset(m->vals, 0xFF, m->cap * sizeof *m->vals);
    for (size_t i = 0; i < old.cap; i++)
        if (old.vals[i] != UINT32_MAX)
            emb_key_map_put(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
    return true;
}

uint32_t emb_key_map_get(const struct emb_key_map *m, uint64_t key)
{
    if (!m->cap)
        return UINT32_MAX;
    for (size_t i = emb_key_mix64(0, key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->vals[i] == UINT32_MAX)
            return UINT32_MAX;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

bool emb_key_map_put(struct emb_key_map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap && !map_grow(m))
        return false;
    size_t i = emb_key_mix64(0, key) & (m->cap - 1);
    while (m->vals[i] != UINT32_MAX && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->vals[i] == UINT32_MAX)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

void emb_key_map_free(struct emb_key_map *m)
{
    free(m->keys);
    free(m->vals);
}
