/* `emb import`: bring another system's trace into a trace stream file, so `emb trace`,
 * its Perfetto and CTF exports, and two-run comparisons work on it. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <float.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "hostio.h"
#include "input_file.h"
#include "rtems_import.h"
#include "rtems_record_catalog.h"

static const char *const CMD = "emb import";


struct args {
    const char *source, *output, *events, *catalog_out, *capture, *label;
    bool all, json;
    uint64_t count;
    double duration;
};

enum { OPT_EVENTS = 256, OPT_CATALOG_OUT, OPT_ALL, OPT_COUNT, OPT_DURATION, OPT_CAPTURE };
static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_STRING("capture", OPT_CAPTURE, struct args, capture),
    EMB_CLI_STRING("label", 'l', struct args, label),
    EMB_CLI_STRING("events", OPT_EVENTS, struct args, events),
    EMB_CLI_STRING("catalog-out", OPT_CATALOG_OUT, struct args, catalog_out),
    EMB_CLI_FLAG("all", OPT_ALL, struct args, all),
    EMB_CLI_U64("count", OPT_COUNT, struct args, count, 1, UINT64_MAX, "a positive number"),
    EMB_CLI_DOUBLE("duration", OPT_DURATION, struct args, duration, DBL_TRUE_MIN, DBL_MAX, "seconds"),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_import, .shortopts = ":o:l:h", .options = OPTIONS};

static int parse_args(int argc, char **argv, struct args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, NULL, a);
    if (rc != 0)
        return rc;
    if (optind >= argc) {
        emb_cli_error(CMD, "no format given: emb import rtems-record SOURCE -o OUT");
        return EMB_EXIT_BAD;
    }
    if (strcmp(argv[optind], "rtems-record") != 0) {
        emb_cli_error(CMD, "unknown format '%s' (known: rtems-record)", argv[optind]);
        return EMB_EXIT_BAD;
    }
    if (optind + 2 != argc) {
        emb_cli_error(CMD, optind + 1 == argc ? "no source given" : "one source, please");
        fprintf(stderr, "Usage: emb import rtems-record [options] SOURCE -o OUT\n");
        return EMB_EXIT_BAD;
    }
    a->source = argv[optind + 1];
    if (a->output == NULL) {
        emb_cli_error(CMD, "give the trace stream file to write with -o OUT");
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

struct progress {
    struct emb_progress *bar;
    uint64_t bytes, next;
};

/* Feeds the importer from a descriptor until end of file, an error, or a stop (*cut set
 * when a signal or the deadline ended it). Returns 0, or -1 after reporting a read error. */
static int pump(struct emb_rtems_import *imp, int fd, const char *name, bool live, double duration,
                struct progress *pr, bool *cut)
{
    uint8_t buf[65536];
    uint64_t deadline = duration > 0 ? emb_hostio_now_ms() + (uint64_t)(duration * 1000.0) : 0;
    for (;;) {
        if (stop)
            *cut = true;
        if (stop || emb_rtems_import_stats(imp)->done)
            return 0;
        int timeout = -1;
        if (deadline != 0) {
            uint64_t now = emb_hostio_now_ms();
            if (now >= deadline) {
                *cut = true;
                return 0;
            }
            timeout = (int)(deadline - now);
        }
        ssize_t n = emb_hostio_read(fd, buf, sizeof buf, live ? (timeout < 0 ? 200 : timeout) : -1);
        if (n == -2)
            continue;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            emb_cli_error_at(CMD, name, (long long)pr->bytes, "read error: %s", strerror(errno));
            return -1;
        }
        if (n == 0)
            return 0;
        pr->bytes += (uint64_t)n;
        if (emb_rtems_import_feed(imp, buf, (size_t)n) != 0)
            return 0; /* the error is reported by the caller */
        if (live && pr->bytes >= pr->next) {
            if (pr->bar == NULL)
                pr->bar = emb_progress_start("items", 0);
            emb_progress_update(pr->bar, emb_rtems_import_stats(imp)->items);
            pr->next = pr->bytes + 65536;
        }
    }
}

static void summary_text(const struct emb_rtems_import *imp, const struct args *a)
{
    const struct emb_rtems_record_info *in = emb_rtems_import_info(imp);
    const struct emb_rtems_import_stats *s = emb_rtems_import_stats(imp);
    FILE *o = stdout;
    const char *b = emb_color_code(o, EMB_C_BOLD), *r = emb_color_code(o, EMB_C_RESET);
    unsigned cpus = 0;
    for (unsigned i = 0; i < EMB_RTEMS_RECORD_MAX_CPUS; i++)
        cpus += (in->cpus_seen >> i) & 1u;
    fprintf(o, "%srtems-record%s version %u, %s %u-bit items, %u of %u processors, %u items "
            "per processor, %u Hz\n", b, r, in->version, in->big_endian ? "big-endian" : "little-endian",
            in->data_size * 8u, cpus > 0 ? cpus : 1u, in->cpu_count, in->per_cpu_items, in->frequency);
    if (in->arch[0] || in->bsp[0])
        fprintf(o, "  target    %s / %s / %s\n", in->arch, in->multilib, in->bsp);
    if (in->version_control_key[0])
        fprintf(o, "  version   %s\n", in->version_control_key);
    if (in->tools[0])
        fprintf(o, "  tools     %s\n", in->tools);
    fprintf(o, "  items     %" PRIu64 " read, %" PRIu64 " events written to %s\n", s->items,
            s->events, a->output);
    if (s->events > 0)
        fprintf(o, "  time      %.9f s to %.9f s of uptime\n", (double)s->first_ns / 1e9,
                (double)s->last_ns / 1e9);
    const char *y = emb_color_code(o, EMB_C_YELLOW);
    if (s->lost)
        fprintf(o, "  %slost%s      %" PRIu64 " items in %" PRIu64 " overflows\n", y, r, s->lost,
                s->overflows);
    if (s->adjustments)
        fprintf(o, "  %stime%s      %" PRIu64 " adjustments (an item earlier than the one before)\n",
                y, r, s->adjustments);
    if (s->unreliable)
        fprintf(o, "  %stime%s      %" PRIu64 " events after the last uptime event have a "
                "best-effort time\n", y, r, s->unreliable);
}

/* What the stream's header said and what the import counted, as the JSON names them. */
#define STREAM(member, key, kind) EMB_JSON_FIELD(struct emb_rtems_record_info, member, key, kind)
static const struct emb_json_field STREAM_FIELDS[] = {
    STREAM(big_endian, "big_endian", BOOL),
    STREAM(cpu_count, "processors", UINT),
    STREAM(per_cpu_items, "per_processor_items", UINT),
    STREAM(frequency, "frequency_hz", UINT),
    STREAM(arch, "arch", TEXT),
    STREAM(multilib, "multilib", TEXT),
    STREAM(bsp, "bsp", TEXT),
    STREAM(version_control_key, "version_control_key", TEXT),
    STREAM(tools, "tools", TEXT),
};
#undef STREAM
#define COUNT(member, key) EMB_JSON_FIELD(struct emb_rtems_import_stats, member, key, UINT)
static const struct emb_json_field IMPORT_COUNTS[] = {
    COUNT(items, "items"),                  COUNT(events, "events"),
    COUNT(lost, "lost"),                    COUNT(overflows, "overflows"),
    COUNT(adjustments, "time_adjustments"), COUNT(unreliable, "unreliable_times"),
    COUNT(first_ns, "first_ns"),            COUNT(last_ns, "last_ns"),
};
#undef COUNT

static void summary_json(const struct emb_rtems_import *imp, const struct args *a, const char *error,
                         uint64_t offset)
{
    const struct emb_rtems_record_info *in = emb_rtems_import_info(imp);
    const struct emb_rtems_import_stats *s = emb_rtems_import_stats(imp);
    struct emb_json j;
    emb_json_begin_document(&j, stdout);
    emb_json_string(&j, "source", a->source);
    emb_json_string(&j, "output", a->output);
    emb_json_uint(&j, "version", in->version);
    emb_json_bool(&j, "version_table_exact", in->table_exact);
    emb_json_uint(&j, "item_bits", in->data_size * 8u);
    EMB_JSON_FIELDS(&j, in, STREAM_FIELDS);
    EMB_JSON_FIELDS(&j, s, IMPORT_COUNTS);
    if (error != NULL) {
        emb_json_string(&j, "error", error);
        emb_json_uint(&j, "error_offset", offset);
    } else {
        emb_json_null(&j, "error");
    }
    emb_json_end_object(&j);
    emb_json_end(&j);
}

static int write_import(void *arg, FILE *f)
{
    return emb_rtems_import_write(arg, f);
}

static int write_outputs(struct emb_rtems_import *imp, const struct args *a)
{
    if (emb_cli_write_output(CMD, a->output, write_import, imp) != 0)
        return -1;
    if (a->catalog_out != NULL) {
        const struct emb_rtems_record_info *in = emb_rtems_import_info(imp);
        size_t len;
        char *yaml = emb_rtems_record_catalog_yaml(in->table, &len);
        int rc = yaml != NULL ? emb_cli_write_bytes(CMD, a->catalog_out, yaml, len) : -1;
        if (yaml == NULL)
            emb_cli_error_at(CMD, a->catalog_out, -1, "out of memory");
        free(yaml);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Seals the written trace stream with `emb capture` (the catalogue it names is found by
 * its checksum). */
static int seal(const struct args *a)
{
    char *argv[8];
    int n = 0;
    argv[n++] = (char *)"capture";
    argv[n++] = (char *)"-o";
    argv[n++] = (char *)a->capture;
    if (a->label != NULL) {
        argv[n++] = (char *)"--label";
        argv[n++] = (char *)a->label;
    }
    argv[n++] = (char *)a->output;
    argv[n] = NULL;
    int rc = emb_cmd_capture(n, argv);
    optind = 0;
    return rc;
}

/* The --events table, checked by making its catalogue. NULL after reporting why. */
static struct emb_rtems_record_table *read_events(const char *path)
{
    char err[256];
    size_t len;
    uint8_t *text = emb_input_read(path, &len, err, sizeof err);
    if (text == NULL) {
        emb_cli_error_at(CMD, path, -1, "%s", err);
        return NULL;
    }
    struct emb_problems ps;
    emb_problems_init(&ps, path);
    struct emb_rtems_record_table *table =
        emb_rtems_record_table_parse((const char *)text, len, 0, &ps);
    free(text);
    emb_cli_problems(CMD, &ps);
    emb_problems_free(&ps);
    struct emb_catalog *cat = table != NULL ? emb_rtems_record_catalog(table, err, sizeof err) : NULL;
    if (cat == NULL) {
        if (table != NULL)
            emb_cli_error_at(CMD, path, -1, "these event names make no catalogue: %s", err);
        emb_rtems_record_table_free(table);
        return NULL;
    }
    emb_catalog_free(cat);
    return table;
}

/* The source as a descriptor (*live for a record server), or -1 after reporting why. */
static int open_source(const char *source, const char **name, bool *live)
{
    *name = source;
    *live = false;
    if (!strncmp(source, "tcp://", 6)) {
        char err[256];
        int fd = emb_hostio_connect(source + 6, 5000, err, sizeof err);
        if (fd < 0)
            emb_cli_error(CMD, "%s", err);
        *live = fd >= 0;
        return fd;
    }
    if (!strcmp(source, "-")) {
        *name = "<stdin>";
        return STDIN_FILENO;
    }
    int fd = open(source, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        emb_cli_error_at(CMD, source, -1, "cannot open: %s", strerror(errno));
    return fd;
}

/* Reads the source to its end, Ctrl-C or the deadline, then ends the stream. A live
 * import cut by Ctrl-C or --duration ends wherever the stream was: a partial last item is
 * not an error. Either way, and after an error too, the items still held for a processor
 * without an uptime pair are written (with best-effort times). 0, or -1 on a read error. */
static int import_from(struct emb_rtems_import *imp, int fd, const char *name, bool live,
                       double duration)
{
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct progress pr = {0};
    bool cut = false;
    int rc = pump(imp, fd, name, live, duration, &pr, &cut);
    emb_progress_finish(pr.bar);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (fd != STDIN_FILENO)
        close(fd);
    if (live && cut)
        emb_rtems_import_stop(imp);
    else
        emb_rtems_import_finish(imp);
    return rc;
}

/* The outputs and the summary of what was imported (after an error too). */
static int report(struct emb_rtems_import *imp, const struct args *a, const char *name,
                  const struct emb_problems *ps, bool table_given)
{
    emb_cli_problems(CMD, ps);
    const struct emb_problem *error = ps->n > 0 ? &ps->items[0] : NULL;
    const struct emb_rtems_record_info *in = emb_rtems_import_info(imp);
    if (in->version != 0 && !in->table_exact && !table_given)
        fprintf(stderr, "%s: %s: record version %u: event names are those of version %u; give "
                "the target's list with --events if they differ\n", CMD, name, in->version,
                in->table->version);
    int rc = emb_rtems_import_failed(imp) ? EMB_EXIT_BAD : EMB_EXIT_OK;
    const char *message = error != NULL ? error->message : NULL;
    uint64_t offset = error != NULL && error->offset >= 0 ? (uint64_t)error->offset : 0;
    if (emb_rtems_import_catalog(imp) != NULL) {
        if (write_outputs(imp, a) != 0)
            rc = EMB_EXIT_BAD;
        else if (a->capture != NULL && seal(a) != EMB_EXIT_OK)
            rc = EMB_EXIT_BAD;
        else if (a->json)
            summary_json(imp, a, message, offset);
        else
            summary_text(imp, a);
    } else if (a->json) {
        summary_json(imp, a, message, offset);
    }
    return rc;
}

int emb_cmd_import(int argc, char **argv)
{
    struct args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;
    struct emb_rtems_record_table *table = NULL;
    if (a.events != NULL && (table = read_events(a.events)) == NULL)
        return EMB_EXIT_BAD;
    const char *name;
    bool live;
    int fd = open_source(a.source, &name, &live);
    struct emb_problems ps;
    emb_problems_init(&ps, name);
    struct emb_rtems_import_options opt = {
        .table = table, .keep_control = a.all, .max_items = a.count, .problems = &ps};
    struct emb_rtems_import *imp = fd >= 0 ? emb_rtems_import_new(&opt) : NULL;
    if (fd >= 0 && imp == NULL)
        emb_cli_error(CMD, "out of memory");
    rc = EMB_EXIT_BAD;
    if (imp != NULL) {
        int read_rc = import_from(imp, fd, name, live, a.duration);
        rc = report(imp, &a, name, &ps, table != NULL);
        if (read_rc != 0)
            rc = EMB_EXIT_BAD;
    } else if (fd >= 0 && fd != STDIN_FILENO) {
        close(fd);
    }
    emb_rtems_import_free(imp);
    emb_problems_free(&ps);
    emb_rtems_record_table_free(table);
    return rc;
}
