/* A connection to a server read with a deadline through one buffer: a byte at a time (the
 * GDB remote protocol's packets) or a line at a time (QMP's JSON objects, qtest's text
 * lines). Opened from a Unix socket path or HOST:PORT; nothing here prints or exits: a
 * status says what went wrong, in the caller's words. */
#ifndef EMB_HOST_CONN_H
#define EMB_HOST_CONN_H

#include <stddef.h>
#include <stdint.h>

struct emb_conn {
    int fd;          /* -1: not open */
    int timeout_ms;  /* how long one read waits */
    char *buf;       /* received: bytes [start, len) not yet taken */
    size_t start, len, cap;
};

/* What a read that returns no byte or line met. EMB_CONN_ERROR leaves errno as the read
 * set it. */
enum emb_conn_status {
    EMB_CONN_OK = 0,
    EMB_CONN_TIMEOUT = -1,   /* nothing within timeout_ms */
    EMB_CONN_CLOSED = -2,    /* the server closed the connection */
    EMB_CONN_ERROR = -3,     /* reading failed (errno) */
    EMB_CONN_TOO_LONG = -4,  /* a line longer than the most asked for */
    EMB_CONN_NO_MEMORY = -5,
};

/* A connection over a descriptor already open (it is the connection's to close). */
void emb_conn_init(struct emb_conn *c, int fd, int timeout_ms);
/* Connects to a Unix socket path (one with a '/', or without ':'), or to HOST:PORT over
 * TCP, within timeout_ms. 0, or -1 with a message naming the address. */
int emb_conn_open(struct emb_conn *c, const char *address, int timeout_ms, char *err, size_t errlen);

/* The next byte received (0 to 255), or a negative emb_conn_status. */
int emb_conn_byte(struct emb_conn *c);
/* Gives back the byte emb_conn_byte() last returned, so the next read returns it again
 * (one byte only: the buffer still holds it). */
void emb_conn_unread_byte(struct emb_conn *c);
/* The next line, without its "\n" or "\r\n", NUL-terminated in the buffer (good until the
 * next read); NULL with *status set when none came whole, or it would pass `max` bytes. */
char *emb_conn_line(struct emb_conn *c, size_t max, enum emb_conn_status *status);

/* Closes the descriptor and frees the buffer; the connection is then not open. */
void emb_conn_close(struct emb_conn *c);

#endif /* EMB_HOST_CONN_H */
