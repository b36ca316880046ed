/* spawner: starts the example's services and runs its scenario.
 *
 * It holds the authority to trace: for each service it grants tracing (client, fs,
 * block-driver) it creates an intake (a datagram socket pair), starts `emb events serve`
 * with the sink's ends bound to those names (--intake-fd NAME=FD), and passes each service
 * its own emitting end by leaving a copy open in it and naming it in EMB_EVENTS_FD. The second client, `backup`, is not granted: it has no descriptor and
 * nothing it does reaches the sink.
 *
 * Scenario, each phase checked against what the clients themselves saw:
 *   normal  reads and stats that succeed (client -> fs.read -> block-driver.read_block)
 *   stall   fs stopped: the client's calls time out, then fs's queue fills (QUEUE_FULL)
 *   abort   block-driver stopped: the user gives up a read (ABORTED); fs times out
 *   kill    block-driver killed while fs waits on it (PEER_LOST), then absent
 * With --sink-fault the sink is killed before a phase, or stopped for the length of one: the
 * scenario must run the same. After it, COMMAND (if given) runs with EMB_EVENTS_SOCKET naming the sink's socket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
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

#include <emb/svc_trace.h>

#define NOTIFY_DELAY_MS 300

struct proc {
    const char *name;
    pid_t pid;
    FILE *in;  /* its stdin, for clients */
    FILE *out; /* its stdout, for clients */
};

struct result {
    unsigned reply, errors, timeout, peer_lost, queue_full, aborted;
};

/* The capabilities: for each granted service, the emitting end of an intake of its own,
 * which the sink knows by that service's name (so no service can speak as another). */
#define GRANTED 3
static const char *const granted_names[GRANTED] = {"block-driver", "fs", "client"};
static int intake_emit[GRANTED] = {-1, -1, -1};
static char bin_dir[PATH_MAX];
static int failures;

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void die(const char *what)
{
    fprintf(stderr, "spawner: %s: %s\n", what, strerror(errno));
    exit(2);
}

/* Starts argv: a program of this example (from bin_dir) or, with `search`, one found on the
 * PATH. `granted` passes the capability; pipes are made for clients. */
static void spawn(struct proc *p, char *const argv[], bool granted, bool piped, bool search)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if (piped && (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0))
        die("pipe");
    char path[PATH_MAX + 64];
    if (search || strchr(argv[0], '/'))
        snprintf(path, sizeof path, "%s", argv[0]);
    else
        snprintf(path, sizeof path, "%s/%s", bin_dir, argv[0]);
    p->pid = fork();
    if (p->pid < 0)
        die("fork");
    if (p->pid == 0) {
        int grant = -1;
        for (int i = 0; granted && i < GRANTED; i++)
            if (strcmp(p->name, granted_names[i]) == 0)
                grant = intake_emit[i];
        if (grant >= 0) {
            int fd = dup(grant); /* a copy without FD_CLOEXEC survives exec */
            char v[16];
            snprintf(v, sizeof v, "%d", fd);
            setenv(EMB_SVC_ENV_FD, v, 1);
        } else {
            unsetenv(EMB_SVC_ENV_FD); /* and intake_emit is close-on-exec: nothing to hold */
        }
        if (piped) {
            dup2(in[0], 0);
            dup2(out[1], 1);
        }
        if (search)
            execvp(path, argv);
        else
            execv(path, argv);
        fprintf(stderr, "spawner: %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    if (piped) {
        close(in[0]);
        close(out[1]);
        p->in = fdopen(in[1], "w");
        p->out = fdopen(out[0], "r");
        setvbuf(p->in, NULL, _IOLBF, 0);
    }
}

static bool connectable(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static void wait_socket(const char *path, const char *who)
{
    for (int i = 0; i < 500; i++) {
        if (connectable(path))
            return;
        sleep_ms(10);
    }
    fprintf(stderr, "spawner: %s did not start listening on %s\n", who, path);
    exit(2);
}

/* Runs one client command; with notify, calls `between` after each "calling" line. */
static struct result run(struct proc *c, const char *cmd, void (*between)(void))
{
    struct result r = {0};
    fprintf(c->in, "%s\n", cmd);
    char line[256];
    while (fgets(line, sizeof line, c->out)) {
        if (!strncmp(line, "calling", 7)) {
            if (between)
                between();
            continue;
        }
        if (sscanf(line, "done reply=%u errors=%u timeout=%u peer_lost=%u queue_full=%u aborted=%u",
                   &r.reply, &r.errors, &r.timeout, &r.peer_lost, &r.queue_full, &r.aborted) == 6)
            break;
    }
    return r;
}

static void report(const char *phase, const struct proc *c, const char *cmd, struct result r,
                   bool expected)
{
    printf("result %-7s %-7s %-22s reply=%u errors=%u timeout=%u peer_lost=%u queue_full=%u "
           "aborted=%u%s\n",
           phase, c->name, cmd, r.reply, r.errors, r.timeout, r.peer_lost, r.queue_full,
           r.aborted, expected ? "" : "  UNEXPECTED");
    fflush(stdout);
    if (!expected)
        failures++;
}

static struct proc sink, block_driver, fs, client, backup;

static void user_gives_up(void)
{
    sleep_ms(NOTIFY_DELAY_MS); /* long enough for fs to be waiting on block-driver */
    kill(client.pid, SIGUSR1);
}

static void kill_block_driver(void)
{
    sleep_ms(NOTIFY_DELAY_MS);
    kill(block_driver.pid, SIGKILL);
    waitpid(block_driver.pid, NULL, 0);
    block_driver.pid = 0;
}

static const char *sink_fault, *sink_fault_at;
static bool sink_stopped;

/* Kills the sink before the fault's phase, or stops it for that one phase. */
static void maybe_fault_sink(const char *phase)
{
    if (sink_stopped) {
        kill(sink.pid, SIGCONT);
        sink_stopped = false;
        printf("fault   sink resumed before phase %s\n", phase);
    }
    if (!sink_fault || strcmp(sink_fault_at, phase) != 0 || sink.pid <= 0)
        return;
    if (!strcmp(sink_fault, "kill")) {
        kill(sink.pid, SIGKILL);
        waitpid(sink.pid, NULL, 0);
        sink.pid = 0;
        printf("fault   sink killed before phase %s\n", phase);
    } else {
        kill(sink.pid, SIGSTOP);
        sink_stopped = true;
        printf("fault   sink stopped during phase %s\n", phase);
    }
    fflush(stdout);
}

static void scenario(void)
{
    struct result r;
    maybe_fault_sink("normal");
    r = run(&client, "read 5 1000", NULL);
    report("normal", &client, "read 5 1000", r, r.reply == 5 && r.errors == 0);
    r = run(&client, "stat 2 1000", NULL);
    report("normal", &client, "stat 2 1000", r, r.reply == 2 && r.errors == 0);
    r = run(&backup, "read 2 1000", NULL);
    report("normal", &backup, "read 2 1000", r, r.reply == 2 && r.errors == 0);

    maybe_fault_sink("stall");
    kill(fs.pid, SIGSTOP);
    r = run(&client, "read 12 100", NULL);
    report("stall", &client, "read 12 100", r,
           r.timeout >= 1 && r.queue_full >= 1 && r.timeout + r.queue_full == 12);
    kill(fs.pid, SIGCONT);
    sleep_ms(200); /* fs drops the requests that expired while it was stopped */

    maybe_fault_sink("abort");
    kill(block_driver.pid, SIGSTOP);
    r = run(&client, "read 1 5000 notify", user_gives_up);
    report("abort", &client, "read 1 5000 notify", r, r.aborted == 1);
    /* fs's own wait on block-driver (FS_DOWNSTREAM_MS, 2 s) times out. The margins around
     * it, 1.3 s here and 1.7 s before the kill below, outlast a loaded machine's delays. */
    sleep_ms(3000);

    maybe_fault_sink("kill");
    r = run(&client, "read 1 3000 notify", kill_block_driver);
    report("kill", &client, "read 1 3000 notify", r, r.reply == 1 && r.errors == 1);
    r = run(&client, "read 1 1000", NULL);
    report("kill", &client, "read 1 1000", r, r.reply == 1 && r.errors == 1);
    r = run(&backup, "read 1 1000", NULL);
    report("kill", &backup, "read 1 1000", r, r.reply == 1 && r.errors == 1);
    maybe_fault_sink("end");
}

/* Waits for p to exit, killing it after `ms`. */
static void reap(struct proc *p, unsigned ms)
{
    if (p->pid <= 0)
        return;
    for (unsigned t = 0; t < ms; t += 10) {
        if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
            p->pid = 0;
            return;
        }
        sleep_ms(10);
    }
    fprintf(stderr, "spawner: %s did not exit; killing it\n", p->name);
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    p->pid = 0;
}

static void stop(struct proc *p)
{
    if (p->pid > 0)
        kill(p->pid, SIGTERM);
    reap(p, 5000);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: svc_spawner --emb EMB --dir RUN_DIR [--intake-queue BYTES]\n"
                 "                   [--sink-fault kill|stop --sink-fault-at PHASE] [-- COMMAND...]\n"
                 "PHASE: normal, stall, abort, kill or end\n");
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"emb", required_argument, NULL, 'e'},        {"dir", required_argument, NULL, 'd'},
        {"intake-queue", required_argument, NULL, 'q'}, {"sink-fault", required_argument, NULL, 'f'},
        {"sink-fault-at", required_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *emb = NULL, *dir = NULL;
    int queue = 1 << 20, c;
    while ((c = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
        switch (c) {
        case 'e': emb = optarg; break;
        case 'd': dir = optarg; break;
        case 'q': queue = atoi(optarg); break;
        case 'f': sink_fault = optarg; break;
        case 'a': sink_fault_at = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!emb || !dir || (sink_fault && (!sink_fault_at || (strcmp(sink_fault, "kill") &&
                                                             strcmp(sink_fault, "stop"))))) {
        usage(stderr);
        return 2;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        die("/proc/self/exe");
    self[n] = '\0';
    snprintf(bin_dir, sizeof bin_dir, "%s", dirname(self));
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        die(dir);
    signal(SIGPIPE, SIG_IGN);

    char sock[PATH_MAX], intake_arg[GRANTED][32];
    int sink_fd[GRANTED];
    char *sink_argv[6 + 2 * GRANTED] = {(char *)emb, "events", "serve", "--socket", sock};
    int argc_sink = 5;
    for (int i = 0; i < GRANTED; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0)
            die("socketpair");
        intake_emit[i] = sv[1];
        setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &queue, sizeof queue);
        sink_fd[i] = dup(sv[0]); /* the sink's end, inherited by the sink alone */
        close(sv[0]);
        snprintf(intake_arg[i], sizeof intake_arg[i], "%s=%d", granted_names[i], sink_fd[i]);
        sink_argv[argc_sink++] = "--intake-fd";
        sink_argv[argc_sink++] = intake_arg[i];
    }
    sink_argv[argc_sink] = NULL;
    snprintf(sock, sizeof sock, "%s/events.sock", dir);
    sink.name = "events";
    spawn(&sink, sink_argv, false, false, false);
    for (int i = 0; i < GRANTED; i++)
        close(sink_fd[i]);
    wait_socket(sock, "the events sink");

    char path[PATH_MAX];
    char *bd_argv[] = {"svc_block_driver", (char *)dir, NULL};
    block_driver.name = "block-driver";
    spawn(&block_driver, bd_argv, true, false, false);
    snprintf(path, sizeof path, "%s/block-driver.sock", dir);
    wait_socket(path, "block-driver");
    char *fs_argv[] = {"svc_fs", (char *)dir, NULL};
    fs.name = "fs";
    spawn(&fs, fs_argv, true, false, false);
    snprintf(path, sizeof path, "%s/fs.sock", dir);
    wait_socket(path, "fs");
    char *client_argv[] = {"svc_client", (char *)dir, "client", NULL};
    client.name = "client";
    spawn(&client, client_argv, true, true, false);
    char *backup_argv[] = {"svc_client", (char *)dir, "backup", NULL};
    backup.name = "backup";
    spawn(&backup, backup_argv, false, true, false);
    printf("started events (sink), block-driver, fs, client (traced); backup (not traced)\n");
    fflush(stdout);

    scenario();

    int status = failures ? 1 : 0;
    printf("scenario: %s\n", failures ? "UNEXPECTED OUTCOMES" : "every phase ended as expected");
    fflush(stdout);
    fprintf(client.in, "quit\n");
    fprintf(backup.in, "quit\n");
    reap(&client, 5000);
    reap(&backup, 5000);
    stop(&fs);
    stop(&block_driver);
    if (optind < argc && sink.pid > 0) {
        if (sink_stopped) {
            kill(sink.pid, SIGCONT);
            sink_stopped = false;
        }
        setenv("EMB_EVENTS_SOCKET", sock, 1);
        struct proc cmd = {.name = argv[optind]};
        spawn(&cmd, &argv[optind], false, false, true);
        int st = 0;
        waitpid(cmd.pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
    }
    if (sink_stopped)
        kill(sink.pid, SIGCONT);
    stop(&sink);
    return status;
}
