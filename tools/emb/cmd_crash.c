/* `emb crash`: a crash record (v1 or v2, and any mini-records with it) made readable with
 * the firmware's ELF: the faulting line and its inlined callers, the return address, the
 * stack, the registers decoded for the architecture, and the flight recorder's last
 * events (switches, the interrupt that ran, the locks held). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "catalog.h"
#include "cli.h"
#include "crash_arch.h"
#include "crash_decode.h"
#include "elf_image.h"
#include "emb_cmds.h"
#include "trace_decode.h"
#include "trace_write.h"

#include <emb/trace_format.h>
#include <emb/wire.h>

static const char *const CMD = "emb crash";

#define MAX_INPUT (16u << 20)
#define MAX_FRAMES 16
#define MAX_CALLS 16 /* return addresses unwound */
#define MAX_MINI 256

static void help(FILE *out)
{
    fprintf(out,
            "Usage: emb crash --elf FW [options] RECORD|CAPTURE\n"
            "\n"
            "Shows a crash record (version 1 or 2, docs/formats/crash.md) with the firmware's\n"
            "ELF: the faulting function and line with its inlined callers, the caller, the\n"
            "stack and thread, the registers decoded for the architecture, and the flight\n"
            "recorder's last events: the switches, the interrupt that ran, the locks held.\n"
            "RECORD is a saved record or a whole retained region (its mini-records are listed\n"
            "too); CAPTURE a sealed capture (emb capture) whose crash section holds the record\n"
            "the target sent. A record from another build is refused with both build ids.\n"
            "\n"
            "Options:\n"
            "      --elf FW        the image the record came from (symbols and build id)\n"
            "      --events N      flight recorder events to list (default 24, 0: all)\n"
            "      --json          one JSON document\n"
            "      --catalog FILE  decode the flight recorder with this catalogue (YAML)\n"
            "      --debuginfod    fetch debug info a stripped FW lacks from the servers in\n"
            "                      DEBUGINFOD_URLS (without it, nothing goes to the network)\n"
            "      --color[=WHEN]  colour: auto (default), always, never; NO_COLOR is honoured\n"
            "  -h, --help          show this help\n"
            "\n"
            "Exit status: 0 when the record decoded, 1 when a valid record contradicts\n"
            "itself (it announces more or fewer flight packets than decode), 2 on bad input\n"
            "or usage (a corrupt or truncated record, an unknown version, another build's\n"
            "record, a truncated or damaged ELF).\n");
}

struct args {
    const char *elf;
    const char *file;
    const char *catalog;
    long events;
    bool json;
};

static int parse_args(int argc, char **argv, struct args *a)
{
    enum { OPT_ELF = 256, OPT_EVENTS, OPT_JSON, OPT_CATALOG, OPT_COLOR, OPT_DEBUGINFOD };
    static const struct option options[] = {
        {"elf", required_argument, NULL, OPT_ELF},
        {"events", required_argument, NULL, OPT_EVENTS},
        {"json", no_argument, NULL, OPT_JSON},
        {"catalog", required_argument, NULL, OPT_CATALOG},
        {"color", optional_argument, NULL, OPT_COLOR},
        {"colour", optional_argument, NULL, OPT_COLOR},
        {"debuginfod", no_argument, NULL, OPT_DEBUGINFOD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    char *end;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case OPT_ELF: a->elf = optarg; break;
        case OPT_EVENTS:
            a->events = strtol(optarg, &end, 10);
            if (*end || a->events < 0) {
                emb_cli_error(CMD, "--events takes a count, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            break;
        case OPT_JSON: a->json = true; break;
        case OPT_CATALOG: a->catalog = optarg; break;
        case OPT_DEBUGINFOD: emb_elf_allow_debuginfod(true); break;
        case OPT_COLOR:
            if (emb_cli_color_option(CMD, optarg) != 0)
                return EMB_EXIT_BAD;
            break;
        case 'h': help(stdout); return -1;
        default:
            return emb_cli_bad_option(CMD, c, argv);
        }
    }
    if (optind + 1 != argc) {
        emb_cli_error(CMD, optind == argc ? "no crash record given" : "one crash record, please");
        fprintf(stderr, "Usage: emb crash --elf FW [options] RECORD (emb crash --help)\n");
        return EMB_EXIT_BAD;
    }
    a->file = argv[optind];
    if (!a->elf) {
        emb_cli_error(CMD, "--elf FW is needed: the image the record came from");
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

/* ---- Everything known about the record ---- */

struct held {
    uint16_t ctx;
    uint32_t mutex;
    uint64_t ts;
};

struct crash {
    const char *file;
    uint8_t *data;
    size_t size;
    long long base;            /* where the record's bytes start in the file (a capture's
                                * crash section), for the offsets in messages */
    bool has_record;
    struct emb_crash_record rec;
    struct emb_crash_view view;
    struct emb_elf *elf;
    const struct emb_catalog *cat;
    struct emb_trace *trace;
    struct emb_crash_mini minis[MAX_MINI];
    size_t nminis;
    long events;
    /* flight analysis */
    uint64_t ref_ts;
    bool ref_is_fault;
    unsigned findings; /* a valid record that contradicts itself: exit status 1 */
    const struct emb_trace_event *switches[5];
    size_t nswitches;
    const struct emb_trace_event *irq_enter, *irq_exit;
    struct held held[32];
    size_t nheld;
    /* the call chain a Cortex-M record's stack words let the host unwind */
    uint64_t calls[MAX_CALLS];
    size_t ncalls;
};

static char *hex_bytes(const uint8_t *b, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 3 <= len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%02x", b[i]);
    return buf;
}

static uint8_t *read_input(const char *path, size_t *size, int *rc)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        emb_cli_error_at(CMD, path, -1, "cannot open: %s", strerror(errno));
        *rc = EMB_EXIT_BAD;
        return NULL;
    }
    uint8_t *buf = malloc(MAX_INPUT + 1);
    size_t n = buf ? fread(buf, 1, MAX_INPUT + 1, f) : 0;
    bool err = ferror(f);
    fclose(f);
    if (!buf || err || n > MAX_INPUT) {
        emb_cli_error_at(CMD, path, -1, !buf ? "out of memory" : err ? "read error"
                                                                   : "larger than 16 MiB: not a record");
        free(buf);
        *rc = EMB_EXIT_BAD;
        return NULL;
    }
    *size = n;
    return buf;
}

/* The record's build id against the ELF's: v2 keeps a prefix. Refuses a mismatch. */
static int check_identity(struct crash *c)
{
    const uint8_t *id;
    size_t n = emb_elf_build_id(c->elf, &id);
    char a[80], b[160];
    const struct emb_crash_record *r = &c->rec;
    if (n == 0) {
        fprintf(stderr, "%s: %s has no build id: cannot check that the record comes from it\n",
                CMD, emb_elf_path(c->elf));
    } else {
        size_t cmp = n < r->build_id_len ? n : r->build_id_len;
        bool rest_zero = true;
        for (size_t i = cmp; i < r->build_id_len; i++)
            rest_zero &= r->build_id[i] == 0;
        if (memcmp(id, r->build_id, cmp) != 0 || !rest_zero) {
            emb_cli_error_at(CMD, c->file, c->base + (r->version == 1 ? EMB_CRASH_V1_OFF_BUILD_ID
                                                                      : EMB_CRASH_V2_OFF_BUILD_ID),
                             "the record comes from another build: record build id %s, %s has %s",
                             hex_bytes(r->build_id, r->build_id_len, a, sizeof a),
                             emb_elf_path(c->elf), hex_bytes(id, n, b, sizeof b));
            return -1;
        }
    }
    if (c->view.elf_machine && c->view.elf_machine != emb_elf_machine(c->elf)) {
        emb_cli_error_at(CMD, c->file, c->base + EMB_CRASH_V1_FIXED_SIZE,
                         "the record's registers are for ELF machine %u (%s), %s is machine %u",
                         c->view.elf_machine, c->view.name, emb_elf_path(c->elf),
                         emb_elf_machine(c->elf));
        return -1;
    }
    return 0;
}

/* A runtime code address as the ELF sees it: the native layouts record the load bias. */
static uint64_t elf_address(const struct crash *c, uint64_t runtime)
{
    if (c->view.native && runtime >= c->view.bias && emb_elf_in_text(c->elf, runtime - c->view.bias))
        return runtime - c->view.bias;
    return runtime;
}

static bool in_image(const struct crash *c, uint64_t runtime)
{
    return emb_elf_in_text(c->elf, elf_address(c, runtime));
}

/* The outermost function holding `addr` (inlined frames unwrapped); "" when unknown. */
static void function_of(struct crash *c, uint64_t addr, char *out, size_t len)
{
    struct emb_elf_frame f[MAX_FRAMES];
    uint64_t off;
    size_t n = in_image(c, addr) ? emb_elf_symbolize(c->elf, elf_address(c, addr), f, MAX_FRAMES, &off) : 0;
    snprintf(out, len, "%s", n ? f[n - 1].function : "");
}

/* The link register at a fault is the caller only in a function that has not reused it.
 * The call frame information says where the faulting function saved the return address,
 * so the unwound chain is believed first; without one, the link register only when it
 * points into another function's code. */
static void choose_caller(struct crash *c)
{
    struct emb_crash_view *v = &c->view;
    if (v->arch != EMB_CRASH_ARCH_CORTEX_M)
        return;
    c->ncalls = emb_crash_unwind(&c->rec, v, c->elf, c->calls, MAX_CALLS);
    if (c->ncalls > 0) {
        v->ra = c->calls[0];
        v->ra_source = EMB_CRASH_RA_CFI;
        return;
    }
    char pc_fn[128], lr_fn[128];
    function_of(c, v->pc, pc_fn, sizeof pc_fn);
    function_of(c, v->lr & ~(uint64_t)1, lr_fn, sizeof lr_fn);
    if (v->lr != 0 && lr_fn[0] != '\0' && strcmp(lr_fn, pc_fn) != 0) {
        v->ra = v->lr & ~(uint64_t)1;
        v->ra_source = EMB_CRASH_RA_REGISTER;
    } else {
        v->ra_source = EMB_CRASH_RA_NONE;
    }
}

static uint16_t field_u16(const struct emb_trace_event *e, size_t i)
{
    return (uint16_t)emb_catalog_field_get_uint(&e->ev->fields[i], e->payload);
}

static bool is_event(const struct emb_trace_event *e, const char *name)
{
    return e->type == EMB_TREC_EVENT && !strcmp(e->ev->name, name);
}

/* Last switches, the last interrupt, and the mutexes each context still holds. */
static void analyse_flight(struct crash *c)
{
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(c->trace, &n);
    uint64_t hz = emb_trace_info(c->trace)->clock_hz;
    uint64_t last = n ? ev[n - 1]->ts : 0;
    /* Relative to the fault when the record's clock and the trace's agree (within a
     * minute after the last event), else to the last event. */
    c->ref_is_fault = c->rec.version == 1 && c->rec.uptime_ticks >= last &&
                      c->rec.uptime_ticks - last <= 60u * (hz ? hz : 1u);
    c->ref_ts = c->ref_is_fault ? c->rec.uptime_ticks : last;
    for (size_t i = 0; i < n; i++) {
        const struct emb_trace_event *e = ev[i];
        if (is_event(e, "switch")) {
            if (c->nswitches == 5)
                memmove(c->switches, c->switches + 1, 4 * sizeof c->switches[0]);
            c->switches[c->nswitches < 5 ? c->nswitches++ : 4] = e;
        } else if (is_event(e, "irq_enter")) {
            c->irq_enter = e;
            c->irq_exit = NULL;
        } else if (is_event(e, "irq_exit") && c->irq_enter && e->ctx == c->irq_enter->ctx &&
                   field_u16(e, 0) == field_u16(c->irq_enter, 0)) {
            c->irq_exit = e;
        } else if (is_event(e, "mutex_lock") && c->nheld < 32) {
            uint32_t m = (uint32_t)emb_catalog_field_get_uint(&e->ev->fields[0], e->payload);
            c->held[c->nheld++] = (struct held){e->context_id, m, e->ts};
        } else if (is_event(e, "mutex_unlock")) {
            uint32_t m = (uint32_t)emb_catalog_field_get_uint(&e->ev->fields[0], e->payload);
            for (size_t k = c->nheld; k-- > 0;)
                if (c->held[k].ctx == e->context_id && c->held[k].mutex == m) {
                    memmove(&c->held[k], &c->held[k + 1], (c->nheld - k - 1) * sizeof c->held[0]);
                    c->nheld--;
                    break;
                }
        }
    }
}

/* The name obj_init gave a handle in the flight recorder, or NULL. */
static const char *handle_name(const struct crash *c, uint32_t handle, char *buf, size_t len)
{
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(c->trace, &n);
    for (size_t i = n; i-- > 0;) {
        if (!is_event(ev[i], "obj_init") ||
            (uint32_t)emb_catalog_field_get_uint(&ev[i]->ev->fields[1], ev[i]->payload) != handle)
            continue;
        const char *text;
        size_t tl = emb_trace_field_chars(&ev[i]->ev->fields[2], ev[i]->payload, &text);
        emb_text_escape(buf, len, text, tl); /* the target's bytes, bound for a terminal */
        return buf;
    }
    return NULL;
}

/* Target-derived text made safe for a terminal, in one of a few rotating buffers (a
 * line prints at most two). */
static const char *esc(const char *text)
{
    static char buf[4][4 * 64];
    static unsigned next;
    return emb_text_escape_str(buf[next++ % 4u], sizeof buf[0], text);
}

static const char *context_name(const struct crash *c, uint16_t id)
{
    long i = c->trace ? emb_trace_context_index(c->trace, id) : -1;
    return i >= 0 ? esc(emb_trace_context(c->trace, (size_t)i)->name) : NULL;
}

/* Signed microseconds from the reference to `ts`. */
static double rel_us(const struct crash *c, uint64_t ts)
{
    uint64_t hz = emb_trace_info(c->trace)->clock_hz;
    if (!hz)
        return 0;
    double d = ts >= c->ref_ts ? (double)emb_trace_ticks_to_ns(ts - c->ref_ts, hz)
                               : -(double)emb_trace_ticks_to_ns(c->ref_ts - ts, hz);
    return d / 1000.0;
}

/* ---- Text ---- */

static const char *color(enum emb_color k)
{
    return emb_color_code(stdout, k);
}

static void print_frames(struct crash *c, const char *label, uint64_t runtime, const char *note)
{
    uint64_t addr = elf_address(c, runtime);
    printf("%s%-10s%s 0x%08" PRIx64, color(EMB_C_BOLD), label, color(EMB_C_RESET), addr);
    if (c->view.native && addr != runtime)
        printf(" (runtime 0x%" PRIx64 ")", runtime);
    if (!in_image(c, runtime)) {
        printf("  %soutside %s%s%s\n", color(EMB_C_YELLOW), emb_elf_path(c->elf),
               c->view.native ? " (a shared library?)" : "", color(EMB_C_RESET));
        return;
    }
    struct emb_elf_frame f[MAX_FRAMES];
    uint64_t off;
    size_t n = emb_elf_symbolize(c->elf, addr, f, MAX_FRAMES, &off);
    if (n == 0) {
        printf("  (no symbol)%s%s\n", note ? "  " : "", note ? note : "");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            printf("%-10s   %*s", "", 8, "");
        printf("  %s%s%s", color(EMB_C_GREEN), f[i].function[0] ? f[i].function : "??",
               color(EMB_C_RESET));
        if (i == n - 1 && off)
            printf("+0x%" PRIx64, off);
        if (f[i].line)
            printf("  %s%s:%d%s", color(EMB_C_CYAN), f[i].file, f[i].line, color(EMB_C_RESET));
        if (f[i].inlined)
            printf("  %s(inlined into %s)%s", color(EMB_C_DIM), f[i + 1 < n ? i + 1 : i].function,
                   color(EMB_C_RESET));
        if (i == 0 && note)
            printf("  %s%s%s", color(EMB_C_DIM), note, color(EMB_C_RESET));
        printf("\n");
    }
}

static void format_fields(const struct crash *c, const struct emb_trace_event *e, char *buf,
                          size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (e->type != EMB_TREC_EVENT) {
        snprintf(buf, len, e->type == EMB_TREC_UNKNOWN ? "unknown event id %u"
                           : e->type == EMB_TREC_DISCARDED ? "%u events discarded"
                                                           : "%u packets lost",
                 e->type == EMB_TREC_UNKNOWN ? e->id : e->count);
        return;
    }
    for (size_t k = 0; k < e->ev->nfields && used < len; k++) {
        const struct emb_catalog_field *f = &e->ev->fields[k];
        char v[320], name[64];
        emb_trace_field_text(f, e->payload, v, sizeof v);
        if (f->meaning == EMB_CAT_MEANING_PC) {
            emb_elf_describe(c->elf, elf_address(c, emb_catalog_field_get_uint(f, e->payload)), v,
                             sizeof v);
        } else if (f->meaning == EMB_CAT_MEANING_HANDLE &&
                   handle_name(c, (uint32_t)emb_catalog_field_get_uint(f, e->payload), name, sizeof name)) {
            size_t l = strlen(v);
            snprintf(v + l, sizeof v - l, " \"%s\"", name);
        } else if (f->meaning == EMB_CAT_MEANING_THREAD) {
            const char *cn = context_name(c, (uint16_t)emb_catalog_field_get_uint(f, e->payload));
            if (cn) {
                size_t l = strlen(v);
                snprintf(v + l, sizeof v - l, " (%s)", cn);
            }
        }
        int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", f->name, v);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static void print_event(const struct crash *c, const struct emb_trace_event *e)
{
    char fields[1024];
    format_fields(c, e, fields, sizeof fields);
    const struct emb_trace_context *ctx = emb_trace_context(c->trace, e->ctx);
    const char *kind = e->kind == EMB_EVT_KIND_ISR ? "isr" : e->kind == EMB_EVT_KIND_FAULT ? "FAULT" : "";
    printf("  %+14.3f us  %-12s %-5s %s%-16s%s %s\n", rel_us(c, e->ts), esc(ctx->name), kind,
           color(EMB_C_BOLD), e->type == EMB_TREC_EVENT ? e->ev->name : "(loss)", color(EMB_C_RESET),
           fields);
}

static void print_flight(struct crash *c)
{
    const struct emb_trace_summary *s = emb_trace_summary(c->trace);
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(c->trace, &n);
    const char *ref = c->ref_is_fault ? "the fault" : "the last event";
    printf("\n%sFlight recorder%s: %" PRIu64 " events in %" PRIu64 " packets from %zu contexts; "
           "times are relative to %s\n",
           color(EMB_C_BOLD), color(EMB_C_RESET), s->events, s->packets,
           emb_trace_context_count(c->trace), ref);
    if (s->discarded || s->lost_packets)
        printf("  %s%" PRIu64 " events discarded, %" PRIu64 " packets lost before these%s\n",
               color(EMB_C_YELLOW), s->discarded, s->lost_packets, color(EMB_C_RESET));
    printf("\n%sLast switches%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    if (!c->nswitches)
        printf("  (none in the flight recorder)\n");
    for (size_t i = 0; i < c->nswitches; i++)
        print_event(c, c->switches[i]);
    printf("\n%sLast interrupt%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    if (!c->irq_enter) {
        printf("  (none in the flight recorder)\n");
    } else {
        const struct emb_trace_context *ctx = emb_trace_context(c->trace, c->irq_enter->ctx);
        printf("  irq %u on %s at %+.3f us", field_u16(c->irq_enter, 0), esc(ctx->name),
               rel_us(c, c->irq_enter->ts));
        if (c->irq_exit)
            printf(", ran %.3f us\n", rel_us(c, c->irq_exit->ts) - rel_us(c, c->irq_enter->ts));
        else
            printf(", still running\n");
    }
    printf("\n%sLocks held%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    if (!c->nheld)
        printf("  (none taken in the flight recorder and still held)\n");
    for (size_t i = 0; i < c->nheld; i++) {
        char name[64];
        const char *cn = context_name(c, c->held[i].ctx);
        const char *hn = handle_name(c, c->held[i].mutex, name, sizeof name);
        printf("  mutex 0x%" PRIx32 "%s%s%s held by %s%s since %+.3f us\n", c->held[i].mutex,
               hn ? " \"" : "", hn ? hn : "", hn ? "\"" : "", cn ? cn : "?",
               c->held[i].ctx == c->rec.thread_index ? " (the faulting thread)" : "",
               rel_us(c, c->held[i].ts));
    }
    size_t first = c->events > 0 && (size_t)c->events < n ? n - (size_t)c->events : 0;
    printf("\n%sLast events%s (%zu of %zu)\n", color(EMB_C_BOLD), color(EMB_C_RESET), n - first, n);
    for (size_t i = first; i < n; i++)
        print_event(c, ev[i]);
}

static void print_mini(const struct crash *c)
{
    if (!c->nminis)
        return;
    printf("\n%sMini-records%s (%zu contained faults, oldest first)\n", color(EMB_C_BOLD),
           color(EMB_C_RESET), c->nminis);
    for (size_t i = 0; i < c->nminis && i < MAX_MINI; i++) {
        const struct emb_crash_mini *m = &c->minis[i];
        char d[256];
        printf("  #%-4" PRIu32 " partition %u thread %u.%u  %s code %u  pc %s  at tick %" PRIu64 "\n",
               m->sequence, m->partition, m->thread, m->generation,
               emb_crash_fault_class_name(m->fault_class), m->fault_code,
               emb_elf_describe(c->elf, m->pc, d, sizeof d), m->uptime_ticks);
    }
}

/* Cycles as time, when the flight recorder gives the clock. */
static void print_cycles(const struct crash *c, uint32_t cycles)
{
    uint64_t hz = c->trace ? emb_trace_info(c->trace)->clock_hz : 0;
    printf("%" PRIu32 " cycles", cycles);
    if (hz)
        printf(" (%.1f us)", (double)emb_trace_ticks_to_ns(cycles, hz) / 1000.0);
}

/* What raised the fault: the monitor and its numbers, the signal, or the class's code. */
static void print_cause(const struct crash *c)
{
    const struct emb_crash_record *r = &c->rec;
    const struct emb_crash_view *v = &c->view;
    char name[32];
    if (r->fault_class == EMB_FAULT_MONITOR) {
        printf(" %s: an interval of ", emb_crash_monitor_name(r->fault_code, name, sizeof name));
        print_cycles(c, r->monitor_interval);
        printf(" crossed the threshold of ");
        print_cycles(c, r->monitor_threshold);
        printf("\n");
        return;
    }
    if (v->native && v->signo == 0)
        printf(", raised by the library (no signal), code %u", r->fault_code);
    else if (v->native)
        printf(", %s, %s", emb_crash_signal_name(v->signo), emb_crash_si_code_text(v->signo, v->si_code));
    else
        printf(", code %u", r->fault_code);
    printf(", at address 0x%" PRIx64 "%s\n", v->fault_address,
           r->addr_lost & EMB_CRASH_V2_LOST_DATA ? " (partial)" : "");
}

/* A v2 record whose 16-bit fields could not hold an address says so; such an address is
 * shown as the bits it kept, never symbolised as if it were whole. */
static void print_partial(const char *label, uint64_t value)
{
    printf("%s%-10s%s 0x%08" PRIx64 "  %sPARTIAL: only the low bits the 16-bit field kept; "
           "not symbolised%s\n",
           color(EMB_C_BOLD), label, color(EMB_C_RESET), value, color(EMB_C_YELLOW),
           color(EMB_C_RESET));
}

static void print_text(struct crash *c)
{
    const struct emb_crash_record *r = &c->rec;
    const struct emb_crash_view *v = &c->view;
    char hex[80];
    if (!c->has_record) {
        printf("%s: no crash record\n", c->file);
        print_mini(c);
        return;
    }
    printf("%sCrash record v%u%s, %u bytes, CRC %08" PRIx32 " ok\n", color(EMB_C_BOLD), r->version,
           color(EMB_C_RESET), r->length, r->crc);
    printf("%-10s %s%s\n", "build id", hex_bytes(r->build_id, r->build_id_len, hex, sizeof hex),
           r->version == 2 ? " (prefix)" : "");
    if (r->fw_version[0])
        printf("%-10s %s\n", "firmware", esc(r->fw_version));
    printf("%-10s %s%s%s", "fault", color(EMB_C_RED), emb_crash_fault_class_name(r->fault_class),
           color(EMB_C_RESET));
    print_cause(c);
    if (r->addr_lost)
        printf("%-10s %s%s%s%sdid not fit the v2 record's 16-bit fields: their high bits are lost%s\n",
               "addresses", color(EMB_C_YELLOW),
               r->addr_lost & EMB_CRASH_V2_LOST_CODE ? "pc or lr " : "",
               r->addr_lost == (EMB_CRASH_V2_LOST_CODE | EMB_CRASH_V2_LOST_DATA) ? "and " : "",
               r->addr_lost & EMB_CRASH_V2_LOST_DATA ? "fault address, sp or stack base " : "",
               color(EMB_C_RESET));
    const char *tname = context_name(c, r->thread_index);
    printf("%-10s %u%s%s%s, generation %u", "thread", r->thread_index, tname ? " \"" : "",
           tname ? tname : "", tname ? "\"" : "", r->thread_generation);
    if (r->version == 1)
        printf(", cpu %u, partition %u", r->cpu_id, r->partition_id);
    printf("\n%-10s %s; uptime %" PRIu64 " ticks", "reset", emb_crash_reset_reason_name(r->reset_reason),
           r->uptime_ticks);
    uint64_t hz = c->trace ? emb_trace_info(c->trace)->clock_hz : 0;
    if (hz)
        printf(" (%.6f s at %" PRIu64 " Hz)", (double)r->uptime_ticks / (double)hz, hz);
    printf("\n\n");
    if (r->addr_lost & EMB_CRASH_V2_LOST_CODE)
        print_partial("pc", v->pc);
    else
        print_frames(c, "pc", v->pc,
                     r->fault_class == EMB_FAULT_MONITOR ? "(the code that opened the interval)" : NULL);
    if (r->addr_lost & EMB_CRASH_V2_LOST_CODE) {
        if (v->ra)
            print_partial("caller", v->ra);
    } else if (v->ra_source != EMB_CRASH_RA_NONE) {
        char note[96];
        if (v->ra_source == EMB_CRASH_RA_STACK_SCAN)
            snprintf(note, sizeof note, "(return address found on the stack, sp+%u)", v->ra_offset);
        else if (v->ra_source == EMB_CRASH_RA_CFI)
            snprintf(note, sizeof note, "(unwound with the image's call frame information)");
        else
            snprintf(note, sizeof note, "(link register)");
        print_frames(c, "caller", v->ra, note);
        for (size_t i = 1; v->ra_source == EMB_CRASH_RA_CFI && i < c->ncalls; i++)
            print_frames(c, "called by", c->calls[i], NULL);
    } else if (v->arch == EMB_CRASH_ARCH_CORTEX_M) {
        printf("%s%-10s%s unknown: lr 0x%08" PRIx64 " is no return address into a caller, and the "
               "record keeps no stack to unwind\n", color(EMB_C_BOLD), "caller", color(EMB_C_RESET), v->lr);
    }
    printf("%-10s sp 0x%" PRIx64, "stack", v->sp);
    if (v->stack_low && v->stack_size) {
        uint64_t high = v->stack_low + v->stack_size;
        printf(" in 0x%" PRIx64 "..0x%" PRIx64 " (%u KiB)", v->stack_low, high, v->stack_size / 1024);
        if (v->sp >= v->stack_low && v->sp <= high)
            printf(", %" PRIu64 " bytes in use", high - v->sp);
        else
            printf(", %sOUTSIDE the stack%s", color(EMB_C_RED), color(EMB_C_RESET));
    }
    printf("\n");
    struct emb_crash_status_item st[16];
    size_t ns = emb_crash_status_decode(r, v, st, 16);
    for (size_t i = 0; i < ns; i++)
        printf("%-10s %-10s 0x%08" PRIx64 "  %s\n", i == 0 ? "status" : "", st[i].name, st[i].value,
               st[i].text);
    struct emb_crash_reg regs[64];
    size_t nr = emb_crash_registers(r, v, regs, 64);
    for (size_t i = 0; i < nr; i++) {
        if (i % 4 == 0)
            printf("%-10s", i == 0 ? "registers" : "");
        printf(" %-4s %0*" PRIx64, regs[i].name, v->native ? 16 : 8, regs[i].value);
        if (i % 4 == 3 || i + 1 == nr)
            printf("\n");
    }
    if (c->trace)
        print_flight(c);
    else
        printf("\n(no flight recorder in this record)\n");
    print_mini(c);
}

/* ---- JSON ---- */

static void json_hex(struct emb_json *j, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    emb_json_string(j, key, buf);
}

/* A code address and its frames; a partial one (a v2 field that could not hold it) is
 * not symbolised. */
static void json_code_address(struct emb_json *j, struct crash *c, const char *key,
                              uint64_t runtime, bool partial)
{
    uint64_t addr = elf_address(c, runtime);
    emb_json_begin_object(j, key);
    json_hex(j, "address", addr);
    json_hex(j, "runtime", runtime);
    emb_json_bool(j, "partial", partial);
    emb_json_bool(j, "in_image", !partial && in_image(c, runtime));
    struct emb_elf_frame f[MAX_FRAMES];
    uint64_t off = 0;
    size_t n = !partial && in_image(c, runtime) ? emb_elf_symbolize(c->elf, addr, f, MAX_FRAMES, &off) : 0;
    emb_json_uint(j, "offset", off);
    emb_json_begin_array(j, "frames");
    for (size_t i = 0; i < n; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_string(j, "function", f[i].function);
        emb_json_string(j, "file", f[i].file);
        emb_json_int(j, "line", f[i].line);
        emb_json_bool(j, "inlined", f[i].inlined);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_json_end_object(j);
}

static void json_address(struct emb_json *j, struct crash *c, const char *key, uint64_t runtime)
{
    json_code_address(j, c, key, runtime, false);
}

/* The trace's own record object ({"ts", "ns", "context", "event", "fields", ...}); the
 * flight object's reference_ts gives the time they are relative to in the text. */
static void json_event(struct emb_json *j, const struct crash *c, const struct emb_trace_event *e)
{
    emb_trace_json_record(j, c->trace, e);
}

static void json_flight(struct emb_json *j, struct crash *c)
{
    const struct emb_trace_summary *s = emb_trace_summary(c->trace);
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(c->trace, &n);
    emb_json_begin_object(j, "flight");
    emb_json_uint(j, "packets", s->packets);
    emb_json_uint(j, "events", s->events);
    emb_json_uint(j, "discarded", s->discarded);
    emb_json_uint(j, "lost_packets", s->lost_packets);
    emb_json_string(j, "reference", c->ref_is_fault ? "fault" : "last_event");
    emb_json_uint(j, "reference_ts", c->ref_ts);
    emb_trace_json_contexts(j, c->trace);
    emb_json_begin_array(j, "switches");
    for (size_t i = 0; i < c->nswitches; i++)
        json_event(j, c, c->switches[i]);
    emb_json_end_array(j);
    if (c->irq_enter) {
        emb_json_begin_object(j, "last_interrupt");
        emb_json_uint(j, "irq", field_u16(c->irq_enter, 0));
        emb_json_string(j, "context", emb_trace_context(c->trace, c->irq_enter->ctx)->name);
        emb_json_double(j, "us", rel_us(c, c->irq_enter->ts));
        if (c->irq_exit)
            emb_json_double(j, "ran_us", rel_us(c, c->irq_exit->ts) - rel_us(c, c->irq_enter->ts));
        else
            emb_json_null(j, "ran_us");
        emb_json_end_object(j);
    } else {
        emb_json_null(j, "last_interrupt");
    }
    emb_json_begin_array(j, "locks_held");
    for (size_t i = 0; i < c->nheld; i++) {
        char name[64];
        const char *cn = context_name(c, c->held[i].ctx);
        emb_json_begin_object(j, NULL);
        json_hex(j, "mutex", c->held[i].mutex);
        const char *hn = handle_name(c, c->held[i].mutex, name, sizeof name);
        if (hn)
            emb_json_string(j, "name", hn);
        else
            emb_json_null(j, "name");
        emb_json_uint(j, "context_id", c->held[i].ctx);
        emb_json_string(j, "context", cn ? cn : "");
        emb_json_double(j, "us", rel_us(c, c->held[i].ts));
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    size_t first = c->events > 0 && (size_t)c->events < n ? n - (size_t)c->events : 0;
    emb_json_begin_array(j, "last_events");
    for (size_t i = first; i < n; i++)
        json_event(j, c, ev[i]);
    emb_json_end_array(j);
    emb_json_end_object(j);
}

static void print_json(struct crash *c)
{
    const struct emb_crash_record *r = &c->rec;
    const struct emb_crash_view *v = &c->view;
    struct emb_json j;
    char hex[160];
    emb_json_init(&j, stdout, true);
    j.flat_depth = 4;
    emb_json_begin_object(&j, NULL);
    emb_json_string(&j, "file", c->file);
    if (c->has_record) {
        emb_json_begin_object(&j, "record");
        emb_json_uint(&j, "version", r->version);
        emb_json_uint(&j, "length", r->length);
        json_hex(&j, "crc", r->crc);
        emb_json_string(&j, "build_id", hex_bytes(r->build_id, r->build_id_len, hex, sizeof hex));
        emb_json_string(&j, "fw_version", r->fw_version);
        emb_json_uint(&j, "uptime_ticks", r->uptime_ticks);
        emb_json_string(&j, "reset_reason", emb_crash_reset_reason_name(r->reset_reason));
        emb_json_uint(&j, "cpu", r->cpu_id);
        emb_json_uint(&j, "partition", r->partition_id);
        /* v2: which addresses its 16-bit fields could not hold whole */
        emb_json_bool(&j, "code_addresses_partial", r->addr_lost & EMB_CRASH_V2_LOST_CODE);
        emb_json_bool(&j, "data_addresses_partial", r->addr_lost & EMB_CRASH_V2_LOST_DATA);
        emb_json_end_object(&j);
        const uint8_t *id;
        size_t idn = emb_elf_build_id(c->elf, &id);
        emb_json_begin_object(&j, "elf");
        emb_json_string(&j, "path", emb_elf_path(c->elf));
        emb_json_string(&j, "build_id", hex_bytes(id, idn, hex, sizeof hex));
        emb_json_end_object(&j);
        emb_json_begin_object(&j, "fault");
        emb_json_string(&j, "class", emb_crash_fault_class_name(r->fault_class));
        emb_json_uint(&j, "code", r->fault_code);
        if (v->native && v->signo == 0) {
            emb_json_null(&j, "signal");
            emb_json_string(&j, "cause", "raised by the library");
        } else if (v->native) {
            emb_json_string(&j, "signal", emb_crash_signal_name(v->signo));
            emb_json_string(&j, "cause", emb_crash_si_code_text(v->signo, v->si_code));
        }
        if (r->fault_class == EMB_FAULT_MONITOR) {
            char name[32];
            emb_json_null(&j, "address");
            emb_json_begin_object(&j, "monitor");
            emb_json_string(&j, "category", emb_crash_monitor_name(r->fault_code, name, sizeof name));
            emb_json_uint(&j, "interval_cycles", r->monitor_interval);
            emb_json_uint(&j, "threshold_cycles", r->monitor_threshold);
            emb_json_end_object(&j);
        } else {
            json_hex(&j, "address", v->fault_address);
        }
        emb_json_end_object(&j);
        emb_json_begin_object(&j, "thread");
        emb_json_uint(&j, "index", r->thread_index);
        emb_json_uint(&j, "generation", r->thread_generation);
        const char *tn = context_name(c, r->thread_index);
        if (tn)
            emb_json_string(&j, "name", tn);
        else
            emb_json_null(&j, "name");
        emb_json_end_object(&j);
        emb_json_string(&j, "arch", v->name);
        bool code_partial = r->addr_lost & EMB_CRASH_V2_LOST_CODE;
        json_code_address(&j, c, "pc", v->pc, code_partial);
        if (v->ra_source != EMB_CRASH_RA_NONE) {
            json_code_address(&j, c, "caller", v->ra, code_partial);
            emb_json_string(&j, "caller_source",
                            v->ra_source == EMB_CRASH_RA_STACK_SCAN ? "stack_scan"
                            : v->ra_source == EMB_CRASH_RA_CFI      ? "call_frame_information"
                                                                    : "link_register");
            emb_json_begin_array(&j, "backtrace");
            for (size_t i = 0; v->ra_source == EMB_CRASH_RA_CFI && i < c->ncalls; i++)
                json_address(&j, c, NULL, c->calls[i]);
            emb_json_end_array(&j);
        } else {
            emb_json_null(&j, "caller");
        }
        emb_json_begin_object(&j, "stack");
        json_hex(&j, "sp", v->sp);
        json_hex(&j, "low", v->stack_low);
        emb_json_uint(&j, "size", v->stack_size);
        emb_json_end_object(&j);
        emb_json_begin_array(&j, "status");
        struct emb_crash_status_item st[16];
        size_t ns = emb_crash_status_decode(r, v, st, 16);
        for (size_t i = 0; i < ns; i++) {
            emb_json_begin_object(&j, NULL);
            emb_json_string(&j, "name", st[i].name);
            json_hex(&j, "value", st[i].value);
            emb_json_string(&j, "text", st[i].text);
            emb_json_end_object(&j);
        }
        emb_json_end_array(&j);
        emb_json_begin_object(&j, "registers");
        struct emb_crash_reg regs[64];
        size_t nr = emb_crash_registers(r, v, regs, 64);
        for (size_t i = 0; i < nr; i++)
            json_hex(&j, regs[i].name, regs[i].value);
        emb_json_end_object(&j);
        if (c->trace)
            json_flight(&j, c);
        else
            emb_json_null(&j, "flight");
    } else {
        emb_json_null(&j, "record");
    }
    emb_json_begin_array(&j, "mini_records");
    for (size_t i = 0; i < c->nminis && i < MAX_MINI; i++) {
        const struct emb_crash_mini *m = &c->minis[i];
        emb_json_begin_object(&j, NULL);
        emb_json_uint(&j, "sequence", m->sequence);
        emb_json_uint(&j, "partition", m->partition);
        emb_json_uint(&j, "thread", m->thread);
        emb_json_uint(&j, "generation", m->generation);
        emb_json_string(&j, "class", emb_crash_fault_class_name(m->fault_class));
        emb_json_uint(&j, "code", m->fault_code);
        json_address(&j, c, "pc", m->pc);
        emb_json_uint(&j, "uptime_ticks", m->uptime_ticks);
        emb_json_end_object(&j);
    }
    emb_json_end_array(&j);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

/* ---- The command ---- */

static int decode_flight(struct crash *c)
{
    if (!c->rec.flight)
        return 0;
    struct emb_trace_options opt = {
        .catalog = c->cat,
        .name = c->file,
        .base_offset = (uint64_t)c->base + c->rec.flight_offset,
    };
    c->trace = emb_trace_decode(c->rec.flight, c->rec.flight_len, &opt);
    if (!c->trace) {
        emb_cli_error_at(CMD, c->file, -1, "out of memory");
        return -1;
    }
    const struct emb_trace_summary *s = emb_trace_summary(c->trace);
    if (s->packets != c->rec.flight_packets && !s->fatal)
        emb_cli_error_at(CMD, c->file, c->base + (c->rec.version == 1 ? EMB_CRASH_V1_OFF_FLIGHT_COUNT
                                                                      : EMB_CRASH_V2_OFF_FLIGHT_COUNT),
                         "the record announces %u flight packets, %" PRIu64 " decode",
                         c->rec.flight_packets, s->packets);
    if (s->packets != c->rec.flight_packets && !s->fatal)
        c->findings++; /* CRC-valid, yet not what it says it holds */
    if (s->fatal || s->errors) {
        size_t n;
        const struct emb_trace_issue *is = emb_trace_issues(c->trace, &n);
        for (size_t i = 0; i < n; i++)
            emb_cli_error_at(CMD, c->file, is[i].offset, "flight recorder: %s", is[i].message);
    }
    if (s->fatal) {
        emb_trace_free(c->trace);
        c->trace = NULL;
        return -1;
    }
    analyse_flight(c);
    return s->errors ? -1 : 0;
}

/* A sealed capture: its crash section becomes the input (the capture stays alive in
 * *capture while the record is used). 0, or -1 after saying why. */
static int open_capture(struct crash *c, struct emb_capture **capture)
{
    const struct emb_catalog *cat = emb_catalog_builtin();
    /* Only the crash section is read: the trace is not decoded, its catalogue not needed. */
    struct emb_capture_options opt = {.catalog = cat, .name = c->file, .skip_trace = true,
                                      .ignore_checksum = true};
    *capture = cat ? emb_capture_decode(c->data, c->size, &opt) : NULL;
    long long off;
    const char *msg;
    if (*capture == NULL) {
        emb_cli_error_at(CMD, c->file, -1, "out of memory");
        return -1;
    }
    if (emb_capture_failed(*capture, &off, &msg)) {
        emb_cli_error_at(CMD, c->file, off, "%s", msg);
        return -1;
    }
    const struct emb_capture_section *s = emb_capture_section(*capture, EMB_CAP_SEC_CRASH);
    if (s == NULL) {
        emb_cli_error_at(CMD, c->file, -1, "the capture holds no crash section (the target sent "
                                           "no crash record, and none was given with --crash)");
        return -1;
    }
    c->base = (long long)s->offset;
    c->data = (uint8_t *)s->data;
    c->size = (size_t)s->length;
    return 0;
}

int emb_cmd_crash(int argc, char **argv)
{
    struct args a = {.events = 24};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;

    struct crash c = {.file = a.file, .events = a.events};
    c.data = read_input(a.file, &c.size, &rc);
    if (!c.data)
        return rc;
    uint8_t *file_bytes = c.data;
    struct emb_capture *capture = NULL;
    if (c.size >= 4 && emb_get_le32(c.data) == EMB_CAP_MAGIC && open_capture(&c, &capture) != 0) {
        emb_capture_free(capture);
        free(file_bytes);
        return EMB_EXIT_BAD;
    }
    struct emb_crash_error err;
    c.has_record = emb_crash_decode(c.data, c.size, &c.rec, &err) == 0;
    bool magic_missing = !c.has_record && err.offset == 0;
    c.nminis = emb_crash_mini_scan(c.data, c.size, c.has_record ? c.rec.length : 0, c.minis, MAX_MINI);
    if (!c.has_record && (!magic_missing || c.nminis == 0 || capture)) {
        emb_cli_error_at(CMD, a.file, c.base + err.offset, "%s", err.message);
        emb_capture_free(capture);
        free(file_bytes);
        return EMB_EXIT_BAD;
    }
    char msg[512];
    struct emb_catalog *own = NULL;
    if (!(c.elf = emb_elf_open(a.elf, msg, sizeof msg))) {
        emb_cli_error(CMD, "%s", msg);
        emb_capture_free(capture);
        free(file_bytes);
        return EMB_EXIT_BAD;
    }
    rc = EMB_EXIT_OK;
    if (a.catalog) {
        if (!(own = emb_catalog_load(a.catalog, msg, sizeof msg))) {
            emb_cli_error(CMD, "%s", msg);
            rc = EMB_EXIT_BAD;
        }
        c.cat = own;
    } else if (!(c.cat = emb_catalog_builtin())) {
        emb_cli_error(CMD, "the built-in catalogue does not parse");
        rc = EMB_EXIT_BAD;
    }
    bool show = rc == EMB_EXIT_OK;
    if (show && c.has_record) {
        emb_crash_view(&c.rec, &c.view);
        choose_caller(&c);
        if (check_identity(&c) != 0) {
            rc = EMB_EXIT_BAD; /* refused: nothing of another build's record is shown */
            show = false;
        } else if (decode_flight(&c) != 0) {
            rc = EMB_EXIT_BAD; /* reported; the record itself is still shown */
        }
    }
    if (show) {
        if (a.json)
            print_json(&c);
        else
            print_text(&c);
    }
    if (rc == EMB_EXIT_OK && c.findings)
        rc = EMB_EXIT_FINDINGS;
    fflush(stdout);
    if (c.trace)
        emb_trace_free(c.trace);
    if (own)
        emb_catalog_free(own);
    emb_elf_close(c.elf);
    emb_capture_free(capture);
    free(file_bytes);
    return rc;
}
