/* The edit script between two runs' event sequences of one context: a Myers diff over
 * event identity, walked window by window so that a whole run costs linear time plus the
 * differences' local cost. */
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "diff_internal.h"

#define MYERS_MAX_D 2048u /* edit distance past which an epoch is not aligned (docs/diff.md) */

bool emb_diff_push_op(struct emb_diff_ops *o, uint8_t t, int64_t ia, int64_t ib)
{
    struct emb_diff_op *v = emb_array_grow(o->v, &o->cap, o->n + 1, sizeof *v);
    if (!v)
        return false;
    o->v = v;
    o->v[o->n++] = (struct emb_diff_op){.ia = (int32_t)ia, .ib = (int32_t)ib, .t = t};
    return true;
}

/* Myers' greedy diff between a[0..n) and b[0..m) by identity, appending the edit script
 * with indices offset by a0, b0. Returns 1 when the distance passes MYERS_MAX_D (the
 * script is then every deletion and every insertion, unaligned), 0, or -1 (memory). */
static int myers(const struct emb_diff_event *a, long n, const struct emb_diff_event *b, long m,
                 int64_t a0, int64_t b0, struct emb_diff_ops *o)
{
    long maxd = n + m < (long)MYERS_MAX_D ? n + m : (long)MYERS_MAX_D;
    long off = maxd + 1;
    size_t width = (size_t)(2 * maxd + 3);
    long *V = calloc(width, sizeof *V);
    long *hist = NULL; /* row d holds V[-d..d] after step d */
    size_t hist_len = 0, hist_cap = 0;
    long D = -1;
    if (!V)
        return -1;
    for (long d = 0; d <= maxd && D < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && V[off + k - 1] < V[off + k + 1])) ? V[off + k + 1]
                                                                              : V[off + k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && a[x].identity == b[y].identity)
                x++, y++;
            V[off + k] = x;
            if (x >= n && y >= m) {
                D = d;
                break;
            }
        }
        long *grown = emb_array_grow(hist, &hist_cap, hist_len + (size_t)(2 * d + 1), sizeof *hist);
        if (!grown) {
            free(V);
            free(hist);
            return -1;
        }
        hist = grown;
        memcpy(hist + hist_len, V + off - d, (size_t)(2 * d + 1) * sizeof *V);
        hist_len += (size_t)(2 * d + 1);
    }
    free(V);
    int rc = 0;
    size_t start = o->n;
    if (D < 0) {
        for (long i = 0; i < n && rc == 0; i++)
            rc = emb_diff_push_op(o, EMB_DIFF_OP_DEL, a0 + i, -1) ? 0 : -1;
        for (long j = 0; j < m && rc == 0; j++)
            rc = emb_diff_push_op(o, EMB_DIFF_OP_INS, -1, b0 + j) ? 0 : -1;
        free(hist);
        return rc ? rc : 1;
    }
    long x = n, y = m;
    for (long d = D; d > 0 && rc == 0; d--) {
        const long *Vp = hist + (size_t)((d - 1) * (d - 1)) + (size_t)(d - 1); /* V[0] of row d-1 */
        long k = x - y;
        long pk = (k == -d || (k != d && Vp[k - 1] < Vp[k + 1])) ? k + 1 : k - 1;
        long px = Vp[pk], py = px - pk;
        while (x > px && y > py && rc == 0) {
            x--, y--;
            rc = emb_diff_push_op(o, EMB_DIFF_OP_MATCH, a0 + x, b0 + y) ? 0 : -1;
        }
        if (rc == 0)
            rc = (pk == k + 1 ? emb_diff_push_op(o, EMB_DIFF_OP_INS, -1, b0 + py) : emb_diff_push_op(o, EMB_DIFF_OP_DEL, a0 + px, -1)) ? 0 : -1;
        x = px, y = py;
    }
    while (x > 0 && y > 0 && rc == 0) {
        x--, y--;
        rc = emb_diff_push_op(o, EMB_DIFF_OP_MATCH, a0 + x, b0 + y) ? 0 : -1;
    }
    free(hist);
    for (size_t i = start, j = o->n ? o->n - 1 : 0; rc == 0 && i < j; i++, j--) {
        struct emb_diff_op t = o->v[i];
        o->v[i] = o->v[j];
        o->v[j] = t;
    }
    return rc;
}

/* A whole context's sequences, matched in order: identical stretches are walked in one
 * pass; where they part, Myers runs on a window of DIFF_WINDOW events of each side and its
 * script is kept up to the first EMB_DIFF_RESYNC matches in a row after the difference, where
 * the walk resumes. Linear in the events plus the differences' local cost. */
#define DIFF_WINDOW 4096

int emb_diff_sequences(const struct emb_diff_event *a, size_t n, const struct emb_diff_event *b,
                       size_t m, struct emb_diff_ops *o, uint64_t *fallbacks)
{
    size_t i = 0, j = 0;
    struct emb_diff_ops t = {0};
    int rc = 0;
    while (rc == 0) {
        while (i < n && j < m && a[i].identity == b[j].identity) {
            if (!emb_diff_push_op(o, EMB_DIFF_OP_MATCH, (int64_t)i, (int64_t)j)) {
                rc = -1;
                break;
            }
            i++, j++;
        }
        if (rc || i == n || j == m)
            break;
        size_t wa = n - i < DIFF_WINDOW ? n - i : DIFF_WINDOW, wb = m - j < DIFF_WINDOW ? m - j : DIFF_WINDOW;
        t.n = 0;
        int mr = myers(a + i, (long)wa, b + j, (long)wb, (int64_t)i, (int64_t)j, &t);
        if (mr < 0) {
            rc = -1;
            break;
        }
        *fallbacks += mr == 1;
        bool whole = wa == n - i && wb == m - j;
        size_t keep = t.n;
        if (!whole) {
            /* Keep the script up to a run of matches after the difference: past it the
             * window's cut edge could bend the alignment. */
            size_t run = 0, seen = 0;
            keep = 0;
            for (size_t k = 0; k < t.n; k++) {
                if (t.v[k].t != EMB_DIFF_OP_MATCH) {
                    seen = 1;
                    run = 0;
                } else if (seen && ++run == EMB_DIFF_RESYNC) {
                    keep = k + 1 - EMB_DIFF_RESYNC;
                    break;
                }
            }
            if (!keep) /* no resynchronisation in the window: take its first half */
                for (size_t ca = 0, cb = 0; keep < t.n && ca < wa / 2 + 1 && cb < wb / 2 + 1; keep++) {
                    ca += t.v[keep].t != EMB_DIFF_OP_INS;
                    cb += t.v[keep].t != EMB_DIFF_OP_DEL;
                }
        }
        for (size_t k = 0; k < keep && rc == 0; k++) {
            if (!emb_diff_push_op(o, t.v[k].t, t.v[k].ia, t.v[k].ib))
                rc = -1;
            if (t.v[k].t != EMB_DIFF_OP_INS)
                i++;
            if (t.v[k].t != EMB_DIFF_OP_DEL)
                j++;
        }
        if (whole)
            break;
    }
    for (; rc == 0 && i < n; i++)
        rc = emb_diff_push_op(o, EMB_DIFF_OP_DEL, (int64_t)i, -1) ? 0 : -1;
    for (; rc == 0 && j < m; j++)
        rc = emb_diff_push_op(o, EMB_DIFF_OP_INS, -1, (int64_t)j) ? 0 : -1;
    free(t.v);
    return rc;
}
