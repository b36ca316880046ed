/* Service IPC tracing: the emitter every service links, and the wire format of the `events`
 * sink it talks to.
 *
 * A service records the outcome of each call it makes to another service (request, reply,
 * timeout, lost peer, full queue, abandoned wait), publishes metric samples and copies of its
 * log lines. Everything goes by a non-blocking send to one sink service, `events`, which
 * stamps and keeps it. Tracing is an authority the service is granted when it is spawned
 * (on POSIX: an inherited socket descriptor named in EMB_EVENTS_FD); a service without it
 * pays one relaxed load and a branch per call and sends nothing. A failed send is counted
 * here and never reported to the caller: an observer must not slow or break what it observes.
 *
 * The wire format (one encoder and one decoder for every message and reply) is plain C that
 * builds freestanding and on the host, so the emitter, the sink, the `emb events` command
 * and the tests share it. docs/formats/svc-events.md is the prose version of this header.
 */
#ifndef EMB_SVC_TRACE_H
#define EMB_SVC_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/config.h>
#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Sizes ---- */
#define EMB_SVC_NAME_LEN 12u      /* a service name (caller, owner), NUL-padded */
#define EMB_SVC_PEER_LEN 12u      /* the peer's name in an event; "block-driver" is 12 */
#define EMB_SVC_MET_NAME_LEN 20u  /* a metric name: deliberately longer than a peer name */
#define EMB_SVC_LOG_TEXT_MAX 240u /* bytes of log text one copy carries; longer text is cut */
#define EMB_SVC_DUMP_MAX 255u     /* DUMP's count is one byte */

/* The sink's own name. Calls to it are never traced: the reader reaches the ring through
 * it, and recording those calls would fill the ring with the reader's questions. */
#define EMB_SVC_SINK_NAME "events"

/* ---- Opcodes: byte 0 of every message to the sink ---- */
enum emb_svc_op {
    EMB_SVC_OP_EVENT = 1,   /* [1][event:34]                      intake */
    EMB_SVC_OP_DUMP = 2,    /* [2][count:u8]                      query */
    EMB_SVC_OP_STATUS = 3,  /* [3]                                query */
    EMB_SVC_OP_METRIC = 4,  /* [4][owner:12][name:20][value:u64]  intake */
    EMB_SVC_OP_METRICS = 5, /* [5]                                query */
    EMB_SVC_OP_LOG = 6,     /* [6][owner:12][text:0..240]         intake */
    EMB_SVC_OP_LOGS = 7,    /* [7] or [7][since:u64]              query */
    EMB_SVC_OP_LOSSES = 8,  /* [8][owner:12][seq:u32][refused:u32] intake */
};

/* ---- What happened to a call ---- */
enum emb_svc_kind {
    EMB_SVC_KIND_REQUEST = 1,    /* the call started: the request is about to leave */
    EMB_SVC_KIND_REPLY = 2,      /* a reply came back */
    EMB_SVC_KIND_TIMEOUT = 3,    /* the deadline passed; the peer is alive but did not answer */
    EMB_SVC_KIND_PEER_LOST = 4,  /* the peer's endpoint died while the call was outstanding,
                                  * or the send failed */
    EMB_SVC_KIND_QUEUE_FULL = 5, /* the peer is alive and its queue is full: congestion, not
                                  * absence, so never answered like a lost peer */
    EMB_SVC_KIND_ABORTED = 6,    /* the user abandoned the wait: not a failure, recorded so a
                                  * gap in a chain is explained */
};
#define EMB_SVC_KIND_MAX 6u

/* ---- Event record: 34 bytes, in an EVENT message after the opcode and in DUMP replies ---- */
#define EMB_SVC_EV_LEN 34u
#define EMB_SVC_EV_OFF_SEQ 0u     /* u32 the emitter's event counter, from 1 */
#define EMB_SVC_EV_OFF_AT_S 4u    /* u32 seconds since the sink started; stamped by the sink */
#define EMB_SVC_EV_OFF_CALLER 8u  /* char[12] the emitting service */
#define EMB_SVC_EV_OFF_PEER 20u   /* char[12] the service it called */
#define EMB_SVC_EV_OFF_OP 32u     /* u8 the request's opcode byte (see set_op_offset) */
#define EMB_SVC_EV_OFF_KIND 33u   /* u8 enum emb_svc_kind */

/* ---- Metric record: 40 bytes, in a METRIC message after the opcode and in METRICS replies ---- */
#define EMB_SVC_MET_LEN 40u
#define EMB_SVC_MET_OFF_OWNER 0u  /* char[12] */
#define EMB_SVC_MET_OFF_NAME 12u  /* char[20] */
#define EMB_SVC_MET_OFF_VALUE 32u /* u64 */

/* ---- Message lengths ---- */
#define EMB_SVC_MSG_EVENT_LEN (1u + EMB_SVC_EV_LEN)   /* 35 */
#define EMB_SVC_MSG_METRIC_LEN (1u + EMB_SVC_MET_LEN) /* 41: the value is at offset 33 */
#define EMB_SVC_MSG_LOG_MIN (1u + EMB_SVC_NAME_LEN)   /* 13: an empty line */
#define EMB_SVC_MSG_LOG_MAX (EMB_SVC_MSG_LOG_MIN + EMB_SVC_LOG_TEXT_MAX)
#define EMB_SVC_MSG_DUMP_LEN 2u
#define EMB_SVC_MSG_LOGS_LEN 9u
/* LOSSES: what an emitter's own count says it lost. `seq` is the last event sequence number
 * it used, `refused` every send the port refused since it started (events, metrics and
 * logs). Sent before the next message after a refusal, and at exit. */
#define EMB_SVC_MSG_LOSSES_LEN 21u
#define EMB_SVC_LS_OFF_OWNER 1u   /* char[12] */
#define EMB_SVC_LS_OFF_SEQ 13u    /* u32 */
#define EMB_SVC_LS_OFF_REFUSED 17u /* u32 */
#define EMB_SVC_MSG_MAX EMB_SVC_MSG_LOG_MAX /* the longest message anyone may send */

/* ---- Replies (from the sink to a query; no opcode byte: a reply answers the last query) ---- */
/* STATUS: 40 bytes. A reader needs only the first 20; later versions may append. */
#define EMB_SVC_STATUS_LEN 40u
#define EMB_SVC_STATUS_MIN 20u
#define EMB_SVC_ST_OFF_CAPACITY 0u   /* u32 events the ring holds */
#define EMB_SVC_ST_OFF_ACCEPTED 4u   /* u64 events stored since the sink started */
#define EMB_SVC_ST_OFF_DROPPED 12u   /* u64 events known lost before they reached the ring */
#define EMB_SVC_ST_OFF_HELD 20u      /* u32 events in the ring now */
#define EMB_SVC_ST_OFF_MALFORMED 24u /* u64 messages refused (bad length, opcode, origin) */
#define EMB_SVC_ST_OFF_FAULTS 32u    /* u64 sequence numbers no emitter's count can explain */
#define EMB_SVC_STATUS_V1_LEN 32u    /* a STATUS reply without `faults` */
/* DUMP: count * 34-byte event records, oldest first.
 * METRICS: count * 40-byte metric records.
 * LOGS: the 25-byte header, then lines "owner 0x1f text \n". */
#define EMB_SVC_LOGS_HDR_LEN 25u
#define EMB_SVC_LG_OFF_NEXT 0u    /* u64 cursor to send as `since` next time */
#define EMB_SVC_LG_OFF_OLDEST 8u  /* u64 number of the oldest line held (0: none held) */
#define EMB_SVC_LG_OFF_COUNT 16u  /* u64 lines in the window */
#define EMB_SVC_LG_OFF_WRAPPED 24u /* u8 1: lines after `since` were discarded unread */
#define EMB_SVC_LOG_SEP 0x1Fu     /* between owner and text in a LOGS reply line */

/* ---- Decoded forms (names NUL-terminated) ---- */
struct emb_svc_event {
    uint32_t seq;
    uint32_t at_s;
    char caller[EMB_SVC_NAME_LEN + 1];
    char peer[EMB_SVC_PEER_LEN + 1];
    uint8_t op;
    uint8_t kind;
};

struct emb_svc_metric {
    char owner[EMB_SVC_NAME_LEN + 1];
    char name[EMB_SVC_MET_NAME_LEN + 1];
    uint64_t value;
};

struct emb_svc_status {
    uint32_t capacity;
    uint64_t accepted;
    uint64_t dropped;
    uint32_t held;      /* 0 when the reply is the 20-byte minimum */
    uint64_t malformed; /* likewise */
    uint64_t faults;    /* 0 when the reply is shorter than 40 bytes */
};

struct emb_svc_losses {
    char owner[EMB_SVC_NAME_LEN + 1];
    uint32_t seq;     /* the last event sequence number the emitter used */
    uint32_t refused; /* sends the port refused since the emitter started */
};

struct emb_svc_logs_header {
    uint64_t next;
    uint64_t oldest;
    uint64_t count;
    uint8_t wrapped;
};

/* One message to the sink, decoded. Pointers point into the message bytes. */
struct emb_svc_msg {
    uint8_t op; /* enum emb_svc_op */
    union {
        struct emb_svc_event event;
        struct emb_svc_metric metric;
        struct {
            char owner[EMB_SVC_NAME_LEN + 1];
            const uint8_t *text;
            size_t len;
        } log;
        uint8_t dump_count;
        uint64_t since;
        struct emb_svc_losses losses;
    } u;
};

/* ---- Encoders: return bytes written, 0 when `cap` is too small or an argument is bad ---- */

/* Writes a name cell: the first `cell` bytes of `name`, NUL-padded. */
void emb_svc_put_name(uint8_t *dst, size_t cell, const char *name);

size_t emb_svc_encode_event_record(uint8_t *buf, size_t cap, const struct emb_svc_event *ev);
size_t emb_svc_encode_metric_record(uint8_t *buf, size_t cap, const struct emb_svc_metric *m);
/* Messages. encode_log cuts the text at EMB_SVC_LOG_TEXT_MAX bytes, not at a character
 * boundary: the clipped copy may end mid-character; the authoritative line is elsewhere. */
size_t emb_svc_encode_event_msg(uint8_t *buf, size_t cap, const struct emb_svc_event *ev);
size_t emb_svc_encode_metric_msg(uint8_t *buf, size_t cap, const struct emb_svc_metric *m);
size_t emb_svc_encode_log_msg(uint8_t *buf, size_t cap, const char *owner, const void *text,
                              size_t len);
size_t emb_svc_encode_losses_msg(uint8_t *buf, size_t cap, const struct emb_svc_losses *l);
size_t emb_svc_encode_dump(uint8_t *buf, size_t cap, uint8_t count);
size_t emb_svc_encode_status(uint8_t *buf, size_t cap);
size_t emb_svc_encode_metrics(uint8_t *buf, size_t cap);
size_t emb_svc_encode_logs(uint8_t *buf, size_t cap, uint64_t since);
/* Replies. */
size_t emb_svc_encode_status_reply(uint8_t *buf, size_t cap, const struct emb_svc_status *st);
size_t emb_svc_encode_logs_header(uint8_t *buf, size_t cap, const struct emb_svc_logs_header *h);

/* ---- Decoders: EMB_OK, or EMB_E_CORRUPT with *bad_at = the offending byte offset ---- */

/* Any message to the sink. Refuses an empty message, an unknown opcode, a length other than
 * the opcode's, a LOG longer than EMB_SVC_MSG_LOG_MAX, an empty caller or owner name, and an
 * event kind outside 1..EMB_SVC_KIND_MAX. */
emb_status emb_svc_decode_msg(const uint8_t *msg, size_t len, struct emb_svc_msg *out,
                              size_t *bad_at);
/* One 34-byte event record / one 40-byte metric record (refuses what decode_msg refuses). */
emb_status emb_svc_decode_event_record(const uint8_t *rec, struct emb_svc_event *ev,
                                       size_t *bad_at);
emb_status emb_svc_decode_metric_record(const uint8_t *rec, struct emb_svc_metric *m,
                                        size_t *bad_at);
emb_status emb_svc_decode_status_reply(const uint8_t *buf, size_t len, struct emb_svc_status *st,
                                       size_t *bad_at);
/* The 25-byte header of a LOGS reply; the lines follow it. */
emb_status emb_svc_decode_logs_header(const uint8_t *buf, size_t len,
                                      struct emb_svc_logs_header *h, size_t *bad_at);

/* Short lower-case name of a kind ("request", "queue_full"), or "?" */
const char *emb_svc_kind_name(uint8_t kind);

/* ---- The emitter ---- */

#ifndef CONFIG_EMB_SVC_TRACE
/* 0 compiles every emb_svc_trace_call/metric/log call site out (the codec stays, for the
 * host). Cost when 1: one relaxed load and a branch per call site while untraced. */
#define CONFIG_EMB_SVC_TRACE 1
#endif

#ifndef CONFIG_EMB_SVC_TRACE_PEERS
/* Peers whose opcode offset a service may declare. RAM: 16 bytes each. */
#define CONFIG_EMB_SVC_TRACE_PEERS 8u
#endif

#ifndef CONFIG_EMB_SVC_RESOLVE_RETRY_EVERY
/* After a failed resolution, the sink is looked for again only on every Nth traced call,
 * so a service granted a capability that does not work yet pays a bounded amount. */
#define CONFIG_EMB_SVC_RESOLVE_RETRY_EVERY 64u
#endif
#define EMB_SVC_RESOLVE_RETRY_EVERY CONFIG_EMB_SVC_RESOLVE_RETRY_EVERY
EMB_STATIC_ASSERT(CONFIG_EMB_SVC_RESOLVE_RETRY_EVERY >= 1u, "retry period of at least one call");
EMB_STATIC_ASSERT(CONFIG_EMB_SVC_TRACE_PEERS <= 255u, "peer table index is a byte");

/* The emitter's state, also its fast-path word. 0 is the only value the fast path lets
 * through without a call; every other one goes to the slow path. */
enum emb_svc_state {
    EMB_SVC_STATE_UNTRACED = 0,   /* resolution found no capability: nothing ever sent */
    EMB_SVC_STATE_UNRESOLVED = 1, /* no call yet: the first one resolves */
    EMB_SVC_STATE_MISSING = 2,    /* granted, but the sink could not be used: retry later */
    EMB_SVC_STATE_TRACING = 3,    /* latched on a sink for the life of the service */
};

#define EMB_SVC_NO_SLOT 0xFFFFFFFFu

struct emb_svc_peer_op {
    char peer[EMB_SVC_PEER_LEN];
    uint16_t at;
};

/* One service's emitter. Allocate statically with EMB_SVC_TRACE_INIT. A service emits from
 * one thread (the SDK's model: services are single-threaded); the fields are public so a
 * debugger can read them, not so code outside this module writes them. */
struct emb_svc_trace {
    uint32_t state;            /* enum emb_svc_state, read relaxed on every call */
    uint32_t slot;             /* the port's handle on the sink, or EMB_SVC_NO_SLOT */
    uint32_t sink_id;          /* identity of the latched sink, to notice it change */
    uint32_t misses;           /* failed resolutions before the sink was found */
    uint32_t calls_since_miss; /* traced calls since the last failed resolution */
    uint32_t late_misses;      /* misses before a late resolution, until taken */
    uint32_t seq;              /* last event sequence number used */
    uint32_t sent;             /* messages the port accepted */
    uint32_t send_failures;    /* messages the port refused (sink full or gone) */
    uint32_t unnamed;          /* messages not built because set_caller was never called */
    uint32_t refused_reported; /* send_failures as of the last LOSSES the sink took */
    uint8_t sink_changed;      /* 1 until taken */
    uint8_t caller_set;
    uint8_t peer_count;
    uint8_t reserved;
    char caller[EMB_SVC_NAME_LEN];
    struct emb_svc_peer_op peers[CONFIG_EMB_SVC_TRACE_PEERS];
};

#define EMB_SVC_TRACE_INIT                                                                 \
    {                                                                                      \
        .state = EMB_SVC_STATE_UNRESOLVED, .slot = EMB_SVC_NO_SLOT                         \
    }

/* Declares this service's name (1 to 12 bytes), once. EMB_E_INVALID for an empty or longer
 * name, EMB_E_STATE when a name was already declared. Nothing is emitted before this. */
emb_status emb_svc_trace_set_caller(struct emb_svc_trace *t, const char *name);
bool emb_svc_trace_caller_set(const struct emb_svc_trace *t);

/* Declares that `peer`'s protocol keeps its opcode at byte `at` of a request (default 0).
 * Declaring a peer again replaces its offset. EMB_E_NOSPACE when the table is full. */
emb_status emb_svc_trace_set_op_offset(struct emb_svc_trace *t, const char *peer, uint16_t at);
uint16_t emb_svc_trace_op_offset(const struct emb_svc_trace *t, const char *peer);

/* Builds messages into the caller's buffer with this service's name; no allocation, no
 * send. encode() takes the next sequence number and the opcode byte of `req` (0 when the
 * request is shorter than the peer's offset). All return 0 before set_caller or when `cap`
 * is too small. */
size_t emb_svc_trace_encode(struct emb_svc_trace *t, uint8_t *buf, size_t cap, const char *peer,
                            const void *req, size_t req_len, enum emb_svc_kind kind);
size_t emb_svc_trace_encode_metric(const struct emb_svc_trace *t, uint8_t *buf, size_t cap,
                                   const char *name, uint64_t value);
size_t emb_svc_trace_encode_log(const struct emb_svc_trace *t, uint8_t *buf, size_t cap,
                                const void *text, size_t len);
/* A LOSSES message: the last sequence number used and every refused send so far. */
size_t emb_svc_trace_encode_losses(const struct emb_svc_trace *t, uint8_t *buf, size_t cap);

/* Reports refused sends the sink has not been told of (one LOSSES message); a service
 * calls it before it exits (the native port does, for emb_svc_self, at exit). True when
 * nothing is left unreported. Never waits. */
bool emb_svc_trace_flush(struct emb_svc_trace *t);

/* Resolution, as the slow path drives it (exposed so a port or a test can drive it too). */

/* True when resolution has run and need not run again (tracing, or not granted). */
bool emb_svc_trace_resolved(const struct emb_svc_trace *t);
/* Whether to look for the sink on this call: always before the first resolution, never once
 * resolved, and after a miss only on every EMB_SVC_RESOLVE_RETRY_EVERYth call (this call is
 * counted). */
bool emb_svc_trace_should_resolve(struct emb_svc_trace *t);
/* Records a resolution's outcome. A valid slot latches for the life of the service; a
 * different sink than the latched one (another sink_id) latches too and raises the
 * sink-changed flag. EMB_SVC_NO_SLOT is a miss, which does not latch. */
void emb_svc_trace_set_sink(struct emb_svc_trace *t, uint32_t slot, uint32_t sink_id);
/* Records that the service was not granted the capability: untraced from now on. */
void emb_svc_trace_set_untraced(struct emb_svc_trace *t);
/* The slot to emit on, or EMB_SVC_NO_SLOT when not tracing. */
uint32_t emb_svc_trace_sink_slot(const struct emb_svc_trace *t);
/* When the sink was found only after one or more misses: how many, once; 0 on the healthy
 * path and on every later call. */
uint32_t emb_svc_trace_take_late_resolve(struct emb_svc_trace *t);
/* True once after the sink changed, then false until it changes again. */
bool emb_svc_trace_take_sink_changed(struct emb_svc_trace *t);

/* Slow paths of the calls below. */
void emb_svc_trace_call_slow(struct emb_svc_trace *t, const char *peer, const void *req,
                             size_t req_len, enum emb_svc_kind kind);
void emb_svc_trace_metric_slow(struct emb_svc_trace *t, const char *name, uint64_t value);
void emb_svc_trace_log_slow(struct emb_svc_trace *t, const void *text, size_t len);

/* Records one outcome of a call to `peer` whose request was `req`. Record REQUEST before the
 * request leaves (so it reaches the sink before anything the peer does about it), then
 * exactly one of the other kinds. A service without the capability pays one relaxed load
 * and a branch; a send that fails is counted in send_failures and otherwise ignored. */
static inline void emb_svc_trace_call(struct emb_svc_trace *t, const char *peer, const void *req,
                                      size_t req_len, enum emb_svc_kind kind)
{
    if (CONFIG_EMB_SVC_TRACE &&
        EMB_UNLIKELY(__atomic_load_n(&t->state, __ATOMIC_RELAXED) != EMB_SVC_STATE_UNTRACED))
        emb_svc_trace_call_slow(t, peer, req, req_len, kind);
}

/* Publishes a metric sample (the sink keeps the latest value per owner and name; a name is
 * cut at 20 bytes). Same cost and failure rules as emb_svc_trace_call(). */
static inline void emb_svc_trace_metric(struct emb_svc_trace *t, const char *name,
                                        uint64_t value)
{
    if (CONFIG_EMB_SVC_TRACE &&
        EMB_UNLIKELY(__atomic_load_n(&t->state, __ATOMIC_RELAXED) != EMB_SVC_STATE_UNTRACED))
        emb_svc_trace_metric_slow(t, name, value);
}

/* Sends a queryable copy of one log line (cut at EMB_SVC_LOG_TEXT_MAX bytes). The line's
 * authoritative output (a console, a serial port) is the caller's and stays whole. */
static inline void emb_svc_trace_log(struct emb_svc_trace *t, const void *text, size_t len)
{
    if (CONFIG_EMB_SVC_TRACE &&
        EMB_UNLIKELY(__atomic_load_n(&t->state, __ATOMIC_RELAXED) != EMB_SVC_STATE_UNTRACED))
        emb_svc_trace_log_slow(t, text, len);
}

/* ---- Port half: provided by the platform (ports/native/svc_trace_posix.c on POSIX) ---- */

enum emb_svc_resolve {
    EMB_SVC_RESOLVE_NONE = 0, /* this service was not granted the capability */
    EMB_SVC_RESOLVE_MISS = 1, /* granted, but not usable now */
    EMB_SVC_RESOLVE_OK = 2,   /* *slot and *sink_id are set */
};

/* Looks for the capability to emit. Called from the slow path only. */
enum emb_svc_resolve emb_port_svc_resolve(uint32_t *slot, uint32_t *sink_id);
/* Sends one whole message on `slot` without ever waiting. Returns false when the message was
 * not sent (queue full, sink gone); the caller counts it. */
bool emb_port_svc_send(uint32_t slot, const void *msg, size_t len);

/* ---- Native port (POSIX) ---- */

/* The environment variable naming the inherited descriptor, in decimal. */
#define EMB_SVC_ENV_FD "EMB_EVENTS_FD"

/* The process's own emitter, for services that do not keep their own. */
extern struct emb_svc_trace emb_svc_self;

/* Installs a sink descriptor received after spawn (from a supervisor that restarted the
 * sink). The descriptor must be an AF_UNIX datagram socket; EMB_E_INVALID otherwise. When
 * it names a different sink than the latched one, take_sink_changed() reports it once. */
emb_status emb_svc_trace_grant_fd(struct emb_svc_trace *t, int fd);

#ifdef __cplusplus
}
#endif

#endif /* EMB_SVC_TRACE_H */
