/* Names for the numbers in trace events, for people: thread indexes and object handles
 * named by the trace's obj_init events (SPEC-015 §3.1: "the decoder maps them to names
 * through the object registry events"), and durations in clock ticks shown as time. */
#ifndef EMB_HOST_TRACE_NAMES_H
#define EMB_HOST_TRACE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_decode.h"

struct emb_trace_names;

/* Collects the names an already decoded trace declares. NULL when out of memory. */
struct emb_trace_names *emb_trace_names_build(const struct emb_trace *t);
/* A set with no names yet, for emb_trace_names_add(). NULL when out of memory. */
struct emb_trace_names *emb_trace_names_build_empty(void);
/* Adds the names another decode declares (a live stream's next round): later names win.
 * False when out of memory. */
bool emb_trace_names_add(struct emb_trace_names *n, const struct emb_trace *t);
void emb_trace_names_free(struct emb_trace_names *n);

/* The name obj_init gave a thread index or a handle, or NULL. */
const char *emb_trace_names_thread(const struct emb_trace_names *n, uint32_t thread);
const char *emb_trace_names_handle(const struct emb_trace_names *n, uint32_t handle);

/* A field's value as a person reads it: enumeration labels, thread and object names
 * (with the number in parentheses), "none" for thread 0xFFFF, durations in ns/us/ms/s,
 * everything else as emb_trace_field_text() writes it. */
char *emb_trace_field_display(const struct emb_trace_names *n, uint64_t clock_hz,
                              const struct emb_catalog_field *f, const uint8_t *payload, char *buf,
                              size_t len);

#endif /* EMB_HOST_TRACE_NAMES_H */
