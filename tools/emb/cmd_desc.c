/* `emb desc`: what the debug descriptor of a memory image says: contexts with their state
 * and statistics, rings with fill and discard counts, monitors with symbolised openers,
 * objects, the crash record; and the rings pulled out as a trace file. */
#define _GNU_SOURCE

#include "command.h"

#include "crash_decode.h"
#include "crash_report.h"
#include "desc_read.h"
#include "desc_threads.h"
#include "elf_image.h"
#include "probe.h"

static const char *const CMD = "emb desc";
#define SCAN_MAX (256ull << 20)


struct args {
    const char *elf, *dump, *core, *dump_trace, *catalog, *gdb;
    long pid;
    uint64_t base;
    bool has_base, json;
};

enum { OPT_PID = 256, OPT_CORE, OPT_DUMP, OPT_BASE, OPT_TRACE, OPT_GDB };

static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_ELF(struct args),
    EMB_CLI_CALL("pid", required_argument, OPT_PID),
    EMB_CLI_STRING("core", OPT_CORE, struct args, core),
    EMB_CLI_STRING("dump", OPT_DUMP, struct args, dump),
    EMB_CLI_CALL("base", required_argument, OPT_BASE),
    EMB_CLI_STRING("dump-trace", OPT_TRACE, struct args, dump_trace),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_OPTION_CATALOG(struct args),
    EMB_CLI_STRING("gdb", OPT_GDB, struct args, gdb),
    EMB_CLI_OPTIONS_END,
};

static const struct emb_cli_command COMMAND = {.name = CMD, .help = emb_help_desc, .options = OPTIONS};

static int on_option(void *arg, int opt, char *value)
{
    struct args *a = arg;
    uint64_t pid;
    switch (opt) {
    case OPT_PID:
        if (emb_cli_option_u64(CMD, "pid", value, 1, INT32_MAX, "a process id", &pid) != 0)
            return EMB_EXIT_BAD;
        a->pid = (long)pid;
        return EMB_EXIT_OK;
    case OPT_BASE:
        a->has_base = true;
        return emb_cli_option_u64(CMD, "base", value, 0, UINT64_MAX, "an address", &a->base);
    }
    return EMB_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, on_option, a);
    if (rc != 0)
        return rc;
    int sources = (a->pid > 0) + (a->core != NULL) + (a->dump != NULL) + (a->gdb != NULL);
    if (optind != argc) {
        emb_cli_error(CMD, "unexpected argument '%s'", argv[optind]);
        return EMB_EXIT_BAD;
    }
    if (sources != 1) {
        emb_cli_error(CMD, "one source, please: --pid PID, --gdb HOST:PORT, --core FILE or --dump FILE --base ADDR");
        return EMB_EXIT_BAD;
    }
    if (a->dump && !a->has_base) {
        emb_cli_error(CMD, "--dump needs --base ADDR: the address of its first byte");
        return EMB_EXIT_BAD;
    }
    if (!a->dump && !a->elf) {
        emb_cli_error(CMD, "--elf FW is needed with --pid, --gdb and --core");
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

struct desc {
    struct emb_probe *probe; /* --gdb: owns mem */
    bool released;
    struct emb_mem *mem;
    struct emb_elf *elf;
    uint64_t bias;
    struct emb_desc_image image;
    struct emb_desc_model model;
    struct emb_problems issues; /* what reading the image found */
    struct emb_command_input dump; /* --dump: the bytes (a capture's descriptor section) */
    char name[320];                /* the source for messages: "pid 12", "dump FILE" */
};

static const char *symbolise(struct desc *d, uint64_t runtime, char *buf, size_t len)
{
    if (!runtime) {
        snprintf(buf, len, "-");
        return buf;
    }
    if (!d->elf || runtime < d->bias || !emb_elf_in_text(d->elf, runtime - d->bias)) {
        snprintf(buf, len, "0x%" PRIx64, runtime);
        return buf;
    }
    return emb_elf_describe(d->elf, runtime - d->bias, buf, len);
}

static double to_us(const struct desc *d, uint64_t cycles)
{
    return d->model.clock_hz ? (double)cycles * 1e6 / (double)d->model.clock_hz : 0.0;
}

static uint64_t stat_of(const struct emb_desc_stat *s, size_t n, const char *name, bool *found)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s[i].name, name)) {
            if (found)
                *found = true;
            return s[i].value;
        }
    if (found)
        *found = false;
    return 0;
}

static const char *mode_name(uint32_t mode)
{
    return mode == 0 ? "snapshot" : mode == 1 ? "window" : mode == 2 ? "streaming" : "?";
}

static const char *color(enum emb_color c)
{
    return emb_color_code(stdout, c);
}

/* ---- Text ---- */

static void print_crash_summary(struct desc *d)
{
    const struct emb_desc_model *m = &d->model;
    printf("\n%sCrash record%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    if (!m->has_crash) {
        printf("  no retained region set up\n");
        return;
    }
    printf("  area 0x%" PRIx64 ", %u bytes, the writer encodes v%u; at start: %s", m->crash_area,
           m->crash_cap, m->crash_version,
           m->crash_found == 0 ? "a record" : m->crash_found == 5 ? "none" : "a torn record");
    if (m->crash_found == 0)
        printf(" of %u bytes", m->crash_found_length);
    printf("\n");
    struct emb_crash_record r;
    struct emb_problems e;
    emb_problems_init(&e, NULL);
    if (m->crash_bytes && emb_crash_decode(m->crash_bytes, m->crash_cap, &r, &e) == 0) {
        char where[300];
        printf("  now: a v%u record of %u bytes: %s fault, pc %s\n", r.version, r.length,
               emb_crash_fault_class_name(r.fault_class),
               d->elf ? emb_elf_describe(d->elf, r.pc, where, sizeof where) : "(no --elf)");
    } else {
        printf("  now: %s\n", m->crash_bytes ? (e.n == 0 || e.items[0].offset == 0 ? "no record"
                                                                                : e.items[0].message)
                                              : "the area is not in this image");
    }
    emb_problems_free(&e);
    if (m->has_mini && m->mini_bytes) {
        struct emb_crash_mini mini[64];
        size_t n = emb_crash_mini_scan(m->mini_bytes, (size_t)m->mini_entries * 32, 0, mini, 64);
        printf("  mini-records: %zu of %u", n, m->mini_entries);
        if (n)
            printf(", newest #%u: partition %u thread %u, %s", mini[n < 64 ? n - 1 : 63].sequence,
                   mini[n < 64 ? n - 1 : 63].partition, mini[n < 64 ? n - 1 : 63].thread,
                   emb_crash_fault_class_name(mini[n < 64 ? n - 1 : 63].fault_class));
        printf("\n");
    }
}

static void print_text_header(struct desc *d, const char *source)
{
    const struct emb_desc_model *m = &d->model;
    char buf[300];
    printf("%sDescriptor v%u%s at 0x%" PRIx64 " in %s: %s, profile %s, %u-bit %s-endian\n",
           color(EMB_C_BOLD), d->image.version, color(EMB_C_RESET), d->image.addr, source, m->port,
           m->profile, d->image.ptr_size * 8, d->image.little ? "little" : "big");
    printf("  library %u.%u.%u, configuration hash 0x%08x, catalogue 0x%08x, build id %s\n",
           m->lib_version >> 16, (m->lib_version >> 8) & 0xFF, m->lib_version & 0xFF, m->config_hash,
           m->catalog_checksum,
           m->build_id_len ? emb_crash_report_hex(m->build_id, m->build_id_len, buf, sizeof buf) : "(none)");
    printf("  trace: clock %.6f GHz, mode %s, classes 0x%08x, %u-byte packets, %u per ring\n",
           (double)m->clock_hz / 1e9, mode_name(m->trace_mode), m->class_mask, m->packet_size,
           m->ring_packets);
    if (m->probe_consumer)
        printf("  a debug probe is the consumer of the streaming rings and the log rings\n");
}

static void print_text_contexts(struct desc *d)
{
    const struct emb_desc_model *m = &d->model;
    printf("\n%sContexts%s (%zu of %u)\n", color(EMB_C_BOLD), color(EMB_C_RESET), m->ncontexts,
           m->context_capacity);
    printf("  %-4s %-14s %-7s %-8s %-14s %8s %9s %9s %8s %10s %12s\n", "id", "name", "state", "tid",
           "ring fill", "packets", "discarded", "run ms", "switches", "blocked ms", "stack used");
    for (size_t i = 0; i < m->ncontexts; i++) {
        const struct emb_desc_context *c = &m->contexts[i];
        char fill[32] = "-", stack[32] = "-";
        if (c->ring_ok)
            snprintf(fill, sizeof fill, "%u/%u +%uB", c->packets_held, c->slot_mask + 1u, c->open_bytes);
        if (c->stack_size)
            snprintf(stack, sizeof stack, "%s%u/%u KiB", c->stack_used ? "" : "?/",
                     c->stack_used ? (c->stack_used + 1023) / 1024 : 0u, c->stack_size / 1024);
        if (!c->stack_used && c->stack_size)
            snprintf(stack, sizeof stack, "-/%u KiB", c->stack_size / 1024);
        printf("  %-4u %-14s %-7s %-8d %-14s %8u %9u %9.3f %8" PRIu64 " %10.3f %12s\n", c->index, c->name,
               c->state_name, c->os_id, fill, c->packets_opened, c->discarded,
               to_us(d, stat_of(c->stats, c->nstats, "run_cycles", NULL)) / 1000.0,
               stat_of(c->stats, c->nstats, "switches", NULL),
               to_us(d, stat_of(c->stats, c->nstats, "blocked_cycles", NULL)) / 1000.0, stack);
    }
}

static void print_text_log_rings(const struct emb_desc_model *m)
{
    if (m->nlogrings) {
        printf("\n%sLog rings%s (%zu)\n", color(EMB_C_BOLD), color(EMB_C_RESET), m->nlogrings);
        printf("  %-4s %-14s %10s %10s %10s %9s %8s\n", "id", "name", "bytes", "unread", "written", "dropped",
               "pending");
        for (size_t i = 0; i < m->nlogrings; i++) {
            const struct emb_desc_logring *l = &m->logrings[i];
            if (!l->ok)
                continue;
            printf("  %-4u %-14s %10u %10u %10u %9u %8u\n", l->context_id, l->name[0] ? l->name : "-",
                   l->mask + 1u, l->write_pos - l->read_pos, l->write_pos, l->dropped, l->pending);
        }
    } else if (m->has_log && m->log_version == 0) {
        printf("  log rings: none described (log section v0)\n");
    }
}

static void print_text_monitors(struct desc *d)
{
    const struct emb_desc_model *m = &d->model;
    char buf[300];
    printf("\n%sMonitors%s (the ones that saw an interval)\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    printf("  %-14s %12s %6s %12s  %s\n", "category", "worst us", "over", "threshold us", "opener");
    for (size_t i = 0; i < m->nmonitors; i++) {
        const struct emb_desc_monitor *mo = &m->monitors[i];
        if (!mo->worst && !mo->threshold)
            continue;
        char th[32] = "-";
        if (mo->threshold)
            snprintf(th, sizeof th, "%.3f", to_us(d, mo->threshold));
        printf("  %-14s %12.3f %6u %12s  %s\n", mo->name, to_us(d, mo->worst), mo->over, th,
               symbolise(d, mo->pc, buf, sizeof buf));
    }
}

static void print_text_cpu(int cpu, const struct emb_desc_stat *stats, size_t n)
{
    if (cpu >= 0)
        printf("  cpu%d", cpu);
    else
        printf(" ");
    for (size_t i = 0; i < n; i++)
        if (strcmp(stats[i].name, "reset_ts"))
            printf(" %s %" PRIu64, stats[i].name, stats[i].value);
    printf("\n");
}

static void print_text_objects(struct desc *d)
{
    const struct emb_desc_model *m = &d->model;
    if (m->nobjects) {
        printf("\n%sObjects%s (%zu)\n", color(EMB_C_BOLD), color(EMB_C_RESET), m->nobjects);
        printf("  %-10s %-6s %-16s %12s %11s %12s %9s\n", "handle", "type", "name", "acquisitions",
               "contentions", "max wait us", "max queue");
        for (size_t i = 0; i < m->nobjects; i++) {
            const struct emb_desc_object *o = &m->objects[i];
            printf("  0x%08x %-6s %-16s %12" PRIu64 " %11" PRIu64 " %12.3f %9" PRIu64 "\n", o->handle,
                   o->type_name, o->name, stat_of(o->stats, o->nstats, "acquisitions", NULL),
                   stat_of(o->stats, o->nstats, "contentions", NULL),
                   to_us(d, stat_of(o->stats, o->nstats, "max_wait_cycles", NULL)),
                   stat_of(o->stats, o->nstats, "max_queue", NULL));
        }
    }
    if (m->stats_cpus > 1) {
        printf("\n%sCPUs%s (%u)\n", color(EMB_C_BOLD), color(EMB_C_RESET), m->stats_cpus);
        for (uint32_t c = 0; c < m->stats_cpus; c++)
            print_text_cpu(c, m->cpus[c].stats, m->cpus[c].nstats);
    } else if (m->ncpu) {
        printf("\n%sCPU%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
        print_text_cpu(-1, m->cpu, m->ncpu);
    }
}

static const char *symbolise_cb(void *arg, uint64_t addr, char *buf, size_t len)
{
    return symbolise(arg, addr, buf, len);
}

static void print_text(struct desc *d, const char *source)
{
    print_text_header(d, source);
    print_text_contexts(d);
    emb_desc_print_threads(stdout, &d->model, symbolise_cb, d);
    emb_desc_print_partitions(stdout, &d->model, symbolise_cb, d);
    print_text_log_rings(&d->model);
    print_text_monitors(d);
    print_text_objects(d);
    print_crash_summary(d);
}

/* ---- JSON ---- */

static void json_stats(struct emb_json *j, const char *key, const struct emb_desc_stat *s, size_t n)
{
    emb_json_begin_object(j, key);
    for (size_t i = 0; i < n; i++)
        emb_json_uint(j, s[i].name, s[i].value);
    emb_json_end_object(j);
}

/* The runs of fields the JSON takes as they are (the others are written one by one). */
#define MODEL(member, kind) EMB_JSON_FIELD(struct emb_desc_model, member, #member, kind)
static const struct emb_json_field IDENTITY_FIELDS[] = {
    MODEL(port, TEXT),        MODEL(profile, TEXT), MODEL(config_hash, HEX),
    MODEL(lib_version, UINT), MODEL(catalog_checksum, HEX),
};
#undef MODEL

static void json_identity(struct emb_json *j, const struct desc *d)
{
    const struct emb_desc_model *m = &d->model;
    emb_json_begin_object(j, "descriptor");
    emb_json_hex(j, "address", d->image.addr);
    emb_json_uint(j, "version", d->image.version);
    emb_json_uint(j, "pointer_size", d->image.ptr_size);
    emb_json_string(j, "endianness", d->image.little ? "little" : "big");
    emb_json_uint(j, "sections", d->image.nsections);
    emb_json_end_object(j);
    emb_json_begin_object(j, "identity");
    EMB_JSON_FIELDS(j, m, IDENTITY_FIELDS);
    emb_json_hex_bytes(j, "build_id", m->build_id, m->build_id_len);
    emb_json_bool(j, "ready", m->ready);
    emb_json_uint(j, "clock_hz", m->clock_hz);
    emb_json_int(j, "clock_offset_ns", m->clock_offset_ns);
    emb_json_hex(j, "load_bias", d->bias);
    emb_json_end_object(j);
    emb_json_begin_object(j, "trace");
    emb_json_string(j, "mode", mode_name(m->trace_mode));
    emb_json_hex(j, "class_mask", m->class_mask);
    emb_json_uint(j, "packet_size", m->packet_size);
    emb_json_uint(j, "ring_packets", m->ring_packets);
    emb_json_end_object(j);
}

#define CONTEXT(member, key, kind) EMB_JSON_FIELD(struct emb_desc_context, member, key, kind)
static const struct emb_json_field CONTEXT_FIELDS[] = {
    CONTEXT(index, "index", UINT),      CONTEXT(name, "name", TEXT),
    CONTEXT(state_name, "state", TEXT), CONTEXT(os_id, "os_id", INT),
};
static const struct emb_json_field RING_COUNTS[] = {
    CONTEXT(packets_held, "packets_held", UINT),     CONTEXT(open_bytes, "open_bytes", UINT),
    CONTEXT(packets_opened, "packets_opened", UINT), CONTEXT(discarded, "discarded", UINT),
    CONTEXT(write_pos, "write_pos", UINT),
};
#undef CONTEXT

static void json_context(struct emb_json *j, struct desc *d, const struct emb_desc_context *c)
{
    char buf[300];
    emb_json_begin_object(j, NULL);
    EMB_JSON_FIELDS(j, c, CONTEXT_FIELDS);
    emb_json_string(j, "entry", symbolise(d, c->entry, buf, sizeof buf));
    emb_json_hex(j, "stack_low", c->stack_low);
    emb_json_uint(j, "stack_size", c->stack_size);
    emb_json_uint(j, "stack_used", c->stack_used);
    if (c->partition)
        emb_json_uint(j, "partition", c->partition);
    if (c->ring_ok) {
        emb_json_begin_object(j, "ring");
        emb_json_hex(j, "address", c->ring);
        emb_json_uint(j, "context_id", c->context_id);
        emb_json_uint(j, "slots", c->slot_mask + 1u);
        EMB_JSON_FIELDS(j, c, RING_COUNTS);
        emb_json_end_object(j);
    } else {
        emb_json_null(j, "ring");
    }
    json_stats(j, "stats", c->stats, c->nstats);
    emb_json_end_object(j);
}

#define MONITOR(member, key, kind) EMB_JSON_FIELD(struct emb_desc_monitor, member, key, kind)
static const struct emb_json_field MONITOR_LIMIT_FIELDS[] = {
    MONITOR(threshold, "threshold_cycles", UINT), MONITOR(over, "over", UINT),
    MONITOR(action, "action", UINT),              MONITOR(pc, "opener_pc", HEX),
};
#undef MONITOR
static const struct emb_json_field OBJECT_FIELDS[] = {
    EMB_JSON_FIELD(struct emb_desc_object, handle, "handle", HEX),
    EMB_JSON_FIELD(struct emb_desc_object, type_name, "type", TEXT),
    EMB_JSON_FIELD(struct emb_desc_object, name, "name", TEXT),
};

static void json_monitors_objects(struct emb_json *j, struct desc *d)
{
    const struct emb_desc_model *m = &d->model;
    char buf[300];
    emb_json_begin_array(j, "monitors");
    for (size_t i = 0; i < m->nmonitors; i++) {
        const struct emb_desc_monitor *mo = &m->monitors[i];
        if (!mo->worst && !mo->threshold)
            continue;
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "category", mo->category);
        if (m->monitor_cpus > 1)
            emb_json_uint(j, "cpu", mo->cpu);
        emb_json_string(j, "name", mo->name);
        emb_json_uint(j, "worst_cycles", mo->worst);
        emb_json_double(j, "worst_us", to_us(d, mo->worst));
        EMB_JSON_FIELDS(j, mo, MONITOR_LIMIT_FIELDS);
        emb_json_string(j, "opener", symbolise(d, mo->pc, buf, sizeof buf));
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_json_begin_array(j, "objects");
    for (size_t i = 0; i < m->nobjects; i++) {
        const struct emb_desc_object *o = &m->objects[i];
        emb_json_begin_object(j, NULL);
        EMB_JSON_FIELDS(j, o, OBJECT_FIELDS);
        json_stats(j, "stats", o->stats, o->nstats);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

#define LOG_RING(member) EMB_JSON_FIELD(struct emb_desc_logring, member, #member, UINT)
static const struct emb_json_field LOG_RING_COUNTS[] = {
    LOG_RING(write_pos), LOG_RING(read_pos), LOG_RING(dropped), LOG_RING(pending),
};
#undef LOG_RING

static void json_log_rings(struct emb_json *j, const struct emb_desc_model *m)
{
    emb_json_bool(j, "probe_consumer", m->probe_consumer);
    emb_json_begin_array(j, "log_rings");
    for (size_t i = 0; i < m->nlogrings; i++) {
        const struct emb_desc_logring *l = &m->logrings[i];
        if (!l->ok)
            continue;
        emb_json_begin_object(j, NULL);
        emb_json_hex(j, "address", l->addr);
        emb_json_uint(j, "context_id", l->context_id);
        emb_json_string(j, "name", l->name);
        emb_json_uint(j, "bytes", l->mask + 1u);
        EMB_JSON_FIELDS(j, l, LOG_RING_COUNTS);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

/* The probe's holds, the CPU statistics, the crash record and the problems. */
static void json_rest(struct emb_json *j, const struct desc *d)
{
    const struct emb_desc_model *m = &d->model;
    if (d->probe) {
        const struct emb_probe_stats *ps = emb_probe_stats(d->probe);
        emb_json_begin_object(j, "probe");
        emb_json_double(j, "held_ms", ps->hold_ms_total);
        emb_json_uint(j, "round_trips", ps->round_trips);
        emb_json_uint(j, "bytes_read", ps->bytes_read);
        emb_json_end_object(j);
    }
    json_stats(j, "cpu", m->cpu, m->ncpu);
    if (m->stats_cpus > 1) {
        emb_json_begin_array(j, "cpus");
        for (uint32_t c = 0; c < m->stats_cpus; c++) {
            emb_json_begin_object(j, NULL);
            emb_json_uint(j, "cpu", c);
            json_stats(j, "stats", m->cpus[c].stats, m->cpus[c].nstats);
            emb_json_end_object(j);
        }
        emb_json_end_array(j);
    }
    emb_json_begin_object(j, "crash");
    emb_json_bool(j, "region", m->has_crash);
    if (m->has_crash) {
        emb_json_hex(j, "area", m->crash_area);
        emb_json_uint(j, "capacity", m->crash_cap);
        emb_json_uint(j, "version", m->crash_version);
        emb_json_uint(j, "found_at_start", m->crash_found);
        struct emb_crash_record r;
        bool have = m->crash_bytes && emb_crash_decode(m->crash_bytes, m->crash_cap, &r, NULL) == 0;
        emb_json_bool(j, "record", have);
        if (have) {
            emb_json_uint(j, "record_length", r.length);
            emb_json_string(j, "fault_class", emb_crash_fault_class_name(r.fault_class));
        }
        emb_json_uint(j, "mini_entries", m->mini_entries);
    }
    emb_json_end_object(j);
    emb_json_begin_array(j, "issues");
    for (size_t i = 0; i < d->issues.n; i++)
        emb_json_string(j, NULL, d->issues.items[i].message);
    emb_json_end_array(j);
}

static void print_json(struct desc *d, const char *source)
{
    struct emb_json j;
    emb_json_begin_document(&j, stdout);
    j.flat_depth = 3;
    emb_json_string(&j, "source", source);
    json_identity(&j, d);
    emb_json_uint(&j, "context_capacity", d->model.context_capacity);
    emb_json_begin_array(&j, "contexts");
    for (size_t i = 0; i < d->model.ncontexts; i++)
        json_context(&j, d, &d->model.contexts[i]);
    emb_json_end_array(&j);
    emb_desc_json_threads(&j, &d->model, symbolise_cb, d);
    emb_desc_json_partitions(&j, &d->model, symbolise_cb, d);
    json_monitors_objects(&j, d);
    json_log_rings(&j, &d->model);
    json_rest(&j, d);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

/* ---- The command ---- */

/* --dump FILE: raw memory at --base, read whole (a file, - for standard input, or a
 * capture's descriptor section). */
static int open_dump(struct desc *d, const struct args *a, char *source, size_t len)
{
    if (emb_command_input_read(CMD, a->dump, EMB_CAP_SEC_DESCRIPTOR, SCAN_MAX, &d->dump) != 0)
        return -1;
    const struct emb_capture_section *p = &d->dump.part;
    if (p->length == 0 || a->base + p->length < a->base) {
        emb_cli_error_at(CMD, a->dump, -1, "%s", p->length == 0 ? "empty" : "base + size wraps around");
        return -1;
    }
    if (!(d->mem = emb_mem_open_buffer(p->data, (size_t)p->length, a->base))) {
        emb_cli_error(CMD, "out of memory");
        return -1;
    }
    snprintf(source, len, "dump %s", a->dump);
    return 0;
}

static int open_source(struct desc *d, const struct args *a, char *source, size_t len)
{
    char err[512];
    if (a->elf && !(d->elf = emb_elf_open(a->elf, err, sizeof err))) {
        emb_cli_error(CMD, "%s", err);
        return -1;
    }
    if (a->gdb) {
        /* Its message names the address (or the ELF) already. */
        if (!(d->probe = emb_probe_open(a->gdb, d->elf, err, sizeof err))) {
            emb_cli_error(CMD, "%s", err);
            return -1;
        }
        d->mem = emb_probe_mem(d->probe);
    } else {
        char pid[32];
        snprintf(pid, sizeof pid, "pid %ld", a->pid);
        struct emb_problems ps;
        emb_problems_init_callback(&ps, a->pid > 0 ? pid : a->core ? a->core : a->dump, emb_cli_problem,
                                   (void *)CMD);
        if (a->pid > 0)
            d->mem = emb_mem_open_pid((pid_t)a->pid, &ps);
        else if (a->core)
            d->mem = emb_mem_open_core(a->core, &ps);
        else
            return open_dump(d, a, source, len);
        if (!d->mem)
            return -1;
    }
    snprintf(source, len, "%s", emb_mem_name(d->mem));
    return 0;
}

/* By the symbol at its load bias when both are known, else by scanning for the magic. */
static int find_descriptor(struct desc *d)
{
    struct emb_problems ps;
    emb_problems_init_callback(&ps, d->name, emb_cli_problem, (void *)CMD);
    uint64_t sym = 0, bias = 0;
    bool have_sym = d->elf && emb_elf_symbol(d->elf, "emb_debug_descriptor", &sym, NULL) == 0;
    bool have_bias = d->elf && emb_mem_bias(d->mem, d->elf, &bias) == 0;
    if (d->elf && !have_sym)
        fprintf(stderr, "%s: %s has no emb_debug_descriptor symbol: scanning for the magic\n", CMD,
                emb_elf_path(d->elf));
    if (d->elf && have_bias)
        emb_mem_set_image(d->mem, d->elf, bias);
    if (emb_desc_find(d->mem, have_sym && have_bias ? sym + bias : 0, SCAN_MAX, &d->image, &ps) != 0)
        return -1;
    d->bias = have_sym ? d->image.addr - sym : 0;
    if (d->elf)
        emb_mem_set_image(d->mem, d->elf, d->bias);
    return 0;
}

/* A pointer-sized word of the descriptor at `at`, in the image's byte order. */
static uint64_t desc_word(const uint8_t *p, unsigned size, bool little)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint64_t)p[little ? i : size - 1u - i] << (8u * i);
    return v;
}

/* The descriptor is read-only data: the image's copy must equal the ELF's, word for word,
 * except that a position-independent image's pointers are the ELF's moved by the load
 * bias. A difference is a damaged image (or another build), and decoding it would print
 * zeros and lost names as if they were facts: refused, with the first byte that differs. */
static int check_descriptor(struct desc *d)
{
    uint64_t sym = 0, size = 0;
    if (!d->elf || emb_elf_symbol(d->elf, "emb_debug_descriptor", &sym, &size) != 0 || size == 0 ||
        size > 65536)
        return 0;
    uint8_t *want = malloc(size), *got = malloc(size);
    int rc = 0;
    if (want && got && emb_elf_read(d->elf, sym, want, size) == size) {
        size_t n = emb_mem_read(d->mem, d->image.addr, got, size);
        size_t first = SIZE_MAX, count = 0;
        unsigned w = d->image.ptr_size == 8 ? 8u : 4u; /* 4: also the reduced descriptor */
        for (size_t i = 0; i + w <= n; i += w) {
            if (!memcmp(got + i, want + i, w))
                continue;
            uint64_t g = desc_word(got + i, w, d->image.little), e = desc_word(want + i, w, d->image.little);
            uint64_t moved = w == 4 ? (uint32_t)(e + d->bias) : e + d->bias;
            if (d->bias != 0 && e != 0 && g == moved)
                continue; /* a pointer, relocated at load */
            for (size_t k = i; k < i + w && count == 0; k++)
                if (got[k] != want[k])
                    first = k;
            count++;
        }
        for (size_t i = n - n % w; i < n; i++)
            if (got[i] != want[i] && count++ == 0)
                first = i;
        if (n < size) {
            emb_cli_error(CMD, "%s: the debug descriptor at 0x%" PRIx64 " reads %zu of its %" PRIu64
                          " bytes", d->name, d->image.addr, n, size);
            rc = -1;
        } else if (count) {
            emb_cli_error(CMD, "%s: the debug descriptor at 0x%" PRIx64 " differs from %s's in %zu "
                          "word%s of its %" PRIu64 " bytes, first at descriptor byte %zu (image "
                          "0x%02x, ELF 0x%02x): a damaged image or another build; refused",
                          d->name, d->image.addr, emb_elf_path(d->elf), count,
                          count == 1 ? "" : "s", size, first, got[first], want[first]);
            rc = -1;
        }
    }
    free(want);
    free(got);
    return rc;
}

static int check_identity(struct desc *d)
{
    const uint8_t *id;
    size_t n = d->elf ? emb_elf_build_id(d->elf, &id) : 0;
    char a[80], b[80];
    if (!d->elf || !n || !d->model.build_id_len)
        return 0;
    if (n != d->model.build_id_len || memcmp(id, d->model.build_id, n)) {
        emb_cli_error(CMD, "%s runs another build: its build id is %s, %s has %s", d->name,
                      emb_crash_report_hex(d->model.build_id, d->model.build_id_len, a, sizeof a),
                      emb_elf_path(d->elf), emb_crash_report_hex(id, n, b, sizeof b));
        return -1;
    }
    return 0;
}

struct dump_job {
    struct desc *d;
    const struct emb_catalog *cat;
    long packets;
};

static int write_dump(void *arg, FILE *f)
{
    struct dump_job *job = arg;
    struct desc *d = job->d;
    job->packets = emb_desc_dump_trace(d->mem, &d->image, &d->model, job->cat, f, &d->issues);
    return job->packets < 0 ? -1 : 0;
}

/* --dump-trace: the rings as a trace stream file. Returns the packets written, or -1. */
static long dump_trace(struct desc *d, const struct args *a)
{
    struct emb_catalog *own;
    struct dump_job job = {.d = d, .packets = -1};
    /* A capture given to --dump carries the catalogue its trace was recorded with; the
     * image names its own. */
    if ((job.cat = emb_catalog_choose_named(CMD, a->catalog, a->dump, d->dump.capture ? d->dump.bytes : NULL,
                                            d->dump.capture ? d->dump.size : 0, &own)) == NULL)
        return -1;
    job.cat = emb_catalog_for_part(a->catalog, job.cat, d->model.catalog_checksum);
    if (emb_cli_write_output(CMD, a->dump_trace, write_dump, &job) != 0)
        job.packets = -1;
    if (own)
        emb_catalog_free(own);
    return job.packets;
}

/* A probe's target runs on: how long it was held, on stderr (stdout may be JSON). */
static void release_target(struct desc *d, const char *source)
{
    if (!d->probe)
        return;
    d->released = true;
    if (emb_probe_detach(d->probe) != 0)
        emb_cli_error(CMD, "%s: detach: %s", source, emb_probe_error(d->probe));
    const struct emb_probe_stats *ps = emb_probe_stats(d->probe);
    fprintf(stderr, "%s: %s: held the target %.3f ms (connect, %" PRIu64 " memory packets, %" PRIu64
            " bytes, detach)\n", CMD, source, ps->hold_ms_total, ps->round_trips, ps->bytes_read);
}

int emb_cmd_desc(int argc, char **argv)
{
    struct args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;
    struct desc *d = calloc(1, sizeof *d);
    char source[320];
    if (!d) {
        emb_cli_error(CMD, "out of memory");
        return EMB_EXIT_BAD;
    }
    rc = EMB_EXIT_BAD;
    if (open_source(d, &a, source, sizeof source) != 0)
        goto out;
    snprintf(d->name, sizeof d->name, "%s", source);
    emb_problems_init(&d->issues, source);
    d->issues.max_kept = 32;
    if (find_descriptor(d) != 0 || check_descriptor(d) != 0)
        goto out;
    emb_desc_read(d->mem, &d->image, &d->model, &d->issues);
    if (check_identity(d) != 0)
        goto out;
    /* Everything is read before a probe's target goes on: one halt, one image. */
    long packets = a.dump_trace ? dump_trace(d, &a) : 0;
    release_target(d, source);
    if (a.json)
        print_json(d, source);
    else
        print_text(d, source);
    rc = packets < 0 ? EMB_EXIT_BAD : EMB_EXIT_OK;
    if (a.dump_trace && packets >= 0 && !a.json)
        printf("\nTrace: %ld packets written to %s\n", packets, a.dump_trace);
    fflush(stdout);
    emb_cli_problems(CMD, &d->issues);
    if (emb_problems_at_least(&d->issues, EMB_NOTE) != 0)
        rc = EMB_EXIT_BAD;
out:
    if (d->probe && !d->released)
        emb_probe_detach(d->probe); /* the target runs on whatever went wrong */
    emb_desc_model_free(&d->model);
    emb_problems_free(&d->issues);
    if (d->probe)
        emb_probe_close(d->probe); /* owns the memory source */
    else
        emb_mem_close(d->mem);
    emb_elf_close(d->elf);
    emb_command_input_free(&d->dump);
    free(d);
    return rc;
}
