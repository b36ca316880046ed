/* What every `emb` subcommand shares: messages, colour, progress, JSON. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parse_number.h"

static void vmessage(const char *cmd, const char *file, long long offset, const char *fmt,
                     va_list ap)
{
    fflush(stdout); /* keep an error after the output it concerns on a shared terminal */
    /* A message quotes file names, file contents and target strings: escaped, so that no
     * input reaches the terminal as a control sequence or forges a line of its own. */
    char text[2048], safe[4 * sizeof text];
    vsnprintf(text, sizeof text, fmt, ap);
    fprintf(stderr, "%s%s%s: ", emb_color_code(stderr, EMB_C_BOLD), cmd ? cmd : "emb",
            emb_color_code(stderr, EMB_C_RESET));
    if (file)
        fprintf(stderr, "%s: ", emb_text_escape_str(safe, sizeof safe, file));
    if (offset >= 0)
        fprintf(stderr, "byte %lld: ", offset);
    fputs(emb_text_escape_str(safe, sizeof safe, text), stderr);
    fputc('\n', stderr);
}

/* ---- output ---- */

/* Whether stdout is a pipe whose reader has gone (`emb ... | head`, `| grep -q`): a reader
 * that stopped on purpose, which the commands whose SIGPIPE is not ignored never even see
 * (the signal ends them), is not a failed write. */
static bool stdout_reader_gone(int e)
{
    if (e == EPIPE)
        return true;
    struct stat st;
    struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
    return fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode) && poll(&p, 1, 0) == 1 &&
           (p.revents & POLLERR);
}

int emb_cli_close_output(const char *cmd, FILE *f, const char *name)
{
    if (f == NULL)
        return 0;
    int bad = ferror(f);
    int e = 0; /* unknown when an earlier write failed and its buffer was dropped */
    errno = 0;
    if (fflush(f) != 0) {
        bad = 1;
        e = errno ? errno : EIO;
    }
    /* stdout stays open for whatever follows; main() closes it last, and checks. */
    if (f != stdout && f != stderr && fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno ? errno : EIO;
    }
    if (bad && f == stdout && stdout_reader_gone(e))
        return 0;
    if (bad)
        emb_cli_error_at(cmd, name ? name : "standard output", -1, "cannot write%s%s",
                         e ? ": " : " (a write failed)", e ? strerror(e) : "");
    return bad ? EMB_EXIT_BAD : 0;
}

int emb_cli_close_stdout(const char *cmd, bool quiet)
{
    int bad = ferror(stdout);
    int e = 0;
    errno = 0;
    if (fflush(stdout) != 0) {
        bad = 1;
        e = errno ? errno : EIO;
    }
    bool gone = bad && stdout_reader_gone(e); /* asked while the descriptor is open */
    /* A close can report what no write did (NFS, a full quota). */
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        e = errno ? errno : EIO;
    }
    if (gone)
        return 0;
    if (bad && !quiet)
        emb_cli_error_at(cmd, "standard output", -1, "cannot write%s%s", e ? ": " : " (a write failed)",
                         e ? strerror(e) : "");
    return bad ? EMB_EXIT_BAD : 0;
}

void emb_cli_error_at(const char *cmd, const char *file, long long offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, file, offset, fmt, ap);
    va_end(ap);
}

void emb_cli_problem(void *cmd, const struct emb_problem *p)
{
    if (p->severity == EMB_NOTE)
        emb_cli_error_at(cmd, p->file, p->offset, "note: %s", p->message);
    else
        emb_cli_error_at(cmd, p->file, p->offset, "%s", p->message);
}

void emb_cli_problems(const char *cmd, const struct emb_problems *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        emb_cli_problem((void *)cmd, &ps->items[i]);
    size_t dropped = emb_problems_dropped(ps);
    if (dropped != 0)
        emb_cli_error_at(cmd, ps->file, -1, "%zu more problems not shown", dropped);
}

void emb_cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, NULL, -1, fmt, ap);
    va_end(ap);
}

/* ---- options ---- */

int emb_cli_color_option(const char *cmd, const char *arg)
{
    int mode = emb_color_parse(arg);
    if (mode < -1) {
        emb_cli_error(cmd, "--color takes auto, always or never, not '%s'", arg);
        return EMB_EXIT_BAD;
    }
    emb_color_set_mode(mode);
    return 0;
}

int emb_cli_bad_option(const char *cmd, int opt, char *const argv[])
{
    if (opt == ':') {
        emb_cli_error(cmd, "option '%s' needs a value", argv[optind - 1]);
    } else {
        emb_cli_error(cmd, "unknown option '%s'", argv[optind - 1]);
        fprintf(stderr, "Try '%s --help'.\n", cmd);
    }
    return EMB_EXIT_BAD;
}

int emb_cli_option_u64(const char *cmd, const char *name, const char *arg, uint64_t min,
                       uint64_t max, const char *what, uint64_t *out)
{
    if (emb_parse_u64(arg, min, max, out) == 0)
        return 0;
    emb_cli_error(cmd, "--%s takes %s, not '%s'", name, what, arg ? arg : "");
    return EMB_EXIT_BAD;
}

int emb_cli_option_double(const char *cmd, const char *name, const char *arg, double min,
                          double max, const char *what, double *out)
{
    if (emb_parse_double(arg, min, max, out) == 0)
        return 0;
    emb_cli_error(cmd, "--%s takes %s, not '%s'", name, what, arg ? arg : "");
    return EMB_EXIT_BAD;
}

/* ---- progress ---- */

struct emb_progress {
    char label[48];
    uint64_t total;
    uint64_t done;
    double last_draw; /* seconds, monotonic */
    unsigned spin;
    bool drawn;
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_draw(struct emb_progress *p)
{
    enum { WIDTH = 30 };
    if (p->total) {
        uint64_t done = p->done > p->total ? p->total : p->done;
        unsigned fill = (unsigned)((double)done * WIDTH / (double)p->total);
        char bar[WIDTH + 1];
        memset(bar, ' ', WIDTH);
        memset(bar, '#', fill);
        bar[WIDTH] = 0;
        fprintf(stderr, "\r%s [%s] %3u%%", p->label, bar,
                (unsigned)((double)done * 100.0 / (double)p->total));
    } else {
        static const char wheel[] = "|/-\\";
        fprintf(stderr, "\r%s %c %llu", p->label, wheel[p->spin++ % 4],
                (unsigned long long)p->done);
    }
    fflush(stderr);
    p->drawn = true;
}

struct emb_progress *emb_progress_start(const char *label, uint64_t total)
{
    if (!isatty(STDERR_FILENO))
        return NULL; /* every other call accepts NULL: silent */
    struct emb_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->total = total;
    p->last_draw = now_seconds();
    return p;
}

void emb_progress_update(struct emb_progress *p, uint64_t done)
{
    if (!p)
        return;
    p->done = done;
    /* Drawing costs a write to the terminal: ten times a second is enough for the eye,
     * and nothing is drawn for work that ends within the first half second. */
    double t = now_seconds();
    if (t - p->last_draw < (p->drawn ? 0.1 : 0.5))
        return;
    p->last_draw = t;
    progress_draw(p);
}

void emb_progress_finish(struct emb_progress *p)
{
    if (!p)
        return;
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    free(p);
}
