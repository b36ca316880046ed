/* The trace for programs as one JSON document, and the pieces of it that other writers
 * share (NDJSON lines: trace_ndjson.c). */
#include "trace_threads.h"
#include "trace_write.h"

#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>

#include <emb/trace_format.h>

static void json_hex(struct emb_json *j, const char *key, const uint8_t *b, size_t n)
{
    char buf[2 * 64 + 1];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 2 < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%02x", b[i]);
    buf[o] = 0;
    emb_json_string(j, key, buf);
}

void emb_trace_json_field(struct emb_json *j, const struct emb_catalog_field *f,
                          const uint8_t *payload, bool hex_text)
{
    if (f->type == EMB_CAT_CHARS) {
        const char *s;
        size_t n = emb_trace_field_chars(f, payload, &s);
        emb_json_string_n(j, f->name, s, n);
        return;
    }
    bool is_signed = f->type >= EMB_CAT_I8 && f->type <= EMB_CAT_I64;
    int64_t sv = emb_catalog_field_get_int(f, payload);
    uint64_t uv = emb_catalog_field_get_uint(f, payload);
    const char *label = emb_catalog_value_label(f, is_signed ? sv : (int64_t)uv);
    if (label)
        emb_json_string(j, f->name, label);
    else if (f->type == EMB_CAT_BOOL && uv <= 1)
        emb_json_bool(j, f->name, uv == 1);
    else if (hex_text && f->hex) {
        char buf[24];
        emb_json_string(j, f->name, emb_trace_field_text(f, payload, buf, sizeof buf));
    } else if (is_signed)
        emb_json_int(j, f->name, sv);
    else
        emb_json_uint(j, f->name, uv);
}

void emb_trace_json_record(struct emb_json *j, const struct emb_trace *t,
                           const struct emb_trace_event *e)
{
    const struct emb_trace_context *c = emb_trace_context(t, e->ctx);
    emb_json_begin_object(j, NULL);
    emb_json_uint(j, "ts", e->ts);
    emb_json_uint(j, "ns", e->ns);
    emb_json_string(j, "context", c->name);
    emb_json_uint(j, "context_id", e->context_id);
    if (e->type == EMB_TREC_DISCARDED || e->type == EMB_TREC_LOST) {
        emb_json_string(j, "loss", e->type == EMB_TREC_DISCARDED ? "events_discarded"
                                                                 : "packets_lost");
        emb_json_uint(j, "count", e->count);
        emb_json_end_object(j);
        return;
    }
    emb_json_string(j, "kind", emb_trace_event_kind_name(e->kind));
    emb_json_uint(j, "depth", e->depth);
    if (e->type == EMB_TREC_UNKNOWN) {
        emb_json_null(j, "event");
        emb_json_null(j, "class");
        emb_json_uint(j, "id", e->id);
        emb_json_uint(j, "offset", e->offset);
        json_hex(j, "raw", e->payload, e->payload_size);
        emb_json_end_object(j);
        return;
    }
    emb_json_string(j, "event", e->ev->name);
    emb_json_string(j, "class", e->ev->cls ? e->ev->cls->name : NULL);
    emb_json_uint(j, "id", e->id);
    emb_json_begin_object(j, "fields");
    for (size_t k = 0; k < e->ev->nfields; k++)
        emb_trace_json_field(j, &e->ev->fields[k], e->payload, false);
    emb_json_end_object(j);
    emb_json_end_object(j);
}

void emb_trace_json_header(struct emb_json *j, const struct emb_trace *t)
{
    const struct emb_trace_info *h = emb_trace_info(t);
    char buf[40];
    emb_json_begin_object(j, "header");
    emb_json_uint(j, "version", h->version);
    snprintf(buf, sizeof buf, "0x%08" PRIx32, h->catalog_checksum);
    emb_json_string(j, "catalog_checksum", buf);
    emb_json_uint(j, "packet_size", h->packet_size);
    emb_json_uint(j, "clock_hz", h->clock_hz);
    emb_json_int(j, "clock_offset_ns", h->clock_offset_ns);
    const uint8_t *u = h->uuid;
    snprintf(buf, sizeof buf,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    emb_json_string(j, "uuid", buf);
    json_hex(j, "build_id", h->build_id, h->build_id_len);
    emb_json_uint(j, "pointer_size", h->pointer_size);
    emb_json_string(j, "port", h->port);
    if (h->ring_packets != 0u)
        emb_json_uint(j, "ring_packets", h->ring_packets);
    emb_json_uint(j, "start_ts", h->start_ts);
    emb_json_uint(j, "end_ts", h->end_ts);
    emb_json_end_object(j);
}

void emb_trace_json_contexts(struct emb_json *j, const struct emb_trace *t)
{
    emb_json_begin_array(j, "contexts");
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "id", c->id);
        emb_json_string(j, "name", c->name);
        emb_json_string(j, "kind", emb_trace_context_kind_name(c->kind));
        emb_json_bool(j, "in_table", c->in_table);
        emb_json_uint(j, "events", c->events);
        emb_json_uint(j, "unknown", c->unknown);
        emb_json_uint(j, "packets", c->packets);
        emb_json_uint(j, "packets_opened", c->table_packets);
        emb_json_uint(j, "discarded", c->discarded);
        emb_json_uint(j, "lost_packets", c->lost_packets);
        emb_json_uint(j, "first_seq", c->first_seq);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

/* The priority inheritance chains: "pi_chains": [{"links", "count", "first_ts",
 * "threads": [index...], "mutexes": [{"handle", "name"}...], "text"}]. */
static void json_pi_chains(struct emb_json *j, const struct emb_trace_threads *th)
{
    emb_json_uint(j, "pi_deepest", th->pi_deepest);
    emb_json_begin_array(j, "pi_chains");
    for (size_t i = 0; i < th->npi; i++) {
        const struct emb_trace_pi_chain *c = &th->pi[i];
        char text[512];
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "links", c->links);
        emb_json_uint(j, "count", c->count);
        emb_json_uint(j, "first_ts", c->first_ts);
        emb_json_begin_array(j, "threads");
        for (size_t k = 0; k <= c->links; k++)
            emb_json_uint(j, NULL, c->thread[k]);
        emb_json_end_array(j);
        emb_json_begin_array(j, "mutexes");
        for (size_t k = 0; k < c->links; k++) {
            emb_json_begin_object(j, NULL);
            emb_json_hex(j, "handle", c->mutex[k]);
            emb_json_string(j, "name", c->mutex_name[k]);
            emb_json_end_object(j);
        }
        emb_json_end_array(j);
        emb_json_string(j, "text", emb_trace_pi_chain_text(th, c, text, sizeof text));
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

#define THREAD(member, key) EMB_JSON_FIELD(struct emb_trace_thread, member, key, UINT)
static const struct emb_json_field THREAD_FIELDS[] = {
    THREAD(index, "index"),
    EMB_JSON_FIELD(struct emb_trace_thread, name, "name", TEXT),
    THREAD(switches_in, "switches_in"),
    THREAD(switches_out, "switches_out"),
    THREAD(run_ticks, "run_ticks"),
};
static const struct emb_json_field THREAD_WAIT_FIELDS[] = {THREAD(blocked_ticks, "blocked_ticks"), THREAD(waits, "waits")};
#undef THREAD

/* The summary's "threads": each thread's run and blocked time from the switch events (none: absent). */
static void json_threads(struct emb_json *j, const struct emb_trace *t)
{
    struct emb_trace_threads th;
    if (emb_trace_threads_compute(t, &th) != 0 || th.n == 0) {
        emb_trace_threads_free(&th);
        return;
    }
    emb_json_begin_object(j, "threads");
    emb_json_uint(j, "switches", th.switches);
    emb_json_uint(j, "span_ticks", th.span_ticks);
    emb_json_begin_array(j, "items");
    for (size_t i = 0; i < th.n; i++) {
        const struct emb_trace_thread *x = &th.items[i];
        emb_json_begin_object(j, NULL);
        EMB_JSON_FIELDS(j, x, THREAD_FIELDS);
        emb_json_double(j, "load", emb_trace_thread_load(&th, x));
        EMB_JSON_FIELDS(j, x, THREAD_WAIT_FIELDS);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    json_pi_chains(j, &th);
    emb_json_end_object(j);
    emb_trace_threads_free(&th);
}

void emb_trace_json_summary(struct emb_json *j, const struct emb_trace *t)
{
    const struct emb_trace_summary *s = emb_trace_summary(t);
    emb_json_begin_object(j, "summary");
    emb_json_uint(j, "events", s->events);
    emb_json_uint(j, "unknown", s->unknown);
    emb_json_uint(j, "discarded", s->discarded);
    emb_json_uint(j, "lost_packets", s->lost_packets);
    emb_json_uint(j, "lost_no_context", s->lost_no_context);
    emb_json_uint(j, "packets", s->packets);
    emb_json_uint(j, "bad_packets", s->bad_packets);
    emb_json_uint(j, "errors", s->errors);
    emb_json_bool(j, "fatal", s->fatal);
    json_threads(j, t);
    emb_json_end_object(j);
    const struct emb_problems *found = emb_trace_problems(t);
    emb_json_begin_array(j, "issues");
    for (size_t i = 0; i < found->n; i++) {
        const struct emb_problem *p = &found->items[i];
        emb_json_begin_object(j, NULL);
        if (p->offset >= 0)
            emb_json_int(j, "offset", p->offset);
        else
            emb_json_null(j, "offset");
        emb_json_string(j, "message", p->message);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

/* The document's opening: the file, its header and contexts. */
static void document_begin(struct emb_json *j, const struct emb_trace *t, FILE *out)
{
    emb_json_begin_document(j, out);
    emb_json_string(j, "file", emb_trace_name(t));
    emb_trace_json_header(j, t);
    emb_trace_json_contexts(j, t);
}

/* The summary and issues, and the document's close. */
static int document_end(struct emb_json *j, const struct emb_trace *t)
{
    emb_trace_json_summary(j, t);
    emb_json_end_object(j);
    emb_json_end(j);
    return ferror(j->out) ? -1 : 0;
}

int emb_trace_write_json(const struct emb_trace *t, FILE *out)
{
    struct emb_json j;
    document_begin(&j, t, out);
    /* The records one at a time in time order (a streaming decode keeps none). */
    struct emb_trace_cursor *cur = emb_trace_cursor_open(t);
    if (cur == NULL)
        return -1;
    emb_json_begin_array(&j, "events");
    /* One event per line even in the pretty document: readable and diffable. */
    j.flat_depth = 2;
    for (const struct emb_trace_event *e; (e = emb_trace_cursor_next(cur)) != NULL;)
        emb_trace_json_record(&j, t, e);
    emb_trace_cursor_close(cur);
    emb_json_end_array(&j);
    j.flat_depth = 0;
    return document_end(&j, t);
}

int emb_trace_write_json_summary(const struct emb_trace *t, FILE *out)
{
    struct emb_json j;
    document_begin(&j, t, out);
    return document_end(&j, t);
}
