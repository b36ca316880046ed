/* The emitter on POSIX: the capability is an inherited datagram socket named in EMB_EVENTS_FD.
 * Without it nothing is sent; with it events arrive byte for byte; a descriptor installed
 * late is found by the retry and reported once; a new sink is reported once; a full or dead
 * sink never blocks the emitter and every loss is visible to the sink as a sequence gap. */
#define _GNU_SOURCE
#include <emb/svc_trace.h>
#include <emb/wire.h>

#include "events_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "not ok - an emitter blocked (watchdog fired)\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

static void pair(int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) {
        perror("socketpair");
        exit(2);
    }
}

static void grant_env(int fd)
{
    char v[16];
    snprintf(v, sizeof v, "%d", fd);
    setenv(EMB_SVC_ENV_FD, v, 1);
}

/* Datagrams waiting on `fd`. */
static int pending(int fd)
{
    uint8_t buf[512];
    int n = 0;
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) >= 0)
        n++;
    return n;
}

/* A child process that names itself and records `n` calls through emb_svc_self. */
static int run_child(bool granted, int fd, int n)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (granted)
            grant_env(fd);
        else
            unsetenv(EMB_SVC_ENV_FD);
        emb_svc_trace_set_caller(&emb_svc_self, "child");
        for (int i = 0; i < n; i++)
            emb_svc_trace_call(&emb_svc_self, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
        _exit(emb_svc_self.sent == (uint32_t)(granted ? n : 0) ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_no_capability(void)
{
    int sv[2];
    pair(sv);
    /* The child inherits the socket itself but not the grant: it cannot emit. */
    ok_eq(run_child(false, sv[0], 100), 0, "child without EMB_EVENTS_FD runs");
    ok_eq(pending(sv[1]), 0, "nothing it recorded reached the sink");
    ok_eq(run_child(true, sv[0], 100), 0, "child granted the same descriptor runs");
    ok_eq(pending(sv[1]), 100, "all 100 of its events reached the sink");

    /* Named but not a usable socket: a pipe is no capability. */
    int p[2];
    if (pipe(p) != 0)
        return;
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "x");
    grant_env(p[1]);
    emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok(t.state == EMB_SVC_STATE_MISSING && t.sent == 0, "a pipe is not a sink");
    setenv(EMB_SVC_ENV_FD, "12x", 1);
    struct emb_svc_trace u = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&u, "x");
    emb_svc_trace_call(&u, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(u.state, EMB_SVC_STATE_UNTRACED, "a variable that is not a number grants nothing");
    unsetenv(EMB_SVC_ENV_FD);
    close(p[0]);
    close(p[1]);
    close(sv[0]);
    close(sv[1]);
}

static void test_granted(void)
{
    int sv[2];
    pair(sv);
    grant_env(sv[0]);
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "client");
    emb_svc_trace_set_op_offset(&t, "fs", 1);
    const uint8_t req[] = {0x00, 0x2A};
    emb_svc_trace_call(&t, "fs", req, sizeof req, EMB_SVC_KIND_REQUEST);
    uint8_t got[64];
    ssize_t n = recv(sv[1], got, sizeof got, MSG_DONTWAIT);
    uint8_t want[EMB_SVC_MSG_EVENT_LEN];
    struct emb_svc_event ev = {.seq = 1, .caller = "client", .peer = "fs", .op = 0x2A,
                               .kind = EMB_SVC_KIND_REQUEST};
    emb_svc_encode_event_msg(want, sizeof want, &ev);
    ok(n == EMB_SVC_MSG_EVENT_LEN && memcmp(got, want, sizeof want) == 0,
       "the event arrives byte for byte");
    ok(getenv(EMB_SVC_ENV_FD) == NULL, "the grant's name is not passed on to children");
    ok(fcntl(sv[0], F_GETFD) & FD_CLOEXEC, "nor is the descriptor");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "resolved first time: nothing to report");
    emb_svc_trace_metric(&t, "reads", 3);
    emb_svc_trace_log(&t, "hello", 5);
    n = recv(sv[1], got, sizeof got, MSG_DONTWAIT);
    ok(n == EMB_SVC_MSG_METRIC_LEN && got[0] == EMB_SVC_OP_METRIC && got[33] == 3, "metric");
    n = recv(sv[1], got, sizeof got, MSG_DONTWAIT);
    ok(n == 18 && got[0] == EMB_SVC_OP_LOG && memcmp(got + 13, "hello", 5) == 0, "log copy");
    close(sv[0]);
    close(sv[1]);
}

static void test_late_grant(void)
{
    const int late_fd = 200;
    close(late_fd);
    grant_env(late_fd);
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "fs");
    for (int i = 0; i < 100; i++)
        emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok(t.state == EMB_SVC_STATE_MISSING && t.misses == 2, "calls 1 and 65 missed (%u)", t.misses);
    int sv[2];
    pair(sv);
    dup2(sv[0], late_fd);
    int calls = 0;
    while (t.state != EMB_SVC_STATE_TRACING && calls < 1000) {
        emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REQUEST);
        calls++;
    }
    ok_eq(calls, 29, "found on call 129, the next retry");
    ok_eq(pending(sv[1]), 1, "the call that found the sink sent its event");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 2, "late resolution reported with its 2 misses");
    int got = 0;
    for (int i = 0; i < 500; i++) {
        emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REPLY);
        if (i % 50 == 49)
            got += pending(sv[1]);
    }
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "exactly once");
    ok_eq(got, 500, "every later call is traced");
    close(late_fd);
    close(sv[0]);
    close(sv[1]);
}

static void test_sink_change(void)
{
    int a[2], b[2], p[2];
    pair(a);
    pair(b);
    grant_env(a[0]);
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "client");
    emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok(!emb_svc_trace_take_sink_changed(&t), "the first sink is no change");
    ok_eq(emb_svc_trace_grant_fd(&t, a[0]), EMB_OK, "granting the same sink again");
    ok(!emb_svc_trace_take_sink_changed(&t), "is no change");
    ok_eq(emb_svc_trace_grant_fd(&t, b[0]), EMB_OK, "a new sink is granted");
    ok(emb_svc_trace_take_sink_changed(&t), "the change is reported");
    ok(!emb_svc_trace_take_sink_changed(&t), "once");
    emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_REPLY);
    ok(pending(a[1]) == 1 && pending(b[1]) == 1, "events go to the new sink from then on");
    if (pipe(p) == 0) {
        ok_eq(emb_svc_trace_grant_fd(&t, p[0]), EMB_E_INVALID, "a pipe cannot be granted");
        ok(!emb_svc_trace_take_sink_changed(&t), "and changes nothing");
        close(p[0]);
        close(p[1]);
    }
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
}

static void test_full_and_dead_sink(void)
{
    int sv[2];
    pair(sv);
    int small = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    grant_env(sv[0]);
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "client");
    alarm(20);
    for (int i = 0; i < 100000; i++)
        emb_svc_trace_call(&t, "fs", "\x01", 1,
                           (i & 1) ? EMB_SVC_KIND_REPLY : EMB_SVC_KIND_REQUEST);
    alarm(0);
    ok(t.send_failures > 0 && t.sent > 0, "a full sink refused %u of 100000 sends; none blocked",
       t.send_failures);
    ok_eq(t.sent + t.send_failures, 100000, "every send was either taken or counted");

    /* The sink sees every loss as a gap in the emitter's sequence. */
    struct emb_events_sink_config cfg;
    emb_events_sink_config_default(&cfg);
    cfg.capacity = 1u << 17;
    struct emb_events_sink *s = emb_events_sink_new(&cfg);
    uint8_t buf[512];
    ssize_t n;
    while ((n = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT)) > 0)
        emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, buf, (size_t)n, 0, NULL);
    /* Room again: the emitter's report of its refusals goes first, then the event. */
    emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    while ((n = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT)) > 0)
        emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, buf, (size_t)n, 0, NULL);
    struct emb_events_sink_stats st;
    emb_events_sink_stats(s, &st);
    ok_eq(st.accepted, t.sent, "the sink accepted what was sent");
    ok_eq(st.dropped, t.send_failures, "and counts exactly the refused sends as dropped");
    ok_eq(st.faults, 0, "with no fault");
    emb_events_sink_free(s);

    /* A dead sink: every send fails at once, without SIGPIPE. */
    close(sv[1]);
    uint32_t before = t.send_failures;
    alarm(20);
    for (int i = 0; i < 1000; i++)
        emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    alarm(0);
    ok_eq(t.send_failures - before, 1000, "a dead sink costs failed sends, counted, nothing else");
    close(sv[0]);
}

/* The re-executed test: granted at exec, it starts a child before its first traced call.
 * The child must see neither EMB_EVENTS_FD nor the descriptor; the service still traces. */
static int spawn_before_trace(int fd)
{
    char script[128];
    snprintf(script, sizeof script, "test -z \"$%s\" && ! test -e /proc/self/fd/%d",
             EMB_SVC_ENV_FD, fd);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    int child_clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    emb_svc_trace_set_caller(&emb_svc_self, "parent");
    emb_svc_trace_call(&emb_svc_self, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    return child_clean ? (emb_svc_self.sent == 1 ? 0 : 4) : 3;
}

static void test_child_before_first_call(const char *self)
{
    int sv[2];
    pair(sv);
    int fd = dup(sv[0]); /* inherited by the re-executed test, as a spawner passes it */
    pid_t pid = fork();
    if (pid == 0) {
        grant_env(fd);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", fd);
        execl(self, self, "--spawn-before-trace", arg, (char *)NULL);
        _exit(127);
    }
    close(fd);
    int status = 0;
    waitpid(pid, &status, 0);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    ok(rc != 3, "a child started before the first traced call inherits neither "
                "EMB_EVENTS_FD nor the descriptor (status %d)", rc);
    ok_eq(rc, 0, "and the service itself still traces");
    ok_eq(pending(sv[1]), 1, "its one event reached the sink");
    close(sv[0]);
    close(sv[1]);
}

/* The re-executed test: records `n` events into a sink that reads nothing, says on stdout
 * how many sends were refused, and exits: its losses after the last delivered event are
 * known only from its own report at exit. */
static int flood_then_exit(int n)
{
    emb_svc_trace_set_caller(&emb_svc_self, "flood");
    for (int i = 0; i < n; i++)
        emb_svc_trace_call(&emb_svc_self, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    printf("%u %u\n", emb_svc_self.sent, emb_svc_self.send_failures);
    return 0;
}

static void test_losses_at_exit(const char *self)
{
    int sv[2];
    pair(sv);
    int small = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    int out[2];
    if (pipe(out) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        grant_env(sv[0]);
        execl(self, self, "--flood-then-exit", "20000", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[64] = "";
    FILE *f = fdopen(out[0], "r");
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    unsigned sent = 0, refused = 0;
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && sscanf(line, "%u %u", &sent, &refused) == 2,
       "the emitter recorded 20000 events into a sink that read nothing, and exited");
    ok(refused > 0 && sent + refused == 20000, "%u delivered, %u refused", sent, refused);
    struct emb_events_sink_config cfg;
    emb_events_sink_config_default(&cfg);
    struct emb_events_sink *s = emb_events_sink_new(&cfg);
    uint8_t buf[512];
    ssize_t n;
    while ((n = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT)) > 0)
        emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, buf, (size_t)n, 0, NULL);
    struct emb_events_sink_stats st;
    emb_events_sink_stats(s, &st);
    ok_eq(st.accepted, sent, "the sink took what was delivered");
    ok_eq(st.dropped, refused, "and counts every refused send after the last one as dropped");
    ok_eq(st.faults, 0, "with no fault");
    emb_events_sink_free(s);
    close(sv[0]);
    close(sv[1]);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--spawn-before-trace") == 0)
        return spawn_before_trace(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "--flood-then-exit") == 0)
        return flood_then_exit(atoi(argv[2]));
    signal(SIGALRM, watchdog);
    unsetenv(EMB_SVC_ENV_FD);
    test_no_capability();
    test_granted();
    test_late_grant();
    test_sink_change();
    test_full_and_dead_sink();
    test_child_before_first_call("/proc/self/exe");
    test_losses_at_exit("/proc/self/exe");
    return emb_test_done();
}
