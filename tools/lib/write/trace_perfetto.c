/* The Perfetto model of a trace as Trace Event Format JSON, which Perfetto's UI,
 * chrome://tracing, Chrome DevTools and speedscope load: complete ("X") slices, instants,
 * counters, flows, log lines, every event with name, cat, ph, ts, pid, tid and args. The
 * mapping is written down in docs/perfetto.md.
 *
 * Formatted by hand into one large buffer (out_buf.h): the bytes the perfetto_json.h
 * writer writes for the same events (one event a line, "key": value, flat below the
 * array), which `emb events export` still uses. The model's strings (names, categories)
 * are escaped once per trace and each event copies them. */
#include "trace_perfetto.h"

#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>

#include "escaped_pieces.h"
#include "out_buf.h"
#include "perfetto_json.h"
#include "trace_perfetto_model.h"
#include "trace_write.h"

static const char *const level_names[] = {"---", "ERR", "WRN", "INF", "DBG"};

/* The writer: the output, the model's strings and every catalogue field's key escaped
 * once (escaped_pieces.h), and whether the open object has a member yet. */
struct json_writer {
    struct emb_out o;
    struct emb_escaped_pieces p;
    struct emb_piece *str; /* by string id; m->str.n of them */
    size_t nstr;
    bool member;       /* the open object has a member: the next one after a comma */
    bool any_event;    /* the traceEvents array has an element */
    const struct emb_perfetto_model *m;
    /* An instant's opening up to its time, the same for every instant of one catalogue
     * event on one track: written once, then copied (by track, then catalogue index). */
    struct head **heads;
    size_t nevents;
    char *heads_text;
    size_t heads_len, heads_cap;
};

struct head {
    uint32_t at, len;   /* in heads_text; len 0: not yet */
    uint32_t name, cat; /* the strings it names */
};

static long long pid_of(const struct emb_perfetto_track *tr)
{
    return tr->kind == EMB_PERFETTO_TRACK_SCHED ? EMB_PERFETTO_PID_SCHED : EMB_PERFETTO_PID_CONTEXTS;
}

/* A thread track's tid: its context id plus one, since readers of the format take tid 0
 * for "no thread" (@tracerbench/trace-model files such events under the process only). */
static long long tid_of(const struct emb_perfetto_track *tr)
{
    return (long long)tr->tid + 1;
}

static bool has_field(const struct emb_catalog_event *ev, const char *name)
{
    return emb_perfetto_field(ev, name) != NULL;
}

static void key_piece(struct emb_out *o, const char *name, size_t k)
{
    (void)k;
    emb_out_json_string(o, name, strlen(name));
    emb_out_bytes(o, ": ", 2);
}

/* Every model string. */
static void string_pieces(struct emb_out *o, void *arg)
{
    struct json_writer *w = arg;
    for (size_t id = 0; id < w->nstr; id++) {
        uint32_t at = emb_escaped_pieces_at(o);
        const char *s = emb_perfetto_string(w->m, (uint32_t)id);
        emb_out_json_string(o, s, strlen(s));
        emb_escaped_pieces_end(o, &w->str[id], at);
    }
}

static void strings_free(struct json_writer *w)
{
    emb_escaped_pieces_free(&w->p);
    free(w->str);
    w->str = NULL;
    for (size_t i = 0; w->heads && i < w->m->ntracks; i++)
        free(w->heads[i]);
    free(w->heads);
    free(w->heads_text);
    w->heads = NULL;
    w->heads_text = NULL;
}

/* False when out of memory. */
static bool strings_build(struct json_writer *w, const struct emb_perfetto_model *m)
{
    const struct emb_catalog *cat = emb_trace_catalog(m->t);
    w->m = m;
    w->nstr = m->str.n ? m->str.n : 1u;
    w->str = calloc(w->nstr, sizeof *w->str);
    for (size_t c = 0; c < cat->nclasses; c++)
        w->nevents += cat->classes[c].nevents;
    w->heads = calloc(m->ntracks + 1, sizeof *w->heads);
    struct emb_escaped_pieces_spec spec = {.key = key_piece, .rest = string_pieces, .arg = w};
    if (w->str && w->heads && emb_escaped_pieces_build(&w->p, cat, &spec))
        return true;
    free(w->str);
    free(w->heads);
    w->str = NULL;
    w->heads = NULL;
    return false;
}

/* A model string, escaped and quoted. */
static void put_string(struct json_writer *w, uint32_t id)
{
    emb_escaped_pieces_put(&w->o, &w->p, w->str[id < w->nstr ? id : 0]);
}

static void put_text(struct emb_out *o, const char *s)
{
    if (s == NULL)
        emb_out_bytes(o, "null", 4);
    else
        emb_out_json_string(o, s, strlen(s));
}

/* A member's separator and its key (a literal that needs no escaping). */
#define KEY(w, lit) key_lit((w), "\"" lit "\": ", sizeof("\"" lit "\": ") - 1u)
static void key_lit(struct json_writer *w, const char *k, size_t n)
{
    if (w->member)
        emb_out_char(&w->o, ',');
    w->member = true;
    emb_out_bytes(&w->o, k, n);
}

static void key_name(struct json_writer *w, const char *name)
{
    if (w->member)
        emb_out_char(&w->o, ',');
    w->member = true;
    emb_out_json_string(&w->o, name, strlen(name));
    emb_out_bytes(&w->o, ": ", 2);
}

/* Nanoseconds as microseconds with three decimals ("%llu.%03llu"). */
static void micros(struct emb_out *o, uint64_t t)
{
    char *d = emb_out_room(o, 24);
    size_t n = emb_fmt_u64(d, t / 1000u);
    uint32_t r = (uint32_t)(t % 1000u);
    d[n] = '.';
    d[n + 1] = (char)('0' + r / 100u);
    d[n + 2] = (char)('0' + r / 10u % 10u);
    d[n + 3] = (char)('0' + r % 10u);
    o->len += n + 4;
}

/* Opens an element of traceEvents: "ph", "name", "cat", "pid", "tid". */
static void open_event(struct json_writer *w, const char *ph_member)
{
    emb_out_str(&w->o, w->any_event ? ",\n    {" : "\n    {");
    w->any_event = true;
    emb_out_str(&w->o, ph_member);
    w->member = true;
}

static void event_prefix(struct json_writer *w, const char *ph_member, uint32_t name, uint32_t cat,
                         long long pid, long long tid)
{
    open_event(w, ph_member);
    emb_out_bytes(&w->o, ",\"name\": ", 9);
    put_string(w, name);
    emb_out_bytes(&w->o, ",\"cat\": ", 8);
    put_string(w, cat);
    emb_out_bytes(&w->o, ",\"pid\": ", 8);
    emb_out_i64(&w->o, pid);
    emb_out_bytes(&w->o, ",\"tid\": ", 8);
    emb_out_i64(&w->o, tid);
    emb_out_bytes(&w->o, ",\"ts\": ", 7);
}

static void event_head(struct json_writer *w, const char *ph_member, uint32_t name, uint32_t cat,
                       long long pid, long long tid, uint64_t ts)
{
    event_prefix(w, ph_member, name, cat, pid, tid);
    micros(&w->o, ts);
}

/* Keeps the bytes from `start` in the output buffer to here as the head `h`. */
static void keep_head(struct json_writer *w, struct head *h, size_t start, uint32_t name,
                      uint32_t cat)
{
    size_t n = w->o.len - start;
    if (w->heads_len + n > w->heads_cap) {
        size_t cap = (w->heads_len + n) * 2 + 4096;
        char *t = realloc(w->heads_text, cap);
        if (t == NULL)
            return;
        w->heads_text = t;
        w->heads_cap = cap;
    }
    memcpy(w->heads_text + w->heads_len, w->o.buf + start, n);
    *h = (struct head){.at = (uint32_t)w->heads_len, .len = (uint32_t)n, .name = name, .cat = cat};
    w->heads_len += n;
}

/* An instant's head up to its time: copied when one of its event on its track was written
 * before, else written (and kept). */
static void instant_prefix(struct json_writer *w, const struct emb_perfetto_item *it,
                           const struct emb_perfetto_track *tr)
{
    const struct emb_catalog_event *ev = it->ev ? it->ev->ev : NULL;
    uint32_t slot = ev ? w->p.slot[ev->id] : 0u;
    struct head *row = NULL, *h = NULL;
    if (slot != 0u && w->p.event[slot - 1u] == ev && w->any_event && it->track < w->m->ntracks) {
        row = w->heads[it->track];
        if (row == NULL)
            row = w->heads[it->track] = calloc(w->nevents, sizeof *row);
        h = row ? &row[slot - 1u] : NULL;
    }
    if (h && h->len && h->name == it->name && h->cat == it->cat) {
        emb_out_bytes(&w->o, w->heads_text + h->at, h->len);
        w->member = true;
        return;
    }
    emb_out_room(&w->o, 1024); /* the head is written in one block, so it can be kept */
    size_t start = w->o.len;
    event_prefix(w, "\"ph\": \"i\"", it->name, it->cat, pid_of(tr), tid_of(tr));
    if (h && !h->len && w->o.len > start && w->o.len - start <= 1024)
        keep_head(w, h, start, it->name, it->cat);
}

/* A field as emb_trace_json_field() writes it with hex_text. */
static void field(struct json_writer *w, const struct emb_catalog_field *f,
                  const struct emb_piece *key, const uint8_t *payload)
{
    struct emb_out *o = &w->o;
    if (key) {
        if (w->member)
            emb_out_char(o, ',');
        w->member = true;
        emb_escaped_pieces_put(o, &w->p, *key);
    } else {
        key_name(w, f->name);
    }
    bool is_signed = f->type >= EMB_CAT_I8 && f->type <= EMB_CAT_I64;
    if (f->nvalues == 0 && !f->hex && f->type != EMB_CAT_CHARS && f->type != EMB_CAT_BOOL) {
        if (is_signed) /* a plain number: what the checks below come to */
            emb_out_i64(o, emb_catalog_field_get_int(f, payload));
        else
            emb_out_u64(o, emb_catalog_field_get_uint(f, payload));
        return;
    }
    if (f->type == EMB_CAT_CHARS) {
        const char *s;
        size_t n = emb_trace_field_chars(f, payload, &s);
        emb_out_json_string(o, s, n);
        return;
    }
    int64_t sv = emb_catalog_field_get_int(f, payload);
    uint64_t uv = emb_catalog_field_get_uint(f, payload);
    const char *label = emb_catalog_value_label(f, is_signed ? sv : (int64_t)uv);
    if (label) {
        emb_out_json_string(o, label, strlen(label));
    } else if (f->type == EMB_CAT_BOOL && uv <= 1) {
        emb_out_str(o, uv == 1 ? "true" : "false");
    } else if (f->hex) {
        char buf[24];
        put_text(o, emb_trace_field_text(f, payload, buf, sizeof buf));
    } else if (is_signed) {
        emb_out_i64(o, sv);
    } else {
        emb_out_u64(o, uv);
    }
}

/* The fields of an event; of a slice's end, those its begin did not already give. */
static void fields(struct json_writer *w, const struct emb_trace_event *e,
                   const struct emb_trace_event *skip)
{
    if (!e->ev)
        return;
    const struct emb_piece *key = emb_escaped_pieces_keys(&w->p, e->ev);
    if (key && !skip) { /* the common case (every unsigned number) in one loop */
        for (size_t k = 0; k < e->ev->nfields; k++) {
            const struct emb_catalog_field *f = &e->ev->fields[k];
            if (f->nvalues || f->hex || f->type == EMB_CAT_CHARS || f->type == EMB_CAT_BOOL ||
                (f->type >= EMB_CAT_I8 && f->type <= EMB_CAT_I64)) {
                field(w, f, &key[k], e->payload);
                continue;
            }
            if (w->member)
                emb_out_char(&w->o, ',');
            w->member = true;
            emb_escaped_pieces_put(&w->o, &w->p, key[k]);
            emb_out_u64(&w->o, emb_catalog_field_get_uint(f, e->payload));
        }
        return;
    }
    for (size_t k = 0; k < e->ev->nfields; k++)
        if (!skip || !has_field(skip->ev, e->ev->fields[k].name))
            field(w, &e->ev->fields[k], key ? &key[k] : NULL, e->payload);
}

static void args(struct json_writer *w, const struct emb_perfetto_item *it)
{
    struct emb_out *o = &w->o;
    const struct emb_trace_event *e = it->ev;
    emb_out_bytes(o, ",\"args\": {", 10);
    w->member = false;
    if (it->kind == EMB_PERFETTO_COUNTER) {
        KEY(w, "value");
        emb_out_i64(o, it->value);
    } else if (it->kind == EMB_PERFETTO_LOG) {
        KEY(w, "level");
        put_text(o, level_names[it->log->level <= 4 ? it->log->level : 0]);
        KEY(w, "module");
        put_text(o, it->log->module);
    } else if (e && e->ev) {
        fields(w, e, NULL);
        if (it->end)
            fields(w, it->end, e);
        if (e->kind != EMB_EVT_KIND_THREAD) {
            KEY(w, "kind");
            put_text(o, emb_trace_event_kind_name(e->kind));
            KEY(w, "depth");
            emb_out_u64(o, e->depth);
        }
    } else if (e && e->type == EMB_TREC_UNKNOWN) {
        KEY(w, "id");
        emb_out_u64(o, e->id);
        KEY(w, "raw_bytes");
        emb_out_u64(o, e->payload_size);
    } else if (e) {
        KEY(w, "count");
        emb_out_u64(o, e->count);
    }
    emb_out_char(o, '}');
}

/* A flow's end bound to the item: the same ts, pid, tid and cat (Chrome DevTools'
 * FlowsHandler binds by exactly those). */
static void flow(struct json_writer *w, const struct emb_perfetto_model *m, const struct emb_perfetto_item *it,
                 bool finish, uint32_t id)
{
    const struct emb_perfetto_track *tr = &m->tracks[it->track];
    open_event(w, finish ? "\"ph\": \"f\"" : "\"ph\": \"s\"");
    emb_out_str(&w->o, ",\"name\": \"request\",\"cat\": ");
    put_string(w, it->cat);
    emb_out_bytes(&w->o, ",\"pid\": ", 8);
    emb_out_i64(&w->o, pid_of(tr));
    emb_out_bytes(&w->o, ",\"tid\": ", 8);
    emb_out_i64(&w->o, tid_of(tr));
    emb_out_bytes(&w->o, ",\"ts\": ", 7);
    micros(&w->o, it->ts);
    emb_out_bytes(&w->o, ",\"id\": ", 7);
    emb_out_u64(&w->o, id);
    if (finish)
        emb_out_str(&w->o, ",\"bp\": \"e\"");
    emb_out_str(&w->o, ",\"args\": {}}");
}

static void item(struct json_writer *w, const struct emb_perfetto_model *m, const struct emb_perfetto_item *it)
{
    const struct emb_perfetto_track *tr = &m->tracks[it->track];
    switch (it->kind) {
    case EMB_PERFETTO_SLICE:
        event_head(w, "\"ph\": \"X\"", it->name, it->cat, pid_of(tr), tid_of(tr), it->ts);
        emb_out_bytes(&w->o, ",\"dur\": ", 8);
        micros(&w->o, it->dur);
        break;
    case EMB_PERFETTO_COUNTER:
        event_head(w, "\"ph\": \"C\"", it->name, it->cat, EMB_PERFETTO_PID_CONTEXTS, 0, it->ts);
        break;
    default:
        instant_prefix(w, it, tr);
        micros(&w->o, it->ts);
        emb_out_bytes(&w->o, ",\"s\": \"t\"", 9);
        break;
    }
    args(w, it);
    emb_out_char(&w->o, '}');
    if (it->flow_in)
        flow(w, m, it, true, it->flow_in);
    if (it->flow_out)
        flow(w, m, it, false, it->flow_out);
}

/* Metadata naming or ordering a process (tid < 0: written as 0) or a thread. */
static void metadata_head(struct json_writer *w, const char *what, long long pid, long long tid)
{
    open_event(w, "\"ph\": \"M\"");
    emb_out_str(&w->o, ",\"name\": ");
    put_text(&w->o, what);
    emb_out_str(&w->o, ",\"cat\": \"__metadata\",\"pid\": ");
    emb_out_i64(&w->o, pid);
    emb_out_bytes(&w->o, ",\"tid\": ", 8);
    emb_out_i64(&w->o, tid >= 0 ? tid : 0);
    emb_out_str(&w->o, ",\"ts\": 0,\"args\": {");
}

static void track_name(struct json_writer *w, const char *what, long long pid, long long tid,
                       const char *name)
{
    metadata_head(w, what, pid, tid);
    emb_out_str(&w->o, "\"name\": ");
    put_text(&w->o, name);
    emb_out_str(&w->o, "}}");
}

static void track_sort(struct json_writer *w, const char *what, long long pid, long long tid,
                       long long index)
{
    metadata_head(w, what, pid, tid);
    emb_out_str(&w->o, "\"sort_index\": ");
    emb_out_i64(&w->o, index);
    emb_out_str(&w->o, "}}");
}

static void track_names(struct json_writer *w, const struct emb_perfetto_model *m)
{
    track_name(w, "process_name", EMB_PERFETTO_PID_CONTEXTS, -1, emb_perfetto_string(m, m->process));
    track_name(w, "process_name", EMB_PERFETTO_PID_SCHED, -1, "scheduler");
    for (size_t i = 0; i < m->ntracks; i++) {
        const struct emb_perfetto_track *tr = &m->tracks[i];
        if (tr->kind == EMB_PERFETTO_TRACK_COUNTER)
            continue; /* a counter's track is its name */
        track_name(w, "thread_name", pid_of(tr), tid_of(tr), emb_perfetto_string(m, tr->name));
        track_sort(w, "thread_sort_index", pid_of(tr), tid_of(tr), tr->sort);
    }
}

static void emit_item(void *arg, const struct emb_perfetto_item *it)
{
    struct json_writer *w = arg;
    item(w, w->m, it);
}

/* Written as the model's second walk reaches each item (trace_perfetto_build.c): memory
 * does not grow with the events. */
int emb_trace_write_perfetto_json(const struct emb_trace *t, const struct emb_perfetto_options *opt,
                                  FILE *out)
{
    struct emb_perfetto_model m;
    if (emb_perfetto_model_scan(&m, t, opt ? opt->logs : NULL) != 0) {
        emb_perfetto_model_free(&m);
        return -1;
    }
    struct json_writer w;
    memset(&w, 0, sizeof w);
    if (!strings_build(&w, &m)) {
        emb_perfetto_model_free(&m);
        return -1;
    }
    if (!emb_out_init(&w.o, out)) {
        strings_free(&w);
        emb_perfetto_model_free(&m);
        return -1;
    }
    emb_out_str(&w.o, "{\n  \"displayTimeUnit\": \"ns\",\n  \"traceEvents\": [");
    track_names(&w, &m);
    int rc = emb_perfetto_model_emit(&m, emit_item, &w);
    emb_out_str(&w.o, w.any_event ? "\n  ]\n}\n" : "]\n}\n");
    strings_free(&w);
    emb_perfetto_model_free(&m);
    int wrc = emb_out_finish(&w.o);
    return rc != 0 ? -1 : wrc;
}

int emb_trace_write_perfetto(const struct emb_trace *t, FILE *out)
{
    return emb_trace_write_perfetto_json(t, NULL, out);
}
