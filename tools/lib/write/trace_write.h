/* Writers of a decoded trace: aligned text, NDJSON, one JSON document, Perfetto (Chrome
 * JSON trace format, docs/perfetto.md) and a CTF 1.8 directory for babeltrace2 and Trace
 * Compass. Each returns 0, or -1 when writing failed (errno set by the C library). */
#ifndef EMB_HOST_TRACE_WRITE_H
#define EMB_HOST_TRACE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "json.h"
#include "text.h"
#include "trace_decode.h"

struct emb_trace_names;

struct emb_trace_text_options {
    bool absolute; /* wall-clock time instead of seconds since the trace start */
    const size_t *skip; /* per context: records written already (emb trace --follow), or NULL */
    /* The names to show thread and handle numbers by, or NULL: the trace's own obj_init
     * names (a live stream's rounds keep the names the rounds before declared). */
    const struct emb_trace_names *names;
};

/* Whether `e` is among the first skip[context] records of its context, written already;
 * seen[] counts each context's records walked so far (a writer's, zeroed). A cursor walks
 * each context's records in their order, so the count says which ones. */
static inline bool emb_trace_record_skipped(size_t *seen, const struct emb_trace_event *e, const size_t *skip)
{
    return skip != NULL && seen[e->ctx]++ < skip[e->ctx];
}

/* One aligned line per record; colour when emb_color_enabled(out). */
int emb_trace_write_text(const struct emb_trace *t, FILE *out,
                         const struct emb_trace_text_options *opt);

/* Per-context counts and losses, aligned, for a person. */
int emb_trace_write_summary(const struct emb_trace *t, FILE *out);

/* One JSON object per line per record:
 * {"ts","ns","context","context_id","kind","depth","event","class","id","fields":{}}
 * and for losses {"ts","ns","context","context_id","loss":"events_discarded"|
 * "packets_lost","count"}. */
int emb_trace_write_ndjson(const struct emb_trace *t, FILE *out);
/* The same without the records emb_trace_record_skipped() says were written. */
int emb_trace_write_ndjson_from(const struct emb_trace *t, FILE *out, const size_t *skip);

/* One document: {"file","header","contexts","events","summary","issues"}. */
int emb_trace_write_json(const struct emb_trace *t, FILE *out);

/* The same document without its events (`emb trace --summary --json`). */
int emb_trace_write_json_summary(const struct emb_trace *t, FILE *out);

/* The latency metrics of a kernel's trace (decode/trace_latency.h) with the build's
 * identity: a table, or one JSON document. */
int emb_trace_write_latency(const struct emb_trace *t, FILE *out);
int emb_trace_write_json_latency(const struct emb_trace *t, FILE *out);

/* The record as a JSON object (the NDJSON line without its newline). */
void emb_trace_json_record(struct emb_json *j, const struct emb_trace *t,
                           const struct emb_trace_event *e);
/* Field f of a payload as a JSON member: enum label or char[N] text as a string, bool as
 * true/false, integers as numbers (hex fields as "0x..." strings when hex_text). */
void emb_trace_json_field(struct emb_json *j, const struct emb_catalog_field *f,
                          const uint8_t *payload, bool hex_text);
/* The header, contexts and summary members of the JSON document. */
void emb_trace_json_header(struct emb_json *j, const struct emb_trace *t);
void emb_trace_json_contexts(struct emb_json *j, const struct emb_trace *t);
void emb_trace_json_summary(struct emb_json *j, const struct emb_trace *t);

/* Chrome JSON trace format, as Perfetto's UI and chrome://tracing load it. */
int emb_trace_write_perfetto(const struct emb_trace *t, FILE *out);

/* Writes DIR/metadata and DIR/stream_<context id> with each context's clean packets,
 * verbatim, in order. Creates DIR; refuses a DIR that holds anything else (a CTF reader
 * reads every file in it). On error returns -1 with a message in err. */
int emb_trace_write_ctf(const struct emb_trace *t, const char *dir, char *err, size_t errlen);
/* Whether `name` is a file emb_trace_write_ctf() makes: metadata or stream_<digits>. */
bool emb_trace_ctf_owns(const char *name);

/* "cpu" or "thread"; "thread", "isr", "fault". */
const char *emb_trace_context_kind_name(unsigned kind);
const char *emb_trace_event_kind_name(unsigned kind);

#endif /* EMB_HOST_TRACE_WRITE_H */
