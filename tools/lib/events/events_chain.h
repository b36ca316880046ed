/* Reading a dump of IPC events as calls and chains.
 *
 * The sink keeps events in arrival order. A call is a REQUEST and the one outcome its caller
 * recorded after it (REPLY, TIMEOUT, PEER_LOST, QUEUE_FULL or ABORTED) for the same peer and
 * opcode. A call that service S makes while a call into S is outstanding is taken to serve
 * that call (services handle one request at a time), which links calls into chains such as
 * `client -> fs.read -> block-driver.read_block`. REQUEST is recorded before the request
 * leaves, so the parent's REQUEST always reaches the sink before the child's.
 *
 * Opcode names come from an ops file: one `PEER OPCODE NAME` per line (opcode in decimal or
 * 0x hex), `#` starts a comment. Without a name an opcode prints as its number.
 */
#ifndef EMB_EVENTS_CHAIN_H
#define EMB_EVENTS_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include <emb/svc_trace.h>

#include "problem.h"

#define EMB_EVENTS_NONE ((size_t)-1)

struct emb_events_call {
    size_t request; /* event index of the REQUEST, or NONE when it left the ring */
    size_t outcome; /* event index of the outcome, or NONE while outstanding */
    size_t parent;  /* call index of the call this one serves, or NONE */
    unsigned depth; /* 0 for a call nothing else led to */
    uint8_t kind;   /* the outcome's kind, or EMB_SVC_KIND_REQUEST while outstanding */
};

struct emb_events_calls {
    struct emb_events_call *call;
    size_t count;
    size_t *of_event; /* event index -> call index */
};

/* Groups `n` events (arrival order) into calls. 0, or -1 when memory is short. */
int emb_events_calls_build(const struct emb_svc_event *ev, size_t n, struct emb_events_calls *out);
void emb_events_calls_free(struct emb_events_calls *c);

struct emb_events_ops;

/* Loads an ops file. NULL on failure, the problem reported to `ps` (whose file names the
 * ops file) at its byte offset, its message "line L (byte B): ...". */
struct emb_events_ops *emb_events_ops_load(const char *path, struct emb_problems *ps);
void emb_events_ops_free(struct emb_events_ops *ops);
/* The name of `op` in `peer`'s protocol, or NULL. `ops` may be NULL. */
const char *emb_events_op_name(const struct emb_events_ops *ops, const char *peer, uint8_t op);

/* Writes "peer.opname" (or "peer.N") into buf; returns buf. */
const char *emb_events_target(const struct emb_events_ops *ops, const char *peer, uint8_t op,
                              char *buf, size_t cap);

/* Writes the chain that leads to call `c`: "client -> fs.read -> block-driver.read_block".
 * A chain whose root REQUEST left the ring starts at the oldest caller still known. */
const char *emb_events_chain(const struct emb_events_calls *calls, const struct emb_svc_event *ev,
                             const struct emb_events_ops *ops, size_t c, char *buf, size_t cap);

#endif /* EMB_EVENTS_CHAIN_H */
