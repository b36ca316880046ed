/* The MPS2 firmware's UART variant (examples/qemu-mps2, FW_UART_LINK): log and trace as
 * frames on UART1, read the way a host reads a board's serial port.
 *
 * QEMU puts UART1 on a pseudo-terminal; `emb capture --serial /dev/pts/N --arm` opens it
 * (raw, termios), sends the ARM_WINDOW frame the firmware waits for, and reads the run.
 * When the firmware says everything went out (fw_stats, read over the GDB protocol), the
 * capture is interrupted and seals what it received. Then:
 *  - every frame the firmware wrote arrived, none damaged, every trace packet it sent;
 *  - the trace and the log, decoded, account for every event and log call the firmware
 *    emitted (mps2_checks.h): received, or counted as dropped on the target;
 *  - `emb trace` and `emb log --elf` decode the sealed capture;
 *  - the host makes the sensor driver fault (fw_command over GDB): the board resets, the
 *    next start finds the crash record and, once a second `emb capture --serial --arm`
 *    listens, sends it on UART1 as a channel 2 frame; the capture seals it as its crash
 *    section and `emb crash --elf FW CAPTURE` names the bus fault in the sensor driver.
 *
 * Usage: test_qemu_uart QEMU MACHINE FIRMWARE.elf WORKDIR EMB */
#include "qemu_run.h"

#include <errno.h>
#include <stdbool.h>

#include "elf_sym.h"
#include "gdb_rsp.h"
#include "mps2_checks.h"


static size_t slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return n;
}

/* QEMU with UART0 on a file, UART1 on a pseudo-terminal, its GDB stub on a free port;
 * its own messages (the terminal's name) in `log`. */
static int start_qemu(struct qemu_run *q, const char *qemu, const char *machine, const char *elf,
                      const char *uart0, const char *log)
{
    char serial0[600];
    snprintf(serial0, sizeof serial0, "file:%s", uart0);
    const char *const serials[] = {serial0, "pty", NULL};
    return qemu_start_serials(q, qemu, machine, elf, log, serials);
}

/* The pseudo-terminal QEMU made for UART1, from its "char device redirected to" line. */
static bool find_pty(const char *log, char *pty, size_t cap)
{
    char text[4096];
    for (int i = 0; i < 100; i++) {
        slurp(log, text, sizeof text);
        const char *p = strstr(text, "/dev/pts/");
        if (p != NULL) {
            size_t n = strspn(p + 9, "0123456789") + 9;
            if (n > 9 && n < cap) {
                memcpy(pty, p, n);
                pty[n] = '\0';
                return true;
            }
        }
        qemu_sleep_ms(20);
    }
    return false;
}

static struct emb_gdb *attach(const struct qemu_run *q)
{
    char err[256];
    struct emb_gdb *g = NULL;
    for (int i = 0; i < 50 && g == NULL; i++) {
        g = emb_gdb_connect(q->gdb, 2000, err, sizeof err);
        if (g == NULL)
            qemu_sleep_ms(100);
    }
    if (g == NULL)
        diag("cannot attach to %s: %s", q->gdb, err);
    return g;
}

static bool read_stats(const struct qemu_run *q, uint64_t addr, struct fw_stats *s)
{
    struct emb_gdb *g = attach(q);
    if (g == NULL)
        return false;
    bool good = emb_gdb_read(g, addr, s, sizeof *s) == 0;
    emb_gdb_detach(g);
    emb_gdb_close(g);
    return good;
}

static bool write_word(const struct qemu_run *q, uint64_t addr, uint32_t v)
{
    struct emb_gdb *g = attach(q);
    if (g == NULL)
        return false;
    bool good = emb_gdb_write(g, addr, &v, 4) == 0;
    emb_gdb_detach(g);
    emb_gdb_close(g);
    return good;
}

/* `emb capture --serial PTY --arm` into WORK/NAME.emb (and .embt, .log), its stderr in
 * `errfile`. */
static pid_t start_capture(const char *emb, const char *pty, const char *work, const char *name,
                           const char *errfile)
{
    char cap[512], trace[512], log[512];
    snprintf(cap, sizeof cap, "%s/%s.emb", work, name);
    snprintf(trace, sizeof trace, "%s/%s.embt", work, name);
    snprintf(log, sizeof log, "%s/%s.log", work, name);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(emb, emb, "capture", "--serial", pty, "--baud", "115200", "--arm", "--duration", "60",
              "--color=never", "-o", cap, "--save-trace", trace, "--save-log", log, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* A number after `label` in `text` ("..., 1494 frames, ..." with label " frames"). */
static long number_before(const char *text, const char *label)
{
    const char *p = strstr(text, label);
    if (p == NULL)
        return -1;
    const char *q = p;
    while (q > text && q[-1] >= '0' && q[-1] <= '9')
        q--;
    return q < p ? strtol(q, NULL, 10) : -1;
}

/* The crash record over UART1: a bus fault in the sensor driver, the reset, the next
 * start sending the record to a second capture, emb crash naming the fault from it. */
static void crash_over_uart(const struct qemu_run *q, const char *emb, const char *fw,
                            const char *pty, const char *work, uint64_t stats_addr)
{
    char err[256], caplog[512], cmd[2048], out[16384];
    uint64_t command_addr;
    if (emb_elf_file_symbol(fw, "fw_command", &command_addr, NULL, err, sizeof err)) {
        ok(0, "the firmware's fw_command: %s", err);
        return;
    }
    ok(write_word(q, command_addr, FW_CMD_FAULT_BUS), "the host makes the sensor driver fault");
    struct fw_stats st = {0};
    bool waiting = false;
    for (int i = 0; i < 200 && !waiting; i++) {
        qemu_sleep_ms(50);
        waiting = read_stats(q, stats_addr, &st) && st.boots == 2u && st.link_state == FW_LINK_WAITING;
    }
    ok(waiting && st.crash_status == 0 && st.crash_length > 200,
       "the board reset; boot 2 found a %u-byte crash record and waits for the host", st.crash_length);
    snprintf(caplog, sizeof caplog, "%s/capture-crash.txt", work);
    unlink(caplog);
    pid_t cap = start_capture(emb, pty, work, "crash", caplog);
    bool sent = false;
    for (int i = 0; i < 300 && !sent; i++) {
        qemu_sleep_ms(50);
        sent = read_stats(q, stats_addr, &st) && st.link_state == FW_LINK_SENT;
    }
    ok(sent && st.link_crash_frames == 1u, "boot 2 sent the record on UART1 as a channel 2 frame (%u), then its run",
       st.link_crash_frames);
    qemu_sleep_ms(500);
    int status = -1;
    if (cap > 0) {
        kill(cap, SIGINT);
        waitpid(cap, &status, 0);
    }
    char text[8192];
    slurp(caplog, text, sizeof text);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
           strstr(text, "the target sent 1 crash record (channel 2)"),
       "emb capture --serial took the crash record frame and sealed it");
    diag("%s", text);
    snprintf(cmd, sizeof cmd, "%s crash --elf %s --color=never %s/crash.emb", emb, fw, work);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "fault      bus, code ") && strstr(out, "at address 0x50000000") &&
           strstr(out, "sensor_driver_poll") && strstr(out, "PRECISERR"),
       "emb crash CAPTURE names the bus fault at 0x50000000 in sensor_driver_poll");
    diag("%s", out);
    /* Sent, it is forgotten: the record area's magic is gone. */
    uint64_t region_addr;
    uint32_t magic = 0xFFFFFFFFu;
    struct emb_gdb *g = emb_elf_file_symbol(fw, "crash_region", &region_addr, NULL, err, sizeof err) == 0
                            ? attach(q)
                            : NULL;
    if (g != NULL) {
        if (emb_gdb_read(g, region_addr, &magic, 4) != 0)
            magic = 0xFFFFFFFFu;
        emb_gdb_detach(g);
        emb_gdb_close(g);
    }
    ok(magic != 0xFFFFFFFFu && magic != 0x43424D45u, "the record was cleared once sent (magic %08x)", magic);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: test_qemu_uart QEMU MACHINE FIRMWARE.elf WORKDIR EMB\n");
        return 2;
    }
    const char *qemu = argv[1], *machine = argv[2], *fw = argv[3], *work = argv[4], *emb = argv[5];
    char err[256], uart0[512], qlog[512], caplog[512], pty[64] = "";
    uint64_t stats_addr;
    if (emb_elf_file_symbol(fw, "fw_stats", &stats_addr, NULL, err, sizeof err)) {
        ok(0, "the firmware's fw_stats: %s", err);
        return emb_test_done();
    }
    snprintf(uart0, sizeof uart0, "%s/uart0.txt", work);
    snprintf(qlog, sizeof qlog, "%s/qemu.txt", work);
    snprintf(caplog, sizeof caplog, "%s/capture.txt", work);
    /* Not a previous run's: find_pty() reads it while QEMU starts. */
    unlink(qlog);
    unlink(caplog);
    struct qemu_run q;
    ok(start_qemu(&q, qemu, machine, fw, uart0, qlog) == 0 && find_pty(qlog, pty, sizeof pty),
       "QEMU %s started, UART1 on %s", machine, pty);
    if (pty[0] == '\0') {
        qemu_stop(&q);
        return emb_test_done();
    }

    /* The firmware waits for the host's ARM_WINDOW on UART1 before its run. */
    pid_t cap = start_capture(emb, pty, work, "run", caplog);
    struct fw_stats st = {0};
    bool sent = false;
    for (int i = 0; i < 300 && !sent; i++) {
        qemu_sleep_ms(50);
        sent = read_stats(&q, stats_addr, &st) && st.link_state == FW_LINK_SENT;
    }
    ok(sent && st.state == FW_DONE,
       "the firmware ran after the host's ARM_WINDOW and sent everything on UART1: %u frames "
       "(%u log, %u trace), %u bytes", st.link_frames, st.link_log_frames, st.link_trace_frames,
       st.link_bytes);
    /* The last bytes are in the terminal or on their way to emb; then Ctrl-C. */
    qemu_sleep_ms(500);
    int status = -1;
    if (cap > 0) {
        kill(cap, SIGINT);
        waitpid(cap, &status, 0);
    }
    crash_over_uart(&q, emb, fw, pty, work, stats_addr);
    qemu_stop(&q);
    char text[8192];
    slurp(caplog, text, sizeof text);
    diag("%s", text);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(text, "sealed") &&
           strstr(text, "stopped (interrupted)"),
       "emb capture --serial %s --arm read the run and sealed it on Ctrl-C", pty);
    long frames = number_before(text, " frames,"), packets = number_before(text, " trace packets");
    long bytes = number_before(text, " bytes,");
    ok(frames == (long)st.link_frames && bytes == (long)st.link_bytes &&
           strstr(text, "lost on the way") == NULL,
       "every frame the firmware wrote arrived whole: %ld of %u frames, %ld of %u bytes, none "
       "damaged, nothing skipped", frames, st.link_frames, bytes, st.link_bytes);
    ok(st.link_failed == 0 && st.link_packets_dropped == 0 && packets == (long)st.link_packets &&
           st.link_packets > 0,
       "every trace packet sent arrived: %ld of %u (the UART waits: none lost to the line)", packets,
       st.link_packets);

    char path[600], cmd[4096], out[16384];
    snprintf(path, sizeof path, "%s/run.embt", work);
    check_trace(path, &st);
    snprintf(path, sizeof path, "%s/run.log", work);
    check_log(path, fw, &st);

    snprintf(cmd, sizeof cmd, "%s trace --summary --color=never %s/run.embt", emb, work);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "cpu0") && strstr(out, "cortex-m"),
       "emb trace decodes the trace stream the capture rebuilt");
    diag("%s", out);
    snprintf(cmd, sizeof cmd, "%s inspect --color=never %s/run.emb", emb, work);
    rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "log v1"), "emb inspect: the sealed capture is sound, with its log section");
    /* The records to a file, the summary (stderr) here. */
    snprintf(cmd, sizeof cmd, "{ %s log --elf %s --color=never %s/run.emb > %s/log.txt; }", emb, fw,
             work, work);
    rc = qemu_run_cmd(cmd, out, sizeof out);
    uint64_t emitted = (uint64_t)st.logs_frame + st.logs_tick + st.logs_burst;
    long records = number_before(out, " records decoded"), dropped = number_before(out, " dropped on");
    ok(rc == 0 && records > 0 && dropped >= 0 && (uint64_t)(records + dropped) == emitted,
       "emb log --elf decodes the capture's log section: %ld records + %ld dropped = %llu log calls",
       records, dropped, (unsigned long long)emitted);
    diag("%s", out);
    slurp(uart0, text, sizeof text);
    diag("uart0: %s", text);
    return emb_test_done();
}
