/* The Perfetto model of a trace as Trace Event Format JSON, which Perfetto's UI,
 * chrome://tracing, Chrome DevTools and speedscope load: complete ("X") slices, instants,
 * counters, flows, log lines, every event with name, cat, ph, ts, pid, tid and args. The
 * mapping is written down in docs/perfetto.md. */
#include "trace_perfetto.h"

#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "perfetto_json.h"
#include "trace_perfetto_model.h"
#include "trace_write.h"

static const char *const level_names[] = {"---", "ERR", "WRN", "INF", "DBG"};

static long long pid_of(const struct emb_pf_track *tr)
{
    return tr->kind == EMB_PF_TRACK_SCHED ? EMB_PF_PID_SCHED : EMB_PF_PID_CONTEXTS;
}

/* A thread track's tid: its context id plus one, since readers of the format take tid 0
 * for "no thread" (@tracerbench/trace-model files such events under the process only). */
static long long tid_of(const struct emb_pf_track *tr)
{
    return (long long)tr->tid + 1;
}

static bool has_field(const struct emb_catalog_event *ev, const char *name)
{
    return emb_pf_field(ev, name) != NULL;
}

/* The fields of an event; of a slice's end, those its begin did not already give. */
static void fields(struct emb_json *j, const struct emb_trace_event *e,
                   const struct emb_trace_event *skip)
{
    for (size_t k = 0; e->ev && k < e->ev->nfields; k++)
        if (!skip || !has_field(skip->ev, e->ev->fields[k].name))
            emb_trace_json_field(j, &e->ev->fields[k], e->payload, true);
}

static void args(struct emb_perfetto *p, const struct emb_pf_item *it)
{
    struct emb_json *j = &p->j;
    const struct emb_trace_event *e = it->ev;
    emb_json_begin_object(j, "args");
    if (it->kind == EMB_PF_COUNTER) {
        emb_json_int(j, "value", it->value);
    } else if (it->kind == EMB_PF_LOG) {
        emb_json_string(j, "level", level_names[it->log->level <= 4 ? it->log->level : 0]);
        emb_json_string(j, "module", it->log->module);
    } else if (e && e->ev) {
        fields(j, e, NULL);
        if (it->end)
            fields(j, it->end, e);
        if (e->kind != EMB_EVT_KIND_THREAD) {
            emb_json_string(j, "kind", emb_trace_event_kind_name(e->kind));
            emb_json_uint(j, "depth", e->depth);
        }
    } else if (e && e->type == EMB_TREC_UNKNOWN) {
        emb_json_uint(j, "id", e->id);
        emb_json_uint(j, "raw_bytes", e->payload_size);
    } else if (e) {
        emb_json_uint(j, "count", e->count);
    }
    emb_json_end_object(j);
}

/* A flow's end bound to the item: the same ts, pid, tid and cat (Chrome DevTools'
 * FlowsHandler binds by exactly those). */
static void flow(struct emb_perfetto *p, const struct emb_pf_model *m, const struct emb_pf_item *it,
                 bool finish, uint32_t id)
{
    const struct emb_pf_track *tr = &m->tracks[it->track];
    emb_perfetto_flow(p, finish, "request", emb_pf_string(m, it->cat), pid_of(tr), tid_of(tr),
                      it->ts, id);
}

static void item(struct emb_perfetto *p, const struct emb_pf_model *m, const struct emb_pf_item *it)
{
    const struct emb_pf_track *tr = &m->tracks[it->track];
    const char *name = emb_pf_string(m, it->name), *cat = emb_pf_string(m, it->cat);
    switch (it->kind) {
    case EMB_PF_SLICE:
        emb_perfetto_complete(p, name, cat, pid_of(tr), tid_of(tr), it->ts, it->dur);
        break;
    case EMB_PF_COUNTER:
        emb_perfetto_event(p, "C", name, cat, EMB_PF_PID_CONTEXTS, 0, it->ts);
        break;
    default:
        emb_perfetto_instant(p, name, cat, pid_of(tr), tid_of(tr), it->ts);
        break;
    }
    args(p, it);
    emb_perfetto_close(p);
    if (it->flow_in)
        flow(p, m, it, true, it->flow_in);
    if (it->flow_out)
        flow(p, m, it, false, it->flow_out);
}

static void track_names(struct emb_perfetto *p, const struct emb_pf_model *m)
{
    emb_perfetto_track_name(p, "process_name", EMB_PF_PID_CONTEXTS, -1,
                            emb_pf_string(m, m->process));
    emb_perfetto_track_name(p, "process_name", EMB_PF_PID_SCHED, -1, "scheduler");
    for (size_t i = 0; i < m->ntracks; i++) {
        const struct emb_pf_track *tr = &m->tracks[i];
        if (tr->kind == EMB_PF_TRACK_COUNTER)
            continue; /* a counter's track is its name */
        emb_perfetto_track_name(p, "thread_name", pid_of(tr), tid_of(tr), emb_pf_string(m, tr->name));
        emb_perfetto_track_sort(p, "thread_sort_index", pid_of(tr), tid_of(tr), tr->sort);
    }
}

int emb_trace_write_perfetto_json(const struct emb_trace *t, const struct emb_perfetto_options *opt,
                                  FILE *out)
{
    struct emb_pf_model m;
    if (emb_pf_model_build(&m, t, opt ? opt->logs : NULL) != 0) {
        emb_pf_model_free(&m);
        return -1;
    }
    struct emb_perfetto p;
    emb_perfetto_open_document(&p, out, EMB_PERFETTO_NS, true);
    emb_json_string(&p.j, "displayTimeUnit", "ns");
    emb_perfetto_begin_events(&p);
    track_names(&p, &m);
    for (size_t i = 0; i < m.nitems; i++)
        item(&p, &m, &m.items[i]);
    emb_perfetto_end_events(&p);
    emb_pf_model_free(&m);
    return emb_perfetto_close_document(&p);
}

int emb_trace_write_perfetto(const struct emb_trace *t, FILE *out)
{
    return emb_trace_write_perfetto_json(t, NULL, out);
}
