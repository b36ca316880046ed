/* Capture sources that read the target's memory (capture_source.h): its memory channel,
 * through a GDB server (the target halted for a moment at each poll) or in a live process
 * (read while it runs); and its rings, log rings and crash record through the debug
 * descriptor, behind a GDB server. */
#define _GNU_SOURCE
#include "capture_source_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <emb/wire.h>

#include "crash_decode.h"
#include "desc_read.h"
#include "elf_image.h"
#include "elf_sym.h"
#include "frame_decode.h"
#include "gdb_rsp.h"
#include "hostio.h"
#include "memaccess.h"
#include "memchan_host.h"
#include "probe.h"

static int poll_period(const struct emb_source_options *o)
{
    return o->poll_ms > 0 ? o->poll_ms : 10;
}

/* ---- The memory channel: gdb and pid ---- */

/* One round: what the up ring holds, then what waits to go down. */
static int memchan_round(struct emb_source_run *c, struct emb_memchan_host *m, char *err, size_t errlen)
{
    static uint8_t buf[1 << 20];
    size_t got;
    do {
        if (emb_memchan_host_read_up(m, 0, buf, sizeof buf, &got, err, errlen) != 0)
            return -1;
        c->st->bytes += got;
        emb_frame_dec_feed(c->dec, buf, got);
    } while (got == sizeof buf);
    if (c->down.len > 0 && m->ndown > 0) {
        size_t written;
        if (emb_memchan_host_write_down(m, 0, c->down.data, c->down.len, &written, err, errlen) != 0)
            return -1;
        if (written == c->down.len)
            c->down.len = 0;
    }
    c->st->polls++;
    return 0;
}

/* The memory channel behind a GDB server: at the ELF's emb_memchan, or searched for in
 * RAM. 0, or -1 after reporting why not. */
static int gdb_memchan_open(struct emb_source_run *c, struct emb_gdb *g, uint64_t addr,
                            struct emb_memchan_host *m)
{
    const struct emb_source_options *o = c->o;
    char err[256] = "";
    struct emb_memchan_host_range ram = {o->ram_start, o->ram_end};
    if (ram.start == 0 && ram.end == 0)
        ram = (struct emb_memchan_host_range){0x20000000u, 0x20400000u};
    struct emb_memchan_host_ops ops = emb_memaccess_gdb(g);
    int rc = 0;
    if (addr == 0)
        rc = emb_memchan_host_find(&ops, &ram, 1, &addr, err, sizeof err);
    if (rc == 0)
        rc = emb_memchan_host_open(m, &ops, addr, o->pointer_size ? o->pointer_size : 4u, &ram, 1,
                                   err, sizeof err);
    if (rc == 0 && m->nup == 0) {
        snprintf(err, sizeof err, "the memory channel at 0x%llx has no up ring",
                 (unsigned long long)addr);
        rc = -1;
    }
    if (rc != 0)
        emb_source_error(c, "%s", err);
    return rc;
}

static int gdb_memchan(struct emb_source_run *c)
{
    const struct emb_source_options *o = c->o;
    char err[256] = "";
    uint64_t addr = o->memchan_addr;
    if (addr == 0 && o->elf != NULL) {
        if (emb_elf_file_symbol(o->elf, "emb_memchan", &addr, NULL, err, sizeof err) != 0) {
            emb_source_error(c, "%s", err);
            return -1;
        }
    }
    struct emb_gdb *g = emb_gdb_connect(o->target, 2000, err, sizeof err);
    if (g == NULL) {
        emb_source_error_named(c, err);
        return -1;
    }
    struct emb_memchan_host m;
    if (gdb_memchan_open(c, g, addr, &m) != 0) {
        emb_gdb_close(g);
        return -1;
    }
    int rc = 0;
    for (;;) {
        const char *why = emb_source_should_stop(c);
        if (emb_gdb_halt(g) != 0 || memchan_round(c, &m, err, sizeof err) != 0) {
            /* Lost after some polls: what arrived is the capture. */
            if (c->st->polls == 0) {
                emb_source_error(c, "%s", err[0] ? err : emb_gdb_error(g));
                rc = -1;
            }
            emb_source_stopped(c, "target lost");
            break;
        }
        if (why != NULL) {
            emb_source_stopped(c, why);
            break;
        }
        emb_gdb_resume(g);
        emb_source_sleep_ms(poll_period(o));
    }
    const struct emb_gdb_stats *gs = emb_gdb_stats(g);
    c->st->halts = gs->halts;
    c->st->halt_ms_avg = gs->halts ? (double)gs->halt_ns_total / (double)gs->halts / 1e6 : 0.0;
    c->st->halt_ms_max = (double)gs->halt_ns_max / 1e6;
    /* Let the target run on after the capture. */
    emb_gdb_detach(g);
    emb_gdb_close(g);
    return rc;
}

/* A live process's memory channel, opened: at its emb_memchan symbol, or searched for in
 * its writable mappings. 0, or -1 after reporting why not. */
static int pid_memchan_open(struct emb_source_run *c, pid_t *pid, struct emb_memchan_host *m)
{
    char err[256];
    struct emb_memchan_host_range ranges[256], scan[256];
    int nr = emb_memaccess_pid_ranges(*pid, ranges, 256, err, sizeof err);
    if (nr < 0) {
        emb_source_error(c, "%s", err);
        return -1;
    }
    struct emb_memchan_host_ops ops = emb_memaccess_pid(pid);
    uint64_t addr = c->o->memchan_addr;
    size_t ns = emb_memaccess_scan_ranges(ranges, (size_t)nr, scan);
    /* The heap holds the native port's ring buffers: every writable mapping is RAM here. */
    if ((addr == 0 && emb_elf_process_symbol(*pid, "emb_memchan", &addr, err, sizeof err) != 0 &&
         emb_memchan_host_find(&ops, scan, ns, &addr, err, sizeof err) != 0) ||
        emb_memchan_host_open(m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0) {
        emb_source_error(c, "%s", err);
        return -1;
    }
    if (m->nup == 0 || m->up[0].size == 0) {
        emb_source_error(c, "the memory channel has no up ring");
        return -1;
    }
    return 0;
}

int emb_source_pid(struct emb_source_run *c)
{
    char *end;
    long v = strtol(c->o->target, &end, 10);
    if (*c->o->target == '\0' || *end != '\0' || v <= 0) {
        emb_source_error(c, "not a process id");
        return -1;
    }
    pid_t pid = (pid_t)v;
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        emb_source_error(c, "no process of that id");
        return -1;
    }
    struct emb_memchan_host m;
    if (pid_memchan_open(c, &pid, &m) != 0)
        return -1;
    for (;;) {
        const char *why = emb_source_should_stop(c);
        bool alive = kill(pid, 0) == 0;
        char err[256];
        /* A read that fails, or a process that ended: the end of the source. */
        if (memchan_round(c, &m, err, sizeof err) != 0 || !alive) {
            emb_source_stopped(c, "end of source");
            break;
        }
        if (why != NULL) {
            emb_source_stopped(c, why);
            break;
        }
        emb_source_sleep_ms(poll_period(c->o));
    }
    return 0;
}

/* ---- Through the descriptor: gdb ---- */

struct desc_source {
    struct emb_elf *elf;
    struct emb_probe *probe;    /* NULL: the memory is read while the target runs */
    struct emb_mem *mem;
    bool read_only;             /* the memory cannot be written: no position is freed */
    uint64_t last_poll_ns;      /* when reading began, then the last poll's start */
    struct emb_desc_image image;
    struct emb_desc_model model;
    struct emb_problems issues; /* what reading the descriptor and its rings found */
};

static void forward(struct emb_problems *to, const struct emb_problems *from)
{
    for (size_t i = 0; i < from->n; i++)
        emb_report(to, from->items[i].severity, from->items[i].offset, "%s", from->items[i].message);
}

static const char *hex(const uint8_t *b, size_t n, char *out)
{
    out[0] = '\0';
    for (size_t i = 0; i < n && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return out;
}

/* Finds the descriptor by the ELF's symbol and reads what it says, while halted; checks
 * that the target runs this ELF. 1 when the registry is not filled in yet. */
static int desc_load(struct emb_source_run *c, struct desc_source *d)
{
    uint64_t sym;
    emb_desc_model_free(&d->model);
    emb_problems_free(&d->issues);
    emb_problems_init(&d->issues, NULL);
    if (emb_elf_symbol(d->elf, "emb_debug_descriptor", &sym, NULL) != 0) {
        emb_source_error(c, "%s has no emb_debug_descriptor symbol", emb_elf_path(d->elf));
        return -1;
    }
    if (emb_desc_find(d->mem, sym, 0, &d->image, c->problems) != 0)
        return -1;
    emb_desc_read(d->mem, &d->image, &d->model, &d->issues);
    if (!d->model.ready)
        return 1;
    const uint8_t *id;
    size_t n = emb_elf_build_id(d->elf, &id);
    if (n && d->model.build_id_len && (n != d->model.build_id_len || memcmp(id, d->model.build_id, n))) {
        char a[80], b[80];
        emb_source_error(c, "the target runs another build: its build id is %s, %s has %s",
                         hex(d->model.build_id, d->model.build_id_len, a), emb_elf_path(d->elf),
                         hex(id, n, b));
        return -1;
    }
    if (emb_problems_at_least(&d->issues, EMB_NOTE) != 0) {
        forward(c->problems, &d->issues);
        return -1;
    }
    return 0;
}

/* Loads the descriptor, waiting for a target that has not started its library yet: a few
 * seconds at most. 0, or -1 after reporting why not. */
static int desc_wait_ready(struct emb_source_run *c, struct desc_source *d)
{
    int loaded;
    uint64_t waited_from = emb_hostio_now_ms();
    while ((loaded = desc_load(c, d)) == 1) {
        if ((c->o->stop && *c->o->stop) || emb_hostio_now_ms() - waited_from > 5000u) {
            emb_source_error(c, "the target's registry is not filled in: its library has not started");
            return -1;
        }
        int held = d->probe ? emb_probe_resume(d->probe) : 0;
        if (held == 0) {
            emb_source_sleep_ms(poll_period(c->o));
            held = d->probe ? emb_probe_halt(d->probe) : 0;
        }
        if (held != 0) {
            emb_source_error(c, "%s", emb_probe_error(d->probe));
            return -1;
        }
    }
    return loaded;
}

/* The run-time class mask as the target has it now. */
static bool class_mask(struct desc_source *d, uint32_t *mask)
{
    uint64_t p;
    uint8_t b[4];
    if (!emb_desc_word(&d->image, EMB_DESC_RINGS, 2, &p) || emb_mem_read(d->mem, p, b, 4) != 4)
        return false;
    *mask = d->image.little ? emb_get_le32(b)
                            : ((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
    return true;
}

/* Recording has stopped: the mask dropped to zero (a window closed, the firmware turned
 * tracing off), or stayed at zero while nothing new arrived. */
struct mask_watch {
    bool seen_on;
    uint64_t zero_since;
};

static const char *tracing_stopped(struct mask_watch *w, uint32_t mask)
{
    uint64_t now = emb_hostio_now_ms();
    if (mask != 0) {
        w->seen_on = true;
        w->zero_since = 0;
    } else if (w->seen_on) {
        return "tracing stopped";
    } else if (w->zero_since == 0) {
        w->zero_since = now;
    } else if (now - w->zero_since >= EMB_SOURCE_IDLE_AFTER_CLOSE_MS) {
        return "tracing off";
    }
    return NULL;
}

/* What the poll took, to a live view (emb_source_options.on_packets, on_log). */
static void give_packets(struct emb_source_run *c, const struct emb_desc_follow *f)
{
    static uint8_t header[EMB_DESC_FOLLOW_HEADER_MAX];
    size_t len, hlen;
    const uint8_t *packets = emb_desc_follow_packets(f, &len);
    if (c->o->on_packets != NULL && packets != NULL &&
        (hlen = emb_desc_follow_header(f, header, sizeof header)) != 0)
        emb_source_give_packets(c, header, hlen, packets, len);
    const uint8_t *log = emb_desc_follow_log(f, &len);
    if (log != NULL)
        emb_source_give_log(c, log, len);
}

/* Polls the rings until a stop condition, the target let run between polls. */
static void desc_follow_loop(struct emb_source_run *c, struct desc_source *d, struct emb_desc_follow *f)
{
    const struct emb_source_options *o = c->o;
    bool once = o->duration_s <= 0 && o->max_packets == 0 && !o->until_window_closed;
    struct mask_watch watch = {0};
    for (;;) {
        /* What the progress line counts: the bytes the probe has read so far. */
        c->st->bytes = d->probe ? emb_probe_stats(d->probe)->bytes_read : emb_mem_bytes_read(d->mem);
        const char *why = emb_source_should_stop(c);
        uint32_t mask = 0;
        bool have_mask = class_mask(d, &mask);
        if (!why && once)
            why = "snapshot";
        if (!why && o->until_window_closed && have_mask)
            why = tracing_stopped(&watch, mask);
        if (why) {
            emb_desc_follow_finish(f, d->mem, &d->issues);
            give_packets(c, f);
            emb_source_stopped(c, why);
            return;
        }
        /* The longest the rings went unread: what a ring must hold at the target's rate. */
        uint64_t now = emb_hostio_now_ns();
        double gap = (double)(now - d->last_poll_ns) / 1e6;
        if (gap > c->st->poll_gap_ms_max)
            c->st->poll_gap_ms_max = gap;
        d->last_poll_ns = now;
        if (emb_desc_follow_poll(f, d->mem, &d->issues) != 0)
            return;
        c->st->packets = emb_desc_follow_stats(f)->packets;
        give_packets(c, f);
        if (d->probe && emb_probe_resume(d->probe) != 0) {
            emb_source_stopped(c, "target lost");
            return;
        }
        emb_source_sleep_ms(poll_period(o));
        if (d->probe && emb_probe_halt(d->probe) != 0) {
            emb_source_stopped(c, "target lost");
            return;
        }
    }
}

/* The crash record the target holds now, if any. */
static void desc_take_crash(struct emb_source_run *c, struct desc_source *d)
{
    if (!d->model.has_crash || d->model.crash_cap == 0)
        return;
    uint8_t *area = malloc(d->model.crash_cap);
    struct emb_crash_record r;
    if (area && emb_mem_read(d->mem, d->model.crash_area, area, d->model.crash_cap) == d->model.crash_cap &&
        emb_crash_decode(area, d->model.crash_cap, &r, NULL) == 0) {
        c->res->crash = area;
        c->res->crash_len = r.length;
        area = NULL;
    }
    free(area);
}

/* What the follower took becomes the result: trace, log, counts. */
static void desc_take_result(struct emb_source_run *c, struct emb_desc_follow *f)
{
    const struct emb_desc_follow_stats *fs = emb_desc_follow_stats(f);
    size_t len = 0;
    const uint8_t *log = emb_desc_follow_log(f, &len);
    if (log)
        emb_buf_append(&c->log, log, len);
    c->res->trace = emb_desc_follow_trace(f, &c->res->trace_len);
    c->st->packets = fs->packets;
    c->st->packets_lost = fs->packets_lost;
    c->st->log_bytes = fs->log_bytes;
    c->st->log_lost = fs->log_lost;
    c->st->log_busy = fs->log_busy;
    c->st->released = fs->released;
    c->st->polls = fs->polls;
    c->st->headers = 1;
}

/* Follows the rings of a loaded descriptor. 0, or -1 after reporting why not. */
static int desc_follow(struct emb_source_run *c, struct desc_source *d)
{
    const struct emb_desc_follow_options fo = {.consume = d->model.probe_consumer && !d->read_only,
                                               .running = d->probe == NULL || emb_probe_live(d->probe)};
    struct emb_desc_follow *f = emb_desc_follow_new(&d->image, &d->model, &fo);
    if (!f) {
        emb_source_error(c, "out of memory");
        return -1;
    }
    desc_follow_loop(c, d, f);
    desc_take_crash(c, d);
    desc_take_result(c, f);
    emb_desc_follow_free(f);
    forward(c->problems, &d->issues);
    return emb_problems_at_least(&d->issues, EMB_NOTE) != 0 ? -1 : 0;
}

static void probe_stats(struct emb_source_run *c, const struct emb_probe_stats *ps)
{
    if (c->st->live) { /* --no-halt, served: every packet went out while the target ran */
        c->st->live_reads = ps->round_trips;
        c->st->live_writes = 0;
    }
    c->st->halts = ps->holds;
    c->st->halt_ms_avg = ps->holds ? ps->hold_ms_total / (double)ps->holds : 0.0;
    c->st->halt_ms_max = ps->hold_ms_max;
    c->st->round_trips = ps->round_trips;
    c->st->bytes_read = ps->bytes_read;
    c->st->bytes = ps->bytes_read;
}

/* Waits for the registry, follows the rings, and lets go of what reading them kept. */
static int desc_run(struct emb_source_run *c, struct desc_source *d)
{
    int rc = desc_wait_ready(c, d) == 0 ? desc_follow(c, d) : -1;
    emb_problems_free(&d->issues);
    emb_desc_model_free(&d->model);
    return rc;
}

int emb_source_descriptor(struct emb_source_run *c, struct emb_elf *elf, struct emb_mem *mem,
                          bool read_only)
{
    struct desc_source d = {.elf = elf, .mem = mem, .read_only = read_only,
                            .last_poll_ns = emb_hostio_now_ns()};
    c->direct = true;
    c->st->via_descriptor = true;
    return desc_run(c, &d);
}

static int gdb_descriptor(struct emb_source_run *c)
{
    const struct emb_source_options *o = c->o;
    struct desc_source d = {0};
    char err[512];
    c->direct = true;
    c->st->via_descriptor = true;
    if (!(d.elf = emb_elf_open(o->elf, err, sizeof err))) {
        emb_source_error(c, "%s", err);
        return -1;
    }
    if (!(d.probe = emb_probe_open(o->target, d.elf, err, sizeof err))) {
        emb_source_error_named(c, err);
        emb_elf_close(d.elf);
        return -1;
    }
    d.mem = emb_probe_mem(d.probe);
    d.last_poll_ns = emb_hostio_now_ns();
    int live = o->no_halt ? emb_probe_go_live(d.probe) : 1;
    if (live < 0) {
        emb_source_error(c, "%s", emb_probe_error(d.probe));
        emb_probe_close(d.probe);
        emb_elf_close(d.elf);
        return -1;
    }
    c->st->no_halt_refused = o->no_halt && live == 1;
    c->st->live = live == 0;
    int rc = desc_run(c, &d);
    if (emb_probe_detach(d.probe) != 0 && rc == 0) {
        emb_source_error(c, "detach: %s", emb_probe_error(d.probe));
        rc = -1;
    }
    probe_stats(c, emb_probe_stats(d.probe));
    emb_probe_close(d.probe);
    emb_elf_close(d.elf);
    return rc;
}

/* Which way a GDB source reads: the descriptor when the ELF has one and no memory channel
 * (and no window is to be armed through the shell). */
static bool via_descriptor(const struct emb_source_options *o)
{
    if (o->via != EMB_GDB_VIA_AUTO)
        return o->via == EMB_GDB_VIA_DESCRIPTOR;
    if (o->elf == NULL || o->arm)
        return false;
    uint64_t a;
    char err[256];
    return emb_elf_file_symbol(o->elf, "emb_debug_descriptor", &a, NULL, err, sizeof err) == 0 &&
           emb_elf_file_symbol(o->elf, "emb_memchan", &a, NULL, err, sizeof err) != 0;
}

int emb_source_gdb(struct emb_source_run *c)
{
    if (!via_descriptor(c->o) && c->o->no_halt) {
        emb_source_error(c, "--no-halt reads the rings through the descriptor: --elf FW with "
                            "emb_debug_descriptor (--via descriptor)");
        return -1;
    }
    if (!via_descriptor(c->o))
        return gdb_memchan(c);
    if (c->o->elf == NULL) {
        emb_source_error(c, "reading through the descriptor needs the firmware: --elf FW");
        return -1;
    }
    return gdb_descriptor(c);
}
