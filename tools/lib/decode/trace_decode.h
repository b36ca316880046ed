/* The decoder of the trace stream file ("EMBT", docs/formats/trace.md): the one reader of
 * trace packets on the host. `emb trace` prints what it returns; capture files embed
 * these streams and decode them through emb_trace_decode(); the two-run comparison walks
 * the events of each context.
 *
 * The decoder validates the file header (refusing the stream when it is wrong, or when
 * its catalogue checksum is not the catalogue's), then walks every packet. A bad packet
 * is reported with its byte offset and skipped: the decoder scans forward for the next
 * packet of the same trace and goes on, so one corrupted packet costs only itself. Losses
 * the stream records (events_discarded, packet_seq_num gaps) become marker records in the
 * event sequence, where they happened.
 *
 * Memory is linear in the input: at most one record per 8 input bytes; a streaming decode
 * (emb_trace_options.stream) keeps none, and a file is mapped, not read. A sealed file's
 * packets are read where they lie (trace_seal.h): only the header, and a packet that
 * resynchronisation finds across a CRC, are copied.
 */
#ifndef EMB_HOST_TRACE_DECODE_H
#define EMB_HOST_TRACE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/trace_format.h>

#include "catalog.h"
#include "problem.h"

/* What a record in the event sequence is. */
enum emb_trace_rec_type {
    EMB_TREC_EVENT,     /* a catalogue event: ev, payload */
    EMB_TREC_UNKNOWN,   /* an id the catalogue lacks: raw bytes to the packet's content end */
    EMB_TREC_DISCARDED, /* `count` events the context dropped before this point */
    EMB_TREC_LOST,      /* `count` packets missing before this point (packet_seq_num gap) */
};

struct emb_trace_event {
    uint64_t ts;       /* clock ticks, 64-bit, unwrapped */
    uint64_t ns;       /* ns since the trace start (emb_trace_info.start_ts) */
    int64_t wall_ns;   /* ns since the Unix epoch: clock offset + ts in ns (offset 0: since tick 0) */
    uint64_t offset;   /* byte offset in the source: the event header, or a marker's packet */
    const struct emb_catalog_event *ev; /* EMB_TREC_EVENT only, else NULL */
    const uint8_t *payload;         /* EVENT: ev->payload_size bytes; UNKNOWN: raw bytes */
    uint32_t payload_size;
    uint32_t count;    /* DISCARDED, LOST: how many */
    uint32_t ctx;      /* index into the context table of emb_trace_context() */
    uint16_t context_id;
    uint16_t id;       /* event id (EVENT, UNKNOWN) */
    uint8_t type;      /* enum emb_trace_rec_type */
    uint8_t kind;      /* EMB_EVT_KIND_*: thread, interrupt, fault */
    uint8_t depth;     /* interrupt nesting depth */
};

/* A context: from the file's context table, or first seen in a packet. */
struct emb_trace_context {
    uint16_t id;
    uint16_t kind;            /* enum emb_context_kind */
    char name[24];            /* the table's name, or "ctx N" */
    bool in_table;
    uint32_t table_discarded; /* the table's final counts (0 in a stream) */
    uint32_t table_packets;
    /* What the decoder found. */
    uint64_t events;          /* EVENT records */
    uint64_t unknown;         /* UNKNOWN records */
    uint64_t packets;         /* packets whose header was valid */
    uint64_t lost_packets;    /* packet_seq_num gaps, summed */
    uint64_t overwritten_packets; /* gaps the ring made itself (a streaming ring whose
                               * consumer fell behind), their events in `discarded` */
    uint32_t first_seq;       /* packet_seq_num of the first packet held: as many earlier
                               * packets were overwritten (a snapshot ring) or never received
                               * (a stream joined late) */
    uint64_t discarded;       /* events dropped: the largest running total seen */
    const struct emb_trace_event *recs; /* this context's records in ring order */
    size_t nrecs;
};

/* A packet whose header was valid, in file order. */
struct emb_trace_packet {
    uint64_t offset;      /* in the source */
    const uint8_t *data;  /* packet_size bytes */
    uint32_t ctx;         /* context index */
    uint32_t seq;         /* packet_seq_num */
    uint64_t ts_begin, ts_end;
    uint32_t content_size; /* bytes */
    uint32_t discarded;    /* events_discarded, running total */
    bool clean;           /* every event decoded: a CTF reader will read it too */
    uint32_t lost_before;  /* the LOST marker's count before its events (0: none) */
    uint32_t discarded_after; /* the DISCARDED marker's count after them (0: none) */
};

/* The file header. */
struct emb_trace_info {
    uint16_t version;
    uint16_t header_size;
    uint32_t catalog_checksum;
    uint32_t packet_size;   /* bytes */
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    uint8_t uuid[16];
    uint8_t build_id[32];
    uint8_t build_id_len;
    uint8_t pointer_size;
    uint16_t context_count; /* entries in the file's table */
    char port[32];
    /* The identity block, when the header has one. */
    bool has_identity;
    uint64_t session_id;
    char firmware[EMB_TSF_FIRMWARE_MAX + 1];
    char config[EMB_TSF_CONFIG_MAX + 1];
    uint32_t ring_packets;  /* the ring block: packets per context ring; 0 not said */
    /* A sealed file (version 2): its header CRC matched, and each packet's was checked. A
     * version-1 file is not checked (sealed false). */
    bool sealed;
    uint64_t packets_checked, packets_damaged;
    uint64_t start_ts;      /* earliest timestamp_begin of a valid packet (ns = 0 there) */
    uint64_t end_ts;        /* latest timestamp_end of a valid packet */
};

struct emb_trace_summary {
    uint64_t events;        /* EVENT records, all contexts */
    uint64_t unknown;
    uint64_t discarded;     /* sum over contexts */
    uint64_t lost_packets;  /* packets lost on the way (not the ring's overwrites) */
    uint64_t overwritten_packets; /* packets the ring overwrote unread: events discarded */
    uint64_t packets;       /* valid packets */
    uint64_t bad_packets;   /* regions skipped */
    uint64_t lost_no_context; /* the port's count of events with no ring (context 0xFFFF) */
    uint64_t errors;        /* issues reported, including ones not kept */
    bool fatal;             /* the header was refused: no packet was decoded */
};

struct emb_trace_options {
    const struct emb_catalog *catalog; /* required */
    const char *name;        /* for messages; default "trace" */
    uint64_t base_offset;    /* added to every offset (a stream inside a larger file) */
    bool ignore_checksum;    /* decode even when the catalogue checksum differs */
    /* Keep no records: emb_trace_context()->recs is NULL (nrecs 0) and emb_trace_events()
     * returns none; a cursor reads each context's packets again as it walks them. Memory
     * is then flat in the number of events (text, NDJSON, summaries, CTF). */
    bool stream;
    /* The bytes given to emb_trace_decode() are a read-only file mapping: pages behind the
     * walk are given back (read again from the file if needed). Never for malloc'd bytes. */
    bool mapped;
    bool no_merge;           /* emb_trace_events() returns none (it builds its array only
                              * when called; a cursor walks the same order without it) */
    /* Where problems go (a refused header an error, a bad packet a warning), at the
     * source's byte offsets; NULL: kept in the trace (emb_trace_problems). */
    struct emb_problems *problems;
    /* Called now and then with bytes walked; may be NULL. */
    void (*progress)(void *arg, uint64_t done, uint64_t total);
    void *progress_arg;
    /* A decode of the same stream's packets before these, or NULL. The bytes given are
     * then the stream's header and only the packets that came after (a live stream read
     * round by round): each context keeps going from where that decode left it (packet
     * sequence, events_discarded, the trace's start time), so a gap or a drop between the
     * two is counted once, where it happened, and times count from the same start. It may
     * be freed once this decode returns. */
    const struct emb_trace *continues;
};

struct emb_trace;

/* Decodes a stream held in memory. The bytes are not copied: they must outlive the
 * result, and payload pointers point into them. Returns NULL only when out of memory;
 * otherwise check emb_trace_summary()->fatal and emb_trace_problems(). */
struct emb_trace *emb_trace_decode(const uint8_t *data, size_t size,
                                   const struct emb_trace_options *opt);

/* Reads and decodes a file (name defaults to the path). A file that cannot be read is
 * a fatal issue with offset -1. Returns NULL only when out of memory. */
struct emb_trace *emb_trace_decode_file(const char *path, const struct emb_trace_options *opt);

void emb_trace_free(struct emb_trace *t);

const struct emb_trace_info *emb_trace_info(const struct emb_trace *t);
const struct emb_trace_summary *emb_trace_summary(const struct emb_trace *t);
const char *emb_trace_name(const struct emb_trace *t);
const struct emb_catalog *emb_trace_catalog(const struct emb_trace *t);

/* Contexts in order of first appearance: the table's entries, then any others. */
size_t emb_trace_context_count(const struct emb_trace *t);
const struct emb_trace_context *emb_trace_context(const struct emb_trace *t, size_t i);
/* The index of a context id, or -1. */
long emb_trace_context_index(const struct emb_trace *t, uint16_t id);

/* Every record of every context merged by timestamp; ties keep context order, then ring
 * order. The array is built on the first call (8 bytes per record); NULL, *n 0, when out
 * of memory. */
const struct emb_trace_event *const *emb_trace_events(const struct emb_trace *t, size_t *n);

/* The same sequence one record at a time, without the array: a k-way merge of the
 * contexts. emb_trace_cursor_next() returns NULL at the end; open returns NULL when out
 * of memory. */
struct emb_trace_cursor;
struct emb_trace_cursor *emb_trace_cursor_open(const struct emb_trace *t);
const struct emb_trace_event *emb_trace_cursor_next(struct emb_trace_cursor *c);
void emb_trace_cursor_close(struct emb_trace_cursor *c);

/* Records of every context; the latest one's timestamp (0 when there are none); EVENT
 * records of one event id. */
size_t emb_trace_record_count(const struct emb_trace *t);
uint64_t emb_trace_last_ts(const struct emb_trace *t);
uint64_t emb_trace_event_count(const struct emb_trace *t, uint16_t id);
/* Sets a record's ns and wall_ns from its ts (as the decoder does). */
void emb_trace_set_times(const struct emb_trace *t, struct emb_trace_event *r);

const struct emb_trace_packet *emb_trace_packets(const struct emb_trace *t, size_t *n);

/* Problems found, in file order, when the options named no sink (else empty). At most
 * EMB_TRACE_MAX_ISSUES are kept; emb_trace_summary()->errors counts them all. */
#define EMB_TRACE_MAX_ISSUES 1000u
const struct emb_problems *emb_trace_problems(const struct emb_trace *t);
/* The same list as offset and message pairs, for callers that read it so. */

/* Clock ticks to nanoseconds at `hz` (exact for any 64-bit tick count). */
uint64_t emb_trace_ticks_to_ns(uint64_t ticks, uint64_t hz);

/* A trace's clock prepared once for the conversion of every record: ticks to ns by three
 * multiplies (1e9 / hz as a whole part and a 128-bit fraction; hz 1e9 or 0: whole 1), the
 * division's result for every tick count. */
struct emb_trace_clock {
    uint64_t hz, start_ts;
    int64_t offset_ns;
    uint64_t whole;            /* 1e9 / hz */
    uint64_t frac_hi, frac_lo; /* ceil(2^128 * (1e9 mod hz) / hz) */
};
void emb_trace_clock_init(struct emb_trace_clock *c, uint64_t hz, uint64_t start_ts,
                          int64_t offset_ns);
/* emb_trace_ticks_to_ns(ticks, c->hz), bit for bit. */
uint64_t emb_trace_clock_ns(const struct emb_trace_clock *c, uint64_t ticks);
/* A record at tick ts: ns = emb_trace_ticks_to_ns(ts - start_ts, hz) and wall_ns =
 * offset_ns + emb_trace_ticks_to_ns(ts, hz) (both modulo 2^64), as emb_trace_set_times. */
void emb_trace_clock_times(const struct emb_trace_clock *c, uint64_t ts, uint64_t *ns,
                           int64_t *wall_ns);

/* ---- Reading fields ---- */

/* Formats field f of a payload as text: enum label, 0x-padded hex where the catalogue
 * says, char[N] as quoted text with escapes, bool as true/false, else decimal. Returns
 * buf. */
char *emb_trace_field_text(const struct emb_catalog_field *f, const uint8_t *payload, char *buf,
                           size_t len);

/* Bytes of a char[N] field up to its first NUL. */
size_t emb_trace_field_chars(const struct emb_catalog_field *f, const uint8_t *payload,
                             const char **text);

#endif /* EMB_HOST_TRACE_DECODE_H */
