/* The latest log lines (live_log.h): a ring of the last lines, filled by the decoder's
 * record callback. */
#include "live_log.h"

#include <stdlib.h>
#include <string.h>

struct emb_live_log {
    struct emb_log_decoder *dec;
    struct emb_live_log_line ring[EMB_LIVE_LOG_LINES];
    size_t next, count;       /* the next slot to write; lines held */
    struct emb_live_log_line shown[EMB_LIVE_LOG_LINES];
    struct emb_live_log_view view;
};

/* Copies at most cap - 1 bytes of `s` (not NUL-terminated: n bytes), a line of its own:
 * a newline ends it. */
static void copy_line(char *to, size_t cap, const char *s, size_t n)
{
    size_t k = 0;
    for (; k < n && k + 1 < cap && s[k] != '\n'; k++)
        to[k] = s[k];
    to[k] = '\0';
}

static void on_record(void *arg, const struct emb_logrec *r)
{
    struct emb_live_log *l = arg;
    switch (r->type) {
    case EMB_LREC_LOG:
    case EMB_LREC_HEXDUMP:
        break;
    case EMB_LREC_DROPPED:
    case EMB_LREC_PENDING:
        l->view.dropped += r->count;
        return;
    case EMB_LREC_LOST:
        l->view.lost_bytes += r->count;
        return;
    case EMB_LREC_UNKNOWN:
        l->view.unknown++;
        return;
    default:
        return;
    }
    l->view.records++;
    struct emb_live_log_line *line = &l->ring[l->next];
    line->has_ts = r->has_ts;
    line->ts = r->ts;
    line->level = r->site ? r->site->level : 0u;
    copy_line(line->module, sizeof line->module, r->site && r->site->module ? r->site->module : "",
              r->site && r->site->module ? strlen(r->site->module) : 0u);
    copy_line(line->text, sizeof line->text, r->text ? r->text : "", r->text ? r->text_len : 0u);
    l->next = (l->next + 1u) % EMB_LIVE_LOG_LINES;
    if (l->count < EMB_LIVE_LOG_LINES)
        l->count++;
}

struct emb_live_log *emb_live_log_new(const struct emb_logdb *db, struct emb_problems *problems)
{
    struct emb_live_log *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    const struct emb_log_decoder_options o = {.db = db, .name = "log", .record = on_record, .arg = l,
                                              .problems = problems};
    if ((l->dec = emb_log_decoder_new(&o)) == NULL) {
        free(l);
        return NULL;
    }
    return l;
}

void emb_live_log_free(struct emb_live_log *l)
{
    if (l == NULL)
        return;
    emb_log_decoder_free(l->dec);
    free(l);
}

void emb_live_log_feed(struct emb_live_log *l, const uint8_t *bytes, size_t len)
{
    emb_log_decoder_feed(l->dec, bytes, len);
}

void emb_live_log_finish(struct emb_live_log *l)
{
    emb_log_decoder_finish(l->dec);
}

const struct emb_live_log_view *emb_live_log_view(struct emb_live_log *l)
{
    size_t first = (l->next + EMB_LIVE_LOG_LINES - l->count) % EMB_LIVE_LOG_LINES;
    for (size_t i = 0; i < l->count; i++)
        l->shown[i] = l->ring[(first + i) % EMB_LIVE_LOG_LINES];
    l->view.lines = l->shown;
    l->view.nlines = l->count;
    return &l->view;
}
