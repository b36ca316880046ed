/* `emb top`: a live view of what the target is doing, from any source `emb capture`
 * reads, refreshed while the target runs: per context its events and losses, per thread
 * its load and switches, interrupts per vector, the busiest event types, the worst
 * interrupt-lock monitor. Full screen (ncurses) on a terminal; --once and --json for
 * scripts; -o seals what it saw into a capture as `emb capture` would. The figures are
 * tools/lib/live's; this file reads the options, runs the source and draws. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <float.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "capture_session.h"
#include "catalog_known.h"
#include "live_model.h"
#include "live_stream.h"
#include "top_draw.h"

static const char *const CMD = "emb top";

struct args {
    const char *output, *catalog, *elf, *qtest, *token_file, *sort_name;
    int kind; /* enum emb_source_kind, -1: none */
    const char *target;
    uint64_t interval_ms, poll_ms, baud;
    double duration;
    bool resume, once, json;
};

enum { OPT_QTEST = 256, OPT_RESUME, OPT_TOKEN_FILE, OPT_BAUD, OPT_POLL, OPT_DURATION, OPT_INTERVAL, OPT_ONCE,
       OPT_SORT };

static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_OPTION_CATALOG(struct args),
    EMB_CLI_OPTION_ELF(struct args),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_SOURCE("pid", EMB_SOURCE_PID),
    EMB_CLI_SOURCE("file", EMB_SOURCE_FILE),
    EMB_CLI_SOURCE("tcp", EMB_SOURCE_TCP),
    EMB_CLI_SOURCE("unix", EMB_SOURCE_UNIX),
    EMB_CLI_SOURCE("serial", EMB_SOURCE_SERIAL),
    EMB_CLI_SOURCE("gdb", EMB_SOURCE_GDB),
    EMB_CLI_SOURCE("qemu-qmp", EMB_SOURCE_QMP),
    EMB_CLI_STRING("qtest", OPT_QTEST, struct args, qtest),
    EMB_CLI_FLAG("resume", OPT_RESUME, struct args, resume),
    EMB_CLI_STRING("token-file", OPT_TOKEN_FILE, struct args, token_file),
    EMB_CLI_CALL("baud", required_argument, OPT_BAUD),
    EMB_CLI_CALL("poll-ms", required_argument, OPT_POLL),
    EMB_CLI_CALL("duration", required_argument, OPT_DURATION),
    EMB_CLI_CALL("interval", required_argument, OPT_INTERVAL),
    EMB_CLI_FLAG("once", OPT_ONCE, struct args, once),
    EMB_CLI_STRING("sort", OPT_SORT, struct args, sort_name),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_top, .shortopts = ":o:h", .options = OPTIONS,
    .usage = "emb top [options] SOURCE (--qemu-qmp, --gdb, --pid, --tcp, --unix, --serial, --file)"};

static int on_option(void *arg, int opt, char *value)
{
    struct args *a = arg;
    if (opt >= EMB_OPT_SOURCE && opt <= EMB_OPT_SOURCE + EMB_SOURCE_QMP) {
        if (a->kind >= 0) {
            emb_cli_error(CMD, "one source, please");
            return EMB_EXIT_BAD;
        }
        a->kind = opt - EMB_OPT_SOURCE;
        a->target = value;
        return EMB_EXIT_OK;
    }
    switch (opt) {
    case OPT_BAUD:
        return emb_cli_option_u64(CMD, "baud", value, 1, 4000000, "a rate such as 115200", &a->baud);
    case OPT_POLL:
        return emb_cli_option_u64(CMD, "poll-ms", value, 1, 60000, "milliseconds, 1 to 60000", &a->poll_ms);
    case OPT_INTERVAL:
        return emb_cli_option_u64(CMD, "interval", value, 50, 60000, "milliseconds, 50 to 60000",
                                  &a->interval_ms);
    case OPT_DURATION:
        return emb_cli_option_double(CMD, "duration", value, DBL_MIN, DBL_MAX, "seconds", &a->duration);
    }
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
    bool chosen, failed, screen, paused;
    enum emb_live_sort sort;
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
    struct top_status st = {.source = t->a->target, .state = state, .sort = SORT_NAMES[t->sort],
                            .ended = ended};
    if (t->screen)
        top_screen_draw(t->view, &st);
    else if (t->a->json)
        top_draw_json(stdout, t->view, &st);
    else
        top_draw_text(stdout, t->view, &st);
    if (!t->screen && !t->a->json && !t->a->once && !ended)
        printf("\n");
}

/* The keys: q quits, p pauses the drawing (reading goes on), s changes the order. */
static void keys(struct top *t)
{
    for (int c; t->screen && (c = top_screen_key(false)) >= 0;) {
        if (c == 'q' || c == 'Q')
            stop = 1;
        else if (c == 'p' || c == 'P' || c == ' ')
            t->paused = !t->paused;
        else if (c == 's' || c == 'S')
            t->sort = (enum emb_live_sort)((t->sort + 1) % 3);
    }
}

/* A view each interval; --once: the first one that saw events, then the source stops. */
static void maybe_draw(struct top *t)
{
    keys(t);
    uint64_t now = now_ms();
    if (t->model == NULL || now - t->last_draw_ms < t->a->interval_ms || t->paused)
        return;
    t->last_draw_ms = now;
    t->view = emb_live_model_view(t->model, t->sort);
    if (t->a->once && t->view->events == 0)
        return;
    draw(t, "reading", false);
    if (t->a->once)
        stop = 1;
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

static void on_packets(void *arg, const uint8_t *header, size_t header_len, const uint8_t *packets,
                       size_t len)
{
    struct top *t = arg;
    if (t->failed)
        return;
    if (!t->chosen) { /* the catalogue the stream names, from its header */
        const struct emb_catalog *cat = emb_catalog_choose(CMD, t->a->catalog, header, header_len, &t->own);
        if (cat == NULL) {
            t->failed = true;
            stop = 1;
            return;
        }
        emb_live_stream_set_catalog(t->stream, cat);
        t->chosen = true;
    }
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
        .progress = on_progress, .progress_arg = t, .on_packets = on_packets, .packets_arg = t,
    };
}

/* The end of the source: the last view, kept on the screen until q. */
static void last_view(struct top *t, const struct emb_source_stats *st)
{
    take_rounds(t, true);
    if (t->failed)
        return;
    if (t->a->once && t->view != NULL && t->view->events != 0)
        return; /* shown already */
    t->view = emb_live_model_view(t->model, t->sort);
    char state[80];
    snprintf(state, sizeof state, "ended: %s", st->stop_reason[0] ? st->stop_reason : "end of source");
    draw(t, state, true);
    while (t->screen && !stop) { /* the source ended by itself: the view stays until q */
        int c = top_screen_key(true);
        if (c == 'q' || c == 'Q' || c == -1)
            break;
        if (c == 's' || c == 'S') {
            t->sort = (enum emb_live_sort)((t->sort + 1) % 3);
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
        last_view(t, &s.live.stats);
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
    if (t.stream == NULL || t.model == NULL) {
        emb_cli_error(CMD, "out of memory");
        rc = EMB_EXIT_BAD;
    } else {
        rc = run(&t);
    }
    emb_live_stream_free(t.stream);
    emb_live_model_free(t.model);
    emb_catalog_free(t.own);
    return rc;
}
