/* `emb log`: decode a deferred log stream against the program's ELF. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <time.h>

#include <emb/log_format.h>

#include "buffer.h"
#include "capture.h"
#include "input_file.h"
#include "output_file.h"
#include "log_decode.h"
#include "log_merge.h"
#include "out_buf.h"
#include "stream_kind.h"
#include "trace_decode.h"

static const char *const CMD = "emb log";


struct args {
    const char *elf, *stream, *output, *trace;
    bool follow, json, absolute, raw, no_build_id_check;
    uint64_t clock_hz;
};

enum { OPT_ABSOLUTE = 256, OPT_TRACE, OPT_RAW, OPT_CLOCK, OPT_NO_BUILD_ID };
static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_STRING("elf", 'e', struct args, elf),
    EMB_CLI_FLAG("follow", 'f', struct args, follow),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_FLAG("absolute", OPT_ABSOLUTE, struct args, absolute),
    EMB_CLI_STRING("trace", OPT_TRACE, struct args, trace),
    EMB_CLI_FLAG("raw", OPT_RAW, struct args, raw),
    EMB_CLI_U64("clock-hz", OPT_CLOCK, struct args, clock_hz, 1, UINT64_MAX, "a frequency in Hz"),
    EMB_CLI_FLAG("no-build-id-check", OPT_NO_BUILD_ID, struct args, no_build_id_check),
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_log, .shortopts = ":e:fo:h", .options = OPTIONS,
    .usage = "emb log --elf PROGRAM [options] STREAM", .operands = 1,
    .no_operands = "no log stream given", .too_many = "one log stream, please"};

static int parse_args(int argc, char **argv, struct args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, NULL, a);
    if (rc != 0)
        return rc;
    a->stream = argv[optind];
    if (a->elf == NULL) {
        emb_cli_error(CMD, "--elf PROGRAM is required: the ELF the stream was recorded by");
        return EMB_EXIT_BAD;
    }
    if (a->absolute && a->trace != NULL) {
        emb_cli_error(CMD, "--absolute and --trace exclude each other");
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

/* ---- Output ---- */

struct state {
    const struct args *a;
    const struct emb_logdb *db;
    struct emb_log_decoder_options opt; /* the decoder's */
    struct emb_log_decoder *dec;
    struct emb_log_merge *merge; /* the contexts in time order (whole-stream mode) */
    FILE *out;
    bool origin_set;
    uint64_t origin;     /* ticks printed as time 0 */
    bool oom;
    int ctx_width;
    uint64_t problems;   /* reported so far; past PROBLEMS_SHOWN they are only counted */
    uint64_t base;       /* where the bytes fed start in the file (a capture's log section) */
    struct emb_out text; /* the text lines, formatted into one buffer */
    struct emb_buf *prefixes; /* by call site: what its lines show before the text */
    const char *dim, *reset; /* colour codes, or "" */
    size_t dim_len, reset_len;
};

/* Random or badly damaged input can hold thousands of bad frames: the first ones say it. */
#define PROBLEMS_SHOWN 40u

static const char *const level_names[] = {"---", "ERR", "WRN", "INF", "DBG"};

static uint64_t clock_hz(const struct state *s)
{
    if (s->a->raw)
        return s->a->clock_hz;
    return emb_log_decoder_hello(s->dec)->clock_hz;
}

/* Time column: seconds since the origin, the wall clock, or ticks when no clock is known. */
static void format_time(const struct state *s, const struct emb_logrec *r, char *buf, size_t size)
{
    uint64_t hz = clock_hz(s);
    if (!r->has_ts) {
        snprintf(buf, size, "-");
        return;
    }
    if (hz == 0u) {
        snprintf(buf, size, "%" PRIu64 "t", r->ts);
        return;
    }
    const struct emb_log_hello *h = emb_log_decoder_hello(s->dec);
    if (s->a->absolute && !s->a->raw && h->clock_offset_ns != 0) {
        long double ns = (long double)r->ts * 1e9L / (long double)hz + (long double)h->clock_offset_ns;
        int64_t wall = (int64_t)ns;
        time_t secs = (time_t)(wall / 1000000000);
        struct tm tm;
        gmtime_r(&secs, &tm);
        char day[32];
        strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, size, "%s.%09" PRId64 "Z", day, wall % 1000000000);
        return;
    }
    long double secs = ((long double)r->ts - (long double)s->origin) / (long double)hz;
    if (size >= 32u) /* the digits of "%.9Lf", without printf */
        buf[emb_fmt_ldouble9(buf, secs)] = '\0';
}

static void print_hexdump_lines(struct emb_out *o, const uint8_t *p, size_t len)
{
    for (size_t off = 0; off < len; off += 16u) {
        emb_out_str(o, "    ");
        emb_out_hex(o, off, 4);
        emb_out_char(o, ' ');
        for (size_t i = off; i < off + 16u; i++) {
            if (i < len) {
                emb_out_char(o, ' ');
                emb_out_hex(o, p[i], 2);
            } else {
                emb_out_str(o, "   ");
            }
        }
        emb_out_str(o, "  |");
        for (size_t i = off; i < off + 16u && i < len; i++)
            emb_out_char(o, p[i] >= 0x20u && p[i] < 0x7Fu ? (char)p[i] : '.');
        emb_out_str(o, "|\n");
    }
}

/* A record's text holds the target's bytes (a %s argument): escaped for a terminal. Text
 * of printable ASCII alone, nearly every record's, is itself: copied whole. */
static void put_escaped(struct emb_out *o, const char *text, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t clean = 0;
    for (; clean + 8u <= len; clean += 8u) { /* eight bytes at a time: none below 0x20 or above 0x7E */
        uint64_t w;
        memcpy(&w, text + clean, 8u);
        if ((((w - ones * 0x20u) & ~w) | ((w + ones * 0x01u) | w)) & highs)
            break;
    }
    while (clean < len && (unsigned char)(text[clean] - 0x20) < 0x5Fu)
        clean++;
    if (clean == len) {
        emb_out_bytes(o, text, len);
        return;
    }
    char safe[4 * 256 + 1];
    for (size_t at = 0; at < len;) {
        size_t n = len - at < 256u ? len - at : 256u;
        while (n < len - at && n > 1u && ((unsigned char)text[at + n] & 0xC0u) == 0x80u)
            n--; /* a piece never ends inside a UTF-8 sequence */
        emb_out_bytes(o, safe, emb_text_escape(safe, sizeof safe, text + at, n));
        at += n;
    }
}

static void buf_str(struct emb_buf *b, const char *str)
{
    emb_buf_append(b, str, strlen(str));
}

/* "%-*s" of n bytes in a column of `width`. */
static void buf_align_left(struct emb_buf *b, const char *str, size_t n, size_t width)
{
    emb_buf_append(b, str, n);
    for (; width > n; n++)
        emb_buf_append_byte(b, ' ');
}

/* What a call site's lines show before the text: level, module and call site, coloured,
 * in their columns (the same for every record of the site). */
static void build_prefix(const struct state *s, const struct emb_log_site *site, struct emb_buf *b)
{
    enum emb_color lc = site->level == EMB_LOG_LEVEL_ERR   ? EMB_C_RED
                        : site->level == EMB_LOG_LEVEL_WRN ? EMB_C_YELLOW
                        : site->level == EMB_LOG_LEVEL_INF ? EMB_C_GREEN
                                                           : EMB_C_BLUE;
    const char *dim = emb_color_code(s->out, EMB_C_DIM), *reset = emb_color_code(s->out, EMB_C_RESET);
    const char *bold = site->level == EMB_LOG_LEVEL_ERR ? emb_color_code(s->out, EMB_C_BOLD) : "";
    buf_str(b, emb_color_code(s->out, lc));
    buf_str(b, bold);
    buf_str(b, level_names[site->level <= 4u ? site->level : 0]);
    buf_str(b, reset);
    buf_str(b, "  ");
    if (s->db->partition_width > 0) { /* a column once any module has a partition */
        const char *p = site->partition_name != NULL ? site->partition_name : "-";
        buf_align_left(b, p, strlen(p), (size_t)s->db->partition_width);
        buf_str(b, "  ");
    }
    buf_align_left(b, site->module, strlen(site->module), (size_t)s->db->module_width);
    buf_str(b, "  ");
    buf_str(b, dim);
    char where[300], line[20]; /* "%s:%u", cut at 299 bytes as snprintf cuts it */
    size_t wl = strlen(site->file), ll = emb_fmt_u64(line, site->line);
    wl = wl < sizeof where - 1u ? wl : sizeof where - 1u;
    memcpy(where, site->file, wl);
    if (wl < sizeof where - 1u)
        where[wl++] = ':';
    ll = ll < sizeof where - 1u - wl ? ll : sizeof where - 1u - wl;
    memcpy(where + wl, line, ll);
    wl += ll;
    buf_align_left(b, where, wl, (size_t)s->db->where_width);
    buf_str(b, reset);
    buf_str(b, "  ");
    buf_str(b, bold);
}

/* The site's prefix, built at its first record. */
static const struct emb_buf *site_prefix(struct state *s, const struct emb_log_site *site)
{
    struct emb_buf *b = &s->prefixes[site - s->db->sites];
    if (b->len == 0u && !b->failed) {
        build_prefix(s, site, b);
        s->oom = s->oom || b->failed;
    }
    return b;
}

/* A log or hexdump record's level, module, call site and text. */
static void print_message(struct state *s, const struct emb_logrec *r)
{
    struct emb_out *o = &s->text;
    const struct emb_log_site *site = r->site;
    const struct emb_buf *prefix = site_prefix(s, site);
    emb_out_bytes(o, prefix->data, prefix->failed ? 0u : prefix->len);
    put_escaped(o, r->text, r->text_len);
    if (r->type == EMB_LREC_HEXDUMP) {
        emb_out_str(o, " (");
        emb_out_u64(o, r->data_len);
        emb_out_str(o, r->clipped ? " bytes, clipped " EMB_LOG_CLIP_MARK ")" : " bytes)");
    }
    if (site->level == EMB_LOG_LEVEL_ERR)
        emb_out_str(o, emb_color_code(s->out, EMB_C_BOLD)[0] ? emb_color_code(s->out, EMB_C_RESET) : "");
    emb_out_char(o, '\n');
    if (r->type == EMB_LREC_HEXDUMP)
        print_hexdump_lines(o, r->data, r->data_len);
}

/* A marker's line: drops, a resynchronisation, missing bytes, an unknown id. */
static void print_marker(struct state *s, const struct emb_logrec *r)
{
    struct emb_out *o = &s->text;
    emb_out_str(o, emb_color_code(s->out, EMB_C_MAGENTA));
    emb_out_str(o, "--");
    emb_out_str(o, emb_color_code(s->out, EMB_C_RESET));
    emb_out_str(o, "  ");
    const char *records = r->count == 1 ? " record" : " records";
    switch (r->type) {
    case EMB_LREC_DROPPED:
    case EMB_LREC_PENDING:
        emb_out_str(o, "dropped ");
        emb_out_u64(o, r->count);
        emb_out_str(o, records);
        emb_out_str(o, r->type == EMB_LREC_DROPPED ? "\n" : " after its last record (never announced)\n");
        break;
    case EMB_LREC_RESYNC:
        emb_out_str(o, "resynchronised at a sync marker after skipping ");
        emb_out_u64(o, r->count);
        emb_out_str(o, " bytes\n");
        break;
    case EMB_LREC_LOST:
        emb_out_u64(o, r->count);
        emb_out_str(o, " ring bytes missing from the stream\n");
        break;
    case EMB_LREC_UNKNOWN:
        emb_out_str(o, "unknown id 0x");
        emb_out_hex(o, r->id, 0);
        emb_out_char(o, ':');
        for (size_t i = 0; i < r->data_len; i++) {
            emb_out_char(o, ' ');
            emb_out_hex(o, r->data[i], 2);
        }
        emb_out_char(o, '\n');
        break;
    default: break;
    }
}

static void print_text(struct state *s, const struct emb_logrec *r)
{
    char t[64];
    format_time(s, r, t, sizeof t);
    emb_out_bytes(&s->text, s->dim, s->dim_len);
    emb_out_align_right(&s->text, t, strlen(t), s->a->absolute ? 30u : 12u);
    emb_out_bytes(&s->text, s->reset, s->reset_len);
    emb_out_bytes(&s->text, "  ", 2u);
    emb_out_align_left(&s->text, r->ctx_name, strlen(r->ctx_name), (size_t)s->ctx_width);
    emb_out_str(&s->text, "  ");
    if (r->type == EMB_LREC_LOG || r->type == EMB_LREC_HEXDUMP)
        print_message(s, r);
    else
        print_marker(s, r);
}

static void print_json(struct state *s, const struct emb_logrec *r)
{
    static const char *const types[] = {"log", "hexdump", "dropped", "dropped", "unknown",
                                        "resync", "lost"};
    struct emb_json j;
    emb_json_init(&j, s->out, false);
    emb_json_begin_object(&j, NULL);
    emb_json_string(&j, "type", types[r->type]);
    if (r->has_ts) {
        emb_json_uint(&j, "ts", r->ts);
        uint64_t hz = clock_hz(s);
        if (hz != 0u) {
            char t[64];
            format_time(s, r, t, sizeof t);
            if (s->a->absolute)
                emb_json_string(&j, "time", t);
            else
                emb_json_raw(&j, "time", t);
        }
    }
    emb_json_string(&j, "context", r->ctx_name);
    emb_json_uint(&j, "context_id", r->ctx);
    switch (r->type) {
    case EMB_LREC_LOG:
    case EMB_LREC_HEXDUMP:
        emb_json_string(&j, "level", level_names[r->site->level <= 4u ? r->site->level : 0]);
        emb_json_string(&j, "module", r->site->module);
        if (r->site->partition_name != NULL) {
            emb_json_begin_object(&j, "partition");
            emb_json_uint(&j, "id", r->site->partition);
            emb_json_string(&j, "name", r->site->partition_name);
            emb_json_end_object(&j);
        }
        emb_json_string(&j, "file", r->site->file);
        emb_json_uint(&j, "line", r->site->line);
        emb_json_string_n(&j, r->type == EMB_LREC_LOG ? "text" : "title", r->text, r->text_len);
        if (r->type == EMB_LREC_HEXDUMP)
            emb_json_hex_bytes(&j, "data", r->data, r->data_len);
        emb_json_bool(&j, "clipped", r->clipped);
        if (r->marked)
            emb_json_bool(&j, "marked", true);
        break;
    case EMB_LREC_DROPPED:
    case EMB_LREC_PENDING:
        emb_json_uint(&j, "count", r->count);
        if (r->type == EMB_LREC_PENDING)
            emb_json_bool(&j, "after_last", true);
        break;
    case EMB_LREC_RESYNC: emb_json_uint(&j, "skipped", r->count); break;
    case EMB_LREC_LOST: emb_json_uint(&j, "bytes", r->count); break;
    case EMB_LREC_UNKNOWN:
        emb_json_uint(&j, "id", r->id);
        emb_json_hex_bytes(&j, "raw", r->data, r->data_len);
        break;
    }
    emb_json_uint(&j, "offset", r->offset);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

static void print_record(struct state *s, const struct emb_logrec *r)
{
    if (!s->origin_set && r->has_ts) {
        s->origin = r->ts;
        s->origin_set = true;
    }
    if (s->a->json)
        print_json(s, r);
    else
        print_text(s, r);
}

/* A record from the decoder: printed now (--follow) or merged with the other contexts'. */
static void on_record(void *arg, const struct emb_logrec *r)
{
    struct state *s = arg;
    int w = (int)strlen(r->ctx_name);
    if (w > s->ctx_width)
        s->ctx_width = w;
    if (s->a->follow) {
        print_record(s, r);
        emb_out_flush(&s->text);
        fflush(s->out);
        return;
    }
    emb_log_merge_push(s->merge, r);
}

static void on_merged(void *arg, const struct emb_logrec *r)
{
    print_record(arg, r);
}

static void on_planned(void *arg, const struct emb_logrec *r)
{
    emb_log_merge_plan(arg, r);
}

/* A decoder's problem, shown at once (the first PROBLEMS_SHOWN), at its offset in the
 * file (a capture's log section starts at s->base). */
static void on_problem(void *arg, const struct emb_problem *p)
{
    struct state *s = arg;
    if (s->problems++ >= PROBLEMS_SHOWN)
        return;
    struct emb_problem at = *p;
    at.offset += (long long)s->base;
    emb_cli_problem((void *)CMD, &at);
}

/* ---- Input ---- */

/* Feeds a decoder bytes held whole, a piece at a time as they would arrive; a mapped
 * file's pages are let go behind the walk. */
static void walk(struct state *s, struct emb_log_decoder *d, const uint8_t *data, size_t len,
                 bool mapped)
{
    enum { PIECE = 65536 };
    for (size_t at = 0; at < len && !emb_log_decoder_summary(d)->fatal; at += PIECE) {
        size_t n = len - at < PIECE ? len - at : PIECE;
        emb_log_merge_next_piece(s->merge);
        emb_log_decoder_feed(d, data + at, n);
        if (mapped)
            emb_input_map_release(data, at + n);
    }
}

/* The stream held whole: walked once for its contexts' records and order (no text, no
 * problems), so the second walk prints as it decodes, merged in time order with memory
 * that does not grow with the stream. */
static void feed_bytes(struct state *s, const uint8_t *data, size_t len, bool mapped)
{
    struct emb_log_decoder_options plan = s->opt;
    plan.no_text = true;
    plan.record = on_planned;
    plan.arg = s->merge;
    plan.problems = NULL;
    struct emb_log_decoder *d = emb_log_decoder_new(&plan);
    if (d != NULL) { /* else unplanned: every record is kept, as for a pipe */
        walk(s, d, data, len, mapped);
        emb_log_decoder_finish(d);
        emb_log_decoder_free(d);
        if (emb_log_merge_plan_name_width(s->merge) > s->ctx_width)
            s->ctx_width = emb_log_merge_plan_name_width(s->merge);
    }
    walk(s, s->dec, data, len, mapped);
}

/* A sealed capture ("EMBS") held whole: its log section is the stream. False when the
 * capture is refused or holds no log (said). */
static bool feed_capture(struct state *s, const uint8_t *bytes, size_t size, bool mapped,
                         uint64_t *total)
{
    struct emb_problems ps;
    emb_problems_init_callback(&ps, s->a->stream, emb_cli_problem, (void *)CMD);
    struct emb_capture_section sec;
    if (emb_capture_unwrap(bytes, size, EMB_CAP_SEC_LOG, emb_catalog_builtin(), &sec, &ps) != 0)
        return false;
    s->base = sec.offset;
    feed_bytes(s, sec.data, (size_t)sec.length, mapped);
    *total = sec.length;
    return true;
}

/* A regular file, mapped: a capture, or the stream itself. False when it is neither
 * mapped (then it is read) nor refused. */
static bool feed_mapped(struct state *s, struct emb_input *in, uint64_t *total, bool *ok)
{
    size_t len;
    const uint8_t *map = s->a->follow ? NULL : emb_input_map_rest(in, UINT64_MAX, &len);
    if (map == NULL)
        return false;
    bool capture = !s->a->raw && emb_stream_kind(map, len < 4u ? len : 4u) == EMB_STREAM_CAPTURE;
    if (capture && len > emb_input_limit()) { /* refused where it is read */
        emb_input_unmap(map, len);
        return false;
    }
    *ok = true;
    if (capture) {
        *ok = feed_capture(s, map, len, true, total);
    } else {
        feed_bytes(s, map, len, true);
        *total = len;
    }
    emb_input_unmap(map, len);
    return true;
}

/* A capture that could not be mapped, read whole. */
static bool read_capture(struct state *s, struct emb_input *in, uint64_t *total)
{
    char err[512];
    size_t size;
    uint8_t *bytes = emb_input_read_rest(in, 0, &size, err, sizeof err);
    if (bytes == NULL) {
        emb_cli_error_at(CMD, s->a->stream, -1, "%s", err);
        return false;
    }
    bool ok = feed_capture(s, bytes, size, false, total);
    free(bytes);
    return ok;
}

static bool trace_origin(struct state *s)
{
    struct emb_command_input in;
    if (emb_command_input_read(CMD, s->a->trace, EMB_CAP_SEC_TRACE, 0, &in) != 0)
        return false;
    const struct emb_catalog *cat = emb_catalog_builtin();
    struct emb_trace_options topt = {.catalog = cat, .name = s->a->trace,
                                     .base_offset = in.part.offset};
    struct emb_trace *t = cat != NULL ? emb_trace_decode(in.part.data, (size_t)in.part.length, &topt)
                                      : NULL;
    bool ok = t != NULL && !emb_trace_summary(t)->fatal && emb_trace_summary(t)->packets != 0u;
    if (ok) {
        s->origin = emb_trace_info(t)->start_ts;
        s->origin_set = true;
    } else {
        emb_cli_error_at(CMD, s->a->trace, -1, "cannot take the time origin: not a decodable trace");
    }
    emb_trace_free(t);
    emb_command_input_free(&in);
    return ok;
}

/* Feeds the decoder everything the input holds: a regular file mapped, anything else
 * read as it arrives from the one descriptor the input was opened on (the first bytes
 * looked at for a capture's magic are fed, not lost): *total gets the bytes fed. False
 * when a capture was refused. */
static bool feed(struct state *s, struct emb_input *in, uint64_t *total)
{
    static uint8_t buf[65536];
    char err[512];
    *total = 0;
    bool ok;
    if (feed_mapped(s, in, total, &ok))
        return ok;
    long held = s->a->raw ? 0 : emb_input_peek(in, 4, err, sizeof err);
    if (held < 0) {
        emb_cli_error_at(CMD, s->a->stream, 0, "%s", err);
        return true;
    }
    if (held > 0 && emb_stream_kind(in->head, (size_t)held) == EMB_STREAM_CAPTURE)
        return read_capture(s, in, total);
    for (;;) {
        long n = emb_input_next(in, buf, sizeof buf);
        if (n < 0) {
            emb_cli_error_at(CMD, s->a->stream, (long long)*total, "read error: %s",
                             strerror(errno));
            break;
        }
        if (n == 0)
            break;
        *total += (uint64_t)n;
        emb_log_decoder_feed(s->dec, buf, (size_t)n);
        if (emb_log_decoder_summary(s->dec)->fatal)
            break;
    }
    return true;
}

/* What the run came to, on stderr, and the exit status. */
static int conclude(struct state *s, uint64_t total, bool refused, bool write_failed)
{
    const struct args *a = s->a;
    const struct emb_log_decoder_summary *sum = emb_log_decoder_summary(s->dec);
    bool hello = emb_log_decoder_hello(s->dec)->seen;
    if (s->problems > PROBLEMS_SHOWN)
        emb_cli_error_at(CMD, a->stream, -1, "%" PRIu64 " more problems not shown",
                         s->problems - PROBLEMS_SHOWN);
    if (s->oom)
        emb_cli_error(CMD, "out of memory: records were lost from the output");
    if (total == 0u && !refused)
        emb_cli_error_at(CMD, a->stream, 0, "empty stream: nothing to decode");
    else if (!refused && !sum->fatal && sum->records == 0u && !a->raw && !hello)
        emb_cli_error_at(CMD, a->stream, 0, "no log frame found: not a log stream");
    bool bad = sum->fatal || sum->errors > 0u || total == 0u || s->oom || write_failed ||
               (!a->raw && !hello);
    if (sum->dropped + sum->pending > 0u)
        fprintf(stderr, "%s: %s: %" PRIu64 " records decoded, %" PRIu64 " dropped on the target\n",
                CMD, a->stream, sum->records, sum->dropped + sum->pending);
    if (sum->marked > 0u)
        fprintf(stderr, "%s: %s: %" PRIu64 " records with a conversion the log cannot reproduce, "
                "marked <...> in their text\n", CMD, a->stream, sum->marked);
    return bad ? EMB_EXIT_BAD : sum->marked > 0u ? EMB_EXIT_FINDINGS : EMB_EXIT_OK;
}

/* The decoder, the merge and the text buffer. False when out of memory (said). */
static bool start(struct state *s, struct emb_problems *problems)
{
    const struct args *a = s->a;
    s->opt = (struct emb_log_decoder_options){.db = s->db, .name = a->stream, .raw = a->raw,
                                              .no_build_id_check = a->no_build_id_check,
                                              .record = on_record, .arg = s,
                                              .problems = problems};
    s->dec = emb_log_decoder_new(&s->opt);
    s->merge = emb_log_merge_new(on_merged, s);
    s->prefixes = calloc(s->db->nsites + 1u, sizeof *s->prefixes);
    s->dim = emb_color_code(s->out, EMB_C_DIM);
    s->reset = emb_color_code(s->out, EMB_C_RESET);
    s->dim_len = strlen(s->dim);
    s->reset_len = strlen(s->reset);
    if (s->dec != NULL && s->merge != NULL && s->prefixes != NULL && emb_out_init(&s->text, s->out))
        return true;
    emb_cli_error(CMD, "out of memory");
    free(s->prefixes);
    emb_log_merge_free(s->merge);
    emb_log_decoder_free(s->dec);
    return false;
}

/* Decodes the stream into s->out; returns the exit status. */
static int decode(struct state *s, struct emb_input *in, struct emb_output *o)
{
    const struct args *a = s->a;
    struct emb_problems problems;
    emb_problems_init_callback(&problems, a->stream, on_problem, s);
    if (!start(s, &problems)) {
        emb_output_end(o, false, NULL, 0);
        return EMB_EXIT_BAD;
    }
    uint64_t total;
    bool refused = !feed(s, in, &total);
    emb_log_decoder_finish(s->dec);
    emb_log_merge_finish(s->merge);
    s->oom = s->oom || emb_log_merge_failed(s->merge);
    emb_log_merge_free(s->merge);
    bool write_failed = emb_out_finish(&s->text) != 0;
    for (size_t i = 0; i < s->db->nsites; i++)
        emb_buf_free(&s->prefixes[i]);
    free(s->prefixes);
    write_failed = fflush(s->out) != 0 || ferror(s->out) || write_failed;
    if (write_failed)
        emb_cli_error_at(CMD, a->output ? a->output : "stdout", -1, "write error");
    int rc = conclude(s, total, refused, write_failed);
    /* -o is renamed into place only when the stream decoded (losses and damage are
     * reported in it); a stream refused, empty or not a log keeps the earlier output. */
    const struct emb_log_decoder_summary *sum = emb_log_decoder_summary(s->dec);
    bool decoded = !refused && !sum->fatal && total > 0u &&
                   (a->raw || emb_log_decoder_hello(s->dec)->seen);
    char err[512];
    if (emb_output_end(o, decoded && !write_failed, err, sizeof err) != 0) {
        emb_cli_error_at(CMD, a->output, -1, "write error: %s", err);
        rc = EMB_EXIT_BAD;
    }
    emb_log_decoder_free(s->dec);
    return rc;
}

int emb_cmd_log(int argc, char **argv)
{
    struct args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;
    struct emb_problems elf_problems;
    emb_problems_init_callback(&elf_problems, a.elf, emb_cli_problem, (void *)CMD);
    struct emb_logdb *db = emb_logdb_open(a.elf, &elf_problems);
    if (db == NULL)
        return EMB_EXIT_BAD;
    if (db->build_id_len == 0u && !a.no_build_id_check) {
        emb_cli_error(CMD, "%s: no GNU build id, so nothing shows which build a stream is from "
                      "(another build's stream decodes into garbage): link the firmware with "
                      "-Wl,--build-id, or pass --no-build-id-check to decode anyway", a.elf);
        emb_logdb_free(db);
        return EMB_EXIT_BAD;
    }
    struct state s = {.a = &a, .db = db, .out = stdout, .ctx_width = 6};
    struct emb_input in;
    char err[512];
    if (a.trace != NULL && !trace_origin(&s)) {
        emb_logdb_free(db);
        return EMB_EXIT_BAD;
    }
    if (emb_input_open(&in, a.stream, err, sizeof err) != 0) {
        emb_cli_error_at(CMD, a.stream, -1, "%s", err);
        emb_logdb_free(db);
        return EMB_EXIT_BAD;
    }
    struct emb_output o;
    if (!(s.out = emb_output_open(&o, a.output, err, sizeof err))) {
        emb_cli_error_at(CMD, a.output, -1, "%s", err);
        rc = EMB_EXIT_BAD;
    } else {
        rc = decode(&s, &in, &o);
    }
    emb_input_close(&in);
    emb_logdb_free(db);
    return rc;
}
