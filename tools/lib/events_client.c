#define _GNU_SOURCE
#include "events_client.h"

#include "events_sink.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

const char *emb_events_default_socket(char *buf, size_t cap)
{
    const char *env = getenv("EMB_EVENTS_SOCKET");
    const char *run = getenv("XDG_RUNTIME_DIR");
    if (env && *env)
        snprintf(buf, cap, "%s", env);
    else if (run && *run)
        snprintf(buf, cap, "%s/emb-events.sock", run);
    else
        snprintf(buf, cap, "/tmp/emb-events-%u.sock", (unsigned)getuid());
    return buf;
}

int emb_events_connect(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "%s: socket path longer than %zu bytes", path,
                 sizeof sa.sun_path - 1);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "%s: no sink answers there (%s)", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

long emb_events_query(int fd, const uint8_t *q, size_t qlen, uint8_t *reply, int timeout_ms,
                      char *err, size_t errlen)
{
    if (send(fd, q, qlen, MSG_NOSIGNAL) != (ssize_t)qlen) {
        snprintf(err, errlen, "sending the query: %s", strerror(errno));
        return -1;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r == 0) {
        snprintf(err, errlen, "no reply within %d ms", timeout_ms);
        return -1;
    }
    struct iovec iov = {.iov_base = reply, .iov_len = EMB_EVENTS_REPLY_MAX};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        snprintf(err, errlen, "receiving the reply: %s", strerror(errno));
        return -1;
    }
    if (n == 0 && (p.revents & (POLLHUP | POLLERR))) {
        snprintf(err, errlen, "the sink closed the connection");
        return -1;
    }
    if (mh.msg_flags & MSG_TRUNC) {
        snprintf(err, errlen, "reply longer than %u bytes", EMB_EVENTS_REPLY_MAX);
        return -1;
    }
    return (long)n;
}
