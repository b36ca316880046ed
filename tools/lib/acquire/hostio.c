/* Sockets and reads with deadlines for the host tool. */
#define _GNU_SOURCE
#include "hostio.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

uint64_t emb_hostio_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int emb_hostio_split(const char *spec, char *host, size_t hostlen, uint16_t *port, char *err,
                     size_t errlen)
{
    const char *colon = strrchr(spec, ':');
    if (colon == NULL) {
        snprintf(err, errlen, "'%s': expected HOST:PORT", spec);
        return -1;
    }
    const char *h = spec;
    size_t hl = (size_t)(colon - spec);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0) {
        h = "127.0.0.1";
        hl = strlen(h);
    }
    if (hl >= hostlen) {
        snprintf(err, errlen, "'%s': host name too long", spec);
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || p == 0 || p > 65535) {
        snprintf(err, errlen, "'%s': the port must be a number from 1 to 65535", spec);
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (uint16_t)p;
    return 0;
}

/* A non-blocking connect bounded by the deadline. */
static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -1;
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd pfd = {fd, POLLOUT, 0};
        rc = poll(&pfd, 1, timeout_ms);
        if (rc == 1) {
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
            rc = soerr == 0 ? 0 : -1;
            errno = soerr;
        } else {
            if (rc == 0)
                errno = ETIMEDOUT;
            rc = -1;
        }
    }
    if (rc != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    fcntl(fd, F_SETFL, flags);
    int one = 1;
    /* Small request/reply exchanges (the GDB protocol) wait ~40 ms per round without it. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int emb_hostio_connect(const char *spec, int timeout_ms, char *err, size_t errlen)
{
    char host[256];
    uint16_t port;
    if (emb_hostio_split(spec, host, sizeof host, &port, err, errlen) != 0)
        return -1;
    char service[8];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, service, &hints, &res);
    if (gai != 0) {
        snprintf(err, errlen, "%s: %s", spec, gai_strerror(gai));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = connect_one(ai, timeout_ms);
        if (fd < 0)
            e = errno;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %s: %s", spec, strerror(e));
    return fd;
}

ssize_t emb_hostio_read(int fd, void *buf, size_t n, int timeout_ms)
{
    if (timeout_ms >= 0) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int rc = poll(&pfd, 1, timeout_ms);
        if (rc == 0)
            return -2;
        if (rc < 0)
            return -1;
    }
    return read(fd, buf, n);
}

int emb_hostio_write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0u) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
