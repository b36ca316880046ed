/* The Perfetto exports of a decoded trace (docs/perfetto.md): the Trace Event Format JSON
 * that every viewer of that format loads (Perfetto's UI, chrome://tracing, Chrome
 * DevTools, speedscope) and Perfetto's own protobuf trace format, both written from one
 * model (trace_perfetto_model.h) so they show the same tracks, slices, counters and flows.
 * A log stream of the same run may be shown with it: its lines become instants on the
 * context that logged them. */
#ifndef EMB_WRITE_TRACE_PERFETTO_H
#define EMB_WRITE_TRACE_PERFETTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "log_decode.h"
#include "problem.h"
#include "trace_decode.h"

/* One log line, as the log decoder formatted it. */
struct emb_perfetto_log_line {
    uint64_t ts;        /* the log clock's ticks (the trace's clock: the same run) */
    uint16_t context;   /* context id */
    uint8_t level;
    char *module;       /* owned */
    char *text;         /* owned */
};

struct emb_perfetto_logs {
    struct emb_perfetto_log_line *lines;
    size_t n, cap;
    uint64_t clock_hz;  /* from the stream's hello; 0 when it had none */
    uint64_t untimed;   /* lines without a timestamp: not shown */
};

/* Decodes a log stream held in memory (a log file, or a capture's log section) with the
 * call sites of `db`, keeping each LOG and HEXDUMP record's text. Problems go to `ps` at
 * their stream offsets. Returns 0, or -1 when out of memory. */
int emb_perfetto_logs_decode(const struct emb_logdb *db, const uint8_t *data, size_t len,
                             const char *name, struct emb_problems *ps,
                             struct emb_perfetto_logs *out);
/* The same from a log file ("-": stdin), or a sealed capture's log section, and the ELF
 * whose call sites it records; problems of either go to `ps` (whose file is the log's),
 * naming their file. 0, or -1 when an error was reported. */
int emb_perfetto_logs_read(const char *log_path, const char *elf_path, struct emb_problems *ps,
                           struct emb_perfetto_logs *out);
void emb_perfetto_logs_free(struct emb_perfetto_logs *logs);

struct emb_perfetto_options {
    const struct emb_perfetto_logs *logs; /* NULL: the trace alone */
};

/* The Trace Event Format JSON; Perfetto's protobuf trace (a perfetto.protos.Trace). 0, or
 * -1 when writing failed or memory ran out. `opt` may be NULL. */
int emb_trace_write_perfetto_json(const struct emb_trace *t, const struct emb_perfetto_options *opt,
                                  FILE *out);
int emb_trace_write_perfetto_proto(const struct emb_trace *t,
                                   const struct emb_perfetto_options *opt, FILE *out);

#endif /* EMB_WRITE_TRACE_PERFETTO_H */
