/* The comparison's report for a program: one JSON document with the runs, the alignment,
 * the gaps, the first difference and its neighbourhoods, the ranked summary, every
 * difference (up to JSON_MAX_ITEMS), what was set aside and the rules (docs/diff.md). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <string.h>

#include <stdlib.h>

#include "diff_internal.h"
#include "json.h"

#define JSON_MAX_ITEMS 1000u

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
    emb_json_int(j, "offset_ns",
                 (long long)e->ns - (long long)d->epoch_ns[s][emb_diff_event_epoch(d, e)]);
    emb_json_uint(j, "file_offset", emb_diff_event_file_offset(d, s, e));
    emb_json_string(j, "event", emb_diff_event_words(d, s, e, ev, sizeof ev));
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
    emb_json_string(j, "context", emb_diff_ctx_name(d, it->ctx));
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
        emb_json_string(j, "field", emb_diff_event_def(d, &c->ev[0][it->a])->fields[it->field].name);
    if (it->rule == EMB_DIFF_DROPS) {
        emb_json_string(j, "run", it->side ? "bad" : "good");
        emb_json_uint(j, "count", it->count);
    }
    json_event(j, "good", d, 0, c, it->a);
    json_event(j, "bad", d, 1, c, it->b);
    if (neighbourhood && c) {
        for (int s = 0; s < 2; s++) {
            emb_json_begin_array(j, s ? "bad_neighbourhood" : "good_neighbourhood");
            int64_t mid = emb_diff_centre(it, s), lines = d->rules.context_lines;
            if (mid >= 0 && c->present[s])
                for (int64_t i = mid - lines < 0 ? 0 : mid - lines;
                     i <= mid + lines && i < (int64_t)c->n[s]; i++)
                    json_event(j, NULL, d, s, c, i);
            emb_json_end_array(j);
        }
    }
    emb_json_end_object(j);
}


static void json_runs(struct emb_json *j, const struct emb_diff *d)
{
    char hex[65];
    for (int s = 0; s < 2; s++) {
        const struct emb_capture_identity *id = emb_capture_identity(d->cap[s]);
        emb_json_begin_object(j, s ? "bad" : "good");
        emb_json_string(j, "file", d->name[s]);
        emb_json_string(j, "label", id->label);
        emb_json_string(j, "firmware", id->firmware);
        emb_json_string(j, "flags", id->config);
        emb_json_string(j, "build_id", emb_capture_hex(id->build_id, id->build_id_len, hex));
        emb_json_string(j, "revision", id->revision);
        snprintf(hex, sizeof hex, "0x%016" PRIx64, id->session_id);
        emb_json_string(j, "session", hex);
        emb_json_end_object(j);
    }
    emb_json_bool(j, "same_build", d->rules.same_build);
    emb_json_bool(j, "same_run", d->same_run);
}

static void json_alignment(struct emb_json *j, const struct emb_diff *d)
{
    emb_json_begin_object(j, "alignment");
    emb_json_string(j, "anchor_event", d->anchor->name);
    emb_json_string(j, "anchor_field", d->anchor_field ? d->anchor_field->name : NULL);
    emb_json_bool(j, "armed_frame", d->anchor_armed);
    emb_json_uint(j, "start", d->epoch_value[0]);
    emb_json_uint(j, "epochs", d->epochs);
    emb_json_begin_array(j, "contexts");
    for (size_t i = 0; i < d->nctx; i++)
        emb_json_string(j, NULL, d->ctx[i].name);
    emb_json_end_array(j);
    emb_json_end_object(j);
}

static void json_gaps(struct emb_json *j, const struct emb_diff *d)
{
    emb_json_bool(j, "complete", !d->incomplete);
    emb_json_begin_array(j, "incomplete");
    for (size_t i = 0; i < d->ngaps; i++) {
        const struct emb_diff_gap *g = &d->gaps[i];
        emb_json_begin_object(j, NULL);
        emb_json_string(j, "run", g->side ? "bad" : "good");
        emb_json_string(j, "where", g->where);
        emb_json_int(j, "epoch", g->epoch);
        emb_json_uint(j, "count", g->count);
        emb_json_string(j, "what", g->what);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

/* The first difference with its neighbourhoods, the ranked groups, then every difference. */
static void json_differences(struct emb_json *j, const struct emb_diff *d)
{
    char ev[256];
    emb_json_uint(j, "significant", d->nitems);
    emb_json_begin_array(j, "first");
    if (emb_diff_first_item(d))
        json_item(j, d, emb_diff_first_item(d), true);
    emb_json_end_array(j);
    emb_json_begin_array(j, "summary");
    for (size_t i = 0; i < d->ngroups; i++) {
        const struct emb_diff_group *g = &d->groups[i];
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "rank", i + 1);
        emb_json_string(j, "rule", emb_diff_rule_name(g->rule));
        emb_json_string(j, "context", emb_diff_ctx_name(d, g->ctx));
        emb_json_string(j, "event", emb_diff_group_event_text(d, g, ev, sizeof ev));
        emb_json_int(j, "first_epoch", d->items[g->first].epoch);
        emb_json_int(j, "last_epoch", g->last_epoch);
        emb_json_uint(j, "count", g->count);
        if (g->rule == EMB_DIFF_INTERVAL || g->rule == EMB_DIFF_EPOCH_DURATION)
            emb_json_double(j, "worst_excess_ns", g->worst);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_json_begin_array(j, "differences");
    for (size_t i = 0; i < d->nitems && i < JSON_MAX_ITEMS; i++)
        json_item(j, d, &d->items[i], false);
    emb_json_end_array(j);
    emb_json_bool(j, "differences_truncated", d->nitems > JSON_MAX_ITEMS);
}

static void json_set_aside(struct emb_json *j, const struct emb_diff *d)
{
    emb_json_begin_object(j, "set_aside");
    emb_json_uint(j, "matched", d->matched);
    emb_json_uint(j, "matched_across_epochs", d->boundary_shifts);
    emb_json_uint(j, "leading_edge", d->edge);
    emb_json_uint(j, "after_window_closed", d->after_close);
    emb_json_uint(j, "isolated_timing_outliers", d->isolated_timing);
    emb_json_uint(j, "within_tolerance", d->within_tolerance);
    emb_json_uint(j, "outside_good", d->outside[0]);
    emb_json_uint(j, "outside_bad", d->outside[1]);
    emb_json_uint(j, "dropped_after_good", d->dropped_after[0]);
    emb_json_uint(j, "dropped_after_bad", d->dropped_after[1]);
    emb_json_uint(j, "unaligned_epochs", d->diff_fallbacks);
    emb_json_end_object(j);
    emb_json_begin_object(j, "rules");
    for (int i = 0; i < EMB_DIFF_NRULES; i++)
        emb_json_bool(j, emb_diff_rule_name((enum emb_diff_rule)i), d->rules.enabled[i]);
    emb_json_double(j, "margin_pct", d->rules.margin_pct);
    emb_json_double(j, "margin_us", d->rules.margin_us);
    emb_json_double(j, "quantile_pct", d->rules.quantile_pct);
    emb_json_uint(j, "repeat", d->rules.repeat);
    emb_json_uint(j, "policies", d->rules.npolicies);
    emb_json_end_object(j);
}

/* "pi_chains": [{"text", "links", "good", "bad"}]: each run's waits with the chain standing. */
static void json_pi_chains(struct emb_json *j, const struct emb_diff *d)
{
    struct emb_diff_pi_chain *c;
    size_t n;
    emb_json_begin_array(j, "pi_chains");
    if (emb_diff_pi_chains(d, &c, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            emb_json_begin_object(j, NULL);
            emb_json_string(j, "text", c[i].text);
            emb_json_uint(j, "links", c[i].links);
            emb_json_uint(j, "good", c[i].waits[0]);
            emb_json_uint(j, "bad", c[i].waits[1]);
            emb_json_end_object(j);
        }
        free(c);
    }
    emb_json_end_array(j);
}

int emb_diff_write_json(const struct emb_diff *d, FILE *out)
{
    struct emb_json j;
    emb_json_init(&j, out, true);
    j.flat_depth = 3;
    emb_json_begin_object(&j, NULL);
    json_runs(&j, d);
    json_alignment(&j, d);
    json_gaps(&j, d);
    json_differences(&j, d);
    json_set_aside(&j, d);
    json_pi_chains(&j, d);
    emb_json_end_object(&j);
    emb_json_end(&j);
    return ferror(out) ? -1 : 0;
}
