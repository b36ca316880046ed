#define _POSIX_C_SOURCE 200809L
#include "trace_names.h"

#include "text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two open-addressing tables keyed by number; obj_init events are few. */
struct emb_trace_names {
    struct slot {
        uint32_t key;
        char name[20];
        int used;
    } *threads, *handles;
    size_t cap; /* per table, a power of two */
};

#define OBJ_TYPE_THREAD 0u /* obj_init type value for threads (catalog/trace_events.yaml) */

static struct slot *find(struct slot *table, size_t cap, uint32_t key)
{
    size_t i = (key * 2654435761u) & (cap - 1u);
    while (table[i].used && table[i].key != key)
        i = (i + 1u) & (cap - 1u);
    return &table[i];
}

static void put(struct slot *table, size_t cap, uint32_t key, const char *name, size_t len)
{
    struct slot *s = find(table, cap, key);
    s->used = 1;
    s->key = key;
    if (len >= sizeof s->name)
        len = sizeof s->name - 1u;
    memcpy(s->name, name, len);
    s->name[len] = '\0';
}

struct emb_trace_names *emb_trace_names_build(const struct emb_trace *t)
{
    const struct emb_catalog_event *init = emb_catalog_find(emb_trace_catalog(t), "obj_init");
    const struct emb_catalog_field *ftype = NULL, *fhandle = NULL, *fname = NULL;
    for (size_t k = 0; init != NULL && k < init->nfields; k++) {
        const struct emb_catalog_field *f = &init->fields[k];
        if (strcmp(f->name, "type") == 0)
            ftype = f;
        else if (strcmp(f->name, "handle") == 0)
            fhandle = f;
        else if (strcmp(f->name, "name") == 0 && f->type == EMB_CAT_CHARS)
            fname = f;
    }
    uint64_t count = ftype && fhandle && fname ? emb_trace_event_count(t, init->id) : 0u;
    struct emb_trace_names *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->cap = 16;
    while (n->cap < 2u * count + 2u)
        n->cap *= 2u;
    n->threads = calloc(n->cap, sizeof *n->threads);
    n->handles = calloc(n->cap, sizeof *n->handles);
    struct emb_trace_cursor *cur = count > 0 ? emb_trace_cursor_open(t) : NULL;
    if (n->threads == NULL || n->handles == NULL || (count > 0 && cur == NULL)) {
        emb_trace_names_free(n);
        return NULL;
    }
    /* In time order: a handle named twice has its later name. */
    for (const struct emb_trace_event *e; cur != NULL && (e = emb_trace_cursor_next(cur));) {
        if (e->type != EMB_TREC_EVENT || e->ev != init)
            continue;
        const char *text;
        size_t len = emb_trace_field_chars(fname, e->payload, &text);
        uint32_t handle = (uint32_t)emb_catalog_field_get_uint(fhandle, e->payload);
        if (emb_catalog_field_get_uint(ftype, e->payload) == OBJ_TYPE_THREAD)
            put(n->threads, n->cap, handle, text, len);
        else
            put(n->handles, n->cap, handle, text, len);
    }
    emb_trace_cursor_close(cur);
    return n;
}

void emb_trace_names_free(struct emb_trace_names *n)
{
    if (n == NULL)
        return;
    free(n->threads);
    free(n->handles);
    free(n);
}

const char *emb_trace_names_thread(const struct emb_trace_names *n, uint32_t thread)
{
    const struct slot *s = n ? find(n->threads, n->cap, thread) : NULL;
    return s && s->used ? s->name : NULL;
}

const char *emb_trace_names_handle(const struct emb_trace_names *n, uint32_t handle)
{
    const struct slot *s = n ? find(n->handles, n->cap, handle) : NULL;
    return s && s->used ? s->name : NULL;
}

static void format_duration(char *buf, size_t len, uint64_t ticks, uint64_t hz)
{
    double ns = (double)ticks * 1e9 / (double)hz;
    if (ns < 1e3)
        snprintf(buf, len, "%.0fns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.1fus", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.2fms", ns / 1e6);
    else
        snprintf(buf, len, "%.3fs", ns / 1e9);
}

char *emb_trace_field_display(const struct emb_trace_names *n, uint64_t clock_hz,
                              const struct emb_catalog_field *f, const uint8_t *payload, char *buf,
                              size_t len)
{
    if (f->type == EMB_CAT_CHARS || f->nvalues > 0 || f->type == EMB_CAT_BOOL)
        return emb_trace_field_text(f, payload, buf, len);
    uint64_t v = emb_catalog_field_get_uint(f, payload);
    bool thread = f->meaning == EMB_CAT_MEANING_THREAD;
    if (thread && f->size == 2 && v == 0xFFFFu) {
        snprintf(buf, len, "none");
        return buf;
    }
    const char *name = thread ? emb_trace_names_thread(n, (uint32_t)v)
                       : f->meaning == EMB_CAT_MEANING_HANDLE ? emb_trace_names_handle(n, (uint32_t)v)
                                                              : NULL;
    if (name != NULL) {
        char safe[4 * 64 + 1]; /* a name the target gave, escaped as the name= field is */
        emb_text_escape_str(safe, sizeof safe, name);
        if (thread)
            snprintf(buf, len, "%s(%" PRIu64 ")", safe, v);
        else
            snprintf(buf, len, "%s(0x%" PRIx64 ")", safe, v);
        return buf;
    }
    if (f->meaning == EMB_CAT_MEANING_CYCLES && clock_hz != 0) {
        format_duration(buf, len, v, clock_hz);
        return buf;
    }
    return emb_trace_field_text(f, payload, buf, len);
}
