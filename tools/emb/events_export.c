/* `emb events export`: a dump of service IPC events as a trace, through the write layer's
 * writers. Perfetto gets Chrome JSON (a slice per call on its caller's track, flows from a
 * call to the calls made to serve it); CTF gets a small CTF 1.8 directory of its own
 * (metadata and one stream), since these events are not the catalogue's. */
#include <stdbool.h>
#include <string.h>

#include "ctf_write.h"
#include "events_cmd.h"
#include "perfetto_json.h"

uint64_t emb_events_time_us(const struct emb_events_view *v, size_t i)
{
    uint64_t ordinal = 0;
    while (ordinal < i && v->ev[i - ordinal - 1].at_s == v->ev[i].at_s)
        ordinal++;
    if (ordinal > 999999)
        ordinal = 999999;
    return (uint64_t)v->ev[i].at_s * 1000000u + ordinal;
}

/* The track of each caller: 1 + its index in order of first appearance. */
static unsigned track_of(const struct emb_events_view *v, const char *caller)
{
    unsigned t = 0;
    for (size_t i = 0; i < v->n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(v->ev[k].caller, v->ev[i].caller) == 0;
        if (seen)
            continue;
        t++;
        if (strcmp(v->ev[i].caller, caller) == 0)
            return t;
    }
    return 0;
}

static const struct emb_svc_event *call_event(const struct emb_events_view *v, size_t c)
{
    const struct emb_events_call *k = &v->calls->call[c];
    return &v->ev[k->request != EMB_EVENTS_NONE ? k->request : k->outcome];
}

static uint64_t call_start(const struct emb_events_view *v, size_t c)
{
    const struct emb_events_call *k = &v->calls->call[c];
    return emb_events_time_us(v, k->request != EMB_EVENTS_NONE ? k->request : k->outcome);
}

static uint64_t call_end(const struct emb_events_view *v, size_t c)
{
    const struct emb_events_call *k = &v->calls->call[c];
    if (k->outcome != EMB_EVENTS_NONE)
        return emb_events_time_us(v, k->outcome);
    return v->n ? emb_events_time_us(v, v->n - 1) + 1 : 0; /* still outstanding */
}

/* Names each caller's track (process and thread alike) where it first appears. */
static void name_tracks(struct emb_perfetto *p, const struct emb_events_view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(v->ev[k].caller, v->ev[i].caller) != 0;
        if (!first)
            continue;
        unsigned t = track_of(v, v->ev[i].caller);
        for (int m = 0; m < 2; m++) {
            emb_perfetto_event(p, "M", m ? "thread_name" : "process_name", NULL, t, t, 0);
            emb_json_begin_object(&p->j, "args");
            emb_json_string(&p->j, "name", v->ev[i].caller);
            emb_json_end_object(&p->j);
            emb_perfetto_close(p);
        }
    }
}

/* Call c as a slice (an instant when only its end is known), and the flow from the call it
 * serves. */
static void write_call(struct emb_perfetto *p, const struct emb_events_view *v, size_t c,
                       unsigned *flow)
{
    const struct emb_events_call *k = &v->calls->call[c];
    const struct emb_svc_event *e = call_event(v, c);
    char target[64], chain[160];
    emb_events_target(v->ops, e->peer, e->op, target, sizeof target);
    emb_events_chain(v->calls, v->ev, v->ops, c, chain, sizeof chain);
    unsigned t = track_of(v, e->caller);
    const char *outcome = k->outcome != EMB_EVENTS_NONE ? emb_svc_kind_name(k->kind)
                                                        : "outstanding";
    uint64_t start = call_start(v, c), end = call_end(v, c);
    /* One category for every call: a flow binds to the events of its own category only
     * (Chrome DevTools' FlowsHandler); the outcome is an argument. */
    if (k->request == EMB_EVENTS_NONE) /* its REQUEST left the ring: only the end is known */
        emb_perfetto_instant(p, target, "call", t, t, start);
    else
        emb_perfetto_complete(p, target, "call", t, t, start, end > start ? end - start : 1);
    emb_json_begin_object(&p->j, "args");
    emb_json_string(&p->j, "outcome", outcome);
    emb_json_string(&p->j, "peer", e->peer);
    emb_json_uint(&p->j, "op", e->op);
    emb_json_uint(&p->j, "seq", e->seq);
    emb_json_string(&p->j, "chain", chain);
    emb_json_end_object(&p->j);
    emb_perfetto_close(p);
    if (k->parent == EMB_EVENTS_NONE || k->request == EMB_EVENTS_NONE)
        return;
    /* A flow from the call being served to this one, each end at its call's start: readers
     * bind a flow event to the event of the same ts, pid, tid and category (a parent that
     * timed out may end before its child starts). */
    unsigned from = track_of(v, call_event(v, k->parent)->caller);
    ++*flow;
    emb_perfetto_flow(p, false, "chain", "call", from, from, call_start(v, k->parent), *flow);
    emb_perfetto_flow(p, true, "chain", "call", t, t, start, *flow);
}

int emb_events_write_perfetto(const struct emb_events_view *v, FILE *out)
{
    struct emb_perfetto p;
    emb_perfetto_open_document(&p, out, EMB_PERFETTO_US, false);
    emb_perfetto_begin_events(&p);
    name_tracks(&p, v);
    unsigned flow = 0;
    for (size_t c = 0; c < v->calls->count; c++)
        write_call(&p, v, c, &flow);
    emb_perfetto_end_events(&p);
    emb_json_string(&p.j, "displayTimeUnit", "ms");
    emb_json_begin_object(&p.j, "otherData");
    emb_json_string(&p.j, "source", "emb events export");
    emb_json_string(&p.j, "clock", "seconds since the sink started; events within a second "
                                   "1 us apart in arrival order");
    emb_json_uint(&p.j, "dropped", v->dropped);
    emb_json_end_object(&p.j);
    return emb_perfetto_close_document(&p);
}

/* Every event's fields, as babeltrace2 shows them: the dump's record and what it reads as. */
static const struct emb_ctf_field event_fields[] = {
    {"seq", EMB_CTF_U32},    {"at_s", EMB_CTF_U32}, {"caller", EMB_CTF_STRING},
    {"peer", EMB_CTF_STRING}, {"op", EMB_CTF_U8},    {"target", EMB_CTF_STRING},
    {"chain", EMB_CTF_STRING},
};
#define NFIELDS (sizeof event_fields / sizeof event_fields[0])

static bool write_stream(struct emb_ctf_stream *s, const struct emb_events_view *v)
{
    uint64_t begin = v->n ? emb_events_time_us(v, 0) : 0;
    uint64_t end = v->n ? emb_events_time_us(v, v->n - 1) : 0;
    emb_ctf_packet_begin(s, begin, end, v->dropped);
    for (size_t i = 0; i < v->n && !s->bytes.failed; i++) {
        const struct emb_svc_event *e = &v->ev[i];
        char target[64], chain[160];
        emb_events_target(v->ops, e->peer, e->op, target, sizeof target);
        emb_events_chain(v->calls, v->ev, v->ops, v->calls->of_event[i], chain, sizeof chain);
        const struct emb_ctf_value values[NFIELDS] = {
            {.u = e->seq}, {.u = e->at_s}, {.s = e->caller}, {.s = e->peer},
            {.u = e->op},  {.s = target},  {.s = chain},
        };
        emb_ctf_event(s, e->kind, emb_events_time_us(v, i), values);
    }
    emb_ctf_packet_end(s); /* the whole stream is one packet with no padding */
    return !s->bytes.failed;
}

int emb_events_write_ctf(const struct emb_events_view *v, const char *dir, char *err,
                         size_t errlen)
{
    if (emb_ctf_make_dir(dir, err, errlen) < 0)
        return -1;
    char names[EMB_SVC_KIND_MAX][32];
    struct emb_ctf_event_class classes[EMB_SVC_KIND_MAX];
    for (unsigned kind = 1; kind <= EMB_SVC_KIND_MAX; kind++) {
        snprintf(names[kind - 1], sizeof names[0], "svc:%s", emb_svc_kind_name((uint8_t)kind));
        classes[kind - 1] = (struct emb_ctf_event_class){names[kind - 1], kind};
    }
    struct emb_ctf_trace_class tc = {
        .comment = "Service IPC events from the emb `events` sink (emb events export --format "
                   "ctf).",
        .domain = "emb-services",
        .tracer_name = "emb events",
        .clock_name = "sink",
        .clock_description = "the events sink: whole seconds since it started, events within "
                             "a second 1 us apart in arrival order",
        .clock_freq = 1000000,
        .events = classes,
        .nevents = EMB_SVC_KIND_MAX,
        .fields = {event_fields, NFIELDS},
    };
    emb_ctf_make_uuid(tc.uuid);
    struct emb_buf meta = {0};
    struct emb_ctf_stream stream = {.tc = &tc};
    int rc = -1;
    if (!emb_ctf_metadata(&tc, &meta) || !write_stream(&stream, v))
        snprintf(err, errlen, "%s: out of memory", dir);
    else if (emb_ctf_write_file(dir, "metadata", meta.data, meta.len, err, errlen) == 0 &&
             emb_ctf_write_file(dir, "services_0", stream.bytes.data, stream.bytes.len, err,
                                errlen) == 0)
        rc = 0;
    emb_buf_free(&meta);
    emb_buf_free(&stream.bytes);
    return rc;
}
