#define _POSIX_C_SOURCE 200809L
#include "trace_names.h"

#include "buffer.h"
#include "key_map.h"
#include "text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names obj_init gave, each found by its thread index or handle (key_map.h). */
struct emb_trace_names {
    struct emb_key_map threads, handles; /* the number: its name's index in names */
    char (*names)[20];
    size_t nnames, names_cap;
};

#define OBJ_TYPE_THREAD 0u /* obj_init type value for threads (catalog/trace_events.yaml) */

/* Names `key` in `map` (a later name replaces an earlier one), at most 19 bytes of it.
 * false when memory ran out. */
static bool put(struct emb_trace_names *n, struct emb_key_map *map, uint32_t key, const char *name,
                size_t len)
{
    uint32_t i = emb_key_map_get(map, key);
    if (i == UINT32_MAX) {
        void *grown = emb_array_grow(n->names, &n->names_cap, n->nnames + 1u, sizeof *n->names);
        if (grown == NULL || !emb_key_map_put(map, key, (uint32_t)n->nnames)) {
            n->names = grown ? grown : n->names;
            return false;
        }
        n->names = grown;
        i = (uint32_t)n->nnames++;
    }
    if (len >= sizeof n->names[i])
        len = sizeof n->names[i] - 1u;
    memcpy(n->names[i], name, len);
    n->names[i][len] = '\0';
    return true;
}

static const char *name_of(const struct emb_trace_names *n, const struct emb_key_map *map, uint32_t key)
{
    uint32_t i = emb_key_map_get(map, key);
    return i == UINT32_MAX ? NULL : n->names[i];
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
    struct emb_trace_cursor *cur = count > 0 ? emb_trace_cursor_open(t) : NULL;
    if (count > 0 && cur == NULL)
        return false;
    /* In time order: a handle named twice has its later name. */
    bool ok = true;
    for (const struct emb_trace_event *e; ok && cur != NULL && (e = emb_trace_cursor_next(cur));) {
        if (e->type != EMB_TREC_EVENT || e->ev != init)
            continue;
        const char *text;
        size_t len = emb_trace_field_chars(fname, e->payload, &text);
        uint32_t handle = (uint32_t)emb_catalog_field_get_uint(fhandle, e->payload);
        bool thread = emb_catalog_field_get_uint(ftype, e->payload) == OBJ_TYPE_THREAD;
        ok = put(n, thread ? &n->threads : &n->handles, handle, text, len);
    }
    emb_trace_cursor_close(cur);
    return ok;
}

struct emb_trace_names *emb_trace_names_build_empty(void)
{
    return calloc(1, sizeof(struct emb_trace_names));
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
    emb_key_map_free(&n->threads);
    emb_key_map_free(&n->handles);
    free(n->names);
    free(n);
}

const char *emb_trace_names_thread(const struct emb_trace_names *n, uint32_t thread)
{
    return n ? name_of(n, &n->threads, thread) : NULL;
}

const char *emb_trace_names_handle(const struct emb_trace_names *n, uint32_t handle)
{
    return n ? name_of(n, &n->handles, handle) : NULL;
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
