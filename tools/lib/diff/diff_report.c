/* The comparison's reports: text for a person, JSON for a program, and a self-contained
 * HTML page with both runs' timelines around the first difference. Their vocabulary is
 * docs/diff.md's: what was observed, what is correlated with it, what the data are
 * consistent with; never a claim about mechanism, which needs an intervention. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "text.h"
#include "diff.h"

#define JSON_MAX_ITEMS 1000u
#define SVG_MAX_TICKS 4000u

static const char READING[] =
    "These are observations. Every later difference was observed at or after the first one "
    "and is correlated with it in time; the captures alone are consistent with more than one "
    "mechanism. An intervention (the suspected mechanism added to the good build, or removed "
    "from the bad one) is what tests one.";

static const struct emb_diff_item *first_item(const struct emb_diff *d)
{
    return d->nitems ? &d->items[0] : NULL;
}

static char *fmt_us(double ns, char *buf, size_t len)
{
    if (fabs(ns) >= 1e6)
        snprintf(buf, len, "%+.3f ms", ns / 1e6);
    else
        snprintf(buf, len, "%+.1f us", ns / 1e3);
    return buf;
}

static const char *label_of(const struct emb_diff *d, int s)
{
    const char *l = emb_capture_identity(d->cap[s])->label;
    return l[0] ? l : "(no label)";
}

static char *group_event(const struct emb_diff *d, const struct emb_diff_group *g, char *buf,
                         size_t len)
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

static const char *ctx_name(const struct emb_diff *d, uint32_t ci)
{
    return ci < d->nctx ? d->ctx[ci].name : "-";
}

/* The event index a neighbourhood centres on, per side; -1 none. */
static int64_t centre(const struct emb_diff_item *it, int s)
{
    int64_t v = s ? it->b : it->a;
    return v >= 0 ? v : s ? it->b_near : it->a_near;
}

static void neighbourhood_text(const struct emb_diff *d, const struct emb_diff_item *it, int s,
                               FILE *out)
{
    const struct emb_diff_ctx *c = it->ctx < d->nctx ? &d->ctx[it->ctx] : NULL;
    int64_t mid = centre(it, s);
    char ep[64], t[32], ev[256];
    if (!c || !c->present[s] || mid < 0) {
        fprintf(out, "  %s run: no events of %s here\n", s ? "bad" : "good", c ? c->name : "this context");
        return;
    }
    int64_t n = (int64_t)c->n[s], lines = d->rules.context_lines;
    int64_t from = mid - lines < 0 ? 0 : mid - lines, to = mid + lines + 1 > n ? n : mid + lines + 1;
    fprintf(out, "  %s run (%s), %s, epoch %s:\n", s ? "bad" : "good", label_of(d, s), c->name,
            emb_diff_epoch_text(d, it->epoch, ep, sizeof ep));
    const char *red = emb_color_code(out, EMB_C_RED), *rst = emb_color_code(out, EMB_C_RESET);
    for (int64_t i = from; i < to; i++) {
        const struct emb_diff_event *e = &c->ev[s][i];
        bool self = i == (s ? it->b : it->a) || (s ? i == it->b_prev : i == it->a_prev);
        int32_t ek = e->epoch < 0 ? 0 : e->epoch > (int32_t)d->epochs ? (int32_t)d->epochs : e->epoch;
        double off = (double)e->ns - (double)d->epoch_ns[s][ek];
        char mark = i == (s ? it->b : it->a) ? '>' : e->peer < 0 ? (s ? '+' : '-') : ' ';
        fprintf(out, "    %c e%-4d %12s  %s%s%s\n", mark, (int)e->epoch, fmt_us(off, t, sizeof t),
                self ? red : "", emb_diff_event_text(e->rec, ev, sizeof ev), self ? rst : "");
    }
}

static void identity_line(const struct emb_diff *d, int s, FILE *out)
{
    const struct emb_capture_identity *id = emb_capture_identity(d->cap[s]);
    char hex[65];
    fprintf(out, "  %-4s %-12s firmware \"%s\" flags \"%s\" build %.12s session 0x%016" PRIx64 "%s%s\n",
            s ? "bad" : "good", label_of(d, s), id->firmware, id->config,
            id->build_id_len ? emb_capture_hex(id->build_id, id->build_id_len, hex) : "(none)",
            id->session_id, id->revision[0] ? " revision " : "", id->revision);
}

int emb_diff_write_text(const struct emb_diff *d, FILE *out)
{
    const char *b = emb_color_code(out, EMB_C_BOLD), *r = emb_color_code(out, EMB_C_RESET);
    const char *red = emb_color_code(out, EMB_C_RED), *grn = emb_color_code(out, EMB_C_GREEN);
    const char *yel = emb_color_code(out, EMB_C_YELLOW);
    char e0[64], e1[64], buf[1024], ev[256];
    fprintf(out, "%semb diff%s %s vs %s\n", b, r, d->name[0], d->name[1]);
    identity_line(d, 0, out);
    identity_line(d, 1, out);
    if (d->rules.same_build)
        fprintf(out, "  (--same-build: two runs of one configuration, compared as said)\n");
    if (d->same_run)
        fprintf(out, "  %sthe same run%s: both captures carry session 0x%016" PRIx64 ", so this compares "
                "one recording with itself, not two runs\n", yel, r,
                emb_capture_identity(d->cap[0])->session_id);
    fprintf(out, "aligned on %s%s%s = %s, never on timestamps: %zu epochs compared (%s .. %s), "
            "%zu contexts\n", d->anchor->name, d->anchor_field ? "." : "",
            d->anchor_field ? d->anchor_field->name : " (by count)",
            d->anchor_armed ? "the frame both windows armed on" : "the first marker both runs have",
            d->epochs, emb_diff_epoch_text(d, 0, e0, sizeof e0),
            emb_diff_epoch_text(d, (int32_t)d->epochs - 1, e1, sizeof e1), d->nctx);
    fprintf(out, "  contexts:");
    for (size_t i = 0; i < d->nctx; i++)
        fprintf(out, "%s %s%s", i ? "," : "", d->ctx[i].name,
                !d->ctx[i].present[0] ? " (bad only)" : !d->ctx[i].present[1] ? " (good only)" : "");
    fputc('\n', out);
    if (d->incomplete) {
        fprintf(out, "%sINCOMPLETE%s: the comparison is missing records in:\n", yel, r);
        for (size_t i = 0; i < d->ngaps; i++) {
            const struct emb_diff_gap *g = &d->gaps[i];
            fprintf(out, "  %s run, %s, epoch %s: %" PRIu64 " %s\n", g->side ? "bad" : "good", g->where,
                    g->epoch >= 0 ? emb_diff_epoch_text(d, g->epoch, e0, sizeof e0) : "unknown",
                    g->count, g->what);
        }
    } else {
        fprintf(out, "complete: no record was dropped or lost in the compared epochs");
        if (d->dropped_after[0] || d->dropped_after[1])
            fprintf(out, " (the windows closed with %" PRIu64 " and %" PRIu64 " events dropped after them)",
                    d->dropped_after[0], d->dropped_after[1]);
        fputc('\n', out);
    }
    const struct emb_diff_item *it = first_item(d);
    if (!it) {
        fprintf(out, "\n%sNo significant difference observed%s under the rules below.\n", grn, r);
    } else {
        fprintf(out, "\n%sFIRST SIGNIFICANT DIFFERENCE%s (rule %s%s%s)\n", b, r, red,
                emb_diff_rule_name(it->rule), r);
        fprintf(out, "  epoch %s, context %s, %s into the epoch\n",
                emb_diff_epoch_text(d, it->epoch, e0, sizeof e0), ctx_name(d, it->ctx),
                fmt_us((double)it->offset_ns, e1, sizeof e1));
        fprintf(out, "  %s\n", emb_diff_item_text(d, it, buf, sizeof buf));
        if (it->rule != EMB_DIFF_DROPS) {
            neighbourhood_text(d, it, 0, out);
            neighbourhood_text(d, it, 1, out);
            fprintf(out, "  (> the event; - good only; + bad only; times from each run's epoch marker)\n");
        }
        fprintf(out, "\n%sSUMMARY%s: %zu significant difference%s in %zu group%s, ranked by first "
                "occurrence\n", b, r, d->nitems, d->nitems == 1 ? "" : "s", d->ngroups,
                d->ngroups == 1 ? "" : "s");
        fprintf(out, "  %3s  %-14s %-22s %-6s %8s  %-14s %s\n", "#", "rule", "first epoch", "last",
                "count", "context", "event");
        size_t shown = d->ngroups < 40 ? d->ngroups : 40;
        for (size_t i = 0; i < shown; i++) {
            const struct emb_diff_group *g = &d->groups[i];
            fprintf(out, "  %3zu  %-14s %-22s %-6d %8zu  %-14s %s\n", i + 1, emb_diff_rule_name(g->rule),
                    emb_diff_epoch_text(d, d->items[g->first].epoch, e0, sizeof e0), (int)g->last_epoch,
                    g->count, ctx_name(d, g->ctx), group_event(d, g, ev, sizeof ev));
        }
        if (shown < d->ngroups)
            fprintf(out, "  ... %zu more groups (--json lists them all)\n", d->ngroups - shown);
    }
    fprintf(out, "\nset aside as not significant: %" PRIu64 " events matched, %" PRIu64
            " of them in another epoch than their counterpart (order against another context's "
            "marker: scheduling noise); %" PRIu64 " unmatched at a context's leading edge (before "
            "its first match, in the first epoch); %" PRIu64
            " timing outliers not on one side of their band in %u consecutive epochs, or paying "
            "back an excursion just before (a catch-up); %" PRIu64
            " fields within tolerance; outside the compared epochs: %" PRIu64 " good, %" PRIu64 " bad",
            d->matched, d->boundary_shifts, d->edge, d->isolated_timing, d->rules.repeat,
            d->within_tolerance, d->outside[0], d->outside[1]);
    if (d->after_close)
        fprintf(out, "; %" PRIu64 " unmatched after a context's last match in one run when the "
                "other run's window had closed (nothing was recorded there any more)", d->after_close);
    if (d->diff_fallbacks)
        fprintf(out, "; %" PRIu64 " context-epochs too different to align (every event in them "
                "counted missing or extra)", d->diff_fallbacks);
    fprintf(out, "\nrules:");
    for (int i = 0; i < EMB_DIFF_NRULES; i++)
        fprintf(out, " %s%s", emb_diff_rule_name((enum emb_diff_rule)i), d->rules.enabled[i] ? "" : "(off)");
    fprintf(out, "; timing band the good run's %g%%..%g%% quantiles widened by the larger of %g%% "
            "of its median and %g us; repeat %u; %zu field polic%s from rules\n",
            d->rules.quantile_pct, 100 - d->rules.quantile_pct, d->rules.margin_pct, d->rules.margin_us, d->rules.repeat,
            d->rules.npolicies, d->rules.npolicies == 1 ? "y" : "ies");
    if (it)
        fprintf(out, "\n%s\n", READING);
    return ferror(out) ? -1 : 0;
}

/* ---- JSON ---- */

static void json_event(struct emb_json *j, const char *key, const struct emb_diff *d, int s,
                       const struct emb_diff_ctx *c, int64_t i)
{
    if (i < 0 || !c || !c->present[s] || (size_t)i >= c->n[s]) {
        emb_json_null(j, key);
        return;
    }
    const struct emb_diff_event *e = &c->ev[s][i];
    char ev[256];
    emb_json_begin_object(j, key);
    emb_json_int(j, "index", i);
    emb_json_int(j, "epoch", e->epoch);
    int32_t ek = e->epoch < 0 ? 0 : e->epoch > (int32_t)d->epochs ? (int32_t)d->epochs : e->epoch;
    emb_json_int(j, "offset_ns", (long long)e->ns - (long long)d->epoch_ns[s][ek]);
    emb_json_uint(j, "file_offset", e->rec->offset);
    emb_json_string(j, "event", emb_diff_event_text(e->rec, ev, sizeof ev));
    emb_json_end_object(j);
}

static void json_item(struct emb_json *j, const struct emb_diff *d, const struct emb_diff_item *it,
                      bool neighbourhood)
{
    char buf[1024];
    const struct emb_diff_ctx *c = it->ctx < d->nctx ? &d->ctx[it->ctx] : NULL;
    emb_json_begin_object(j, NULL);
    emb_json_string(j, "rule", emb_diff_rule_name(it->rule));
    emb_json_int(j, "epoch", it->epoch);
    if (d->anchor_field && it->epoch >= 0 && (size_t)it->epoch <= d->epochs)
        emb_json_uint(j, "anchor_value", d->epoch_value[it->epoch]);
    emb_json_string(j, "context", ctx_name(d, it->ctx));
    emb_json_int(j, "offset_ns", it->offset_ns);
    emb_json_string(j, "text", emb_diff_item_text(d, it, buf, sizeof buf));
    if (it->rule == EMB_DIFF_INTERVAL || it->rule == EMB_DIFF_EPOCH_DURATION) {
        emb_json_double(j, "value_ns", it->value);
        emb_json_string(j, "direction", it->value > it->hi ? "above" : "below");
        emb_json_uint(j, "epochs_in_a_row", it->run);
        emb_json_double(j, "quantile_pct", d->rules.quantile_pct);
        emb_json_double(j, "good_median_ns", it->median);
        emb_json_double(j, "good_q_lo_ns", it->lo);
        emb_json_double(j, "good_q_hi_ns", it->hi);
        emb_json_uint(j, "good_values", it->good_n);
        emb_json_double(j, "margin_ns", it->margin);
        emb_json_double(j, "bad_median_ns", it->b_median);
        emb_json_double(j, "bad_q_lo_ns", it->b_lo);
        emb_json_double(j, "bad_q_hi_ns", it->b_hi);
        emb_json_uint(j, "bad_values", it->bad_n);
    }
    if (it->rule == EMB_DIFF_ARGUMENT && it->field >= 0 && c)
        emb_json_string(j, "field", c->ev[0][it->a].rec->ev->fields[it->field].name);
    if (it->rule == EMB_DIFF_DROPS) {
        emb_json_string(j, "run", it->side ? "bad" : "good");
        emb_json_uint(j, "count", it->count);
    }
    json_event(j, "good", d, 0, c, it->a);
    json_event(j, "bad", d, 1, c, it->b);
    if (neighbourhood && c) {
        for (int s = 0; s < 2; s++) {
            emb_json_begin_array(j, s ? "bad_neighbourhood" : "good_neighbourhood");
            int64_t mid = centre(it, s), lines = d->rules.context_lines;
            if (mid >= 0 && c->present[s])
                for (int64_t i = mid - lines < 0 ? 0 : mid - lines;
                     i <= mid + lines && i < (int64_t)c->n[s]; i++)
                    json_event(j, NULL, d, s, c, i);
            emb_json_end_array(j);
        }
    }
    emb_json_end_object(j);
}

int emb_diff_write_json(const struct emb_diff *d, FILE *out)
{
    struct emb_json j;
    char hex[65], ev[256];
    emb_json_init(&j, out, true);
    j.flat_depth = 3;
    emb_json_begin_object(&j, NULL);
    for (int s = 0; s < 2; s++) {
        const struct emb_capture_identity *id = emb_capture_identity(d->cap[s]);
        emb_json_begin_object(&j, s ? "bad" : "good");
        emb_json_string(&j, "file", d->name[s]);
        emb_json_string(&j, "label", id->label);
        emb_json_string(&j, "firmware", id->firmware);
        emb_json_string(&j, "flags", id->config);
        emb_json_string(&j, "build_id", emb_capture_hex(id->build_id, id->build_id_len, hex));
        emb_json_string(&j, "revision", id->revision);
        snprintf(hex, sizeof hex, "0x%016" PRIx64, id->session_id);
        emb_json_string(&j, "session", hex);
        emb_json_end_object(&j);
    }
    emb_json_bool(&j, "same_build", d->rules.same_build);
    emb_json_bool(&j, "same_run", d->same_run);
    emb_json_begin_object(&j, "alignment");
    emb_json_string(&j, "anchor_event", d->anchor->name);
    emb_json_string(&j, "anchor_field", d->anchor_field ? d->anchor_field->name : NULL);
    emb_json_bool(&j, "armed_frame", d->anchor_armed);
    emb_json_uint(&j, "start", d->epoch_value[0]);
    emb_json_uint(&j, "epochs", d->epochs);
    emb_json_begin_array(&j, "contexts");
    for (size_t i = 0; i < d->nctx; i++)
        emb_json_string(&j, NULL, d->ctx[i].name);
    emb_json_end_array(&j);
    emb_json_end_object(&j);
    emb_json_bool(&j, "complete", !d->incomplete);
    emb_json_begin_array(&j, "incomplete");
    for (size_t i = 0; i < d->ngaps; i++) {
        const struct emb_diff_gap *g = &d->gaps[i];
        emb_json_begin_object(&j, NULL);
        emb_json_string(&j, "run", g->side ? "bad" : "good");
        emb_json_string(&j, "where", g->where);
        emb_json_int(&j, "epoch", g->epoch);
        emb_json_uint(&j, "count", g->count);
        emb_json_string(&j, "what", g->what);
        emb_json_end_object(&j);
    }
    emb_json_end_array(&j);
    emb_json_uint(&j, "significant", d->nitems);
    emb_json_begin_array(&j, "first");
    if (first_item(d))
        json_item(&j, d, first_item(d), true);
    emb_json_end_array(&j);
    emb_json_begin_array(&j, "summary");
    for (size_t i = 0; i < d->ngroups; i++) {
        const struct emb_diff_group *g = &d->groups[i];
        emb_json_begin_object(&j, NULL);
        emb_json_uint(&j, "rank", i + 1);
        emb_json_string(&j, "rule", emb_diff_rule_name(g->rule));
        emb_json_string(&j, "context", ctx_name(d, g->ctx));
        emb_json_string(&j, "event", group_event(d, g, ev, sizeof ev));
        emb_json_int(&j, "first_epoch", d->items[g->first].epoch);
        emb_json_int(&j, "last_epoch", g->last_epoch);
        emb_json_uint(&j, "count", g->count);
        if (g->rule == EMB_DIFF_INTERVAL || g->rule == EMB_DIFF_EPOCH_DURATION)
            emb_json_double(&j, "worst_excess_ns", g->worst);
        emb_json_end_object(&j);
    }
    emb_json_end_array(&j);
    emb_json_begin_array(&j, "differences");
    for (size_t i = 0; i < d->nitems && i < JSON_MAX_ITEMS; i++)
        json_item(&j, d, &d->items[i], false);
    emb_json_end_array(&j);
    emb_json_bool(&j, "differences_truncated", d->nitems > JSON_MAX_ITEMS);
    emb_json_begin_object(&j, "set_aside");
    emb_json_uint(&j, "matched", d->matched);
    emb_json_uint(&j, "matched_across_epochs", d->boundary_shifts);
    emb_json_uint(&j, "leading_edge", d->edge);
    emb_json_uint(&j, "after_window_closed", d->after_close);
    emb_json_uint(&j, "isolated_timing_outliers", d->isolated_timing);
    emb_json_uint(&j, "within_tolerance", d->within_tolerance);
    emb_json_uint(&j, "outside_good", d->outside[0]);
    emb_json_uint(&j, "outside_bad", d->outside[1]);
    emb_json_uint(&j, "dropped_after_good", d->dropped_after[0]);
    emb_json_uint(&j, "dropped_after_bad", d->dropped_after[1]);
    emb_json_uint(&j, "unaligned_epochs", d->diff_fallbacks);
    emb_json_end_object(&j);
    emb_json_begin_object(&j, "rules");
    for (int i = 0; i < EMB_DIFF_NRULES; i++)
        emb_json_bool(&j, emb_diff_rule_name((enum emb_diff_rule)i), d->rules.enabled[i]);
    emb_json_double(&j, "margin_pct", d->rules.margin_pct);
    emb_json_double(&j, "margin_us", d->rules.margin_us);
    emb_json_double(&j, "quantile_pct", d->rules.quantile_pct);
    emb_json_uint(&j, "repeat", d->rules.repeat);
    emb_json_uint(&j, "policies", d->rules.npolicies);
    emb_json_end_object(&j);
    emb_json_end_object(&j);
    emb_json_end(&j);
    return ferror(out) ? -1 : 0;
}

/* ---- HTML ---- */

static void html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

static bool is_flagged(const struct emb_diff *d, uint32_t ci, int s, int64_t i)
{
    const struct emb_diff_event *e = &d->ctx[ci].ev[s][i];
    return e->peer < 0 && e->epoch >= 0 && e->epoch < (int32_t)d->epochs;
}

/* Both runs' timelines, per context, aligned on the epoch marker of the first difference
 * (time 0 in each run), from one epoch before it to one after. */
static void html_svg(const struct emb_diff *d, const struct emb_diff_item *it, FILE *out)
{
    int32_t fe = it ? (it->epoch < 0 ? 0 : it->epoch) : 0;
    if ((size_t)fe >= d->epochs)
        fe = (int32_t)d->epochs - 1;
    int32_t k0 = fe > 0 ? fe - 1 : 0, k1 = (size_t)fe + 2 <= d->epochs ? fe + 2 : (int32_t)d->epochs;
    double t0 = 0, t1 = 0;
    for (int s = 0; s < 2; s++) {
        double a = (double)d->epoch_ns[s][k0] - (double)d->epoch_ns[s][fe];
        double b = (double)d->epoch_ns[s][k1] - (double)d->epoch_ns[s][fe];
        t0 = a < t0 ? a : t0;
        t1 = b > t1 ? b : t1;
    }
    if (t1 <= t0)
        t1 = t0 + 1;
    const int left = 150, width = 1000, lane = 18, gap = 14, top = 30;
    int height = top + (int)d->nctx * (2 * lane + gap) + 30;
    double scale = width / (t1 - t0);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"timelines of both runs\">\n",
            left + width + 20, height, left + width + 20, height);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
            left + width + 20, height);
    /* time axis */
    for (int i = 0; i <= 10; i++) {
        double t = t0 + (t1 - t0) * i / 10.0;
        double x = left + (t - t0) * scale;
        char us[32];
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eeeeee\"/>\n", x, top - 6,
                x, height - 24);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" "
                "fill=\"#666\">%s</text>\n", x, height - 10, fmt_us(t, us, sizeof us));
    }
    char ep[64];
    fprintf(out, "<text x=\"%d\" y=\"16\" font-size=\"12\" fill=\"#333\">time from the marker of epoch "
            "%s in each run</text>\n", left, emb_diff_epoch_text(d, fe, ep, sizeof ep));
    for (size_t ci = 0; ci < d->nctx; ci++) {
        const struct emb_diff_ctx *c = &d->ctx[ci];
        int y0 = top + (int)ci * (2 * lane + gap);
        fprintf(out, "<text x=\"4\" y=\"%d\" font-size=\"12\" fill=\"#222\">", y0 + lane + 4);
        html_text(out, c->name);
        fprintf(out, "</text>\n");
        for (int s = 0; s < 2; s++) {
            int y = y0 + s * lane;
            fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", left, y,
                    width, lane - 2, s ? "#fff4e8" : "#eaf2fb");
            fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#777\" text-anchor=\"end\">%s"
                    "</text>\n", left - 4, y + lane - 6, s ? "bad" : "good");
            for (int32_t k = k0; k <= k1; k++) {
                double x = left + ((double)d->epoch_ns[s][k] - (double)d->epoch_ns[s][fe] - t0) * scale;
                fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\" "
                        "stroke-dasharray=\"3,2\"/>\n", x, y, x, y + lane - 2);
            }
            if (!c->present[s])
                continue;
            size_t from = c->epoch_start[s][k0], to = c->epoch_start[s][k1], ticks = 0;
            for (size_t i = from; i < to && ticks < SVG_MAX_TICKS; i++, ticks++) {
                double x = left + ((double)c->ev[s][i].ns - (double)d->epoch_ns[s][fe] - t0) * scale;
                bool flagged = is_flagged(d, (uint32_t)ci, s, (int64_t)i);
                fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
                        "stroke-width=\"%s\"/>\n", x, y + 2, x, y + lane - 4,
                        flagged ? "#d62728" : s ? "#e07b00" : "#1f66b3", flagged ? "2" : "1");
            }
        }
    }
    /* the first difference, ringed in both runs */
    if (it && it->ctx < d->nctx) {
        const struct emb_diff_ctx *c = &d->ctx[it->ctx];
        for (int s = 0; s < 2; s++) {
            int64_t i = centre(it, s);
            if (i < 0 || !c->present[s] || (size_t)i >= c->n[s])
                continue;
            double x = left + ((double)c->ev[s][i].ns - (double)d->epoch_ns[s][fe] - t0) * scale;
            int y = top + (int)it->ctx * (2 * lane + gap) + s * lane + lane / 2 - 1;
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%d\" r=\"8\" fill=\"none\" stroke=\"#d62728\" "
                    "stroke-width=\"2.5\"><title>first difference</title></circle>\n", x, y);
            if (s == 1 && it->b_prev >= 0) {
                double xp = left + ((double)c->ev[1][it->b_prev].ns - (double)d->epoch_ns[1][fe] - t0) * scale;
                fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d62728\" "
                        "stroke-width=\"3\"/>\n", xp, y, x, y);
            }
        }
    }
    fprintf(out, "</svg>\n");
}

static void html_neighbourhood(const struct emb_diff *d, const struct emb_diff_item *it, int s,
                               FILE *out)
{
    const struct emb_diff_ctx *c = it->ctx < d->nctx ? &d->ctx[it->ctx] : NULL;
    int64_t mid = centre(it, s);
    char t[32], ev[256];
    fprintf(out, "<div class=\"col\"><h3>%s run</h3><table class=\"ev\">\n", s ? "bad" : "good");
    if (c && c->present[s] && mid >= 0) {
        int64_t n = (int64_t)c->n[s], lines = d->rules.context_lines;
        for (int64_t i = mid - lines < 0 ? 0 : mid - lines; i <= mid + lines && i < n; i++) {
            const struct emb_diff_event *e = &c->ev[s][i];
            int32_t ek = e->epoch < 0 ? 0 : e->epoch > (int32_t)d->epochs ? (int32_t)d->epochs : e->epoch;
            bool self = i == (s ? it->b : it->a);
            fprintf(out, "<tr class=\"%s\"><td>e%d</td><td>%s</td><td>", self ? "hit" : e->peer < 0 ? "only" : "",
                    (int)e->epoch, fmt_us((double)e->ns - (double)d->epoch_ns[s][ek], t, sizeof t));
            html_text(out, emb_diff_event_text(e->rec, ev, sizeof ev));
            fprintf(out, "</td></tr>\n");
        }
    } else {
        fprintf(out, "<tr><td>no events of this context here</td></tr>\n");
    }
    fprintf(out, "</table></div>\n");
}

int emb_diff_write_html(const struct emb_diff *d, FILE *out)
{
    const struct emb_diff_item *it = first_item(d);
    char buf[1024], e0[64], e1[64], hex[65];
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<title>emb diff: ");
    html_text(out, d->name[0]);
    fprintf(out, " vs ");
    html_text(out, d->name[1]);
    fprintf(out, "</title>\n<style>\n"
            "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}\n"
            "h1{font-size:20px}h2{font-size:16px;margin-top:24px}h3{font-size:13px;margin:4px 0}\n"
            "table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;text-align:left}\n"
            "th{background:#f0f0f0}.ev td{font-family:monospace;font-size:12px}\n"
            ".hit{background:#ffd6d6;font-weight:bold}.only{color:#b00}\n"
            ".first{border:2px solid #d62728;padding:8px 12px;background:#fff7f7}\n"
            ".ok{border:2px solid #2a9d2a;padding:8px 12px;background:#f4fff4}\n"
            ".warn{border:2px solid #d9a400;padding:8px 12px;background:#fffbea}\n"
            ".col{display:inline-block;vertical-align:top;margin-right:24px}\n"
            ".note{color:#555;font-size:13px}\n</style></head><body>\n");
    fprintf(out, "<h1>emb diff: ");
    html_text(out, d->name[0]);
    fprintf(out, " (good) vs ");
    html_text(out, d->name[1]);
    fprintf(out, " (bad)</h1>\n<table><tr><th>run</th><th>label</th><th>firmware</th><th>flags</th>"
            "<th>build</th><th>session</th></tr>\n");
    for (int s = 0; s < 2; s++) {
        const struct emb_capture_identity *id = emb_capture_identity(d->cap[s]);
        fprintf(out, "<tr><td>%s</td><td>", s ? "bad" : "good");
        html_text(out, id->label);
        fprintf(out, "</td><td>");
        html_text(out, id->firmware);
        fprintf(out, "</td><td>");
        html_text(out, id->config);
        fprintf(out, "</td><td>%.16s</td><td>0x%016" PRIx64 "</td></tr>\n",
                emb_capture_hex(id->build_id, id->build_id_len, hex), id->session_id);
    }
    if (d->same_run)
        fprintf(out, "</table>\n<p class=\"warn\">The same run: both captures carry session "
                "0x%016" PRIx64 ", so this compares one recording with itself, not two runs.</p>\n<table>",
                emb_capture_identity(d->cap[0])->session_id);
    fprintf(out, "</table>\n<p class=\"note\">Aligned on %s%s%s, never on timestamps: %zu epochs "
            "compared (%s .. %s), %zu contexts.</p>\n", d->anchor->name, d->anchor_field ? "." : "",
            d->anchor_field ? d->anchor_field->name : "", d->epochs,
            emb_diff_epoch_text(d, 0, e0, sizeof e0), emb_diff_epoch_text(d, (int32_t)d->epochs - 1, e1, sizeof e1),
            d->nctx);
    if (d->incomplete) {
        fprintf(out, "<div class=\"warn\"><b>Incomplete:</b> records are missing in ");
        for (size_t i = 0; i < d->ngaps; i++) {
            fprintf(out, "%s%s run, ", i ? "; " : "", d->gaps[i].side ? "bad" : "good");
            html_text(out, d->gaps[i].where);
            fprintf(out, ", epoch %s: %" PRIu64 " %s", d->gaps[i].epoch >= 0 ?
                    emb_diff_epoch_text(d, d->gaps[i].epoch, e0, sizeof e0) : "unknown",
                    d->gaps[i].count, d->gaps[i].what);
        }
        fprintf(out, ".</div>\n");
    }
    if (it) {
        fprintf(out, "<h2>First significant difference</h2>\n<div class=\"first\" id=\"first\">"
                "<b>rule %s</b>: epoch %s, context <b>", emb_diff_rule_name(it->rule),
                emb_diff_epoch_text(d, it->epoch, e0, sizeof e0));
        html_text(out, ctx_name(d, it->ctx));
        fprintf(out, "</b>, %s into the epoch<br>\n", fmt_us((double)it->offset_ns, e1, sizeof e1));
        html_text(out, emb_diff_item_text(d, it, buf, sizeof buf));
        fprintf(out, "</div>\n");
        html_neighbourhood(d, it, 0, out);
        html_neighbourhood(d, it, 1, out);
    } else {
        fprintf(out, "<div class=\"ok\">No significant difference observed under the rules.</div>\n");
    }
    fprintf(out, "<h2>Timelines</h2>\n<p class=\"note\">Each context: the good run (blue) above the "
            "bad run (orange); red marks events without a counterpart, the ring the first "
            "difference; dashed lines are epoch markers.</p>\n");
    html_svg(d, it, out);
    if (it) {
        char ev[256];
        fprintf(out, "<h2>Ranked summary</h2>\n<p class=\"note\">%zu significant differences in %zu "
                "groups, ranked by first occurrence.</p>\n<table><tr><th>#</th><th>rule</th>"
                "<th>first epoch</th><th>last</th><th>count</th><th>context</th><th>event</th></tr>\n",
                d->nitems, d->ngroups);
        for (size_t i = 0; i < d->ngroups && i < 200; i++) {
            const struct emb_diff_group *g = &d->groups[i];
            fprintf(out, "<tr><td>%zu</td><td>%s</td><td>%s</td><td>%d</td><td>%zu</td><td>", i + 1,
                    emb_diff_rule_name(g->rule), emb_diff_epoch_text(d, d->items[g->first].epoch, e0, sizeof e0),
                    (int)g->last_epoch, g->count);
            html_text(out, ctx_name(d, g->ctx));
            fprintf(out, "</td><td>");
            html_text(out, group_event(d, g, ev, sizeof ev));
            fprintf(out, "</td></tr>\n");
        }
        fprintf(out, "</table>\n<p>");
        html_text(out, READING);
        fprintf(out, "</p>\n");
    }
    fprintf(out, "<p class=\"note\">Set aside as not significant: %" PRIu64 " events matched (%" PRIu64
            " of them across an epoch marker of another context), %" PRIu64 " isolated timing outliers, %" PRIu64
            " fields within tolerance. Rules: band the good run's %g%%..%g%% quantiles widened by the "
            "larger of %g%% of its median and %g us, repeat %u in one direction.</p>\n</body></html>\n",
            d->matched, d->boundary_shifts, d->isolated_timing, d->within_tolerance,
            d->rules.quantile_pct, 100 - d->rules.quantile_pct, d->rules.margin_pct, d->rules.margin_us,
            d->rules.repeat);
    return ferror(out) ? -1 : 0;
}
