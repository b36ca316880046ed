/* The comparison's report for a person (docs/diff.md): the runs, the alignment, whether
 * the comparison is complete, the first significant difference with both runs'
 * neighbourhoods, the ranked summary, and what was set aside. Its vocabulary is
 * docs/diff.md's: what was observed, what is correlated with it, what the data are
 * consistent with; never a claim about mechanism, which needs an intervention. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "text.h"

static void neighbourhood_text(const struct emb_diff *d, const struct emb_diff_item *it, int s,
                               FILE *out)
{
    const struct emb_diff_ctx *c = it->ctx < d->nctx ? &d->ctx[it->ctx] : NULL;
    int64_t mid = emb_diff_centre(it, s);
    char ep[64], t[32], ev[256];
    if (!c || !c->present[s] || mid < 0) {
        fprintf(out, "  %s run: no events of %s here\n", s ? "bad" : "good", c ? c->name : "this context");
        return;
    }
    int64_t n = (int64_t)c->n[s], lines = d->rules.context_lines;
    int64_t from = mid - lines < 0 ? 0 : mid - lines, to = mid + lines + 1 > n ? n : mid + lines + 1;
    fprintf(out, "  %s run (%s), %s, epoch %s:\n", s ? "bad" : "good", emb_diff_label(d, s), c->name,
            emb_diff_epoch_text(d, it->epoch, ep, sizeof ep));
    const char *red = emb_color_code(out, EMB_C_RED), *rst = emb_color_code(out, EMB_C_RESET);
    for (int64_t i = from; i < to; i++) {
        const struct emb_diff_event *e = &c->ev[s][i];
        bool self = i == (s ? it->b : it->a) || (s ? i == it->b_prev : i == it->a_prev);
        double off = (double)e->ns - (double)d->epoch_ns[s][emb_diff_event_epoch(d, e)];
        char mark = i == (s ? it->b : it->a) ? '>' : e->peer < 0 ? (s ? '+' : '-') : ' ';
        fprintf(out, "    %c e%-4d %12s  %s%s%s\n", mark, (int)e->epoch,
                emb_diff_signed_time_text(off, t, sizeof t), self ? red : "",
                emb_diff_event_words(d, s, e, ev, sizeof ev), self ? rst : "");
    }
}

static void identity_line(const struct emb_diff *d, int s, FILE *out)
{
    const struct emb_capture_identity *id = emb_capture_identity(d->cap[s]);
    char hex[65];
    fprintf(out, "  %-4s %-12s firmware \"%s\" flags \"%s\" build %.12s session 0x%016" PRIx64 "%s%s\n",
            s ? "bad" : "good", emb_diff_label(d, s), id->firmware, id->config,
            id->build_id_len ? emb_capture_hex(id->build_id, id->build_id_len, hex) : "(none)",
            id->session_id, id->revision[0] ? " revision " : "", id->revision);
}

/* The runs compared, and what the comparison is aligned on. */
static void text_runs(const struct emb_diff *d, FILE *out)
{
    const char *b = emb_color_code(out, EMB_C_BOLD), *r = emb_color_code(out, EMB_C_RESET);
    const char *yel = emb_color_code(out, EMB_C_YELLOW);
    char e0[64], e1[64];
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
}

static void text_completeness(const struct emb_diff *d, FILE *out)
{
    const char *r = emb_color_code(out, EMB_C_RESET), *yel = emb_color_code(out, EMB_C_YELLOW);
    char e0[64];
    if (d->incomplete) {
        fprintf(out, "%sINCOMPLETE%s: the comparison is missing records in:\n", yel, r);
        for (size_t i = 0; i < d->ngaps; i++) {
            const struct emb_diff_gap *g = &d->gaps[i];
            fprintf(out, "  %s run, %s, epoch %s: %" PRIu64 " %s\n", g->side ? "bad" : "good", g->where,
                    g->epoch >= 0 ? emb_diff_epoch_text(d, g->epoch, e0, sizeof e0) : "unknown",
                    g->count, g->what);
        }
        return;
    }
    fprintf(out, "complete: no record was dropped or lost in the compared epochs");
    if (d->dropped_after[0] || d->dropped_after[1])
        fprintf(out, " (the windows closed with %" PRIu64 " and %" PRIu64 " events dropped after them)",
                d->dropped_after[0], d->dropped_after[1]);
    fputc('\n', out);
}

static void text_first(const struct emb_diff *d, const struct emb_diff_item *it, FILE *out)
{
    const char *b = emb_color_code(out, EMB_C_BOLD), *r = emb_color_code(out, EMB_C_RESET);
    const char *red = emb_color_code(out, EMB_C_RED);
    char e0[64], e1[64], buf[1024];
    fprintf(out, "\n%sFIRST SIGNIFICANT DIFFERENCE%s (rule %s%s%s)\n", b, r, red,
            emb_diff_rule_name(it->rule), r);
    fprintf(out, "  epoch %s, context %s, %s into the epoch\n",
            emb_diff_epoch_text(d, it->epoch, e0, sizeof e0), emb_diff_ctx_name(d, it->ctx),
            emb_diff_signed_time_text((double)it->offset_ns, e1, sizeof e1));
    fprintf(out, "  %s\n", emb_diff_item_text(d, it, buf, sizeof buf));
    if (it->rule != EMB_DIFF_DROPS) {
        neighbourhood_text(d, it, 0, out);
        neighbourhood_text(d, it, 1, out);
        fprintf(out, "  (> the event; - good only; + bad only; times from each run's epoch marker)\n");
    }
}

static void text_summary(const struct emb_diff *d, FILE *out)
{
    const char *b = emb_color_code(out, EMB_C_BOLD), *r = emb_color_code(out, EMB_C_RESET);
    char e0[64], ev[256];
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
                g->count, emb_diff_ctx_name(d, g->ctx), emb_diff_group_event_text(d, g, ev, sizeof ev));
    }
    if (shown < d->ngroups)
        fprintf(out, "  ... %zu more groups (--json lists them all)\n", d->ngroups - shown);
}

/* The runs' priority inheritance chains, when either has one: a chain only one run
 * formed, or formed more often, says where their waits for mutexes parted. */
static void text_pi_chains(const struct emb_diff *d, FILE *out)
{
    struct emb_diff_pi_chain *c;
    size_t n;
    if (emb_diff_pi_chains(d, &c, &n) != 0 || n == 0) {
        free(c);
        return;
    }
    const char *b = emb_color_code(out, EMB_C_BOLD), *r = emb_color_code(out, EMB_C_RESET);
    fprintf(out, "\n%sPRIORITY INHERITANCE CHAINS%s (waiter -> mutex -> holder ..., each run's "
            "as emb trace --summary finds them; waits that began with each standing)\n", b, r);
    fprintf(out, "  %-5s  %8s  %8s  %s\n", "links", "good", "bad", "chain");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-5zu  %8" PRIu64 "  %8" PRIu64 "  %s%s\n", c[i].links, c[i].waits[0],
                c[i].waits[1], c[i].text,
                !c[i].waits[0] ? "  (bad run only)" : !c[i].waits[1] ? "  (good run only)" : "");
    free(c);
}

/* What was set aside as not significant, and the rules that decided it. */
static void text_set_aside(const struct emb_diff *d, FILE *out)
{
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
}

int emb_diff_write_text(const struct emb_diff *d, FILE *out)
{
    text_runs(d, out);
    text_completeness(d, out);
    const struct emb_diff_item *it = emb_diff_first_item(d);
    if (!it) {
        fprintf(out, "\n%sNo significant difference observed%s under the rules below.\n",
                emb_color_code(out, EMB_C_GREEN), emb_color_code(out, EMB_C_RESET));
    } else {
        text_first(d, it, out);
        text_summary(d, out);
    }
    text_pi_chains(d, out);
    text_set_aside(d, out);
    if (it)
        fprintf(out, "\n%s\n", emb_diff_reading);
    return ferror(out) ? -1 : 0;
}
