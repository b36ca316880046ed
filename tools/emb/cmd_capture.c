/* `emb capture`: seal what the native port produced into a capture file. */
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
#include "emb_cmds.h"
#include "trace_decode.h"

static const char *const CMD = "emb capture";

static void help(FILE *out)
{
    fprintf(out,
            "Usage: emb capture [options] -o OUT.emb SOURCE\n"
            "\n"
            "Seals one run into a capture file (docs/formats/capture.md): the identity the\n"
            "firmware stamped, its window, the CTF metadata, the trace stream, and optional\n"
            "log, crash-record and descriptor sections, under a CRC-32 over every byte.\n"
            "SOURCE is a trace stream file (\"EMBT\") the native port dumped or streamed; it\n"
            "must decode cleanly with the tool's catalogue.\n"
            "\n"
            "Options:\n"
            "  -o, --output OUT      the capture file to write (required)\n"
            "  -l, --label TEXT      what this run is: good, bad, ... (at most 32 characters)\n"
            "      --revision REV    source revision of the firmware (a git commit, a tag)\n"
            "      --log FILE        the log stream, kept as its own section\n"
            "      --crash FILE      a crash record, kept as its own section\n"
            "      --descriptor FILE a debug descriptor snapshot, kept as its own section\n"
            "      --pid PID         read a live process through its debug descriptor\n"
            "                        (not available in this version)\n"
            "      --catalog FILE    check with this catalogue (YAML) instead of the built-in one\n"
            "      --color[=WHEN]    colour: auto (default), always, never\n"
            "  -h, --help            show this help\n"
            "\n"
            "Exit status: 0 sealed, 2 bad input or usage.\n");
}

struct args {
    const char *output, *label, *revision, *catalog, *source, *pid;
    const char *log, *crash, *descriptor;
};

static int parse_args(int argc, char **argv, struct args *a)
{
    enum { OPT_REV = 256, OPT_LOG, OPT_CRASH, OPT_DESC, OPT_PID, OPT_CATALOG, OPT_COLOR };
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},   {"label", required_argument, NULL, 'l'},
        {"revision", required_argument, NULL, OPT_REV}, {"log", required_argument, NULL, OPT_LOG},
        {"crash", required_argument, NULL, OPT_CRASH},
        {"descriptor", required_argument, NULL, OPT_DESC},
        {"pid", required_argument, NULL, OPT_PID}, {"catalog", required_argument, NULL, OPT_CATALOG},
        {"color", optional_argument, NULL, OPT_COLOR}, {"colour", optional_argument, NULL, OPT_COLOR},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int c, mode;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:l:h", options, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case 'l': a->label = optarg; break;
        case OPT_REV: a->revision = optarg; break;
        case OPT_LOG: a->log = optarg; break;
        case OPT_CRASH: a->crash = optarg; break;
        case OPT_DESC: a->descriptor = optarg; break;
        case OPT_PID: a->pid = optarg; break;
        case OPT_CATALOG: a->catalog = optarg; break;
        case OPT_COLOR:
            if ((mode = emb_cli_parse_color(optarg)) < -1) {
                emb_cli_error(CMD, "--color takes auto, always or never, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            emb_cli_set_color(mode);
            break;
        case 'h': help(stdout); return -1;
        case ':':
            emb_cli_error(CMD, "option '%s' needs a value", argv[optind - 1]);
            return EMB_EXIT_BAD;
        default:
            emb_cli_error(CMD, "unknown option '%s'", argv[optind - 1]);
            fprintf(stderr, "Try 'emb capture --help'.\n");
            return EMB_EXIT_BAD;
        }
    }
    if (a->pid) {
        emb_cli_error(CMD, "--pid %s: reading a live process needs the debug descriptor, which this "
                      "version of emb does not have yet; dump the trace from the process "
                      "(emb_native_trace_dump) and capture the file", a->pid);
        return EMB_EXIT_BAD;
    }
    if (optind + 1 != argc) {
        emb_cli_error(CMD, optind == argc ? "no source file given" : "one source file, please");
        fprintf(stderr, "Usage: emb capture [options] -o OUT.emb SOURCE (emb capture --help)\n");
        return EMB_EXIT_BAD;
    }
    a->source = argv[optind];
    if (!a->output) {
        emb_cli_error(CMD, "give the capture file to write with -o OUT.emb");
        return EMB_EXIT_BAD;
    }
    if (a->label && strlen(a->label) > EMB_CAP_LABEL_MAX) {
        emb_cli_error(CMD, "--label: at most %u characters", EMB_CAP_LABEL_MAX);
        return EMB_EXIT_BAD;
    }
    if (a->revision && strlen(a->revision) > EMB_CAP_REVISION_MAX) {
        emb_cli_error(CMD, "--revision: at most %u characters", EMB_CAP_REVISION_MAX);
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        emb_cli_error_at(CMD, path, -1, "cannot open: %s", strerror(errno));
        return NULL;
    }
    size_t cap = 1u << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *q = realloc(buf, cap * 2);
        if (!q) {
            free(buf);
            buf = NULL;
        } else {
            buf = q;
            cap *= 2;
        }
    }
    bool err = ferror(f);
    fclose(f);
    if (!buf || err) {
        emb_cli_error_at(CMD, path, -1, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
    struct emb_progress **p = arg;
    if (!*p && total >= (8u << 20))
        *p = emb_progress_start("decoding", total);
    emb_progress_update(*p, done);
}

static int seal(const struct args *a, const struct emb_catalog *cat)
{
    size_t trace_len = 0;
    uint8_t *trace_bytes = slurp(a->source, &trace_len);
    if (!trace_bytes)
        return EMB_EXIT_BAD;
    struct emb_progress *progress = NULL;
    struct emb_trace_options to = {.catalog = cat, .name = a->source, .progress = on_progress,
                                   .progress_arg = &progress};
    struct emb_trace *t = emb_trace_decode(trace_bytes, trace_len, &to);
    emb_progress_finish(progress);
    int rc = EMB_EXIT_BAD;
    struct emb_capture_parts parts;
    memset(&parts, 0, sizeof parts);
    uint8_t *opaque[3] = {NULL, NULL, NULL};
    char *metadata = NULL;
    uint8_t *file = NULL;
    if (!t) {
        emb_cli_error_at(CMD, a->source, -1, "out of memory");
        goto out;
    }
    size_t n;
    const struct emb_trace_issue *is = emb_trace_issues(t, &n);
    if (emb_trace_summary(t)->fatal || emb_trace_summary(t)->errors) {
        for (size_t i = 0; i < n; i++)
            emb_cli_error_at(CMD, a->source, is[i].offset, "%s", is[i].message);
        emb_cli_error(CMD, "%s does not decode cleanly: not sealed", a->source);
        goto out;
    }
    if (emb_capture_describe(t, a->label, a->revision, &parts.identity, &parts.window) != 0 ||
        !(metadata = emb_capture_metadata(t, &parts.metadata_len))) {
        emb_cli_error(CMD, "out of memory");
        goto out;
    }
    parts.metadata = metadata;
    parts.trace = trace_bytes;
    parts.trace_len = trace_len;
    const char *paths[3] = {a->log, a->crash, a->descriptor};
    const uint16_t types[3] = {EMB_CAP_SEC_LOG, EMB_CAP_SEC_CRASH, EMB_CAP_SEC_DESCRIPTOR};
    for (int i = 0; i < 3; i++) {
        if (!paths[i])
            continue;
        size_t len = 0;
        if (!(opaque[i] = slurp(paths[i], &len)))
            goto out;
        parts.opaque[parts.nopaque++] = (struct emb_cap_section){
            .type = types[i], .version = 1, .data = opaque[i], .length = len};
    }
    char err[256];
    size_t len = 0;
    if (!(file = emb_capture_encode(&parts, &len, err, sizeof err))) {
        emb_cli_error(CMD, "%s", err);
        goto out;
    }
    FILE *f = fopen(a->output, "wb");
    if (!f) {
        emb_cli_error_at(CMD, a->output, -1, "cannot create: %s", strerror(errno));
        goto out;
    }
    bool bad = fwrite(file, 1, len, f) != len;
    if (fclose(f) != 0 || bad) {
        emb_cli_error_at(CMD, a->output, -1, "write error: %s", strerror(errno));
        goto out;
    }
    const struct emb_cap_window *w = &parts.window;
    printf("%s: sealed %s: label %s, %" PRIu64 " events in %zu contexts, ", CMD, a->output,
           parts.identity.label[0] ? parts.identity.label : "(none)", w->stored, w->nrows);
    if (w->armed_frame != EMB_CAP_NO_FRAME)
        printf("window armed at frame %" PRIu32 ", ", w->armed_frame);
    printf("%" PRIu64 " dropped, %zu bytes\n", w->drops, len);
    rc = EMB_EXIT_OK;
out:
    free(file);
    for (int i = 0; i < 3; i++)
        free(opaque[i]);
    free(metadata);
    free(parts.window.rows);
    emb_trace_free(t);
    free(trace_bytes);
    return rc;
}

int emb_cmd_capture(int argc, char **argv)
{
    struct args a = {0};
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
    } else if (!(cat = emb_catalog_builtin())) {
        emb_cli_error(CMD, "the built-in catalogue does not parse");
        return EMB_EXIT_BAD;
    }
    rc = seal(&a, cat);
    if (own)
        emb_catalog_free(own);
    return rc;
}
