/* Reading a running target without halting it: the MPS2 firmware on QEMU's mps2-an385,
 * started paused, taken whole by `emb capture --qemu-qmp --qtest --resume` (its RAM read
 * over QEMU's machine protocol, the rings' read positions claimed and freed over qtest),
 * and checked against what the firmware counted (fw_stats):
 *
 *  - QEMU's own account says the guest never stopped: its QMP event stream, watched on a
 *    second monitor through the whole capture, has no STOP event (docs/interop/qmp-spec
 *    and qapi/run-state.json in QEMU's sources: every vm_stop emits one). The same watch
 *    sees one STOP for each time `emb capture --gdb` afterwards says it held the guest
 *    (a count, not a rate: a loaded host may poll only once), so it can see a halt;
 *  - the steady firmware (no burst: the default rate only): every event and every log
 *    call of the run arrived, nothing discarded, nothing dropped;
 *  - the default firmware, whose burst records more than the ring holds while the host
 *    reads at full rate: the consumer protocol stays exact, the events missing are
 *    exactly those the ring counted as discarded, per type in order (mps2_checks.h);
 *    likewise the log;
 *  - the read methods agree: fw_stats read with xp, pmemsave and memsave are the same
 *    bytes (and the capture read with qtest's b64read).
 *
 * Usage: test_qemu_qmp QEMU STEADY.elf DEFAULT.elf WORKDIR EMB */
#include "qemu_run.h"

#include "elf_sym.h"
#include "harness.h"
#include "mps2_checks.h"
#include "qmp.h"

struct qmp_run {
    pid_t pid;
    char qmp[256], ctl[256], qtest[256], gdb[32];
};

/* QEMU paused (-S) with two monitors (the capture's and the test's), qtest and a GDB stub. */
static int start_paused(struct qmp_run *r, const char *qemu, const char *fw, const char *work)
{
    char qmp_arg[300], ctl_arg[300], qtest_arg[300], gdb_arg[64], log[300];
    snprintf(r->qmp, sizeof r->qmp, "%s/qmp.sock", work);
    snprintf(r->ctl, sizeof r->ctl, "%s/ctl.sock", work);
    snprintf(r->qtest, sizeof r->qtest, "%s/qtest.sock", work);
    snprintf(log, sizeof log, "%s/qemu.log", work);
    unlink(r->qmp);
    unlink(r->ctl);
    unlink(r->qtest);
    int port = qemu_free_port();
    snprintf(r->gdb, sizeof r->gdb, "127.0.0.1:%d", port);
    snprintf(gdb_arg, sizeof gdb_arg, "tcp:127.0.0.1:%d", port);
    snprintf(qmp_arg, sizeof qmp_arg, "unix:%s,server=on,wait=off", r->qmp);
    snprintf(ctl_arg, sizeof ctl_arg, "unix:%s,server=on,wait=off", r->ctl);
    snprintf(qtest_arg, sizeof qtest_arg, "unix:%s,server=on,wait=off", r->qtest);
    /* The guest below the reader in the host's scheduler, as a target is beside its probe. */
    const char *argv[] = {"nice", "-n", "10", qemu, "-M", "mps2-an385", "-S", "-nographic", "-monitor", "none",
                          "-semihosting-config", "enable=on,target=native", "-qmp", qmp_arg,
                          "-qmp", ctl_arg, "-qtest", qtest_arg, "-qtest-log", "/dev/null",
                          "-gdb", gdb_arg, "-kernel", fw, NULL};
    r->pid = fork();
    if (r->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp("nice", (char *const *)argv);
        _exit(127);
    }
    return r->pid > 0 ? 0 : -1;
}

static struct emb_qmp *connect_ctl(const struct qmp_run *r)
{
    char err[512] = "";
    for (int i = 0; i < 100; i++) {
        struct emb_qmp *q = emb_qmp_connect(r->ctl, NULL, 5000, err, sizeof err);
        if (q)
            return q;
        qemu_sleep_ms(50);
    }
    diag("control monitor: %s", err);
    return NULL;
}

/* fw_stats read with every method: the same bytes. */
static bool read_stats_all_ways(struct emb_qmp *q, uint64_t addr, struct fw_stats *st)
{
    static const enum emb_qmp_method methods[] = {EMB_QMP_XP, EMB_QMP_PMEMSAVE, EMB_QMP_MEMSAVE};
    bool same = true;
    if (emb_qmp_set_method(q, EMB_QMP_XP) != 0 || emb_qmp_read(q, addr, st, sizeof *st) != 0) {
        diag("xp: %s", emb_qmp_error(q));
        return false;
    }
    for (size_t i = 1; i < sizeof methods / sizeof methods[0]; i++) {
        struct fw_stats other;
        emb_qmp_set_method(q, methods[i]);
        same = same && emb_qmp_read(q, addr, &other, sizeof other) == 0 && !memcmp(&other, st, sizeof other);
    }
    emb_qmp_set_method(q, EMB_QMP_AUTO);
    return same;
}

/* The steady run, counted by type: every event arrived, none discarded, when the host read
 * the ring at least once in the time the firmware takes to fill it (`unread_ms`, the
 * longest the capture left it unread, against the ring's bytes at the run's rate); on a
 * host so loaded that it did not, the losses must still be exactly the counted ones. */
static bool check_steady_complete(const char *trace, const struct fw_stats *st, double unread_ms)
{
    const struct emb_catalog *cat = emb_catalog_builtin();
    struct emb_trace_options opt = {.catalog = cat};
    struct emb_trace *t = emb_trace_decode_file(trace, &opt);
    const struct emb_catalog_event *user = emb_catalog_find(cat, "user_event");
    const struct emb_catalog_event *ienter = emb_catalog_find(cat, "irq_enter");
    const struct emb_catalog_event *iexit = emb_catalog_find(cat, "irq_exit");
    const struct emb_catalog_event *fstart = emb_catalog_find(cat, "frame_start");
    const struct emb_catalog_event *fend = emb_catalog_find(cat, "frame_end");
    uint64_t ticks = 0, frames = 0, starts = 0, ends = 0, enters = 0, exits = 0, first_ns = 0, last_ns = 0;
    int64_t first_gap = -1, last_tick = -1;
    for (size_t c = 0; t && c < emb_trace_context_count(t); c++) {
        const struct emb_trace_context *ctx = emb_trace_context(t, c);
        for (size_t i = 0; i < ctx->nrecs; i++) {
            const struct emb_trace_event *e = &ctx->recs[i];
            if (e->type != EMB_TREC_EVENT)
                continue;
            first_ns = first_ns ? first_ns : e->ns;
            last_ns = e->ns;
            uint16_t id = e->ev == user ? emb_get_le16(e->payload) : 0;
            ticks += id == FW_EV_TICK;
            frames += id == FW_EV_FRAME;
            starts += e->ev == fstart;
            ends += e->ev == fend;
            if (id == FW_EV_TICK) {
                int64_t a = (int64_t)emb_get_le32(e->payload + 4);
                if (first_gap < 0 && a != last_tick + 1)
                    first_gap = last_tick + 1;
                last_tick = a;
            }
            enters += e->ev == ienter;
            exits += e->ev == iexit;
        }
    }
    const struct emb_trace_summary *sum = t ? emb_trace_summary(t) : NULL;
    const struct emb_trace_info *info = t ? emb_trace_info(t) : NULL;
    /* The ring's bytes at the run's average rate of packets: how long it holds. */
    double ring_ms = sum && info && sum->packets > 0
                         ? (double)info->ring_packets * (double)(last_ns - first_ns) / 1e6 / (double)sum->packets
                         : 0.0;
    diag("steady: %llu frame_end, %llu discarded, the first tick missing %lld; the ring holds %.1f ms, "
         "the host left it unread %.1f ms at most", (unsigned long long)ends,
         sum ? (unsigned long long)sum->discarded : 0ull, (long long)first_gap, ring_ms, unread_ms);
    ok(sum && sum->events + sum->discarded == 3ull * st->frames + 3ull * st->ticks,
       "the steady run accounted for: %llu received + %llu discarded = 3 x %u frames + 3 x %u ticks",
       sum ? (unsigned long long)sum->events : 0ull, sum ? (unsigned long long)sum->discarded : 0ull,
       st->frames, st->ticks);
    if (ring_ms <= 0.0 || unread_ms >= ring_ms) {
        diag("the host was too loaded to keep up (it left the ring unread longer than the ring "
             "holds): zero loss not asserted this run");
        emb_trace_free(t);
        return false;
    }
    ok(sum && !sum->fatal && sum->errors == 0 && sum->discarded == 0 && sum->lost_packets == 0 &&
       sum->events == 3ull * st->frames + 3ull * st->ticks && st->burst_events == 0,
       "the steady run whole: %llu events = 3 x %u frames + 3 x %u ticks, none discarded",
       sum ? (unsigned long long)sum->events : 0ull, st->frames, st->ticks);
    ok(ticks == st->ticks && frames == st->frames && starts == st->frames && enters == st->ticks &&
       exits == st->ticks, "per type: %llu of %u tick events, %llu of %u frames, %llu and %llu of %u "
       "interrupt entries and exits", (unsigned long long)ticks, st->ticks, (unsigned long long)frames,
       st->frames, (unsigned long long)enters, (unsigned long long)exits, st->ticks);
    emb_trace_free(t);
    return true;
}

/* The steady run's log, whole: every call decoded in order, none dropped. */
static void check_steady_log(const char *path, const char *fw, const struct fw_stats *st)
{
    struct emb_problems problems;
    emb_problems_init(&problems, fw);
    struct emb_logdb *db = emb_logdb_open(fw, &problems);
    static uint8_t stream[4 << 20];
    FILE *f = fopen(path, "rb");
    size_t len = f ? fread(stream, 1, sizeof stream, f) : 0;
    if (f)
        fclose(f);
    struct logcheck lc = {.frame = {"log frame", 0, st->logs_frame, -1, 0},
                          .tick = {"log tick", 0, st->logs_tick, -1, 0},
                          .burst = {"log burst", 0, 0, -1, 0}};
    struct emb_log_decoder_options opt = {.db = db, .name = path, .record = on_log, .problems = &problems,
                                          .arg = &lc};
    struct emb_log_decoder *d = db ? emb_log_decoder_new(&opt) : NULL;
    if (d) {
        emb_log_decoder_feed(d, stream, len);
        emb_log_decoder_finish(d);
    }
    const struct emb_log_decoder_summary *sum = d ? emb_log_decoder_summary(d) : NULL;
    ok(sum && !sum->fatal && sum->errors == 0 && sum->dropped_total == 0 && lc.frame.seen == st->logs_frame &&
       lc.tick.seen == st->logs_tick && lc.frame.out_of_order == 0 && lc.tick.out_of_order == 0 && lc.other == 0,
       "the steady run's log whole: %llu of %u frame and %llu of %u tick log calls, in order, none dropped",
       (unsigned long long)lc.frame.seen, st->logs_frame, (unsigned long long)lc.tick.seen, st->logs_tick);
    if (d)
        emb_log_decoder_free(d);
    emb_logdb_free(db);
    emb_problems_free(&problems);
}

/* `emb capture --qemu-qmp` over the whole run: QEMU sees no STOP while it reads. */
static void capture_whole_run(const struct qmp_run *r, struct emb_qmp *ctl, const char *fw,
                              const char *work, const char *emb, bool steady)
{
    char cmd[2048], out[8192], trace[300], log[300];
    const char *name = steady ? "steady" : "default";
    snprintf(trace, sizeof trace, "%s/%s.embt", work, name);
    snprintf(log, sizeof log, "%s/%s.log", work, name);
    snprintf(cmd, sizeof cmd, "%s capture --qemu-qmp %s --qtest %s --resume --elf %s --until-closed "
             "--duration 60 -o %s/%s.emb --save-trace %s --save-log %s", emb, r->qmp, r->qtest, fw, work,
             name, trace, log);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    diag("%s", out);
    bool running = false;
    ok(emb_qmp_running(ctl, &running) == 0 && running && emb_qmp_event_count(ctl, "RESUME") == 1 &&
       emb_qmp_event_count(ctl, "STOP") == 0,
       "%s: QEMU's event stream: the capture resumed the guest once and it never stopped (%llu STOP)", name,
       (unsigned long long)emb_qmp_event_count(ctl, "STOP"));
    ok(rc == 0 && strstr(out, "sealed") && strstr(out, "tracing stopped") && strstr(out, "never halted") &&
       strstr(out, "held the target 0 times") && strstr(out, "the host freed what it took"),
       "%s: emb capture --qemu-qmp --qtest --resume follows the whole run and seals it (exit %d)", name, rc);
    uint64_t stats_addr;
    char err[256];
    struct fw_stats st = {0};
    if (emb_elf_file_symbol(fw, "fw_stats", &stats_addr, NULL, err, sizeof err) != 0) {
        ok(0, "fw_stats: %s", err);
        return;
    }
    for (int i = 0; i < 100 && st.state != FW_DONE; i++)
        if (!read_stats_all_ways(ctl, stats_addr, &st))
            break;
    ok(st.state == FW_DONE && read_stats_all_ways(ctl, stats_addr, &st),
       "%s: fw_stats read with xp, pmemsave and memsave agree; the run is over: %u frames, %u ticks", name,
       st.frames, st.ticks);
    const char *unread = strstr(out, "went unread ");
    double unread_ms = unread ? strtod(unread + strlen("went unread "), NULL) : 1e9;
    if (steady) {
        if (check_steady_complete(trace, &st, unread_ms))
            check_steady_log(log, fw, &st);
    } else {
        check_trace(trace, &st);
        check_log(log, fw, &st);
    }
}

/* The watch can see a halt: each time `emb capture --gdb` held the guest (its own count,
 * the connection's halt included) is one STOP in QEMU's stream, however many polls the
 * host's load let it make. */
static void gdb_halts_are_seen(const struct qmp_run *r, struct emb_qmp *ctl, const char *fw,
                               const char *work, const char *emb)
{
    char cmd[2048], out[8192];
    uint64_t before = emb_qmp_event_count(ctl, "STOP");
    snprintf(cmd, sizeof cmd, "%s capture --gdb %s --elf %s --duration 0.3 -o %s/gdb.emb", emb, r->gdb, fw, work);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    bool running = false;
    emb_qmp_running(ctl, &running); /* its reply comes after every event QEMU sent before it */
    uint64_t stops = emb_qmp_event_count(ctl, "STOP") - before;
    const char *held = strstr(out, "held the target ");
    unsigned long long holds = held ? strtoull(held + strlen("held the target "), NULL, 10) : 0ull;
    ok(rc == 0 && holds >= 1 && stops == holds,
       "the same watch sees emb capture --gdb halt the guest: %llu STOP events, one per hold it counted (%llu)",
       (unsigned long long)stops, holds);
}

/* One firmware: QEMU paused, the capture, the checks; with the GDB comparison. */
static void run_firmware(const char *qemu, const char *fw, const char *work, const char *emb, bool steady)
{
    struct qmp_run r;
    if (start_paused(&r, qemu, fw, work) != 0) {
        ok(0, "QEMU starts");
        return;
    }
    struct emb_qmp *ctl = connect_ctl(&r);
    ok(ctl != NULL, "the test's own QMP monitor: greeting and capabilities negotiated");
    if (ctl) {
        capture_whole_run(&r, ctl, fw, work, emb, steady);
        if (!steady)
            gdb_halts_are_seen(&r, ctl, fw, work, emb);
        emb_qmp_close(ctl);
    }
    kill(r.pid, SIGKILL);
    waitpid(r.pid, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: test_qemu_qmp QEMU STEADY.elf DEFAULT.elf WORKDIR EMB\n");
        return 2;
    }
    run_firmware(argv[1], argv[2], argv[4], argv[5], true);
    run_firmware(argv[1], argv[3], argv[4], argv[5], false);
    return emb_test_done();
}
