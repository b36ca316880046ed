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

struct emb_trace_text_options {
    bool absolute; /* wall-clock time instead of seconds since the trace start */
};

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

/* One document: {"file","header","contexts","events","summary","issues"}. */
int emb_trace_write_json(const struct emb_trace *t, FILE *out);

/* The same document without its events (`emb trace --summary --json`). */
int emb_trace_write_json_summary(const struct emb_trace *t, FILE *out);

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
