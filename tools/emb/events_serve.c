/* `emb events serve`: the sink daemon. Two sockets: the intake, an AF_UNIX datagram socket
 * whose other end is the capability emitters inherit, and the query socket, an AF_UNIX
 * SOCK_SEQPACKET socket at a path, answering one reply per query. The logic is
 * tools/lib/events_sink.c; this file moves bytes and never trusts them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "events_client.h"
#include "events_cmd.h"
#include "events_sink.h"

static const char *const CMD = "emb events serve";

#define SERVE_MAX_CLIENTS 32
#define SERVE_BATCH 64         /* datagrams per recvmmsg */
#define SERVE_INTAKE_ROUNDS 16 /* batches taken before the query socket gets a turn */
#define SERVE_INTAKE_SNDBUF (1 << 20)

static volatile sig_atomic_t serve_stop;

static void on_stop(int sig)
{
    (void)sig;
    serve_stop = 1;
}

static void serve_help(FILE *out)
{
    fprintf(out,
            "Usage: emb events serve [options] [-- COMMAND [ARG...]]\n"
            "\n"
            "Runs the events sink: keeps a ring of IPC events, the latest value of each metric\n"
            "and a window of log lines, and answers `emb events status|dump|logs|metrics`.\n"
            "Only holders of the intake descriptor can emit. Either a spawner passes it with\n"
            "--intake-fd, or the sink runs COMMAND with it (EMB_EVENTS_FD names it): COMMAND\n"
            "then decides which of its children are granted tracing. Runs until SIGTERM or\n"
            "SIGINT, and keeps serving after COMMAND exits.\n"
            "\n"
            "Options:\n"
            "  -s, --socket PATH     query socket (default: $EMB_EVENTS_SOCKET, else\n"
            "                        $XDG_RUNTIME_DIR/emb-events.sock, else /tmp/emb-UID/events.sock);\n"
            "                        its directory must be yours (or root's) and writable by\n"
            "                        its owner alone, and only your own uid is answered\n"
            "      --intake-fd FD    the inherited datagram socket events arrive on\n"
            "  -c, --capacity N      events the ring holds (default 4096)\n"
            "      --log-lines N     log lines the window holds (default 1024)\n"
            "      --metrics N       metric names the table holds (default 256, at most 1638)\n"
            "  -h, --help            show this help\n"
            "\n"
            "Exit status: 0 after a signal, 2 on bad usage or when the sockets cannot be set up.\n");
}

static bool parse_u32(const char *s, uint32_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > 0xFFFFFFFFul)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool is_dgram_unix(int fd)
{
    int type = 0, domain = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM)
        return false;
    len = sizeof domain;
    return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX;
}

/* Binds the query socket at `path`, owner-only. A live sink there is an error; a stale
 * socket file left by one that died is replaced. */
static int bind_query_socket(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        emb_cli_error(CMD, "%s: socket path longer than %zu bytes", path, sizeof sa.sun_path - 1);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    char err[512];
    if (emb_events_check_socket_dir(path, true, err, sizeof err) != 0) {
        emb_cli_error(CMD, "%s", err);
        return -1;
    }
    int probe = emb_events_connect(path, err, sizeof err);
    if (probe >= 0) {
        close(probe);
        emb_cli_error(CMD, "%s: a sink already serves there", path);
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            emb_cli_error(CMD, "%s: exists and is not a socket", path);
            return -1;
        }
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        emb_cli_error(CMD, "socket: %s", strerror(errno));
        return -1;
    }
    mode_t old = umask(0077);
    int r = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (r != 0 || listen(fd, 16) != 0) {
        emb_cli_error(CMD, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Creates the intake pair and starts COMMAND with the emitting end. Returns the sink's end. */
static int spawn_granted(char **command, pid_t *pid)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0) {
        emb_cli_error(CMD, "socketpair: %s", strerror(errno));
        return -1;
    }
    int buf = SERVE_INTAKE_SNDBUF; /* a burst queues instead of being refused */
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    /* Below the kernel's ceiling (net.core.wmem_max), so an emitter that exits while the
     * queue is full can grow it by one report of its losses (svc_trace_posix.c). */
    int got = 0;
    socklen_t glen = sizeof got;
    if (getsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &got, &glen) == 0 && got / 2 > 65536) {
        buf = got / 2 - 16384;
        setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    }
    *pid = fork();
    if (*pid < 0) {
        emb_cli_error(CMD, "fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (*pid == 0) {
        int fd = dup(sv[1]); /* without FD_CLOEXEC: this one is inherited */
        char v[16];
        snprintf(v, sizeof v, "%d", fd);
        setenv(EMB_SVC_ENV_FD, v, 1);
        execvp(command[0], command);
        fprintf(stderr, "%s: %s: %s\n", CMD, command[0], strerror(errno));
        _exit(127);
    }
    close(sv[1]);
    return sv[0];
}

static uint32_t now_s(const struct timespec *start)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint32_t)(t.tv_sec - start->tv_sec - (t.tv_nsec < start->tv_nsec ? 1 : 0));
}

/* Takes what waits on the intake, at most SERVE_INTAKE_ROUNDS batches. */
static void drain_intake(int fd, struct emb_events_sink *s, const struct timespec *start)
{
    static uint8_t bufs[SERVE_BATCH][EMB_SVC_MSG_MAX + 1];
    struct iovec iov[SERVE_BATCH];
    struct mmsghdr mm[SERVE_BATCH];
    for (int round = 0; round < SERVE_INTAKE_ROUNDS; round++) {
        for (int i = 0; i < SERVE_BATCH; i++) {
            iov[i].iov_base = bufs[i];
            iov[i].iov_len = sizeof bufs[i];
            memset(&mm[i], 0, sizeof mm[i]);
            mm[i].msg_hdr.msg_iov = &iov[i];
            mm[i].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(fd, mm, SERVE_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0)
            return;
        uint32_t now = now_s(start);
        for (int i = 0; i < n; i++) {
            if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
                emb_events_sink_count_malformed(s); /* longer than any message */
            else
                emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, bufs[i], mm[i].msg_len, now,
                                       NULL);
        }
        if (n < SERVE_BATCH)
            return;
    }
}

/* Answers one query from a client; false when the client is gone or misbehaves. */
static bool serve_client(int fd, struct emb_events_sink *s, const struct timespec *start,
                         uint8_t *reply)
{
    uint8_t msg[EMB_SVC_MSG_MAX + 1];
    struct iovec iov = {.iov_base = msg, .iov_len = sizeof msg};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    if (n == 0)
        return false;
    long r;
    if (mh.msg_flags & MSG_TRUNC) {
        emb_events_sink_count_malformed(s);
        r = 0;
    } else {
        r = emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, msg, (size_t)n, now_s(start), reply);
    }
    /* A client that does not read its replies is dropped, never waited for. */
    return send(fd, reply, r > 0 ? (size_t)r : 0, MSG_DONTWAIT | MSG_NOSIGNAL) == (r > 0 ? r : 0);
}

static void reap(pid_t *child)
{
    int status;
    if (*child > 0 && waitpid(*child, &status, WNOHANG) == *child) {
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
            emb_cli_error(CMD, "command exited with status %d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            emb_cli_error(CMD, "command killed by signal %d", WTERMSIG(status));
        *child = 0;
    }
}

static int serve_loop(int intake, int listener, struct emb_events_sink *s, pid_t child)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    static uint8_t reply[EMB_EVENTS_REPLY_MAX];
    int clients[SERVE_MAX_CLIENTS];
    int nclients = 0;
    while (!serve_stop) {
        struct pollfd p[2 + SERVE_MAX_CLIENTS];
        p[0] = (struct pollfd){.fd = intake, .events = POLLIN};
        p[1] = (struct pollfd){.fd = listener, .events = POLLIN};
        for (int i = 0; i < nclients; i++)
            p[2 + i] = (struct pollfd){.fd = clients[i], .events = POLLIN};
        int r = poll(p, (nfds_t)(2 + nclients), child > 0 ? 200 : -1);
        reap(&child);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            emb_cli_error(CMD, "poll: %s", strerror(errno));
            return EMB_EXIT_BAD;
        }
        if (p[0].revents & POLLIN)
            drain_intake(intake, s, &start);
        for (int i = 0; i < nclients; i++) {
            if (!p[2 + i].revents)
                continue;
            if (!(p[2 + i].revents & POLLIN) || !serve_client(clients[i], s, &start, reply)) {
                close(clients[i]);
                clients[i] = -1;
            }
        }
        int kept = 0;
        for (int i = 0; i < nclients; i++)
            if (clients[i] >= 0)
                clients[kept++] = clients[i];
        nclients = kept;
        if (p[1].revents & POLLIN) {
            int c = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (c >= 0 && nclients == SERVE_MAX_CLIENTS) {
                /* Full: the longest-connected client makes room, so connections left idle
                 * cannot lock every reader out. */
                close(clients[0]);
                memmove(clients, clients + 1, (SERVE_MAX_CLIENTS - 1) * sizeof clients[0]);
                nclients--;
            }
            char err[512];
            if (c >= 0 && emb_events_check_peer(c, "the query socket", "client", err,
                                                sizeof err) != 0) {
                emb_cli_error(CMD, "%s", err); /* another user: never answered */
                close(c);
                c = -1;
            }
            if (c >= 0)
                clients[nclients++] = c;
        }
    }
    for (int i = 0; i < nclients; i++)
        close(clients[i]);
    return EMB_EXIT_OK;
}

int emb_events_serve_main(int argc, char **argv)
{
    enum { OPT_INTAKE = 256, OPT_LOG_LINES, OPT_METRICS };
    static const struct option options[] = {
        {"socket", required_argument, NULL, 's'},
        {"intake-fd", required_argument, NULL, OPT_INTAKE},
        {"capacity", required_argument, NULL, 'c'},
        {"log-lines", required_argument, NULL, OPT_LOG_LINES},
        {"metrics", required_argument, NULL, OPT_METRICS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct emb_events_sink_config cfg;
    emb_events_sink_config_default(&cfg);
    char defpath[256];
    const char *path = NULL;
    int intake = -1;
    uint32_t v;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+s:c:h", options, NULL)) != -1) {
        switch (c) {
        case 's':
            path = optarg;
            break;
        case OPT_INTAKE:
            if (!parse_u32(optarg, &v) || v > 1000000 || !is_dgram_unix((int)v)) {
                emb_cli_error(CMD, "--intake-fd %s: not an inherited AF_UNIX datagram socket",
                              optarg);
                return EMB_EXIT_BAD;
            }
            intake = (int)v;
            break;
        case 'c':
        case OPT_LOG_LINES:
        case OPT_METRICS:
            if (!parse_u32(optarg, &v) || v == 0) {
                emb_cli_error(CMD, "%s: expected a positive number", optarg);
                return EMB_EXIT_BAD;
            }
            *(c == 'c' ? &cfg.capacity : c == OPT_LOG_LINES ? &cfg.log_lines : &cfg.metrics) = v;
            break;
        case 'h':
            serve_help(stdout);
            return EMB_EXIT_OK;
        default:
            emb_cli_error(CMD, "unknown option '%s'", argv[optind - 1]);
            serve_help(stderr);
            return EMB_EXIT_BAD;
        }
    }
    char **command = optind < argc ? &argv[optind] : NULL;
    if ((intake >= 0) == (command != NULL)) {
        emb_cli_error(CMD, intake >= 0 ? "give --intake-fd or a COMMAND, not both"
                                       : "nothing could emit: give --intake-fd FD or -- COMMAND");
        return EMB_EXIT_BAD;
    }
    struct emb_events_sink *sink = emb_events_sink_new(&cfg);
    if (sink == NULL) {
        emb_cli_error(CMD, "capacity %u, log lines %u, metrics %u: out of range or no memory",
                      cfg.capacity, cfg.log_lines, cfg.metrics);
        return EMB_EXIT_BAD;
    }
    if (path == NULL)
        path = emb_events_default_socket(defpath, sizeof defpath);
    int listener = bind_query_socket(path);
    if (listener < 0) {
        emb_events_sink_free(sink);
        return EMB_EXIT_BAD;
    }
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    pid_t child = 0;
    if (command) {
        intake = spawn_granted(command, &child);
        if (intake < 0) {
            close(listener);
            unlink(path);
            emb_events_sink_free(sink);
            return EMB_EXIT_BAD;
        }
    }
    fcntl(intake, F_SETFD, FD_CLOEXEC);
    int status = serve_loop(intake, listener, sink, child);
    close(listener);
    unlink(path);
    struct emb_events_sink_stats st;
    emb_events_sink_stats(sink, &st);
    fprintf(stderr, "%s: stopped: %llu accepted, %llu dropped, %llu malformed\n", CMD,
            (unsigned long long)st.accepted, (unsigned long long)st.dropped,
            (unsigned long long)st.malformed);
    emb_events_sink_free(sink);
    return status;
}
