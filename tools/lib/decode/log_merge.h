/* The records of a log stream in time order across its contexts, as a stable sort of the
 * whole stream by timestamp orders them, without keeping them all: a k-way merge of the
 * contexts, whose records arrive each in time order (docs/formats/log.md: a record's
 * time is its context's last one plus a 32-bit delta).
 *
 * A merge can only hand a record on once it knows no record still to come is earlier,
 * so it is planned by a first walk of the stream: emb_log_merge_plan() is given every
 * record that walk decodes (a decoder with emb_log_decoder_options.no_text), and counts
 * each context's records and checks their order. The second walk pushes the same
 * records: each is handed on as soon as every context still to come has one waiting (a
 * record whose turn it is at once is not even copied), so what is kept is what the
 * stream's interleaving of its contexts puts ahead of the slowest one: constant in the
 * length of a stream drained as it was recorded. A context that goes back in time (an
 * unknown id's garbage timestamp) is kept until its last record and sorted by itself,
 * and a merge that was never planned (a pipe, read once) keeps everything until
 * emb_log_merge_finish(): both give exactly the sort's order, at the sort's memory. */
#ifndef EMB_HOST_LOG_MERGE_H
#define EMB_HOST_LOG_MERGE_H

#include <stdbool.h>

#include "log_decode.h"

struct emb_log_merge;

/* `out` gets the records in order; a record's pointers hold only during the call. NULL
 * when out of memory. */
struct emb_log_merge *emb_log_merge_new(void (*out)(void *arg, const struct emb_logrec *r),
                                        void *arg);
/* A record of the first walk: counted for its context, its order checked. */
void emb_log_merge_plan(struct emb_log_merge *m, const struct emb_logrec *r);
/* Each walk goes on to its next piece of input (the same pieces in both walks): the
 * first notes where each context's records resume, so the second can hand records on
 * past a context that is silent for a while (a thread that did not run). */
void emb_log_merge_next_piece(struct emb_log_merge *m);
/* The widest context name a planned record carried (0 when none was planned). */
int emb_log_merge_plan_name_width(const struct emb_log_merge *m);
/* A record of the second walk (or of the one walk of an unplanned merge). */
void emb_log_merge_push(struct emb_log_merge *m, const struct emb_logrec *r);
/* The stream ended: hands on every record still kept. */
void emb_log_merge_finish(struct emb_log_merge *m);
/* Memory ran out: records were lost from the output. */
bool emb_log_merge_failed(const struct emb_log_merge *m);
void emb_log_merge_free(struct emb_log_merge *m);

#endif /* EMB_HOST_LOG_MERGE_H */
