/* The Perfetto model of a trace (trace_perfetto_model.h) as speedscope's own file format
 * (https://www.speedscope.app/file-format-schema.json; docs/perfetto.md, "speedscope"):
 * one evented profile per track that holds slices, each slice a frame opened at its start
 * and closed at its end. speedscope's importer replays the events onto a stack and
 * refuses a close that is not of the frame on top, or a value that goes back, so the
 * slices of a track are walked as a stack: a slice closes every slice that ended before it
 * starts, and one that would outlive the slice it starts inside ends with it. */
#include "trace_speedscope.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "json.h"
#include "trace_perfetto_model.h"

struct open_slice {
    uint32_t frame;
    uint64_t end;
};

struct speedscope {
    const struct emb_perfetto_model *m;
    struct emb_json j;
    int32_t *frame_of;       /* string id -> frame index, -1 none yet */
    uint32_t *frame_names;   /* frame index -> string id */
    uint32_t nframes;
    const struct emb_perfetto_item **slices; /* one track's, in stack order */
    struct open_slice *stack;
};

/* Slices in the order a stack opens them: by start, the longer (the enclosing) first. */
static int by_start(const void *a, const void *b)
{
    const struct emb_perfetto_item *x = *(const struct emb_perfetto_item *const *)a;
    const struct emb_perfetto_item *y = *(const struct emb_perfetto_item *const *)b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static uint32_t frame(struct speedscope *s, uint32_t name)
{
    if (s->frame_of[name] < 0) {
        s->frame_of[name] = (int32_t)s->nframes;
        s->frame_names[s->nframes++] = name;
    }
    return (uint32_t)s->frame_of[name];
}

static void event(struct speedscope *s, const char *type, uint32_t frame_index, uint64_t at)
{
    emb_json_begin_object(&s->j, NULL);
    emb_json_string(&s->j, "type", type);
    emb_json_uint(&s->j, "frame", frame_index);
    emb_json_uint(&s->j, "at", at);
    emb_json_end_object(&s->j);
}

/* The slices of track `track`, in stack order; their count. */
static size_t track_slices(struct speedscope *s, uint32_t track)
{
    size_t n = 0;
    for (size_t i = 0; i < s->m->nitems; i++)
        if (s->m->items[i].kind == EMB_PERFETTO_SLICE && s->m->items[i].track == track)
            s->slices[n++] = &s->m->items[i];
    qsort(s->slices, n, sizeof s->slices[0], by_start);
    return n;
}

static void profile(struct speedscope *s, uint32_t track, size_t n)
{
    const struct emb_perfetto_model *m = s->m;
    emb_json_begin_object(&s->j, NULL);
    emb_json_string(&s->j, "type", "evented");
    emb_json_string(&s->j, "name", emb_perfetto_string(m, m->tracks[track].name));
    emb_json_string(&s->j, "unit", "nanoseconds");
    emb_json_uint(&s->j, "startValue", 0);
    emb_json_uint(&s->j, "endValue", m->end_ns);
    emb_json_begin_array(&s->j, "events");
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        const struct emb_perfetto_item *it = s->slices[i];
        while (depth > 0 && s->stack[depth - 1].end <= it->ts) {
            depth--;
            event(s, "C", s->stack[depth].frame, s->stack[depth].end);
        }
        uint64_t end = it->ts + it->dur;
        if (depth > 0 && end > s->stack[depth - 1].end)
            end = s->stack[depth - 1].end; /* a stack cannot hold a slice past its parent */
        s->stack[depth] = (struct open_slice){frame(s, it->name), end};
        event(s, "O", s->stack[depth].frame, it->ts);
        depth++;
    }
    while (depth > 0) {
        depth--;
        event(s, "C", s->stack[depth].frame, s->stack[depth].end);
    }
    emb_json_end_array(&s->j);
    emb_json_end_object(&s->j);
}

static void document(struct speedscope *s)
{
    const struct emb_perfetto_model *m = s->m;
    emb_json_begin_object(&s->j, NULL);
    emb_json_string(&s->j, "$schema", "https://www.speedscope.app/file-format-schema.json");
    emb_json_string(&s->j, "exporter", "emb trace");
    emb_json_string(&s->j, "name", emb_perfetto_string(m, m->process));
    emb_json_uint(&s->j, "activeProfileIndex", 0);
    emb_json_begin_array(&s->j, "profiles");
    for (uint32_t tr = 0; tr < m->ntracks; tr++) {
        size_t n = m->tracks[tr].kind != EMB_PERFETTO_TRACK_COUNTER ? track_slices(s, tr) : 0;
        if (n > 0)
            profile(s, tr, n);
    }
    emb_json_end_array(&s->j);
    /* Last, once the profiles have named every frame they use. */
    emb_json_begin_object(&s->j, "shared");
    emb_json_begin_array(&s->j, "frames");
    for (uint32_t f = 0; f < s->nframes; f++) {
        emb_json_begin_object(&s->j, NULL);
        emb_json_string(&s->j, "name", emb_perfetto_string(m, s->frame_names[f]));
        emb_json_end_object(&s->j);
    }
    emb_json_end_array(&s->j);
    emb_json_end_object(&s->j);
    emb_json_end_object(&s->j);
    emb_json_end(&s->j);
}

int emb_trace_write_speedscope(const struct emb_trace *t, FILE *out)
{
    struct emb_perfetto_model m;
    if (emb_perfetto_model_build(&m, t, NULL) != 0) {
        emb_perfetto_model_free(&m);
        return -1;
    }
    struct speedscope s = {.m = &m};
    s.frame_of = malloc((m.str.n + 1) * sizeof *s.frame_of);
    s.frame_names = malloc((m.str.n + 1) * sizeof *s.frame_names);
    s.slices = malloc((m.nitems + 1) * sizeof *s.slices);
    s.stack = malloc((m.nitems + 1) * sizeof *s.stack);
    int rc = -1;
    if (s.frame_of && s.frame_names && s.slices && s.stack) {
        memset(s.frame_of, 0xFF, (m.str.n + 1) * sizeof *s.frame_of); /* every entry -1 */
        emb_json_init(&s.j, out, true);
        s.j.flat_depth = 4; /* the document, profiles, a profile, its events: one per line */
        document(&s);
        rc = ferror(out) ? -1 : 0;
    }
    EMB_FREE_ALL(s.frame_of, s.frame_names, s.slices, s.stack);
    emb_perfetto_model_free(&m);
    return rc;
}
