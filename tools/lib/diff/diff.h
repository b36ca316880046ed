/* The two-run comparison (docs/diff.md): align a good and a bad capture structurally, on
 * an epoch marker, match each context's events inside each epoch with a Myers diff over
 * event identity, and keep only the differences that pass an explicit significance rule.
 *
 * The engine (emb_diff_run) reports observations; the writers (emb_diff_write_text,
 * _json, _html) say them in the vocabulary of docs/diff.md: observed, correlated,
 * consistent with. The result structures are read-only for callers.
 */
#ifndef EMB_HOST_DIFF_H
#define EMB_HOST_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "capture.h"
#include "catalog.h"
#include "problem.h"
#include "trace_decode.h"

/* The significance rules, each switchable (rules file `rule NAME on|off`, --rule). */
enum emb_diff_rule {
    EMB_DIFF_MISSING,        /* an event of the good run has no counterpart in the bad one */
    EMB_DIFF_EXTRA,          /* an event of the bad run has no counterpart in the good one */
    EMB_DIFF_REORDER,        /* the same events, in another order within one context */
    EMB_DIFF_ARGUMENT,       /* a field differs under its comparison policy */
    EMB_DIFF_EPOCH_DURATION, /* an epoch lasts outside the good run's spread + margin */
    EMB_DIFF_INTERVAL,       /* an inter-event interval outside the good run's spread + margin */
    EMB_DIFF_DROPS,          /* events dropped or packets lost inside the compared epochs */
    EMB_DIFF_NRULES,
};

const char *emb_diff_rule_name(enum emb_diff_rule rule); /* "missing", "epoch-duration", ... */

/* A field policy override: `compare EVENT.FIELD POLICY [when SELFIELD=VALUE]`. */
struct emb_diff_policy {
    const struct emb_catalog_event *event;
    size_t field;               /* index in event->fields */
    bool has_when;
    size_t when_field;
    int64_t when_value;
    enum emb_catalog_compare compare;
    double tolerance;
};

/* A rule switched for one context: `context NAME RULE on|off`. */
struct emb_diff_switch {
    char context[40];
    uint8_t rule;
    bool enabled;
};

/* Two contexts paired though their names differ: `pair GOOD BAD`, --pair GOOD=BAD (a
 * foreign trace's threads and processors are named by the run). */
struct emb_diff_pair {
    char good[40], bad[40];
};

struct emb_diff_rules {
    bool enabled[EMB_DIFF_NRULES];
    double margin_pct;        /* timing margin: this percentage of the good run's median... */
    double margin_us;         /* ...but at least this many microseconds */
    double quantile_pct;      /* the good run's spread: its quantiles q and 100 - q, percent */
    unsigned repeat;          /* consecutive epochs a class must stay on one side of its band */
    unsigned context_lines;   /* events shown either side of the first difference */
    const struct emb_catalog_event *anchor_event; /* NULL: frame_start */
    long anchor_field;        /* field index; -1: epochs by ordinal; -2: the frame field */
    bool anchor_given;        /* --anchor: the windows need not have armed at one frame */
    bool same_build;          /* two runs of one configuration are a valid comparison */
    struct emb_diff_policy *policies;
    size_t npolicies;
    struct emb_diff_switch *switches;
    size_t nswitches;
    struct emb_diff_pair *pairs;
    size_t npairs;
};

/* Defaults: every rule on, margin 25% of the good median but at least 20 us, repeat 3,
 * 3 lines of neighbourhood, anchor frame_start.frame. */
void emb_diff_rules_default(struct emb_diff_rules *r);
void emb_diff_rules_free(struct emb_diff_rules *r);
/* The rules' problems go to a sink the caller chose (base/problem.h), as errors; each
 * function that met one returns -1. */
/* One rules-file line (comments and blank lines accepted); its problem has no byte offset:
 * the sink's file says where the line came from (a command names the option). */
int emb_diff_rules_line(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *line,
                        struct emb_problems *ps);
/* The largest rules file emb_diff_rules_load() reads (1 MiB): rules are a few lines. */
#define EMB_DIFF_RULES_MAX_BYTES (UINT64_C(1) << 20)
/* A rules file. A problem of the file names it (unreadable; a NUL byte, at its offset); a
 * bad line's reads "PATH:LINE: message" and names no file of its own. */
int emb_diff_rules_load(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *path,
                        struct emb_problems *ps);
/* --anchor EVENT[.FIELD] */
int emb_diff_rules_anchor(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *spec,
                          struct emb_problems *ps);

/* One event as the comparison sees it, 32 bytes: the comparison keeps no decoded record.
 * Its payload stays in the trace's bytes, read again there where a report or a tolerance
 * needs it (emb_diff_event_record). */
struct emb_diff_event {
    uint64_t identity;   /* hash of the name and the fields compared exactly */
    uint64_t ns;         /* since the trace start */
    uint64_t at;         /* bits 0..47: where its header is in the trace's bytes (from
                          * emb_diff.bytes); 48..63: the event id */
    int32_t epoch;       /* -1 before the anchor; >= epochs: after the compared range */
    int32_t peer;        /* index of the counterpart in the other run's context, -1 none */
};

#define EMB_DIFF_OFFSET_MASK ((UINT64_C(1) << 48) - 1u)
static inline uint16_t emb_diff_event_id(const struct emb_diff_event *e)
{
    return (uint16_t)(e->at >> 48);
}
static inline uint64_t emb_diff_event_pos(const struct emb_diff_event *e)
{
    return e->at & EMB_DIFF_OFFSET_MASK;
}

enum emb_diff_ctx_kind { EMB_DIFF_CTX_THREAD, EMB_DIFF_CTX_IRQ, EMB_DIFF_CTX_FAULT };

/* A context of the comparison: a thread (by name), an interrupt (by number, across every
 * ring it landed on) or the fault handler. [0] is the good run, [1] the bad one. */
struct emb_diff_ctx {
    char name[40];
    uint8_t kind;
    bool present[2];
    struct emb_diff_event *ev[2];
    size_t n[2];
    size_t *epoch_start[2];  /* [epochs + 1]: first event of each compared epoch, then the end */
    /* kept by the walk for the steps after it, let go once used: each epoch marker's
     * value, in order (with an anchor field); the good run's [event] number of the class
     * of the interval ending at it (UINT32_MAX at the context's first event) */
    uint32_t *marker_value[2];
    uint32_t *interval_class;
};

struct emb_diff_item {
    uint8_t rule;
    int32_t epoch;
    uint32_t ctx;            /* context index; UINT32_MAX for an epoch duration */
    int64_t offset_ns;       /* into the epoch, in the run where the event was observed */
    int64_t a, b;            /* event index in the good / bad context, -1 none */
    int64_t a_prev, b_prev;  /* interval: the events before; reorder: -1 */
    int64_t a_near, b_near;  /* where the neighbourhood centres when a side has no event */
    int field;               /* argument: the field that differs */
    /* timing, ns: the value; the good run's quantiles (quantile_pct, 100 - quantile_pct)
     * and median, the margin either side; the bad run's spread in the same class; how
     * many values each run has in it; the epochs in a row the class stayed on this side */
    double value, lo, hi, median, margin;
    double b_lo, b_hi, b_median;
    uint32_t good_n, bad_n;
    uint32_t run;
    uint8_t side;            /* drops: 0 good, 1 bad */
    bool closed;             /* drops: that run's window closed here, the other's did not */
    uint64_t count;          /* drops: how many */
    uint32_t group;
};

struct emb_diff_group {
    uint8_t rule;
    uint32_t ctx;
    uint16_t id, id_prev;    /* event (and the one before, for intervals) */
    size_t first;            /* item index */
    size_t count;
    int32_t last_epoch;
    double worst;            /* timing: largest excess over the spread, ns */
};

struct emb_diff_gap {        /* where the comparison is incomplete */
    uint8_t side;
    char where[48];
    int32_t epoch;           /* -1: not placed */
    uint64_t count;
    const char *what;
};

struct emb_diff {
    const struct emb_capture *cap[2];
    const struct emb_trace *trace[2];
    const uint8_t *bytes[2];   /* the first packet's bytes: an event's position counts from there */
    const char *name[2];
    struct emb_diff_rules rules;
    /* alignment */
    const struct emb_catalog_event *anchor;
    const struct emb_catalog_field *anchor_field;   /* NULL: ordinal */
    uint32_t anchor_ctx;
    bool anchor_armed;                          /* started at the armed frame */
    size_t epochs;                              /* compared */
    uint32_t *epoch_value;                      /* [epochs + 1] marker value (or ordinal) */
    uint64_t *epoch_ns[2];                      /* [epochs + 1] marker times */
    struct emb_diff_ctx *ctx;
    size_t nctx;
    /* findings */
    struct emb_diff_item *items;                /* earliest first */
    size_t nitems;
    struct emb_diff_group *groups;              /* ranked */
    size_t ngroups;
    struct emb_diff_gap *gaps;
    size_t ngaps;
    bool incomplete;
    bool same_run;                              /* one session id: a capture and itself */
    /* set aside, with reasons */
    uint64_t matched, boundary_shifts, isolated_timing, within_tolerance;
    uint64_t edge;                              /* unmatched at a context's edges */
    uint64_t after_close;                       /* unmatched after the other run's window closed */
    uint64_t switched_off;                      /* differences of rules switched off */
    uint64_t outside[2];                        /* events before the anchor or after the range */
    uint64_t dropped_after[2];                  /* drops once the compared range had ended */
    uint64_t diff_fallbacks;                    /* epochs too different for the Myers bound */
};

/* Compares. On a refusal (bad input: identities that claim one configuration without
 * same_build, different windows, no anchor) or out of memory, returns NULL and reports
 * why into ps, an error with no byte offset. */
struct emb_diff *emb_diff_run(const struct emb_capture *good, const struct emb_capture *bad,
                              const struct emb_diff_rules *rules, struct emb_problems *ps);
void emb_diff_free(struct emb_diff *d);

/* Number of significant differences (items). */
static inline size_t emb_diff_significant(const struct emb_diff *d) { return d->nitems; }

/* One line describing an event: name and fields ("user_event id=3 a=612 b=16384"). */
char *emb_diff_event_text(const struct emb_trace_event *r, char *buf, size_t len);
/* An event of run `side` as the decoder gave it (an EVENT record): its definition, its
 * payload read in the capture, its time and offset. */
struct emb_trace_event emb_diff_event_record(const struct emb_diff *d, int side,
                                             const struct emb_diff_event *e);
/* The byte offset of its header in its capture file, as the decoder reports it. */
uint64_t emb_diff_event_file_offset(const struct emb_diff *d, int side,
                                    const struct emb_diff_event *e);
/* The epoch's label: "12 (frame 612)". */
char *emb_diff_epoch_text(const struct emb_diff *d, int32_t epoch, char *buf, size_t len);
/* One sentence about an item, in the report's vocabulary. */
char *emb_diff_item_text(const struct emb_diff *d, const struct emb_diff_item *it, char *buf,
                         size_t len);

/* A priority inheritance chain of either run (`emb trace --summary`'s), by its text
 * ("sensor(4) -> i2c -> control(3) -> spi -> logger(2)"), with the waits that began with
 * it standing in the good [0] and the bad [1] run. Not a significance rule: the reports
 * show the chains beside the differences. */
struct emb_diff_pi_chain {
    char text[512];
    size_t links;
    uint64_t waits[2];
};
/* Both runs' chains into *out (malloc'd, the caller frees it), *n of them; 0, or -1 when
 * out of memory. */
int emb_diff_pi_chains(const struct emb_diff *d, struct emb_diff_pi_chain **out, size_t *n);

int emb_diff_write_text(const struct emb_diff *d, FILE *out);
int emb_diff_write_json(const struct emb_diff *d, FILE *out);
int emb_diff_write_html(const struct emb_diff *d, FILE *out);

#endif /* EMB_HOST_DIFF_H */
