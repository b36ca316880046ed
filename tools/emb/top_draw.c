/* Drawing `emb top`'s view (top_draw.h). The screen and the text share one renderer: each
 * line goes to a sink, the terminal's window or a file. The JSON rows are written from
 * tables of their members, one writer for every array. */
#define _POSIX_C_SOURCE 200809L
#include "top_draw.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <emb/trace_format.h>

#include "json.h"

struct sink {
    FILE *out; /* NULL: the curses screen */
    int row;
};

static void line(struct sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(struct sink *s, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (s->out != NULL) {
        fprintf(s->out, "%s\n", buf);
    } else if (s->row < LINES) {
        mvaddnstr(s->row, 0, buf, COLS);
        clrtoeol();
    }
    s->row++;
}

/* A name or text as the terminal may show it (a target's bytes). */
static const char *printable(const char *name, char *buf, size_t cap)
{
    size_t n = 0;
    for (; name[n] && n + 1 < cap; n++)
        buf[n] = (unsigned char)name[n] < 0x20 || (unsigned char)name[n] >= 0x7F ? '?' : name[n];
    buf[n] = '\0';
    return buf;
}

static bool shown(const char *name, const struct top_status *st)
{
    return st->filter == NULL || st->filter[0] == '\0' || strstr(name, st->filter) != NULL;
}

static const char *kind_name(uint16_t kind)
{
    switch (kind) {
    case EMB_CONTEXT_THREAD: return "thread";
    case EMB_CONTEXT_CPU: return "cpu";
    }
    return "other";
}

static const char *level_name(uint8_t level)
{
    static const char *const names[] = {"---", "ERR", "WRN", "INF", "DBG"};
    return names[level <= 4u ? level : 0u];
}

/* ---- text ---- */

static void draw_contexts(struct sink *s, const struct emb_live_view *v, const struct top_status *st)
{
    char name[32];
    line(s, "%-20s %-7s %12s %10s %9s %10s %8s", "CONTEXT", "KIND", "EVENTS", "EVENTS/S", "PACKETS",
         "DROPPED", "LOST");
    for (size_t i = 0; i < v->ncontexts; i++) {
        const struct emb_live_context *c = &v->contexts[i];
        if (shown(c->name, st))
            line(s, "%-20s %-7s %12" PRIu64 " %10.0f %9" PRIu64 " %10" PRIu64 " %8" PRIu64,
                 printable(c->name, name, sizeof name), kind_name(c->kind), c->events, c->events_per_s,
                 c->packets, c->discarded, c->lost_packets);
    }
}

static void draw_threads(struct sink *s, const struct emb_live_view *v, const struct top_status *st)
{
    char name[32], stack[24];
    if (v->nthreads == 0)
        return;
    line(s, "%s", "");
    line(s, "%-20s %6s %9s %10s %10s %11s  (by %s)", "THREAD", "LOAD%", "SWITCH/S", "SWITCHED", "RUN MS",
         "STACK", st->sort);
    for (size_t i = 0; i < v->nthreads; i++) {
        const struct emb_live_thread *t = &v->threads[i];
        if (t->name[0])
            printable(t->name, name, sizeof name);
        else
            snprintf(name, sizeof name, "#%" PRIu32, t->index);
        if (!shown(name, st))
            continue;
        double run_ms = v->clock_hz ? (double)t->run_ticks * 1e3 / (double)v->clock_hz : 0.0;
        double sw = v->span_s > 0 ? (double)t->window_switches / v->span_s : 0.0;
        if (t->has_stack)
            snprintf(stack, sizeof stack, "%" PRIu32 "/%" PRIu32, t->stack_used, t->stack_size);
        else
            snprintf(stack, sizeof stack, "-");
        line(s, "%-20s %6.1f %9.0f %10" PRIu64 " %10.1f %11s%s", name, 100.0 * t->load, sw, t->switches_out,
             run_ms, stack, t->running ? "  running" : "");
    }
}

static void draw_rings(struct sink *s, const struct emb_live_view *v, const struct top_status *st)
{
    char name[32];
    if (v->nrings == 0)
        return;
    line(s, "%s", "");
    line(s, "%-20s %-6s %10s %10s %6s %10s", "RING", "KIND", "UNREAD", "SIZE", "FILL%", "DROPPED");
    for (size_t i = 0; i < v->nrings; i++) {
        const struct emb_live_ring *r = &v->rings[i];
        if (shown(r->name, st))
            line(s, "%-20s %-6s %10" PRIu64 " %10" PRIu64 " %6.1f %10" PRIu64, printable(r->name, name, sizeof name),
                 r->kind, r->unread, r->size, r->size ? 100.0 * (double)r->unread / (double)r->size : 0.0,
                 r->dropped);
    }
}

static void draw_rest(struct sink *s, const struct emb_live_view *v)
{
    if (v->nirqs > 0) {
        line(s, "%s", "");
        line(s, "%-20s %12s %10s", "INTERRUPT", "COUNT", "PER S");
        for (size_t i = 0; i < v->nirqs; i++)
            line(s, "irq %-16" PRIu32 " %12" PRIu64 " %10.0f", v->irqs[i].irq, v->irqs[i].count, v->irqs[i].per_s);
    }
    line(s, "%s", "");
    line(s, "%-20s %12s %10s", "EVENT", "COUNT", "PER S");
    for (size_t i = 0; i < v->ntop; i++)
        line(s, "%-20s %12" PRIu64 " %10.0f", v->top[i].name, v->top[i].count, v->top[i].per_s);
    if (v->monitor.reports) {
        line(s, "%s", "");
        line(s, "worst %s: %" PRIu64 " cycles (%.1f us), opened at 0x%08" PRIx64 ", %" PRIu64 " reports",
             v->monitor.name, v->monitor.worst_cycles, v->monitor.worst_us, v->monitor.opener_pc,
             v->monitor.reports);
    }
}

static void draw_log(struct sink *s, const struct emb_live_view *v, const struct top_status *st)
{
    const struct emb_live_log_view *l = st->log;
    char text[160];
    if (l == NULL)
        return;
    line(s, "%s", "");
    line(s, "LOG  %" PRIu64 " records, %" PRIu64 " dropped%s", l->records, l->dropped,
         l->unknown ? "  (some of an id the ELF does not have)" : "");
    double hz = v->clock_hz ? (double)v->clock_hz : 1e9;
    for (size_t i = 0; i < l->nlines; i++) {
        const struct emb_live_log_line *ln = &l->lines[i];
        if (!shown(ln->text, st))
            continue;
        char ts[24] = "-";
        if (ln->has_ts)
            snprintf(ts, sizeof ts, "%.6f", (double)ln->ts / hz);
        line(s, "[%12s] %s %s: %s", ts, level_name(ln->level), ln->module, printable(ln->text, text, sizeof text));
    }
}

static void render(struct sink *s, const struct emb_live_view *v, const struct top_status *st)
{
    char src[64];
    line(s, "emb top  %s  %s  target %.1f s%s%s", printable(st->source, src, sizeof src), st->state, v->elapsed_s,
         st->filter && st->filter[0] ? "  filter " : "", st->filter ? st->filter : "");
    line(s, "events %" PRIu64 " (%.0f/s)  packets %" PRIu64 "  dropped %" PRIu64 "  lost packets %" PRIu64
         "  switches %" PRIu64 "  reads %" PRIu64, v->events, v->events_per_s, v->packets, v->discarded,
         v->lost_packets, v->switches, v->rounds);
    line(s, "%s", "");
    draw_contexts(s, v, st);
    draw_threads(s, v, st);
    draw_rings(s, v, st);
    draw_rest(s, v);
    draw_log(s, v, st);
}

void top_draw_text(FILE *out, const struct emb_live_view *v, const struct top_status *st)
{
    struct sink s = {.out = out};
    render(&s, v, st);
    fflush(out);
}

/* ---- JSON: each array's rows from a table of their members ---- */

enum member_kind { M_U64, M_U32, M_U16, M_DOUBLE, M_BOOL, M_CHARS, M_TEXT, M_HEX, M_CONTEXT_KIND, M_LEVEL };

struct member {
    const char *key;
    enum member_kind kind;
    size_t offset;
};

#define MEMBER(type, m, kind) {#m, kind, offsetof(type, m)}
#define MEMBER_AS(type, m, key, kind) {key, kind, offsetof(type, m)}

static void json_member(struct emb_json *j, const struct member *m, const unsigned char *row)
{
    const void *p = row + m->offset;
    switch (m->kind) {
    case M_U64: emb_json_uint(j, m->key, *(const uint64_t *)p); break;
    case M_U32: emb_json_uint(j, m->key, *(const uint32_t *)p); break;
    case M_U16: emb_json_uint(j, m->key, *(const uint16_t *)p); break;
    case M_DOUBLE: emb_json_double(j, m->key, *(const double *)p); break;
    case M_BOOL: emb_json_bool(j, m->key, *(const bool *)p); break;
    case M_CHARS: emb_json_string(j, m->key, (const char *)p); break;
    case M_TEXT: emb_json_string(j, m->key, *(const char *const *)p); break;
    case M_HEX: emb_json_hex(j, m->key, *(const uint64_t *)p); break;
    case M_CONTEXT_KIND: emb_json_string(j, m->key, kind_name(*(const uint16_t *)p)); break;
    case M_LEVEL: emb_json_string(j, m->key, level_name(*(const uint8_t *)p)); break;
    }
}

static void json_row(struct emb_json *j, const char *key, const void *row, const struct member *m, size_t n)
{
    emb_json_begin_object(j, key);
    for (size_t i = 0; i < n; i++)
        json_member(j, &m[i], row);
    emb_json_end_object(j);
}

/* An array of `count` rows `stride` bytes apart; with `name` (a member holding text) only
 * the rows the filter keeps. */
struct table {
    const char *key;
    const void *rows;
    size_t count, stride;
    const struct member *members;
    size_t nmembers;
    const struct member *name;
};

static void json_table(struct emb_json *j, const struct table *t, const struct top_status *st)
{
    emb_json_begin_array(j, t->key);
    for (size_t i = 0; i < t->count; i++) {
        const unsigned char *row = (const unsigned char *)t->rows + i * t->stride;
        if (t->name == NULL || shown((const char *)row + t->name->offset, st))
            json_row(j, NULL, row, t->members, t->nmembers);
    }
    emb_json_end_array(j);
}

#define TABLE(key, rows, count, members, name) \
    {key, rows, count, sizeof *(rows), members, sizeof members / sizeof members[0], name}

static const struct member CONTEXT_MEMBERS[] = {
    MEMBER(struct emb_live_context, id, M_U16), MEMBER(struct emb_live_context, name, M_CHARS),
    MEMBER(struct emb_live_context, kind, M_CONTEXT_KIND), MEMBER(struct emb_live_context, events, M_U64),
    MEMBER(struct emb_live_context, events_per_s, M_DOUBLE), MEMBER(struct emb_live_context, packets, M_U64),
    MEMBER(struct emb_live_context, discarded, M_U64), MEMBER(struct emb_live_context, lost_packets, M_U64),
};
static const struct member THREAD_MEMBERS[] = {
    MEMBER(struct emb_live_thread, index, M_U32), MEMBER(struct emb_live_thread, name, M_CHARS),
    MEMBER(struct emb_live_thread, load, M_DOUBLE), MEMBER(struct emb_live_thread, switches_in, M_U64),
    MEMBER(struct emb_live_thread, switches_out, M_U64), MEMBER(struct emb_live_thread, window_switches, M_U64),
    MEMBER(struct emb_live_thread, run_ticks, M_U64), MEMBER(struct emb_live_thread, running, M_BOOL),
    MEMBER(struct emb_live_thread, has_stack, M_BOOL), MEMBER(struct emb_live_thread, stack_used, M_U32),
    MEMBER(struct emb_live_thread, stack_size, M_U32),
};
static const struct member RING_MEMBERS[] = {
    MEMBER(struct emb_live_ring, name, M_CHARS), MEMBER(struct emb_live_ring, kind, M_TEXT),
    MEMBER(struct emb_live_ring, context_id, M_U16), MEMBER(struct emb_live_ring, unread, M_U64),
    MEMBER(struct emb_live_ring, size, M_U64), MEMBER(struct emb_live_ring, dropped, M_U64),
};
static const struct member IRQ_MEMBERS[] = {
    MEMBER(struct emb_live_irq, irq, M_U32), MEMBER(struct emb_live_irq, count, M_U64),
    MEMBER(struct emb_live_irq, per_s, M_DOUBLE),
};
static const struct member EVENT_MEMBERS[] = {
    MEMBER_AS(struct emb_live_event_rate, name, "event", M_TEXT), MEMBER(struct emb_live_event_rate, count, M_U64),
    MEMBER(struct emb_live_event_rate, per_s, M_DOUBLE),
};
static const struct member MONITOR_MEMBERS[] = {
    MEMBER_AS(struct emb_live_monitor, name, "event", M_TEXT),
    MEMBER(struct emb_live_monitor, worst_cycles, M_U64), MEMBER(struct emb_live_monitor, opener_pc, M_HEX),
    MEMBER(struct emb_live_monitor, reports, M_U64),
};
static const struct member LOG_MEMBERS[] = {
    MEMBER(struct emb_live_log_view, records, M_U64), MEMBER(struct emb_live_log_view, dropped, M_U64),
    MEMBER(struct emb_live_log_view, lost_bytes, M_U64), MEMBER(struct emb_live_log_view, unknown, M_U64),
};
static const struct member LINE_MEMBERS[] = {
    MEMBER(struct emb_live_log_line, ts, M_U64), MEMBER(struct emb_live_log_line, level, M_LEVEL),
    MEMBER(struct emb_live_log_line, module, M_CHARS), MEMBER(struct emb_live_log_line, text, M_CHARS),
};
static const struct member VIEW_MEMBERS[] = {
    MEMBER_AS(struct emb_live_view, elapsed_s, "target_s", M_DOUBLE), MEMBER(struct emb_live_view, span_s, M_DOUBLE),
    MEMBER(struct emb_live_view, events, M_U64), MEMBER(struct emb_live_view, events_per_s, M_DOUBLE),
    MEMBER(struct emb_live_view, packets, M_U64), MEMBER(struct emb_live_view, discarded, M_U64),
    MEMBER(struct emb_live_view, lost_packets, M_U64), MEMBER(struct emb_live_view, switches, M_U64),
    MEMBER_AS(struct emb_live_view, rounds, "reads", M_U64),
    MEMBER(struct emb_live_view, target_reads, M_U64),
};

static void json_log(struct emb_json *j, const struct top_status *st)
{
    const struct emb_live_log_view *l = st->log;
    emb_json_begin_object(j, "log");
    for (size_t i = 0; i < sizeof LOG_MEMBERS / sizeof LOG_MEMBERS[0]; i++)
        json_member(j, &LOG_MEMBERS[i], (const unsigned char *)l);
    const struct table lines = TABLE("lines", l->lines, l->nlines, LINE_MEMBERS, &LINE_MEMBERS[3]);
    json_table(j, &lines, st);
    emb_json_end_object(j);
}

void top_draw_json(FILE *out, const struct emb_live_view *v, const struct top_status *st)
{
    struct emb_json j;
    emb_json_init(&j, out, false);
    emb_json_begin_object(&j, NULL);
    emb_json_string(&j, "source", st->source);
    emb_json_string(&j, "state", st->state);
    emb_json_bool(&j, "ended", st->ended);
    for (size_t i = 0; i < sizeof VIEW_MEMBERS / sizeof VIEW_MEMBERS[0]; i++)
        json_member(&j, &VIEW_MEMBERS[i], (const unsigned char *)v);
    const struct table tables[] = {
        TABLE("contexts", v->contexts, v->ncontexts, CONTEXT_MEMBERS, &CONTEXT_MEMBERS[1]),
        TABLE("threads", v->threads, v->nthreads, THREAD_MEMBERS, &THREAD_MEMBERS[1]),
        TABLE("rings", v->rings, v->nrings, RING_MEMBERS, &RING_MEMBERS[0]),
        TABLE("interrupts", v->irqs, v->nirqs, IRQ_MEMBERS, NULL),
        TABLE("top_events", v->top, v->ntop, EVENT_MEMBERS, NULL),
    };
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        json_table(&j, &tables[i], st);
    if (v->monitor.reports)
        json_row(&j, "monitor", &v->monitor, MONITOR_MEMBERS, sizeof MONITOR_MEMBERS / sizeof MONITOR_MEMBERS[0]);
    if (st->log != NULL)
        json_log(&j, st);
    emb_json_end_object(&j);
    emb_json_end(&j);
    fflush(out);
}

/* ---- the screen ---- */

bool top_screen_open(void)
{
    if (initscr() == NULL)
        return false;
    cbreak();
    noecho();
    curs_set(0);
    nodelay(stdscr, TRUE);
    keypad(stdscr, TRUE);
    return true;
}

void top_screen_draw(const struct emb_live_view *v, const struct top_status *st)
{
    struct sink s = {.out = NULL};
    render(&s, v, st);
    line(&s, "%s", "");
    attron(A_REVERSE);
    if (st->editing)
        line(&s, " filter: %s_   (Enter keeps it, Esc clears it) ", st->filter ? st->filter : "");
    else
        line(&s, "%s", st->ended ? " q quit  s sort  / filter " : " q quit  p pause  s sort  / filter ");
    attroff(A_REVERSE);
    clrtobot();
    refresh();
}

int top_screen_key(bool wait)
{
    nodelay(stdscr, wait ? FALSE : TRUE);
    int c = getch();
    return c == ERR ? -1 : c == KEY_ENTER ? '\n' : c == KEY_BACKSPACE ? 127 : c;
}

void top_screen_close(void)
{
    endwin();
}
