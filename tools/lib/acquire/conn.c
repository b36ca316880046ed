/* A connection read with a deadline through one buffer (conn.h). */
#define _GNU_SOURCE
#include "conn.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hostio.h"

/* Room a read asks for at least, and the first buffer's size. */
#define READ_ROOM 65536u
#define FIRST_CAP 131072u

void emb_conn_init(struct emb_conn *c, int fd, int timeout_ms)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->timeout_ms = timeout_ms;
}

static int open_unix(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        snprintf(err, errlen, "%s: socket path too long", path);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int emb_conn_open(struct emb_conn *c, const char *address, int timeout_ms, char *err, size_t errlen)
{
    bool tcp = strchr(address, '/') == NULL && strchr(address, ':') != NULL;
    int fd = tcp ? emb_hostio_connect(address, timeout_ms, err, errlen) : open_unix(address, err, errlen);
    emb_conn_init(c, fd, timeout_ms);
    return fd < 0 ? -1 : 0;
}

/* Reads what has arrived after what the buffer holds (taken bytes dropped first), waiting
 * up to the deadline; the buffer grows to at most `max` bytes. */
static enum emb_conn_status fill(struct emb_conn *c, size_t max)
{
    if (c->start > 0) {
        memmove(c->buf, c->buf + c->start, c->len - c->start);
        c->len -= c->start;
        c->start = 0;
    }
    if (c->len + READ_ROOM > c->cap) {
        if (c->cap >= max)
            return EMB_CONN_TOO_LONG;
        size_t cap = c->cap ? 2 * c->cap : FIRST_CAP;
        char *b = realloc(c->buf, cap + 1u); /* and room for a line's NUL */
        if (b == NULL)
            return EMB_CONN_NO_MEMORY;
        c->buf = b;
        c->cap = cap;
    }
    ssize_t n = emb_hostio_read(c->fd, c->buf + c->len, c->cap - c->len, c->timeout_ms);
    if (n == -2)
        return EMB_CONN_TIMEOUT;
    if (n == 0)
        return EMB_CONN_CLOSED;
    if (n < 0)
        return EMB_CONN_ERROR;
    c->len += (size_t)n;
    return EMB_CONN_OK;
}

int emb_conn_byte(struct emb_conn *c)
{
    if (c->start == c->len) {
        enum emb_conn_status st = fill(c, SIZE_MAX);
        if (st != EMB_CONN_OK)
            return st;
    }
    return (unsigned char)c->buf[c->start++];
}

void emb_conn_unread_byte(struct emb_conn *c)
{
    if (c->start > 0)
        c->start--;
}

char *emb_conn_line(struct emb_conn *c, size_t max, enum emb_conn_status *status)
{
    for (;;) {
        char *nl = c->buf ? memchr(c->buf + c->start, '\n', c->len - c->start) : NULL;
        if (nl != NULL) {
            char *line = c->buf + c->start;
            c->start = (size_t)(nl - c->buf) + 1u;
            *nl = '\0';
            if (nl > line && nl[-1] == '\r')
                nl[-1] = '\0';
            *status = EMB_CONN_OK;
            return line;
        }
        if ((*status = fill(c, max)) != EMB_CONN_OK)
            return NULL;
    }
}

void emb_conn_close(struct emb_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    emb_conn_init(c, -1, c->timeout_ms);
}
