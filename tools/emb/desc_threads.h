/* A kernel's threads, scheduler state and objects as `emb desc` shows them (the model's
 * `kernel`, read from the image's kernel layout block): text for a person, JSON. */
#ifndef EMB_TOOL_DESC_THREADS_H
#define EMB_TOOL_DESC_THREADS_H

#include <stdint.h>
#include <stdio.h>

#include "desc_read.h"
#include "json.h"

/* Names a code address for a person ("func file:line"), or its hex. */
typedef const char *(*emb_desc_symbolise_fn)(void *arg, uint64_t addr, char *buf, size_t len);

void emb_desc_print_threads(FILE *out, const struct emb_desc_model *m, emb_desc_symbolise_fn sym, void *arg);
void emb_desc_json_threads(struct emb_json *j, const struct emb_desc_model *m, emb_desc_symbolise_fn sym,
                           void *arg);

/* The partition table (descriptor section 15): each partition's state, contained faults
 * and restarts, and its last fault. */
void emb_desc_print_partitions(FILE *out, const struct emb_desc_model *m, emb_desc_symbolise_fn sym, void *arg);
void emb_desc_json_partitions(struct emb_json *j, const struct emb_desc_model *m, emb_desc_symbolise_fn sym,
                              void *arg);

#endif /* EMB_TOOL_DESC_THREADS_H */
