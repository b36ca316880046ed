/* Asking the `events` sink a question over its query socket (AF_UNIX, SOCK_SEQPACKET): one
 * query message, one reply message. Emission does not go this way: it needs the capability
 * descriptor (see include/emb/svc_trace.h). */
#ifndef EMB_EVENTS_CLIENT_H
#define EMB_EVENTS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The query socket's path: $EMB_EVENTS_SOCKET, else $XDG_RUNTIME_DIR/emb-events.sock, else
 * /tmp/emb-UID/events.sock (a directory of the user's own, mode 0700). */
const char *emb_events_default_socket(char *buf, size_t cap);

/* Checks the directory the socket `path` lives in, since whoever can write it can put a
 * socket of their own there: the default private directory must be the user's with mode
 * 0700 (`create`: made so when missing); any other directory must belong to the user or
 * root and be writable by its owner alone. 0, or -1 with a message naming the owners. */
int emb_events_check_socket_dir(const char *path, bool create, char *err, size_t errlen);

/* Checks that the process at the other end of the connected AF_UNIX socket `fd` runs as
 * this user (SO_PEERCRED); `role` names it in the message ("sink", "client"). 0 or -1. */
int emb_events_check_peer(int fd, const char *path, const char *role, char *err, size_t errlen);

/* "uid N (name)", or "uid N" when the name is unknown. */
const char *emb_events_uid_name(unsigned uid, char *buf, size_t cap);

/* Connects to the sink at `path` after checking its directory, and checks that the sink
 * runs as this user; the descriptor, or -1 with a message in err. */
int emb_events_connect(const char *path, char *err, size_t errlen);

/* Sends `q` and waits up to `timeout_ms` for the reply, which lands in `reply` (at least
 * EMB_EVENTS_REPLY_MAX bytes). Returns its length, or -1 with a message in err (timeout,
 * sink gone, reply too long). */
long emb_events_query(int fd, const uint8_t *q, size_t qlen, uint8_t *reply, int timeout_ms,
                      char *err, size_t errlen);

#endif /* EMB_EVENTS_CLIENT_H */
