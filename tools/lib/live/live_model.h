/* What a running target is doing, counted from the trace as it arrives (live_stream.h's
 * rounds): per context its events, packets and losses; per thread its CPU load (from the
 * scheduler's switch events, a thread running from the switch to it until the switch
 * from it), its switches; interrupts per vector (irq_enter); the rate of each event type;
 * the worst interrupt-lock monitor (irq_lock_max) with the code that opened it. Rates and
 * loads are over the target's own time between two views (its clock, not the host's),
 * so they are the firmware's accounting, whatever the host's delays. What `emb top`
 * draws; nothing here draws.
 *
 *   emb_live_model_add()   one round's decoded packets
 *   emb_live_model_view()  the figures since the last view, and the totals
 */
#ifndef EMB_HOST_LIVE_MODEL_H
#define EMB_HOST_LIVE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "trace_decode.h"

#define EMB_LIVE_MAX_THREADS 256u  /* threads followed; more are counted in `ignored` */
#define EMB_LIVE_MAX_IRQS 64u
#define EMB_LIVE_TOP_EVENTS 8u     /* event types in a view, the busiest first */

struct emb_live_context {
    uint16_t id, kind;         /* enum emb_context_kind */
    char name[24];
    uint64_t events, packets;  /* totals */
    uint64_t discarded;        /* the ring's running total of events dropped */
    uint64_t lost_packets;     /* packets missing on the way or overwritten unread */
    uint64_t window_events;
    double events_per_s;       /* over the view's span */
};

struct emb_live_thread {
    uint32_t index;
    char name[20];             /* obj_init's, or "" */
    uint64_t run_ticks;        /* total */
    uint64_t switches_in;      /* total: switched to */
    uint64_t switches_out;     /* total: switched from (what a kernel counts as its switches) */
    uint64_t window_ticks, window_switches;
    double load;               /* share of the view's span it ran, 0 to 1 */
    bool running;              /* it ran at the view's end */
    /* Read from the target (emb_live_model_set_stack), not from the trace. */
    bool has_stack;
    uint32_t stack_used;       /* high-water: bytes of its stack ever used (the paint) */
    uint32_t stack_size;
};

/* A ring as the target holds it, read from it (its debug descriptor), not from the trace:
 * the trace rings of each context and the log rings. */
struct emb_live_ring {
    char name[24];
    const char *kind;          /* "trace" or "log" */
    uint16_t context_id;
    uint64_t unread, size;     /* bytes written and not yet taken by its consumer; its size */
    uint64_t dropped;          /* the ring's own count: events (trace) or records (log) */
};
#define EMB_LIVE_MAX_RINGS 32u

struct emb_live_irq {
    uint32_t irq;
    uint64_t count, window_count;
    double per_s;
};

struct emb_live_event_rate {
    const char *name;          /* the catalogue's */
    uint16_t id;
    uint64_t count, window_count;
    double per_s;
};

struct emb_live_monitor {
    const char *name;          /* the event that reports it: "irq_lock_max" */
    uint64_t reports;          /* times the firmware reported a new worst */
    uint64_t worst_cycles;
    uint64_t opener_pc;        /* the code that opened the worst interval */
    double worst_us;
};

enum emb_live_sort { EMB_LIVE_SORT_LOAD, EMB_LIVE_SORT_SWITCHES, EMB_LIVE_SORT_NAME };

struct emb_live_view {
    uint64_t clock_hz;
    double span_s;             /* target time the view's rates are over */
    double elapsed_s;          /* target time since the first event */
    uint64_t rounds, events, packets, discarded, lost_packets, switches, ignored;
    uint64_t window_events;
    double events_per_s;
    const struct emb_live_context *contexts;
    size_t ncontexts;
    const struct emb_live_thread *threads;
    size_t nthreads;
    const struct emb_live_irq *irqs;
    size_t nirqs;
    struct emb_live_event_rate top[EMB_LIVE_TOP_EVENTS];
    size_t ntop;
    struct emb_live_monitor monitor; /* reports 0: none seen */
    const struct emb_live_ring *rings; /* read from the target; none: not read */
    size_t nrings;
    uint64_t target_reads;     /* times the target's state was read (the set_* calls) */
};

struct emb_live_model;

struct emb_live_model *emb_live_model_new(void);
void emb_live_model_free(struct emb_live_model *m);
/* Counts one round's records (a trace decoded by emb_live_stream_next()). 0, or -1 when
 * out of memory. */
int emb_live_model_add(struct emb_live_model *m, const struct emb_trace *round);
/* The target's own state, read from it as it runs (its descriptor): a thread's stack
 * high-water (a thread not seen in the trace yet is added, named `name`), and its rings,
 * replacing those set before (at most EMB_LIVE_MAX_RINGS kept). */
void emb_live_model_set_stack(struct emb_live_model *m, uint32_t index, const char *name, uint32_t used,
                              uint32_t size);
void emb_live_model_set_rings(struct emb_live_model *m, const struct emb_live_ring *rings, size_t n);

/* Closes the window: the figures since the last view (its rates over the target time it
 * covers), threads in `sort` order. Valid until the next call. */
const struct emb_live_view *emb_live_model_view(struct emb_live_model *m, enum emb_live_sort sort);

#endif /* EMB_HOST_LIVE_MODEL_H */
