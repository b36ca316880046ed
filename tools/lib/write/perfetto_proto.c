/* The Perfetto model of a trace as Perfetto's protobuf trace format: a perfetto.protos.Trace
 * of TracePackets on one packet sequence (perfetto_trace.proto, encoded by protobuf-c): the
 * interned names first, then a TrackDescriptor per track (process, thread and counter
 * tracks), then TrackEvents in time order. docs/perfetto.md, "Protobuf". */
#include "trace_perfetto.h"

#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "perfetto_trace.pb-c.h"
#include "trace_perfetto_model.h"
#include "trace_write.h"

#define SEQUENCE 1u         /* the one packet sequence: interned names are valid on it */
#define UUID_PROCESS 1u     /* process 1 (contexts, counters); process 2 is UUID_PROCESS + 1 */
#define UUID_TRACK 0x100u   /* + the model's track index */
#define MAX_ANNOTATIONS 72u /* fields of an event's payload (64 bytes at most), and kind, depth */

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__DebugAnnotation Annotation;

static const char *const level_names[] = {"---", "ERR", "WRN", "INF", "DBG"};

struct writer {
    FILE *out;
    struct emb_perfetto_model *m;
    uint8_t *buf;
    size_t cap;
    bool failed;
    uint8_t *used; /* per string id: 1 an event name, 2 a category, 4 an annotation name */
};

/* One packet as a one-packet Trace: "packet" is field 1 of Trace, so the file, packets
 * written one after another, is itself a Trace. */
static void emit(struct writer *w, Packet *p, uint32_t flags)
{
    p->has_trusted_packet_sequence_id = 1;
    p->trusted_packet_sequence_id = SEQUENCE;
    p->has_sequence_flags = flags != 0;
    p->sequence_flags = flags;
    Perfetto__Protos__Trace trace = PERFETTO__PROTOS__TRACE__INIT;
    trace.n_packet = 1;
    trace.packet = &p;
    size_t n = perfetto__protos__trace__get_packed_size(&trace);
    if (n > w->cap) {
        uint8_t *b = realloc(w->buf, n * 2);
        if (!b) {
            w->failed = true;
            return;
        }
        w->buf = b;
        w->cap = n * 2;
    }
    perfetto__protos__trace__pack(&trace, w->buf);
    if (fwrite(w->buf, 1, n, w->out) != n)
        w->failed = true;
}

/* Marks the strings the events use (interning first the annotation names their fields
 * need, so the table does not grow while it is marked). */
static void mark_strings(struct writer *w)
{
    static const char *const extra[] = {"kind", "depth", "count", "level", "module"};
    struct emb_perfetto_model *m = w->m;
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        emb_perfetto_intern(m, extra[i]);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && !(w->used = calloc(m->str.n ? m->str.n : 1, 1))) {
            w->failed = true;
            return;
        }
        for (size_t i = 0; i < m->nitems; i++) {
            const struct emb_perfetto_item *it = &m->items[i];
            for (int side = 0; side < 2; side++) {
                const struct emb_trace_event *e = side ? it->end : it->ev;
                for (size_t k = 0; e && e->ev && k < e->ev->nfields; k++) {
                    uint32_t id = emb_perfetto_intern(m, e->ev->fields[k].name);
                    if (pass == 1)
                        w->used[id] |= 4;
                }
            }
            if (pass == 1 && it->kind != EMB_PERFETTO_COUNTER) {
                w->used[it->cat] |= 2;
                if (it->kind != EMB_PERFETTO_LOG)
                    w->used[it->name] |= 1;
            }
        }
    }
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        w->used[emb_perfetto_intern(m, extra[i])] |= 4;
}

/* The first packet: every interned name, category and annotation name, and the
 * sequence's state cleared, so every later packet may refer to them. */
static void interned(struct writer *w)
{
    struct emb_perfetto_model *m = w->m;
    size_t n = m->str.n, nn = 0, nc = 0, na = 0;
    Perfetto__Protos__EventName *names = calloc(n, sizeof *names), **pn = calloc(n, sizeof *pn);
    Perfetto__Protos__EventCategory *cats = calloc(n, sizeof *cats), **pc = calloc(n, sizeof *pc);
    Perfetto__Protos__DebugAnnotationName *an = calloc(n, sizeof *an), **pa = calloc(n, sizeof *pa);
    if (!names || !pn || !cats || !pc || !an || !pa)
        w->failed = true;
    for (size_t id = 1; id < n && !w->failed; id++) {
        if (w->used[id] & 1) {
            perfetto__protos__event_name__init(pn[nn] = &names[nn]);
            names[nn].has_iid = 1, names[nn].iid = id, names[nn++].name = m->str.s[id];
        }
        if (w->used[id] & 2) {
            perfetto__protos__event_category__init(pc[nc] = &cats[nc]);
            cats[nc].has_iid = 1, cats[nc].iid = id, cats[nc++].name = m->str.s[id];
        }
        if (w->used[id] & 4) {
            perfetto__protos__debug_annotation_name__init(pa[na] = &an[na]);
            an[na].has_iid = 1, an[na].iid = id, an[na++].name = m->str.s[id];
        }
    }
    if (!w->failed) {
        Perfetto__Protos__InternedData d = PERFETTO__PROTOS__INTERNED_DATA__INIT;
        d.n_event_names = nn, d.event_names = pn;
        d.n_event_categories = nc, d.event_categories = pc;
        d.n_debug_annotation_names = na, d.debug_annotation_names = pa;
        Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
        p.interned_data = &d;
        emit(w, &p, PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
    }
    free(names), free(pn), free(cats), free(pc), free(an), free(pa);
}

static void process_track(struct writer *w, uint64_t uuid, int32_t pid, const char *name)
{
    Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    pd.has_pid = 1, pd.pid = pid, pd.process_name = (char *)name;
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    td.has_uuid = 1, td.uuid = uuid, td.process = &pd;
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.track_descriptor = &td;
    emit(w, &p, 0);
}

/* A context is a thread track of process 1; which thread it ran, a track of process 2 (a
 * thread track there would make a second thread of the same tid); a counter, a counter
 * track of process 1. */
static void tracks(struct writer *w)
{
    struct emb_perfetto_model *m = w->m;
    process_track(w, UUID_PROCESS, EMB_PERFETTO_PID_CONTEXTS, emb_perfetto_string(m, m->process));
    process_track(w, UUID_PROCESS + 1, EMB_PERFETTO_PID_SCHED, "scheduler");
    for (size_t i = 0; i < m->ntracks; i++) {
        const struct emb_perfetto_track *tr = &m->tracks[i];
        Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
        Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
        td.has_uuid = 1, td.uuid = UUID_TRACK + i;
        td.name = (char *)emb_perfetto_string(m, tr->name);
        if (tr->kind == EMB_PERFETTO_TRACK_CONTEXT) {
            th.has_pid = 1, th.pid = EMB_PERFETTO_PID_CONTEXTS;
            th.has_tid = 1, th.tid = (int32_t)tr->tid + 1;
            th.thread_name = td.name;
            td.thread = &th;
        } else {
            td.has_parent_uuid = 1;
            td.parent_uuid = tr->kind == EMB_PERFETTO_TRACK_SCHED ? UUID_PROCESS + 1 : UUID_PROCESS;
            if (tr->kind == EMB_PERFETTO_TRACK_COUNTER)
                td.counter = &cd;
        }
        Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
        p.track_descriptor = &td;
        emit(w, &p, 0);
    }
}

/* An event's fields as debug annotations: integers as numbers, the rest (enumeration
 * labels, hex, text, bool) as the JSON export shows them. */
struct annotations {
    Annotation a[MAX_ANNOTATIONS], *p[MAX_ANNOTATIONS];
    char text[MAX_ANNOTATIONS][72];
    size_t n;
};

static Annotation *annotation(struct writer *w, struct annotations *as, const char *name)
{
    if (as->n == MAX_ANNOTATIONS)
        return NULL;
    Annotation *a = &as->a[as->n];
    perfetto__protos__debug_annotation__init(a);
    a->has_name_iid = 1, a->name_iid = emb_perfetto_intern(w->m, name);
    as->p[as->n] = a;
    return a;
}

static void field_annotations(struct writer *w, struct annotations *as,
                              const struct emb_trace_event *e, const struct emb_trace_event *skip)
{
    for (size_t k = 0; e && e->ev && k < e->ev->nfields; k++) {
        const struct emb_catalog_field *f = &e->ev->fields[k];
        Annotation *a;
        if ((skip && emb_perfetto_field(skip->ev, f->name)) || !(a = annotation(w, as, f->name)))
            continue;
        bool text = f->hex || f->nvalues || f->type == EMB_CAT_CHARS || f->type == EMB_CAT_BOOL;
        bool sign = f->type >= EMB_CAT_I8 && f->type <= EMB_CAT_I64;
        if (text) {
            const char *s;
            size_t len = f->type == EMB_CAT_CHARS ? emb_trace_field_chars(f, e->payload, &s) : 0;
            if (f->type == EMB_CAT_CHARS)
                snprintf(as->text[as->n], sizeof as->text[0], "%.*s", (int)len, s);
            else
                emb_trace_field_text(f, e->payload, as->text[as->n], sizeof as->text[0]);
            a->string_value = as->text[as->n];
        } else if (sign) {
            a->has_int_value = 1, a->int_value = emb_catalog_field_get_int(f, e->payload);
        } else {
            a->has_uint_value = 1, a->uint_value = emb_catalog_field_get_uint(f, e->payload);
        }
        as->n++;
    }
}

static void item_annotations(struct writer *w, struct annotations *as, const struct emb_perfetto_item *it)
{
    const struct emb_trace_event *e = it->ev;
    Annotation *a;
    if (it->kind == EMB_PERFETTO_LOG) {
        if ((a = annotation(w, as, "level")))
            a->string_value = (char *)level_names[it->log->level <= 4 ? it->log->level : 0], as->n++;
        if ((a = annotation(w, as, "module")))
            a->string_value = it->log->module, as->n++;
        return;
    }
    if (!e)
        return;
    if (!e->ev) { /* a loss marker, an unknown id */
        if ((a = annotation(w, as, "count")))
            a->has_uint_value = 1, a->uint_value = e->type == EMB_TREC_UNKNOWN ? e->id : e->count,
            as->n++;
        return;
    }
    field_annotations(w, as, e, NULL);
    field_annotations(w, as, it->end, e);
    if (e->kind != EMB_EVT_KIND_THREAD) {
        if ((a = annotation(w, as, "kind")))
            a->string_value = (char *)emb_trace_event_kind_name(e->kind), as->n++;
        if ((a = annotation(w, as, "depth")))
            a->has_uint_value = 1, a->uint_value = e->depth, as->n++;
    }
}

/* What goes on the timeline: a slice's begin and end, every other item once. */
struct mark {
    uint64_t ts;
    uint32_t item;
    bool end;
};

/* Time order; at one time ends first, the innermost (latest begun) first, then the rest in
 * the model's order (a slice before the slices and instants inside it). */
static int by_time(const void *pa, const void *pb)
{
    const struct mark *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->end != b->end)
        return a->end ? -1 : 1;
    if (a->end)
        return a->item > b->item ? -1 : a->item < b->item;
    return a->item < b->item ? -1 : a->item > b->item;
}

static void event(struct writer *w, const struct mark *mk)
{
    const struct emb_perfetto_item *it = &w->m->items[mk->item];
    Event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    uint64_t cat = it->cat, flow_out = it->flow_out, flow_in = it->flow_in;
    struct annotations as;
    as.n = 0;
    ev.has_track_uuid = 1, ev.track_uuid = UUID_TRACK + it->track;
    ev.has_type = 1;
    if (it->kind == EMB_PERFETTO_COUNTER) {
        ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
        ev.has_counter_value = 1, ev.counter_value = it->value;
    } else if (mk->end) {
        ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    } else {
        ev.type = it->kind == EMB_PERFETTO_SLICE ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
                                           : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
        if (it->kind == EMB_PERFETTO_LOG)
            ev.name = it->log->text; /* one of a kind: not worth interning */
        else
            ev.has_name_iid = 1, ev.name_iid = it->name;
        ev.n_category_iids = 1, ev.category_iids = &cat;
        ev.n_flow_ids = flow_out != 0, ev.flow_ids = &flow_out;
        ev.n_terminating_flow_ids = flow_in != 0, ev.terminating_flow_ids = &flow_in;
        item_annotations(w, &as, it);
        ev.n_debug_annotations = as.n, ev.debug_annotations = as.p;
    }
    Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.has_timestamp = 1, p.timestamp = mk->ts;
    p.track_event = &ev;
    emit(w, &p, PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE);
}

static void events(struct writer *w)
{
    const struct emb_perfetto_model *m = w->m;
    size_t n = 0;
    struct mark *mk = malloc((2 * m->nitems + 1) * sizeof *mk);
    if (!mk) {
        w->failed = true;
        return;
    }
    for (size_t i = 0; i < m->nitems; i++) {
        const struct emb_perfetto_item *it = &m->items[i];
        mk[n++] = (struct mark){.ts = it->ts, .item = (uint32_t)i};
        if (it->kind == EMB_PERFETTO_SLICE)
            mk[n++] = (struct mark){.ts = it->ts + it->dur, .item = (uint32_t)i, .end = true};
    }
    qsort(mk, n, sizeof *mk, by_time);
    for (size_t i = 0; i < n && !w->failed; i++)
        event(w, &mk[i]);
    free(mk);
}

int emb_trace_write_perfetto_proto(const struct emb_trace *t,
                                   const struct emb_perfetto_options *opt, FILE *out)
{
    struct emb_perfetto_model m;
    struct writer w = {.out = out, .m = &m};
    if (emb_perfetto_model_build(&m, t, opt ? opt->logs : NULL) != 0)
        w.failed = true;
    if (!w.failed)
        mark_strings(&w);
    if (!w.failed)
        interned(&w);
    if (!w.failed)
        tracks(&w);
    if (!w.failed)
        events(&w);
    free(w.used);
    free(w.buf);
    emb_perfetto_model_free(&m);
    return w.failed || ferror(out) ? -1 : 0;
}
