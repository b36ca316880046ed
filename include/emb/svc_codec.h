/* The service-event wire format: every message an emitter sends to the `events` sink and
 * every reply the sink sends to a query, with the one encoder and the one decoder of each.
 *
 * Plain C that builds freestanding and on the host, so the emitter (emb/svc_trace.h), the
 * sink, the `emb events` command and the tests share it. docs/formats/svc-events.md is the
 * prose version of this header.
 */
#ifndef EMB_SVC_CODEC_H
#define EMB_SVC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* Bytes of `name` up to `cell` (a name may fill its cell with no terminator). */
size_t emb_svc_name_len(const char *name, size_t cell);

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

#ifdef __cplusplus
}
#endif

#endif /* EMB_SVC_CODEC_H */
