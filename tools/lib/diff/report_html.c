/* The comparison's report as a self-contained HTML page: the runs, the first difference
 * with both runs' neighbourhoods, both runs' timelines around it (SVG), and the ranked
 * summary (docs/diff.md). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <string.h>

#include "diff_internal.h"
#include "html.h"

#define SVG_MAX_TICKS 4000u

/* Text for the page (base/html.h). */
static void html_text(FILE *out, const char *s)
{
    emb_html_text(out, s);
}

static bool is_flagged(const struct emb_diff *d, uint32_t ci, int s, int64_t i)
{
    const struct emb_diff_event *e = &d->ctx[ci].ev[s][i];
    return e->peer < 0 && e->epoch >= 0 && e->epoch < (int32_t)d->epochs;
}

/* The timelines' span and scale: epochs k0..k1 around epoch fe, time 0 at fe's marker. */
struct svg_frame {
    int32_t fe, k0, k1;
    double t0, t1, scale;
    int height;
};

enum { SVG_LEFT = 150, SVG_WIDTH = 1000, SVG_LANE = 18, SVG_GAP = 14, SVG_TOP = 30 };

static struct svg_frame svg_frame(const struct emb_diff *d, const struct emb_diff_item *it)
{
    struct svg_frame f;
    f.fe = it ? (it->epoch < 0 ? 0 : it->epoch) : 0;
    if ((size_t)f.fe >= d->epochs)
        f.fe = (int32_t)d->epochs - 1;
    f.k0 = f.fe > 0 ? f.fe - 1 : 0;
    f.k1 = (size_t)f.fe + 2 <= d->epochs ? f.fe + 2 : (int32_t)d->epochs;
    f.t0 = 0;
    f.t1 = 0;
    for (int s = 0; s < 2; s++) {
        double a = (double)d->epoch_ns[s][f.k0] - (double)d->epoch_ns[s][f.fe];
        double b = (double)d->epoch_ns[s][f.k1] - (double)d->epoch_ns[s][f.fe];
        f.t0 = a < f.t0 ? a : f.t0;
        f.t1 = b > f.t1 ? b : f.t1;
    }
    if (f.t1 <= f.t0)
        f.t1 = f.t0 + 1;
    f.height = SVG_TOP + (int)d->nctx * (2 * SVG_LANE + SVG_GAP) + 30;
    f.scale = SVG_WIDTH / (f.t1 - f.t0);
    return f;
}

/* The x of a time of run s, measured in that run. */
static double svg_x(const struct emb_diff *d, const struct svg_frame *f, int s, uint64_t ns)
{
    return SVG_LEFT + ((double)ns - (double)d->epoch_ns[s][f->fe] - f->t0) * f->scale;
}

static void svg_axis(const struct emb_diff *d, const struct svg_frame *f, FILE *out)
{
    for (int i = 0; i <= 10; i++) {
        double t = f->t0 + (f->t1 - f->t0) * i / 10.0;
        double x = SVG_LEFT + (t - f->t0) * f->scale;
        char us[32];
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eeeeee\"/>\n", x,
                SVG_TOP - 6, x, f->height - 24);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" "
                "fill=\"#666\">%s</text>\n", x, f->height - 10, emb_diff_signed_time_text(t, us, sizeof us));
    }
    char ep[64];
    fprintf(out, "<text x=\"%d\" y=\"16\" font-size=\"12\" fill=\"#333\">time from the marker of epoch "
            "%s in each run</text>\n", SVG_LEFT, emb_diff_epoch_text(d, f->fe, ep, sizeof ep));
}

/* One run's lane of context ci: its epoch markers and its events. */
static void svg_lane(const struct emb_diff *d, const struct svg_frame *f, size_t ci, int s, FILE *out)
{
    const struct emb_diff_ctx *c = &d->ctx[ci];
    int y = SVG_TOP + (int)ci * (2 * SVG_LANE + SVG_GAP) + s * SVG_LANE;
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", SVG_LEFT, y,
            SVG_WIDTH, SVG_LANE - 2, s ? "#fff4e8" : "#eaf2fb");
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#777\" text-anchor=\"end\">%s"
            "</text>\n", SVG_LEFT - 4, y + SVG_LANE - 6, s ? "bad" : "good");
    for (int32_t k = f->k0; k <= f->k1; k++) {
        double x = svg_x(d, f, s, d->epoch_ns[s][k]);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\" "
                "stroke-dasharray=\"3,2\"/>\n", x, y, x, y + SVG_LANE - 2);
    }
    if (!c->present[s])
        return;
    size_t from = c->epoch_start[s][f->k0], to = c->epoch_start[s][f->k1], ticks = 0;
    for (size_t i = from; i < to && ticks < SVG_MAX_TICKS; i++, ticks++) {
        double x = svg_x(d, f, s, c->ev[s][i].ns);
        bool flagged = is_flagged(d, (uint32_t)ci, s, (int64_t)i);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
                "stroke-width=\"%s\"/>\n", x, y + 2, x, y + SVG_LANE - 4,
                flagged ? "#d62728" : s ? "#e07b00" : "#1f66b3", flagged ? "2" : "1");
    }
}

/* The first difference, ringed in both runs. */
static void svg_ring(const struct emb_diff *d, const struct svg_frame *f,
                     const struct emb_diff_item *it, FILE *out)
{
    const struct emb_diff_ctx *c = &d->ctx[it->ctx];
    for (int s = 0; s < 2; s++) {
        int64_t i = emb_diff_centre(it, s);
        if (i < 0 || !c->present[s] || (size_t)i >= c->n[s])
            continue;
        double x = svg_x(d, f, s, c->ev[s][i].ns);
        int y = SVG_TOP + (int)it->ctx * (2 * SVG_LANE + SVG_GAP) + s * SVG_LANE + SVG_LANE / 2 - 1;
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%d\" r=\"8\" fill=\"none\" stroke=\"#d62728\" "
                "stroke-width=\"2.5\"><title>first difference</title></circle>\n", x, y);
        if (s == 1 && it->b_prev >= 0) {
            double xp = svg_x(d, f, 1, c->ev[1][it->b_prev].ns);
            fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d62728\" "
                    "stroke-width=\"3\"/>\n", xp, y, x, y);
        }
    }
}

/* Both runs' timelines, per context, aligned on the epoch marker of the first difference
 * (time 0 in each run), from one epoch before it to one after. */
static void html_svg(const struct emb_diff *d, const struct emb_diff_item *it, FILE *out)
{
    struct svg_frame f = svg_frame(d, it);
    int w = SVG_LEFT + SVG_WIDTH + 20;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"timelines of both runs\">\n",
            w, f.height, w, f.height);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, f.height);
    svg_axis(d, &f, out);
    for (size_t ci = 0; ci < d->nctx; ci++) {
        int y0 = SVG_TOP + (int)ci * (2 * SVG_LANE + SVG_GAP);
        fprintf(out, "<text x=\"4\" y=\"%d\" font-size=\"12\" fill=\"#222\">", y0 + SVG_LANE + 4);
        html_text(out, d->ctx[ci].name);
        fprintf(out, "</text>\n");
        for (int s = 0; s < 2; s++)
            svg_lane(d, &f, ci, s, out);
    }
    if (it && it->ctx < d->nctx)
        svg_ring(d, &f, it, out);
    fprintf(out, "</svg>\n");
}

static void html_neighbourhood(const struct emb_diff *d, const struct emb_diff_item *it, int s,
                               FILE *out)
{
    const struct emb_diff_ctx *c = it->ctx < d->nctx ? &d->ctx[it->ctx] : NULL;
    int64_t mid = emb_diff_centre(it, s);
    char t[32], ev[256];
    fprintf(out, "<div class=\"col\"><h3>%s run</h3><table class=\"ev\">\n", s ? "bad" : "good");
    if (c && c->present[s] && mid >= 0) {
        int64_t n = (int64_t)c->n[s], lines = d->rules.context_lines;
        for (int64_t i = mid - lines < 0 ? 0 : mid - lines; i <= mid + lines && i < n; i++) {
            const struct emb_diff_event *e = &c->ev[s][i];
            double off = (double)e->ns - (double)d->epoch_ns[s][emb_diff_event_epoch(d, e)];
            bool self = i == (s ? it->b : it->a);
            fprintf(out, "<tr class=\"%s\"><td>e%d</td><td>%s</td><td>", self ? "hit" : e->peer < 0 ? "only" : "",
                    (int)e->epoch, emb_diff_signed_time_text(off, t, sizeof t));
            html_text(out, emb_diff_event_words(d, s, e, ev, sizeof ev));
            fprintf(out, "</td></tr>\n");
        }
    } else {
        fprintf(out, "<tr><td>no events of this context here</td></tr>\n");
    }
    fprintf(out, "</table></div>\n");
}

static void html_head(const struct emb_diff *d, FILE *out)
{
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
}

/* The heading, the runs' identities, and the alignment. */
static void html_runs(const struct emb_diff *d, FILE *out)
{
    char e0[64], e1[64], hex[65];
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
}

static void html_gaps(const struct emb_diff *d, FILE *out)
{
    char e0[64];
    if (!d->incomplete)
        return;
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

static void html_first(const struct emb_diff *d, const struct emb_diff_item *it, FILE *out)
{
    char buf[1024], e0[64], e1[64];
    if (!it) {
        fprintf(out, "<div class=\"ok\">No significant difference observed under the rules.</div>\n");
        return;
    }
    fprintf(out, "<h2>First significant difference</h2>\n<div class=\"first\" id=\"first\">"
            "<b>rule %s</b>: epoch %s, context <b>", emb_diff_rule_name(it->rule),
            emb_diff_epoch_text(d, it->epoch, e0, sizeof e0));
    html_text(out, emb_diff_ctx_name(d, it->ctx));
    fprintf(out, "</b>, %s into the epoch<br>\n",
            emb_diff_signed_time_text((double)it->offset_ns, e1, sizeof e1));
    html_text(out, emb_diff_item_text(d, it, buf, sizeof buf));
    fprintf(out, "</div>\n");
    html_neighbourhood(d, it, 0, out);
    html_neighbourhood(d, it, 1, out);
}

static void html_summary(const struct emb_diff *d, FILE *out)
{
    char e0[64], ev[256];
    fprintf(out, "<h2>Ranked summary</h2>\n<p class=\"note\">%zu significant differences in %zu "
            "groups, ranked by first occurrence.</p>\n<table><tr><th>#</th><th>rule</th>"
            "<th>first epoch</th><th>last</th><th>count</th><th>context</th><th>event</th></tr>\n",
            d->nitems, d->ngroups);
    for (size_t i = 0; i < d->ngroups && i < 200; i++) {
        const struct emb_diff_group *g = &d->groups[i];
        fprintf(out, "<tr><td>%zu</td><td>%s</td><td>%s</td><td>%d</td><td>%zu</td><td>", i + 1,
                emb_diff_rule_name(g->rule), emb_diff_epoch_text(d, d->items[g->first].epoch, e0, sizeof e0),
                (int)g->last_epoch, g->count);
        html_text(out, emb_diff_ctx_name(d, g->ctx));
        fprintf(out, "</td><td>");
        html_text(out, emb_diff_group_event_text(d, g, ev, sizeof ev));
        fprintf(out, "</td></tr>\n");
    }
    fprintf(out, "</table>\n<p>");
    html_text(out, emb_diff_reading);
    fprintf(out, "</p>\n");
}

int emb_diff_write_html(const struct emb_diff *d, FILE *out)
{
    const struct emb_diff_item *it = emb_diff_first_item(d);
    html_head(d, out);
    html_runs(d, out);
    html_gaps(d, out);
    html_first(d, it, out);
    fprintf(out, "<h2>Timelines</h2>\n<p class=\"note\">Each context: the good run (blue) above the "
            "bad run (orange); red marks events without a counterpart, the ring the first "
            "difference; dashed lines are epoch markers.</p>\n");
    html_svg(d, it, out);
    if (it)
        html_summary(d, out);
    fprintf(out, "<p class=\"note\">Set aside as not significant: %" PRIu64 " events matched (%" PRIu64
            " of them across an epoch marker of another context), %" PRIu64 " isolated timing outliers, %" PRIu64
            " fields within tolerance. Rules: band the good run's %g%%..%g%% quantiles widened by the "
            "larger of %g%% of its median and %g us, repeat %u in one direction.</p>\n</body></html>\n",
            d->matched, d->boundary_shifts, d->isolated_timing, d->within_tolerance,
            d->rules.quantile_pct, 100 - d->rules.quantile_pct, d->rules.margin_pct, d->rules.margin_us,
            d->rules.repeat);
    return ferror(out) ? -1 : 0;
}
