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

#include "output_file.h"
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

int emb_cli_write_output(const char *cmd, const char *path, int (*write)(void *arg, FILE *f),
                         void *arg)
{
    char err[512];
    struct emb_output o;
    FILE *f = emb_output_open(&o, path, err, sizeof err);
    if (f == NULL) {
        emb_cli_error_at(cmd, path, -1, "%s", err);
        return EMB_EXIT_BAD;
    }
    errno = 0;
    int rc = write(arg, f);
    int e = errno;
    if (emb_output_end(&o, rc == 0, err, sizeof err) != 0 || rc != 0) {
        emb_cli_error_at(cmd, path && strcmp(path, "-") ? path : "stdout", -1, "write error: %s",
                         rc != 0 ? strerror(e ? e : EIO) : err);
        return EMB_EXIT_BAD;
    }
    return 0;
}

int emb_cli_write_dir(const char *cmd, const char *dir, bool (*owns)(const char *name),
                      int (*write)(void *arg, const char *dir, char *err, size_t errlen),
                      void *arg)
{
    char err[512];
    struct emb_output o;
    if (emb_output_open_dir(&o, dir, owns, err, sizeof err) != 0) {
        emb_cli_error(cmd, "%s", err);
        return EMB_EXIT_BAD;
    }
    if (write(arg, o.tmp, err, sizeof err) != 0) {
        emb_output_end(&o, false, NULL, 0);
        emb_cli_error(cmd, "%s", err);
        return EMB_EXIT_BAD;
    }
    if (emb_output_end(&o, true, err, sizeof err) != 0) {
        emb_cli_error_at(cmd, dir, -1, "%s", err);
        return EMB_EXIT_BAD;
    }
    return 0;
}

struct bytes {
    const void *data;
    size_t len;
};

static int write_bytes(void *arg, FILE *f)
{
    const struct bytes *b = arg;
    return b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len ? 0 : -1;
}

int emb_cli_write_bytes(const char *cmd, const char *path, const void *data, size_t len)
{
    struct bytes b = {data, len};
    return emb_cli_write_output(cmd, path, write_bytes, &b);
}

bool emb_cli_read_token(const char *cmd, const char *path, char *token, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        emb_cli_error_at(cmd, path, -1, "cannot open the token file: %s", strerror(errno));
        return false;
    }
    bool ok = fgets(token, (int)cap, f) != NULL;
    fclose(f);
    token[ok ? strcspn(token, "\r\n") : 0] = '\0';
    if (!ok || token[0] == '\0') {
        emb_cli_error_at(cmd, path, 0, "the token file holds no token");
        return false;
    }
    return true;
}

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
    if (mode < -1)
        return emb_cli_bad_value(cmd, "color", "auto, always or never", arg);
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

enum { MAX_OPTIONS = 64 }; /* the most options one command has, and room to spare */

/* getopt_long()'s table from a command's descriptions. false when it does not fit. */
static bool long_options(const struct emb_cli_option *in, struct option *out)
{
    size_t n = 0;
    for (; in[n].name != NULL; n++) {
        if (n + 1 >= MAX_OPTIONS)
            return false;
        out[n] = (struct option){in[n].name, in[n].has_arg, NULL, in[n].val};
    }
    out[n] = (struct option){NULL, 0, NULL, 0};
    return true;
}

/* One option the parser does not handle itself: stored as its description says, or
 * passed to on_option(). */
static int take_option(const char *cmd, const struct emb_cli_option *options, int opt,
                       char *value, int (*on_option)(void *arg, int opt, char *optarg), void *arg)
{
    for (const struct emb_cli_option *o = options; o->name != NULL; o++) {
        if (o->val != opt || o->store == EMB_CLI_CALL)
            continue;
        void *member = (char *)arg + o->offset;
        switch (o->store) {
        case EMB_CLI_STRING:
            *(const char **)member = value;
            return 0;
        case EMB_CLI_U64:
            return emb_cli_option_u64(cmd, o->name, value, o->lo, o->hi, o->what, member);
        case EMB_CLI_DOUBLE:
            return emb_cli_option_double(cmd, o->name, value, o->lo_real, o->hi_real, o->what,
                                         member);
        default:
            *(bool *)member = true;
            return 0;
        }
    }
    return on_option ? on_option(arg, opt, value) : 0;
}

int emb_cli_parse_options(const struct emb_cli_command *c, int argc, char **argv,
                          int (*on_option)(void *arg, int opt, char *optarg), void *arg)
{
    struct option table[MAX_OPTIONS];
    if (!long_options(c->options, table)) {
        emb_cli_error(c->name, "more than %d options", MAX_OPTIONS - 1);
        return EMB_EXIT_BAD;
    }
    optind = 0; /* 0, not 1: getopt_long also forgets what it read of the last argv */
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, c->shortopts ? c->shortopts : ":h", table, NULL)) != -1) {
        int rc;
        if (opt == 'h') {
            fputs(c->help, stdout);
            return -1;
        }
        if ((opt == '?' || opt == ':') && c->help_on_bad_option) {
            emb_cli_error(c->name, "unknown option '%s'", argv[optind - 1]);
            fputs(c->help, stderr);
            return EMB_EXIT_BAD;
        }
        if (opt == '?' || opt == ':')
            return emb_cli_bad_option(c->name, opt, argv);
        rc = opt == EMB_OPT_COLOR ? emb_cli_color_option(c->name, optarg)
                                  : take_option(c->name, c->options, opt, optarg, on_option, arg);
        if (rc != 0)
            return rc;
    }
    return c->operands > 0 ? emb_cli_operands(c, argc, c->operands, c->no_operands, c->too_many) : 0;
}

int emb_cli_operands(const struct emb_cli_command *c, int argc, int count, const char *none,
                     const char *many)
{
    if (optind + count == argc)
        return 0;
    emb_cli_error(c->name, "%s", optind == argc ? none : many);
    fprintf(stderr, "Usage: %s (%s --help)\n", c->usage, c->name);
    return EMB_EXIT_BAD;
}

int emb_cli_bad_value(const char *cmd, const char *name, const char *what, const char *arg)
{
    emb_cli_error(cmd, "--%s takes %s, not '%s'", name, what, arg ? arg : "");
    return EMB_EXIT_BAD;
}

int emb_cli_source_option(const char *cmd, int opt, const char *value, int *kind,
                          const char **target)
{
    if (*kind >= 0) {
        emb_cli_error(cmd, "one source, please");
        return EMB_EXIT_BAD;
    }
    *kind = opt - EMB_OPT_SOURCE;
    *target = value;
    return EMB_EXIT_OK;
}

int emb_cli_option_u64(const char *cmd, const char *name, const char *arg, uint64_t min,
                       uint64_t max, const char *what, uint64_t *out)
{
    return emb_parse_u64(arg, min, max, out) == 0 ? 0 : emb_cli_bad_value(cmd, name, what, arg);
}

int emb_cli_option_double(const char *cmd, const char *name, const char *arg, double min,
                          double max, const char *what, double *out)
{
    return emb_parse_double(arg, min, max, out) == 0 ? 0 : emb_cli_bad_value(cmd, name, what, arg);
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

void emb_progress_decoding(void *arg, uint64_t done, uint64_t total)
{
    struct emb_progress **p = arg;
    if (!*p && total >= (8u << 20))
        *p = emb_progress_start("decoding", total);
    emb_progress_update(*p, done);
}
