/* The native port's TCP and Unix-socket record server (emb/native_link.h): a thread that
 * serves one client at a time the stream's frames from a byte ring the worker fills, after
 * the owner check (Unix socket) or the token line (TCP). */
#define _GNU_SOURCE
#include <emb/native_link.h>

#include <emb/frame.h>
#include <emb/native.h>
#include <emb/shell.h>
#include <emb/trace_format.h>

#include "native_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "transport_internal.h"

#define EMB__TOKEN_MIN 16u
#define EMB__TOKEN_MAX 128u
#define EMB__AUTH_PREFIX "EMB-TOKEN "
#define EMB__AUTH_LINE_MAX (sizeof EMB__AUTH_PREFIX - 1u + EMB__TOKEN_MAX + 1u)

static uint64_t emb__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- The TCP record server ---- */

struct emb_native_server {
    struct emb_native_server_config config;
    struct emb_native_sink sink;
    int listen_fd, client_fd;
    int wake[2];               /* the worker wakes the server thread when it queues */
    pthread_t thread;
    bool thread_running;
    volatile int stop;
    pthread_mutex_t lock;      /* the queue, client_fd and stats */
    uint8_t *queue;            /* frames waiting for the client, a byte ring */
    size_t qcap, qhead, qlen;
    bool streaming;            /* the worker's stream has started */
    uint64_t last_progress_ms;
    uint8_t cmd[128];          /* a command frame from the client, being gathered */
    size_t cmdn;
    bool cmd_overlong;
    bool unix_socket;          /* AF_UNIX, owner only; else TCP with a token */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    bool path_bound;           /* the socket file at path is this server's, to remove */
    char token[EMB__TOKEN_MAX + 1];
    size_t token_len;
    bool client_ok;            /* the client passed the uid check or presented the token */
    uint8_t auth[EMB__AUTH_LINE_MAX]; /* a TCP client's first line, being gathered */
    size_t authn;
    struct emb_native_link_stats stats;
    uint8_t *crash_frame;      /* a crash record every client gets after its first header */
    size_t crash_frame_len;
    uint8_t frame[EMB__FRAME_MAX];
};

/* Appends one frame to the queue if it fits whole. Called with the lock held. */
static int emb__enqueue_frame(struct emb_native_server *s, uint8_t channel, const uint8_t *payload,
                              size_t len)
{
    size_t n = emb_frame_encode(s->frame, sizeof s->frame, channel, payload, len);
    if (n == 0u || s->qcap - s->qlen < n)
        return -1;
    size_t tail = (s->qhead + s->qlen) % s->qcap;
    size_t first = s->qcap - tail < n ? s->qcap - tail : n;
    memcpy(s->queue + tail, s->frame, first);
    memcpy(s->queue, s->frame + first, n - first);
    s->qlen += n;
    s->stats.frames++;
    return 0;
}

static void emb__wake(struct emb_native_server *s)
{
    uint8_t b = 1;
    (void)!emb__native_write_all(s->wake[1], &b, 1);
}

/* Queues the crash record's frame, if there is one; with the lock held. */
static void emb__queue_crash(struct emb_native_server *s)
{
    size_t n = s->crash_frame_len;
    if (s->crash_frame == NULL || s->qcap - s->qlen < n)
        return;
    size_t tail = (s->qhead + s->qlen) % s->qcap;
    size_t first = s->qcap - tail < n ? s->qcap - tail : n;
    memcpy(s->queue + tail, s->crash_frame, first);
    memcpy(s->queue, s->crash_frame + first, n - first);
    s->qlen += n;
    s->stats.frames++;
    s->stats.crash_frames++;
}

/* Queues a fresh header; with the lock held. */
static void emb__queue_header(struct emb_native_server *s)
{
    static uint8_t header[EMB__HEADER_MAX];
    size_t n = emb_native_stream_header(header, sizeof header);
    if (n > 0u && emb__enqueue_frame(s, EMB_FRAME_CH_TRACE, header, n) == 0)
        s->stats.headers++;
}

static int emb__server_start(void *arg, const uint8_t *header, size_t len)
{
    (void)header;
    (void)len;
    struct emb_native_server *s = arg;
    pthread_mutex_lock(&s->lock);
    s->streaming = true;
    if (s->client_fd >= 0 && s->client_ok)
        emb__queue_header(s);
    pthread_mutex_unlock(&s->lock);
    emb__wake(s);
    return 0;
}

static int emb__server_packet(void *arg, const uint8_t *packet, size_t len)
{
    struct emb_native_server *s = arg;
    pthread_mutex_lock(&s->lock);
    int rc = -1;
    bool was_empty = s->qlen == 0u;
    /* No client, or one too slow to keep up: the packet is dropped, never waited for. */
    if (s->client_fd >= 0 && s->client_ok &&
        emb__enqueue_frame(s, EMB_FRAME_CH_TRACE, packet, len) == 0)
        rc = 0;
    else
        s->stats.dropped++;
    pthread_mutex_unlock(&s->lock);
    /* The server thread sends until the queue is empty: it needs waking only when the
     * queue had nothing (one system call per burst, not per packet). */
    if (rc == 0 && was_empty)
        emb__wake(s);
    return rc;
}

static void emb__server_stop_stream(void *arg)
{
    struct emb_native_server *s = arg;
    pthread_mutex_lock(&s->lock);
    s->streaming = false;
    pthread_mutex_unlock(&s->lock);
    emb__wake(s);
}

static void emb__drop_client(struct emb_native_server *s)
{
    if (s->client_fd >= 0)
        close(s->client_fd);
    s->client_fd = -1;
    s->qhead = s->qlen = 0;
    s->cmdn = 0;
    s->cmd_overlong = false;
    s->client_ok = false;
    s->authn = 0;
}

/* Whether two secrets are equal, in a time that does not depend on where they differ. */
static bool emb__same_secret(const uint8_t *a, size_t an, const char *b, size_t bn)
{
    uint8_t diff = (uint8_t)(an != bn);
    for (size_t i = 0; i < an && i < bn; i++)
        diff |= (uint8_t)(a[i] ^ (uint8_t)b[i]);
    return diff == 0;
}

/* A TCP client's first bytes: the line `EMB-TOKEN <token>\n`, before anything is served or
 * obeyed. Returns 1 when the line was whole and right (*used: its bytes), 0 when more is
 * needed, -1 when it is wrong, too long, or not that line at all. */
static int emb__auth_input(struct emb_native_server *s, const uint8_t *p, size_t n, size_t *used)
{
    static const char prefix[] = EMB__AUTH_PREFIX;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            *used = i + 1;
            size_t pl = sizeof prefix - 1u;
            return s->authn > pl && memcmp(s->auth, prefix, pl) == 0 &&
                           emb__same_secret(s->auth + pl, s->authn - pl, s->token, s->token_len)
                       ? 1
                       : -1;
        }
        if (s->authn == sizeof s->auth)
            return -1;
        s->auth[s->authn++] = p[i];
        /* Not the line at all (a client of the old protocol sending frames): refuse now. */
        if (s->authn <= sizeof prefix - 1u && s->auth[s->authn - 1] != (uint8_t)prefix[s->authn - 1])
            return -1;
    }
    return 0;
}

/* A new connection on the AF_UNIX socket: served only when it runs as this user. */
static bool emb__peer_is_owner(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

/* Bytes from the client: shell command frames on channel 3, answered in the stream. */
static void emb__client_input(struct emb_native_server *s, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != EMB_FRAME_DELIMITER) {
            if (s->cmdn < sizeof s->cmd)
                s->cmd[s->cmdn++] = p[i];
            else
                s->cmd_overlong = true;
            continue;
        }
        uint8_t out[sizeof s->cmd], channel;
        size_t len;
        if (s->cmdn > 0u && !s->cmd_overlong &&
            emb_frame_decode_one(s->cmd, s->cmdn, out, &channel, &len) == EMB_FRAME_OK &&
            channel == EMB_FRAME_CH_SHELL) {
            uint8_t reply[EMB_SHELL_REPLY_MAX];
            size_t rn = emb_shell_handle(out + 1, len, reply, sizeof reply);
            if (rn > 0u)
                emb__enqueue_frame(s, EMB_FRAME_CH_SHELL, reply, rn);
            s->stats.commands++;
        } else if (s->cmdn > 0u || s->cmd_overlong) {
            s->stats.garbage += s->cmdn;
        }
        s->cmdn = 0;
        s->cmd_overlong = false;
    }
}

void emb__native_server_client_input(struct emb_native_server *s, const uint8_t *p, size_t n)
{
    pthread_mutex_lock(&s->lock);
    emb__client_input(s, p, n);
    pthread_mutex_unlock(&s->lock);
}

/* What a client that may be served gets first: the stream's header (when streaming) and
 * the crash record; the next header is due a period later. */
static void emb__welcome_client(struct emb_native_server *s, uint64_t now, uint64_t *next_header)
{
    if (s->streaming)
        emb__queue_header(s);
    emb__queue_crash(s);
    *next_header = now + s->config.header_period_ms;
}

/* A connection waits on the listening socket: taken, unless another user's. */
static void emb__accept_client(struct emb_native_server *s, uint64_t now, uint64_t *next_header)
{
    int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0 && s->unix_socket && !emb__peer_is_owner(fd)) {
        close(fd); /* another user: nothing served, nothing obeyed */
        s->stats.refused++;
        fd = -1;
    }
    if (fd < 0)
        return;
    int one = 1;
    if (!s->unix_socket)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    s->client_fd = fd;
    s->stats.clients++;
    s->last_progress_ms = now;
    s->client_ok = s->unix_socket; /* a TCP client presents the token first */
    if (s->client_ok)
        emb__welcome_client(s, now, next_header);
    else
        *next_header = now + s->config.header_period_ms;
}

/* The client's bytes: its token line until it is accepted, then its commands. Returns
 * false when the client is gone (closed, failed, or refused). */
static bool emb__read_client(struct emb_native_server *s, int client, uint64_t now, uint64_t *next_header)
{
    uint8_t in[4096];
    ssize_t r = read(client, in, sizeof in);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        emb__drop_client(s);
        return false;
    }
    size_t used = 0;
    if (r > 0 && !s->client_ok) {
        int a = emb__auth_input(s, in, (size_t)r, &used);
        if (a < 0) {
            s->stats.refused++;
            emb__drop_client(s);
            return false;
        }
        if (a > 0) {
            s->client_ok = true;
            s->last_progress_ms = now;
            emb__welcome_client(s, now, next_header);
        } else {
            used = (size_t)r;
        }
    }
    if (r > 0 && s->client_ok && used < (size_t)r)
        emb__client_input(s, in + used, (size_t)r - used);
    return true;
}

/* Sends what is queued, as much as the socket takes now. Sent without the lock: the worker
 * only appends past qhead + qlen, and only this thread moves qhead or drops the client, so
 * the bytes stay put; the worker never waits for a system call. */
static void emb__send_queued(struct emb_native_server *s, uint64_t now)
{
    while (s->client_fd >= 0 && s->qlen > 0u) {
        size_t chunk = s->qcap - s->qhead < s->qlen ? s->qcap - s->qhead : s->qlen;
        const uint8_t *from = s->queue + s->qhead;
        int fd = s->client_fd;
        pthread_mutex_unlock(&s->lock);
        ssize_t w = send(fd, from, chunk, MSG_NOSIGNAL | MSG_DONTWAIT);
        int e = errno;
        pthread_mutex_lock(&s->lock);
        if (w <= 0) {
            if (w < 0 && e != EAGAIN && e != EINTR)
                emb__drop_client(s);
            break;
        }
        s->qhead = (s->qhead + (size_t)w) % s->qcap;
        s->qlen -= (size_t)w;
        s->stats.bytes += (uint64_t)w;
        s->last_progress_ms = now;
    }
}

/* One round with a client connected (the lock held): its input, the deadlines of its
 * token and of its reading, the queue sent, the periodic header. */
static void emb__serve_client(struct emb_native_server *s, int client, short revents, uint64_t now,
                              uint64_t *next_header)
{
    if ((revents & (POLLIN | POLLHUP | POLLERR)) && !emb__read_client(s, client, now, next_header))
        return;
    if (s->client_fd >= 0 && !s->client_ok && now - s->last_progress_ms > s->config.stall_ms) {
        s->stats.refused++; /* no token in time */
        emb__drop_client(s);
    }
    emb__send_queued(s, now);
    if (s->client_fd >= 0 && s->qlen > 0u && now - s->last_progress_ms > s->config.stall_ms) {
        s->stats.stalls++;
        emb__drop_client(s);
    }
    if (s->client_fd >= 0 && s->streaming && now >= *next_header) {
        emb__queue_header(s);
        *next_header = now + s->config.header_period_ms;
    }
}

static void *emb__server_thread(void *arg)
{
    struct emb_native_server *s = arg;
    pthread_setname_np(pthread_self(), "emb-server");
    uint64_t next_header = 0;
    while (!s->stop) {
        pthread_mutex_lock(&s->lock);
        int client = s->client_fd;
        bool want_out = s->qlen > 0u;
        pthread_mutex_unlock(&s->lock);
        struct pollfd pfd[3] = {{s->wake[0], POLLIN, 0},
                                {client >= 0 ? client : s->listen_fd,
                                 (short)(client >= 0 ? (POLLIN | (want_out ? POLLOUT : 0)) : POLLIN), 0},
                                {-1, 0, 0}};
        int rc = poll(pfd, 2, 100);
        if (rc < 0 && errno != EINTR)
            break;
        if (pfd[0].revents & POLLIN) {
            uint8_t junk[64];
            (void)!read(s->wake[0], junk, sizeof junk);
        }
        uint64_t now = emb__now_ms();
        pthread_mutex_lock(&s->lock);
        if (client < 0 && (pfd[1].revents & POLLIN))
            emb__accept_client(s, now, &next_header);
        else if (client >= 0)
            emb__serve_client(s, client, pfd[1].revents, now, &next_header);
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

/* TCP on host:port, for clients holding the token (from the config or EMB_SERVER_TOKEN). */
static int emb__listen_tcp(struct emb_native_server *s)
{
    const char *token = s->config.token ? s->config.token : getenv("EMB_SERVER_TOKEN");
    size_t tl = token ? strlen(token) : 0u;
    if (tl < EMB__TOKEN_MIN || tl > EMB__TOKEN_MAX || memchr(token, '\n', tl) != NULL) {
        errno = EACCES; /* no listener anyone on the machine could use */
        return -1;
    }
    memcpy(s->token, token, tl);
    s->token_len = tl;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(s->config.port)};
    int one = 1;
    if (inet_pton(AF_INET, s->config.host ? s->config.host : "127.0.0.1", &a.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    if ((s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
        setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(s->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->listen_fd, 1) != 0)
        return -1;
    return 0;
}

/* The socket's directory must be this user's with mode 0700: whoever else could write it
 * could put a socket of their own at the path. The default one is created so. */
static int emb__private_dir(const char *path, bool create)
{
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    const char *slash = strrchr(path, '/');
    size_t dl = slash == NULL ? 0u : (size_t)(slash - path);
    if (dl == 0u || dl >= sizeof dir) {
        errno = EINVAL;
        return -1;
    }
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (lstat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

static int emb__listen_unix(struct emb_native_server *s)
{
    bool by_default = s->config.unix_path == NULL;
    if (by_default) {
        const char *run = getenv("XDG_RUNTIME_DIR");
        int n = run && *run ? snprintf(s->path, sizeof s->path, "%s/emb-record-%ld.sock", run,
                                       (long)getpid())
                            : snprintf(s->path, sizeof s->path, "/tmp/emb-%u/record-%ld.sock",
                                       (unsigned)geteuid(), (long)getpid());
        if (n < 0 || (size_t)n >= sizeof s->path) {
            errno = ENAMETOOLONG;
            return -1;
        }
    } else if (strlen(s->config.unix_path) < sizeof s->path) {
        strcpy(s->path, s->config.unix_path);
    } else {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (emb__private_dir(s->path, by_default) != 0)
        return -1;
    struct stat st;
    if (lstat(s->path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(s->path); /* left by a run that died; the directory is ours alone */
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, s->path, strlen(s->path) + 1);
    if ((s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
        return -1;
    mode_t old = umask(0077);
    int rc = bind(s->listen_fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc != 0)
        return -1;
    s->path_bound = true;
    return listen(s->listen_fd, 1);
}

struct emb_native_server *emb_native_server_start(const struct emb_native_server_config *config)
{
    struct emb_native_server *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    if (config != NULL)
        s->config = *config;
    if (s->config.header_period_ms == 0u)
        s->config.header_period_ms = 1000u;
    if (s->config.queue_bytes == 0u)
        s->config.queue_bytes = 4u << 20;
    if (s->config.stall_ms == 0u)
        s->config.stall_ms = 5000u;
    s->client_fd = -1;
    s->listen_fd = -1;
    s->wake[0] = s->wake[1] = -1;
    s->qcap = s->config.queue_bytes;
    s->queue = malloc(s->qcap);
    pthread_mutex_init(&s->lock, NULL);
    s->unix_socket = !s->config.tcp;
    errno = 0;
    if (s->queue == NULL || pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) != 0 ||
        (s->unix_socket ? emb__listen_unix(s) : emb__listen_tcp(s)) != 0) {
        int e = errno ? errno : EINVAL;
        emb_native_server_stop(s);
        errno = e;
        return NULL;
    }
    s->sink = (struct emb_native_sink){emb__server_start, emb__server_packet,
                                       emb__server_stop_stream, s};
    /* Born with every signal blocked, like the streaming worker: never a timer's target. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    int rc = pthread_create(&s->thread, NULL, emb__server_thread, s);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0) {
        emb_native_server_stop(s);
        errno = rc;
        return NULL;
    }
    s->thread_running = true;
    return s;
}

const struct emb_native_sink *emb_native_server_sink(struct emb_native_server *s)
{
    return &s->sink;
}

const char *emb_native_server_path(const struct emb_native_server *s)
{
    return s->unix_socket ? s->path : "";
}

uint16_t emb_native_server_port(const struct emb_native_server *s)
{
    if (s->unix_socket)
        return 0;
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    if (getsockname(s->listen_fd, (struct sockaddr *)&a, &l) != 0)
        return 0;
    return ntohs(a.sin_port);
}

emb_status emb_native_server_send_crash(struct emb_native_server *s, const uint8_t *record,
                                        size_t len)
{
    size_t n;
    uint8_t *frame;
    emb_status st = emb__native_crash_frame(record, len, &frame, &n);
    if (st != EMB_OK)
        return st;
    pthread_mutex_lock(&s->lock);
    free(s->crash_frame);
    s->crash_frame = frame;
    s->crash_frame_len = n;
    if (s->client_fd >= 0 && s->client_ok) /* never before a TCP client's token */
        emb__queue_crash(s);
    pthread_mutex_unlock(&s->lock);
    emb__wake(s);
    return EMB_OK;
}

void emb_native_server_stats(struct emb_native_server *s, struct emb_native_link_stats *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->stats;
    pthread_mutex_unlock(&s->lock);
}

void emb_native_server_stop(struct emb_native_server *s)
{
    if (s == NULL)
        return;
    if (s->thread_running) {
        /* What is queued goes out first, within a moment. */
        for (int i = 0; i < 100; i++) {
            pthread_mutex_lock(&s->lock);
            bool empty = s->qlen == 0u || s->client_fd < 0;
            pthread_mutex_unlock(&s->lock);
            if (empty)
                break;
            struct timespec t = {0, 10 * 1000 * 1000};
            nanosleep(&t, NULL);
        }
        s->stop = 1;
        emb__wake(s);
        pthread_join(s->thread, NULL);
    }
    if (s->client_fd >= 0)
        close(s->client_fd);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->path_bound)
        unlink(s->path);
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    pthread_mutex_destroy(&s->lock);
    free(s->crash_frame);
    free(s->queue);
    free(s);
}

