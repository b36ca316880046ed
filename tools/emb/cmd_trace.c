/* `emb trace`: decode a trace stream file and write it as text, JSON, Perfetto or CTF. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include "command_input.h"
#include "trace_decode.h"
#include "trace_perfetto.h"
#include "trace_write.h"

static const char *const CMD = "emb trace";


enum format { FMT_TEXT, FMT_NDJSON, FMT_PERFETTO, FMT_CTF, FMT_JSON, FMT_PERFETTO_PROTO };

struct args {
    enum format format;
    const char *output;
    const char *catalog;
    const char *file;
    const char *log, *elf; /* --log, --elf */
    bool json; /* --json or --format json, which no other format goes with */
    bool summary;
    bool absolute;
};

enum { OPT_JSON = 256, OPT_SUMMARY, OPT_ABSOLUTE, OPT_CATALOG, OPT_LOG, OPT_ELF };
static const struct option OPTIONS[] = {
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"json", no_argument, NULL, OPT_JSON},
    {"summary", no_argument, NULL, OPT_SUMMARY},
    {"absolute", no_argument, NULL, OPT_ABSOLUTE},
    {"catalog", required_argument, NULL, OPT_CATALOG},
    {"log", required_argument, NULL, OPT_LOG},
    {"elf", required_argument, NULL, OPT_ELF},
    EMB_CLI_OPTIONS_COMMON,
    {NULL, 0, NULL, 0},
};
static const struct emb_cli_command COMMAND = {.name = CMD, .help = emb_help_trace, .shortopts = ":f:o:h",
                                               .options = OPTIONS,
                                               .usage = "emb trace [options] FILE"};

static int format_option(struct args *a, const char *value)
{
    if (!strcmp(value, "text"))
        a->format = FMT_TEXT;
    else if (!strcmp(value, "ndjson"))
        a->format = FMT_NDJSON;
    else if (!strcmp(value, "perfetto") || !strcmp(value, "chrome"))
        a->format = FMT_PERFETTO;
    else if (!strcmp(value, "perfetto-proto"))
        a->format = FMT_PERFETTO_PROTO;
    else if (!strcmp(value, "ctf"))
        a->format = FMT_CTF;
    else if (!strcmp(value, "json"))
        a->json = true;
    else {
        emb_cli_error(CMD, "unknown format '%s' (text, ndjson, perfetto, perfetto-proto, ctf)",
                      value);
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

static int on_option(void *arg, int opt, char *value)
{
    struct args *a = arg;
    switch (opt) {
    case 'f': return format_option(a, value);
    case 'o': a->output = value; break;
    case OPT_JSON: a->json = true; break;
    case OPT_SUMMARY: a->summary = true; break;
    case OPT_ABSOLUTE: a->absolute = true; break;
    case OPT_CATALOG: a->catalog = value; break;
    case OPT_LOG: a->log = value; break;
    case OPT_ELF: a->elf = value; break;
    }
    return EMB_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, on_option, a);
    if (rc != 0)
        return rc;
    if (a->json) {
        if (a->format != FMT_TEXT) {
            emb_cli_error(CMD, "--json and --format %s exclude each other",
                          a->format == FMT_NDJSON ? "ndjson" : a->format == FMT_CTF ? "ctf" : "perfetto");
            return EMB_EXIT_BAD;
        }
        a->format = FMT_JSON;
    }
    rc = emb_cli_operands(&COMMAND, argc, 1, "no trace file given", "one trace file, please");
    if (rc != 0)
        return rc;
    a->file = argv[optind];
    if (a->format == FMT_CTF && !a->output) {
        emb_cli_error(CMD, "--format ctf writes a directory: give it with -o DIR");
        return EMB_EXIT_BAD;
    }
    if ((a->log || a->elf) && a->format != FMT_PERFETTO && a->format != FMT_PERFETTO_PROTO) {
        emb_cli_error(CMD, "--log and --elf go with --format perfetto or perfetto-proto");
        return EMB_EXIT_BAD;
    }
    if (!a->log != !a->elf) {
        emb_cli_error(CMD, "--log needs the firmware's ELF (--elf), and --elf a --log");
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

static const char *plural(uint64_t n, const char *word)
{
    return n == 1 ? word : !strcmp(word, "event") ? "events" : "packets";
}

/* Losses and errors on stderr, after the output, so a person sees them last. */
static void report(const struct emb_trace *t)
{
    const struct emb_problems *ps = emb_trace_problems(t);
    for (size_t i = 0; i < ps->n; i++)
        emb_cli_problem((void *)CMD, &ps->items[i]);
    if (emb_problems_dropped(ps) != 0)
        emb_cli_error_at(CMD, emb_trace_name(t), -1, "%zu more errors not shown",
                         emb_problems_dropped(ps));
    const struct emb_trace_summary *s = emb_trace_summary(t);
    if (s->fatal)
        return;
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        if (c->discarded && c->lost_packets)
            fprintf(stderr, "%s: ctx %s: %" PRIu64 " %s discarded, %" PRIu64 " %s lost\n", CMD,
                    c->name, c->discarded, plural(c->discarded, "event"), c->lost_packets,
                    plural(c->lost_packets, "packet"));
        else if (c->discarded)
            fprintf(stderr, "%s: ctx %s: %" PRIu64 " %s discarded\n", CMD, c->name,
                    c->discarded, plural(c->discarded, "event"));
        else if (c->lost_packets)
            fprintf(stderr, "%s: ctx %s: %" PRIu64 " %s lost\n", CMD, c->name, c->lost_packets,
                    plural(c->lost_packets, "packet"));
    }
    if (s->lost_no_context)
        fprintf(stderr, "%s: %" PRIu64 " events lost: no context had a free ring\n", CMD,
                s->lost_no_context);
    if (s->errors)
        fprintf(stderr, "%s: %s: %" PRIu64 " events decoded; %" PRIu64 " %s, %" PRIu64
                " bad %s\n", CMD, emb_trace_name(t), s->events, s->errors,
                s->errors == 1 ? "error" : "errors", s->bad_packets, plural(s->bad_packets, "packet"));
}

/* --log: the log stream's lines, shown on the trace by the Perfetto formats. */
static int read_logs(const struct args *a, struct emb_perfetto_logs *logs)
{
    struct emb_problems ps;
    emb_problems_init(&ps, a->log);
    int rc = emb_perfetto_logs_read(a->log, a->elf, &ps, logs);
    emb_cli_problems(CMD, &ps);
    emb_problems_free(&ps);
    return rc == 0 ? EMB_EXIT_OK : EMB_EXIT_BAD;
}

static int write_ctf(void *arg, const char *dir, char *err, size_t errlen)
{
    return emb_trace_write_ctf(arg, dir, err, errlen);
}

struct job {
    const struct emb_trace *t;
    const struct args *a;
    const struct emb_perfetto_options *po;
};

static int write_format(void *arg, FILE *out)
{
    const struct job *job = arg;
    const struct emb_trace *t = job->t;
    const struct args *a = job->a;
    if (a->summary && a->format == FMT_JSON)
        return emb_trace_write_json_summary(t, out);
    if (a->summary)
        return emb_trace_write_summary(t, out);
    struct emb_trace_text_options to = {.absolute = a->absolute};
    switch (a->format) {
    case FMT_NDJSON: return emb_trace_write_ndjson(t, out);
    case FMT_PERFETTO: return emb_trace_write_perfetto_json(t, job->po, out);
    case FMT_PERFETTO_PROTO: return emb_trace_write_perfetto_proto(t, job->po, out);
    case FMT_JSON: return emb_trace_write_json(t, out);
    default: return emb_trace_write_text(t, out, &to);
    }
}

static int write_output(const struct emb_trace *t, const struct args *a,
                        const struct emb_perfetto_options *po)
{
    if (a->format == FMT_CTF)
        return emb_cli_write_dir(CMD, a->output, emb_trace_ctf_owns, write_ctf, (void *)t) == 0 ? 0 : -1;
    struct job job = {t, a, po};
    return emb_cli_write_output(CMD, a->output, write_format, &job) == 0 ? 0 : -1;
}

int emb_cmd_trace(int argc, char **argv)
{
    struct args a = {.format = FMT_TEXT};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;

    struct emb_command_input in;
    if (emb_command_input_read(CMD, a.file, EMB_CAP_SEC_TRACE, 0, &in) != 0)
        return EMB_EXIT_BAD;
    struct emb_catalog *own = NULL;
    const struct emb_catalog *cat =
        emb_catalog_choose(CMD, a.catalog, in.part.data, (size_t)in.part.length, &own);
    if (!cat) {
        emb_command_input_free(&in);
        return EMB_EXIT_BAD;
    }

    struct emb_progress *progress = NULL;
    struct emb_trace_options opt = {
        .catalog = cat,
        /* Only Perfetto (JSON and protobuf) and the JSON document read records kept in
         * memory. */
        .stream = a.format != FMT_PERFETTO && a.format != FMT_PERFETTO_PROTO &&
                  (a.format != FMT_JSON || a.summary),
        .name = a.file,
        .base_offset = in.part.offset,
        .progress = emb_progress_decoding,
        .progress_arg = &progress,
    };
    struct emb_trace *t = emb_trace_decode(in.part.data, (size_t)in.part.length, &opt);
    emb_progress_finish(progress);
    if (!t) {
        emb_cli_error_at(CMD, a.file, -1, "out of memory");
        emb_catalog_free(own);
        emb_command_input_free(&in);
        return EMB_EXIT_BAD;
    }
    const struct emb_trace_summary *s = emb_trace_summary(t);
    struct emb_perfetto_logs logs = {0};
    struct emb_perfetto_options po = {.logs = a.log ? &logs : NULL};
    rc = a.log ? read_logs(&a, &logs) : EMB_EXIT_OK;
    /* A trace refused whole writes nothing, so -o keeps what it held. */
    if (rc == EMB_EXIT_OK && !s->fatal && write_output(t, &a, &po) != 0)
        rc = EMB_EXIT_BAD;
    report(t);
    if (s->fatal || s->errors)
        rc = EMB_EXIT_BAD;
    emb_perfetto_logs_free(&logs);
    emb_trace_free(t);
    emb_catalog_free(own);
    emb_command_input_free(&in);
    return rc;
}
