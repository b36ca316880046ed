/* The trace stream decoder's state, shared by its parts: trace_decode.c (the state, its
 * contexts and records, what follows the walk, the public calls), trace_header.c (the
 * file header and context table) and trace_packet.c (packets and their events). Internal
 * to the decode layer: nothing outside these three files includes it. */
#ifndef EMB_HOST_TRACE_DECODER_H
#define EMB_HOST_TRACE_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "problem.h"
#include "trace_decode.h"
#include "trace_seal.h"

#define NO_CONTEXT_ID 0xFFFFu /* the port's pseudo-context for events with no ring */

struct ctx_state {
    struct emb_trace_context pub;
    struct emb_trace_event *recs;
    size_t nrecs, cap;
    const struct emb_trace_event **sorted; /* recs in time order when they are not */
    /* A streaming decode keeps no records: the latest one is held here until the next,
     * and only what the cursor needs is noted. */
    struct emb_trace_event scratch;
    bool scratch_held;
    size_t nseen;              /* records, kept or not */
    uint64_t last_seen_ts;     /* the latest record's, in ring order */
    bool back_in_time;         /* a record's ts is before the one before it */
    uint32_t final_discarded;  /* the table's drops after the last packet: a marker last */
    uint64_t final_ts;
    bool have_prev;        /* a packet of this context has been accepted */
    uint32_t prev_seq;
    uint64_t prev_ts_end;
    uint32_t prev_discarded;
};

struct emb_trace {
    char *name;
    uint8_t *owned; /* the file's bytes when we read it */
    void *map;      /* or when we mapped it: map_size bytes */
    size_t map_size;
    bool stream;    /* records are not kept (emb_trace_options.stream) */
    const uint8_t *data;
    size_t size;
    const uint8_t *input; /* the bytes emb_trace_decode() was given */
    size_t input_size;
    bool input_mapped;    /* ... a read-only file mapping (emb_trace_options.mapped) */
    uint64_t base;
    const struct emb_catalog *cat;
    const struct emb_trace_options *opt;
    struct emb_trace_info info;
    struct emb_trace_summary sum;
    struct ctx_state *ctx;
    size_t nctx, ctx_cap;
    int32_t *ctx_index; /* context id -> index, -1 when absent */
    struct emb_trace_packet *pkts;
    size_t npkts, pkt_cap;
    struct emb_problems kept;      /* the problems, unless the caller gave a sink */
    struct emb_problems *problems; /* where they go: &kept or the caller's */
    const struct emb_trace_event **merged; /* built on the first emb_trace_events() */
    size_t nmerged;
    bool merge_tried;
    uint64_t *event_count;          /* EVENT records per event id */
    size_t nrecords;                /* records of every context */
    uint64_t last_ts;               /* the latest record's timestamp */
    /* A sealed file: its view without CRCs (data is then its header, as version 1); a
     * few bytes across a CRC are copied to `window`, a packet across one to `copies`. */
    struct emb_trace_unsealed seal;
    uint8_t window[EMB_PKT_HEADER_SIZE];
    uint8_t **copies;
    size_t ncopies, copies_cap;
    bool offsets_raw;               /* report() offsets are the source's already */
    bool start_known;               /* start_ts carried on from an earlier decode */
    struct emb_trace_clock clock;   /* info's clock once the walk has set start_ts */
    bool clock_ready;
    bool oom;
};

/* Reports a problem at byte `offset` of the data decoded (-1: none), counted in
 * sum.errors; the offset reported is the source's (a sealed file's CRCs counted, the base
 * added). */
void emb_trace_report(struct emb_trace *t, enum emb_severity severity, long long offset,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The source's offset of byte `off` of the data decoded. */
uint64_t emb_trace_source_offset(const struct emb_trace *t, uint64_t off);

/* A new context (first seen in the table or a packet): its index, or -1 out of memory. */
long emb_trace_add_context(struct emb_trace *t, uint16_t id, uint16_t kind);
/* A new record at the end of a context's (zeroed but for its context), or NULL. */
struct emb_trace_event *emb_trace_push_record(struct emb_trace *t, struct ctx_state *c);
/* A streaming decode's record at ts, counted without being kept (after the marker the
 * context holds, if any). */
void emb_trace_note_record(struct emb_trace *t, struct ctx_state *c, uint64_t ts);
/* A marker record (EMB_TREC_LOST, EMB_TREC_DISCARDED) of `count` at ts and offset. False
 * when out of memory. */
bool emb_trace_push_marker(struct emb_trace *t, struct ctx_state *c, uint8_t type, uint64_t ts,
                           uint64_t offset, uint32_t count);

/* What emb_trace_step_event() found at a packet's byte `pos`. */
enum emb_trace_step {
    EMB_STEP_EVENT,    /* a catalogue event: r filled, it is r->ev->size bytes long */
    EMB_STEP_UNKNOWN,  /* an id the catalogue lacks: r filled, the packet ends here */
    EMB_STEP_SHORT,    /* too few bytes for an event header */
    EMB_STEP_FLAGS,    /* flags not valid */
    EMB_STEP_PAST_END, /* the event (r->ev) runs past the content end */
};
/* Reads the event at `pos` of the packet at p (content bytes), its 32-bit time unwrapped
 * against `prev`: ts, id, ev, kind, depth, payload, payload_size and type of r. The one
 * reading of an event, for the walk and for the cursor that reads packets again. */
enum emb_trace_step emb_trace_step_event(const struct emb_trace *t, const uint8_t *p,
                                         uint32_t pos, uint32_t content, uint64_t prev,
                                         struct emb_trace_event *r);

/* Prepares a context for the merge by time: records that go back in time are ordered
 * (stably) in c->sorted. False when out of memory. */
bool emb_trace_order_context(struct emb_trace *t, struct ctx_state *c);
/* Builds t->merged. False when out of memory. */
bool emb_trace_merge(struct emb_trace *t);

/* `len` bytes (at most EMB_PKT_HEADER_SIZE) at byte `off` of the data decoded, as one
 * run: in place, or for a sealed file across a packet's CRC copied to t->window (valid
 * until the next call). */
static inline const uint8_t *emb_trace_at(struct emb_trace *t, size_t off, size_t len)
{
    if (!t->seal.sealed)
        return t->data + off;
    return emb_trace_unsealed_bytes(&t->seal, off, len, t->window);
}
/* The packet at `off` (packet_size bytes): in place, or a copy that lives as long as the
 * trace. NULL when out of memory. */
const uint8_t *emb_trace_packet_bytes(struct emb_trace *t, size_t off);

/* Lets the system take back the mapped input's pages before its byte `input_off` (they
 * are read again if needed): memory stays flat however large the file. Does nothing
 * unless the input is a file mapping. */
void emb_trace_release_before(const struct emb_trace *t, uint64_t input_off);
/* The same for the input's bytes [from, to): pages wholly inside the range. */
void emb_trace_release_range(const struct emb_trace *t, uint64_t from, uint64_t to);

/* Validates the file header and reads the context table and extension blocks. False
 * when the stream must be refused (reported as an error). */
bool emb_trace_read_header(struct emb_trace *t);
/* Walks every packet after the header. */
void emb_trace_walk_packets(struct emb_trace *t);

#endif /* EMB_HOST_TRACE_DECODER_H */
