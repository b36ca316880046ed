/* Service IPC tracing: the emitter every service links.
 *
 * A service records the outcome of each call it makes to another service (request, reply,
 * timeout, lost peer, full queue, abandoned wait), publishes metric samples and copies of its
 * log lines. Everything goes by a non-blocking send to one sink service, `events`, which
 * stamps and keeps it. Tracing is an authority the service is granted when it is spawned
 * (on POSIX: an inherited socket descriptor named in EMB_EVENTS_FD); a service without it
 * pays one relaxed load and a branch per call and sends nothing. A failed send is counted
 * here and never reported to the caller: an observer must not slow or break what it observes.
 *
 * The messages it sends are the wire format of emb/svc_codec.h (src/wire/svc_codec.c), which
 * the sink, the `emb events` command and the tests share.
 */
#ifndef EMB_SVC_TRACE_H
#define EMB_SVC_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/config.h>
#include <emb/status.h>
#include <emb/svc_codec.h>

#ifdef __cplusplus
extern "C" {
#endif

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
