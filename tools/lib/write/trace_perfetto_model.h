/* What the Perfetto exports show of a trace, built once and written by each format's writer
 * (trace_perfetto.c, perfetto_proto.c): tracks; on them slices whose both ends are
 * known, instants, counter values and log lines; flows that join a request to the event
 * that serves it. Every name is resolved as the text writer resolves it
 * (emb_trace_field_display) and interned once, so a writer can refer to it by number.
 * The mapping is written down in docs/perfetto.md. */
#ifndef EMB_WRITE_TRACE_PERFETTO_MODEL_H
#define EMB_WRITE_TRACE_PERFETTO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_names.h"
#include "trace_perfetto.h"

#define EMB_PERFETTO_PID_CONTEXTS 1 /* the contexts' tracks and the counters */
#define EMB_PERFETTO_PID_SCHED 2    /* one "running" track per context that records switches */

enum emb_perfetto_track_kind {
    EMB_PERFETTO_TRACK_CONTEXT, /* a context: its slices, instants and log lines */
    EMB_PERFETTO_TRACK_SCHED,   /* which thread a context ran */
    EMB_PERFETTO_TRACK_COUNTER, /* a level over time */
};

struct emb_perfetto_track {
    uint8_t kind;
    uint16_t tid;       /* the context id (context and sched tracks) */
    uint32_t sort;      /* the context's index in the table, for ordering */
    uint32_t name;      /* string id */
};

enum emb_perfetto_item_kind {
    EMB_PERFETTO_SLICE,   /* ts and dur; ev its begin, end its end (NULL: closed by the trace's end) */
    EMB_PERFETTO_INSTANT, /* ev, or a loss marker */
    EMB_PERFETTO_COUNTER, /* value */
    EMB_PERFETTO_LOG,     /* log: the line */
};

struct emb_perfetto_item {
    uint64_t ts, dur;   /* ns since the trace start */
    uint64_t key;       /* ties at one ts: the order of the records that made them */
    const struct emb_trace_event *ev, *end;
    const struct emb_perfetto_log_line *log;
    int64_t value;      /* counters */
    uint32_t track;     /* index into tracks */
    uint32_t name, cat; /* string ids */
    uint32_t flow_out;  /* a flow leaves this item (0: none) */
    uint32_t flow_in;   /* a flow ends at this item (0: none) */
    uint8_t kind;
};

struct emb_perfetto_walk;

struct emb_perfetto_strings {
    char **s;           /* by id, from 1; 0 is "no string" */
    size_t n, cap;
    uint32_t *slot;     /* open addressing: string id or 0 */
    size_t nslots;
};

struct emb_perfetto_model {
    const struct emb_trace *t;
    struct emb_trace_names *names;
    struct emb_perfetto_strings str;
    struct emb_perfetto_track *tracks;
    size_t ntracks, tracks_cap;
    struct emb_perfetto_item *items;
    size_t nitems, items_cap;
    uint32_t flows;     /* flow ids given */
    uint64_t end_ns;    /* the trace's end */
    uint32_t process;   /* string id of process 1's name */
    bool failed;        /* memory ran out */
    struct emb_perfetto_walk *walk; /* a two-walk build's state between its walks */
};

/* Builds the model in one walk with every item kept; logs may be NULL. 0, or -1 when memory
 * ran out (then free it). Items come sorted by time, ties by key. Items point at the
 * trace's records: a trace that keeps them (not a streaming decode). */
int emb_perfetto_model_build(struct emb_perfetto_model *m, const struct emb_trace *t,
                             const struct emb_perfetto_logs *logs);

/* The same model in two walks of the trace's cursor that keep no record's item, so a
 * streaming decode will do. emb_perfetto_model_scan() walks it once and leaves the tracks,
 * every string the items name, and in items only the counters derived from whole contexts
 * and the log lines; emb_perfetto_model_emit() walks it again and hands every item, those
 * included, to `emit` in the order emb_perfetto_model_build() sorts them into. An item
 * and the events it points at live until `emit` returns. 0, or -1 when memory ran out. */
int emb_perfetto_model_scan(struct emb_perfetto_model *m, const struct emb_trace *t,
                            const struct emb_perfetto_logs *logs);
int emb_perfetto_model_emit(struct emb_perfetto_model *m,
                            void (*emit)(void *arg, const struct emb_perfetto_item *it), void *arg);
void emb_perfetto_model_free(struct emb_perfetto_model *m);
void emb_perfetto_walk_free(struct emb_perfetto_walk *w);

/* The log lines as items (trace_perfetto_log.c) on the context that logged them, keys from
 * `order` on. */
void emb_perfetto_log_items(struct emb_perfetto_model *m, const struct emb_perfetto_logs *logs,
                            uint64_t order);

/* Strings: intern one (its id, 0 when memory ran out), and read one back. */
uint32_t emb_perfetto_intern(struct emb_perfetto_model *m, const char *s);
const char *emb_perfetto_string(const struct emb_perfetto_model *m, uint32_t id);

/* Adds a track or an item; their index (the model's failed set when memory ran out). */
uint32_t emb_perfetto_track_add(struct emb_perfetto_model *m, uint8_t kind, uint16_t tid, uint32_t sort,
                          const char *name);
struct emb_perfetto_item *emb_perfetto_item_add(struct emb_perfetto_model *m, uint8_t kind, uint32_t track,
                                    uint64_t ts, uint64_t key);
/* A counter track by name, made on first use; its index. */
uint32_t emb_perfetto_counter_track(struct emb_perfetto_model *m, const char *name);

/* The derived counters (trace_perfetto_counters.c): CPU load per context from its switch
 * and idle events and load per thread from the switch events, summed as a walk shows
 * each record (loads_record) and added as items at its end (loads_finish, which frees
 * them); ring fill per context from its packets. */
struct emb_perfetto_loads;
struct emb_perfetto_loads *emb_perfetto_loads_new(const struct emb_perfetto_model *m);
void emb_perfetto_loads_record(struct emb_perfetto_loads *l, const struct emb_trace_event *e,
                               uint64_t order);
void emb_perfetto_loads_finish(struct emb_perfetto_loads *l, struct emb_perfetto_model *m);
void emb_perfetto_ring_fill(struct emb_perfetto_model *m);

/* What a sort orders by: first, then second, then index (where it was made). */
struct emb_perfetto_order {
    uint64_t first, second;
    uint32_t index;
};
int emb_perfetto_by_order(const void *a, const void *b); /* for qsort */

/* The event's field `name`, or NULL. */
const struct emb_catalog_field *emb_perfetto_field(const struct emb_catalog_event *ev,
                                             const char *name);

#endif /* EMB_WRITE_TRACE_PERFETTO_MODEL_H */
