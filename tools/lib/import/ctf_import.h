/* Any CTF trace directory (LTTng, barectf, Zephyr, our own `emb trace --ctf`) read through
 * libbabeltrace2 (its src.ctf.fs source and utils.muxer filter, driven by a sink component
 * class of ours) and made a trace stream of ours (docs/ctf-foreign.md): a catalogue made
 * from the trace's event classes, one context per thread where the events carry a `vtid`
 * context, else per CPU where the packets carry `cpu_id`, else per stream, and every event
 * re-encoded through the replay encoder with its clock ticks and the clock's offset. What
 * the catalogue cannot hold (floating-point, arrays, sequences, variants, options,
 * payloads over 64 bytes) is refused with a message naming the event and field.
 *
 * The replay is global (trace_replay.h): one import at a time per process.
 */
#ifndef EMB_HOST_CTF_IMPORT_H
#define EMB_HOST_CTF_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "problem.h"

/* True when `path` is a directory holding a `metadata` file: a CTF trace. */
bool emb_ctf_is_trace_dir(const char *path);

/* How a CTF event name (`provider:event`) is named in the catalogue: lower case, every
 * character outside [a-z0-9_] made `_`, a leading digit or `emb_` prefixed with `x`.
 * Idempotent: a catalogue name maps to itself. */
void emb_ctf_name(const char *name, char *out, size_t len);
/* A field's name: the same, and a C keyword suffixed with `_` (`int` is `int_`). */
void emb_ctf_field_name(const char *name, char *out, size_t len);

struct emb_ctf_import_stats {
    uint64_t events;            /* events written */
    uint64_t discarded_events;  /* the trace's discarded-events messages, summed */
    uint64_t discarded_packets; /* the trace's discarded-packets messages, summed */
    uint64_t truncated_strings; /* strings longer than their char[32] field */
    unsigned contexts;
    const char *context_rule;   /* "thread (vtid)", "cpu (cpu_id)" or "stream" */
};

struct emb_ctf_import {
    uint8_t *stream;            /* the trace stream file (malloc'd) */
    size_t stream_len;
    struct emb_catalog *catalog; /* its catalogue (the caller frees it) */
    char *catalog_yaml;          /* the catalogue's YAML text (malloc'd) */
    size_t catalog_yaml_len;
    struct emb_ctf_import_stats stats;
};

/* Reads the trace in `dir`. 0, or -1 after reporting why to `ps` (offset -1: the message
 * names the trace's event, field or stream; libbabeltrace2's own cause is appended).
 * `max_events` stops the reading after that many events (0: all). */
int emb_ctf_import(const char *dir, uint64_t max_events, struct emb_ctf_import *out,
                   struct emb_problems *ps);
void emb_ctf_import_free(struct emb_ctf_import *imp);

#endif /* EMB_HOST_CTF_IMPORT_H */
