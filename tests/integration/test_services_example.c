/* The services example end to end, against the real sink (`emb events serve`).
 *
 *   test_services_example scenario EMB SPAWNER      every kind from a real run, the chain
 *                                                   client -> fs.read -> block-driver.read_block,
 *                                                   nothing from the ungranted process
 *   test_services_example sink-killed EMB SPAWNER   the sink is killed mid-run
 *   test_services_example sink-stopped EMB SPAWNER  the sink is stopped with a tiny queue
 *
 * The spawner checks each phase against what the clients saw; a sink fault must not change
 * any of it, nor block anyone (a watchdog fails the test instead of hanging). The sink is
 * read with the shared decoders, through `probe`: this program, run by the spawner after the
 * scenario, saves the raw replies. */
#define _GNU_SOURCE
#include <emb/svc_trace.h>

#include "events_chain.h"
#include "events_client.h"
#include "events_sink.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define WATCHDOG_S 60

static char dir[256];

/* ---- probe: save the sink's replies ---- */

static int save(const char *name, const uint8_t *q, size_t qlen, int fd, uint8_t *reply)
{
    char err[256], path[512];
    long n = emb_events_query(fd, q, qlen, reply, 3000, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "probe: %s: %s\n", name, err);
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(reply, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0)
        return 1;
    return 0;
}

static int probe(void)
{
    char sock[256], err[256];
    int fd = emb_events_connect(emb_events_default_socket(sock, sizeof sock), err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "probe: %s\n", err);
        return 1;
    }
    static uint8_t reply[EMB_EVENTS_REPLY_MAX];
    uint8_t q[16];
    int bad = save("dump", q, emb_svc_encode_dump(q, sizeof q, 255), fd, reply);
    bad |= save("status", q, emb_svc_encode_status(q, sizeof q), fd, reply);
    bad |= save("metrics", q, emb_svc_encode_metrics(q, sizeof q), fd, reply);
    bad |= save("logs", q, emb_svc_encode_logs(q, sizeof q, 0), fd, reply);
    close(fd);
    return bad;
}

/* ---- running the spawner ---- */

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "not ok - the scenario did not finish: something blocked\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        *len = 0;
        return NULL;
    }
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* Runs the spawner with extra arguments; stdout and stderr go to files in dir. */
static int run_spawner(const char *emb, const char *spawner, const char *self, char **extra,
                       bool with_probe)
{
    char rundir[300], out[300], errf[300];
    snprintf(rundir, sizeof rundir, "%s/run", dir);
    snprintf(out, sizeof out, "%s/spawner.out", dir);
    snprintf(errf, sizeof errf, "%s/spawner.err", dir);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[32];
        int n = 0;
        argv[n++] = (char *)spawner;
        argv[n++] = "--emb";
        argv[n++] = (char *)emb;
        argv[n++] = "--dir";
        argv[n++] = rundir;
        for (; extra && *extra; extra++)
            argv[n++] = *extra;
        if (with_probe) {
            argv[n++] = "--";
            argv[n++] = (char *)self;
            argv[n++] = "probe";
            argv[n++] = dir;
        }
        argv[n] = NULL;
        if (!freopen(out, "w", stdout) || !freopen(errf, "w", stderr))
            _exit(126);
        execv(spawner, argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The client's own counts for one phase line of the spawner's output. */
static unsigned reported(const char *out, const char *phase, const char *who, const char *field)
{
    unsigned total = 0;
    for (const char *l = out; l && *l;) {
        const char *nl = strchr(l, '\n');
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(nl ? nl - l : (long)strlen(l)), l);
        char ph[32], w[32];
        if (sscanf(line, "result %31s %31s", ph, w) == 2 && (!phase || !strcmp(ph, phase)) &&
            !strcmp(w, who)) {
            char key[40];
            snprintf(key, sizeof key, " %s=", field);
            const char *v = strstr(line, key);
            if (v)
                total += (unsigned)strtoul(v + strlen(key), NULL, 10);
        }
        l = nl ? nl + 1 : NULL;
    }
    return total;
}

/* "NAME: tracing on: S sent, R refused" from a service's exit, or -1. */
static long refused_by(const char *err, const char *name, long *sent)
{
    char key[64];
    snprintf(key, sizeof key, "%s: tracing on: ", name);
    const char *p = strstr(err ? err : "", key);
    unsigned long s = 0, r = 0;
    if (!p || sscanf(p + strlen(key), "%lu sent, %lu refused", &s, &r) != 2)
        return -1;
    *sent = (long)s;
    return (long)r;
}

/* ---- checks ---- */

static void check_scenario(const char *emb, const char *spawner, const char *self)
{
    int rc = run_spawner(emb, spawner, self, NULL, true);
    size_t olen, dlen, slen, mlen, llen;
    char *out = slurp("spawner.out", &olen);
    ok_eq(rc, 0, "the spawner ran every phase as expected and the probe read the sink");
    if (rc != 0 && out)
        diag("%s", out);

    uint8_t *dump = (uint8_t *)slurp("dump", &dlen), *status = (uint8_t *)slurp("status", &slen);
    uint8_t *metrics = (uint8_t *)slurp("metrics", &mlen), *logs = (uint8_t *)slurp("logs", &llen);
    if (!dump || !status || !metrics || !logs || dlen % EMB_SVC_EV_LEN) {
        ok(0, "the probe saved the sink's replies");
        return;
    }
    size_t n = dlen / EMB_SVC_EV_LEN;
    struct emb_svc_event ev[EMB_SVC_DUMP_MAX];
    unsigned by_kind[EMB_SVC_KIND_MAX + 1] = {0};
    bool decoded = true, backup_seen = false;
    for (size_t i = 0; i < n; i++) {
        decoded = decoded && emb_svc_decode_event_record(dump + i * EMB_SVC_EV_LEN, &ev[i], NULL) == EMB_OK;
        by_kind[ev[i].kind]++;
        backup_seen = backup_seen || !strcmp(ev[i].caller, "backup");
    }
    ok(decoded && n > 0, "the dump decodes: %zu events", n);
    for (unsigned k = 1; k <= EMB_SVC_KIND_MAX; k++)
        ok(by_kind[k] > 0, "the scenario produced %s (%u)", emb_svc_kind_name((uint8_t)k), by_kind[k]);
    ok(!backup_seen, "nothing from `backup`, which was not granted the capability, is in the ring");

    struct emb_svc_status st = {0};
    bool st_ok = emb_svc_decode_status_reply(status, slen, &st, NULL) == EMB_OK;
    ok(st_ok && st.accepted == n && st.held == n && st.dropped == 0 && st.malformed == 0,
       "status: %llu accepted = held = dumped, none dropped or malformed",
       (unsigned long long)st.accepted);

    /* The calls, as a reader of the dump sees them, against what the clients saw. */
    struct emb_events_calls calls;
    emb_events_calls_build(ev, n, &calls);
    unsigned chain_reply = 0, chain_timeout = 0, chain_lost = 0, fs_alone = 0;
    unsigned client_kind[EMB_SVC_KIND_MAX + 1] = {0};
    for (size_t c = 0; c < calls.count; c++) {
        char chain[160];
        emb_events_chain(&calls, ev, NULL, c, chain, sizeof chain);
        uint8_t kind = calls.call[c].kind;
        if (!strcmp(chain, "client -> fs.1 -> block-driver.7")) {
            chain_reply += kind == EMB_SVC_KIND_REPLY;
            chain_timeout += kind == EMB_SVC_KIND_TIMEOUT;
            chain_lost += kind == EMB_SVC_KIND_PEER_LOST;
        }
        if (!strcmp(chain, "fs -> block-driver.7"))
            fs_alone++;
        if (!strncmp(chain, "client -> fs.", 13) && !strchr(chain + 13, ' '))
            client_kind[kind]++;
    }
    ok_eq(chain_reply, 5, "client -> fs.read -> block-driver.read_block: the 5 normal reads");
    ok_eq(chain_timeout, 1, "the chain under the abandoned read ends in fs's timeout");
    ok_eq(chain_lost, 2, "the chain under the killed peer: 2 peer_lost");
    ok_eq(fs_alone, 3, "fs's calls for the untraced client form chains of their own");
    ok_eq(client_kind[EMB_SVC_KIND_TIMEOUT], reported(out, "stall", "client", "timeout"),
          "the ring's client timeouts are the ones the client saw");
    ok_eq(client_kind[EMB_SVC_KIND_QUEUE_FULL], reported(out, "stall", "client", "queue_full"),
          "the ring's queue_full are the ones the client saw");
    ok_eq(client_kind[EMB_SVC_KIND_ABORTED], 1, "one aborted call");
    ok_eq(client_kind[EMB_SVC_KIND_REPLY], reported(out, NULL, "client", "reply"),
          "every reply the client got is in the ring");
    ok_eq(client_kind[EMB_SVC_KIND_REQUEST], 0, "no client call is left outstanding");
    emb_events_calls_free(&calls);

    bool reads = false, blocks = false;
    for (size_t i = 0; i + EMB_SVC_MET_LEN <= mlen; i += EMB_SVC_MET_LEN) {
        struct emb_svc_metric m;
        if (emb_svc_decode_metric_record(metrics + i, &m, NULL) != EMB_OK)
            continue;
        reads = reads || (!strcmp(m.owner, "fs") && !strcmp(m.name, "reads") && m.value == 7);
        blocks = blocks || (!strcmp(m.owner, "block-driver") && !strcmp(m.name, "blocks_read") &&
                            m.value == 7);
    }
    ok(reads && blocks, "metrics: fs reads = block-driver blocks_read = 7 (5 + 2 for backup)");
    struct emb_svc_logs_header h;
    ok(emb_svc_decode_logs_header(logs, llen, &h, NULL) == EMB_OK && h.oldest == 1 && !h.wrapped &&
           memmem(logs, llen, "block-driver\x1f" "ready", 18) &&
           memmem(logs, llen, "fs\x1f" "read of block", 16),
       "log copies of every traced service, from line 1");
    free(out);
    free(dump);
    free(status);
    free(metrics);
    free(logs);
}

static void check_sink_killed(const char *emb, const char *spawner, const char *self)
{
    char *extra[] = {"--sink-fault", "kill", "--sink-fault-at", "stall", NULL};
    int rc = run_spawner(emb, spawner, self, extra, false);
    size_t olen, elen;
    char *out = slurp("spawner.out", &olen), *err = slurp("spawner.err", &elen);
    ok_eq(rc, 0, "with the sink killed after the first phase, every phase still ends as expected");
    ok(out && strstr(out, "sink killed before phase stall"), "the sink was killed");
    long sent = 0, refused = refused_by(err, "client", &sent);
    ok(refused > 0 && sent > 0, "client: %ld sent while the sink lived, %ld refused after", sent,
       refused);
    refused = refused_by(err, "fs", &sent);
    ok(refused > 0, "fs: %ld refused, and it kept serving", refused);
    if (rc != 0 && out)
        diag("%s", out);
    free(out);
    free(err);
}

static void check_sink_stopped(const char *emb, const char *spawner, const char *self)
{
    /* A queue of 4 KiB holds a handful of events: the stopped sink is full almost at once. */
    char *extra[] = {"--intake-queue", "4096", "--sink-fault", "stop", "--sink-fault-at", "normal",
                     NULL};
    int rc = run_spawner(emb, spawner, self, extra, true);
    size_t olen, elen, slen;
    char *out = slurp("spawner.out", &olen), *err = slurp("spawner.err", &elen);
    ok_eq(rc, 0, "with the sink stopped and full from the start, every phase ends as expected");
    long sent = 0, refused = refused_by(err, "client", &sent);
    ok(refused > 0, "client: %ld refused by the full sink, %ld queued", refused, sent);
    uint8_t *status = (uint8_t *)slurp("status", &slen);
    struct emb_svc_status st = {0};
    bool decoded = status && emb_svc_decode_status_reply(status, slen, &st, NULL) == EMB_OK;
    ok(decoded && st.dropped > 0 && st.accepted > 0,
       "the sink, resumed, counts the lost events as dropped (%llu dropped, %llu accepted)",
       (unsigned long long)st.dropped, (unsigned long long)st.accepted);
    if (rc != 0 && out)
        diag("%s", out);
    free(out);
    free(err);
    free(status);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "probe")) {
        snprintf(dir, sizeof dir, "%s", argv[2]);
        return probe();
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s scenario|sink-killed|sink-stopped EMB SPAWNER\n", argv[0]);
        return 2;
    }
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(dir, sizeof dir, "/tmp/emb-svc-test-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    if (!strcmp(argv[1], "scenario"))
        check_scenario(argv[2], argv[3], self);
    else if (!strcmp(argv[1], "sink-killed"))
        check_sink_killed(argv[2], argv[3], self);
    else if (!strcmp(argv[1], "sink-stopped"))
        check_sink_stopped(argv[2], argv[3], self);
    else
        return 2;
    alarm(0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    return emb_test_done();
}
