/* `emb events serve`: the sink daemon. Two sockets: the intake, an AF_UNIX datagram socket
 * whose other end is the capability emitters inherit, and the query socket, an AF_UNIX
 * SOCK_SEQPACKET socket at a path, answering one reply per query. The logic is
 * tools/lib/events/events_sink.c; this file moves bytes and never trusts them. */
#define _GNU_SOURCE
#include "command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events_client.h"
#include "events_cmd.h"
#include "events_sink.h"
#include "parse_number.h"

static const char *const CMD = "emb events serve";

#define SERVE_MAX_CLIENTS 32
#define SERVE_BATCH 64         /* datagrams per recvmmsg */
#define SERVE_INTAKE_ROUNDS 16 /* batches taken before the query socket gets a turn */
#define SERVE_INTAKE_SNDBUF (1 << 20)
#define SERVE_MAX_INTAKES 64
#define SERVE_HELD_MAX (2 * SERVE_MAX_INTAKES * SERVE_BATCH)

/* One intake descriptor, and the service it was granted to ("" when it is shared and
 * emitters are named as they claim). */
struct intake {
    int fd;
    char name[EMB_SVC_NAME_LEN + 1];
};

/* A datagram taken from one of several intakes, waiting for its turn by the time the
 * kernel queued it (SO_TIMESTAMPNS), so the sink sees one order across intakes. */
struct held_msg {
    uint64_t ts_ns;
    uint64_t order; /* arrival order among equal stamps */
    int intake;
    uint16_t len;
    bool truncated;
    uint8_t bytes[EMB_SVC_MSG_MAX + 1];
};
static struct held_msg held[SERVE_HELD_MAX];
static size_t nheld;
static uint64_t held_order;

static volatile sig_atomic_t serve_stop;

static void on_stop(int sig)
{
    (void)sig;
    serve_stop = 1;
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

static void take_one(struct emb_events_sink *s, const struct intake *in, const uint8_t *msg,
                     size_t len, bool truncated, uint32_t now)
{
    if (truncated)
        emb_events_sink_count_malformed(s); /* longer than any message */
    else
        emb_events_sink_handle_bound(s, in->name[0] ? in->name : NULL, msg, len, now);
}

static uint64_t realtime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int held_cmp(const void *a, const void *b)
{
    const struct held_msg *x = a, *y = b;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Several intakes: a round reads each; a message is taken once no intake can still hold an
 * earlier one (every intake found empty after its stamp, or read past it), oldest first.
 * The rest wait for the next round. Returns whether messages still wait. */
static bool drain_intakes(const struct intake *in, int n, struct emb_events_sink *s,
                          const struct timespec *start)
{
    static uint8_t ctl[SERVE_BATCH][CMSG_SPACE(sizeof(struct timespec))];
    struct iovec iov[SERVE_BATCH];
    struct mmsghdr mm[SERVE_BATCH];
    for (int round = 0; round < SERVE_INTAKE_ROUNDS; round++) {
        uint64_t cutoff = UINT64_MAX;
        bool more = false;
        for (int i = 0; i < n && nheld + SERVE_BATCH <= SERVE_HELD_MAX; i++) {
            for (int k = 0; k < SERVE_BATCH; k++) {
                iov[k] = (struct iovec){held[nheld + k].bytes, sizeof held[0].bytes};
                memset(&mm[k], 0, sizeof mm[k]);
                mm[k].msg_hdr.msg_iov = &iov[k];
                mm[k].msg_hdr.msg_iovlen = 1;
                mm[k].msg_hdr.msg_control = ctl[k];
                mm[k].msg_hdr.msg_controllen = sizeof ctl[k];
            }
            uint64_t before = realtime_ns();
            int got = recvmmsg(in[i].fd, mm, SERVE_BATCH, MSG_DONTWAIT, NULL);
            if (got < 0)
                got = 0;
            uint64_t last = before;
            for (int k = 0; k < got; k++) {
                struct held_msg *h = &held[nheld++];
                h->ts_ns = before;
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&mm[k].msg_hdr); c;
                     c = CMSG_NXTHDR(&mm[k].msg_hdr, c))
                    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                        struct timespec t;
                        memcpy(&t, CMSG_DATA(c), sizeof t);
                        h->ts_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
                    }
                h->order = held_order++;
                h->intake = i;
                h->len = (uint16_t)mm[k].msg_len;
                h->truncated = (mm[k].msg_hdr.msg_flags & MSG_TRUNC) != 0;
                last = h->ts_ns;
            }
            /* Found empty at `before`: nothing earlier can still come from it. Read a
             * full batch: only what it was read up to is known. */
            uint64_t known = got < SERVE_BATCH ? before : last;
            if (got == SERVE_BATCH)
                more = true;
            if (known < cutoff)
                cutoff = known;
        }
        if (nheld + SERVE_BATCH > SERVE_HELD_MAX)
            cutoff = UINT64_MAX; /* no room to wait longer: take everything held */
        qsort(held, nheld, sizeof held[0], held_cmp);
        uint32_t now = now_s(start);
        size_t taken = 0;
        while (taken < nheld && held[taken].ts_ns <= cutoff) {
            const struct held_msg *h = &held[taken++];
            take_one(s, &in[h->intake], h->bytes, h->len, h->truncated, now);
        }
        memmove(held, held + taken, (nheld - taken) * sizeof held[0]);
        nheld -= taken;
        if (!more && nheld == 0)
            return false;
    }
    return nheld > 0;
}

/* Takes what waits on the intake, at most SERVE_INTAKE_ROUNDS batches. */
static void drain_intake(int fd, const char *name, struct emb_events_sink *s,
                         const struct timespec *start)
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
                emb_events_sink_handle_bound(s, name, bufs[i], mm[i].msg_len, now);
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

static int serve_loop(const struct intake *intakes, int nintakes, int listener,
                      struct emb_events_sink *s, pid_t child)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    static uint8_t reply[EMB_EVENTS_REPLY_MAX];
    int clients[SERVE_MAX_CLIENTS];
    int nclients = 0;
    bool waiting = false; /* messages of several intakes held for their turn */
    const int ni = nintakes;
    while (!serve_stop) {
        struct pollfd p[SERVE_MAX_INTAKES + 1 + SERVE_MAX_CLIENTS];
        for (int i = 0; i < ni; i++)
            p[i] = (struct pollfd){.fd = intakes[i].fd, .events = POLLIN};
        p[ni] = (struct pollfd){.fd = listener, .events = POLLIN};
        for (int i = 0; i < nclients; i++)
            p[ni + 1 + i] = (struct pollfd){.fd = clients[i], .events = POLLIN};
        int r = poll(p, (nfds_t)(ni + 1 + nclients), waiting ? 1 : child > 0 ? 200 : -1);
        reap(&child);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            emb_cli_error(CMD, "poll: %s", strerror(errno));
            return EMB_EXIT_BAD;
        }
        bool readable = waiting;
        for (int i = 0; i < ni; i++)
            readable |= (p[i].revents & POLLIN) != 0;
        if (ni == 1 && readable)
            drain_intake(intakes[0].fd, intakes[0].name[0] ? intakes[0].name : NULL, s, &start);
        else if (readable)
            waiting = drain_intakes(intakes, ni, s, &start);
        for (int i = 0; i < nclients; i++) {
            struct pollfd *pc = &p[ni + 1 + i];
            if (!pc->revents)
                continue;
            if (!(pc->revents & POLLIN) || !serve_client(clients[i], s, &start, reply)) {
                close(clients[i]);
                clients[i] = -1;
            }
        }
        int kept = 0;
        for (int i = 0; i < nclients; i++)
            if (clients[i] >= 0)
                clients[kept++] = clients[i];
        nclients = kept;
        if (p[ni].revents & POLLIN) {
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

/* What the command line asks for. */
struct serve_args {
    struct emb_events_sink_config cfg;
    const char *path;
    struct intake *intakes; /* SERVE_MAX_INTAKES of them */
    int nintakes;
    char **command;
};

/* --intake-fd [NAME=]FD. 0, or EMB_EXIT_BAD after saying why. */
static int parse_intake(const char *arg, struct serve_args *a)
{
    const char *eq = strchr(arg, '=');
    const char *num = eq ? eq + 1 : arg;
    size_t nl = eq ? (size_t)(eq - arg) : 0u;
    if (eq && (nl == 0 || nl > EMB_SVC_NAME_LEN)) {
        emb_cli_error(CMD, "--intake-fd %s: a service name is 1 to %u bytes", arg,
                      EMB_SVC_NAME_LEN);
        return EMB_EXIT_BAD;
    }
    uint64_t fd;
    if (emb_parse_u64(num, 0, 1000000, &fd) != 0 || !is_dgram_unix((int)fd)) {
        emb_cli_error(CMD, "--intake-fd %s: not an inherited AF_UNIX datagram socket", arg);
        return EMB_EXIT_BAD;
    }
    if (a->nintakes == SERVE_MAX_INTAKES) {
        emb_cli_error(CMD, "--intake-fd: at most %d intakes", SERVE_MAX_INTAKES);
        return EMB_EXIT_BAD;
    }
    struct intake *in = &a->intakes[a->nintakes++];
    in->fd = (int)fd;
    memcpy(in->name, arg, nl);
    in->name[nl] = '\0';
    return 0;
}

enum { OPT_INTAKE = 256, OPT_LOG_LINES, OPT_METRICS };
/* No --color: the sink writes no colour. "+": the options end at COMMAND. */
static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_CALL("socket", required_argument, 's'),
    EMB_CLI_CALL("intake-fd", required_argument, OPT_INTAKE),
    EMB_CLI_CALL("capacity", required_argument, 'c'),
    EMB_CLI_CALL("log-lines", required_argument, OPT_LOG_LINES),
    EMB_CLI_CALL("metrics", required_argument, OPT_METRICS),
    EMB_CLI_CALL("help", no_argument, 'h'),
    EMB_CLI_OPTIONS_NULL,
};
static const struct emb_cli_command COMMAND = {.name = CMD, .help = emb_help_events_serve, .shortopts = "+s:c:h",
                                               .options = OPTIONS, .help_on_bad_option = true};

static int on_option(void *arg, int opt, char *value)
{
    struct serve_args *a = arg;
    uint64_t v;
    switch (opt) {
    case 's': a->path = value; return 0;
    case OPT_INTAKE: return parse_intake(value, a) != 0 ? EMB_EXIT_BAD : 0;
    }
    const char *name = opt == 'c' ? "capacity" : opt == OPT_LOG_LINES ? "log-lines" : "metrics";
    if (emb_cli_option_u64(CMD, name, value, 1, UINT32_MAX, "a positive number", &v))
        return EMB_EXIT_BAD;
    *(opt == 'c' ? &a->cfg.capacity : opt == OPT_LOG_LINES ? &a->cfg.log_lines : &a->cfg.metrics) =
        (uint32_t)v;
    return 0;
}

/* An EMB_EXIT_* status when the command is done (help, or bad usage), else -1. */
static int parse_serve_args(int argc, char **argv, struct serve_args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, on_option, a);
    if (rc != 0)
        return rc < 0 ? EMB_EXIT_OK : rc;
    a->command = optind < argc ? &argv[optind] : NULL;
    if ((a->nintakes > 0) == (a->command != NULL)) {
        emb_cli_error(CMD, a->nintakes > 0 ? "give --intake-fd or a COMMAND, not both"
                                          : "nothing could emit: give --intake-fd FD or -- COMMAND");
        return EMB_EXIT_BAD;
    }
    return -1;
}

/* Stops on SIGTERM, SIGINT and SIGHUP; a client gone is a failed write, not a signal. */
static void handle_signals(void)
{
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Serves until a signal with the query socket bound; the intakes are the arguments' or,
 * with a COMMAND, the one granted to it. *ran says whether the loop ran. */
static int serve(struct serve_args *a, struct emb_events_sink *sink, int listener, bool *ran)
{
    pid_t child = 0;
    if (a->command) {
        a->intakes[0].fd = spawn_granted(a->command, &child);
        a->intakes[0].name[0] = '\0';
        a->nintakes = 1;
        if (a->intakes[0].fd < 0)
            return EMB_EXIT_BAD;
    }
    int on = 1;
    for (int i = 0; i < a->nintakes; i++) {
        fcntl(a->intakes[i].fd, F_SETFD, FD_CLOEXEC);
        /* The kernel's stamp of each datagram orders several intakes' messages as sent. */
        if (a->nintakes > 1)
            setsockopt(a->intakes[i].fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    }
    *ran = true;
    return serve_loop(a->intakes, a->nintakes, listener, sink, child);
}

int emb_events_serve_main(int argc, char **argv)
{
    static struct intake intakes[SERVE_MAX_INTAKES];
    struct serve_args a = {.intakes = intakes};
    emb_events_sink_config_default(&a.cfg);
    int rc = parse_serve_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    struct emb_events_sink *sink = emb_events_sink_new(&a.cfg);
    if (sink == NULL) {
        emb_cli_error(CMD, "capacity %u, log lines %u, metrics %u: out of range or no memory",
                      a.cfg.capacity, a.cfg.log_lines, a.cfg.metrics);
        return EMB_EXIT_BAD;
    }
    char defpath[256];
    if (a.path == NULL)
        a.path = emb_events_default_socket(defpath, sizeof defpath);
    int listener = bind_query_socket(a.path);
    if (listener < 0) {
        emb_events_sink_free(sink);
        return EMB_EXIT_BAD;
    }
    handle_signals();
    bool ran = false;
    int status = serve(&a, sink, listener, &ran);
    close(listener);
    unlink(a.path);
    if (ran) {
        struct emb_events_sink_stats st;
        emb_events_sink_stats(sink, &st);
        fprintf(stderr, "%s: stopped: %llu accepted, %llu dropped, %llu malformed\n", CMD,
                (unsigned long long)st.accepted, (unsigned long long)st.dropped,
                (unsigned long long)st.malformed);
    }
    emb_events_sink_free(sink);
    return status;
}
