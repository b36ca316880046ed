/* The timing comparison: the good run's spread of each class of interval (and of the
 * epochs' durations) is a band; the bad run's values that leave it on one side and stay
 * there, epoch after epoch, are significant; isolated outliers and catch-ups are not. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "diff_internal.h"

/* A class of interval, and the two runs' spread in it. The band a bad value must leave to
 * be an outlier is [lo - margin, hi + margin]. */
struct tclass {
    double *v, *bv;           /* the good run's values; the bad run's, matched intervals */
    size_t n, cap, bn, bcap;
    /* the spread as each of the class's items reports it: the good run's quantiles q and
     * 1 - q (lo, hi), its median and the margin; the bad run's (b_lo, b_hi, b_median);
     * how many values each run has */
    struct emb_diff_item band;
    size_t bseen;             /* the bad run's occurrences checked so far */
};

/* The k-th smallest of v[0..n) (from 0), v reordered so that no value before it is
 * larger and none after it smaller: Hoare's selection, linear on average where a sort
 * of every class's values was n log n. */
static double kth_smallest(double *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1;
    while (lo < hi) {
        double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if ((ptrdiff_t)k <= j)
            hi = j;
        else if ((ptrdiff_t)k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The p-quantile of v[0..n), linear between the order statistics (Hyndman and Fan's
 * type 7, R's and NumPy's default). */
static double quantile(double *v, size_t n, double p)
{
    double h = (double)(n - 1) * p;
    size_t i = (size_t)h;
    if (i + 1 >= n)
        return kth_smallest(v, n, n - 1);
    double below = kth_smallest(v, n, i), above = v[i + 1];
    for (size_t k = i + 2; k < n; k++) /* the next order statistic: the least after it */
        above = v[k] < above ? v[k] : above;
    return below + (h - (double)i) * (above - below);
}

static void spread(double *v, size_t n, double q, double *lo, double *median, double *hi)
{
    if (!n) {
        *lo = *median = *hi = 0;
        return;
    }
    *lo = quantile(v, n, q);
    *median = quantile(v, n, 0.5);
    *hi = quantile(v, n, 1.0 - q);
}

static bool class_add(double **v, size_t *n, size_t *cap, double x)
{
    double *grown = emb_array_grow(*v, cap, *n + 1, sizeof *grown);
    if (!grown)
        return false;
    *v = grown;
    (*v)[(*n)++] = x;
    return true;
}

struct candidate {
    size_t cls;
    size_t seq;               /* the how-manieth of its class in the bad run */
    int sign;                 /* +1 above the band, -1 below */
    double dev;               /* value - good median */
    bool persistent;
    struct emb_diff_item item;
};

static int cmp_candidate(const void *x, const void *y)
{
    const struct candidate *a = x, *b = y;
    int c = emb_diff_order_u64(a->cls, b->cls);
    return c ? c : emb_diff_order_u64(a->seq, b->seq);
}

/* One comparison's classes (class 0: the epochs' durations; the others found by key) and
 * the bad run's values that left their bands. */
struct timing {
    struct tclass *cls;
    size_t ncls, cls_cap;
    struct candidate *cand;
    size_t ncand, cand_cap;
    bool *catching_up;        /* [epoch]: the bad run's epoch shorter than its band */
    double *late;             /* [epoch]: the bad run's lateness built up before it */
    uint32_t **gcls;          /* [context][event]: the class of each good interval */
};

/* A candidate when v, the seq-th occurrence of class t in the bad run, lies outside its
 * band; NULL when inside (or out of memory). */
static struct candidate *add_candidate(struct emb_diff_work *w, struct timing *tm, size_t cls,
                                       size_t seq, double v)
{
    const struct tclass *t = &tm->cls[cls];
    const struct emb_diff_item *b = &t->band;
    int sign = v > b->hi + b->margin ? 1 : v < b->lo - b->margin ? -1 : 0;
    if (!sign)
        return NULL;
    struct candidate *cand = emb_diff_grow(w, tm->cand, &tm->cand_cap, tm->ncand + 1, sizeof *cand);
    if (!cand)
        return NULL;
    tm->cand = cand;
    struct candidate *c = &tm->cand[tm->ncand];
    memset(c, 0, sizeof *c);
    c->cls = cls;
    c->seq = seq;
    c->sign = sign;
    c->dev = v - b->median;
    tm->ncand++;
    c->item = *b;
    c->item.value = v;
    return c;
}

/* Persistence, in one direction: a class is significant where the bad run's occurrences
 * of it leave its band on one side and stay there, every occurrence in a row, `repeat`
 * occurrences or more over `repeat` epochs or more (in a row by occurrence, so a late
 * context whose events spill into the next epoch does not break its run; over epochs, so
 * one slow frame of a class that occurs ten times a frame is not a run). A run that pays back an opposite
 * excursion just before it is a catch-up: a loop paced on absolute deadlines runs short
 * after a stall until it is on time again. For epochs, the excursion is the lateness the
 * bad run had built up (late[k]: the sum of its epochs' excess over the good median before
 * k); for an interval, opposite outliers of its class in its first epoch or the `repeat`
 * before. Either must be worth at least half the run's own deviation. cand is sorted by
 * class, then occurrence. */
static void mark_persistent(struct emb_diff *d, struct candidate *cand, size_t ncand, const double *late)
{
    unsigned R = d->rules.repeat;
    for (size_t i = 0; i < ncand;) {
        size_t j = i + 1;
        while (j < ncand && cand[j].cls == cand[i].cls && cand[j].sign == cand[i].sign &&
               cand[j].seq == cand[j - 1].seq + 1)
            j++;
        int32_t first = cand[i].item.epoch;
        uint32_t span = (uint32_t)(cand[j - 1].item.epoch - first + 1);
        bool persistent = span >= R && j - i >= R;
        /* Short epochs from the start of the range: the stall they pay back may lie before
         * it, where nothing is compared. */
        if (cand[i].cls == 0 && cand[i].sign < 0 && first < (int32_t)R)
            persistent = false;
        if (persistent) {
            double dev = 0, repaid = 0;
            for (size_t k = i; k < j; k++)
                dev += fabs(cand[k].dev);
            if (cand[i].cls == 0) {
                repaid = cand[i].sign < 0 ? late[first] : 0;
            } else {
                for (size_t k = i; k-- > 0 && cand[k].cls == cand[i].cls &&
                                   cand[k].item.epoch >= first - (int32_t)R;)
                    if (cand[k].sign != cand[i].sign)
                        repaid += fabs(cand[k].dev);
            }
            persistent = repaid < 0.5 * dev;
        }
        for (size_t k = i; k < j; k++) {
            cand[k].persistent = persistent;
            cand[k].item.run = span;
        }
        i = j;
    }
}

/* The class of the bad run's interval ending at event j of context c: that of its good
 * counterpart when both of its events matched consecutive events of the good run inside
 * the compared range; UINT32_MAX otherwise. */
static uint32_t matched_class(const struct emb_diff *d, const struct emb_diff_ctx *c,
                              const uint32_t *good_class, size_t j, int32_t *pa, int32_t *pp)
{
    *pa = c->ev[1][j].peer;
    *pp = c->ev[1][j - 1].peer;
    if (*pa < 1 || *pp < 0 || *pa != *pp + 1 || !emb_diff_compared(d, c->ev[0][*pa].epoch))
        return UINT32_MAX;
    return good_class[*pa];
}

/* A new class, zeroed; -1 out of memory. */
static long new_class(struct timing *tm)
{
    struct tclass *cls = emb_array_grow(tm->cls, &tm->cls_cap, tm->ncls + 1, sizeof *cls);
    if (!cls)
        return -1;
    tm->cls = cls;
    memset(&tm->cls[tm->ncls], 0, sizeof tm->cls[tm->ncls]);
    return (long)tm->ncls++;
}

/* Class 0: both runs' epoch durations. */
static int epoch_class(const struct emb_diff *d, struct timing *tm)
{
    if (new_class(tm) != 0)
        return -1;
    struct tclass *t = &tm->cls[0];
    for (size_t k = 0; k < d->epochs; k++)
        if (!class_add(&t->v, &t->n, &t->cap, (double)(d->epoch_ns[0][k + 1] - d->epoch_ns[0][k])) ||
            !class_add(&t->bv, &t->bn, &t->bcap, (double)(d->epoch_ns[1][k + 1] - d->epoch_ns[1][k])))
            return -1;
    return 0;
}

/* The good run's intervals between consecutive events of a context, by class: the walk
 * numbered each interval's class as it packed the events (emb_diff_ctx.interval_class);
 * the classes are numbered again here in the order this loop meets them, and the numbers
 * stay in that array, which the timing takes over (the class of each good interval). */
static int good_intervals(struct emb_diff_work *w, struct timing *tm)
{
    struct emb_diff *d = w->d;
    size_t E = d->epochs;
    uint32_t *renumber = malloc((w->interval_classes + 1) * sizeof *renumber);
    if (!renumber)
        return -1;
    memset(renumber, 0xFF, (w->interval_classes + 1) * sizeof *renumber);
    int rc = 0;
    for (uint32_t ci = 0; ci < d->nctx && rc == 0; ci++) {
        struct emb_diff_ctx *c = &d->ctx[ci];
        if (!c->present[0] || !c->present[1])
            continue;
        uint32_t *cls = tm->gcls[ci] = c->interval_class;
        c->interval_class = NULL;
        size_t from = c->epoch_start[0][0] + 1, to = c->epoch_start[0][E];
        for (size_t j = 0; j < c->n[0]; j++) {
            if (j < from || j >= to) {
                cls[j] = UINT32_MAX;
                continue;
            }
            uint32_t x = renumber[cls[j]];
            if (x == UINT32_MAX) {
                long n = new_class(tm);
                if (n < 0) {
                    rc = -1;
                    break;
                }
                x = renumber[cls[j]] = (uint32_t)n;
            }
            cls[j] = x;
            struct tclass *t = &tm->cls[x];
            if (!class_add(&t->v, &t->n, &t->cap, (double)(c->ev[0][j].ns - c->ev[0][j - 1].ns))) {
                rc = -1;
                break;
            }
        }
    }
    free(renumber);
    return rc;
}

/* One of the bad run's intervals whose two events matched consecutive events of the good
 * run inside the compared range: its context and last event, its counterpart's class and
 * events, its value. */
struct bad_interval {
    uint32_t ci;
    size_t j;
    uint32_t cls;
    int32_t pa, pp;
    double v;
};

/* The next such interval after *bi (zeroed to start), by context, then event; false at
 * the end. */
static bool next_bad_interval(const struct emb_diff *d, const struct timing *tm,
                              struct bad_interval *bi)
{
    for (; bi->ci < d->nctx; bi->ci++, bi->j = 0) {
        const struct emb_diff_ctx *c = &d->ctx[bi->ci];
        if (!c->present[0] || !c->present[1])
            continue;
        if (bi->j == 0)
            bi->j = c->epoch_start[1][0];
        while (++bi->j < c->epoch_start[1][d->epochs]) {
            bi->cls = matched_class(d, c, tm->gcls[bi->ci], bi->j, &bi->pa, &bi->pp);
            if (bi->cls != UINT32_MAX) {
                bi->v = (double)(c->ev[1][bi->j].ns - c->ev[1][bi->j - 1].ns);
                return true;
            }
        }
    }
    return false;
}

/* The bad run's matched intervals, in the class of their counterpart. */
static int bad_intervals(const struct emb_diff *d, struct timing *tm)
{
    struct bad_interval bi = {0};
    while (next_bad_interval(d, tm, &bi)) {
        struct tclass *t = &tm->cls[bi.cls];
        if (!class_add(&t->bv, &t->bn, &t->bcap, bi.v))
            return -1;
    }
    return 0;
}

/* The bad run's epochs against their band: which are catching up, the lateness built up
 * before each, and the candidates. */
static int epoch_candidates(struct emb_diff_work *w, struct timing *tm)
{
    struct emb_diff *d = w->d;
    size_t E = d->epochs;
    const struct tclass *t = &tm->cls[0];
    const struct emb_diff_ctx *ac = &d->ctx[d->anchor_ctx];
    tm->catching_up = calloc(E + 1, sizeof *tm->catching_up);
    tm->late = calloc(E + 1, sizeof *tm->late);
    if (!tm->catching_up || !tm->late)
        return -1;
    for (size_t k = 0; k < E && t->n; k++) {
        double v = (double)(d->epoch_ns[1][k + 1] - d->epoch_ns[1][k]);
        tm->catching_up[k] = v < t->band.lo - t->band.margin;
        tm->late[k + 1] = tm->late[k] + v - t->band.median;
    }
    for (size_t k = 0; k < E && tm->cls[0].n; k++) {
        double v = (double)(d->epoch_ns[1][k + 1] - d->epoch_ns[1][k]);
        struct candidate *cd = add_candidate(w, tm, 0, k, v);
        if (!cd)
            continue;
        struct emb_diff_item *it = &cd->item;
        it->rule = EMB_DIFF_EPOCH_DURATION;
        it->epoch = (int32_t)k;
        it->ctx = d->anchor_ctx;
        it->a_near = (int64_t)ac->epoch_start[0][k + 1];
        it->b_near = (int64_t)ac->epoch_start[1][k + 1];
        it->offset_ns = (int64_t)v;
    }
    return 0;
}

/* The bad run's matched intervals against their class's band. */
static void interval_candidates(struct emb_diff_work *w, struct timing *tm)
{
    struct emb_diff *d = w->d;
    struct bad_interval bi = {0};
    while (next_bad_interval(d, tm, &bi)) {
        struct tclass *t = &tm->cls[bi.cls];
        size_t seq = t->bseen++;
        /* In an epoch shorter than the good run's band, the frame loop is catching up
         * with its deadlines: an interval shorter than its band there (the loop's idle
         * time, the gap to the next frame of a context the frames drive) is the
         * pacing's, never a shift of its own. A catch-up stretches nothing. */
        int32_t ep = d->ctx[bi.ci].ev[1][bi.j].epoch;
        if (tm->catching_up[ep] && bi.v < t->band.lo - t->band.margin) {
            d->isolated_timing++;
            continue;
        }
        struct candidate *cd = add_candidate(w, tm, bi.cls, seq, bi.v);
        if (!cd)
            continue;
        struct emb_diff_item *it = &cd->item;
        it->rule = EMB_DIFF_INTERVAL;
        it->epoch = ep;
        it->ctx = bi.ci;
        it->a = bi.pa;
        it->a_prev = bi.pp;
        it->b = (int64_t)bi.j;
        it->b_prev = (int64_t)bi.j - 1;
    }
}

/* The persistent candidates become items, with their class's bands; the rest are set
 * aside as isolated. */
static void report_persistent(struct emb_diff_work *w, struct timing *tm)
{
    struct emb_diff *d = w->d;
    if (tm->ncand)
        qsort(tm->cand, tm->ncand, sizeof *tm->cand, cmp_candidate);
    mark_persistent(d, tm->cand, tm->ncand, tm->late);
    for (size_t i = 0; i < tm->ncand; i++) {
        const struct candidate *cd = &tm->cand[i];
        if (!cd->persistent) {
            d->isolated_timing++;
            continue;
        }
        struct emb_diff_item *it = emb_diff_add_item(w, cd->item.rule, cd->item.epoch, cd->item.ctx);
        if (!it)
            continue;
        *it = cd->item;
        if (it->rule == EMB_DIFF_INTERVAL)
            emb_diff_set_offset(d, it);
    }
}

static void timing_free(const struct emb_diff *d, struct timing *tm)
{
    for (size_t i = 0; i < tm->ncls; i++) {
        free(tm->cls[i].v);
        free(tm->cls[i].bv);
    }
    free(tm->cls);
    free(tm->cand);
    free(tm->catching_up);
    free(tm->late);
    for (size_t i = 0; tm->gcls && i < d->nctx; i++)
        free(tm->gcls[i]);
    free(tm->gcls);
}

/* The good run's band of each class with values, then (bad) the bad run's spread in it;
 * each run's values are let go once read, before the next run's are gathered. */
static void finish_classes(struct timing *tm, const struct emb_diff_rules *r, bool bad)
{
    double q = r->quantile_pct / 100.0;
    for (size_t i = 0; i < tm->ncls; i++) {
        struct tclass *t = &tm->cls[i];
        struct emb_diff_item *b = &t->band;
        if (!t->n)
            continue;
        if (bad) {
            spread(t->bv, t->bn, q, &b->b_lo, &b->b_median, &b->b_hi);
            b->bad_n = (uint32_t)t->bn;
            free(t->bv);
            t->bv = NULL;
            continue;
        }
        emb_diff_item_clear(b);
        spread(t->v, t->n, q, &b->lo, &b->median, &b->hi);
        double m = r->margin_pct / 100.0 * b->median, floor_ns = r->margin_us * 1000.0;
        b->margin = m > floor_ns ? m : floor_ns;
        b->good_n = (uint32_t)t->n;
        /* the bad run's values of the class go where the good run's were (class 0 has
         * its own already): memory written once, not a fresh array per run */
        if (!t->bv) {
            t->bv = t->v;
            t->bcap = t->cap;
        } else {
            free(t->v);
        }
        t->v = NULL;
    }
}

int emb_diff_timing(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    struct timing tm = {0};
    int rc = -1;
    tm.gcls = calloc(d->nctx + 1, sizeof *tm.gcls);
    if (!tm.gcls || epoch_class(d, &tm) || good_intervals(w, &tm))
        goto out;
    finish_classes(&tm, &d->rules, false);
    if (bad_intervals(d, &tm))
        goto out;
    finish_classes(&tm, &d->rules, true);
    if (epoch_candidates(w, &tm))
        goto out;
    interval_candidates(w, &tm);
    if (w->oom)
        goto out;
    report_persistent(w, &tm);
    rc = w->oom ? -1 : 0;
out:
    if (rc)
        w->oom = true;
    timing_free(d, &tm);
    return rc;
}
