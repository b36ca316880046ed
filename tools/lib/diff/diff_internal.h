/* What the files of the comparison share (diff.h is its public side). emb_diff_run (diff.c)
 * takes these steps in order over one struct emb_diff_work: contexts (contexts.c), the
 * events' identities, the alignment on the epoch marker (align.c), the losses (losses.c),
 * the matching of each context (edit_script.c, match.c), the timing (timing.c), then the
 * ranking. describe.c says the results in words, the report_*.c files write them. */
#ifndef EMB_DIFF_INTERNAL_H
#define EMB_DIFF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <emb/trace_format.h>

#include "diff.h"
#include "key_map.h"

/* Matches in a row that make a stretch of agreement: the edit script resumes its walk
 * after one, and the matching's regions lie between them. */
#define EMB_DIFF_RESYNC 16

/* The order of two numbers for a qsort comparator (-1, 0, 1): a comparator chains them,
 * the first that differs deciding. */
static inline int emb_diff_order_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }
static inline int emb_diff_order_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

struct emb_diff_op;

/* A loss record (DISCARDED, LOST) of a ring, as the walk met it. */
struct emb_diff_loss {
    uint32_t ring;
    uint8_t type;            /* enum emb_trace_rec_type */
    uint32_t count;
    uint64_t ns, offset;
    uint64_t prev_ns;        /* the ring's last event before it (0: none) */
    uint64_t events_before;  /* the ring's events before it */
};

/* What the rules make of one event's fields, found once per event id: which are compared
 * exactly (bit f) and whether one has a tolerance. `varies` when a `when` policy makes it
 * depend on the payload (or past 64 fields): emb_diff_policy_of then decides per event. */
struct emb_diff_event_rules {
    bool known, varies, tolerance;
    uint64_t exact;
};

/* The state of one comparison while it is made. */
struct emb_diff_work {
    struct emb_diff *d;
    const struct emb_catalog *cat;
    const struct emb_catalog_event *irq_enter;
    struct emb_problems *ps; /* where a refusal goes */
    bool oom;
    size_t ctx_cap, item_cap, gap_cap;
    /* thread id -> number of its thread's name (threads), per run */
    uint32_t *tid_map[2];
    char (*threads)[64];
    size_t nthreads, thread_cap;
    struct emb_diff_event_rules *event_rules; /* [event id], filled as met */
    struct emb_diff_op *ops;  /* the edit script's room, kept from one context to the next */
    size_t ops_cap;
    /* the good run's classes of interval, numbered as the walk meets them (interval_class.c) */
    struct emb_key_map interval_keys;
    size_t interval_classes;
    /* what the walk of each run found besides its events */
    struct emb_diff_loss *loss[2];
    size_t nloss[2], loss_cap[2];
    uint64_t *ring_events[2];    /* [ring] events */
    uint64_t last_event_ns[2];   /* the latest of each ring's last event */
    size_t anchor_ctx[2];
    size_t *marker_pos[2];   /* [epochs + 1] index of marker k in the anchor context */
    size_t markers_after[2]; /* anchor markers a run has after the last compared one */
    long closed_ctx[2];      /* the ring that filled and closed the window, -1 none */
    uint64_t closed_ns[2], closed_count[2];
};

/* diff.c: the findings and refusals every step makes. */
/* Reports an error into ps as a problem of `file` (the sink's own, or another: a rules
 * file names itself) and returns -1. */
int emb_diff_report_error(struct emb_problems *ps, const char *file, long long offset,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The comparison refused (bad input): why, into the caller's sink; returns -1. */
int emb_diff_refuse(struct emb_diff_work *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A new item of `rule` (NULL when the rule is switched off there, or out of memory). */
struct emb_diff_item *emb_diff_add_item(struct emb_diff_work *w, enum emb_diff_rule rule,
                                        int32_t epoch, uint32_t ctx);
/* emb_array_grow (base/buffer.h), out of memory noted in w when it fails. */
void *emb_diff_grow(struct emb_diff_work *w, void *items, size_t *cap, size_t need, size_t size);
/* An item that is nothing yet: every event index -1, no field. */
void emb_diff_item_clear(struct emb_diff_item *it);
/* The item's offset into its epoch, from its event in the bad run, else the good one. */
void emb_diff_set_offset(struct emb_diff *d, struct emb_diff_item *it);
/* Whether an event of this epoch is inside the compared range. */
bool emb_diff_compared(const struct emb_diff *d, int32_t epoch);

/* contexts.c: one run's events laid out in the comparison's contexts, with their identity. */
int emb_diff_build_contexts(struct emb_diff_work *w, int side);
/* The name a thread context goes by: its ring's name, numbered when a run has two. */
/* The name a ring of run `side` is paired by: its own (`name#2` for a second ring of that
 * name), or the good run's name a `pair` rule gives it. */
void emb_diff_thread_key(const struct emb_diff *d, int side, size_t ring, char *buf, size_t len);
long emb_diff_ctx_find(struct emb_diff *d, const char *name, uint8_t kind);
/* The comparison policy of field f of an event with this payload, and its tolerance. */
enum emb_catalog_compare emb_diff_policy_of(const struct emb_diff_rules *r,
                                            const struct emb_catalog_event *ev, size_t f,
                                            const uint8_t *payload, double *tol);
/* The rules of an event id, found the first time; whether field f is compared exactly
 * (payload read only when the rules vary with it); whether a field has a tolerance. */
const struct emb_diff_event_rules *emb_diff_event_rules(struct emb_diff_work *w,
                                                        const struct emb_catalog_event *ev);
bool emb_diff_field_exact(const struct emb_diff_work *w, const struct emb_diff_event_rules *er,
                          const struct emb_catalog_event *ev, size_t f, const uint8_t *payload);
bool emb_diff_has_tolerance(struct emb_diff_work *w, const struct emb_catalog_event *ev,
                            const uint8_t *payload);
/* An event's payload, read again in its trace's bytes. */
static inline const uint8_t *emb_diff_payload(const struct emb_diff *d, int side,
                                              const struct emb_diff_event *e)
{
    return d->bytes[side] + emb_diff_event_pos(e) + EMB_EVT_HEADER_SIZE;
}
/* A `meaning: thread` field's value as both runs can compare it. */
uint64_t emb_diff_thread_value(const struct emb_diff_work *w, int side, uint64_t v);

/* interval_class.c: the number of the class of the good run's interval from `before` to e,
 * two consecutive events of the walk's context number `context` (UINT32_MAX: out of
 * memory, noted in w). */
uint32_t emb_diff_interval_class(struct emb_diff_work *w, uint32_t context,
                                 const struct emb_diff_event *before, const struct emb_diff_event *e);

/* align.c: the epochs both runs have, and each event's epoch. The anchor (the marker event
 * and field the rules chose, NULL when the catalogue has none) is found before the walk,
 * which keeps each marker's value; emb_diff_align refuses when there is none. */
void emb_diff_find_anchor(struct emb_diff_work *w);
int emb_diff_align(struct emb_diff_work *w);
int emb_diff_assign_epochs(struct emb_diff_work *w);

/* losses.c */
void emb_diff_find_losses(struct emb_diff_work *w, int side);
void emb_diff_window_closed_early(struct emb_diff_work *w);

/* edit_script.c: the edit script between two contexts' event sequences. */
enum { EMB_DIFF_OP_MATCH, EMB_DIFF_OP_DEL, EMB_DIFF_OP_INS };
struct emb_diff_op {          /* 16 bytes: a context holds fewer than 2^31 events (peer) */
    int32_t ia, ib;
    uint32_t region;
    uint8_t t;
    bool used;
};
struct emb_diff_ops {
    struct emb_diff_op *v;
    size_t n, cap;
};
bool emb_diff_push_op(struct emb_diff_ops *o, uint8_t t, int64_t ia, int64_t ib);
int emb_diff_sequences(const struct emb_diff_event *a, size_t n, const struct emb_diff_event *b,
                       size_t m, struct emb_diff_ops *o, uint64_t *fallbacks);

/* match.c, timing.c */
int emb_diff_match_context(struct emb_diff_work *w, uint32_t ci);
int emb_diff_timing(struct emb_diff_work *w);

/* describe.c: the words the reports share. */
extern const char emb_diff_reading[];
const struct emb_diff_item *emb_diff_first_item(const struct emb_diff *d);
char *emb_diff_signed_time_text(double ns, char *buf, size_t len); /* "+1.5 us", "-2.000 ms" */
const char *emb_diff_label(const struct emb_diff *d, int side);
char *emb_diff_group_event_text(const struct emb_diff *d, const struct emb_diff_group *g,
                                char *buf, size_t len);
const char *emb_diff_ctx_name(const struct emb_diff *d, uint32_t ci);
/* An event of run `side` in words (emb_diff_event_text); its catalogue definition. */
char *emb_diff_event_words(const struct emb_diff *d, int side, const struct emb_diff_event *e,
                           char *buf, size_t len);
const struct emb_catalog_event *emb_diff_event_def(const struct emb_diff *d,
                                                   const struct emb_diff_event *e);
/* The event index a neighbourhood centres on, per side; -1 none. */
int64_t emb_diff_centre(const struct emb_diff_item *it, int side);
/* The epoch an event's time is measured from: its own, clamped to the compared range. */
int32_t emb_diff_event_epoch(const struct emb_diff *d, const struct emb_diff_event *e);

#endif /* EMB_DIFF_INTERNAL_H */
