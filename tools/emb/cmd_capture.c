/* `emb capture`: seal one run into a capture file, from a trace stream file or live from
 * any capture source (tools/lib/acquire/capture_source.h). */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <float.h>
#include <signal.h>
#include <unistd.h>

#include "capture_json.h"
#include "capture_session.h"
#include "catalog_known.h"
#include "parse_number.h"
#include "trace_catalog.h"

static const char *const CMD = "emb capture";


struct args {
    const char *output, *label, *revision, *catalog, *source;
    const char *log, *crash, *descriptor;
    /* a live source */
    int kind; /* enum emb_source_kind, -1: none */
    const char *target, *elf, *save_trace, *save_log, *save_crash, *token_file, *qtest;
    int via; /* enum emb_gdb_via */
    uint64_t poll_ms, baud, count, ram_start, ram_end;
    double duration;
    bool arm, until_closed, resume, json, no_halt;
};

enum { OPT_REV = 256, OPT_LOG, OPT_CRASH, OPT_DESC, OPT_RAM, OPT_COUNT, OPT_ARM, OPT_SAVE,
       OPT_SAVE_LOG, OPT_SAVE_CRASH, OPT_VIA, OPT_NO_HALT };

static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_STRING("label", 'l', struct args, label),
    EMB_CLI_STRING("revision", OPT_REV, struct args, revision),
    EMB_CLI_STRING("log", OPT_LOG, struct args, log),
    EMB_CLI_STRING("crash", OPT_CRASH, struct args, crash),
    EMB_CLI_STRING("descriptor", OPT_DESC, struct args, descriptor),
    EMB_CLI_OPTION_CATALOG(struct args),
    EMB_CLI_SOURCE_OPTIONS(struct args),
    EMB_CLI_SOURCE("swo", EMB_SOURCE_SWO),
    EMB_CLI_SOURCE("retained", EMB_SOURCE_RETAINED),
    EMB_CLI_OPTION_ELF(struct args),
    EMB_CLI_CALL("ram", required_argument, OPT_RAM),
    EMB_CLI_U64("count", OPT_COUNT, struct args, count, 1, UINT64_MAX, "a number of packets"),
    EMB_CLI_FLAG("arm", OPT_ARM, struct args, arm),
    EMB_CLI_STRING("save-trace", OPT_SAVE, struct args, save_trace),
    EMB_CLI_STRING("save-log", OPT_SAVE_LOG, struct args, save_log),
    EMB_CLI_STRING("save-crash", OPT_SAVE_CRASH, struct args, save_crash),
    EMB_CLI_CALL("via", required_argument, OPT_VIA),
    EMB_CLI_FLAG("no-halt", OPT_NO_HALT, struct args, no_halt),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_capture, .shortopts = ":o:l:h", .options = OPTIONS,
    .usage = "emb capture [options] -o OUT.emb SOURCE"};

/* --ram START:END */
static int ram_option(struct args *a, const char *arg)
{
    char start[32] = "";
    const char *colon = strchr(arg, ':');
    size_t n = colon ? (size_t)(colon - arg) : 0;
    if (colon && n < sizeof start) {
        memcpy(start, arg, n);
        start[n] = '\0';
    }
    if (!colon || n >= sizeof start || emb_parse_u64(start, 0, UINT64_MAX, &a->ram_start) != 0 ||
        emb_parse_u64(colon + 1, 0, UINT64_MAX, &a->ram_end) != 0 || a->ram_end <= a->ram_start)
        return emb_cli_bad_value(CMD, "ram", "START:END addresses", arg);
    return EMB_EXIT_OK;
}

static int via_option(struct args *a, const char *arg)
{
    if (!strcmp(arg, "descriptor"))
        a->via = EMB_GDB_VIA_DESCRIPTOR;
    else if (!strcmp(arg, "memchan"))
        a->via = EMB_GDB_VIA_MEMCHAN;
    else
        return emb_cli_bad_value(CMD, "via", "descriptor or memchan", arg);
    return EMB_EXIT_OK;
}

static int on_option(void *arg, int opt, char *value)
{
    struct args *a = arg;
    if (EMB_CLI_IS_SOURCE(opt))
        return emb_cli_source_option(CMD, opt, value, &a->kind, &a->target);
    switch (opt) {
    case OPT_VIA: return via_option(a, value);
    case OPT_RAM: return ram_option(a, value);
    }
    return EMB_EXIT_OK;
}

static bool too_long(const char *option, const char *text, unsigned max)
{
    if (text == NULL || strlen(text) <= max)
        return false;
    emb_cli_error(CMD, "--%s: at most %u characters", option, max);
    return true;
}

/* What the options together must say: one source, an output, short texts. */
static int check_args(int argc, char **argv, struct args *a)
{
    if (a->kind >= 0) {
        if (optind != argc) {
            emb_cli_error(CMD, "a source option and a source file: one source, please");
            return EMB_EXIT_BAD;
        }
    } else if (emb_cli_operands(&COMMAND, argc, 1, "no source file given", "one source file, please")) {
        return EMB_EXIT_BAD;
    }
    a->source = a->kind >= 0 ? a->target : argv[optind];
    if ((a->kind == EMB_SOURCE_TCP) != (a->token_file != NULL)) {
        emb_cli_error(CMD, a->token_file ? "--token-file is for --tcp"
                                         : "--tcp needs the record server's secret: --token-file FILE");
        return EMB_EXIT_BAD;
    }
    if (a->no_halt && a->kind != EMB_SOURCE_GDB) {
        emb_cli_error(CMD, "--no-halt is for --gdb (the other live sources never halt)");
        return EMB_EXIT_BAD;
    }
    if (!a->output) {
        emb_cli_error(CMD, "give the capture file to write with -o OUT.emb");
        return EMB_EXIT_BAD;
    }
    if (too_long("label", a->label, EMB_CAP_LABEL_MAX) ||
        too_long("revision", a->revision, EMB_CAP_REVISION_MAX))
        return EMB_EXIT_BAD;
    return EMB_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, on_option, a);
    return rc != 0 ? rc : check_args(argc, argv, a);
}

static volatile int interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The live progress line on stderr: bytes, frames, packets, losses, rate. */
static void on_source_progress(void *arg, const struct emb_source_stats *st)
{
    (void)arg;
    if (!isatty(STDERR_FILENO))
        return;
    double s = st->elapsed_ms > 0 ? (double)st->elapsed_ms / 1000.0 : 1.0;
    fprintf(stderr, "\r%s: %.1f s  %" PRIu64 " bytes  %" PRIu64 " frames  %" PRIu64
            " packets  %" PRIu64 " bad  %.1f KB/s   ", CMD, (double)st->elapsed_ms / 1000.0,
            st->bytes, st->frames, st->packets, st->bad_frames, (double)st->bytes / 1024.0 / s);
    fflush(stderr);
}

/* A --save-* file that could not be written: the capture goes on, the exit status is 2. */
static bool save_failed;

static void save(const char *path, const uint8_t *bytes, size_t len)
{
    if (emb_cli_write_bytes(CMD, path, bytes, len) != 0)
        save_failed = true;
}

/* --save-trace: the stream as it arrived, its header carrying the catalogue given when
 * it is one a reader may not know (--catalog), so the file decodes with no --catalog. */
static void save_trace(const char *path, const struct emb_capture_session_options *so,
                       const struct emb_capture_session *s)
{
    if (so->catalog_text == NULL) {
        save(path, s->trace, s->trace_len);
        return;
    }
    char err[256];
    size_t len = 0;
    uint8_t *stream = emb_trace_with_catalog_text(s->trace, s->trace_len, so->catalog_text,
                                                  so->catalog_text_len, &len, err, sizeof err);
    if (stream == NULL) {
        emb_cli_error_at(CMD, path, -1, "%s", err);
        save_failed = true;
        return;
    }
    save(path, stream, len);
    free(stream);
}

/* The live source the options name (the token read already). */
static struct emb_source_options live_options(const struct args *a, const char *token)
{
    return (struct emb_source_options){
        .kind = (enum emb_source_kind)a->kind,
        .target = a->target,
        .token = token,
        .baud = (uint32_t)a->baud,
        .elf = a->elf,
        .qtest = a->qtest,
        .resume = a->resume,
        .via = (enum emb_gdb_via)a->via,
        .no_halt = a->no_halt,
        .poll_ms = (int)a->poll_ms,
        .ram_start = a->ram_start,
        .ram_end = a->ram_end,
        .duration_s = a->duration,
        .max_packets = a->count,
        .arm = a->arm,
        .until_window_closed = a->until_closed,
        .stop = &interrupted,
        .progress = on_source_progress,
    };
}

/* What a live source did, on stderr: why it stopped, what arrived and what was lost. */
static void report_stats(const struct args *a, const struct emb_source_stats *st)
{
    fprintf(stderr, "%s: %s: stopped (%s) after %.1f s: %" PRIu64 " bytes, %" PRIu64 " frames, %"
            PRIu64 " trace packets, %" PRIu64 " log bytes\n", CMD, a->target, st->stop_reason,
            (double)st->elapsed_ms / 1000.0, st->bytes, st->frames, st->packets, st->log_bytes);
    if (st->bad_frames || st->foreign || st->resyncs || st->overflows)
        fprintf(stderr, "%s: %s: lost on the way: %" PRIu64 " damaged frames, %" PRIu64
                " packets of another run, %" PRIu64 " bytes skipped to resynchronise, %" PRIu64
                " SWO overflows\n", CMD, a->target, st->bad_frames, st->foreign, st->resyncs,
                st->overflows);
    if (a->kind == EMB_SOURCE_RETAINED)
        fprintf(stderr, "%s: %s: the ring survived %" PRIu32 " starts; %" PRIu32 " frames dropped "
                "for room, %" PRIu32 " cut by a reset, %" PRIu32 " longer than the ring\n", CMD,
                a->target, st->retained_starts, st->retained_dropped, st->retained_cut,
                st->retained_lost);
}

/* How the target was held: through the descriptor, or polled. */
static void report_holds(const struct args *a, const struct emb_source_result *r)
{
    const struct emb_source_stats *st = &r->stats;
    if (st->via_descriptor) {
        fprintf(stderr, "%s: %s: through the descriptor: %" PRIu64 " packets taken, %" PRIu64
                " overwritten before they were; %" PRIu64 " log bytes taken, %" PRIu64
                " overwritten; %s\n", CMD, a->target, st->packets, st->packets_lost, st->log_bytes,
                st->log_lost, st->released ? "the host freed what it took (it is the rings' consumer)"
                                           : "read only");
        fprintf(stderr, "%s: %s: held the target %" PRIu64 " times, %.3f ms on average, %.3f ms at "
                "most (%" PRIu64 " memory packets, %" PRIu64 " bytes)\n", CMD, a->target, st->halts,
                st->halt_ms_avg, st->halt_ms_max, st->round_trips, st->bytes_read);
        if (r->crash)
            fprintf(stderr, "%s: %s: the target holds a crash record of %zu bytes\n", CMD, a->target,
                    r->crash_len);
    } else if (st->halts) {
        fprintf(stderr, "%s: %s: %" PRIu64 " polls, the target halted %.3f ms on average, %.3f ms "
                "at most\n", CMD, a->target, st->polls, st->halt_ms_avg, st->halt_ms_max);
    }
    if (st->no_halt_refused)
        fprintf(stderr, "%s: %s: --no-halt: the server stopped the target to serve the first read "
                "(it serves memory only while the target is halted, as QEMU's stub does): halted "
                "at each poll instead\n", CMD, a->target);
    if (st->live && st->halts)
        fprintf(stderr, "%s: %s: --no-halt: %" PRIu64 " memory packets while the target ran; held "
                "only by connecting and detaching\n", CMD, a->target, st->live_reads);
    else if (st->live)
        fprintf(stderr, "%s: %s: never halted: %" PRIu64 " reads and %" PRIu64 " writes while the "
                "target ran, %.3f ms each on average, %.3f ms at most; the rings went unread "
                "%.1f ms at most\n", CMD, a->target, st->live_reads, st->live_writes,
                st->access_ms_avg, st->access_ms_max, st->poll_gap_ms_max);
}

/* The crash records a live source brought, and --save-crash. */
static void report_crash(const struct args *a, const struct emb_source_result *r)
{
    const struct emb_source_stats *st = &r->stats;
    if (st->crash_records || st->bad_crash_records)
        fprintf(stderr, "%s: %s: the target sent %" PRIu64 " crash record%s (channel 2)%s; %s\n",
                CMD, a->target, st->crash_records + st->bad_crash_records,
                st->crash_records + st->bad_crash_records == 1 ? "" : "s",
                st->bad_crash_records ? ", some not whole records, dropped" : "",
                r->crash ? "the newest is the capture's crash section (emb crash CAPTURE)" : "none kept");
    if (a->save_crash) {
        if (r->crash)
            save(a->save_crash, r->crash, r->crash_len);
        else
            fprintf(stderr, "%s: %s: no crash record: %s not written\n", CMD, a->target, a->save_crash);
    }
}

/* Reads the trace stream, from the file or live (Ctrl-C stops a live capture and keeps
 * what arrived). 0, or EMB_EXIT_BAD after saying why. */
static int acquire(const struct args *a, struct emb_capture_session_options *so,
                   struct emb_capture_session *s, struct emb_problems *ps)
{
    static char token[258];
    if (a->token_file != NULL && !emb_cli_read_token(CMD, a->token_file, token, sizeof token))
        return EMB_EXIT_BAD;
    struct emb_source_options live = live_options(a, a->token_file != NULL ? token : NULL);
    so->live = a->kind >= 0 ? &live : NULL;
    struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = emb_capture_session_acquire(so, s, ps);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    so->live = NULL;
    if (a->kind < 0 || rc != 0)
        return rc != 0 ? EMB_EXIT_BAD : EMB_EXIT_OK;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\n");
    report_stats(a, &s->live.stats);
    if (a->save_log)
        save(a->save_log, s->live.log, s->live.log_len);
    report_holds(a, &s->live);
    report_crash(a, &s->live);
    if (s->trace != NULL && a->save_trace)
        save_trace(a->save_trace, so, s);
    return EMB_EXIT_OK;
}

/* --json: the summary as one document, the identity and window as emb inspect --json
 * writes them. */
static void print_json(const struct args *a, const struct emb_capture_session *s)
{
    struct emb_json j;
    emb_json_begin_document(&j, stdout);
    emb_json_string(&j, "file", a->output);
    emb_json_string(&j, "source", a->source);
    emb_json_uint(&j, "bytes", s->file_len);
    emb_capture_json_identity(&j, &s->identity);
    emb_capture_json_window(&j, &s->window);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

static int write_capture(const struct args *a, const struct emb_capture_session *s)
{
    const char *path = a->output;
    if (emb_cli_write_bytes(CMD, path, s->file, s->file_len) != 0)
        return EMB_EXIT_BAD;
    if (a->json) {
        print_json(a, s);
        return EMB_EXIT_OK;
    }
    const struct emb_capture_window *w = &s->window;
    printf("%s: sealed %s: label %s, %" PRIu64 " events in %zu contexts, ", CMD, path,
           s->identity.label[0] ? s->identity.label : "(none)", w->stored, w->nrows);
    if (w->armed_frame != EMB_CAP_NO_FRAME)
        printf("window armed at frame %" PRIu32 ", ", w->armed_frame);
    printf("%" PRIu64 " dropped, %zu bytes\n", w->drops, s->file_len);
    return EMB_EXIT_OK;
}

static int seal(const struct args *a, const struct emb_catalog *cat, const char *cat_text,
                size_t cat_text_len)
{
    struct emb_progress *progress = NULL;
    struct emb_capture_session_options so = {
        .source = a->source, .label = a->label, .revision = a->revision, .log = a->log,
        .crash = a->crash, .descriptor = a->descriptor, .catalog = cat,
        .catalog_for = emb_catalog_known, .progress = emb_progress_decoding, .progress_arg = &progress,
        .catalog_text = cat_text, .catalog_text_len = cat_text_len,
    };
    struct emb_problems ps;
    emb_problems_init_callback(&ps, a->source, emb_cli_problem, (void *)CMD);
    struct emb_capture_session s = {0};
    int rc = acquire(a, &so, &s, &ps);
    if (rc == EMB_EXIT_OK) {
        rc = emb_capture_session_seal(&so, &s, &ps) == 0 ? EMB_EXIT_OK : EMB_EXIT_BAD;
        emb_progress_finish(progress);
    }
    if (rc == EMB_EXIT_OK)
        rc = write_capture(a, &s);
    emb_capture_session_free(&s);
    return rc;
}

int emb_cmd_capture(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "extract"))
        return emb_cmd_capture_extract(argc - 1, argv + 1);
    struct args a = {.kind = -1};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;
    struct emb_catalog *own = NULL;
    char *text = NULL; /* the catalogue given, kept in the capture */
    size_t text_len = 0;
    if (a.catalog && !(own = emb_catalog_load_kept(CMD, a.catalog, &text, &text_len)))
        return EMB_EXIT_BAD;
    if (own && emb_catalog_known(own->checksum)) {
        free(text); /* a catalogue every reader knows needs no copy */
        text = NULL;
    }
    rc = seal(&a, own, text, text_len); /* no catalogue given: the one the trace names */
    if (own)
        emb_catalog_free(own);
    free(text);
    return save_failed ? EMB_EXIT_BAD : rc;
}
