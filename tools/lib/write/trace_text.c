/* The trace as aligned text for a person, and its summary. */
#define _POSIX_C_SOURCE 200809L

#include "trace_names.h"
#include "trace_threads.h"
#include "trace_write.h"

#include <inttypes.h>
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

static enum emb_color class_color(const struct emb_catalog_event *ev)
{
    static const enum emb_color palette[] = {EMB_C_GREEN, EMB_C_CYAN, EMB_C_YELLOW,
                                             EMB_C_MAGENTA, EMB_C_BLUE};
    if (!ev || !ev->cls)
        return EMB_C_RED;
    return palette[ev->cls->id % (sizeof palette / sizeof palette[0])];
}

/* Time column: seconds since the trace start, or the wall clock (UTC) when asked and
 * known. */
static void format_time(char *buf, size_t len, const struct emb_trace *t,
                        const struct emb_trace_event *e, bool absolute)
{
    if (absolute && emb_trace_info(t)->clock_offset_ns != 0) {
        int64_t w = e->wall_ns;
        time_t s = (time_t)(w / 1000000000);
        long ns = (long)(w % 1000000000);
        if (ns < 0) {
            ns += 1000000000;
            s--;
        }
        struct tm tm;
        char date[32];
        if (gmtime_r(&s, &tm) && strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm)) {
            snprintf(buf, len, "%s.%09ldZ", date, ns);
            return;
        }
    }
    uint64_t ns = absolute ? emb_trace_ticks_to_ns(e->ts, emb_trace_info(t)->clock_hz) : e->ns;
    snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

static void format_kind(char *buf, size_t len, const struct emb_trace_event *e)
{
    if (e->kind == EMB_EVT_KIND_ISR && e->depth > 1)
        snprintf(buf, len, "isr%u", e->depth);
    else if (e->kind == EMB_EVT_KIND_ISR)
        snprintf(buf, len, "isr");
    else if (e->kind == EMB_EVT_KIND_FAULT)
        snprintf(buf, len, "FAULT");
    else
        buf[0] = 0;
}

int emb_trace_write_text(const struct emb_trace *t, FILE *out,
                         const struct emb_trace_text_options *opt)
{
    bool absolute = opt && opt->absolute;
    size_t n;
    const struct emb_trace_event *const *recs = emb_trace_events(t, &n);
    int wtime = 0, wctx = 0, wname = 0;
    char buf[512], tbuf[48], kbuf[16];
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        int l = (int)strlen(emb_trace_context(t, i)->name);
        wctx = l > wctx ? l : wctx;
    }
    for (size_t i = 0; i < n; i++) {
        if (recs[i]->ev) {
            int l = (int)strlen(recs[i]->ev->name);
            wname = l > wname ? l : wname;
        }
    }
    if (n) { /* times only grow: the last is the widest */
        format_time(tbuf, sizeof tbuf, t, recs[n - 1], absolute);
        wtime = (int)strlen(tbuf);
    }
    const char *dim = emb_color_code(out, EMB_C_DIM), *reset = emb_color_code(out, EMB_C_RESET);
    const char *red = emb_color_code(out, EMB_C_RED), *yellow = emb_color_code(out, EMB_C_YELLOW);
    const char *bold = emb_color_code(out, EMB_C_BOLD);
    struct emb_trace_names *names = emb_trace_names_build(t);
    uint64_t hz = emb_trace_info(t)->clock_hz;
    for (size_t i = 0; i < n; i++) {
        const struct emb_trace_event *e = recs[i];
        const struct emb_trace_context *c = emb_trace_context(t, e->ctx);
        format_time(tbuf, sizeof tbuf, t, e, absolute);
        fprintf(out, "%s%*s%s  %-*s  ", dim, wtime, tbuf, reset, wctx, c->name);
        if (e->type == EMB_TREC_DISCARDED || e->type == EMB_TREC_LOST) {
            fprintf(out, "%s-- %" PRIu32 " %s in ctx %s%s\n", yellow, e->count,
                    e->type == EMB_TREC_DISCARDED
                        ? (e->count == 1 ? "event discarded" : "events discarded")
                        : (e->count == 1 ? "packet lost" : "packets lost"),
                    c->name, reset);
            continue;
        }
        format_kind(kbuf, sizeof kbuf, e);
        fprintf(out, "%s%-5s%s  ", red, kbuf, reset);
        if (e->type == EMB_TREC_UNKNOWN) {
            fprintf(out, "%s?0x%04x%s  (unknown event, %" PRIu32 " raw bytes:", red, e->id, reset,
                    e->payload_size);
            for (uint32_t k = 0; k < e->payload_size && k < 32; k++)
                fprintf(out, " %02x", e->payload[k]);
            fprintf(out, "%s)\n", e->payload_size > 32 ? " ..." : "");
            continue;
        }
        const struct emb_catalog_event *ev = e->ev;
        fprintf(out, "%s%s%-*s%s", bold, emb_color_code(out, class_color(ev)),
                ev->nfields ? wname : 0, ev->name, reset);
        for (size_t k = 0; k < ev->nfields; k++) {
            const struct emb_catalog_field *f = &ev->fields[k];
            fprintf(out, "  %s%s=%s%s", dim, f->name, reset,
                    emb_trace_field_display(names, hz, f, e->payload, buf, sizeof buf));
        }
        fputc('\n', out);
    }
    emb_trace_names_free(names);
    return ferror(out) ? -1 : 0;
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
