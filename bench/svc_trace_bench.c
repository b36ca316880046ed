/* Service IPC tracing benchmarks (bench/svc_trace.sh runs them and counts instructions with
 * callgrind):
 *
 *   svc_trace_bench untraced N     N calls of a service that was not granted the capability
 *   svc_trace_bench traced N       N emits into a queue with room (drained between batches,
 *                                  outside the timing); with `count`, a reader process drains
 *   svc_trace_bench full N         N emits to a full sink: every send is refused
 *   svc_trace_bench intake EMB N [RATE]
 *                                  4 emitting processes, N events each, into a real
 *                                  `emb events serve`; RATE events/s per emitter (0: flat out)
 *
 * The first three print ns per call (wall clock, best of 5 runs). With a third argument
 * `count` they make exactly N calls of a noinline function bench_<mode>_call and nothing
 * else through it, for `valgrind --tool=callgrind --toggle-collect=bench_<mode>_call`:
 * instructions per call = the collected total / N.
 */
#define _GNU_SOURCE
#include <emb/svc_trace.h>

#include "events_client.h"
#include "events_sink.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EMITTERS 4

static struct emb_svc_trace tracer = EMB_SVC_TRACE_INIT;
static const uint8_t request[] = {1, 0, 0, 0};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

__attribute__((noinline)) void bench_untraced_call(void)
{
    emb_svc_trace_call(&tracer, "fs", request, sizeof request, EMB_SVC_KIND_REQUEST);
}

__attribute__((noinline)) void bench_traced_call(void)
{
    emb_svc_trace_call(&tracer, "fs", request, sizeof request, EMB_SVC_KIND_REPLY);
}

__attribute__((noinline)) void bench_full_call(void)
{
    emb_svc_trace_call(&tracer, "fs", request, sizeof request, EMB_SVC_KIND_TIMEOUT);
}

/* Resolution and filling the queue, kept out of the functions callgrind measures. */
__attribute__((noinline)) void bench_setup_call(void)
{
    emb_svc_trace_call(&tracer, "fs", request, sizeof request, EMB_SVC_KIND_TIMEOUT);
}

__attribute__((noinline)) void bench_empty_call(void)
{
    __asm__ volatile("" ::: "memory");
}

static int drain_fd = -1; /* traced: the sink's end, emptied between timed batches */

static void drain(void)
{
    static uint8_t buf[64][64];
    struct iovec iov[64];
    struct mmsghdr mm[64];
    int n;
    do {
        for (int i = 0; i < 64; i++) {
            iov[i] = (struct iovec){buf[i], sizeof buf[i]};
            mm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
        }
        n = recvmmsg(drain_fd, mm, 64, MSG_DONTWAIT, NULL);
    } while (n > 0);
}

/* Times n calls of fn in batches of 1000, emptying the queue between batches untimed. */
static double time_batched(void (*fn)(void), long n)
{
    double best = 1e30;
    for (int run = 0; run < 5; run++) {
        double spent = 0;
        for (long done = 0; done < n; done += 1000) {
            drain();
            double t0 = now_ns();
            for (int i = 0; i < 1000; i++)
                fn();
            spent += now_ns() - t0;
        }
        if (spent / (double)n < best)
            best = spent / (double)n;
    }
    return best;
}

static double time_loop(void (*fn)(void), long n)
{
    double best = 1e30;
    for (int run = 0; run < 5; run++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            fn();
        double t = (now_ns() - t0) / (double)n;
        if (t < best)
            best = t;
    }
    return best;
}

static void grant(int fd)
{
    char v[16];
    snprintf(v, sizeof v, "%d", fd);
    setenv(EMB_SVC_ENV_FD, v, 1);
}

/* A process that reads and discards datagrams until a 1-byte message ends it. */
static pid_t start_reader(int fd)
{
    pid_t pid = fork();
    if (pid == 0) {
        static uint8_t buf[64][512];
        struct iovec iov[64];
        struct mmsghdr mm[64];
        for (;;) {
            for (int i = 0; i < 64; i++) {
                iov[i] = (struct iovec){buf[i], sizeof buf[i]};
                mm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
            }
            int n = recvmmsg(fd, mm, 64, MSG_WAITFORONE, NULL);
            if (n < 0 && errno != EINTR)
                _exit(0);
            for (int i = 0; i < n; i++)
                if (mm[i].msg_len == 1)
                    _exit(0);
        }
    }
    return pid;
}

static int run_local(const char *mode, long n, bool count_only)
{
    int sv[2] = {-1, -1};
    emb_svc_trace_set_caller(&tracer, "bench");
    void (*fn)(void) = bench_untraced_call;
    pid_t reader = 0;
    if (!strcmp(mode, "untraced")) {
        unsetenv(EMB_SVC_ENV_FD);
        bench_setup_call(); /* resolves: not granted */
    } else {
        if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
            return 2;
        int big = 4 << 20, small = 1;
        if (!strcmp(mode, "traced")) {
            setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
            if (count_only)
                reader = start_reader(sv[1]);
            drain_fd = sv[1];
            fn = bench_traced_call;
        } else if (!strcmp(mode, "full")) {
            setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
            fn = bench_full_call;
        } else {
            return 2;
        }
        grant(sv[0]);
        bench_setup_call(); /* resolves: granted */
        if (!strcmp(mode, "full")) /* fill the queue: from now on every send is refused */
            for (int i = 0; i < 10000; i++)
                bench_setup_call();
    }
    uint32_t sent0 = tracer.sent, failed0 = tracer.send_failures;
    double ns = 0, empty = 0;
    if (count_only) {
        for (long i = 0; i < n; i++)
            fn();
    } else {
        ns = drain_fd >= 0 ? time_batched(fn, n) : time_loop(fn, n);
        empty = time_loop(bench_empty_call, n);
    }
    printf("%-9s %10ld calls  %8.2f ns/call  (empty call %5.2f ns)  sent %u  refused %u\n", mode,
           n, ns, empty, tracer.sent - sent0, tracer.send_failures - failed0);
    if (reader) {
        send(sv[0], "x", 1, 0);
        waitpid(reader, NULL, 0);
    }
    return 0;
}

/* ---- Sink intake from 4 processes ---- */

struct emitter_result {
    uint32_t sent, failed;
    double ns;
};

static void emitter(int id, int fd, long n, long rate, int report)
{
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    char name[16];
    snprintf(name, sizeof name, "emitter%d", id);
    emb_svc_trace_set_caller(&t, name);
    emb_svc_trace_grant_fd(&t, fd);
    double t0 = now_ns();
    const long burst = 64;
    for (long i = 0; i < n; i++) {
        emb_svc_trace_call(&t, "fs", request, sizeof request,
                           (i & 1) ? EMB_SVC_KIND_REPLY : EMB_SVC_KIND_REQUEST);
        if (rate > 0 && i % burst == burst - 1) {
            /* Paced: the next burst is due at t0 + (i + 1) / rate seconds. */
            double due = t0 + (double)(i + 1) * 1e9 / (double)rate;
            double wait = due - now_ns();
            if (wait > 0) {
                struct timespec ts = {(time_t)(wait / 1e9), (long)((long long)wait % 1000000000)};
                nanosleep(&ts, NULL);
            }
        }
    }
    struct emitter_result r = {t.sent, t.send_failures, now_ns() - t0};
    (void)!write(report, &r, sizeof r);
    _exit(0);
}

static int status_of(const char *sock, struct emb_svc_status *st)
{
    static uint8_t reply[EMB_EVENTS_REPLY_MAX];
    char err[256];
    int fd = emb_events_connect(sock, err, sizeof err);
    if (fd < 0)
        return -1;
    uint8_t q[1];
    long n = emb_events_query(fd, q, emb_svc_encode_status(q, 1), reply, 3000, err, sizeof err);
    close(fd);
    return n > 0 && emb_svc_decode_status_reply(reply, (size_t)n, st, NULL) == EMB_OK ? 0 : -1;
}

static int run_intake(const char *emb, long n, long rate)
{
    char dir[] = "/tmp/emb-svc-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char sock[64], fdarg[16], cap[16];
    snprintf(sock, sizeof sock, "%s/events.sock", dir);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
        return 2;
    int big = 4 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    snprintf(fdarg, sizeof fdarg, "%d", sv[0]);
    snprintf(cap, sizeof cap, "%d", 1 << 20);
    pid_t sink = fork();
    if (sink == 0) {
        close(sv[1]);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        execl(emb, emb, "events", "serve", "--intake-fd", fdarg, "--socket", sock, "--capacity",
              cap, (char *)NULL);
        _exit(127);
    }
    close(sv[0]);
    struct emb_svc_status st0;
    for (int i = 0; i < 500 && status_of(sock, &st0) != 0; i++)
        usleep(10000);
    int rep[2];
    if (pipe(rep) != 0)
        return 2;
    double t0 = now_ns();
    for (int e = 0; e < EMITTERS; e++)
        if (fork() == 0)
            emitter(e, sv[1], n, rate, rep[1]);
    struct emitter_result total = {0, 0, 0};
    for (int e = 0; e < EMITTERS; e++) {
        struct emitter_result r;
        if (read(rep[0], &r, sizeof r) != (ssize_t)sizeof r)
            return 2;
        total.sent += r.sent;
        total.failed += r.failed;
        if (r.ns > total.ns)
            total.ns = r.ns;
        wait(NULL);
    }
    /* Wait until the sink has taken everything the emitters managed to send. */
    struct emb_svc_status st = {0};
    double t_done = now_ns();
    for (int i = 0; i < 2000; i++) {
        if (status_of(sock, &st) == 0 && st.accepted >= total.sent) {
            t_done = now_ns();
            break;
        }
        usleep(1000);
    }
    double secs = (t_done - t0) / 1e9;
    printf("intake  %d emitters x %ld events, %s: sent %u, refused %u; sink accepted %llu, "
           "dropped %llu in %.3f s = %.0f events/s%s\n",
           EMITTERS, n, rate ? "paced" : "flat out", total.sent, total.failed,
           (unsigned long long)st.accepted, (unsigned long long)st.dropped, secs,
           (double)st.accepted / secs, total.failed == 0 && st.dropped == 0 ? "  (no loss)" : "");
    if (rate)
        printf("        offered %ld events/s per emitter, %ld in all\n", rate, rate * EMITTERS);
    kill(sink, SIGTERM);
    waitpid(sink, NULL, 0);
    close(sv[1]);
    rmdir(dir);
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc == 3 || (argc == 4 && !strcmp(argv[3], "count")))
        return run_local(argv[1], atol(argv[2]), argc == 4);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "intake"))
        return run_intake(argv[2], atol(argv[3]), argc == 5 ? atol(argv[4]) : 0);
    fprintf(stderr, "usage: %s untraced|traced|full N [count]\n       %s intake EMB N [RATE]\n", argv[0],
            argv[0]);
    return 2;
}
