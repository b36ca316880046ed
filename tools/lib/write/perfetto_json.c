/* The Chrome JSON trace format's document and events (perfetto_json.h). */
#include "perfetto_json.h"

#include <inttypes.h>
#include <string.h>

void emb_perfetto_open_document(struct emb_perfetto *p, FILE *out, enum emb_perfetto_clock clock,
                                bool one_event_per_line)
{
    p->clock = clock;
    emb_json_init(&p->j, out, one_event_per_line);
    if (one_event_per_line)
        p->j.flat_depth = 2; /* the document, the array: each event below them is one line */
    emb_json_begin_object(&p->j, NULL);
}

void emb_perfetto_begin_events(struct emb_perfetto *p)
{
    emb_json_begin_array(&p->j, "traceEvents");
}

void emb_perfetto_end_events(struct emb_perfetto *p)
{
    emb_json_end_array(&p->j);
}

int emb_perfetto_close_document(struct emb_perfetto *p)
{
    emb_json_end_object(&p->j);
    emb_json_end(&p->j);
    return ferror(p->j.out) ? -1 : 0;
}

static void microseconds(struct emb_perfetto *p, const char *key, uint64_t t)
{
    if (p->clock == EMB_PERFETTO_US) {
        emb_json_uint(&p->j, key, t);
        return;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, t / 1000u, t % 1000u);
    emb_json_raw(&p->j, key, buf);
}

static void head(struct emb_perfetto *p, const char *ph, const char *name, const char *cat)
{
    emb_json_begin_object(&p->j, NULL);
    emb_json_string(&p->j, "ph", ph);
    emb_json_string(&p->j, "name", name);
    /* Every event gets the fields the format defines for all of them; Chrome DevTools'
     * trace engine and @tracerbench/trace-model read cat of every event. */
    emb_json_string(&p->j, "cat", cat ? cat : !strcmp(ph, "M") ? "__metadata" : "emb");
}

void emb_perfetto_event(struct emb_perfetto *p, const char *ph, const char *name,
                        const char *cat, long long pid, long long tid, uint64_t ts)
{
    head(p, ph, name, cat);
    emb_json_int(&p->j, "pid", pid);
    emb_json_int(&p->j, "tid", tid);
    microseconds(p, "ts", ts);
}

void emb_perfetto_close(struct emb_perfetto *p)
{
    emb_json_end_object(&p->j);
}

static void metadata_head(struct emb_perfetto *p, const char *what, long long pid, long long tid)
{
    head(p, "M", what, NULL);
    emb_json_int(&p->j, "pid", pid);
    emb_json_int(&p->j, "tid", tid >= 0 ? tid : 0);
    emb_json_uint(&p->j, "ts", 0);
    emb_json_begin_object(&p->j, "args");
}

void emb_perfetto_track_name(struct emb_perfetto *p, const char *what, long long pid,
                             long long tid, const char *name)
{
    metadata_head(p, what, pid, tid);
    emb_json_string(&p->j, "name", name);
    emb_json_end_object(&p->j);
    emb_json_end_object(&p->j);
}

void emb_perfetto_track_sort(struct emb_perfetto *p, const char *what, long long pid,
                             long long tid, long long index)
{
    metadata_head(p, what, pid, tid);
    emb_json_int(&p->j, "sort_index", index);
    emb_json_end_object(&p->j);
    emb_json_end_object(&p->j);
}

void emb_perfetto_complete(struct emb_perfetto *p, const char *name, const char *cat,
                           long long pid, long long tid, uint64_t ts, uint64_t dur)
{
    emb_perfetto_event(p, "X", name, cat, pid, tid, ts);
    microseconds(p, "dur", dur);
}

void emb_perfetto_instant(struct emb_perfetto *p, const char *name, const char *cat,
                          long long pid, long long tid, uint64_t ts)
{
    emb_perfetto_event(p, "i", name, cat, pid, tid, ts);
    emb_json_string(&p->j, "s", "t");
}

void emb_perfetto_counter(struct emb_perfetto *p, const char *name, long long pid,
                          long long tid, uint64_t ts, const char *arg, uint64_t value)
{
    emb_perfetto_event(p, "C", name, NULL, pid, tid, ts);
    emb_json_begin_object(&p->j, "args");
    emb_json_uint(&p->j, arg, value);
    emb_json_end_object(&p->j);
    emb_json_end_object(&p->j);
}

void emb_perfetto_flow(struct emb_perfetto *p, bool finish, const char *name, const char *cat,
                       long long pid, long long tid, uint64_t ts, uint64_t id)
{
    emb_perfetto_event(p, finish ? "f" : "s", name, cat, pid, tid, ts);
    emb_json_uint(&p->j, "id", id);
    if (finish)
        emb_json_string(&p->j, "bp", "e");
    emb_json_begin_object(&p->j, "args");
    emb_json_end_object(&p->j);
    emb_json_end_object(&p->j);
}
