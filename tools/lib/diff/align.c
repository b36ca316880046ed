/* The structural alignment: both runs cut into epochs at their epoch markers (the frame
 * both windows armed on, or the first marker value both have), never at timestamps, and
 * each event given the epoch it fell in. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

static const struct emb_catalog_field *frame_field(const struct emb_catalog_event *ev)
{
    for (size_t f = 0; f < ev->nfields; f++)
        if (ev->fields[f].meaning == EMB_CAT_MEANING_FRAME)
            return &ev->fields[f];
    return NULL;
}

/* One run's epoch markers. */
struct markers {
    size_t *pos;      /* index in the anchor context */
    uint32_t *value;
    size_t n;
};

/* The markers of one run, in the context that has the most of them. */
static int find_markers(struct emb_diff_work *w, int side, struct markers *m)
{
    struct emb_diff *d = w->d;
    size_t best = SIZE_MAX, best_n = 0;
    for (size_t i = 0; i < d->nctx; i++) {
        size_t n = 0;
        for (size_t k = 0; k < d->ctx[i].n[side]; k++)
            n += emb_diff_event_id(&d->ctx[i].ev[side][k]) == d->anchor->id;
        if (n > best_n) {
            best_n = n;
            best = i;
        }
    }
    memset(m, 0, sizeof *m);
    if (best == SIZE_MAX)
        return 0;
    w->anchor_ctx[side] = best;
    m->pos = malloc(best_n * sizeof *m->pos);
    m->value = malloc(best_n * sizeof *m->value);
    if (!m->pos || !m->value) {
        w->oom = true;
        return -1;
    }
    const struct emb_diff_ctx *c = &d->ctx[best];
    for (size_t k = 0; k < c->n[side]; k++) {
        const struct emb_diff_event *e = &c->ev[side][k];
        if (emb_diff_event_id(e) != d->anchor->id)
            continue;
        m->pos[m->n] = k;
        /* the walk kept each marker's value: its payload is not read again here */
        m->value[m->n] = d->anchor_field ? c->marker_value[side][m->n] : (uint32_t)m->n;
        m->n++;
    }
    return 0;
}

static long marker_index(const struct markers *m, uint32_t value)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->value[i] == value)
            return (long)i;
    return -1;
}

void emb_diff_find_anchor(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    const struct emb_diff_rules *r = &d->rules;
    d->anchor = r->anchor_event ? r->anchor_event : emb_catalog_find(w->cat, "frame_start");
    d->anchor_field = !d->anchor ? NULL
                      : r->anchor_field >= 0 ? &d->anchor->fields[r->anchor_field]
                      : r->anchor_field == -2 ? frame_field(d->anchor) : NULL;
}

/* The marker event and field the rules chose (frame_start.frame by default); spec names
 * them for messages. */
static int choose_anchor(struct emb_diff_work *w, char *spec, size_t len)
{
    struct emb_diff *d = w->d;
    if (!d->anchor)
        return emb_diff_refuse(w, "the catalogue has no frame_start event: choose an epoch marker "
                                  "with --anchor EVENT[.FIELD]");
    snprintf(spec, len, "%s%s%s", d->anchor->name, d->anchor_field ? "." : "",
             d->anchor_field ? d->anchor_field->name : "");
    return 0;
}

/* Two window captures compare only when armed at one frame, unless --anchor says where. */
static int check_windows(struct emb_diff_work *w, const bool armed[2])
{
    struct emb_diff *d = w->d;
    const struct emb_capture_window *win[2] = {emb_capture_window(d->cap[0]), emb_capture_window(d->cap[1])};
    if (d->rules.anchor_given || (armed[0] == armed[1] &&
                                  (!armed[0] || win[0]->armed_frame == win[1]->armed_frame)))
        return 0;
    char a[40], b[40];
    snprintf(a, sizeof a, armed[0] ? "armed at frame %" PRIu32 : "not an armed window", win[0]->armed_frame);
    snprintf(b, sizeof b, armed[1] ? "armed at frame %" PRIu32 : "not an armed window", win[1]->armed_frame);
    return emb_diff_refuse(w, "the captures are of different windows: %s is %s, %s is %s; compare "
                              "captures armed at the same frame, or choose the alignment with "
                              "--anchor EVENT[.FIELD]", d->name[0], a, d->name[1], b);
}

/* The first marker of each run to compare from: the armed frame's, the first value both
 * runs have, or (by ordinal) each run's first. */
static int find_start(struct emb_diff_work *w, const struct markers *m, const bool armed[2],
                      const char *spec, long start[2])
{
    struct emb_diff *d = w->d;
    start[0] = start[1] = 0;
    d->anchor_armed = !d->rules.anchor_given && armed[0] && d->anchor_field;
    if (d->anchor_armed) {
        for (int s = 0; s < 2; s++) {
            uint32_t frame = emb_capture_window(d->cap[s])->armed_frame;
            if ((start[s] = marker_index(&m[s], frame)) < 0)
                return emb_diff_refuse(w, "%s has no %s = %" PRIu32 " (the armed frame): nothing "
                                          "to align on; choose an epoch marker with --anchor "
                                          "EVENT[.FIELD]", d->name[s], spec, frame);
        }
    } else if (d->anchor_field) {
        start[0] = -1;
        for (size_t i = 0; i < m[0].n && start[0] < 0; i++)
            if ((start[1] = marker_index(&m[1], m[0].value[i])) >= 0)
                start[0] = (long)i;
        if (start[0] < 0)
            return emb_diff_refuse(w, "no %s value is in both captures: nothing to align on; "
                                      "choose another epoch marker with --anchor EVENT[.FIELD]", spec);
    }
    return 0;
}

/* The compared epochs: `common` markers from start on, in both runs. */
static int keep_epochs(struct emb_diff_work *w, const struct markers *m, const long start[2],
                       size_t common)
{
    struct emb_diff *d = w->d;
    d->epochs = common - 1;
    for (int s = 0; s < 2; s++)
        w->markers_after[s] = m[s].n - (size_t)start[s] - common;
    d->epoch_value = malloc((d->epochs + 1) * sizeof *d->epoch_value);
    for (int s = 0; s < 2; s++) {
        d->epoch_ns[s] = malloc((d->epochs + 1) * sizeof *d->epoch_ns[s]);
        w->marker_pos[s] = malloc((d->epochs + 1) * sizeof *w->marker_pos[s]);
        if (!d->epoch_ns[s] || !w->marker_pos[s] || !d->epoch_value) {
            w->oom = true;
            return -1;
        }
        const struct emb_diff_ctx *c = &d->ctx[w->anchor_ctx[s]];
        for (size_t k = 0; k <= d->epochs; k++) {
            w->marker_pos[s][k] = m[s].pos[start[s] + k];
            d->epoch_ns[s][k] = c->ev[s][w->marker_pos[s][k]].ns;
            d->epoch_value[k] = m[0].value[start[0] + k];
        }
    }
    d->anchor_ctx = (uint32_t)w->anchor_ctx[0];
    return 0;
}

static int align_markers(struct emb_diff_work *w, struct markers *m, const bool armed[2],
                         const char *spec)
{
    struct emb_diff *d = w->d;
    for (int s = 0; s < 2; s++) {
        if (find_markers(w, s, &m[s]) != 0)
            return -1;
        if (!m[s].n)
            return emb_diff_refuse(w, "%s has no %s event: nothing to align on; choose an epoch "
                                      "marker with --anchor EVENT[.FIELD]", d->name[s], d->anchor->name);
    }
    long start[2];
    if (find_start(w, m, armed, spec, start) != 0)
        return -1;
    size_t common = 0;
    while ((size_t)start[0] + common < m[0].n && (size_t)start[1] + common < m[1].n &&
           m[0].value[start[0] + common] == m[1].value[start[1] + common])
        common++;
    if (common < 2)
        return emb_diff_refuse(w, "no complete epoch in common: the captures share %zu %s marker%s "
                                  "from %s = %" PRIu32, common, d->anchor->name, common == 1 ? "" : "s",
                               spec, m[0].value[start[0]]);
    return keep_epochs(w, m, start, common);
}

int emb_diff_align(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    char spec[96];
    if (choose_anchor(w, spec, sizeof spec) != 0)
        return -1;
    bool armed[2];
    for (int s = 0; s < 2; s++)
        armed[s] = emb_capture_window(d->cap[s])->armed_frame != EMB_CAP_NO_FRAME;
    if (check_windows(w, armed) != 0)
        return -1;
    struct markers m[2];
    memset(m, 0, sizeof m);
    int rc = align_markers(w, m, armed, spec);
    for (int s = 0; s < 2; s++) {
        free(m[s].pos);
        free(m[s].value);
    }
    return rc;
}

/* Epoch of every event of one run's context and the index where each compared epoch
 * starts: the anchor context by its markers' positions, the others by the markers' times. */
static void epochs_of(struct emb_diff_work *w, size_t i, int s)
{
    struct emb_diff *d = w->d;
    struct emb_diff_ctx *c = &d->ctx[i];
    size_t E = d->epochs;
    const uint64_t *T = d->epoch_ns[s];
    size_t k = 0; /* the epoch, +1 (0 = before the anchor) */
    for (size_t j = 0; j < c->n[s]; j++) {
        struct emb_diff_event *e = &c->ev[s][j];
        if (i == w->anchor_ctx[s]) {
            while (k <= E && j >= w->marker_pos[s][k])
                k++;
        } else {
            while (k <= E && e->ns >= T[k])
                k++;
        }
        e->epoch = (int32_t)k - 1;
        if (k == 0 || k > E)
            d->outside[s]++;
    }
    size_t j = 0;
    for (size_t e = 0; e <= E; e++) {
        while (j < c->n[s] && c->ev[s][j].epoch < (int32_t)e)
            j++;
        c->epoch_start[s][e] = j;
    }
}

int emb_diff_assign_epochs(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    for (size_t i = 0; i < d->nctx; i++) {
        struct emb_diff_ctx *c = &d->ctx[i];
        for (int s = 0; s < 2; s++) {
            if (!c->present[s])
                continue;
            c->epoch_start[s] = malloc((d->epochs + 1) * sizeof *c->epoch_start[s]);
            if (!c->epoch_start[s]) {
                w->oom = true;
                return -1;
            }
            epochs_of(w, i, s);
        }
    }
    return 0;
}
