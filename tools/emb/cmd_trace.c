/* `emb trace`: decode a trace stream file and write it as text, JSON, Perfetto or CTF. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "catalog_known.h"
#include "cli.h"
#include "emb_cmds.h"
#include "trace_decode.h"
#include "trace_write.h"

static const char *const CMD = "emb trace";

static void help(FILE *out)
{
    fprintf(out,
            "Usage: emb trace [options] FILE\n"
            "\n"
            "Decodes a trace stream file (\"EMBT\": what the native port dumps or streams) and\n"
            "prints its events, one line each, merged by time across contexts. Losses appear\n"
            "where they happened and in a summary on stderr.\n"
            "\n"
            "Options:\n"
            "  -f, --format FMT    text (default), ndjson, perfetto (Chrome JSON trace for\n"
            "                      ui.perfetto.dev), or ctf (a CTF 1.8 directory; needs -o)\n"
            "  -o, --output OUT    write to file OUT (a directory for ctf) instead of stdout\n"
            "      --json          one JSON document: header, contexts, events, summary\n"
            "      --summary       print only the per-context summary\n"
            "      --absolute      text: wall-clock time (UTC) instead of seconds since start\n"
            "      --catalog FILE  decode with this catalogue (YAML) instead of the one the file\n"
            "                      names (the built-in one, or an imported format's)\n"
            "      --color[=WHEN]  colour: auto (default), always, never; NO_COLOR is honoured\n"
            "  -h, --help          show this help\n"
            "\n"
            "Exit status: 0 when the file decoded cleanly (losses the target recorded are not\n"
            "errors), 2 on bad input or usage, after decoding what could be decoded.\n");
}

enum format { FMT_TEXT, FMT_NDJSON, FMT_PERFETTO, FMT_CTF, FMT_JSON };

struct args {
    enum format format;
    const char *output;
    const char *catalog;
    const char *file;
    bool summary;
    bool absolute;
};

static int parse_args(int argc, char **argv, struct args *a)
{
    enum { OPT_JSON = 256, OPT_SUMMARY, OPT_ABSOLUTE, OPT_CATALOG };
    static const struct option options[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, OPT_JSON},
        {"summary", no_argument, NULL, OPT_SUMMARY},
        {"absolute", no_argument, NULL, OPT_ABSOLUTE},
        {"catalog", required_argument, NULL, OPT_CATALOG},
        EMB_CLI_OPTIONS_COMMON,
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int c;
    optind = 0; /* getopt again from the start: main may have used it */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:o:h", options, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (!strcmp(optarg, "text"))
                a->format = FMT_TEXT;
            else if (!strcmp(optarg, "ndjson"))
                a->format = FMT_NDJSON;
            else if (!strcmp(optarg, "perfetto") || !strcmp(optarg, "chrome"))
                a->format = FMT_PERFETTO;
            else if (!strcmp(optarg, "ctf"))
                a->format = FMT_CTF;
            else if (!strcmp(optarg, "json"))
                json = true;
            else {
                emb_cli_error(CMD, "unknown format '%s' (text, ndjson, perfetto, ctf)", optarg);
                return EMB_EXIT_BAD;
            }
            break;
        case 'o': a->output = optarg; break;
        case OPT_JSON: json = true; break;
        case OPT_SUMMARY: a->summary = true; break;
        case OPT_ABSOLUTE: a->absolute = true; break;
        case OPT_CATALOG: a->catalog = optarg; break;
        case EMB_OPT_COLOR:
            if (emb_cli_color_option(CMD, optarg) != 0)
                return EMB_EXIT_BAD;
            break;
        case 'h': help(stdout); return -1;
        default:
            return emb_cli_bad_option(CMD, c, argv);
        }
    }
    if (json) {
        if (a->format != FMT_TEXT) {
            emb_cli_error(CMD, "--json and --format %s exclude each other",
                          a->format == FMT_NDJSON ? "ndjson" : a->format == FMT_CTF ? "ctf" : "perfetto");
            return EMB_EXIT_BAD;
        }
        a->format = FMT_JSON;
    }
    if (optind + 1 != argc) {
        emb_cli_error(CMD, optind == argc ? "no trace file given" : "one trace file, please");
        fprintf(stderr, "Usage: emb trace [options] FILE (emb trace --help)\n");
        return EMB_EXIT_BAD;
    }
    a->file = argv[optind];
    if (a->format == FMT_CTF && !a->output) {
        emb_cli_error(CMD, "--format ctf writes a directory: give it with -o DIR");
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
    struct emb_progress **p = arg;
    if (!*p && total >= (8u << 20)) /* small files decode before a bar could be seen */
        *p = emb_progress_start("decoding", total);
    emb_progress_update(*p, done);
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

static int write_output(const struct emb_trace *t, const struct args *a)
{
    if (a->format == FMT_CTF) {
        char err[512];
        if (emb_trace_write_ctf(t, a->output, err, sizeof err) != 0) {
            emb_cli_error(CMD, "%s", err);
            return -1;
        }
        return 0;
    }
    FILE *out = stdout;
    if (a->output && strcmp(a->output, "-") && !(out = fopen(a->output, "w"))) {
        emb_cli_error_at(CMD, a->output, -1, "cannot create: %s", strerror(errno));
        return -1;
    }
    int rc;
    if (a->summary && a->format == FMT_JSON) {
        struct emb_json j;
        emb_json_init(&j, out, true);
        emb_json_begin_object(&j, NULL);
        emb_json_string(&j, "file", emb_trace_name(t));
        emb_trace_json_header(&j, t);
        emb_trace_json_contexts(&j, t);
        emb_trace_json_summary(&j, t);
        emb_json_end_object(&j);
        emb_json_end(&j);
        rc = ferror(out) ? -1 : 0;
    } else if (a->summary) {
        rc = emb_trace_write_summary(t, out);
    } else {
        struct emb_trace_text_options to = {.absolute = a->absolute};
        switch (a->format) {
        case FMT_NDJSON: rc = emb_trace_write_ndjson(t, out); break;
        case FMT_PERFETTO: rc = emb_trace_write_perfetto(t, out); break;
        case FMT_JSON: rc = emb_trace_write_json(t, out); break;
        default: rc = emb_trace_write_text(t, out, &to); break;
        }
    }
    if (fflush(out) != 0)
        rc = -1;
    if (out != stdout && fclose(out) != 0)
        rc = -1;
    if (rc != 0)
        emb_cli_error_at(CMD, a->output ? a->output : "stdout", -1, "write error: %s",
                         strerror(errno));
    return rc;
}

int emb_cmd_trace(int argc, char **argv)
{
    struct args a = {.format = FMT_TEXT};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;

    struct emb_catalog *own = NULL;
    const struct emb_catalog *cat;
    if (a.catalog) {
        char err[512];
        if (!(own = emb_catalog_load(a.catalog, err, sizeof err))) {
            emb_cli_error(CMD, "%s", err);
            return EMB_EXIT_BAD;
        }
        cat = own;
    } else if (!(cat = emb_catalog_for_file(a.file))) {
        emb_cli_error(CMD, "the built-in catalogue does not parse");
        return EMB_EXIT_BAD;
    }

    struct emb_progress *progress = NULL;
    struct emb_trace_options opt = {
        .catalog = cat,
        .progress = on_progress,
        .progress_arg = &progress,
    };
    struct emb_trace *t = emb_trace_decode_file(a.file, &opt);
    emb_progress_finish(progress);
    if (!t) {
        emb_cli_error_at(CMD, a.file, -1, "out of memory");
        if (own)
            emb_catalog_free(own);
        return EMB_EXIT_BAD;
    }
    const struct emb_trace_summary *s = emb_trace_summary(t);
    rc = EMB_EXIT_OK;
    if (!s->fatal && write_output(t, &a) != 0)
        rc = EMB_EXIT_BAD;
    report(t);
    if (s->fatal || s->errors)
        rc = EMB_EXIT_BAD;
    emb_trace_free(t);
    if (own)
        emb_catalog_free(own);
    return rc;
}
