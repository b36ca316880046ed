/* `emb events`: the service IPC trace sink and the questions it answers. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "events_chain.h"
#include "events_client.h"
#include "events_cmd.h"
#include "events_sink.h"
#include "parse_number.h"

static const char *const CMD = "emb events";

#define QUERY_TIMEOUT_MS 3000


enum sub { SUB_STATUS, SUB_DUMP, SUB_LOGS, SUB_METRICS, SUB_EXPORT };

struct args {
    enum sub sub;
    const char *socket;
    const char *ops;
    const char *format;
    const char *output;
    unsigned count;
    uint64_t since;
    bool json;
    bool follow;
};

static volatile sig_atomic_t follow_stop;

static void on_interrupt(int sig)
{
    (void)sig;
    follow_stop = 1;
}

struct conn {
    int fd;
    const char *path;
    char pathbuf[256];
    uint8_t *reply;
};

static int conn_open(struct conn *c, const char *socket_path)
{
    c->path = socket_path ? socket_path : emb_events_default_socket(c->pathbuf, sizeof c->pathbuf);
    char err[320];
    c->fd = emb_events_connect(c->path, err, sizeof err);
    if (c->fd < 0) {
        emb_cli_error(CMD, "%s", err);
        return -1;
    }
    c->reply = malloc(EMB_EVENTS_REPLY_MAX);
    if (c->reply == NULL) {
        emb_cli_error(CMD, "out of memory");
        close(c->fd);
        return -1;
    }
    return 0;
}

static void conn_close(struct conn *c)
{
    close(c->fd);
    free(c->reply);
}

static long conn_query(struct conn *c, const uint8_t *q, size_t n)
{
    char err[256];
    long r = emb_events_query(c->fd, q, n, c->reply, QUERY_TIMEOUT_MS, err, sizeof err);
    if (r < 0)
        emb_cli_error(CMD, "%s: %s", c->path, err);
    return r;
}

static int get_status(struct conn *c, struct emb_svc_status *st)
{
    uint8_t q[1];
    long n = conn_query(c, q, emb_svc_encode_status(q, sizeof q));
    if (n < 0)
        return -1;
    size_t bad = 0;
    if (emb_svc_decode_status_reply(c->reply, (size_t)n, st, &bad) != EMB_OK) {
        emb_cli_error_at(CMD, c->path, (long long)bad, "STATUS reply of %ld bytes is malformed", n);
        return -1;
    }
    return 0;
}

/* Fetches the most recent `count` events; returns how many, or -1. */
static long get_events(struct conn *c, unsigned count, struct emb_svc_event *ev)
{
    uint8_t q[EMB_SVC_MSG_DUMP_LEN];
    long n = conn_query(c, q, emb_svc_encode_dump(q, sizeof q, (uint8_t)count));
    if (n < 0)
        return -1;
    if (n % EMB_SVC_EV_LEN != 0 || n / EMB_SVC_EV_LEN > (long)count) {
        emb_cli_error_at(CMD, c->path, n - n % EMB_SVC_EV_LEN,
                         "DUMP reply of %ld bytes is not %u-byte events", n, EMB_SVC_EV_LEN);
        return -1;
    }
    for (long i = 0; i < n / EMB_SVC_EV_LEN; i++) {
        size_t bad = 0;
        if (emb_svc_decode_event_record(c->reply + i * EMB_SVC_EV_LEN, &ev[i], &bad) != EMB_OK) {
            emb_cli_error_at(CMD, c->path, i * EMB_SVC_EV_LEN + (long)bad,
                             "event %ld of the DUMP reply is malformed", i);
            return -1;
        }
    }
    return n / EMB_SVC_EV_LEN;
}

/* Prints bytes a person can read: anything not printable ASCII or UTF-8 as \xNN. */
static void put_text(FILE *out, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= 0x20 && s[i] != 0x7F)
            fputc(s[i], out); /* UTF-8 sequences pass through for the terminal to show */
        else
            fprintf(out, "\\x%02x", s[i]);
    }
}

static void put_name(FILE *out, const char *name, int width)
{
    int len = (int)strlen(name);
    put_text(out, (const uint8_t *)name, (size_t)len);
    if (width > len)
        fprintf(out, "%*s", width - len, "");
}

static enum emb_color kind_color(uint8_t kind)
{
    switch (kind) {
    case EMB_SVC_KIND_REPLY:
        return EMB_C_GREEN;
    case EMB_SVC_KIND_TIMEOUT:
        return EMB_C_YELLOW;
    case EMB_SVC_KIND_PEER_LOST:
        return EMB_C_RED;
    case EMB_SVC_KIND_QUEUE_FULL:
        return EMB_C_MAGENTA;
    case EMB_SVC_KIND_ABORTED:
        return EMB_C_DIM;
    default:
        return EMB_C_CYAN;
    }
}

static int cmd_status(const struct args *a)
{
    struct conn c;
    if (conn_open(&c, a->socket) != 0)
        return EMB_EXIT_BAD;
    struct emb_svc_status st;
    int rc = get_status(&c, &st);
    conn_close(&c);
    if (rc != 0)
        return EMB_EXIT_BAD;
    if (a->json) {
        struct emb_json j;
        emb_json_begin_document(&j, stdout);
        emb_json_string(&j, "socket", c.path);
        emb_json_uint(&j, "capacity", st.capacity);
        emb_json_uint(&j, "held", st.held);
        emb_json_uint(&j, "accepted", st.accepted);
        emb_json_uint(&j, "dropped", st.dropped);
        emb_json_uint(&j, "malformed", st.malformed);
        emb_json_uint(&j, "faults", st.faults);
        emb_json_end_object(&j);
        emb_json_end(&j);
        return EMB_EXIT_OK;
    }
    const char *b = emb_color_code(stdout, EMB_C_BOLD), *r = emb_color_code(stdout, EMB_C_RESET);
    const char *warn = emb_color_code(stdout, EMB_C_YELLOW);
    printf("%ssink%s       %s\n", b, r, c.path);
    printf("%scapacity%s   %u events\n", b, r, st.capacity);
    printf("%sheld%s       %u\n", b, r, st.held);
    printf("%saccepted%s   %llu\n", b, r, (unsigned long long)st.accepted);
    printf("%sdropped%s    %s%llu%s%s\n", b, r, st.dropped ? warn : "",
           (unsigned long long)st.dropped, st.dropped ? r : "",
           st.dropped ? "  (emitters found the sink's queue full)" : "");
    printf("%smalformed%s  %s%llu%s\n", b, r, st.malformed ? warn : "",
           (unsigned long long)st.malformed, st.malformed ? r : "");
    printf("%sfaults%s     %s%llu%s%s\n", b, r, st.faults ? warn : "",
           (unsigned long long)st.faults, st.faults ? r : "",
           st.faults ? "  (sequence jumps no emitter's count explains)" : "");
    return EMB_EXIT_OK;
}

/* Loads --ops FILE (none: NULL). -1 when it does not load, after saying why. */
static int load_ops(const char *path, struct emb_events_ops **ops)
{
    *ops = NULL;
    if (path == NULL)
        return 0;
    struct emb_problems ps;
    emb_problems_init(&ps, path);
    *ops = emb_events_ops_load(path, &ps);
    /* The ops file's messages name their line and byte themselves ("line L (byte B)"). */
    for (size_t i = 0; i < ps.n; i++)
        emb_cli_error(CMD, "%s: %s", path, ps.items[i].message);
    emb_problems_free(&ps);
    return *ops ? 0 : -1;
}

/* Distinct chains and how their calls ended. */
struct chain_row {
    char chain[160];
    unsigned by_kind[EMB_SVC_KIND_MAX + 1];
};

static size_t summarise_chains(const struct emb_svc_event *ev, const struct emb_events_calls *calls,
                               const struct emb_events_ops *ops, struct chain_row *rows)
{
    size_t nrows = 0;
    for (size_t k = 0; k < calls->count; k++) {
        char chain[160];
        emb_events_chain(calls, ev, ops, k, chain, sizeof chain);
        size_t r = 0;
        while (r < nrows && strcmp(rows[r].chain, chain) != 0)
            r++;
        if (r == nrows) {
            memset(&rows[r], 0, sizeof rows[r]);
            snprintf(rows[r].chain, sizeof rows[r].chain, "%s", chain);
            nrows++;
        }
        rows[r].by_kind[calls->call[k].kind]++;
    }
    return nrows;
}

static void dump_json(const struct emb_svc_event *ev, size_t n, const struct emb_events_calls *calls,
                      const struct emb_events_ops *ops, const struct emb_svc_status *st,
                      struct chain_row *rows, size_t nrows)
{
    struct emb_json j;
    emb_json_begin_document(&j, stdout);
    emb_json_uint(&j, "capacity", st->capacity);
    emb_json_uint(&j, "accepted", st->accepted);
    emb_json_uint(&j, "dropped", st->dropped);
    emb_json_begin_array(&j, "events");
    for (size_t i = 0; i < n; i++) {
        char chain[160], target[64];
        emb_events_chain(calls, ev, ops, calls->of_event[i], chain, sizeof chain);
        emb_json_begin_object(&j, NULL);
        emb_json_uint(&j, "seq", ev[i].seq);
        emb_json_uint(&j, "at_s", ev[i].at_s);
        emb_json_string(&j, "caller", ev[i].caller);
        emb_json_string(&j, "peer", ev[i].peer);
        emb_json_uint(&j, "op", ev[i].op);
        emb_json_string(&j, "target", emb_events_target(ops, ev[i].peer, ev[i].op, target,
                                                        sizeof target));
        emb_json_string(&j, "kind", emb_svc_kind_name(ev[i].kind));
        emb_json_string(&j, "chain", chain);
        emb_json_end_object(&j);
    }
    emb_json_end_array(&j);
    emb_json_begin_array(&j, "chains");
    for (size_t r = 0; r < nrows; r++) {
        emb_json_begin_object(&j, NULL);
        emb_json_string(&j, "chain", rows[r].chain);
        for (unsigned k = 1; k <= EMB_SVC_KIND_MAX; k++)
            if (rows[r].by_kind[k])
                emb_json_uint(&j, k == EMB_SVC_KIND_REQUEST ? "outstanding" : emb_svc_kind_name((uint8_t)k),
                              rows[r].by_kind[k]);
        emb_json_end_object(&j);
    }
    emb_json_end_array(&j);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

static void dump_text(const struct emb_svc_event *ev, size_t n, const struct emb_events_calls *calls,
                      const struct emb_events_ops *ops, const struct emb_svc_status *st,
                      struct chain_row *rows, size_t nrows)
{
    FILE *o = stdout;
    const char *b = emb_color_code(o, EMB_C_BOLD), *r = emb_color_code(o, EMB_C_RESET);
    const char *dim = emb_color_code(o, EMB_C_DIM);
    fprintf(o, "%zu events shown of %u held (capacity %u); %llu accepted, %llu dropped\n\n", n,
            st->held, st->capacity, (unsigned long long)st->accepted,
            (unsigned long long)st->dropped);
    fprintf(o, "%s%6s %5s  %-12s  %-10s  %-28s  %s%s\n", b, "SEQ", "AT_S", "CALLER", "KIND",
            "CALLED", "CHAIN", r);
    for (size_t i = 0; i < n; i++) {
        char chain[160], target[64];
        emb_events_chain(calls, ev, ops, calls->of_event[i], chain, sizeof chain);
        emb_events_target(ops, ev[i].peer, ev[i].op, target, sizeof target);
        fprintf(o, "%6u %4us  ", ev[i].seq, ev[i].at_s);
        put_name(o, ev[i].caller, 12);
        fprintf(o, "  %s%-10s%s  ", emb_color_code(o, kind_color(ev[i].kind)),
                emb_svc_kind_name(ev[i].kind), r);
        put_name(o, target, 28);
        fprintf(o, "  %s", ev[i].kind == EMB_SVC_KIND_REQUEST ? "" : dim);
        put_text(o, (const uint8_t *)chain, strlen(chain));
        fprintf(o, "%s\n", ev[i].kind == EMB_SVC_KIND_REQUEST ? "" : r);
    }
    if (nrows == 0)
        return;
    fprintf(o, "\n%schains%s (calls by how they ended)\n", b, r);
    for (size_t k = 0; k < nrows; k++) {
        fprintf(o, "  ");
        put_name(o, rows[k].chain, 50);
        for (unsigned kind = 2; kind <= EMB_SVC_KIND_MAX; kind++)
            if (rows[k].by_kind[kind])
                fprintf(o, "  %s%u %s%s", emb_color_code(o, kind_color((uint8_t)kind)),
                        rows[k].by_kind[kind], emb_svc_kind_name((uint8_t)kind), r);
        if (rows[k].by_kind[EMB_SVC_KIND_REQUEST])
            fprintf(o, "  %u outstanding", rows[k].by_kind[EMB_SVC_KIND_REQUEST]);
        fputc('\n', o);
    }
}

/* What dump and export read: the ops file, the sink's status and its dump, as calls. */
struct session {
    struct emb_events_ops *ops;
    struct conn c;
    bool connected;
    struct emb_svc_event *ev;
    size_t n;
    struct emb_events_calls calls;
    struct emb_svc_status st;
};

static void session_close(struct session *s)
{
    emb_events_calls_free(&s->calls);
    free(s->ev);
    if (s->connected)
        conn_close(&s->c);
    emb_events_ops_free(s->ops);
}

/* 0, or -1 after saying why; session_close() in either case. */
static int session_open(const struct args *a, struct session *s)
{
    memset(s, 0, sizeof *s);
    if (load_ops(a->ops, &s->ops) != 0 || conn_open(&s->c, a->socket) != 0)
        return -1;
    s->connected = true;
    s->ev = calloc(EMB_SVC_DUMP_MAX, sizeof *s->ev);
    if (s->ev == NULL || get_status(&s->c, &s->st) != 0)
        return -1;
    long got = get_events(&s->c, a->count, s->ev);
    if (got < 0)
        return -1;
    s->n = (size_t)got;
    if (emb_events_calls_build(s->ev, s->n, &s->calls) != 0) {
        emb_cli_error(CMD, "out of memory");
        return -1;
    }
    return 0;
}

static int cmd_dump(const struct args *a)
{
    struct session s;
    int status = EMB_EXIT_BAD;
    if (session_open(a, &s) == 0) {
        struct chain_row *rows = calloc(s.calls.count ? s.calls.count : 1, sizeof *rows);
        if (rows) {
            size_t nrows = summarise_chains(s.ev, &s.calls, s.ops, rows);
            if (a->json)
                dump_json(s.ev, s.n, &s.calls, s.ops, &s.st, rows, nrows);
            else
                dump_text(s.ev, s.n, &s.calls, s.ops, &s.st, rows, nrows);
            status = EMB_EXIT_OK;
        }
        free(rows);
    }
    session_close(&s);
    return status;
}

static int write_perfetto(void *arg, FILE *f)
{
    return emb_events_write_perfetto(arg, f);
}

static int export_perfetto(const struct emb_events_view *v, const char *output)
{
    return emb_cli_write_output(CMD, output, write_perfetto, (void *)v);
}

/* The files emb_events_write_ctf() makes (events_export.c). */
static bool events_ctf_owns(const char *name)
{
    return !strcmp(name, "metadata") || !strcmp(name, "services_0");
}

static int write_ctf(void *arg, const char *dir, char *err, size_t errlen)
{
    return emb_events_write_ctf(arg, dir, err, errlen);
}

static int cmd_export(const struct args *a)
{
    bool ctf = !strcmp(a->format, "ctf");
    if (!ctf && strcmp(a->format, "perfetto") != 0 && strcmp(a->format, "chrome") != 0) {
        emb_cli_error(CMD, "--format %s: expected perfetto or ctf", a->format);
        return EMB_EXIT_BAD;
    }
    if (ctf && a->output == NULL) {
        emb_cli_error(CMD, "--format ctf writes a directory: give -o DIR");
        return EMB_EXIT_BAD;
    }
    struct session s;
    int status = EMB_EXIT_BAD;
    if (session_open(a, &s) == 0) {
        struct emb_events_view v = {.ev = s.ev, .n = s.n, .calls = &s.calls, .ops = s.ops,
                                    .dropped = s.st.dropped};
        if (!ctf)
            status = export_perfetto(&v, a->output);
        else
            status = emb_cli_write_dir(CMD, a->output, events_ctf_owns, write_ctf, &v);
    }
    session_close(&s);
    return status;
}

static int cmd_metrics(const struct args *a)
{
    struct conn c;
    if (conn_open(&c, a->socket) != 0)
        return EMB_EXIT_BAD;
    uint8_t q[1];
    long n = conn_query(&c, q, emb_svc_encode_metrics(q, sizeof q));
    int status = EMB_EXIT_BAD;
    if (n >= 0 && n % EMB_SVC_MET_LEN != 0) {
        emb_cli_error_at(CMD, c.path, n - n % EMB_SVC_MET_LEN,
                         "METRICS reply of %ld bytes is not %u-byte records", n, EMB_SVC_MET_LEN);
    } else if (n >= 0) {
        size_t count = (size_t)n / EMB_SVC_MET_LEN;
        struct emb_svc_metric *m = calloc(count ? count : 1, sizeof *m);
        status = m ? EMB_EXIT_OK : EMB_EXIT_BAD;
        for (size_t i = 0; m && i < count; i++) {
            size_t bad = 0;
            if (emb_svc_decode_metric_record(c.reply + i * EMB_SVC_MET_LEN, &m[i], &bad)) {
                emb_cli_error_at(CMD, c.path, (long long)(i * EMB_SVC_MET_LEN + bad),
                                 "metric %zu of the METRICS reply is malformed", i);
                status = EMB_EXIT_BAD;
                break;
            }
        }
        if (status == EMB_EXIT_OK && a->json) {
            struct emb_json j;
            emb_json_begin_document(&j, stdout);
            emb_json_begin_array(&j, "metrics");
            for (size_t i = 0; i < count; i++) {
                emb_json_begin_object(&j, NULL);
                emb_json_string(&j, "owner", m[i].owner);
                emb_json_string(&j, "name", m[i].name);
                emb_json_uint(&j, "value", m[i].value);
                emb_json_end_object(&j);
            }
            emb_json_end_array(&j);
            emb_json_end_object(&j);
            emb_json_end(&j);
        } else if (status == EMB_EXIT_OK) {
            const char *b = emb_color_code(stdout, EMB_C_BOLD), *r = emb_color_code(stdout, EMB_C_RESET);
            printf("%s%-12s  %-20s  %20s%s\n", b, "OWNER", "NAME", "VALUE", r);
            for (size_t i = 0; i < count; i++) {
                put_name(stdout, m[i].owner, 12);
                fputs("  ", stdout);
                put_name(stdout, m[i].name, 20);
                printf("  %20llu\n", (unsigned long long)m[i].value);
            }
        }
        free(m);
    }
    conn_close(&c);
    return status;
}

/* Prints the lines of one LOGS reply; returns the header's next cursor in *next. */
static int print_logs(const uint8_t *reply, long n, const char *path, bool json,
                      uint64_t since, uint64_t *next, bool *printed_gap)
{
    struct emb_svc_logs_header h;
    size_t bad = 0;
    if (emb_svc_decode_logs_header(reply, n < 0 ? 0 : (size_t)n, &h, &bad) != EMB_OK) {
        emb_cli_error_at(CMD, path, (long long)bad, "LOGS reply of %ld bytes is malformed", n);
        return -1;
    }
    const uint8_t *p = reply + EMB_SVC_LOGS_HDR_LEN, *end = reply + n;
    size_t lines = 0;
    for (const uint8_t *q = p; q < end; q++)
        lines += *q == '\n';
    if (end > p && end[-1] != '\n') {
        emb_cli_error_at(CMD, path, n, "LOGS reply ends inside a line");
        return -1;
    }
    uint64_t first = h.next - lines + 1;
    if (h.wrapped && !*printed_gap) {
        /* The sink reads a cursor past its newest line (an older sink's) as 0. */
        uint64_t from = h.count && since > h.oldest + h.count - 1 ? 0 : since;
        uint64_t lost = h.oldest - from - 1;
        if (!json)
            fprintf(stdout, "%s(%llu lines lost before line %llu: the window wrapped)%s\n",
                    emb_color_code(stdout, EMB_C_YELLOW), (unsigned long long)lost,
                    (unsigned long long)h.oldest, emb_color_code(stdout, EMB_C_RESET));
        *printed_gap = true;
    }
    for (uint64_t k = first; p < end; k++) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *sep = memchr(p, EMB_SVC_LOG_SEP, (size_t)(nl - p));
        const uint8_t *text = sep ? sep + 1 : p;
        size_t owner_len = sep ? (size_t)(sep - p) : 0;
        if (json) {
            struct emb_json j;
            emb_json_init(&j, stdout, false);
            emb_json_begin_object(&j, NULL);
            emb_json_uint(&j, "line", k);
            emb_json_string_n(&j, "owner", (const char *)p, owner_len);
            emb_json_string_n(&j, "text", (const char *)text, (size_t)(nl - text));
            emb_json_end_object(&j);
            emb_json_end(&j);
        } else {
            fprintf(stdout, "%s%7llu%s  ", emb_color_code(stdout, EMB_C_DIM), (unsigned long long)k,
                    emb_color_code(stdout, EMB_C_RESET));
            char owner[EMB_SVC_NAME_LEN + 1];
            snprintf(owner, sizeof owner, "%.*s", (int)owner_len, (const char *)p);
            put_name(stdout, owner, 12);
            fputs("  ", stdout);
            put_text(stdout, text, (size_t)(nl - text));
            fputc('\n', stdout);
        }
        p = nl + 1;
    }
    *next = h.next;
    return 0;
}

static int cmd_logs(const struct args *a)
{
    struct conn c;
    if (conn_open(&c, a->socket) != 0)
        return EMB_EXIT_BAD;
    uint64_t cursor = a->since;
    bool gap_shown = false;
    int status = EMB_EXIT_OK;
    struct sigaction sa = {.sa_handler = on_interrupt};
    sigemptyset(&sa.sa_mask);
    if (a->follow) {
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    /* Without --follow, ask until the reply brings nothing new (a reply holds at most
     * EMB_EVENTS_REPLY_MAX bytes of lines). --follow keeps asking, five times a second. */
    while (!follow_stop) {
        uint8_t q[EMB_SVC_MSG_LOGS_LEN];
        long n = conn_query(&c, q, emb_svc_encode_logs(q, sizeof q, cursor));
        uint64_t next = cursor;
        if (n < 0 || print_logs(c.reply, n, c.path, a->json, cursor, &next, &gap_shown) != 0) {
            status = EMB_EXIT_BAD;
            break;
        }
        fflush(stdout);
        bool more = n > (long)EMB_SVC_LOGS_HDR_LEN; /* lines came: there may be more */
        cursor = next; /* lower than before when a new sink numbers its lines from 1 again */
        if (!more) {
            if (!a->follow)
                break;
            struct timespec ts = {0, 200 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    conn_close(&c);
    return status;
}

/* The subcommand argv[1] names; -1 (after saying so) when it names none. */
static int parse_subcommand(const char *sub, struct args *a)
{
    static const char *const subs[] = {"status", "dump", "logs", "metrics", "export"};
    for (unsigned i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (!strcmp(sub, subs[i])) {
            a->sub = (enum sub)i;
            return 0;
        }
    }
    emb_cli_error(CMD, "unknown subcommand '%s'", sub);
    fputs(emb_help_events, stderr);
    return -1;
}

/* The arguments after the options: dump's count, nothing else; then what the options
 * say together. -1 when they are not (the caller returns EMB_EXIT_BAD), else 0. */
static int check_rest(struct args *a, const char *sub, int rest, char **pos)
{
    if (a->sub == SUB_DUMP && rest == 1) {
        uint64_t v = 0;
        if (emb_parse_u64(pos[0], 1, EMB_SVC_DUMP_MAX, &v) != 0) {
            emb_cli_error(CMD, "dump %s: expected a count from 1 to %u", pos[0], EMB_SVC_DUMP_MAX);
            return -1;
        }
        a->count = (unsigned)v;
        rest = 0;
    }
    if (rest > 0) {
        emb_cli_error(CMD, "%s: unexpected argument '%s'", sub, pos[0]);
        return -1;
    }
    if (a->sub == SUB_EXPORT && a->format == NULL) {
        emb_cli_error(CMD, "export needs --format perfetto or --format ctf");
        return -1;
    }
    if ((a->since || a->follow) && a->sub != SUB_LOGS) {
        emb_cli_error(CMD, "--since and --follow are for `emb events logs`");
        return -1;
    }
    return 0;
}

enum { OPT_OPS = 256, OPT_SINCE, OPT_FOLLOW };
static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_STRING("socket", 's', struct args, socket),
    EMB_CLI_STRING("ops", OPT_OPS, struct args, ops),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_STRING("format", 'f', struct args, format),
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_U64("since", OPT_SINCE, struct args, since, 0, UINT64_MAX, "a line number"),
    EMB_CLI_FLAG("follow", OPT_FOLLOW, struct args, follow),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_events, .shortopts = ":s:f:o:h", .options = OPTIONS};

/* An EMB_EXIT_* status when the command is done (help, or bad usage), else -1. */
static int parse_args(int argc, char **argv, struct args *a)
{
    if (parse_subcommand(argv[1], a) != 0)
        return EMB_EXIT_BAD;
    a->count = EMB_SVC_DUMP_MAX;
    int rc = emb_cli_parse_options(&COMMAND, argc - 1, argv + 1, NULL, a);
    if (rc != 0)
        return rc < 0 ? EMB_EXIT_OK : rc;
    return check_rest(a, argv[1], argc - 1 - optind, argv + 1 + optind) ? EMB_EXIT_BAD : -1;
}

int emb_cmd_events(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(emb_help_events, argc < 2 ? stderr : stdout);
        return argc < 2 ? EMB_EXIT_BAD : EMB_EXIT_OK;
    }
    if (!strcmp(argv[1], "serve"))
        return emb_events_serve_main(argc - 1, argv + 1);
    struct args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    switch (a.sub) {
    case SUB_STATUS:
        return cmd_status(&a);
    case SUB_DUMP:
        return cmd_dump(&a);
    case SUB_LOGS:
        return cmd_logs(&a);
    case SUB_METRICS:
        return cmd_metrics(&a);
    case SUB_EXPORT:
        return cmd_export(&a);
    }
    return EMB_EXIT_BAD;
}
