/* RTEMS record stream to trace stream: the reader (rtems_record.h) feeding the replay
 * encoder (trace_replay.h), one context per processor, events named from the stream
 * version's table. Shared by `emb import rtems-record` and the capture sources. */
#ifndef EMB_HOST_RTEMS_IMPORT_H
#define EMB_HOST_RTEMS_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "catalog.h"
#include "rtems_record.h"

struct emb_rtems_import_options {
    const struct emb_rtems_record_table *table; /* names instead of the version's table; may be NULL */
    bool keep_control;  /* keep PROCESSOR, TAIL, HEAD and EMPTY items (dropped by default) */
    uint64_t max_items; /* stop (successfully) after this many items; 0: no limit */
    struct emb_problems *problems; /* the stream's problems and the import's; may be NULL */
};

struct emb_rtems_import_stats {
    uint64_t items;       /* items read */
    uint64_t events;      /* events written */
    uint64_t lost;        /* items lost in overflows */
    uint64_t overflows;   /* overflow events */
    uint64_t adjustments; /* TIME_ADJUSTMENT events */
    uint64_t unreliable;  /* events with a best-effort time */
    uint64_t first_ns, last_ns;
    bool done;            /* max_items reached */
};

struct emb_rtems_import;

struct emb_rtems_import *emb_rtems_import_new(const struct emb_rtems_import_options *opt);
/* 0, or -1 after reporting the problem. Reaching max_items is not an error: `done`. */
int emb_rtems_import_feed(struct emb_rtems_import *imp, const void *buf, size_t n);
/* The end of the stream (emb_rtems_record_finish()): held items are written after an error too. */
int emb_rtems_import_finish(struct emb_rtems_import *imp);
/* The reading was cut before the stream ended (emb_rtems_record_stop()): a partial item is dropped. */
int emb_rtems_import_stop(struct emb_rtems_import *imp);
/* The import stopped at an error (reported to the problem sink); not when max_items ended it. */
bool emb_rtems_import_failed(const struct emb_rtems_import *imp);
const struct emb_rtems_record_info *emb_rtems_import_info(const struct emb_rtems_import *imp);
const struct emb_rtems_import_stats *emb_rtems_import_stats(const struct emb_rtems_import *imp);
/* The catalogue the output is decoded with (NULL before the VERSION item). */
const struct emb_catalog *emb_rtems_import_catalog(const struct emb_rtems_import *imp);
/* Writes what was imported as a trace stream file. 0 or -1 (errno). */
int emb_rtems_import_write(struct emb_rtems_import *imp, FILE *out);
void emb_rtems_import_free(struct emb_rtems_import *imp);

#endif /* EMB_HOST_RTEMS_IMPORT_H */
