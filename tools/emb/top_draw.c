/* Drawing `emb top`'s view (top_draw.h). The screen and the text share one renderer: each
 * line goes to a sink, the terminal's window or a file. */
#define _POSIX_C_SOURCE 200809L
#include "top_draw.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
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

/* A context or thread name as the terminal may show it (a target's bytes). */
static const char *printable(const char *name, char *buf, size_t cap)
{
    size_t n = 0;
    for (; name[n] && n + 1 < cap; n++)
        buf[n] = (unsigned char)name[n] < 0x20 || (unsigned char)name[n] >= 0x7F ? '?' : name[n];
    buf[n] = '\0';
    return buf;
}

static const char *kind_name(uint16_t kind)
{
    switch (kind) {
    case EMB_CONTEXT_THREAD: return "thread";
    case EMB_CONTEXT_CPU: return "cpu";
    }
    return "other";
}

static void draw_contexts(struct sink *s, const struct emb_live_view *v)
{
    char name[32];
    line(s, "%-20s %-7s %12s %10s %9s %10s %8s", "CONTEXT", "KIND", "EVENTS", "EVENTS/S", "PACKETS",
         "DROPPED", "LOST");
    for (size_t i = 0; i < v->ncontexts; i++) {
        const struct emb_live_context *c = &v->contexts[i];
        line(s, "%-20s %-7s %12" PRIu64 " %10.0f %9" PRIu64 " %10" PRIu64 " %8" PRIu64,
             printable(c->name, name, sizeof name), kind_name(c->kind), c->events, c->events_per_s,
             c->packets, c->discarded, c->lost_packets);
    }
}

static void draw_threads(struct sink *s, const struct emb_live_view *v, const char *sort)
{
    char name[32], num[16];
    if (v->nthreads == 0)
        return;
    line(s, "%s", "");
    line(s, "%-20s %6s %9s %10s %10s  (by %s)", "THREAD", "LOAD%", "SWITCH/S", "SWITCHED", "RUN MS", sort);
    for (size_t i = 0; i < v->nthreads; i++) {
        const struct emb_live_thread *t = &v->threads[i];
        snprintf(num, sizeof num, "#%" PRIu32, t->index);
        double run_ms = v->clock_hz ? (double)t->run_ticks * 1e3 / (double)v->clock_hz : 0.0;
        double sw = v->span_s > 0 ? (double)t->window_switches / v->span_s : 0.0;
        line(s, "%-20s %6.1f %9.0f %10" PRIu64 " %10.1f%s", t->name[0] ? printable(t->name, name, sizeof name) : num,
             100.0 * t->load, sw, t->switches_out, run_ms, t->running ? "  running" : "");
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

static void render(struct sink *s, const struct emb_live_view *v, const struct top_status *st)
{
    char src[64];
    line(s, "emb top  %s  %s  target %.1f s", printable(st->source, src, sizeof src), st->state, v->elapsed_s);
    line(s, "events %" PRIu64 " (%.0f/s)  packets %" PRIu64 "  dropped %" PRIu64 "  lost packets %" PRIu64
         "  switches %" PRIu64 "  reads %" PRIu64, v->events, v->events_per_s, v->packets, v->discarded,
         v->lost_packets, v->switches, v->rounds);
    line(s, "%s", "");
    draw_contexts(s, v);
    draw_threads(s, v, st->sort);
    draw_rest(s, v);
}

void top_draw_text(FILE *out, const struct emb_live_view *v, const struct top_status *st)
{
    struct sink s = {.out = out};
    render(&s, v, st);
    fflush(out);
}

static void json_threads(struct emb_json *j, const struct emb_live_view *v)
{
    emb_json_begin_array(j, "threads");
    for (size_t i = 0; i < v->nthreads; i++) {
        const struct emb_live_thread *t = &v->threads[i];
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "index", t->index);
        emb_json_string(j, "name", t->name);
        emb_json_double(j, "load", t->load);
        emb_json_uint(j, "switches_in", t->switches_in);
        emb_json_uint(j, "switches_out", t->switches_out);
        emb_json_uint(j, "window_switches", t->window_switches);
        emb_json_uint(j, "run_ticks", t->run_ticks);
        emb_json_bool(j, "running", t->running);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

static void json_contexts(struct emb_json *j, const struct emb_live_view *v)
{
    emb_json_begin_array(j, "contexts");
    for (size_t i = 0; i < v->ncontexts; i++) {
        const struct emb_live_context *c = &v->contexts[i];
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "id", c->id);
        emb_json_string(j, "name", c->name);
        emb_json_string(j, "kind", kind_name(c->kind));
        emb_json_uint(j, "events", c->events);
        emb_json_double(j, "events_per_s", c->events_per_s);
        emb_json_uint(j, "packets", c->packets);
        emb_json_uint(j, "discarded", c->discarded);
        emb_json_uint(j, "lost_packets", c->lost_packets);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

static void json_rest(struct emb_json *j, const struct emb_live_view *v)
{
    emb_json_begin_array(j, "interrupts");
    for (size_t i = 0; i < v->nirqs; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "irq", v->irqs[i].irq);
        emb_json_uint(j, "count", v->irqs[i].count);
        emb_json_double(j, "per_s", v->irqs[i].per_s);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_json_begin_array(j, "top_events");
    for (size_t i = 0; i < v->ntop; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_string(j, "event", v->top[i].name);
        emb_json_uint(j, "count", v->top[i].count);
        emb_json_double(j, "per_s", v->top[i].per_s);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    if (v->monitor.reports) {
        emb_json_begin_object(j, "monitor");
        emb_json_string(j, "event", v->monitor.name);
        emb_json_uint(j, "worst_cycles", v->monitor.worst_cycles);
        emb_json_hex(j, "opener_pc", v->monitor.opener_pc);
        emb_json_uint(j, "reports", v->monitor.reports);
        emb_json_end_object(j);
    }
}

void top_draw_json(FILE *out, const struct emb_live_view *v, const struct top_status *st)
{
    struct emb_json j;
    emb_json_init(&j, out, false);
    emb_json_begin_object(&j, NULL);
    emb_json_string(&j, "source", st->source);
    emb_json_string(&j, "state", st->state);
    emb_json_bool(&j, "ended", st->ended);
    emb_json_double(&j, "target_s", v->elapsed_s);
    emb_json_double(&j, "span_s", v->span_s);
    emb_json_uint(&j, "events", v->events);
    emb_json_double(&j, "events_per_s", v->events_per_s);
    emb_json_uint(&j, "packets", v->packets);
    emb_json_uint(&j, "discarded", v->discarded);
    emb_json_uint(&j, "lost_packets", v->lost_packets);
    emb_json_uint(&j, "switches", v->switches);
    emb_json_uint(&j, "reads", v->rounds);
    json_contexts(&j, v);
    json_threads(&j, v);
    json_rest(&j, v);
    emb_json_end_object(&j);
    emb_json_end(&j);
    fflush(out);
}

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
    line(&s, "%s", st->ended ? " q quit  s sort " : " q quit  p pause  s sort ");
    attroff(A_REVERSE);
    clrtobot();
    refresh();
}

int top_screen_key(bool wait)
{
    nodelay(stdscr, wait ? FALSE : TRUE);
    int c = getch();
    return c == ERR ? -1 : c;
}

void top_screen_close(void)
{
    endwin();
}
