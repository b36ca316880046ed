/* Asking the `events` sink a question over its query socket (AF_UNIX, SOCK_SEQPACKET): one
 * query message, one reply message. Emission does not go this way: it needs the capability
 * descriptor (see include/emb/svc_trace.h). */
#ifndef EMB_EVENTS_CLIENT_H
#define EMB_EVENTS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* The query socket's path: $EMB_EVENTS_SOCKET, else $XDG_RUNTIME_DIR/emb-events.sock, else
 * /tmp/emb-events-UID.sock. */
const char *emb_events_default_socket(char *buf, size_t cap);

/* Connects to the sink at `path`; the descriptor, or -1 with a message in err. */
int emb_events_connect(const char *path, char *err, size_t errlen);

/* Sends `q` and waits up to `timeout_ms` for the reply, which lands in `reply` (at least
 * EMB_EVENTS_REPLY_MAX bytes). Returns its length, or -1 with a message in err (timeout,
 * sink gone, reply too long). */
long emb_events_query(int fd, const uint8_t *q, size_t qlen, uint8_t *reply, int timeout_ms,
                      char *err, size_t errlen);

#endif /* EMB_EVENTS_CLIENT_H */
