/* The Chrome JSON trace format (the "Trace Event Format"), as Perfetto's UI and
 * chrome://tracing load it: the document, its traceEvents array and the events of it that
 * `emb trace` and `emb events export` write: track names, complete slices, instants,
 * counters and flows. What each writer maps onto them is
 * written down in docs/perfetto.md. Every event opens with "ph", "name", "cat", "pid",
 * "tid", "ts" (the fields the format gives every event); the caller adds "args" through
 * `j` before closing the event with emb_perfetto_close(). */
#ifndef EMB_WRITE_PERFETTO_JSON_H
#define EMB_WRITE_PERFETTO_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

/* The unit of the timestamps a writer is given; "ts" and "dur" are microseconds. */
enum emb_perfetto_clock {
    EMB_PERFETTO_NS, /* nanoseconds, written as microseconds with three decimals */
    EMB_PERFETTO_US, /* whole microseconds, written as integers */
};

struct emb_perfetto {
    struct emb_json j;
    enum emb_perfetto_clock clock;
};

/* Opens the document. one_event_per_line: indented, each trace event on a line of its own;
 * else all on one line. The caller writes the document's other members (displayTimeUnit,
 * otherData) before or after the traceEvents array. */
void emb_perfetto_open_document(struct emb_perfetto *p, FILE *out, enum emb_perfetto_clock clock,
                                bool one_event_per_line);
void emb_perfetto_begin_events(struct emb_perfetto *p);
void emb_perfetto_end_events(struct emb_perfetto *p);
/* Closes the document; 0, or -1 when writing failed. */
int emb_perfetto_close_document(struct emb_perfetto *p);

/* Opens an event of phase `ph`: "ph", "name", "cat" (NULL: "__metadata" for "M", else
 * "emb"), "pid", "tid", "ts". */
void emb_perfetto_event(struct emb_perfetto *p, const char *ph, const char *name,
                        const char *cat, long long pid, long long tid, uint64_t ts);
void emb_perfetto_close(struct emb_perfetto *p);

/* Metadata naming or ordering a process (tid < 0: written as 0) or a thread: "M" at ts 0,
 * args
 * {"name": name} or {"sort_index": index}. Closed. */
void emb_perfetto_track_name(struct emb_perfetto *p, const char *what, long long pid,
                             long long tid, const char *name);
void emb_perfetto_track_sort(struct emb_perfetto *p, const char *what, long long pid,
                             long long tid, long long index);

/* A complete slice ("X") of `dur`; left open. */
void emb_perfetto_complete(struct emb_perfetto *p, const char *name, const char *cat,
                           long long pid, long long tid, uint64_t ts, uint64_t dur);
/* An instant ("i") on its thread's track; left open. */
void emb_perfetto_instant(struct emb_perfetto *p, const char *name, const char *cat,
                          long long pid, long long tid, uint64_t ts);
/* A counter ("C") whose args are {arg: value}. Closed. */
void emb_perfetto_counter(struct emb_perfetto *p, const char *name, long long pid,
                          long long tid, uint64_t ts, const char *arg, uint64_t value);
/* A flow's start ("s") or its finish ("f", bound to the slice that encloses it), joined by
 * `id`. Closed. */
void emb_perfetto_flow(struct emb_perfetto *p, bool finish, const char *name, const char *cat,
                       long long pid, long long tid, uint64_t ts, uint64_t id);

#endif /* EMB_WRITE_PERFETTO_JSON_H */
