/* Each significance rule of emb diff (docs/diff.md) on a pair of captures recorded with
 * the real library on the test port: a good run, and a bad run that differs from it in
 * one seeded way, both with scheduling noise (jitter, interrupts and a free-running
 * context crossing frame markers). Asserts what is reported first, and what is not. */
#define _GNU_SOURCE

#include "recorder.h"

#include "diff.h"
#include "harness.h"

struct wl {
    uint8_t seed;
    const char *config;
    uint32_t arm;        /* window armed at this frame; UINT32_MAX: streaming */
    int same_swap;       /* frame where main records its two words in the other order */
    int cross_swap;      /* frame where the interrupt comes after main's second word */
    int missing;         /* frame where the link sends one packet fewer */
    int extra;           /* frame where main records one more event */
    int arg;             /* frame where the link's byte count differs (by arg_by) */
    uint32_t arg_by;
    int stall;           /* from this frame on, 60 us between link packets */
    int stall_once;      /* only this frame */
    int stretch;         /* from this frame on, frames last 1.5 ms */
    int burst;           /* streaming: a burst the consumer does not keep up with */
};

#define FRAMES 30
#define US 1000ull

static uint32_t lcg;
static uint64_t jitter(uint64_t range_ns)
{
    lcg = lcg * 1103515245u + 12345u;
    return (lcg >> 8) % range_ns;
}

static const char *dump_path; /* when set, run() also writes its stream there */
static bool streaming;        /* decode keeping no record, as emb diff does */

static struct emb_capture *run(const struct wl *w, const char *label, uint8_t **bytes)
{
    static const char *const names[] = {"main", "link", "audio"};
    uint32_t packets[3] = {0, w->burst >= 0 ? 4u : 0u, 0};
    struct rec r;
    rec_begin(&r, 3, names, packets, w->arm, w->seed);
    lcg = w->seed * 7919u;
    /* audio's phase differs a little between runs: some of its events fall on either side
     * of a frame marker (a swap with another context's event) */
    uint64_t T = 0, next_audio = 990 * US + (uint64_t)(w->seed - 1) * 20 * US;
    uint32_t audio_n = 0;
    for (int f = 0; f < FRAMES; f++) {
        uint64_t period = w->stretch >= 0 && f >= w->stretch ? 1500 * US : 1000 * US;
        uint64_t j = jitter(20 * US);
        rec_frame(&r, T, (uint32_t)f);
        uint16_t first = 1, second = 2;
        if (f == w->same_swap)
            first = 2, second = 1;
        rec_at(&r, 0, T + 100 * US + j);
        EMB_TRACE_user_event(first, (uint32_t)f, first);
        uint64_t irq_at = f == w->cross_swap ? T + 250 * US : T + 150 * US + j;
        if (irq_at < T + 200 * US + j) {
            rec_isr_enter(&r, 0, irq_at, 7);
            EMB_TRACE_tick((uint32_t)f * 4u + w->seed); /* compare: ignore in the catalogue */
            rec_isr_exit(&r, 0, irq_at + 2 * US, 7);
        }
        rec_at(&r, 0, T + 200 * US + j);
        EMB_TRACE_user_event(second, (uint32_t)f, second);
        if (irq_at >= T + 200 * US + j) {
            rec_isr_enter(&r, 0, irq_at, 7);
            EMB_TRACE_tick((uint32_t)f * 4u + w->seed);
            rec_isr_exit(&r, 0, irq_at + 2 * US, 7);
        }
        if (f == w->extra) {
            rec_at(&r, 0, T + 260 * US);
            EMB_TRACE_idle_enter();
        }
        rec_at(&r, 0, T + 300 * US + j);
        EMB_TRACE_frame_end((uint32_t)f);
        /* the link: a lock, packets, an unlock */
        uint64_t gap = (w->stall >= 0 && f >= w->stall) || f == w->stall_once ? 60 * US : 2 * US;
        uint64_t t = T + 400 * US + j;
        rec_at(&r, 1, t);
        EMB_TRACE_mutex_lock(0x100, false);
        int packets_sent = f == w->missing ? 2 : 3;
        for (int p = 0; p < packets_sent; p++) {
            t += gap;
            rec_at(&r, 1, t);
            EMB_TRACE_user_event(3, (uint32_t)f, f == w->arg ? 16384u + w->arg_by : 16384u);
        }
        if (f == w->burst)
            for (int p = 0; p < 300; p++) {
                rec_at(&r, 1, t + 1000 + (uint64_t)p);
                EMB_TRACE_user_event(9, (uint32_t)f, (uint32_t)p);
            }
        rec_at(&r, 1, t + 5 * US);
        EMB_TRACE_mutex_unlock(0x100, 0xFFFF);
        /* audio: every 1.7 ms, not in step with the frames */
        while (next_audio < T + period) {
            rec_at(&r, 2, next_audio - 5 * US + jitter(10 * US));
            EMB_TRACE_user_event(4, audio_n++, 256);
            next_audio += 1700 * US;
        }
        if (r.mode == EMB_TRACE_MODE_STREAMING)
            rec_consume(&r);
        T += period;
    }
    size_t slen, clen;
    uint8_t *stream = rec_stream(&r, "fw 1.0", w->config, 0x5EED0000u + w->seed, &slen);
    if (dump_path) {
        FILE *f = fopen(dump_path, "wb");
        if (!f || fwrite(stream, 1, slen, f) != slen || fclose(f) != 0)
            abort();
    }
    *bytes = rec_seal(stream, slen, label, NULL, 0, &clen);
    free(stream);
    struct emb_capture_options o = {.catalog = emb_catalog_builtin(), .name = label,
                                    .stream = streaming};
    struct emb_capture *c = emb_capture_decode(*bytes, clen, &o);
    long long off;
    const char *msg;
    if (emb_capture_failed(c, &off, &msg)) {
        fprintf(stderr, "capture refused at %lld: %s\n", off, msg);
        abort();
    }
    return c;
}

static struct wl base(uint8_t seed, const char *config)
{
    return (struct wl){.seed = seed, .config = config, .arm = 5, .same_swap = -1, .cross_swap = -1,
                       .missing = -1, .extra = -1, .arg = -1, .stall = -1, .stall_once = -1,
                       .stretch = -1, .burst = -1};
}

struct outcome {
    struct emb_diff *d;
    char err[1024];
    uint8_t *bytes[2];
    struct emb_capture *cap[2];
};

/* The rules and the comparison report into a kept list; err gets its first message. */
static void first_problem(struct emb_problems *ps, char *err, size_t len)
{
    snprintf(err, len, "%s", ps->n ? ps->items[0].message : "");
    emb_problems_free(ps);
}

static int rules_line(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *line,
                      char *err, size_t len)
{
    struct emb_problems ps;
    emb_problems_init(&ps, NULL);
    int rc = emb_diff_rules_line(r, cat, line, &ps);
    first_problem(&ps, err, len);
    return rc;
}

static int rules_anchor(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *spec,
                        char *err, size_t len)
{
    struct emb_problems ps;
    emb_problems_init(&ps, NULL);
    int rc = emb_diff_rules_anchor(r, cat, spec, &ps);
    first_problem(&ps, err, len);
    return rc;
}

static void compare(struct outcome *o, const struct wl *good, const struct wl *bad,
                    const struct emb_diff_rules *rules)
{
    memset(o, 0, sizeof *o);
    o->cap[0] = run(good, "good", &o->bytes[0]);
    o->cap[1] = run(bad, "bad", &o->bytes[1]);
    struct emb_problems ps;
    emb_problems_init(&ps, NULL);
    o->d = emb_diff_run(o->cap[0], o->cap[1], rules, &ps);
    first_problem(&ps, o->err, sizeof o->err);
}

static void done(struct outcome *o)
{
    emb_diff_free(o->d);
    for (int s = 0; s < 2; s++) {
        emb_capture_free(o->cap[s]);
        free(o->bytes[s]);
    }
}

/* The words a report must never use: it observes, it does not explain. */
static int forbidden(const char *text)
{
    static const char *const words[] = {"caus", "because", "due to", "root", "led to",
                                        "leads to", "result of", "resulted", "trigger", "proves",
                                        "the reason", "responsible"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(text, words[i]))
            return (int)i + 1;
    return 0;
}

static void check_words(const struct emb_diff *d, const char *what)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    emb_diff_write_text(d, f);
    emb_diff_write_json(d, f);
    emb_diff_write_html(d, f);
    fclose(f);
    int bad = forbidden(buf);
    ok(!bad && len > 500, "%s: the reports (%zu bytes) use only the observational vocabulary", what, len);
    free(buf);
}

static const struct emb_diff_item *first(const struct outcome *o)
{
    return o->d && o->d->nitems ? &o->d->items[0] : NULL;
}

static const char *ctx_of(const struct outcome *o, const struct emb_diff_item *it)
{
    return it && it->ctx < o->d->nctx ? o->d->ctx[it->ctx].name : "?";
}

static void expect_first(const char *what, const struct wl *bad_wl, enum emb_diff_rule rule,
                         const char *ctx, int frame, const struct emb_diff_rules *rules)
{
    struct wl good = base(1, "");
    struct outcome o;
    compare(&o, &good, bad_wl, rules);
    const struct emb_diff_item *it = first(&o);
    ok(o.d && it, "%s: a significant difference is reported (%s)", what, o.d ? "" : o.err);
    if (it) {
        ok(it->rule == rule, "%s: first is rule %s (got %s)", what, emb_diff_rule_name(rule),
           emb_diff_rule_name((enum emb_diff_rule)it->rule));
        ok(!strcmp(ctx_of(&o, it), ctx), "%s: in context %s (got %s)", what, ctx, ctx_of(&o, it));
        ok_eq((long long)o.d->epoch_value[it->epoch], frame, "%s: at frame %d", what, frame);
        check_words(o.d, what);
    }
    done(&o);
}

/* Every report of a comparison, in one string (malloc'd). */
static char *reports(const struct emb_diff *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (d) {
        emb_diff_write_text(d, f);
        emb_diff_write_json(d, f);
        emb_diff_write_html(d, f);
    }
    fclose(f);
    return buf;
}

/* The comparison of captures decoded keeping no record (the decoder's streaming cursor
 * read once, each event packed, payloads read again in the trace's bytes) says what the
 * comparison of captures whose records were kept says, byte for byte: differences of every
 * rule, a policy that depends on the payload (`when`) and one that does not. */
static void streamed_as_kept(void)
{
    struct emb_diff_rules rules;
    emb_diff_rules_default(&rules);
    char err[256];
    ok(rules_line(&rules, emb_catalog_builtin(), "compare user_event.b tolerance 4 when id=3", err,
                  sizeof err) == 0 &&
       rules_line(&rules, emb_catalog_builtin(), "compare irq_enter.irq exact", err, sizeof err) == 0,
       "policies parse");
    struct wl g = base(1, ""), b = base(2, "many");
    b.same_swap = 9;
    b.missing = 12;
    b.extra = 13;
    b.arg = 14;
    b.arg_by = 8;
    b.stall = 20;
    struct outcome kept, streamed;
    compare(&kept, &g, &b, &rules);
    streaming = true;
    compare(&streamed, &g, &b, &rules);
    streaming = false;
    char *a = reports(kept.d), *z = reports(streamed.d);
    ok(kept.d && kept.d->nitems >= 5, "the workload differs under several rules (%zu items)",
       kept.d ? kept.d->nitems : 0);
    ok(streamed.d && !strcmp(a, z), "decoded keeping no record, the reports (%zu bytes) are the "
       "same bytes (%s)", strlen(a), streamed.d ? "" : streamed.err);
    free(a);
    free(z);
    done(&kept);
    done(&streamed);
    emb_diff_rules_free(&rules);
}

/* `test_diff_rules --write DIR`: the streams the command-line test seals and compares. */
static int write_streams(const char *dir)
{
    struct wl w[4] = {base(1, ""), base(2, ""), base(2, "stall-frame=12"), base(3, "late")};
    w[2].stall = 12;
    w[3].arm = 7;
    static const char *const files[4] = {"good.embt", "good2.embt", "bad.embt", "late.embt"};
    char path[4096];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        dump_path = path;
        uint8_t *bytes;
        emb_capture_free(run(&w[i], "x", &bytes));
        free(bytes);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write"))
        return write_streams(argv[2]);
    struct emb_diff_rules rules;
    emb_diff_rules_default(&rules);
    struct outcome o;

    /* Two runs of one build, with different scheduling noise. */
    struct wl g = base(1, ""), g2 = base(2, "");
    compare(&o, &g, &g2, &rules);
    ok(!o.d && strstr(o.err, "same configuration") && strstr(o.err, "--same-build"),
       "two captures claiming one configuration are refused, --same-build suggested");
    done(&o);
    rules.same_build = true;
    compare(&o, &g, &g2, &rules);
    ok(o.d && o.d->nitems == 0, "--same-build: no significant difference despite the noise (%zu)",
       o.d ? o.d->nitems : 99);
    ok(o.d && o.d->epochs == FRAMES - 5 - 1, "aligned from the armed frame: %zu epochs",
       o.d ? o.d->epochs : 0);
    ok(o.d && o.d->boundary_shifts > 0,
       "the noise was there: %llu events matched across another context's epoch marker",
       o.d ? (unsigned long long)o.d->boundary_shifts : 0ull);
    ok(o.d && !o.d->incomplete, "complete");
    if (o.d)
        check_words(o.d, "no difference");
    done(&o);
    rules.same_build = false;

    /* Cross-context swap: the interrupt after main's word instead of before. */
    struct wl b = base(2, "cross-swap=12");
    b.cross_swap = 12;
    compare(&o, &g, &b, &rules);
    ok(o.d && o.d->nitems == 0, "a swap across contexts is scheduling noise: nothing reported (%zu)",
       o.d ? o.d->nitems : 99);
    done(&o);

    /* Same-context swap. */
    b = base(2, "swap=12");
    b.same_swap = 12;
    expect_first("same-context swap", &b, EMB_DIFF_REORDER, "main", 12, &rules);

    b = base(2, "missing=12");
    b.missing = 12;
    expect_first("missing event", &b, EMB_DIFF_MISSING, "link", 12, &rules);

    b = base(2, "extra=13");
    b.extra = 13;
    expect_first("extra event", &b, EMB_DIFF_EXTRA, "main", 13, &rules);

    b = base(2, "arg=14");
    b.arg = 14;
    b.arg_by = 8;
    expect_first("argument", &b, EMB_DIFF_ARGUMENT, "link", 14, &rules);

    b = base(2, "stall=12");
    b.stall = 12;
    expect_first("interval (a stall from frame 12 on)", &b, EMB_DIFF_INTERVAL, "link", 12, &rules);

    b = base(2, "stretch=15");
    b.stretch = 15;
    expect_first("epoch duration", &b, EMB_DIFF_EPOCH_DURATION, "main", 15, &rules);

    /* One stalled frame: not a shift under repeat 3; an outlier under repeat 1. */
    b = base(2, "stall-once=12");
    b.stall_once = 12;
    compare(&o, &g, &b, &rules);
    ok(o.d && o.d->nitems == 0 && o.d->isolated_timing > 0,
       "one stalled frame is set aside under repeat 3 (%zu significant, %llu set aside)",
       o.d ? o.d->nitems : 99, o.d ? (unsigned long long)o.d->isolated_timing : 0ull);
    done(&o);
    rules.repeat = 1;
    expect_first("one stalled frame with repeat 1", &b, EMB_DIFF_INTERVAL, "link", 12, &rules);
    rules.repeat = 3;

    /* Tolerance: a policy from the rules, inside and outside. */
    char err[256];
    ok(rules_line(&rules, emb_catalog_builtin(), "compare user_event.b tolerance 100 when id=3",
                           err, sizeof err) == 0, "a tolerance policy parses (%s)", err);
    b = base(2, "arg=14");
    b.arg = 14;
    b.arg_by = 50;
    compare(&o, &g, &b, &rules);
    ok(o.d && o.d->nitems == 0 && o.d->within_tolerance >= 1,
       "a field within its tolerance is not significant");
    done(&o);
    b.arg_by = 500;
    expect_first("a field beyond its tolerance", &b, EMB_DIFF_ARGUMENT, "link", 14, &rules);
    emb_diff_rules_free(&rules);

    /* Switching a rule off. */
    ok(rules_line(&rules, emb_catalog_builtin(), "context link missing off", err,
                           sizeof err) == 0, "a per-context switch parses");
    b = base(2, "missing=12");
    b.missing = 12;
    compare(&o, &g, &b, &rules);
    ok(o.d && o.d->nitems == 0 && o.d->switched_off > 0, "a rule switched off for a context reports nothing there");
    done(&o);
    emb_diff_rules_free(&rules);

    /* Drops: a streaming run whose consumer falls behind in frame 12. */
    struct wl gs = base(1, ""), bs = base(2, "burst=12");
    gs.arm = bs.arm = UINT32_MAX;
    gs.burst = -1;
    bs.burst = 12;
    compare(&o, &gs, &bs, &rules);
    ok(o.d && o.d->incomplete, "drops make the comparison incomplete");
    bool placed = false;
    for (size_t i = 0; o.d && i < o.d->ngaps; i++)
        placed |= o.d->gaps[i].side == 1 && !strcmp(o.d->gaps[i].where, "link") &&
                  o.d->epoch_value[o.d->gaps[i].epoch] == 12;
    ok(placed, "and say where: bad run, link, frame 12");
    bool drop_item = false;
    for (size_t i = 0; o.d && i < o.d->nitems; i++)
        drop_item |= o.d->items[i].rule == EMB_DIFF_DROPS;
    ok(drop_item, "the drop is a significant difference of rule drops");
    ok(o.d && !o.d->anchor_armed && o.d->epoch_value[0] == 0,
       "streams align on the first frame both have");
    done(&o);

    /* Windows armed at different frames. */
    b = base(2, "armed-later");
    b.arm = 7;
    compare(&o, &g, &b, &rules);
    ok(!o.d && strstr(o.err, "different windows") && strstr(o.err, "--anchor"),
       "captures of different windows are refused: %s", o.err);
    done(&o);
    ok(rules_anchor(&rules, emb_catalog_builtin(), "frame_start.frame", err, sizeof err) == 0,
       "--anchor parses");
    compare(&o, &g, &b, &rules);
    ok(o.d && o.d->epoch_value[0] == 7, "with --anchor they align on the first common frame (7)");
    done(&o);
    emb_diff_rules_default(&rules);

    /* An anchor neither run has. */
    ok(rules_anchor(&rules, emb_catalog_builtin(), "epoch.epoch", err, sizeof err) == 0,
       "--anchor epoch.epoch parses");
    b = base(2, "x");
    compare(&o, &g, &b, &rules);
    ok(!o.d && strstr(o.err, "has no epoch event") && strstr(o.err, "--anchor"),
       "a capture without the anchor: said, --anchor suggested (%s)", o.err);
    done(&o);

    /* Rules file syntax errors. */
    emb_diff_rules_default(&rules);
    ok(rules_line(&rules, emb_catalog_builtin(), "rule nonsense off", err, sizeof err) != 0 &&
       strstr(err, "no rule"), "an unknown rule is an error");
    ok(rules_line(&rules, emb_catalog_builtin(), "compare user_event.zz ignore", err, sizeof err) != 0 &&
       strstr(err, "no field"), "an unknown field is an error");
    ok(rules_line(&rules, emb_catalog_builtin(), "  # only a comment", err, sizeof err) == 0,
       "comments are fine");
    ok(rules.quantile_pct == 5.0 && rules.repeat == 10, "the timing band's defaults: 5%%/95%% quantiles, repeat 10");
    ok(rules_line(&rules, emb_catalog_builtin(), "quantile 10", err, sizeof err) == 0 &&
       rules.quantile_pct == 10.0, "quantile sets the band's quantiles");
    ok(rules_line(&rules, emb_catalog_builtin(), "quantile 50", err, sizeof err) != 0 &&
       strstr(err, "below 50"), "a quantile of 50%% or more is an error");
    emb_diff_rules_free(&rules);
    streamed_as_kept();
    return emb_test_done();
}
