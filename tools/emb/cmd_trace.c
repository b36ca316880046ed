/* `emb trace`: decode a trace stream file and write it as text, JSON, Perfetto or CTF. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buffer.h"
#include "catalog_choice.h"
#include "live_stream.h"
#include "command_input.h"
#include "trace_decode.h"
#include "trace_names.h"
#include "trace_perfetto.h"
#include "trace_speedscope.h"
#include "trace_write.h"

static const char *const CMD = "emb trace";


enum format { FMT_TEXT, FMT_NDJSON, FMT_PERFETTO, FMT_CTF, FMT_JSON, FMT_PERFETTO_PROTO,
              FMT_SPEEDSCOPE };

struct args {
    enum format format;
    const char *output;
    const char *catalog;
    const char *file;
    const char *log, *elf; /* --log, --elf */
    bool json; /* --json or --format json, which no other format goes with */
    bool summary;
    bool latency;
    bool absolute;
    bool follow;
};

enum { OPT_SUMMARY = 256, OPT_ABSOLUTE, OPT_FOLLOW, OPT_LATENCY, OPT_LOG };
static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_CALL("format", required_argument, 'f'),
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_FLAG("summary", OPT_SUMMARY, struct args, summary),
    EMB_CLI_FLAG("latency", OPT_LATENCY, struct args, latency),
    EMB_CLI_FLAG("absolute", OPT_ABSOLUTE, struct args, absolute),
    EMB_CLI_OPTION_CATALOG(struct args),
    EMB_CLI_FLAG("follow", OPT_FOLLOW, struct args, follow),
    EMB_CLI_STRING("log", OPT_LOG, struct args, log),
    EMB_CLI_OPTION_ELF(struct args),
    EMB_CLI_OPTIONS_END,
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
    else if (!strcmp(value, "speedscope"))
        a->format = FMT_SPEEDSCOPE;
    else if (!strcmp(value, "ctf"))
        a->format = FMT_CTF;
    else if (!strcmp(value, "json"))
        a->json = true;
    else {
        emb_cli_error(CMD, "unknown format '%s' (text, ndjson, perfetto, perfetto-proto, speedscope, ctf)",
                      value);
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

static int on_option(void *arg, int opt, char *value)
{
    return opt == 'f' ? format_option(arg, value) : EMB_EXIT_OK;
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
    if (a->follow && (a->summary || (a->format != FMT_TEXT && a->format != FMT_NDJSON))) {
        emb_cli_error(CMD, "--follow writes text or ndjson records, as they arrive");
        return EMB_EXIT_BAD;
    }
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
    if (a->latency)
        return a->format == FMT_JSON ? emb_trace_write_json_latency(t, out) : emb_trace_write_latency(t, out);
    if (a->summary && a->format == FMT_JSON)
        return emb_trace_write_json_summary(t, out);
    if (a->summary)
        return emb_trace_write_summary(t, out);
    struct emb_trace_text_options to = {.absolute = a->absolute};
    switch (a->format) {
    case FMT_NDJSON: return emb_trace_write_ndjson(t, out);
    case FMT_PERFETTO: return emb_trace_write_perfetto_json(t, job->po, out);
    case FMT_PERFETTO_PROTO: return emb_trace_write_perfetto_proto(t, job->po, out);
    case FMT_SPEEDSCOPE: return emb_trace_write_speedscope(t, out);
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

/* ---- --follow ---- */

static volatile sig_atomic_t follow_stop;

static void on_follow_signal(int sig)
{
    (void)sig;
    follow_stop = 1;
}

/* What the input holds beyond what was read, to the stream. *eof at the end of a pipe. */
static int follow_read(int fd, struct emb_live_stream *ls, bool *eof)
{
    uint8_t chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            *eof = true;
            return 0;
        }
        if (!emb_live_stream_bytes(ls, chunk, (size_t)n))
            return -1;
    }
}

/* Writes the records of the packets that arrived since the last round (`last`: of all its
 * bytes, a last packet cut short too, as a dump ends), only those decoded. */
static int follow_write(struct emb_live_stream *ls, struct emb_trace_names *names,
                        const struct args *a, bool last)
{
    bool oom = false;
    const struct emb_trace *t = emb_live_stream_next(ls, last, &oom);
    if (t == NULL)
        return oom ? -1 : 0;
    if (a->format == FMT_NDJSON)
        return emb_trace_write_ndjson_from(t, stdout, NULL) != 0 || fflush(stdout) != 0 ? -1 : 0;
    if (!emb_trace_names_add(names, t))
        return -1;
    const struct emb_trace_text_options to = {.absolute = a->absolute, .names = names};
    return emb_trace_write_text(t, stdout, &to) != 0 || fflush(stdout) != 0 ? -1 : 0;
}

/* The catalogue the stream names, from its whole header (the input is opened once): true
 * once chosen, or until the header is whole; false after saying why not. */
static bool follow_catalog(const struct args *a, struct emb_live_stream *ls, bool *chosen,
                           bool enough, struct emb_catalog **own)
{
    size_t len;
    const uint8_t *start = emb_live_stream_start(ls, &len);
    if (*chosen || !(enough || emb_live_stream_header_done(ls)))
        return true; /* the whole header: it may carry the catalogue (its CATL block) */
    const struct emb_catalog *cat = emb_catalog_choose(CMD, a->catalog, start, len, own);
    if (cat == NULL)
        return false;
    emb_live_stream_set_catalog(ls, cat);
    *chosen = true;
    return true;
}

/* Reads and writes until the input's end (a pipe) or a signal (a file). */
static int follow_loop(const struct args *a, int fd, bool growing, struct emb_live_stream *ls,
                       struct emb_trace_names *names, struct emb_catalog **own)
{
    bool chosen = false;
    for (bool last = false; !last;) {
        bool eof = false;
        last = follow_stop != 0; /* a last look after the signal */
        if (follow_read(fd, ls, &eof) != 0) {
            emb_cli_error_at(CMD, a->file, -1, "following: %s", strerror(errno));
            return EMB_EXIT_BAD;
        }
        if (!follow_catalog(a, ls, &chosen, eof || last, own))
            return EMB_EXIT_BAD;
        if (chosen && follow_write(ls, names, a, last || (eof && !growing)) != 0) {
            emb_cli_error_at(CMD, a->file, -1, "following: %s", strerror(errno));
            return EMB_EXIT_BAD;
        }
        if (eof && !growing)
            break;
        if (eof && !last)
            nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    return EMB_EXIT_OK;
}

/* Follows FILE (or standard input) until its end (a pipe) or a signal (a file), decoding
 * each round's new packets only (tools/lib/live/live_stream.h). */
static int follow(const struct args *a)
{
    bool is_stdin = !strcmp(a->file, "-");
    int fd = is_stdin ? STDIN_FILENO : open(a->file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        emb_cli_error_at(CMD, a->file, -1, "cannot open: %s", strerror(errno));
        return EMB_EXIT_BAD;
    }
    struct stat st;
    bool growing = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    signal(SIGINT, on_follow_signal);
    signal(SIGTERM, on_follow_signal);
    struct emb_trace_options opt = {.name = a->file};
    struct emb_live_stream *ls = emb_live_stream_new(&opt);
    struct emb_trace_names *names = emb_trace_names_build_empty();
    struct emb_catalog *own = NULL;
    int rc = EMB_EXIT_BAD;
    if (ls == NULL || names == NULL)
        emb_cli_error_at(CMD, a->file, -1, "out of memory");
    else
        rc = follow_loop(a, fd, growing, ls, names, &own);
    if (!is_stdin)
        close(fd);
    emb_live_stream_free(ls);
    emb_trace_names_free(names);
    emb_catalog_free(own);
    return rc;
}

int emb_cmd_trace(int argc, char **argv)
{
    struct args a = {.format = FMT_TEXT};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;

    if (a.follow)
        return follow(&a);

    struct emb_command_input in;
    if (emb_command_input_map(CMD, a.file, EMB_CAP_SEC_TRACE, &in) != 0)
        return EMB_EXIT_BAD;
    struct emb_catalog *own = NULL;
    const struct emb_catalog *cat =
        emb_catalog_choose_named(CMD, a.catalog, a.file, in.bytes, in.size, &own);
    if (!cat) {
        emb_command_input_free(&in);
        return EMB_EXIT_BAD;
    }

    struct emb_progress *progress = NULL;
    struct emb_trace_options opt = {
        .catalog = cat,
        /* Only Perfetto's protobuf and speedscope read records kept in memory; the JSON
         * document, Perfetto's JSON, the summary's threads and the latency metrics walk a
         * cursor. */
        .stream = a.format != FMT_PERFETTO_PROTO && a.format != FMT_SPEEDSCOPE,
        .mapped = in.mapped,
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
