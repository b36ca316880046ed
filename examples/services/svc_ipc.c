#define _GNU_SOURCE
#include "svc_ipc.h"

#include <emb/wire.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Bytes a connection may have queued towards a peer that is not reading: a handful of
 * requests. This is the peer's queue as a caller sees it; when it is full a send is refused
 * (QUEUE_FULL) rather than waited on. */
#define SVC_QUEUE_BYTES 2048

static char svc_name[16] = "?";
static volatile sig_atomic_t svc_stopping;

static void svc_on_stop(int sig)
{
    (void)sig;
    svc_stopping = 1;
}

uint64_t svc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void svc_path(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s.sock", dir, name);
}

void svc_init(const char *name)
{
    snprintf(svc_name, sizeof svc_name, "%s", name);
    emb_svc_trace_set_caller(&emb_svc_self, name);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = svc_on_stop}; /* no SA_RESTART: poll returns */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

void svc_report_counters(void)
{
    const struct emb_svc_trace *t = &emb_svc_self;
    fprintf(stderr, "%s: tracing %s: %u sent, %u refused by a full or absent sink\n", svc_name,
            t->state == EMB_SVC_STATE_TRACING ? "on" : "off", t->sent, t->send_failures);
}

void svc_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    fprintf(stderr, "%s: %s\n", svc_name, line);
    emb_svc_trace_log(&emb_svc_self, line, (size_t)n);
}

void svc_trace_housekeeping(void)
{
    uint32_t misses = emb_svc_trace_take_late_resolve(&emb_svc_self);
    if (misses)
        svc_log("events sink found after %u failed lookups", misses);
    if (emb_svc_trace_take_sink_changed(&emb_svc_self))
        svc_log("events sink changed");
}

int svc_listen(const char *dir, const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    svc_path(sa.sun_path, sizeof sa.sun_path, dir, name);
    unlink(sa.sun_path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 8) != 0) {
        fprintf(stderr, "%s: %s: %s\n", name, sa.sun_path, strerror(errno));
        exit(2);
    }
    return fd;
}

void svc_peer_init(struct svc_peer *p, const char *dir, const char *name)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    svc_path(p->path, sizeof p->path, dir, name);
    p->fd = -1;
    p->next_id = 1;
}

static void svc_drop(struct svc_peer *p)
{
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
}

static enum emb_svc_kind svc_connect(struct svc_peer *p)
{
    if (p->fd >= 0)
        return EMB_SVC_KIND_REPLY;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", p->path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return EMB_SVC_KIND_PEER_LOST;
    int q = SVC_QUEUE_BYTES;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &q, sizeof q);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return EMB_SVC_KIND_PEER_LOST; /* nobody listens there: the peer is gone */
    }
    p->fd = fd;
    return EMB_SVC_KIND_REPLY;
}

/* Sends and waits; the outcome. */
static enum emb_svc_kind svc_exchange(struct svc_peer *p, const uint8_t *req, size_t len,
                                      uint32_t id, uint8_t *rep, size_t cap, size_t *rep_len,
                                      uint64_t deadline_ms, volatile sig_atomic_t *abandon)
{
    if (svc_connect(p) != EMB_SVC_KIND_REPLY)
        return EMB_SVC_KIND_PEER_LOST;
    if (send(p->fd, req, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return EMB_SVC_KIND_QUEUE_FULL; /* alive, but not taking more: do not reconnect */
        svc_drop(p);
        return EMB_SVC_KIND_PEER_LOST;
    }
    for (;;) {
        if (abandon && *abandon)
            return EMB_SVC_KIND_ABORTED;
        uint64_t now = svc_now_ms();
        if (now >= deadline_ms)
            return EMB_SVC_KIND_TIMEOUT;
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
        int r = poll(&pfd, 1, (int)(deadline_ms - now));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; /* the deadline check above decides */
        ssize_t n = recv(p->fd, rep, cap, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0) {
            svc_drop(p); /* the peer's endpoint died while we waited */
            return EMB_SVC_KIND_PEER_LOST;
        }
        if (n >= 5 && emb_get_le32(rep) == id) {
            *rep_len = (size_t)n;
            return EMB_SVC_KIND_REPLY;
        }
        /* A late reply to a call that already timed out or was abandoned: not ours. */
    }
}

enum emb_svc_kind svc_call(struct svc_peer *p, uint8_t *req, size_t len, size_t id_at,
                           uint8_t *rep, size_t cap, size_t *rep_len, uint64_t deadline_ms,
                           volatile sig_atomic_t *abandon)
{
    uint32_t id = p->next_id++;
    emb_put_le32(req + id_at, id);
    *rep_len = 0;
    /* Recorded before the request leaves, so it reaches the sink before anything the peer
     * records while serving it. */
    emb_svc_trace_call(&emb_svc_self, p->name, req, len, EMB_SVC_KIND_REQUEST);
    enum emb_svc_kind k = svc_exchange(p, req, len, id, rep, cap, rep_len, deadline_ms, abandon);
    emb_svc_trace_call(&emb_svc_self, p->name, req, len, k);
    svc_trace_housekeeping();
    return k;
}

void svc_reply(int conn, uint32_t id, uint8_t status, const void *data, size_t len)
{
    uint8_t msg[SVC_MSG_MAX];
    if (len > sizeof msg - 5)
        len = sizeof msg - 5;
    emb_put_le32(msg, id);
    msg[4] = status;
    if (len)
        memcpy(msg + 5, data, len);
    (void)send(conn, msg, 5 + len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void svc_serve(int listener, svc_handler handle)
{
    enum { MAX_CONNS = 16 };
    int conns[MAX_CONNS];
    int n = 0;
    while (!svc_stopping) {
        struct pollfd p[1 + MAX_CONNS];
        p[0] = (struct pollfd){.fd = listener, .events = POLLIN};
        for (int i = 0; i < n; i++)
            p[1 + i] = (struct pollfd){.fd = conns[i], .events = POLLIN};
        if (poll(p, (nfds_t)(1 + n), -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < n; i++) {
            if (!p[1 + i].revents)
                continue;
            uint8_t req[SVC_MSG_MAX];
            ssize_t len = recv(conns[i], req, sizeof req, MSG_DONTWAIT);
            if (len > 0) {
                handle(conns[i], req, (size_t)len);
            } else if (len == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(conns[i]);
                conns[i] = -1;
            }
        }
        int kept = 0;
        for (int i = 0; i < n; i++)
            if (conns[i] >= 0)
                conns[kept++] = conns[i];
        n = kept;
        if (p[0].revents & POLLIN) {
            int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0 && n < MAX_CONNS)
                conns[n++] = c;
            else if (c >= 0)
                close(c);
        }
    }
    for (int i = 0; i < n; i++)
        close(conns[i]);
}
