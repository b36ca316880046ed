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
    size_t cap;  /* per table, a power of two */
    size_t used; /* names in both */
};

#define OBJ_TYPE_THREAD 0u /* obj_init type value for threads (catalog/trace_events.yaml) */

static struct slot *find(struct slot *table, size_t cap, uint32_t key)
{
    size_t i = (key * 2654435761u) & (cap - 1u);
    while (table[i].used && table[i].key != key)
        i = (i + 1u) & (cap - 1u);
    return &table[i];
}

/* Names `key`; 1 when it had no name before. */
static size_t put(struct slot *table, size_t cap, uint32_t key, const char *name, size_t len)
{
    struct slot *s = find(table, cap, key);
    size_t added = !s->used;
    s->used = 1;
    s->key = key;
    if (len >= sizeof s->name)
        len = sizeof s->name - 1u;
    memcpy(s->name, name, len);
    s->name[len] = '\0';
    return added;
}

/* Room for `more` names in each table (at most half full): the tables rebuilt larger. */
static bool make_room(struct emb_trace_names *n, uint64_t more)
{
    size_t cap = n->cap ? n->cap : 16u;
    while (cap < 2u * (n->used + more) + 2u)
        cap *= 2u;
    if (cap == n->cap)
        return true;
    struct slot *threads = calloc(cap, sizeof *threads), *handles = calloc(cap, sizeof *handles);
    if (threads == NULL || handles == NULL) {
        free(threads);
        free(handles);
        return false;
    }
    for (size_t i = 0; i < n->cap; i++) {
        if (n->threads[i].used)
            *find(threads, cap, n->threads[i].key) = n->threads[i];
        if (n->handles[i].used)
            *find(handles, cap, n->handles[i].key) = n->handles[i];
    }
    free(n->threads);
    free(n->handles);
    n->threads = threads;
    n->handles = handles;
    n->cap = cap;
    return true;
}

bool emb_trace_names_add(struct emb_trace_names *n, const struct emb_trace *t)
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
    if (!make_room(n, count))
        return false;
    struct emb_trace_cursor *cur = count > 0 ? emb_trace_cursor_open(t) : NULL;
    if (count > 0 && cur == NULL)
        return false;
    /* In time order: a handle named twice has its later name. */
    for (const struct emb_trace_event *e; cur != NULL && (e = emb_trace_cursor_next(cur));) {
        if (e->type != EMB_TREC_EVENT || e->ev != init)
            continue;
        const char *text;
        size_t len = emb_trace_field_chars(fname, e->payload, &text);
        uint32_t handle = (uint32_t)emb_catalog_field_get_uint(fhandle, e->payload);
        bool thread = emb_catalog_field_get_uint(ftype, e->payload) == OBJ_TYPE_THREAD;
        n->used += put(thread ? n->threads : n->handles, n->cap, handle, text, len);
    }
    emb_trace_cursor_close(cur);
    return true;
}

struct emb_trace_names *emb_trace_names_build_empty(void)
{
    struct emb_trace_names *n = calloc(1, sizeof *n);
    if (n != NULL && !make_room(n, 0)) {
        emb_trace_names_free(n);
        return NULL;
    }
    return n;
}

struct emb_trace_names *emb_trace_names_build(const struct emb_trace *t)
{
    struct emb_trace_names *n = emb_trace_names_build_empty();
    if (n != NULL && !emb_trace_names_add(n, t)) {
        emb_trace_names_free(n);
        return NULL;
    }
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
