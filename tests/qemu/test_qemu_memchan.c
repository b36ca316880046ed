/* The GDB remote protocol client and the memory channel against a real target: QEMU's
 * mps2-an385 running examples/mps2_memchan. Memory read in large blocks and checked
 * against the firmware's pattern; written with `X` and read back; the target halted and
 * resumed while it counts; the memory channel found by its symbol, polled, commands sent
 * down on channel 3 (set the log level, ping, arm the window, snapshot) and their effect
 * seen in the trace that comes up; the retained ring in `.noinit` read from a memory dump,
 * the board reset through AIRCR, the ring found intact on the next boot and uploaded up
 * the memory channel; detach with `D;1`; then `emb capture --gdb` arms the window and
 * seals it.
 * Usage: test_qemu_memchan QEMU FIRMWARE.elf WORKDIR EMB */
#include "qemu_run.h"

#include <emb/frame.h>
#include <emb/shell.h>
#include <emb/wire.h>

#include "catalog.h"
#include "elf_sym.h"
#include "frame_decode.h"
#include "gdb_rsp.h"
#include "harness.h"
#include "memaccess.h"
#include "memchan_host.h"
#include "retained_host.h"
#include "trace_assemble.h"
#include "trace_decode.h"

struct session {
    struct emb_gdb *g;
    struct emb_memchan_host m;
    struct emb_frame_dec *dec;
    struct emb_trace_assembler *tasm;
    uint8_t replies[16][16];
    size_t reply_len[16];
    unsigned nreplies;
    uint64_t polls;
    uint32_t logs[2048][2];  /* channel 0 frames: boot, iteration */
    unsigned nlogs;
    unsigned bad_logs;
};

/* Log frames of the firmware's retained ring: consecutive iterations (step 64) of one
 * boot? Returns the number of frames, or -1. */
static long check_logs(const uint32_t (*logs)[2], unsigned n, uint32_t boot)
{
    for (unsigned i = 0; i < n; i++)
        if (logs[i][0] != boot || (logs[i][1] & 63u) != 0u ||
            (i > 0 && logs[i][1] != logs[i - 1][1] + 64u))
            return -1;
    return (long)n;
}

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct session *s = arg;
    if (ch == EMB_FRAME_CH_TRACE)
        emb_trace_assemble_frame(s->tasm, p, len);
    else if (ch == EMB_FRAME_CH_LOG) {
        if (len == 8 && s->nlogs < 2048) {
            s->logs[s->nlogs][0] = emb_get_le32(p);
            s->logs[s->nlogs++][1] = emb_get_le32(p + 4);
        } else {
            s->bad_logs++;
        }
    } else if (ch == EMB_FRAME_CH_SHELL && s->nreplies < 16 && len <= 16) {
        memcpy(s->replies[s->nreplies], p, len);
        s->reply_len[s->nreplies++] = len;
    }
}

/* One poll: halt, take what the up ring holds, send a command if any, resume. */
static int poll_once(struct session *s, const uint8_t *cmd, size_t cmd_len)
{
    char err[256];
    if (emb_gdb_halt(s->g) != 0) {
        diag("halt: %s", emb_gdb_error(s->g));
        return -1;
    }
    uint8_t buf[16384];
    size_t got;
    if (emb_memchan_host_read_up(&s->m, 0, buf, sizeof buf, &got, err, sizeof err) != 0) {
        diag("read up: %s", err);
        return -1;
    }
    emb_frame_dec_feed(s->dec, buf, got);
    if (cmd != NULL) {
        uint8_t frame[64];
        size_t fl = emb_frame_encode(frame, sizeof frame, EMB_FRAME_CH_SHELL, cmd, cmd_len);
        size_t written;
        if (emb_memchan_host_write_down(&s->m, 0, frame, fl, &written, err, sizeof err) != 0 || written != fl) {
            diag("write down: %s", err);
            return -1;
        }
    }
    s->polls++;
    return emb_gdb_resume(s->g);
}

/* Polls until `want` replies are in (or a deadline). */
static int wait_replies(struct session *s, unsigned want)
{
    for (int i = 0; i < 400 && s->nreplies < want; i++) {
        if (poll_once(s, NULL, 0) != 0)
            return -1;
        qemu_sleep_ms(5);
    }
    return s->nreplies >= want ? 0 : -1;
}

static const struct emb_trace *decode(struct session *s, size_t *len)
{
    const uint8_t *stream = emb_trace_assemble_stream(s->tasm, len);
    if (stream == NULL)
        return NULL;
    struct emb_trace_options opt = {.catalog = emb_catalog_builtin(), .name = "memchan"};
    return emb_trace_decode(stream, *len, &opt);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: test_qemu_memchan QEMU FIRMWARE.elf WORKDIR EMB\n");
        return 2;
    }
    const char *qemu = argv[1], *fw = argv[2];
    char log[1024];
    snprintf(log, sizeof log, "%s/qemu_memchan.log", argv[3]);
    char err[256];
    uint64_t pattern_addr, memchan_addr, iter_addr, size, retained_addr, boots_addr, reset_addr;
    if (emb_elf_file_symbol(fw, "fw_reset_request", &reset_addr, NULL, err, sizeof err) ||
        emb_elf_file_symbol(fw, "fw_retained", &retained_addr, NULL, err, sizeof err) ||
        emb_elf_file_symbol(fw, "fw_boots", &boots_addr, NULL, err, sizeof err) ||
        emb_elf_file_symbol(fw, "fw_pattern", &pattern_addr, &size, err, sizeof err) ||
        emb_elf_file_symbol(fw, "emb_memchan", &memchan_addr, NULL, err, sizeof err) ||
        emb_elf_file_symbol(fw, "fw_iterations", &iter_addr, NULL, err, sizeof err)) {
        ok(0, "firmware symbols: %s", err);
        return emb_test_done();
    }
    ok(size == 65536, "fw_pattern at 0x%llx, %llu bytes", (unsigned long long)pattern_addr,
       (unsigned long long)size);

    struct qemu_run q;
    if (qemu_start(&q, qemu, "mps2-an385", fw, log) != 0) {
        ok(0, "QEMU starts");
        return emb_test_done();
    }
    struct session s = {0};
    for (int i = 0; i < 100 && s.g == NULL; i++) {
        qemu_sleep_ms(50);
        s.g = emb_gdb_connect(q.gdb, 2000, err, sizeof err);
    }
    ok(s.g != NULL, "GDB client connected to QEMU on %s", q.gdb);
    if (s.g == NULL) {
        diag("%s", err);
        qemu_stop(&q);
        return emb_test_done();
    }
    diag("largest read block: %zu bytes", emb_gdb_block(s.g));
    /* The firmware needs a moment to fill its pattern and publish the channel. */
    emb_gdb_resume(s.g);
    qemu_sleep_ms(300);

    /* Memory reads in large blocks, against the firmware's pattern. */
    ok(emb_gdb_halt(s.g) == 0, "halted");
    static uint8_t buf[65536];
    int rc = emb_gdb_read(s.g, pattern_addr, buf, sizeof buf);
    int same = rc == 0;
    for (size_t i = 0; i < sizeof buf && same; i++)
        same = buf[i] == (uint8_t)(i * 7u + 3u);
    ok(same, "64 KB read in %llu-byte blocks matches the pattern (%s)",
       (unsigned long long)emb_gdb_block(s.g), rc ? emb_gdb_error(s.g) : "ok");

    /* Writes with binary data that needs escaping ($ # } *), read back. */
    uint8_t w[3000], r[3000];
    for (size_t i = 0; i < sizeof w; i++)
        w[i] = (uint8_t)("$#}*\x03\x00"[i % 6] + i / 6 % 3);
    rc = emb_gdb_write(s.g, pattern_addr + 1000, w, sizeof w);
    ok(rc == 0 && emb_gdb_read(s.g, pattern_addr + 1000, r, sizeof r) == 0 && !memcmp(w, r, sizeof w),
       "3000 escaped bytes written with X and read back (%s)", rc ? emb_gdb_error(s.g) : "ok");
    size_t rl;
    const char *rep = emb_gdb_command(s.g, "M20000000,0:", &rl); /* an empty hex write */
    ok(rep != NULL, "a raw command gets its reply ('%s')", rep ? rep : emb_gdb_error(s.g));

    /* The target runs between halts. */
    uint32_t it0, it1;
    emb_gdb_read(s.g, iter_addr, &it0, 4);
    emb_gdb_resume(s.g);
    qemu_sleep_ms(50);
    emb_gdb_halt(s.g);
    emb_gdb_read(s.g, iter_addr, &it1, 4);
    ok(it1 > it0, "the firmware ran between halts (%u -> %u iterations)", it0, it1);
    ok(emb_gdb_read(s.g, 0xF0000000u, buf, 16) != 0, "unmapped memory is an error: %s",
       emb_gdb_error(s.g));

    /* The memory channel, found by its symbol and checked. */
    struct emb_memchan_host_ops ops = emb_memaccess_gdb(s.g);
    struct emb_memchan_host_range ram = {0x20000000u, 0x20400000u};
    rc = emb_memchan_host_open(&s.m, &ops, memchan_addr, 4, &ram, 1, err, sizeof err);
    ok(rc == 0 && !s.m.rtt && s.m.nup == 2 && s.m.ndown == 1 && s.m.up[0].size == 16384 &&
       !strcmp(s.m.up[0].name, "emb-frames") && !strcmp(s.m.down[0].name, "emb-shell"),
       "memory channel at 0x%llx: %u up, %u down, \"%s\" (%s)", (unsigned long long)memchan_addr,
       s.m.nup, s.m.ndown, s.m.up[0].name, rc ? err : "ok");
    uint64_t found = 0;
    ok(emb_memchan_host_find(&ops, &ram, 1, &found, err, sizeof err) == 0 && found == memchan_addr,
       "and found again by scanning RAM");
    /* A range that excludes its buffers: refused. */
    struct emb_memchan_host m2;
    struct emb_memchan_host_range small = {0x20000000u, 0x20000100u};
    ok(emb_memchan_host_open(&m2, &ops, memchan_addr, 4, &small, 1, err, sizeof err) != 0 &&
       strstr(err, "outside the target's RAM"), "buffers outside the allowed RAM refused: %s", err);
    emb_gdb_resume(s.g);

    s.dec = emb_frame_dec_new(4096, false, on_frame, NULL, &s);
    s.tasm = emb_trace_assemble_new(0);

    /* Commands down, replies up. */
    uint8_t level[] = {EMB_SHELL_SET_LOG_LEVEL, 0xFF, 0xFF, 3};
    uint8_t ping[] = {EMB_SHELL_PING, 0x78, 0x56, 0x34, 0x12};
    poll_once(&s, level, sizeof level);
    poll_once(&s, ping, sizeof ping);
    ok(wait_replies(&s, 2) == 0, "two replies on channel 3");
    ok(s.reply_len[0] == 2 && s.replies[0][0] == 0x83 && s.replies[0][1] == EMB_OK,
       "SET_LOG_LEVEL answered OK");
    ok(s.reply_len[1] == 7 && s.replies[1][0] == 0x81 && emb_get_le32(s.replies[1] + 2) == 0x12345678u,
       "PING echoes its cookie");

    uint8_t arm[] = {EMB_SHELL_ARM_WINDOW};
    poll_once(&s, arm, sizeof arm);
    ok(wait_replies(&s, 3) == 0 && s.replies[2][0] == 0x82 && s.replies[2][1] == EMB_OK,
       "ARM_WINDOW answered OK (window state %u)", emb_get_le32(s.replies[2] + 2));
    /* The window fills, closes, and comes up as a header and its packets. */
    for (int i = 0; i < 400 && emb_trace_assemble_stats(s.tasm)->packets < 8; i++) {
        poll_once(&s, NULL, 0);
        qemu_sleep_ms(5);
    }
    const struct emb_trace_assemble_stats *ts = emb_trace_assemble_stats(s.tasm);
    ok(ts->headers >= 1 && ts->packets == 8, "the window came up: %llu header, %llu packets",
       (unsigned long long)ts->headers, (unsigned long long)ts->packets);
    size_t len;
    const struct emb_trace *t = decode(&s, &len);
    const struct emb_trace_summary *sum = t ? emb_trace_summary(t) : NULL;
    ok(sum && !sum->fatal && sum->errors == 0 && sum->events > 300,
       "the trace decodes: %llu events", sum ? (unsigned long long)sum->events : 0ull);
    if (t) {
        size_t n;
        const struct emb_trace_event *const *evs = emb_trace_events(t, &n);
        const struct emb_catalog_event *ue = emb_catalog_find(emb_catalog_builtin(), "user_event");
        int level3 = 1, consecutive = 1;
        uint16_t last = 0;
        size_t users = 0;
        for (size_t i = 0; i < n; i++) {
            if (evs[i]->type != EMB_TREC_EVENT || evs[i]->ev != ue)
                continue;
            uint16_t id = emb_get_le16(evs[i]->payload);
            uint32_t a = emb_get_le32(evs[i]->payload + 4);
            level3 &= a == 3;
            if (users++ > 0)
                consecutive &= id == (uint16_t)(last + 1);
            last = id;
        }
        ok(users > 300 && level3, "every event carries the log level set by the command (3)");
        ok(consecutive, "event ids run without a gap: nothing lost in the window");
        emb_trace_free((struct emb_trace *)t);
    }

    uint8_t snap[] = {EMB_SHELL_SNAPSHOT};
    uint64_t before = ts->packets;
    poll_once(&s, snap, sizeof snap);
    for (int i = 0; i < 400 && emb_trace_assemble_stats(s.tasm)->packets < before + 8; i++) {
        poll_once(&s, NULL, 0);
        qemu_sleep_ms(5);
    }
    ok(s.nreplies >= 4 && s.replies[3][0] == 0x84 && s.replies[3][1] == EMB_OK &&
       emb_trace_assemble_stats(s.tasm)->packets == before + 8, "SNAPSHOT sends the ring again");
    const struct emb_frame_stats *fs = emb_frame_dec_stats(s.dec);
    ok(fs->dropped == 0, "no damaged frames (%llu frames)", (unsigned long long)fs->frames);

    /* The retained ring, read as a probe would dump it: the log frames of this boot. */
    emb_gdb_halt(s.g);
    static uint8_t region[4096], frames[4096];
    struct emb_retained_view rv;
    struct session dump = {0};
    uint32_t last_dumped = 0;
    rc = emb_gdb_read(s.g, retained_addr, region, sizeof region);
    if (rc == 0 && emb_retained_find(region, sizeof region, 0, &rv, err, sizeof err) == 0) {
        emb_retained_copy(region, &rv, frames);
        struct emb_frame_dec *d = emb_frame_dec_new(4096, false, on_frame, NULL, &dump);
        emb_frame_dec_feed(d, frames, rv.pending);
        emb_frame_dec_free(d);
        last_dumped = dump.nlogs ? dump.logs[dump.nlogs - 1][1] : 0;
        ok(rv.starts == 0 && rv.dropped > 0 && check_logs(dump.logs, dump.nlogs, 0) > 100 &&
           dump.bad_logs == 0, "the retained ring in .noinit: %u log frames of boot 0, "
           "consecutive, up to iteration %u, %u older ones dropped", dump.nlogs, last_dumped,
           rv.dropped);
    } else {
        ok(0, "the retained ring in .noinit: %s", rc ? emb_gdb_error(s.g) : err);
    }

    /* The firmware resets the board through AIRCR (SYSRESETREQ) when asked: RAM outside
     * the loadable segments stays. */
    uint32_t magic = 0x5EB0075Eu, boots = 0;
    rc = emb_gdb_write(s.g, reset_addr, &magic, 4);
    ok(rc == 0, "reset requested (%s)", rc ? emb_gdb_error(s.g) : "ok");
    emb_gdb_resume(s.g);
    for (int i = 0; i < 100 && boots == 0; i++) {
        qemu_sleep_ms(20);
        emb_gdb_halt(s.g);
        emb_gdb_read(s.g, boots_addr, &boots, 4);
        emb_gdb_resume(s.g);
    }
    ok(boots == 1, "the next boot found the ring intact (%u start survived)", boots);
    /* The new boot published its channel anew: open it again and take the upload. */
    emb_gdb_halt(s.g);
    rc = emb_memchan_host_open(&s.m, &ops, memchan_addr, 4, &ram, 1, err, sizeof err);
    emb_gdb_resume(s.g);
    ok(rc == 0, "the memory channel of the new boot (%s)", rc ? err : "ok");
    s.nlogs = 0;
    for (int i = 0; i < 50 && s.nlogs == 0; i++) {
        poll_once(&s, NULL, 0);
        qemu_sleep_ms(5);
    }
    unsigned first_new = 0;
    while (first_new < s.nlogs && s.logs[first_new][0] == 0u)
        first_new++;
    ok(first_new > 100 && check_logs(s.logs, first_new, 0) == first_new &&
       s.logs[first_new - 1][1] >= last_dumped && s.logs[0][1] <= last_dumped,
       "uploaded after the reset: %u log frames of boot 0, consecutive, through iteration %u "
       "(the dump's last, %u, among them)", first_new, first_new ? s.logs[first_new - 1][1] : 0,
       last_dumped);
    ok(first_new == s.nlogs && s.bad_logs == 0,
       "nothing but the upload on channel 0, nothing damaged");

    const struct emb_gdb_stats *gs = emb_gdb_stats(s.g);
    diag("%llu polls, %llu halts, halted %.3f ms on average, %.3f ms at most",
         (unsigned long long)s.polls, (unsigned long long)gs->halts,
         gs->halts ? (double)gs->halt_ns_total / (double)gs->halts / 1e6 : 0.0,
         (double)gs->halt_ns_max / 1e6);
    bool still;
    emb_gdb_halt(s.g);
    ok(emb_memchan_host_check(&s.m, &still, err, sizeof err) == 0 && still, "the control block is unchanged");
    rc = emb_gdb_detach(s.g);
    ok(rc == 0, "detached with D;1 (%s)", rc ? emb_gdb_error(s.g) : "ok");
    emb_gdb_close(s.g);
    /* After the detach the target runs on, and a new client can attach. */
    qemu_sleep_ms(50);
    struct emb_gdb *g2 = emb_gdb_connect(q.gdb, 2000, err, sizeof err);
    ok(g2 != NULL, "a second client attaches after the detach");
    emb_gdb_close(g2);

    /* emb capture over the GDB protocol: arm the window, poll until it closed and came up,
     * seal. */
    char cmd[2048], out[1024];
    snprintf(out, sizeof out, "%s/qemu_gdb.emb", argv[3]);
    snprintf(cmd, sizeof cmd, "%s capture -o %s -l qemu --gdb %s --elf %s --arm --until-closed "
             "--duration 30 2>&1", argv[4], out, q.gdb, fw);
    FILE *p = popen(cmd, "r");
    char line[512], all[4096] = "";
    while (p != NULL && fgets(line, sizeof line, p) != NULL)
        if (strlen(all) + strlen(line) < sizeof all)
            strcat(all, line);
    int status = p ? pclose(p) : -1;
    ok(status == 0 && strstr(all, "sealed") && strstr(all, "window closed") &&
       strstr(all, "8 trace packets"), "emb capture --gdb --arm --until-closed seals the window");
    diag("%s", all);
    emb_frame_dec_free(s.dec);
    emb_trace_assemble_free(s.tasm);
    qemu_stop(&q);
    return emb_test_done();
}
