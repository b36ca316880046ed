/* The Perfetto model's storage: interned strings, tracks, items (trace_perfetto_model.h). */
#define _POSIX_C_SOURCE 200809L
#include "trace_perfetto_model.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static bool rehash(struct emb_perfetto_strings *st, size_t nslots)
{
    uint32_t *slot = calloc(nslots, sizeof *slot);
    if (!slot)
        return false;
    for (size_t id = 1; id < st->n; id++) {
        size_t i = hash(st->s[id]) & (nslots - 1);
        while (slot[i])
            i = (i + 1) & (nslots - 1);
        slot[i] = (uint32_t)id;
    }
    free(st->slot);
    st->slot = slot;
    st->nslots = nslots;
    return true;
}

uint32_t emb_perfetto_intern(struct emb_perfetto_model *m, const char *s)
{
    struct emb_perfetto_strings *st = &m->str;
    if (st->n == 0) { /* id 0 is "no string" */
        char **a = emb_array_grow(st->s, &st->cap, 1, sizeof *st->s);
        if (!a || !rehash(st, 64))
            goto fail;
        st->s = a;
        st->s[0] = NULL;
        st->n = 1;
    }
    size_t i = hash(s) & (st->nslots - 1);
    for (; st->slot[i]; i = (i + 1) & (st->nslots - 1))
        if (!strcmp(st->s[st->slot[i]], s))
            return st->slot[i];
    if (2 * (st->n + 1) > st->nslots) {
        if (!rehash(st, st->nslots * 2))
            goto fail;
        return emb_perfetto_intern(m, s);
    }
    char **a = emb_array_grow(st->s, &st->cap, st->n + 1, sizeof *st->s);
    char *copy = strdup(s);
    if (!a || !copy) {
        free(copy);
        goto fail;
    }
    st->s = a;
    st->s[st->n] = copy;
    st->slot[i] = (uint32_t)st->n;
    return (uint32_t)st->n++;
fail:
    m->failed = true;
    return 0;
}

const char *emb_perfetto_string(const struct emb_perfetto_model *m, uint32_t id)
{
    return id && id < m->str.n ? m->str.s[id] : "";
}

uint32_t emb_perfetto_track_add(struct emb_perfetto_model *m, uint8_t kind, uint16_t tid, uint32_t sort,
                          const char *name)
{
    struct emb_perfetto_track *a = emb_array_grow(m->tracks, &m->tracks_cap, m->ntracks + 1, sizeof *a);
    if (!a) {
        m->failed = true;
        return 0;
    }
    m->tracks = a;
    a[m->ntracks] = (struct emb_perfetto_track){.kind = kind, .tid = tid, .sort = sort,
                                          .name = emb_perfetto_intern(m, name)};
    return (uint32_t)m->ntracks++;
}

uint32_t emb_perfetto_counter_track(struct emb_perfetto_model *m, const char *name)
{
    uint32_t id = emb_perfetto_intern(m, name);
    for (size_t i = 0; i < m->ntracks; i++)
        if (m->tracks[i].kind == EMB_PERFETTO_TRACK_COUNTER && m->tracks[i].name == id)
            return (uint32_t)i;
    return emb_perfetto_track_add(m, EMB_PERFETTO_TRACK_COUNTER, 0, (uint32_t)m->ntracks, name);
}

struct emb_perfetto_item *emb_perfetto_item_add(struct emb_perfetto_model *m, uint8_t kind, uint32_t track,
                                    uint64_t ts, uint64_t key)
{
    static struct emb_perfetto_item spare; /* written to, never read, when memory ran out */
    struct emb_perfetto_item *a = emb_array_grow(m->items, &m->items_cap, m->nitems + 1, sizeof *a);
    if (!a) {
        m->failed = true;
        memset(&spare, 0, sizeof spare);
        return &spare;
    }
    m->items = a;
    struct emb_perfetto_item *it = &a[m->nitems++];
    *it = (struct emb_perfetto_item){.kind = kind, .track = track, .ts = ts, .key = key};
    return it;
}

int emb_perfetto_by_order(const void *pa, const void *pb)
{
    const struct emb_perfetto_order *a = pa, *b = pb;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    if (a->second != b->second)
        return a->second < b->second ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

const struct emb_catalog_field *emb_perfetto_field(const struct emb_catalog_event *ev, const char *name)
{
    for (size_t i = 0; ev && name && i < ev->nfields; i++)
        if (!strcmp(ev->fields[i].name, name))
            return &ev->fields[i];
    return NULL;
}

void emb_perfetto_model_free(struct emb_perfetto_model *m)
{
    for (size_t i = 1; i < m->str.n; i++)
        free(m->str.s[i]);
    EMB_FREE_ALL(m->str.s, m->str.slot, m->tracks, m->items);
    emb_trace_names_free(m->names);
    emb_perfetto_walk_free(m->walk);
    memset(m, 0, sizeof *m);
}
