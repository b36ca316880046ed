/* The `events` sink's logic, without sockets: the ring of IPC events, the metric table and the
 * window of log lines, and the handler that turns one message into a stored record or a reply.
 * `emb events serve` wraps it in a socket loop; tests and the fuzz target drive it directly.
 * Wire formats: include/emb/svc_trace.h and docs/formats/svc-events.md.
 */
#ifndef EMB_EVENTS_SINK_H
#define EMB_EVENTS_SINK_H

#include <stddef.h>
#include <stdint.h>

#include <emb/svc_trace.h>

/* The largest reply the handler writes; a reply buffer of this size always suffices. */
#define EMB_EVENTS_REPLY_MAX 65536u

struct emb_events_sink_config {
    uint32_t capacity;  /* events the ring holds; default 4096 */
    uint32_t log_lines; /* lines the log window holds; default 1024 */
    uint32_t metrics;   /* (owner, name) pairs the metric table holds; default 256, at most
                         * EMB_EVENTS_REPLY_MAX / 40 */
    uint32_t callers;   /* emitters whose sequence numbers are followed; default 256 */
    uint32_t logs_reply_max; /* bytes of one LOGS reply; default and at most REPLY_MAX */
};

/* Fills a configuration with the defaults. */
void emb_events_sink_config_default(struct emb_events_sink_config *cfg);

struct emb_events_sink_stats {
    uint32_t capacity;
    uint32_t held;           /* events in the ring */
    uint64_t accepted;       /* events stored since the start */
    uint64_t dropped;        /* events lost on the way in, as the emitters' LOSSES reports
                              * explain the gaps in their sequence numbers */
    uint64_t faults;         /* an emitter's faults: a sequence jump no report explains,
                              * a name other than the one its intake was granted for */
    uint64_t malformed;      /* messages refused: bad length, opcode, name, kind or origin */
    uint64_t metric_samples; /* METRIC messages stored */
    uint64_t metrics_full;   /* METRIC samples refused because the table was full */
    uint32_t metrics_held;
    uint64_t log_lines;      /* LOG messages stored: the number of the newest line */
    uint32_t log_held;
    uint64_t queries;        /* well-formed queries answered */
};

enum emb_events_origin {
    EMB_EVENTS_FROM_INTAKE, /* the capability socket: EVENT, METRIC, LOG */
    EMB_EVENTS_FROM_QUERY,  /* the query socket: DUMP, STATUS, METRICS, LOGS */
};

struct emb_events_sink;

/* NULL when a size is out of range (zero, or too large to reply with) or memory is short. */
struct emb_events_sink *emb_events_sink_new(const struct emb_events_sink_config *cfg);
void emb_events_sink_free(struct emb_events_sink *s);

/* Handles one whole message. `now_s` is the sink's clock in seconds, stamped on events.
 * A message that does not decode, or arrives on the wrong socket for its opcode (emission
 * needs the capability; queries are not taken on the intake), is counted as malformed and
 * otherwise ignored. Returns the reply's length for a query (0 when the query was refused or
 * has nothing to return), or -1 when no reply is due (anything from the intake). `reply` holds
 * at least EMB_EVENTS_REPLY_MAX bytes when `from` is the query socket. */
long emb_events_sink_handle(struct emb_events_sink *s, enum emb_events_origin from,
                            const uint8_t *msg, size_t len, uint32_t now_s, uint8_t *reply);

/* Handles one whole message from an intake granted to the service `name` (1 to 12 bytes):
 * the name is the sink's fact, not the emitter's claim, so an EVENT, METRIC, LOG or LOSSES
 * naming any other caller or owner is refused and counted as that emitter's fault. With
 * `name` NULL, as emb_events_sink_handle() (an intake shared by emitters named as they
 * claim). */
long emb_events_sink_handle_bound(struct emb_events_sink *s, const char *name,
                                  const uint8_t *msg, size_t len, uint32_t now_s);

/* Counts a message the transport already knows is malformed (longer than any message). */
void emb_events_sink_count_malformed(struct emb_events_sink *s);

void emb_events_sink_stats(const struct emb_events_sink *s, struct emb_events_sink_stats *out);

#endif /* EMB_EVENTS_SINK_H */
