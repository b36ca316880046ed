/* Service IPC tracing on POSIX: the capability to emit is an AF_UNIX datagram socket the
 * service inherited from its spawner, named by number in EMB_EVENTS_FD. No variable, no
 * tracing; nothing here ever looks a sink up by name, so a process that was not granted the
 * descriptor has no way to emit. */
#define _GNU_SOURCE
#include <emb/svc_trace.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct emb_svc_trace emb_svc_self = EMB_SVC_TRACE_INIT;

/* Whether `fd` is a socket the emitter can use, and the identity of what it names. */
static bool emb__svc_fd_usable(int fd, uint32_t *id)
{
    int type = 0, domain = 0;
    socklen_t len = sizeof type;
    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM)
        return false;
    len = sizeof domain;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
        return false;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    *id = (uint32_t)st.st_ino ^ (uint32_t)((uint64_t)st.st_ino >> 32);
    /* The grant is for this service, not for whatever it spawns in turn. */
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    return true;
}

/* The descriptor named in the environment: -1 when none is named (or the text is not a
 * plain decimal number, which is no grant either). */
static int emb__svc_env_fd(void)
{
    const char *v = getenv(EMB_SVC_ENV_FD);
    if (v == NULL || *v == '\0')
        return -1;
    long fd = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9' || fd > 1000000)
            return -1;
        fd = fd * 10 + (*p - '0');
    }
    return (int)fd;
}

/* The grant taken at process start, before main(): -1 when none was usable then. */
static int emb__svc_taken_fd = -1;

/* At exit, the refused sends the sink has not heard of. When the queue is full even for
 * the report, the socket's send buffer grows by one report's worth (the kernel allows it
 * up to net.core.wmem_max), so a service that dies while the sink is stopped still has
 * its losses counted once the sink reads again. */
static void emb__svc_report_at_exit(void)
{
    struct emb_svc_trace *t = &emb_svc_self;
    if (emb_svc_trace_flush(t))
        return;
    int fd = (int)emb_svc_trace_sink_slot(t);
    int size = 0;
    socklen_t len = sizeof size;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len) != 0)
        return;
    int grown = size / 2 + 2048; /* the kernel doubles what it is given */
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &grown, sizeof grown) == 0)
        (void)emb_svc_trace_flush(t);
}

/* Takes the grant before anything runs, so that a child the service starts before its
 * first traced call inherits neither the descriptor (close-on-exec) nor its name. A
 * grant not usable yet (a supervisor installs it later) is left for the lazy retry. */
__attribute__((constructor)) static void emb__svc_take_grant(void)
{
    int fd = emb__svc_env_fd();
    uint32_t id;
    if (fd >= 0 && emb__svc_fd_usable(fd, &id)) {
        emb__svc_taken_fd = fd;
        unsetenv(EMB_SVC_ENV_FD);
    }
    (void)atexit(emb__svc_report_at_exit);
}

enum emb_svc_resolve emb_port_svc_resolve(uint32_t *slot, uint32_t *sink_id)
{
    if (emb__svc_taken_fd >= 0 && emb__svc_fd_usable(emb__svc_taken_fd, sink_id)) {
        *slot = (uint32_t)emb__svc_taken_fd;
        return EMB_SVC_RESOLVE_OK;
    }
    int fd = emb__svc_env_fd();
    if (fd < 0)
        return EMB_SVC_RESOLVE_NONE;
    if (!emb__svc_fd_usable(fd, sink_id))
        return EMB_SVC_RESOLVE_MISS; /* named but not there (yet): try again later */
    /* Latched: the name is not passed on to children, whose descriptor table differs. */
    unsetenv(EMB_SVC_ENV_FD);
    *slot = (uint32_t)fd;
    return EMB_SVC_RESOLVE_OK;
}

bool emb_port_svc_send(uint32_t slot, const void *msg, size_t len)
{
    /* MSG_DONTWAIT: a full sink costs one refused send, never a wait. MSG_NOSIGNAL: a dead
     * one costs one error, never a SIGPIPE. */
    ssize_t n = send((int)slot, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
        n = send((int)slot, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    return n == (ssize_t)len;
}

emb_status emb_svc_trace_grant_fd(struct emb_svc_trace *t, int fd)
{
    uint32_t id = 0;
    if (!emb__svc_fd_usable(fd, &id))
        return EMB_E_INVALID;
    emb_svc_trace_set_sink(t, (uint32_t)fd, id);
    return EMB_OK;
}
