/* The parts of `emb events` that live in their own files: the sink daemon's socket loop
 * (events_serve.c) and the trace writers of `export` (events_export.c). */
#ifndef EMB_EVENTS_CMD_H
#define EMB_EVENTS_CMD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <emb/svc_trace.h>

#include "events_chain.h"

/* `emb events serve ARGS`: argv[0] is "serve". Returns an EMB_EXIT_* status. */
int emb_events_serve_main(int argc, char **argv);

/* What `export` writes: the events of one DUMP, read as calls. */
struct emb_events_view {
    const struct emb_svc_event *ev;
    size_t n;
    const struct emb_events_calls *calls;
    const struct emb_events_ops *ops;
    uint64_t dropped; /* the sink's count of events lost on the way in */
};

/* Event i's time in microseconds: the sink stamps whole seconds, so events within one
 * second are spaced one microsecond apart in arrival order. */
uint64_t emb_events_time_us(const struct emb_events_view *v, size_t i);

/* Chrome JSON trace (Perfetto): a slice per call, flows along chains. 0 or -1 (errno). */
int emb_events_write_perfetto(const struct emb_events_view *v, FILE *out);
/* A CTF 1.8 directory (metadata + one stream) at `dir`, created if absent. 0, or -1 with a
 * message in err. */
int emb_events_write_ctf(const struct emb_events_view *v, const char *dir, char *err,
                         size_t errlen);

#endif /* EMB_EVENTS_CMD_H */
