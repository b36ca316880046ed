/* The Cortex-M port on a QEMU MPS2 board, read the way a debug probe reads it: over the
 * GDB remote protocol, through the debug descriptor (examples/qemu-mps2).
 *
 *  1. The format strings are in the ELF and in none of its loadable segments.
 *  2. `emb capture --gdb --elf --until-closed` follows the trace and log rings while the
 *     firmware runs (the host is the rings' consumer) and seals them. The trace and the
 *     log are decoded and compared with what the firmware says it emitted (fw_stats, read
 *     over the GDB protocol): per event type and log call site, the sequence numbers the
 *     firmware put in the arguments are strictly increasing (none duplicated), and what is
 *     missing adds up to exactly the drops the target counted (events_discarded, the log's
 *     dropped records and stats). The burst makes sure some are dropped.
 *  3. `emb desc --gdb` enumerates the context, its ring, the log ring and the monitors,
 *     the interrupt lock's opener symbolised to the function that took it.
 *  4. The host makes the sensor driver fault (a command word in RAM): the crash record
 *     survives the reset in the retained region, the next start validates it, `emb capture
 *     --gdb` takes it through the descriptor, and `emb crash` names the function and line
 *     (a bus fault; and a division by zero, a UsageFault).
 *  5. Pointers read from the target that lead outside the image's RAM (the context table,
 *     the ring, the log ring array) are refused by `emb desc --gdb` and `emb capture --gdb`.
 *  6. A hostile target: a snapshot of the target's RAM, served by a GDB server of the
 *     test's own, corrupted at random in the structures the descriptor leads to, read
 *     through the probe like the real one, hundreds of times: the readers survive, stay
 *     bounded, and never ask the target for memory outside its RAM.
 *
 * Usage: test_qemu_mps2 QEMU MACHINE FIRMWARE.elf DRIVER.c WORKDIR EMB */
#include "qemu_run.h"

#include <gelf.h>
#include <stdbool.h>

#include <emb/wire.h>

#include "catalog.h"
#include "desc_read.h"
#include "elf_image.h"
#include "elf_sym.h"
#include "fw.h"
#include "gdb_image_server.h"
#include "gdb_rsp.h"
#include "probe.h"
#include "harness.h"
#include "log_decode.h"
#include "trace_decode.h"

struct run {
    struct qemu_run q;
    const char *fw, *work, *emb, *driver;
    uint64_t stats_addr, command_addr;
};


/* Waits until QEMU listens on its GDB port: a plain TCP connection, no byte sent, so the
 * target is not halted. */
static bool wait_port(struct run *r)
{
    for (int i = 0; i < 100; i++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->q.port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int rc = s >= 0 ? connect(s, (struct sockaddr *)&a, sizeof a) : -1;
        if (s >= 0)
            close(s);
        if (rc == 0)
            return true;
        qemu_sleep_ms(20);
    }
    return false;
}

static struct emb_gdb *attach(struct run *r)
{
    char err[256];
    for (int i = 0; i < 50; i++) {
        struct emb_gdb *g = emb_gdb_connect(r->q.gdb, 2000, err, sizeof err);
        if (g != NULL)
            return g;
        qemu_sleep_ms(100);
    }
    diag("cannot attach to %s: %s", r->q.gdb, err);
    return NULL;
}

static void release(struct emb_gdb *g)
{
    emb_gdb_detach(g);
    emb_gdb_close(g);
}

static bool read_stats(struct run *r, struct fw_stats *s)
{
    struct emb_gdb *g = attach(r);
    bool good = g != NULL && emb_gdb_read(g, r->stats_addr, s, sizeof *s) == 0;
    if (g)
        release(g);
    return good;
}

static bool write_word(struct run *r, uint64_t addr, uint32_t v)
{
    struct emb_gdb *g = attach(r);
    bool good = g != NULL && emb_gdb_write(g, addr, &v, 4) == 0;
    if (g)
        release(g);
    return good;
}

/* Waits until the firmware's run of boot `boot` is over. */
static bool wait_done(struct run *r, uint32_t boot, struct fw_stats *s)
{
    for (int i = 0; i < 200; i++) {
        if (read_stats(r, s) && s->boots == boot && s->state == FW_DONE)
            return true;
        qemu_sleep_ms(50);
    }
    return false;
}

/* ---- 1. Format strings out of flash ---- */

static void check_loadable(const char *path)
{
    static const char *const strings[] = {"frame %u: %u timer ticks", "tick %u", "burst %u of %u",
                                          "sensor %u: polling, status register at %p"};
    FILE *f = fopen(path, "rb");
    static uint8_t file[4 << 20];
    size_t len = f ? fread(file, 1, sizeof file, f) : 0;
    if (f)
        fclose(f);
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)file, len);
    size_t n = 0;
    unsigned found_in_file = 0, found_loaded = 0, segments = 0;
    uint64_t loaded = 0;
    if (elf != NULL && elf_getphdrnum(elf, &n) == 0) {
        for (size_t s = 0; s < sizeof strings / sizeof strings[0]; s++)
            found_in_file += memmem(file, len, strings[s], strlen(strings[s])) != NULL;
        for (size_t i = 0; i < n; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_offset + ph.p_filesz > len)
                continue;
            segments++;
            loaded += ph.p_filesz;
            for (size_t s = 0; s < sizeof strings / sizeof strings[0]; s++)
                found_loaded += memmem(file + ph.p_offset, ph.p_filesz, strings[s], strlen(strings[s])) != NULL;
        }
        elf_end(elf);
    }
    ok(found_in_file == 4 && segments > 0 && found_loaded == 0,
       "the 4 format strings are in the ELF (%u found), in none of its %u loadable segments "
       "(%llu bytes; %u found there)", found_in_file, segments, (unsigned long long)loaded, found_loaded);
}

/* ---- 2. The trace and the log, against what the firmware emitted ---- */

#include "mps2_checks.h"

static void check_capture(struct run *r)
{
    char cmd[2048], out[16384], cap[512], trace[512], log[512];
    snprintf(cap, sizeof cap, "%s/run.emb", r->work);
    snprintf(trace, sizeof trace, "%s/run.embt", r->work);
    snprintf(log, sizeof log, "%s/run.log", r->work);
    snprintf(cmd, sizeof cmd, "%s capture --gdb %s --elf %s --until-closed --duration 60 -o %s "
             "--save-trace %s --save-log %s", r->emb, r->q.gdb, r->fw, cap, trace, log);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "sealed") && strstr(out, "tracing stopped") && strstr(out, "the host freed"),
       "emb capture --gdb --elf --until-closed follows the run and seals it (exit %d)", rc);
    diag("%s", out);
    struct fw_stats st = {0};
    bool done = wait_done(r, 1, &st);
    ok(done, "the firmware's run is over: %u frames, %u ticks, %u burst events, %u+%u+%u log calls",
       st.frames, st.ticks, st.burst_events, st.logs_frame, st.logs_tick, st.logs_burst);
    check_trace(trace, &st);
    check_log(log, r->fw, &st);
    static char extract[8192];
    snprintf(extract, sizeof extract, "%s capture extract %s --trace -o %s.x && cmp %s.x %s && "
             "%s capture extract %s --log -o %s.x && cmp %s.x %s", r->emb, cap, trace, trace, trace,
             r->emb, cap, log, log, log);
    ok(qemu_run_cmd(extract, out, sizeof out) == 0,
       "emb capture extract --trace and --log: byte for byte what --save-trace and --save-log wrote");
    snprintf(cmd, sizeof cmd, "%s inspect %s", r->emb, cap);
    rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "log v1"), "emb inspect: the capture is sound, with its log section");
    snprintf(cmd, sizeof cmd, "%s log --elf %s %s > %s/run.log.txt", r->emb, r->fw, log, r->work);
    ok(qemu_run_cmd(cmd, out, sizeof out) == 0, "emb log decodes the captured log");
}

/* The progress line of a capture through the descriptor counts the bytes read while the
 * target runs: stderr is a terminal (script(1) gives it one), so the line is drawn; each
 * one drawn says a non-zero byte count and rate (it once said 0 bytes, 0.0 KB/s). */
static void check_progress(struct run *r)
{
    char cmd[2048], out[16384];
    snprintf(cmd, sizeof cmd, "script -qec '%s capture --gdb %s --elf %s --duration 1.5 -o %s/progress.emb' "
             "/dev/null", r->emb, r->q.gdb, r->fw, r->work);
    qemu_run_cmd(cmd, out, sizeof out);
    unsigned lines = 0, zero = 0;
    for (const char *p = strstr(out, "\remb capture: "); p != NULL; p = strstr(p + 1, "\remb capture: ")) {
        unsigned long long bytes = 0;
        double secs = 0, rate = -1;
        const char *kb = strstr(p, " bytes ");
        if (sscanf(p, "\remb capture: %lf s %llu bytes", &secs, &bytes) != 2 || !kb)
            continue;
        const char *r2 = strstr(p, " bad ");
        if (r2 != NULL)
            sscanf(r2, " bad %lf KB/s", &rate);
        lines++;
        zero += bytes == 0 || rate <= 0.0;
    }
    ok(lines > 0 && zero == 0, "capture --gdb progress: %u lines drawn, each with the bytes read and "
       "their rate (%u said 0)", lines, zero);
    if (lines == 0 || zero != 0)
        diag("%s", out);
}

/* ---- 3. The descriptor ---- */

static void check_desc(struct run *r)
{
    char cmd[2048], out[16384];
    snprintf(cmd, sizeof cmd, "%s desc --gdb %s --elf %s --color=never", r->emb, r->q.gdb, r->fw);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "Contexts (1 of 1)") && strstr(out, "cpu0") && strstr(out, "/32 +") &&
           strstr(out, "Log rings (1)") && strstr(out, "a debug probe is the consumer") &&
           strstr(out, "held the target"),
       "emb desc --gdb enumerates the context, its 32-packet ring and the log ring");
    ok(strstr(out, "irq_lock") && strstr(out, "queue_update") && strstr(out, "isr 8") &&
           strstr(out, "TIMER0_Handler"),
       "the monitors: the longest interrupt lock opened in queue_update, timer interrupt 8");
    ok(strstr(out, "cortex-m") && strstr(out, "/systick") && strstr(out, "0.025000 GHz"),
       "the identity says the core, the clock chosen (SysTick: QEMU has no DWT) and 25 MHz");
    diag("%s", out);
    snprintf(cmd, sizeof cmd, "%s desc --gdb %s --elf %s --json", r->emb, r->q.gdb, r->fw);
    rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "\"log_rings\"") && strstr(out, "\"held_ms\"") &&
           strstr(out, "\"probe_consumer\": true"),
       "emb desc --gdb --json: log rings, the consumer, the hold time");
}

/* ---- 4. Faults ---- */

/* The line of driver.c that holds `needle`. */
static int line_of(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int n = 0, found = 0;
    while (f && fgets(line, sizeof line, f)) {
        n++;
        if (!found && strstr(line, needle))
            found = n;
    }
    if (f)
        fclose(f);
    return found;
}

static void check_fault(struct run *r, uint32_t command, uint32_t boot, const char *kind,
                        const char *function, const char *needle, const char *status,
                        const char *caller)
{
    char cmd[2048], out[16384], bin[512];
    ok(write_word(r, r->command_addr, command), "%s: the host sets the command word", kind);
    struct fw_stats st = {0};
    bool next = wait_done(r, boot, &st);
    ok(next && st.crash_status == 0 && st.crash_length > 200,
       "%s: the board reset, boot %u validated the record in the retained region (%u bytes)", kind, boot,
       st.crash_length);
    snprintf(bin, sizeof bin, "%s/crash-%s.bin", r->work, kind);
    snprintf(cmd, sizeof cmd, "%s capture --gdb %s --elf %s -o %s/crash-%s.emb --save-crash %s", r->emb,
             r->q.gdb, r->fw, r->work, kind, bin);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "holds a crash record"),
       "%s: emb capture --gdb takes the record through the descriptor (exit %d)", kind, rc);
    static char extract[8192];
    snprintf(extract, sizeof extract, "%s capture extract %s/crash-%s.emb --crash -o %s.x && cmp %s.x %s",
             r->emb, r->work, kind, bin, bin, bin);
    ok(qemu_run_cmd(extract, out, sizeof out) == 0,
       "%s: emb capture extract --crash: byte for byte what --save-crash wrote", kind);
    snprintf(cmd, sizeof cmd, "%s crash --elf %s --color=never %s", r->emb, r->fw, bin);
    rc = qemu_run_cmd(cmd, out, sizeof out);
    char where[128];
    snprintf(where, sizeof where, "driver.c:%d", line_of(r->driver, needle));
    ok(rc == 0 && strstr(out, function) && strstr(out, where) && strstr(out, status),
       "%s: emb crash names %s at %s (%s)", kind, function, where, status);
    /* The caller, unwound from the stack words the record keeps: the link register at the
     * fault is not it (the faulting function saved it and may have reused it). */
    const char *line = strstr(out, "\ncaller");
    const char *end = line ? strstr(line + 1, "\nstack") : NULL;
    ok(line && end && strstr(line, caller) && strstr(line, caller) < end &&
           strstr(line, "call frame information") < end,
       "%s: emb crash unwinds the caller, %s, from the record's stack words", kind, caller);
    ok(strstr(out, "id=4") && strstr(out, "partition_fault"),
       "%s: the flight recorder ends with the driver's event and the fault", kind);
    diag("%s", out);
}

/* A consumer that stopped, then a fault: the flight recorder holds the timer interrupt's
 * newest ticks. The firmware numbers its ticks and says the last one's number before it
 * faults (FW_EV_STALLED); the record's ticks must run, without a gap, up to that one. */
static void check_stalled_fault(struct run *r, uint32_t boot)
{
    char cmd[2048], out[65536], bin[512], json[512];
    ok(write_word(r, r->command_addr, FW_CMD_STALL_FAULT), "stalled: the host sets the command word");
    struct fw_stats st = {0};
    bool next = wait_done(r, boot, &st);
    ok(next && st.crash_status == 0, "stalled: the board reset and boot %u validated the record", boot);
    snprintf(bin, sizeof bin, "%s/crash-stalled.bin", r->work);
    snprintf(cmd, sizeof cmd, "%s capture --gdb %s --elf %s -o %s/crash-stalled.emb --save-crash %s",
             r->emb, r->q.gdb, r->fw, r->work, bin);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "holds a crash record"), "stalled: emb capture --gdb saved the record");
    snprintf(json, sizeof json, "%s/crash-stalled.json", r->work);
    snprintf(cmd, sizeof cmd, "%s crash --elf %s --json --events 0 %s > %s", r->emb, r->fw, bin, json);
    rc = qemu_run_cmd(cmd, out, sizeof out);
    /* The check by sequence numbers, in Python for the JSON (tests/support/tap.py style). */
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys\n"
             "ev=[e for e in json.load(open(sys.argv[1]))[\"flight\"][\"last_events\"] "
             "if e.get(\"event\")==\"user_event\"]\n"
             "t=[e[\"fields\"][\"a\"] for e in ev if e[\"fields\"][\"id\"]==%u]\n"
             "s=[e[\"fields\"][\"a\"] for e in ev if e[\"fields\"][\"id\"]==%u]\n"
             "print(len(t), t[:1], t[-1:], s)\n"
             "sys.exit(0 if s and len(t)>=50 and t==list(range(t[0],s[0]+1)) else 1)' %s",
             FW_EV_TICK, FW_EV_STALLED, json);
    int prc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && prc == 0,
       "stalled: the flight recorder's timer ticks run without a gap to the last one before the "
       "fault (count, first, last, the firmware's last: %s)", strtok(out, "\n") ? out : "");
}

/* ---- 5. Pointers out of RAM ---- */

static void check_hostile(struct run *r)
{
    char cmd[2048], out[16384], err[256];
    uint64_t registry, cpu, ctx_off = 0, log_off = 0;
    /* The registry's pointers found by their values (the CPU's context entry, the address
     * of the port's log ring pointer), so the test does not depend on the registry's layout. */
    if (emb_elf_file_symbol(r->fw, "emb_debug_registry", &registry, NULL, err, sizeof err) ||
        emb_elf_file_symbol(r->fw, "emb__cm_cpu", &cpu, NULL, err, sizeof err)) {
        ok(0, "symbols: %s", err);
        return;
    }
    uint8_t reg[256];
    struct emb_gdb *g = attach(r);
    bool read = g && emb_gdb_read(g, registry, reg, sizeof reg) == 0;
    for (size_t off = 0; read && off + 4 <= sizeof reg; off += 4) {
        uint32_t v = emb_get_le32(reg + off);
        if (v == (uint32_t)cpu && !ctx_off)
            ctx_off = off;
    }
    uint64_t log_ring_ptr; /* the port keeps its log ring's address in emb_cm.log_ring, word 2 */
    if (!emb_elf_file_symbol(r->fw, "emb_cm", &log_ring_ptr, NULL, err, sizeof err) && (log_ring_ptr += 8))
        for (size_t off = 0; read && off + 4 <= sizeof reg; off += 4)
            if (emb_get_le32(reg + off) == (uint32_t)log_ring_ptr)
                log_off = off;
    if (g)
        release(g);
    ok(read && ctx_off && log_off, "the registry's context table and log ring array pointers found");
    if (!ctx_off || !log_off)
        return;
    struct {
        const char *what;
        uint64_t addr;
        uint32_t value;
        const char *says;
    } cases[] = {
        {"the context table pointer", registry + ctx_off, 0x60000000u, "contexts: the table at 0x60000000"},
        {"the log ring array pointer", registry + log_off, 0x00000100u, "the log ring array at 0x100"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t keep = emb_get_le32(reg + (cases[i].addr - registry));
        ok(write_word(r, cases[i].addr, cases[i].value), "%s set to 0x%x", cases[i].what, cases[i].value);
        snprintf(cmd, sizeof cmd, "%s desc --gdb %s --elf %s --color=never", r->emb, r->q.gdb, r->fw);
        int rc = qemu_run_cmd(cmd, out, sizeof out);
        ok(rc == 2 && strstr(out, cases[i].says) && strstr(out, "outside the image's RAM") &&
               strstr(out, "refused"),
           "emb desc --gdb refuses %s outside RAM, saying so (exit %d)", cases[i].what, rc);
        diag("%s", strstr(out, "refused") ? out : "(no refusal)");
        snprintf(cmd, sizeof cmd, "%s capture --gdb %s --elf %s -o %s/hostile.emb", r->emb, r->q.gdb, r->fw,
                 r->work);
        rc = qemu_run_cmd(cmd, out, sizeof out);
        ok(rc == 2 && strstr(out, "outside the image's RAM"),
           "emb capture --gdb refuses it too (exit %d)", rc);
        write_word(r, cases[i].addr, keep);
    }
    /* The ring pointer of the context: into flash. */
    uint32_t ring = 0;
    g = attach(r);
    read = g && emb_gdb_read(g, cpu, &ring, 4) == 0 && emb_gdb_write(g, cpu, &(uint32_t){0x400u}, 4) == 0;
    if (g)
        release(g);
    snprintf(cmd, sizeof cmd, "%s desc --gdb %s --elf %s --color=never", r->emb, r->q.gdb, r->fw);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(read && rc == 2 && strstr(out, "context 0: its ring at 0x400") && strstr(out, "refused"),
       "emb desc --gdb refuses a ring pointer into flash (exit %d)", rc);
    write_word(r, cpu, ring);
    rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0, "with the pointers restored, emb desc --gdb reads the target again (exit %d)", rc);
}

/* ---- 6. A hostile image over GDB ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void check_image_over_gdb(struct run *r)
{
    char err[512];
    struct emb_elf *elf = emb_elf_open(r->fw, err, sizeof err);
    struct emb_elf_region regs[16];
    size_t n = elf ? emb_elf_ram_regions(elf, regs, 16) : 0;
    struct img_server srv = {0};
    uint8_t *orig[16] = {0};
    struct emb_gdb *g = attach(r);
    bool snap = g != NULL && n > 0 && n <= 16;
    for (size_t i = 0; snap && i < n; i++) {
        srv.regions[i] = (struct img_region){regs[i].addr, (uint32_t)regs[i].size, malloc(regs[i].size)};
        orig[i] = malloc(regs[i].size);
        snap = srv.regions[i].bytes && orig[i] && emb_gdb_read(g, regs[i].addr, orig[i], regs[i].size) == 0;
        if (snap)
            memcpy(srv.regions[i].bytes, orig[i], regs[i].size);
    }
    srv.nregions = n;
    if (g)
        release(g);
    ok(snap && img_server_start(&srv) == 0, "a snapshot of the target's %zu RAM regions, served over GDB", n);
    if (!snap) {
        emb_elf_close(elf);
        return;
    }
    char hp[64], cmd[2048], out[16384];
    snprintf(hp, sizeof hp, "127.0.0.1:%d", srv.port);
    snprintf(cmd, sizeof cmd, "%s desc --gdb %s --elf %s --color=never", r->emb, hp, r->fw);
    int rc = qemu_run_cmd(cmd, out, sizeof out);
    ok(rc == 0 && strstr(out, "Contexts (1 of 1)") && strstr(out, "Log rings (1)"),
       "emb desc --gdb reads the snapshot as it read the target (exit %d)", rc);

    /* The structures the descriptor leads to, by symbol. */
    static const char *const targets[] = {"emb_debug_registry", "emb__cm_cpu", "ring", "log_ring",
                                          "emb_cm", "ring_commit", "crash_region"};
    uint64_t at[8] = {0}, size[8] = {0}, sym = 0;
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        emb_elf_symbol(elf, targets[i], &at[i], &size[i]);
    emb_elf_symbol(elf, "emb_debug_descriptor", &sym, NULL);
    unsigned rounds = 300, with_issues = 0, refused = 0, failed = 0;
    uint64_t budget_max = 0;
    for (unsigned round = 0; round < rounds; round++) {
        for (size_t i = 0; i < n; i++)
            memcpy(srv.regions[i].bytes, orig[i], regs[i].size);
        unsigned flips = 1 + (unsigned)(rng() % 12);
        for (unsigned f = 0; f < flips; f++) {
            size_t t = rng() % (sizeof targets / sizeof targets[0]);
            if (!size[t])
                continue;
            uint64_t a = at[t] + rng() % (t == 6 ? 128 : size[t]);
            uint8_t *p = img__find(&srv, a, 1);
            /* a random byte, or a word set to a tempting pointer or size */
            if (p && (rng() & 1))
                *p = (uint8_t)rng();
            else if (p && img__find(&srv, a & ~3ull, 4)) {
                static const uint32_t words[] = {0, 1, 0xFFFFFFFFu, 0x80000000u, 0x20000000u, 0x203F0000u,
                                                 0x00000400u, 0xE000E000u, 0x50000000u, 0x7FFFFFFFu};
                uint32_t w = words[rng() % (sizeof words / sizeof words[0])];
                memcpy(img__find(&srv, a & ~3ull, 4), &w, 4);
            }
        }
        struct emb_probe *p = emb_probe_open(hp, elf, err, sizeof err);
        if (!p) {
            failed++;
            continue;
        }
        struct emb_mem *m = emb_probe_mem(p);
        emb_mem_set_budget(m, 64u << 20);
        struct emb_desc_image img;
        struct emb_desc_model md;
        struct emb_problems is;
        emb_problems_init(&is, NULL);
        memset(&md, 0, sizeof md);
        if (emb_desc_find(m, sym, 0, &img, NULL) == 0) {
            emb_desc_read(m, &img, &md, &is);
            const struct emb_desc_follow_options fo = {.consume = md.probe_consumer};
            struct emb_desc_follow *f = emb_desc_follow_new(&img, &md, &fo);
            if (f) {
                emb_desc_follow_poll(f, m, &is);
                emb_desc_follow_finish(f, m, &is);
                size_t len;
                free(emb_desc_follow_trace(f, &len));
                emb_desc_follow_log(f, &len);
                emb_desc_follow_free(f);
            }
            emb_desc_model_free(&md);
        }
        with_issues += emb_problems_at_least(&is, EMB_NOTE) > 0;
        for (size_t i = 0; i < is.n; i++)
            refused += strstr(is.items[i].message, "outside the image's RAM") != NULL;
        emb_problems_free(&is);
        uint64_t spent = emb_probe_stats(p)->bytes_read;
        if (spent > budget_max)
            budget_max = spent;
        emb_probe_detach(p);
        emb_probe_close(p);
    }
    ok(failed == 0 && srv.outside == 0,
       "%u corrupted images read over GDB: the readers survive, and never once asked for memory "
       "outside the target's RAM (%llu reads, %llu writes, %llu outside)", rounds,
       (unsigned long long)srv.reads, (unsigned long long)srv.writes, (unsigned long long)srv.outside);
    ok(with_issues > rounds / 10 && refused > 0,
       "the corruption was seen: %u images reported problems, %u pointers refused as outside RAM; "
       "at most %llu bytes read from one image", with_issues, refused, (unsigned long long)budget_max);
    img_server_stop(&srv);
    for (size_t i = 0; i < n; i++) {
        free(srv.regions[i].bytes);
        free(orig[i]);
    }
    emb_elf_close(elf);
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: test_qemu_mps2 QEMU MACHINE FIRMWARE.elf DRIVER.c WORKDIR EMB\n");
        return 2;
    }
    struct run r = {.fw = argv[3], .driver = argv[4], .work = argv[5], .emb = argv[6]};
    char err[256], log[512];
    if (emb_elf_file_symbol(r.fw, "fw_stats", &r.stats_addr, NULL, err, sizeof err) ||
        emb_elf_file_symbol(r.fw, "fw_command", &r.command_addr, NULL, err, sizeof err)) {
        ok(0, "the firmware's symbols: %s", err);
        return emb_test_done();
    }
    check_loadable(r.fw);
    snprintf(log, sizeof log, "%s/uart.log", r.work);
    ok(qemu_start(&r.q, argv[1], argv[2], r.fw, log) == 0 && wait_port(&r), "QEMU %s started, GDB stub on %s",
       argv[2], r.q.gdb);
    check_capture(&r);
    check_progress(&r);
    check_desc(&r);
    check_image_over_gdb(&r);
    check_fault(&r, FW_CMD_FAULT_BUS, 2, "bus", "sensor_driver_poll", "s->regs->status",
                "BFARVALID", "  fault  ");
    check_fault(&r, FW_CMD_FAULT_DIV0, 3, "div0", "sensor_average", "s->average = s->sum / s->samples", "DIVBYZERO",
                "sensor_driver_poll");
    check_stalled_fault(&r, 4);
    check_hostile(&r);
    qemu_stop(&r.q);
    FILE *u = fopen(log, "r");
    char line[256];
    while (u && fgets(line, sizeof line, u))
        diag("uart: %s", strtok(line, "\n"));
    if (u)
        fclose(u);
    return emb_test_done();
}
