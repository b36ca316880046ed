/* `emb top`: a live view of what the target is doing, from any source `emb capture`
 * reads, refreshed while the target runs: per context its events and losses, per thread
 * its load and switches, interrupts per vector, the busiest event types, the worst
 * interrupt-lock monitor, the latest log lines (decoded against --elf); with --desc-qmp,
 * the target's own state read through its descriptor each view (stack high-water per
 * thread, each ring's fill and drops). Full screen (ncurses) on a terminal, with keys to
 * pause, sort and filter; --once and --json for scripts; -o seals what it saw into a
 * capture as `emb capture` would. The figures are tools/lib/live's; this file reads the
 * options, runs the source and draws. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <float.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "capture_session.h"
#include "catalog_known.h"
#include "live_log.h"
#include "live_model.h"
#include "live_stream.h"
#include "top_draw.h"
#include "top_target.h"

static const char *const CMD = "emb top";
#define FILTER_MAX 32u

struct args {
    const char *output, *catalog, *elf, *qtest, *token_file, *sort_name, *desc_qmp, *filter;
    int kind; /* enum emb_source_kind, -1: none */
    const char *target;
    uint64_t interval_ms, poll_ms, baud;
    double duration;
    bool resume, once, json, until_closed;
};

enum { OPT_INTERVAL = 256, OPT_ONCE, OPT_SORT, OPT_DESC_QMP, OPT_FILTER };

static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_OPTION_CATALOG(struct args),
    EMB_CLI_OPTION_ELF(struct args),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_SOURCE_OPTIONS(struct args),
    EMB_CLI_U64("interval", OPT_INTERVAL, struct args, interval_ms, 50, 60000,
                "milliseconds, 50 to 60000"),
    EMB_CLI_FLAG("once", OPT_ONCE, struct args, once),
    EMB_CLI_STRING("sort", OPT_SORT, struct args, sort_name),
    EMB_CLI_STRING("desc-qmp", OPT_DESC_QMP, struct args, desc_qmp),
    EMB_CLI_STRING("filter", OPT_FILTER, struct args, filter),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_top, .shortopts = ":o:h", .options = OPTIONS,
    .usage = "emb top [options] SOURCE (--qemu-qmp, --gdb, --pid, --tcp, --unix, --serial, --file)"};

static int on_option(void *arg, int opt, char *value)
{
    struct args *a = arg;
    if (EMB_CLI_IS_SOURCE(opt))
        return emb_cli_source_option(CMD, opt, value, &a->kind, &a->target);
    return EMB_EXIT_OK;
}

static enum emb_live_sort sort_of(const char *name)
{
    return !strcmp(name, "switches") ? EMB_LIVE_SORT_SWITCHES
           : !strcmp(name, "name")   ? EMB_LIVE_SORT_NAME
                                     : EMB_LIVE_SORT_LOAD;
}

static int parse_args(int argc, char **argv, struct args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, on_option, a);
    if (rc != 0)
        return rc;
    if (optind != argc || a->kind < 0) {
        emb_cli_error(CMD, a->kind < 0 ? "no source: give one as emb capture takes it (--qemu-qmp, "
                                         "--gdb, --pid, --tcp, --unix, --serial, --file)"
                                       : "a source option, and no operands");
        return EMB_EXIT_BAD;
    }
    if ((a->kind == EMB_SOURCE_TCP) != (a->token_file != NULL)) {
        emb_cli_error(CMD, a->token_file ? "--token-file is for --tcp"
                                         : "--tcp needs the record server's secret: --token-file FILE");
        return EMB_EXIT_BAD;
    }
    if (a->sort_name && strcmp(a->sort_name, "load") && strcmp(a->sort_name, "switches") &&
        strcmp(a->sort_name, "name"))
        return emb_cli_bad_value(CMD, "sort", "load, switches or name", a->sort_name);
    if (a->desc_qmp && !a->elf) {
        emb_cli_error(CMD, "--desc-qmp reads the target through its descriptor: it needs the firmware, --elf FW");
        return EMB_EXIT_BAD;
    }
    if (a->filter && strlen(a->filter) >= FILTER_MAX)
        return emb_cli_bad_value(CMD, "filter", "a name's part, at most 31 characters", a->filter);
    return EMB_EXIT_OK;
}

/* ---- the run ---- */

static volatile int stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static const char *const SORT_NAMES[] = {"load", "switches", "name"};

struct top {
    const struct args *a;
    struct emb_live_stream *stream;
    struct emb_live_model *model;
    struct emb_catalog *own;
    struct emb_logdb *logdb;       /* --elf's call sites, or NULL */
    struct emb_live_log *log;      /* NULL: no log decoded */
    struct top_target *target;     /* --desc-qmp, once connected */
    size_t log_fed;                /* bytes of the log stream given to `log` */
    bool chosen, failed, screen, paused, editing;
    enum emb_live_sort sort;
    char filter[FILTER_MAX];
    uint64_t last_draw_ms;
    const struct emb_live_view *view;
};

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void draw(struct top *t, const char *state, bool ended)
{
    struct top_status st = {.source = t->a->target, .state = t->paused && !ended ? "paused" : state,
                            .sort = SORT_NAMES[t->sort], .filter = t->filter, .editing = t->editing,
                            .ended = ended, .log = t->log ? emb_live_log_view(t->log) : NULL};
    if (t->screen)
        top_screen_draw(t->view, &st);
    else if (t->a->json)
        top_draw_json(stdout, t->view, &st);
    else
        top_draw_text(stdout, t->view, &st);
    if (!t->screen && !t->a->json && !t->a->once && !ended)
        printf("\n");
}

static void read_target(struct top *t, bool fresh);

/* A key while the filter is typed: text adds to it, Backspace takes from it, Enter keeps
 * it, Esc clears it. */
static void filter_key(struct top *t, int c)
{
    size_t n = strlen(t->filter);
    if (c == '\n' || c == '\r' || c == '\n')
        t->editing = false;
    else if (c == 27) {
        t->filter[0] = '\0';
        t->editing = false;
    } else if ((c == 127 || c == 8) && n > 0)
        t->filter[n - 1] = '\0';
    else if (c >= 0x20 && c < 0x7F && n + 1 < sizeof t->filter) {
        t->filter[n] = (char)c;
        t->filter[n + 1] = '\0';
    }
}

/* A key: q quits, p pauses the drawing (reading goes on), s changes the order, / types a
 * filter. True when the view is to be drawn again. */
static bool key(struct top *t, int c)
{
    if (t->editing)
        filter_key(t, c);
    else if (c == 'q' || c == 'Q')
        stop = 1;
    else if (c == 'p' || c == 'P' || c == ' ')
        t->paused = !t->paused;
    else if (c == 's' || c == 'S')
        t->sort = (enum emb_live_sort)((t->sort + 1) % 3);
    else if (c == '/')
        t->editing = true;
    else
        return false;
    return true;
}

static void keys(struct top *t)
{
    bool changed = false;
    for (int c; t->screen && (c = top_screen_key(false)) >= 0;)
        changed |= key(t, c);
    if (changed && t->view != NULL && !stop)
        draw(t, "reading", false); /* the same figures, at once in their new order or filter */
}

/* A view each interval; --once: the first one that saw events, then the source stops. */
static void maybe_draw(struct top *t)
{
    keys(t);
    uint64_t now = now_ms();
    if (stop) /* stopping: the last view is last_view()'s (--once: the one drawn) */
        return;
    if (t->model == NULL || now - t->last_draw_ms < t->a->interval_ms || t->paused)
        return;
    t->last_draw_ms = now;
    read_target(t, false);
    t->view = emb_live_model_view(t->model, t->sort);
    if (t->a->once && t->view->events == 0)
        return;
    draw(t, "reading", false);
    if (t->a->once)
        stop = 1;
}

/* --desc-qmp: the target's own state into the model, before each view (connected at the
 * first: the source may have been what started the guest); `fresh`: read after now. */
static void read_target(struct top *t, bool fresh)
{
    if (t->a->desc_qmp == NULL || t->failed)
        return;
    struct emb_problems ps;
    emb_problems_init_callback(&ps, t->a->desc_qmp, emb_cli_problem, (void *)CMD);
    if (t->target == NULL) { /* the first view waits for the first read */
        fresh = true;
        if ((t->target = top_target_open(t->a->desc_qmp, t->a->elf, t->a->interval_ms, &ps)) == NULL) {
            t->failed = true;
            stop = 1;
            return;
        }
    }
    if (!top_target_apply(t->target, t->model, fresh, &ps)) {
        t->failed = true;
        stop = 1;
    }
}

static void on_log(void *arg, const uint8_t *bytes, size_t len)
{
    struct top *t = arg;
    if (t->log != NULL)
        emb_live_log_feed(t->log, bytes, len);
    t->log_fed += len;
}

/* Decodes what arrived (`last`: and a packet cut short) into the model. */
static void take_rounds(struct top *t, bool last)
{
    bool oom = false;
    for (const struct emb_trace *r; !t->failed && (r = emb_live_stream_next(t->stream, last, &oom));)
        if (emb_live_model_add(t->model, r) != 0)
            oom = true;
    if (oom && !t->failed) {
        emb_cli_error(CMD, "out of memory");
        t->failed = true;
        stop = 1;
    }
}

/* The catalogue the stream names, from its header, once. False (stopping) when none. */
static bool choose_catalog(struct top *t, const uint8_t *header, size_t header_len)
{
    if (t->chosen)
        return true;
    const struct emb_catalog *cat = emb_catalog_choose(CMD, t->a->catalog, header, header_len, &t->own);
    if (cat == NULL) {
        t->failed = true;
        stop = 1;
        return false;
    }
    emb_live_stream_set_catalog(t->stream, cat);
    t->chosen = true;
    return true;
}

static void on_packets(void *arg, const uint8_t *header, size_t header_len, const uint8_t *packets,
                       size_t len)
{
    struct top *t = arg;
    if (t->failed || !choose_catalog(t, header, header_len))
        return;
    if (!emb_live_stream_packets(t->stream, header, header_len, packets, len))
        t->failed = true;
    take_rounds(t, false);
    maybe_draw(t);
}

static void on_progress(void *arg, const struct emb_source_stats *st)
{
    (void)st;
    maybe_draw(arg);
}

static struct emb_source_options live_options(struct top *t, const char *token)
{
    const struct args *a = t->a;
    return (struct emb_source_options){
        .kind = (enum emb_source_kind)a->kind, .target = a->target, .token = token,
        .baud = (uint32_t)a->baud, .elf = a->elf, .qtest = a->qtest, .resume = a->resume,
        .poll_ms = (int)a->poll_ms, .duration_s = a->duration, .stop = &stop,
        .until_window_closed = a->until_closed,
        .progress = on_progress, .progress_arg = t, .on_packets = on_packets, .on_log = on_log,
        .packets_arg = t,
    };
}

/* The end of the source: the last view, kept on the screen until q. */
static void last_view(struct top *t, const struct emb_capture_session *session)
{
    const struct emb_source_result *res = &session->live;
    const struct emb_source_stats *st = &res->stats;
    /* A source that gave its trace stream whole (a trace stream file) handed no packets
     * one by one: the whole stream is the one round. */
    if (!t->chosen && !t->failed && session->trace != NULL &&
        choose_catalog(t, session->trace, session->trace_len) &&
        !emb_live_stream_bytes(t->stream, session->trace, session->trace_len))
        t->failed = true;
    take_rounds(t, true);
    if (res->log_len > t->log_fed)
        on_log(t, res->log + t->log_fed, res->log_len - t->log_fed);
    if (t->log != NULL)
        emb_live_log_finish(t->log);
    if (t->failed)
        return;
    if (t->a->once && t->view != NULL && t->view->events != 0)
        return; /* shown already */
    read_target(t, true);
    t->view = emb_live_model_view(t->model, t->sort);
    char state[80];
    snprintf(state, sizeof state, "ended: %s", st->stop_reason[0] ? st->stop_reason : "end of source");
    draw(t, state, true);
    while (t->screen && !stop) { /* the source ended by itself: the view stays until q */
        int c = top_screen_key(true);
        if (c == -1 || (!t->editing && (c == 'q' || c == 'Q')))
            break;
        if (key(t, c)) {
            t->view = emb_live_model_view(t->model, t->sort);
            draw(t, state, true);
        }
    }
}

/* -o: what was seen, sealed as `emb capture -o` seals it. */
static int seal(struct top *t, struct emb_capture_session_options *so, struct emb_capture_session *s)
{
    struct emb_problems ps;
    emb_problems_init_callback(&ps, t->a->target, emb_cli_problem, (void *)CMD);
    if (s->trace == NULL) {
        emb_cli_error(CMD, "%s: no trace stream arrived: %s not written", t->a->target, t->a->output);
        return EMB_EXIT_BAD;
    }
    if (emb_capture_session_seal(so, s, &ps) != 0)
        return EMB_EXIT_BAD;
    return emb_cli_write_bytes(CMD, t->a->output, s->file, s->file_len) == 0 ? EMB_EXIT_OK : EMB_EXIT_BAD;
}

static int run(struct top *t)
{
    static char token[258];
    if (t->a->token_file != NULL && !emb_cli_read_token(CMD, t->a->token_file, token, sizeof token))
        return EMB_EXIT_BAD;
    struct emb_source_options live = live_options(t, t->a->token_file ? token : NULL);
    struct emb_capture_session_options so = {.source = t->a->target, .live = &live,
                                             .catalog_for = emb_catalog_known};
    struct emb_capture_session s = {0};
    struct emb_problems ps;
    emb_problems_init_callback(&ps, t->a->target, emb_cli_problem, (void *)CMD);
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    t->screen = isatty(STDOUT_FILENO) && !t->a->once && !t->a->json && top_screen_open();
    int rc = emb_capture_session_acquire(&so, &s, &ps) == 0 ? EMB_EXIT_OK : EMB_EXIT_BAD;
    if (rc == EMB_EXIT_OK)
        last_view(t, &s);
    if (t->screen)
        top_screen_close();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (t->failed)
        rc = EMB_EXIT_BAD;
    if (rc == EMB_EXIT_OK && t->a->output)
        rc = seal(t, &so, &s);
    emb_capture_session_free(&s);
    return rc;
}

/* The log lines need the ELF's call sites; a firmware without them shows none. */
static void open_log(struct top *t)
{
    if (t->a->elf == NULL)
        return;
    struct emb_problems kept, ps;
    emb_problems_init(&kept, t->a->elf);
    t->logdb = emb_logdb_open(t->a->elf, &kept);
    emb_problems_free(&kept);
    emb_problems_init_callback(&ps, t->a->elf, emb_cli_problem, (void *)CMD);
    if (t->logdb == NULL)
        emb_report(&ps, EMB_NOTE, -1, "no deferred log call sites: no log lines shown");
    else if ((t->log = emb_live_log_new(t->logdb, &ps)) == NULL)
        t->failed = true;
}

int emb_cmd_top(int argc, char **argv)
{
    struct args a = {.kind = -1, .interval_ms = 500};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;
    struct emb_trace_options opt = {.name = a.target};
    struct top t = {.a = &a, .sort = a.sort_name ? sort_of(a.sort_name) : EMB_LIVE_SORT_LOAD,
                    .last_draw_ms = now_ms(), .stream = emb_live_stream_new(&opt),
                    .model = emb_live_model_new()};
    if (t.stream != NULL && t.model != NULL) {
        if (a.filter)
            snprintf(t.filter, sizeof t.filter, "%s", a.filter);
        open_log(&t);
    }
    if (t.stream == NULL || t.model == NULL || t.failed) {
        emb_cli_error(CMD, "out of memory");
        rc = EMB_EXIT_BAD;
    } else {
        rc = run(&t);
    }
    emb_live_stream_free(t.stream);
    emb_live_model_free(t.model);
    emb_live_log_free(t.log);
    emb_logdb_free(t.logdb);
    top_target_close(t.target);
    emb_catalog_free(t.own);
    return rc;
}
