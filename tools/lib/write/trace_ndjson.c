/* The trace as NDJSON, one object per line, formatted by hand (trace_write.h): the bytes
 * emb_trace_json_record() and emb_json_end() write for each record (a test compares the
 * two). What every line of an event or a context repeats (its names and keys) is escaped
 * once per trace, and each line copies it. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "trace_write.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <emb/trace_format.h>

#include "out_buf.h"

/* A piece of the escaped text. */
struct piece {
    uint32_t at, len;
};

/* The constant parts of the lines, escaped once: in `text`, one after another. */
struct ndjson_text {
    char *text;
    size_t size;
    uint32_t *slot;       /* event id -> its index in `event` plus one; 0: not in the catalogue */
    struct piece *event;  /* `,"event":NAME,"class":CLASS,"id":ID,"fields":{` */
    uint32_t *first_key;  /* per event: its first field's index in `key` */
    struct piece *key;    /* a field's `"NAME":`, after a comma for all but the first */
    struct piece *context; /* per context: `,"context":NAME,"context_id":ID` */
    struct piece kind[EMB_EVT_KIND_FAULT + 1]; /* `,"kind":NAME,"depth":` */
};

static uint32_t text_at(struct emb_out *o) { return (uint32_t)ftell(o->file) + (uint32_t)o->len; }

static void piece_end(struct emb_out *o, struct piece *p, uint32_t at)
{
    p->at = at;
    p->len = text_at(o) - at;
}

static void json_name(struct emb_out *o, const char *s) { emb_out_json_string(o, s, strlen(s)); }

static void event_pieces(struct emb_out *o, struct ndjson_text *x, const struct emb_catalog_event *ev,
                         size_t index, size_t *nkeys)
{
    uint32_t at = text_at(o);
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
    piece_end(o, &x->event[index], at);
    x->first_key[index] = (uint32_t)*nkeys;
    for (size_t k = 0; k < ev->nfields; k++) {
        at = text_at(o);
        if (k)
            emb_out_char(o, ',');
        json_name(o, ev->fields[k].name);
        emb_out_char(o, ':');
        piece_end(o, &x->key[(*nkeys)++], at);
    }
    x->slot[ev->id] = (uint32_t)index + 1u;
}

/* Writes every piece through one emb_out into a memory stream. */
static void write_pieces(struct emb_out *o, struct ndjson_text *x, const struct emb_trace *t)
{
    const struct emb_catalog *cat = emb_trace_catalog(t);
    size_t index = 0, nkeys = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++)
            event_pieces(o, x, &cat->classes[c].events[e], index++, &nkeys);
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        uint32_t at = text_at(o);
        emb_out_str(o, ",\"context\":");
        json_name(o, c->name);
        emb_out_str(o, ",\"context_id\":");
        emb_out_u64(o, c->id);
        piece_end(o, &x->context[i], at);
    }
    for (uint8_t k = 0; k <= EMB_EVT_KIND_FAULT; k++) {
        uint32_t at = text_at(o);
        emb_out_str(o, ",\"kind\":");
        json_name(o, emb_trace_event_kind_name(k));
        emb_out_str(o, ",\"depth\":");
        piece_end(o, &x->kind[k], at);
    }
}

static void text_free(struct ndjson_text *x)
{
    free(x->text);
    free(x->slot);
    free(x->event);
    free(x->first_key);
    free(x->key);
    free(x->context);
}

/* False when out of memory. */
static bool text_build(struct ndjson_text *x, const struct emb_trace *t)
{
    const struct emb_catalog *cat = emb_trace_catalog(t);
    size_t nevents = 0, nfields = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++, nevents++)
            nfields += cat->classes[c].events[e].nfields;
    memset(x, 0, sizeof *x);
    x->slot = calloc(65536, sizeof *x->slot);
    x->event = calloc(nevents + 1, sizeof *x->event);
    x->first_key = calloc(nevents + 1, sizeof *x->first_key);
    x->key = calloc(nfields + 1, sizeof *x->key);
    x->context = calloc(emb_trace_context_count(t) + 1, sizeof *x->context);
    FILE *m = open_memstream(&x->text, &x->size);
    struct emb_out o;
    bool ok = x->slot && x->event && x->first_key && x->key && x->context && m &&
              emb_out_init(&o, m);
    if (ok) {
        write_pieces(&o, x, t);
        ok = emb_out_finish(&o) == 0;
    }
    if (m != NULL && fclose(m) != 0)
        ok = false;
    if (!ok)
        text_free(x);
    return ok;
}

static void put(struct emb_out *o, const struct ndjson_text *x, struct piece p)
{
    emb_out_bytes(o, x->text + p.at, p.len);
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
    uint32_t slot = e->type == EMB_TREC_EVENT ? x->slot[e->id] : 0u;
    if (slot == 0u) {
        ndjson_unknown(o, e);
        return;
    }
    put(o, x, x->event[slot - 1u]);
    const struct piece *key = &x->key[x->first_key[slot - 1u]];
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
