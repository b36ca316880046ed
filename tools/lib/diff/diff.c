/* The two-run comparison engine (docs/diff.md): emb_diff_run takes the steps of
 * diff_internal.h in order, then ranks what they found. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "diff_internal.h"

static int report_error_v(struct emb_problems *ps, const char *file, long long offset,
                          const char *fmt, va_list ap)
{
    emb_vreport_in(ps, file, EMB_ERROR, offset, fmt, ap);
    return -1;
}

int emb_diff_report_error(struct emb_problems *ps, const char *file, long long offset,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_error_v(ps, file, offset, fmt, ap);
    va_end(ap);
    return -1;
}

int emb_diff_refuse(struct emb_diff_work *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_error_v(w->ps, w->ps->file, -1, fmt, ap);
    va_end(ap);
    return -1;
}

static bool rule_on(const struct emb_diff *d, enum emb_diff_rule rule, uint32_t ctx)
{
    bool on = d->rules.enabled[rule];
    for (size_t i = 0; ctx < d->nctx && i < d->rules.nswitches; i++)
        if (d->rules.switches[i].rule == rule && !strcmp(d->rules.switches[i].context, d->ctx[ctx].name))
            on = d->rules.switches[i].enabled;
    return on;
}

struct emb_diff_item *emb_diff_add_item(struct emb_diff_work *w, enum emb_diff_rule rule,
                                        int32_t epoch, uint32_t ctx)
{
    struct emb_diff *d = w->d;
    if (!rule_on(d, rule, ctx)) {
        d->switched_off++;
        return NULL;
    }
    struct emb_diff_item *items = emb_diff_grow(w, d->items, &w->item_cap, d->nitems + 1, sizeof *items);
    if (!items)
        return NULL;
    d->items = items;
    struct emb_diff_item *it = &d->items[d->nitems++];
    emb_diff_item_clear(it);
    it->rule = (uint8_t)rule;
    it->epoch = epoch;
    it->ctx = ctx;
    return it;
}

void *emb_diff_grow(struct emb_diff_work *w, void *items, size_t *cap, size_t need, size_t size)
{
    void *grown = emb_array_grow(items, cap, need, size);
    if (!grown)
        w->oom = true;
    return grown;
}

void emb_diff_item_clear(struct emb_diff_item *it)
{
    memset(it, 0, sizeof *it);
    it->a = it->b = it->a_prev = it->b_prev = it->a_near = it->b_near = -1;
    it->field = -1;
}

void emb_diff_set_offset(struct emb_diff *d, struct emb_diff_item *it)
{
    const struct emb_diff_ctx *c = &d->ctx[it->ctx];
    if (it->b >= 0)
        it->offset_ns = (int64_t)(c->ev[1][it->b].ns - d->epoch_ns[1][it->epoch]);
    else if (it->a >= 0)
        it->offset_ns = (int64_t)(c->ev[0][it->a].ns - d->epoch_ns[0][it->epoch]);
}

bool emb_diff_compared(const struct emb_diff *d, int32_t epoch)
{
    return epoch >= 0 && (size_t)epoch < d->epochs;
}

/* ---- ordering and grouping ---- */

static int cmp_item(const void *x, const void *y)
{
    const struct emb_diff_item *a = x, *b = y;
    int c = emb_diff_order_i64(a->epoch, b->epoch);
    if (!c)
        c = emb_diff_order_i64(a->offset_ns, b->offset_ns);
    if (!c)
        c = emb_diff_order_u64(a->ctx, b->ctx);
    return c ? c : emb_diff_order_u64(a->rule, b->rule);
}

static uint16_t item_id(const struct emb_diff *d, const struct emb_diff_item *it, bool prev)
{
    if (it->rule == EMB_DIFF_EPOCH_DURATION || it->rule == EMB_DIFF_DROPS)
        return prev ? 0 : it->rule == EMB_DIFF_EPOCH_DURATION ? d->anchor->id : 0;
    const struct emb_diff_ctx *c = &d->ctx[it->ctx];
    if (prev)
        return it->b_prev >= 0 ? emb_diff_event_id(&c->ev[1][it->b_prev]) : 0;
    return it->b >= 0 ? emb_diff_event_id(&c->ev[1][it->b]) : emb_diff_event_id(&c->ev[0][it->a]);
}

static int group_items(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    if (d->nitems)
        qsort(d->items, d->nitems, sizeof *d->items, cmp_item);
    struct emb_key_map m = {0};
    size_t cap = 0;
    for (size_t i = 0; i < d->nitems; i++) {
        struct emb_diff_item *it = &d->items[i];
        uint16_t id = item_id(d, it, false), prev = item_id(d, it, true);
        uint64_t key = ((uint64_t)it->rule << 56) | ((uint64_t)(it->ctx & 0xFFFFFFu) << 32) |
                       ((uint64_t)prev << 16) | id;
        if (it->rule == EMB_DIFF_DROPS)
            key ^= (uint64_t)it->side << 55;
        uint32_t g = emb_key_map_get(&m, key);
        if (g == UINT32_MAX) {
            struct emb_diff_group *groups = emb_array_grow(d->groups, &cap, d->ngroups + 1, sizeof *groups);
            if (groups)
                d->groups = groups;
            if (!groups || !emb_key_map_put(&m, key, (uint32_t)d->ngroups)) {
                emb_key_map_free(&m);
                w->oom = true;
                return -1;
            }
            g = (uint32_t)d->ngroups++;
            d->groups[g] = (struct emb_diff_group){.rule = it->rule, .ctx = it->ctx, .id = id,
                                                   .id_prev = prev, .first = i};
        }
        struct emb_diff_group *gr = &d->groups[g];
        gr->count += it->rule == EMB_DIFF_DROPS ? it->count : 1;
        gr->last_epoch = it->epoch;
        it->group = g;
        if (it->rule == EMB_DIFF_INTERVAL || it->rule == EMB_DIFF_EPOCH_DURATION) {
            double excess = it->value > it->hi ? it->value - it->hi : it->lo - it->value;
            if (excess > gr->worst)
                gr->worst = excess;
        }
    }
    emb_key_map_free(&m);
    return 0;
}

static bool same_configuration(const struct emb_capture_identity *a, const struct emb_capture_identity *b)
{
    return a->build_id_len == b->build_id_len && !memcmp(a->build_id, b->build_id, a->build_id_len) &&
           !strcmp(a->firmware, b->firmware) && !strcmp(a->config, b->config);
}

static void *copy_of(const void *items, size_t n, size_t size)
{
    void *copy = malloc(n * size);
    if (copy)
        memcpy(copy, items, n * size);
    return copy;
}

/* The comparison's own copy of the rules, so that the caller may free theirs. */
static int copy_rules(struct emb_diff *d, const struct emb_diff_rules *rules)
{
    d->rules = *rules;
    d->rules.policies = NULL;
    d->rules.npolicies = 0;
    d->rules.switches = NULL;
    d->rules.nswitches = 0;
    d->rules.pairs = NULL;
    d->rules.npairs = 0;
    if (rules->npairs && !(d->rules.pairs = copy_of(rules->pairs, rules->npairs, sizeof *rules->pairs)))
        return -1;
    d->rules.npairs = rules->npairs;
    if (rules->npolicies &&
        !(d->rules.policies = copy_of(rules->policies, rules->npolicies, sizeof *rules->policies)))
        return -1;
    d->rules.npolicies = rules->npolicies;
    if (rules->nswitches &&
        !(d->rules.switches = copy_of(rules->switches, rules->nswitches, sizeof *rules->switches)))
        return -1;
    d->rules.nswitches = rules->nswitches;
    return 0;
}

/* Two captures compare when they share a catalogue and differ in configuration (or are
 * said to be two runs of one: --same-build). */
static int check_identities(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    const struct emb_capture_identity *ia = emb_capture_identity(d->cap[0]);
    const struct emb_capture_identity *ib = emb_capture_identity(d->cap[1]);
    if (ia->catalog_checksum != ib->catalog_checksum)
        return emb_diff_refuse(w, "the captures use different catalogues: %s 0x%08" PRIx32 ", %s "
                                  "0x%08" PRIx32, d->name[0], ia->catalog_checksum, d->name[1],
                               ib->catalog_checksum);
    if (!d->rules.same_build && same_configuration(ia, ib)) {
        char hex[65];
        return emb_diff_refuse(w, "both captures claim the same configuration (build %s, firmware "
                                  "\"%s\", flags \"%s\"): a good and a bad run differ in build or "
                                  "flags. Two runs of one build are a valid comparison when said "
                                  "so: --same-build",
                               ia->build_id_len ? emb_capture_hex(ia->build_id, ia->build_id_len, hex)
                                                : "(none)",
                               ia->firmware, ia->config);
    }
    /* Under --same-build, one session id on both sides is one recording sealed twice (or
     * one capture given twice), not two runs: the report says so. */
    d->same_run = d->rules.same_build && ia->session_id && ia->session_id == ib->session_id;
    return 0;
}

/* The steps, in order (diff_internal.h). */
static int compare(struct emb_diff_work *w)
{
    struct emb_diff *d = w->d;
    emb_diff_find_anchor(w);
    if (check_identities(w) || emb_diff_build_contexts(w, 0) || emb_diff_build_contexts(w, 1))
        return -1;
    if (emb_diff_align(w) || emb_diff_assign_epochs(w))
        return -1;
    w->closed_ctx[0] = w->closed_ctx[1] = -1;
    emb_diff_find_losses(w, 0);
    emb_diff_find_losses(w, 1);
    for (uint32_t ci = 0; ci < d->nctx; ci++)
        if (emb_diff_match_context(w, ci))
            return -1;
    free(w->ops);
    w->ops = NULL;
    emb_diff_window_closed_early(w);
    if (emb_diff_timing(w) || group_items(w))
        return -1;
    return w->oom ? -1 : 0;
}

/* What the steps kept for one another. */
static void work_free(struct emb_diff_work *w)
{
    for (int s = 0; s < 2; s++) {
        free(w->tid_map[s]);
        free(w->marker_pos[s]);
        free(w->loss[s]);
        free(w->ring_events[s]);
    }
    free(w->threads);
    free(w->ops);
    free(w->event_rules);
    emb_key_map_free(&w->interval_keys);
}

struct emb_diff *emb_diff_run(const struct emb_capture *good, const struct emb_capture *bad,
                              const struct emb_diff_rules *rules, struct emb_problems *ps)
{
    struct emb_diff *d = calloc(1, sizeof *d);
    if (!d) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        return NULL;
    }
    struct emb_diff_work w = {.d = d, .ps = ps};
    d->cap[0] = good;
    d->cap[1] = bad;
    d->trace[0] = emb_capture_trace(good);
    d->trace[1] = emb_capture_trace(bad);
    d->name[0] = emb_capture_name(good);
    d->name[1] = emb_capture_name(bad);
    for (int s = 0; s < 2; s++) {
        size_t np;
        const struct emb_trace_packet *pk = emb_trace_packets(d->trace[s], &np);
        d->bytes[s] = np ? pk[0].data : NULL;
    }
    w.cat = emb_trace_catalog(d->trace[0]);
    w.irq_enter = emb_catalog_find(w.cat, "irq_enter");
    int rc = -1;
    if (copy_rules(d, rules) != 0)
        w.oom = true;
    else
        rc = compare(&w);
    if (w.oom)
        emb_report(ps, EMB_ERROR, -1, "out of memory");
    work_free(&w);
    if (rc) {
        emb_diff_free(d);
        return NULL;
    }
    return d;
}

void emb_diff_free(struct emb_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nctx; i++)
        for (int s = 0; s < 2; s++) {
            free(d->ctx[i].ev[s]);
            free(d->ctx[i].epoch_start[s]);
            free(d->ctx[i].marker_value[s]);
        }
    for (size_t i = 0; i < d->nctx; i++)
        free(d->ctx[i].interval_class);
    free(d->ctx);
    free(d->items);
    free(d->groups);
    free(d->gaps);
    free(d->epoch_value);
    free(d->epoch_ns[0]);
    free(d->epoch_ns[1]);
    free(d->rules.policies);
    free(d->rules.switches);
    free(d->rules.pairs);
    free(d);
}
