/* How `emb top` shows a live view (live_model.h, live_log.h): full-screen with ncurses, as
 * plain text lines, or as one JSON object a line. Drawing only: the figures are the
 * model's. A filter keeps the rows whose name holds it (contexts, threads, rings, log
 * lines by their text); the totals stay whole. */
#ifndef EMB_TOP_DRAW_H
#define EMB_TOP_DRAW_H

#include <stdbool.h>
#include <stdio.h>

#include "live_log.h"
#include "live_model.h"

/* What the view's heading says besides the figures. */
struct top_status {
    const char *source;       /* what is read */
    const char *state;        /* "reading", "paused", "ended: window closed", ... */
    const char *sort;         /* the threads' order */
    const char *filter;       /* NULL or "": every row */
    bool editing;             /* the filter is being typed (the screen's last line says so) */
    bool ended;
    const struct emb_live_log_view *log; /* NULL: no log decoded (no --elf) */
};

/* The view as text lines (what the screen shows, and --once prints). */
void top_draw_text(FILE *out, const struct emb_live_view *v, const struct top_status *st);
/* The view as one JSON object on one line. */
void top_draw_json(FILE *out, const struct emb_live_view *v, const struct top_status *st);

/* Full screen: set up, draw a view, read a key without waiting (-1: none), close. */
bool top_screen_open(void);
void top_screen_draw(const struct emb_live_view *v, const struct top_status *st);
int top_screen_key(bool wait);
void top_screen_close(void);

#endif /* EMB_TOP_DRAW_H */
