/* The trace as NDJSON, one object per line, formatted by hand (trace_write.h): the bytes
 * emb_trace_json_record() and emb_json_end() write for each record (a test compares the
 * two). What every line of an event or a context repeats (its names and keys) is escaped
 * once per trace, and each line copies it. */
#include "trace_write.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <emb/trace_format.h>

#include "escaped_pieces.h"
#include "out_buf.h"

/* The constant parts of the lines, escaped once (escaped_pieces.h): the catalogue's keys,
 * a field's `"NAME":` after a comma for all but the first, and these. */
struct ndjson_text {
    struct emb_escaped_pieces p;
    struct emb_piece *event;   /* `,"event":NAME,"class":CLASS,"id":ID,"fields":{` */
    struct emb_piece *context; /* per context: `,"context":NAME,"context_id":ID` */
    struct emb_piece kind[EMB_EVT_KIND_FAULT + 1]; /* `,"kind":NAME,"depth":` */
    const struct emb_trace *t;
};

static void json_name(struct emb_out *o, const char *s) { emb_out_json_string(o, s, strlen(s)); }

static void key_piece(struct emb_out *o, const char *name, size_t k)
{
    if (k)
        emb_out_char(o, ',');
    json_name(o, name);
    emb_out_char(o, ':');
}

static void event_piece(struct emb_out *o, const struct emb_catalog_event *ev, size_t index,
                        void *arg)
{
    struct ndjson_text *x = arg;
    uint32_t at = emb_escaped_pieces_at(o);
    emb_out_str(o, ",\"event\":");
    json_name(o, ev->name);
    emb_out_str(o, ",\"class\":");
    if (ev->cls)
        json_name(o, ev->cls->name);
    else
        emb_out_str(o, "null");
    emb_out_str(o, ",\"id\":");
    emb_out_u64(o, ev->id);
    emb_out_str(o, ",\"fields\":{");
    emb_escaped_pieces_end(o, &x->event[index], at);
}

/* The contexts' and the kinds' pieces. */
static void other_pieces(struct emb_out *o, void *arg)
{
    struct ndjson_text *x = arg;
    for (size_t i = 0; i < emb_trace_context_count(x->t); i++) {
        const struct emb_trace_context *c = emb_trace_context(x->t, i);
        uint32_t at = emb_escaped_pieces_at(o);
        emb_out_str(o, ",\"context\":");
        json_name(o, c->name);
        emb_out_str(o, ",\"context_id\":");
        emb_out_u64(o, c->id);
        emb_escaped_pieces_end(o, &x->context[i], at);
    }
    for (uint8_t k = 0; k <= EMB_EVT_KIND_FAULT; k++) {
        uint32_t at = emb_escaped_pieces_at(o);
        emb_out_str(o, ",\"kind\":");
        json_name(o, emb_trace_event_kind_name(k));
        emb_out_str(o, ",\"depth\":");
        emb_escaped_pieces_end(o, &x->kind[k], at);
    }
}

static void text_free(struct ndjson_text *x)
{
    emb_escaped_pieces_free(&x->p);
    free(x->event);
    free(x->context);
}

/* False when out of memory. */
static bool text_build(struct ndjson_text *x, const struct emb_trace *t)
{
    const struct emb_catalog *cat = emb_trace_catalog(t);
    size_t nevents = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        nevents += cat->classes[c].nevents;
    memset(x, 0, sizeof *x);
    x->t = t;
    x->event = calloc(nevents + 1, sizeof *x->event);
    x->context = calloc(emb_trace_context_count(t) + 1, sizeof *x->context);
    struct emb_escaped_pieces_spec spec = {.key = key_piece, .event = event_piece,
                                           .rest = other_pieces, .arg = x};
    if (x->event && x->context && emb_escaped_pieces_build(&x->p, cat, &spec))
        return true;
    free(x->event);
    free(x->context);
    return false;
}

static void put(struct emb_out *o, const struct ndjson_text *x, struct emb_piece p)
{
    emb_escaped_pieces_put(o, &x->p, p);
}

static void ndjson_value(struct emb_out *o, const struct emb_catalog_field *f,
                         const uint8_t *payload)
{
    if (f->type == EMB_CAT_CHARS) {
        const char *s;
        size_t n = emb_trace_field_chars(f, payload, &s);
        emb_out_json_string(o, s, n);
        return;
    }
    bool is_signed = f->type >= EMB_CAT_I8 && f->type <= EMB_CAT_I64;
    int64_t sv = emb_catalog_field_get_int(f, payload);
    uint64_t uv = emb_catalog_field_get_uint(f, payload);
    const char *label =
        f->nvalues ? emb_catalog_value_label(f, is_signed ? sv : (int64_t)uv) : NULL;
    if (label)
        emb_out_json_string(o, label, strlen(label));
    else if (f->type == EMB_CAT_BOOL && uv <= 1)
        emb_out_str(o, uv ? "true" : "false");
    else if (is_signed)
        emb_out_i64(o, sv);
    else
        emb_out_u64(o, uv);
}

static void ndjson_unknown(struct emb_out *o, const struct emb_trace_event *e)
{
    emb_out_str(o, ",\"event\":null,\"class\":null,\"id\":");
    emb_out_u64(o, e->id);
    emb_out_str(o, ",\"offset\":");
    emb_out_u64(o, e->offset);
    emb_out_str(o, ",\"raw\":\"");
    for (uint32_t k = 0; k < e->payload_size && k < 64; k++) /* as json_hex: 64 at most */
        emb_out_hex(o, e->payload[k], 2);
    emb_out_str(o, "\"}\n");
}

static void ndjson_record(struct emb_out *o, const struct ndjson_text *x,
                          const struct emb_trace_event *e)
{
    emb_out_bytes(o, "{\"ts\":", 6);
    emb_out_u64(o, e->ts);
    emb_out_bytes(o, ",\"ns\":", 6);
    emb_out_u64(o, e->ns);
    put(o, x, x->context[e->ctx]);
    if (e->type == EMB_TREC_DISCARDED || e->type == EMB_TREC_LOST) {
        emb_out_str(o, e->type == EMB_TREC_DISCARDED ? ",\"loss\":\"events_discarded\",\"count\":"
                                                     : ",\"loss\":\"packets_lost\",\"count\":");
        emb_out_u64(o, e->count);
        emb_out_str(o, "}\n");
        return;
    }
    put(o, x, x->kind[e->kind <= EMB_EVT_KIND_FAULT ? e->kind : 0]);
    emb_out_u64(o, e->depth);
    uint32_t slot = e->type == EMB_TREC_EVENT ? x->p.slot[e->id] : 0u;
    if (slot == 0u) {
        ndjson_unknown(o, e);
        return;
    }
    put(o, x, x->event[slot - 1u]);
    const struct emb_piece *key = &x->p.key[x->p.first_key[slot - 1u]];
    for (size_t k = 0; k < e->ev->nfields; k++) {
        put(o, x, key[k]);
        ndjson_value(o, &e->ev->fields[k], e->payload);
    }
    emb_out_bytes(o, "}}\n", 3);
}

int emb_trace_write_ndjson(const struct emb_trace *t, FILE *out)
{
    return emb_trace_write_ndjson_from(t, out, NULL);
}

int emb_trace_write_ndjson_from(const struct emb_trace *t, FILE *out, const size_t *skip)
{
    struct emb_out o;
    struct ndjson_text x;
    if (!text_build(&x, t))
        return -1;
    struct emb_trace_cursor *cur = emb_trace_cursor_open(t);
    size_t *seen = calloc(emb_trace_context_count(t) + 1u, sizeof *seen);
    if (cur == NULL || seen == NULL || !emb_out_init(&o, out)) {
        emb_trace_cursor_close(cur);
        free(seen);
        text_free(&x);
        return -1;
    }
    const struct emb_trace_event *e;
    while ((e = emb_trace_cursor_next(cur)) != NULL)
        if (!emb_trace_record_skipped(seen, e, skip))
            ndjson_record(&o, &x, e);
    emb_trace_cursor_close(cur);
    free(seen);
    text_free(&x);
    return emb_out_finish(&o);
}
