/* The trace as aligned text for a person, and its summary. */
#define _POSIX_C_SOURCE 200809L

#include "buffer.h"
#include "out_buf.h"
#include "trace_names.h"
#include "trace_threads.h"
#include "trace_write.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <emb/trace_format.h>

const char *emb_trace_context_kind_name(unsigned kind)
{
    return kind == EMB_CONTEXT_CPU ? "cpu" : kind == EMB_CONTEXT_THREAD ? "thread" : "?";
}

const char *emb_trace_event_kind_name(unsigned kind)
{
    switch (kind) {
    case EMB_EVT_KIND_THREAD: return "thread";
    case EMB_EVT_KIND_ISR: return "isr";
    case EMB_EVT_KIND_FAULT: return "fault";
    default: return "?";
    }
}

struct piece {
    uint32_t at, len;
};

/* The text writer's state: the columns' widths, the colour codes (all "" without colour)
 * and the output buffer every line is formatted into. */
struct text_writer {
    struct emb_out o;
    const struct emb_trace *t;
    const struct emb_trace_names *names;
    struct emb_trace_names *own_names;
    uint64_t hz;
    bool absolute, wall;
    size_t wtime, wctx, wname;
    /* What every line of a context or an event repeats, built once (build_pieces): its
     * bytes in `text`, which has 32 bytes of padding after the last. */
    struct emb_buf text;
    struct piece *ctx_column;   /* by context index: the name padded to the column, the gap */
    struct piece *event_column; /* by event id: the name column, colours and padding */
    uint32_t *first_key;        /* by event id: its first field's key in `key` */
    struct piece *key;          /* a field's "  name=", colours around the name */
    const char *dim, *reset, *red, *yellow, *bold;
    const char *class_code[5];
    time_t date_s; /* the second `date` holds (wall clock), to format each second once */
    bool date_ok;
    char date[32];
    size_t date_len;
};

/* The wall clock's "YYYY-mm-dd HH:MM:SS" of second s: false when it has none. */
static bool wall_date(struct text_writer *w, time_t s)
{
    if (w->date_ok && w->date_s == s)
        return true;
    struct tm tm;
    w->date_ok = gmtime_r(&s, &tm) &&
                 (w->date_len = strftime(w->date, sizeof w->date, "%Y-%m-%d %H:%M:%S", &tm));
    w->date_s = s;
    return w->date_ok;
}

/* Time column: seconds since the trace start, or the wall clock (UTC) when asked and
 * known. Returns its length in buf (at least 48 bytes). */
static size_t format_time(struct text_writer *w, char *buf, const struct emb_trace_event *e)
{
    if (w->wall) {
        int64_t ns = e->wall_ns % 1000000000;
        time_t s = (time_t)(e->wall_ns / 1000000000);
        if (ns < 0) {
            ns += 1000000000;
            s--;
        }
        if (wall_date(w, s)) {
            memcpy(buf, w->date, w->date_len);
            size_t n = w->date_len;
            buf[n++] = '.';
            n += emb_fmt_nine_digits(buf + n, (uint32_t)ns);
            buf[n++] = 'Z';
            return n;
        }
    }
    return emb_fmt_seconds_ns(buf, w->absolute ? emb_trace_ticks_to_ns(e->ts, w->hz) : e->ns);
}

/* The kind column's text and its length in *len. */
static const char *kind_text(const struct emb_trace_event *e, char *buf, size_t *len)
{
    if (e->kind == EMB_EVT_KIND_ISR && e->depth > 1) {
        memcpy(buf, "isr", 3);
        *len = 3 + emb_fmt_u64(buf + 3, e->depth);
        return buf;
    }
    if (e->kind == EMB_EVT_KIND_ISR)
        return *len = 3, "isr";
    if (e->kind == EMB_EVT_KIND_FAULT)
        return *len = 5, "FAULT";
    return *len = 0, "";
}

/* A colour code: nothing to do when colour is off (the code is ""). */
static inline void out_code(struct emb_out *o, const char *code)
{
    if (code[0] != '\0')
        emb_out_str(o, code);
}

/* A field's value as emb_trace_field_display() writes it; a plain integer formatted here,
 * the rest (labels, names, durations, text) by it. */
static void write_value(struct text_writer *w, const struct emb_catalog_field *f,
                        const uint8_t *payload)
{
    struct emb_out *o = &w->o;
    if (f->type == EMB_CAT_CHARS || f->nvalues > 0 || f->type == EMB_CAT_BOOL ||
        f->meaning == EMB_CAT_MEANING_THREAD || f->meaning == EMB_CAT_MEANING_HANDLE ||
        f->meaning == EMB_CAT_MEANING_CYCLES) {
        char buf[512];
        emb_out_str(o, emb_trace_field_display(w->names, w->hz, f, payload, buf, sizeof buf));
    } else if (f->hex) {
        emb_out_bytes(o, "0x", 2);
        emb_out_hex(o, emb_catalog_field_get_uint(f, payload), 2u * f->size);
    } else if (f->type >= EMB_CAT_I8 && f->type <= EMB_CAT_I64) {
        emb_out_i64(o, emb_catalog_field_get_int(f, payload));
    } else {
        emb_out_u64(o, emb_catalog_field_get_uint(f, payload));
    }
}

static void write_marker(struct text_writer *w, const struct emb_trace_event *e,
                         const char *ctx_name)
{
    struct emb_out *o = &w->o;
    out_code(o, w->yellow);
    emb_out_bytes(o, "-- ", 3);
    emb_out_u64(o, e->count);
    emb_out_str(o, e->type == EMB_TREC_DISCARDED
                       ? (e->count == 1 ? " event discarded" : " events discarded")
                       : (e->count == 1 ? " packet lost" : " packets lost"));
    emb_out_bytes(o, " in ctx ", 8);
    emb_out_str(o, ctx_name);
    out_code(o, w->reset);
    emb_out_char(o, '\n');
}

static void write_unknown(struct text_writer *w, const struct emb_trace_event *e)
{
    struct emb_out *o = &w->o;
    out_code(o, w->red);
    emb_out_bytes(o, "?0x", 3);
    emb_out_hex(o, e->id, 4);
    out_code(o, w->reset);
    emb_out_bytes(o, "  (unknown event, ", 18);
    emb_out_u64(o, e->payload_size);
    emb_out_bytes(o, " raw bytes:", 11);
    for (uint32_t k = 0; k < e->payload_size && k < 32; k++) {
        emb_out_char(o, ' ');
        emb_out_hex(o, e->payload[k], 2);
    }
    emb_out_str(o, e->payload_size > 32 ? " ...)\n" : ")\n");
}

static void put_piece(struct text_writer *w, struct piece p)
{
    const char *s = (const char *)w->text.data + p.at;
    if (p.len <= 32u)
        emb_out_short(&w->o, s, p.len);
    else
        emb_out_bytes(&w->o, s, p.len);
}

static void write_event(struct text_writer *w, const struct emb_trace_event *e)
{
    struct emb_out *o = &w->o;
    const struct emb_catalog_event *ev = e->ev;
    put_piece(w, w->event_column[ev->id]);
    const struct piece *key = &w->key[w->first_key[ev->id]];
    for (size_t k = 0; k < ev->nfields; k++) {
        put_piece(w, key[k]);
        write_value(w, &ev->fields[k], e->payload);
    }
    emb_out_char(o, '\n');
}

static void write_line(struct text_writer *w, const struct emb_trace_event *e)
{
    struct emb_out *o = &w->o;
    const char *ctx_name = emb_trace_context(w->t, e->ctx)->name;
    char tbuf[48], kbuf[8];
    size_t tlen = format_time(w, tbuf, e);
    out_code(o, w->dim);
    emb_out_align_right(o, tbuf, tlen, w->wtime);
    out_code(o, w->reset);
    emb_out_bytes(o, "  ", 2);
    put_piece(w, w->ctx_column[e->ctx]);
    if (e->type == EMB_TREC_DISCARDED || e->type == EMB_TREC_LOST) {
        write_marker(w, e, ctx_name);
        return;
    }
    size_t klen;
    const char *kind = kind_text(e, kbuf, &klen);
    out_code(o, w->red);
    emb_out_align_left(o, kind, klen, 5);
    out_code(o, w->reset);
    emb_out_bytes(o, "  ", 2);
    if (e->type == EMB_TREC_UNKNOWN)
        write_unknown(w, e);
    else
        write_event(w, e);
}

static void writer_colours(struct text_writer *w, FILE *out)
{
    static const enum emb_color palette[] = {EMB_C_GREEN, EMB_C_CYAN, EMB_C_YELLOW,
                                             EMB_C_MAGENTA, EMB_C_BLUE};
    w->dim = emb_color_code(out, EMB_C_DIM);
    w->reset = emb_color_code(out, EMB_C_RESET);
    w->red = emb_color_code(out, EMB_C_RED);
    w->yellow = emb_color_code(out, EMB_C_YELLOW);
    w->bold = emb_color_code(out, EMB_C_BOLD);
    for (size_t i = 0; i < 5; i++)
        w->class_code[i] = emb_color_code(out, palette[i]);
}

/* The widths of the context, event name and time columns. */
static void column_widths(struct text_writer *w)
{
    const struct emb_trace *t = w->t;
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        size_t l = strlen(emb_trace_context(t, i)->name);
        w->wctx = l > w->wctx ? l : w->wctx;
    }
    for (uint32_t id = 0; id <= 0xFFFFu; id++) {
        const struct emb_catalog_event *ev = emb_catalog_event(emb_trace_catalog(t), (uint16_t)id);
        size_t l = ev != NULL ? strlen(ev->name) : 0u;
        if (ev != NULL && emb_trace_event_count(t, (uint16_t)id) != 0)
            w->wname = l > w->wname ? l : w->wname;
    }
    if (emb_trace_record_count(t) != 0) { /* times only grow: the last is the widest */
        struct emb_trace_event last = {.ts = emb_trace_last_ts(t)};
        emb_trace_set_times(t, &last);
        char tbuf[48];
        w->wtime = format_time(w, tbuf, &last);
    }
}

static void add_str(struct emb_buf *b, const char *s) { emb_buf_append(b, s, strlen(s)); }

static void add_padded(struct emb_buf *b, const char *s, size_t width)
{
    size_t n = strlen(s);
    emb_buf_append(b, s, n);
    for (; n < width; n++)
        emb_buf_append_byte(b, ' ');
}

static struct piece piece_since(const struct emb_buf *b, size_t at)
{
    return (struct piece){.at = (uint32_t)at, .len = (uint32_t)(b->len - at)};
}

/* An event's name column and its fields' keys, as write_event() writes them. */
static void event_pieces(struct text_writer *w, const struct emb_catalog_event *ev, size_t *nkeys)
{
    struct emb_buf *b = &w->text;
    size_t at = b->len;
    add_str(b, w->bold);
    add_str(b, ev->cls ? w->class_code[ev->cls->id % 5u] : w->red);
    add_padded(b, ev->name, ev->nfields ? w->wname : 0);
    add_str(b, w->reset);
    w->event_column[ev->id] = piece_since(b, at);
    w->first_key[ev->id] = (uint32_t)*nkeys;
    for (size_t k = 0; k < ev->nfields; k++) {
        at = b->len;
        emb_buf_append(b, "  ", 2);
        add_str(b, w->dim);
        add_str(b, ev->fields[k].name);
        emb_buf_append_byte(b, '=');
        add_str(b, w->reset);
        w->key[(*nkeys)++] = piece_since(b, at);
    }
}

/* The pieces of text lines repeat (after the widths and colours): false when out of memory. */
static bool build_pieces(struct text_writer *w)
{
    const struct emb_catalog *cat = emb_trace_catalog(w->t);
    size_t nctx = emb_trace_context_count(w->t), nfields = 0, nkeys = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++)
            nfields += cat->classes[c].events[e].nfields;
    w->ctx_column = calloc(nctx + 1u, sizeof *w->ctx_column);
    w->event_column = calloc(0x10000u, sizeof *w->event_column);
    w->first_key = calloc(0x10000u, sizeof *w->first_key);
    w->key = calloc(nfields + 1u, sizeof *w->key);
    if (!w->ctx_column || !w->event_column || !w->first_key || !w->key)
        return false;
    struct emb_buf *b = &w->text;
    for (size_t i = 0; i < nctx; i++) {
        size_t at = b->len;
        add_padded(b, emb_trace_context(w->t, i)->name, w->wctx);
        emb_buf_append(b, "  ", 2);
        w->ctx_column[i] = piece_since(b, at);
    }
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++)
            event_pieces(w, &cat->classes[c].events[e], &nkeys);
    static const char padding[32];
    emb_buf_append(b, padding, sizeof padding); /* emb_out_short() reads 32 bytes */
    return !b->failed;
}

static void writer_free(struct text_writer *w)
{
    emb_buf_free(&w->text);
    EMB_FREE_ALL(w->ctx_column, w->event_column, w->first_key, w->key);
}

int emb_trace_write_text(const struct emb_trace *t, FILE *out,
                         const struct emb_trace_text_options *opt)
{
    struct text_writer w = {.t = t, .absolute = opt && opt->absolute,
                            .hz = emb_trace_info(t)->clock_hz};
    w.wall = w.absolute && emb_trace_info(t)->clock_offset_ns != 0;
    column_widths(&w);
    writer_colours(&w, out);
    bool pieces = build_pieces(&w);
    struct emb_trace_cursor *cur = pieces ? emb_trace_cursor_open(t) : NULL;
    if (cur == NULL || !emb_out_init(&w.o, out)) {
        emb_trace_cursor_close(cur);
        writer_free(&w);
        return -1;
    }
    w.names = opt && opt->names ? opt->names : (w.own_names = emb_trace_names_build(t));
    size_t *seen = calloc(emb_trace_context_count(t) + 1u, sizeof *seen);
    const struct emb_trace_event *e;
    while (seen != NULL && (e = emb_trace_cursor_next(cur)) != NULL)
        if (!emb_trace_record_skipped(seen, e, opt ? opt->skip : NULL))
            write_line(&w, e);
    emb_trace_cursor_close(cur);
    emb_trace_names_free(w.own_names);
    int rc = emb_out_finish(&w.o);
    free(seen);
    writer_free(&w);
    return seen == NULL ? -1 : rc;
}

/* The priority inheritance chains that stood when a thread began to wait for a mutex:
 * the deepest first. */
static void write_pi_chains(const struct emb_trace_threads *th, const struct emb_trace_info *h, FILE *out)
{
    if (th->npi == 0)
        return;
    fprintf(out, "priority inheritance chains (waiter -> mutex -> holder ...), deepest %zu links:\n",
            th->pi_deepest);
    for (size_t links = th->pi_deepest; links > 0; links--)
        for (size_t i = 0; i < th->npi; i++) {
            const struct emb_trace_pi_chain *c = &th->pi[i];
            char text[512];
            if (c->links != links)
                continue;
            fprintf(out, "  %zu link%s  %6" PRIu64 " waits, first at %.6f s  %s\n", c->links,
                    c->links == 1 ? " " : "s", c->count,
                    (double)emb_trace_ticks_to_ns(c->first_ts - h->start_ts, h->clock_hz) * 1e-9,
                    emb_trace_pi_chain_text(th, c, text, sizeof text));
        }
    if (th->pi_unkept)
        fprintf(out, "  and %" PRIu64 " more distinct chains\n", th->pi_unkept);
}

/* Each thread's CPU time, share of the span and blocked time, from the switch events. */
static void write_threads(const struct emb_trace *t, FILE *out)
{
    struct emb_trace_threads th;
    if (emb_trace_threads_compute(t, &th) != 0 || th.n == 0) {
        emb_trace_threads_free(&th);
        return;
    }
    const struct emb_trace_info *h = emb_trace_info(t);
    const char *bold = emb_color_code(out, EMB_C_BOLD), *reset = emb_color_code(out, EMB_C_RESET);
    fprintf(out, "%" PRIu64 " switches; threads over %.6f s from the first switch:\n", th.switches,
            (double)emb_trace_ticks_to_ns(th.span_ticks, h->clock_hz) * 1e-9);
    fprintf(out, "%s%-16s  %5s  %8s  %12s  %7s  %12s  %6s%s\n", bold, "thread", "index",
            "switches", "run", "load", "blocked", "waits", reset);
    for (size_t i = 0; i < th.n; i++) {
        const struct emb_trace_thread *x = &th.items[i];
        fprintf(out, "%-16s  %5" PRIu32 "  %8" PRIu64 "  %10.6f s  %6.2f%%  %10.6f s  %6" PRIu64 "\n",
                x->name[0] ? x->name : "?", x->index, x->switches_in,
                (double)emb_trace_ticks_to_ns(x->run_ticks, h->clock_hz) * 1e-9,
                100.0 * emb_trace_thread_load(&th, x),
                (double)emb_trace_ticks_to_ns(x->blocked_ticks, h->clock_hz) * 1e-9, x->waits);
    }
    write_pi_chains(&th, h, out);
    emb_trace_threads_free(&th);
}

int emb_trace_write_summary(const struct emb_trace *t, FILE *out)
{
    const struct emb_trace_info *h = emb_trace_info(t);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    const char *bold = emb_color_code(out, EMB_C_BOLD), *reset = emb_color_code(out, EMB_C_RESET);
    fprintf(out, "%s%s%s: port %s, %" PRIu32 "-byte packets, clock %" PRIu64 " Hz, catalogue 0x%08" PRIx32 "\n",
            bold, emb_trace_name(t), reset, h->port[0] ? h->port : "?", h->packet_size,
            h->clock_hz, h->catalog_checksum);
    double span = (double)emb_trace_ticks_to_ns(h->end_ts - h->start_ts, h->clock_hz) * 1e-9;
    fprintf(out, "%" PRIu64 " events in %" PRIu64 " packets over %.6f s\n", s->events, s->packets,
            s->packets ? span : 0.0);
    int w = 7;
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        int l = (int)strlen(emb_trace_context(t, i)->name);
        w = l > w ? l : w;
    }
    fprintf(out, "%s%-*s  %5s  %-6s  %10s  %8s  %9s  %12s  %8s%s\n", bold, w, "context", "id",
            "kind", "events", "packets", "discarded", "packets lost", "earlier", reset);
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        fprintf(out, "%-*s  %5u  %-6s  %10" PRIu64 "  %8" PRIu64 "  %9" PRIu64 "  %12" PRIu64
                     "  %8" PRIu32 "\n",
                w, c->name, c->id, emb_trace_context_kind_name(c->kind), c->events, c->packets,
                c->discarded, c->lost_packets, c->first_seq);
    }
    fprintf(out, "%searlier: packets before the first one held (overwritten in a snapshot ring,"
                 " or sent before a stream was joined)%s\n",
            emb_color_code(out, EMB_C_DIM), reset);
    if (s->lost_no_context)
        fprintf(out, "%" PRIu64 " events lost: no context had a free ring\n", s->lost_no_context);
    if (s->unknown)
        fprintf(out, "%" PRIu64 " events with an unknown id\n", s->unknown);
    if (s->bad_packets || s->errors)
        fprintf(out, "%" PRIu64 " bad packets, %" PRIu64 " errors\n", s->bad_packets, s->errors);
    write_threads(t, out);
    return ferror(out) ? -1 : 0;
}
