/* The comparison in words: an event, an epoch, an item (docs/diff.md's vocabulary: observed,
 * correlated, consistent with), and the phrases every report shares. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "diff_internal.h"

char *emb_diff_event_text(const struct emb_trace_event *r, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "%s", r->ev ? r->ev->name : "?");
    for (size_t f = 0; r->ev && f < r->ev->nfields && o < len; f++) {
        char v[80];
        emb_trace_field_text(&r->ev->fields[f], r->payload, v, sizeof v);
        o += (size_t)snprintf(buf + o, len - o, " %s=%s", r->ev->fields[f].name, v);
    }
    return buf;
}

struct emb_trace_event emb_diff_event_record(const struct emb_diff *d, int side,
                                             const struct emb_diff_event *e)
{
    struct emb_trace_event r = {.ns = e->ns, .offset = emb_diff_event_file_offset(d, side, e),
                                .id = emb_diff_event_id(e), .type = EMB_TREC_EVENT};
    r.ev = emb_catalog_event(emb_trace_catalog(d->trace[side]), r.id);
    r.payload = emb_diff_payload(d, side, e);
    r.payload_size = r.ev ? r.ev->payload_size : 0;
    return r;
}

uint64_t emb_diff_event_file_offset(const struct emb_diff *d, int side,
                                    const struct emb_diff_event *e)
{
    /* The packet that holds it (packets lie in file order): its offset in the file, and
     * the event's place in it, which no CRC of a sealed file's interrupts. */
    size_t n;
    const struct emb_trace_packet *pk = emb_trace_packets(d->trace[side], &n);
    const uint8_t *at = d->bytes[side] + emb_diff_event_pos(e);
    size_t lo = 0, hi = n; /* pk[lo].data <= at < pk[hi].data */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (pk[mid].data <= at)
            lo = mid;
        else
            hi = mid;
    }
    return n ? pk[lo].offset + (uint64_t)(at - pk[lo].data) : 0;
}

char *emb_diff_event_words(const struct emb_diff *d, int side, const struct emb_diff_event *e,
                           char *buf, size_t len)
{
    struct emb_trace_event r = emb_diff_event_record(d, side, e);
    return emb_diff_event_text(&r, buf, len);
}

const struct emb_catalog_event *emb_diff_event_def(const struct emb_diff *d,
                                                   const struct emb_diff_event *e)
{
    return emb_catalog_event(emb_trace_catalog(d->trace[0]), emb_diff_event_id(e));
}

char *emb_diff_epoch_text(const struct emb_diff *d, int32_t epoch, char *buf, size_t len)
{
    if (epoch < 0 || (size_t)epoch > d->epochs)
        snprintf(buf, len, "%s", epoch < 0 ? "before the anchor" : "after the compared epochs");
    else if (d->anchor_field)
        snprintf(buf, len, "%d (%s %" PRIu32 ")", (int)epoch, d->anchor_field->name,
                 d->epoch_value[epoch]);
    else
        snprintf(buf, len, "%d", (int)epoch);
    return buf;
}

static void us_text(double ns, char *buf, size_t len)
{
    if (fabs(ns) >= 1e6)
        snprintf(buf, len, "%.3f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.1f us", ns / 1e3);
}

char *emb_diff_item_text(const struct emb_diff *d, const struct emb_diff_item *it, char *buf,
                         size_t len)
{
    const struct emb_diff_ctx *c = it->ctx < d->nctx ? &d->ctx[it->ctx] : NULL;
    char ev[256], ev2[256], v[32], lo[32], hi[32], m[32];
    switch (it->rule) {
    case EMB_DIFF_MISSING:
        snprintf(buf, len, "observed in the good run only: %s",
                 emb_diff_event_words(d, 0, &c->ev[0][it->a], ev, sizeof ev));
        break;
    case EMB_DIFF_EXTRA:
        snprintf(buf, len, "observed in the bad run only: %s",
                 emb_diff_event_words(d, 1, &c->ev[1][it->b], ev, sizeof ev));
        break;
    case EMB_DIFF_REORDER:
        snprintf(buf, len, "observed in another order within %s: %s (good #%" PRId64 ", bad #%" PRId64 ")",
                 c->name, emb_diff_event_words(d, 1, &c->ev[1][it->b], ev, sizeof ev),
                 it->a - (int64_t)c->epoch_start[0][it->epoch < 0 ? 0 : it->epoch],
                 it->b - (int64_t)c->epoch_start[1][it->epoch < 0 ? 0 : it->epoch]);
        break;
    case EMB_DIFF_ARGUMENT: {
        struct emb_trace_event ra = emb_diff_event_record(d, 0, &c->ev[0][it->a]);
        struct emb_trace_event rb = emb_diff_event_record(d, 1, &c->ev[1][it->b]);
        if (it->field >= 0) {
            const struct emb_catalog_field *f = &ra.ev->fields[it->field];
            char va[80], vb[80];
            emb_trace_field_text(f, ra.payload, va, sizeof va);
            emb_trace_field_text(f, rb.payload, vb, sizeof vb);
            snprintf(buf, len, "%s.%s observed as %s in the good run, %s in the bad run",
                     ra.ev->name, f->name, va, vb);
        } else {
            snprintf(buf, len, "observed with other values: good %s, bad %s",
                     emb_diff_event_text(&ra, ev, sizeof ev), emb_diff_event_text(&rb, ev2, sizeof ev2));
        }
        break;
    }
    case EMB_DIFF_EPOCH_DURATION:
    case EMB_DIFF_INTERVAL: {
        char gm[32], bm[32], blo[32], bhi[32], what[320];
        us_text(it->value, v, sizeof v);
        us_text(it->lo, lo, sizeof lo);
        us_text(it->hi, hi, sizeof hi);
        us_text(it->margin, m, sizeof m);
        us_text(it->median, gm, sizeof gm);
        us_text(it->b_median, bm, sizeof bm);
        us_text(it->b_lo, blo, sizeof blo);
        us_text(it->b_hi, bhi, sizeof bhi);
        if (it->rule == EMB_DIFF_EPOCH_DURATION)
            snprintf(what, sizeof what, "epoch observed lasting %s", v);
        else
            snprintf(what, sizeof what, "%s observed %s after %s in %s", emb_diff_event_def(d, &c->ev[1][it->b])->name,
                     v, emb_diff_event_def(d, &c->ev[1][it->b_prev])->name, c->name);
        snprintf(buf, len, "%s, %s the good run's band for %" PRIu32 " epoch%s in a row; good run: "
                 "median %s, %g%%..%g%% %s .. %s (%" PRIu32 " values, margin %s); bad run: median "
                 "%s, %g%%..%g%% %s .. %s (%" PRIu32 " values)", what,
                 it->value > it->hi ? "above" : "below", it->run, it->run == 1 ? "" : "s", gm,
                 d->rules.quantile_pct, 100 - d->rules.quantile_pct, lo, hi, it->good_n, m, bm,
                 d->rules.quantile_pct, 100 - d->rules.quantile_pct, blo, bhi, it->bad_n);
        break;
    }
    case EMB_DIFF_DROPS:
        if (it->closed) {
            snprintf(buf, len, "the %s run's window closed here: ring %s filled (%" PRIu64 " events "
                     "dropped), while the %s run recorded on; nothing after is compared",
                     it->side ? "bad" : "good", c ? c->name : "?", it->count, it->side ? "good" : "bad");
            break;
        }
        snprintf(buf, len, "%" PRIu64 " events dropped or packets lost in the %s run (%s): the "
                 "comparison is incomplete here", it->count, it->side ? "bad" : "good",
                 c ? c->name : "?");
        break;
    default:
        snprintf(buf, len, "?");
    }
    return buf;
}

/* ---- what the reports share ---- */

const char emb_diff_reading[] =
    "These are observations. Every later difference was observed at or after the first one "
    "and is correlated with it in time; the captures alone are consistent with more than one "
    "mechanism. An intervention (the suspected mechanism added to the good build, or removed "
    "from the bad one) is what tests one.";

const struct emb_diff_item *emb_diff_first_item(const struct emb_diff *d)
{
    return d->nitems ? &d->items[0] : NULL;
}

char *emb_diff_signed_time_text(double ns, char *buf, size_t len)
{
    if (fabs(ns) >= 1e6)
        snprintf(buf, len, "%+.3f ms", ns / 1e6);
    else
        snprintf(buf, len, "%+.1f us", ns / 1e3);
    return buf;
}

const char *emb_diff_label(const struct emb_diff *d, int side)
{
    const char *l = emb_capture_identity(d->cap[side])->label;
    return l[0] ? l : "(no label)";
}

char *emb_diff_group_event_text(const struct emb_diff *d, const struct emb_diff_group *g,
                                char *buf, size_t len)
{
    const struct emb_catalog *cat = emb_trace_catalog(d->trace[0]);
    const struct emb_catalog_event *e = emb_catalog_event(cat, g->id), *p = emb_catalog_event(cat, g->id_prev);
    if (g->rule == EMB_DIFF_DROPS)
        snprintf(buf, len, "(losses)");
    else if (g->rule == EMB_DIFF_INTERVAL && p)
        snprintf(buf, len, "%s -> %s", p->name, e ? e->name : "?");
    else if (g->rule == EMB_DIFF_EPOCH_DURATION)
        snprintf(buf, len, "epoch (%s to %s)", d->anchor->name, d->anchor->name);
    else
        snprintf(buf, len, "%s", e ? e->name : "?");
    return buf;
}

const char *emb_diff_ctx_name(const struct emb_diff *d, uint32_t ci)
{
    return ci < d->nctx ? d->ctx[ci].name : "-";
}

int64_t emb_diff_centre(const struct emb_diff_item *it, int side)
{
    int64_t v = side ? it->b : it->a;
    return v >= 0 ? v : side ? it->b_near : it->a_near;
}

int32_t emb_diff_event_epoch(const struct emb_diff *d, const struct emb_diff_event *e)
{
    return e->epoch < 0 ? 0 : e->epoch > (int32_t)d->epochs ? (int32_t)d->epochs : e->epoch;
}
