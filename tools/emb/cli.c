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

/* ---- escapes ---- */

/* Length of the valid UTF-8 sequence at s (at most n bytes) that encodes a printable
 * character, or 0: an invalid sequence, an overlong or surrogate form, or a C1 control
 * (U+0080..U+009F, which some terminals obey like ESC). */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || s[0] > 0xF4 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 2 && s[0] == 0xC2 && s[1] < 0xA0)
        return 0; /* C1 control */
    if (len == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0)))
        return 0; /* overlong, surrogate */
    if (len == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 0; /* overlong, past U+10FFFF */
    return len;
}

size_t emb_cli_escape(char *out, size_t cap, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    for (size_t i = 0; i < len && cap > 0;) {
        size_t u = s[i] >= 0x80 ? utf8_printable(s + i, len - i) : (s[i] >= 0x20 && s[i] != 0x7F);
        char piece[5];
        size_t plen;
        if (u > 0) {
            memcpy(piece, s + i, u);
            plen = u;
        } else {
            snprintf(piece, sizeof piece, "\\x%02X", s[i]);
            plen = 4;
            u = 1;
        }
        if (o + plen >= cap)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
        i += u;
    }
    if (cap > 0)
        out[o] = '\0';
    return o;
}

const char *emb_cli_escape_str(char *out, size_t cap, const char *text)
{
    emb_cli_escape(out, cap, text ? text : "", text ? strlen(text) : 0);
    return out;
}

/* ---- messages ---- */

static void vmessage(const char *cmd, const char *file, long long offset, const char *fmt,
                     va_list ap)
{
    fflush(stdout); /* keep an error after the output it concerns on a shared terminal */
    /* A message quotes file names, file contents and target strings: escaped, so that no
     * input reaches the terminal as a control sequence or forges a line of its own. */
    char text[2048], safe[4 * sizeof text];
    vsnprintf(text, sizeof text, fmt, ap);
    fprintf(stderr, "%s%s%s: ", emb_cli_color(stderr, EMB_C_BOLD), cmd ? cmd : "emb",
            emb_cli_color(stderr, EMB_C_RESET));
    if (file)
        fprintf(stderr, "%s: ", emb_cli_escape_str(safe, sizeof safe, file));
    if (offset >= 0)
        fprintf(stderr, "byte %lld: ", offset);
    fputs(emb_cli_escape_str(safe, sizeof safe, text), stderr);
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
    int mode = emb_cli_parse_color(arg);
    if (mode < -1) {
        emb_cli_error(cmd, "--color takes auto, always or never, not '%s'", arg);
        return EMB_EXIT_BAD;
    }
    emb_cli_set_color(mode);
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

/* ---- colour ---- */

static int color_mode = -1;

void emb_cli_set_color(int mode)
{
    color_mode = mode < 0 ? -1 : mode > 0;
}

int emb_cli_parse_color(const char *arg)
{
    if (!arg || !strcmp(arg, "always") || !strcmp(arg, "yes"))
        return 1;
    if (!strcmp(arg, "never") || !strcmp(arg, "no"))
        return 0;
    if (!strcmp(arg, "auto"))
        return -1;
    return -2;
}

bool emb_cli_color_enabled(FILE *stream)
{
    if (color_mode >= 0)
        return color_mode == 1;
    const char *no = getenv("NO_COLOR");
    if (no && *no) /* no-color.org: present and not empty */
        return false;
    const char *term = getenv("TERM");
    if (term && !strcmp(term, "dumb"))
        return false;
    return stream && isatty(fileno(stream));
}

const char *emb_cli_color(FILE *stream, enum emb_color c)
{
    static const char *const codes[] = {
        [EMB_C_RESET] = "\033[0m",   [EMB_C_BOLD] = "\033[1m",    [EMB_C_DIM] = "\033[2m",
        [EMB_C_RED] = "\033[31m",    [EMB_C_GREEN] = "\033[32m",  [EMB_C_YELLOW] = "\033[33m",
        [EMB_C_BLUE] = "\033[34m",   [EMB_C_MAGENTA] = "\033[35m", [EMB_C_CYAN] = "\033[36m",
    };
    if ((unsigned)c >= sizeof codes / sizeof codes[0] || !emb_cli_color_enabled(stream))
        return "";
    return codes[c];
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

/* ---- JSON ---- */

void emb_json_init(struct emb_json *j, FILE *out, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

static void json_indent(struct emb_json *j)
{
    if (!j->pretty || (j->flat_depth > 0 && j->depth > j->flat_depth))
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

void emb_json_write_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
            case '"': fputs("\\\"", out); break;
            case '\\': fputs("\\\\", out); break;
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default:
                if (c < 0x20 || c == 0x7F)
                    fprintf(out, "\\u%04x", c);
                else
                    fputc(c, out);
            }
            i++;
            continue;
        }
        size_t n = utf8_sequence(p + i, len - i);
        if (n) {
            fwrite(p + i, 1, n, out);
            i += n;
        } else {
            /* Not UTF-8 (target bytes can be anything): U+FFFD keeps the document valid. */
            fputs("\\ufffd", out);
            i++;
        }
    }
    fputc('"', out);
}

/* Emits the separator and the key of the next member or element. */
static void json_next(struct emb_json *j, const char *key)
{
    int d = j->depth < 64 ? j->depth : 63;
    if (j->need_comma[d])
        fputc(',', j->out);
    j->need_comma[d] = true;
    if (j->depth > 0)
        json_indent(j);
    if (key) {
        emb_json_write_string(j->out, key, strlen(key));
        fputs(j->pretty ? ": " : ":", j->out);
    }
}

static void json_open(struct emb_json *j, const char *key, char c)
{
    json_next(j, key);
    fputc(c, j->out);
    j->depth++;
    if (j->depth < 64)
        j->need_comma[j->depth] = false;
}

static void json_close(struct emb_json *j, char c)
{
    int d = j->depth < 64 ? j->depth : 63;
    bool had_members = j->need_comma[d];
    bool flat = j->flat_depth > 0 && j->depth > j->flat_depth;
    if (j->depth > 0)
        j->depth--;
    if (had_members && !flat)
        json_indent(j);
    fputc(c, j->out);
}

void emb_json_begin_object(struct emb_json *j, const char *key) { json_open(j, key, '{'); }
void emb_json_end_object(struct emb_json *j) { json_close(j, '}'); }
void emb_json_begin_array(struct emb_json *j, const char *key) { json_open(j, key, '['); }
void emb_json_end_array(struct emb_json *j) { json_close(j, ']'); }

void emb_json_string(struct emb_json *j, const char *key, const char *value)
{
    if (!value) {
        emb_json_null(j, key);
        return;
    }
    emb_json_string_n(j, key, value, strlen(value));
}

void emb_json_string_n(struct emb_json *j, const char *key, const char *value, size_t len)
{
    json_next(j, key);
    emb_json_write_string(j->out, value, len);
}

void emb_json_int(struct emb_json *j, const char *key, long long value)
{
    json_next(j, key);
    fprintf(j->out, "%lld", value);
}

void emb_json_uint(struct emb_json *j, const char *key, unsigned long long value)
{
    json_next(j, key);
    fprintf(j->out, "%llu", value);
}

void emb_json_double(struct emb_json *j, const char *key, double value)
{
    json_next(j, key);
    if (!isfinite(value)) {
        fputs("null", j->out); /* JSON has no NaN or infinity */
        return;
    }
    /* The shortest form that reads back as the same double. */
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, value);
        if (strtod(buf, NULL) == value)
            break;
    }
    fputs(buf, j->out);
}

void emb_json_raw(struct emb_json *j, const char *key, const char *text)
{
    json_next(j, key);
    fputs(text, j->out);
}

void emb_json_bool(struct emb_json *j, const char *key, bool value)
{
    json_next(j, key);
    fputs(value ? "true" : "false", j->out);
}

void emb_json_null(struct emb_json *j, const char *key)
{
    json_next(j, key);
    fputs("null", j->out);
}

void emb_json_end(struct emb_json *j)
{
    fputc('\n', j->out);
    j->depth = 0;
    memset(j->need_comma, 0, sizeof j->need_comma);
}
