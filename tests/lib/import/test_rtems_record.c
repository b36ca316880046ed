/* The RTEMS record reader and importer: streams of versions 1, 9 (RTEMS 5) and 10 (RTEMS
 * 6.1, 6.2, main) in all four item formats, built by a simulated target (rtems_stream.h)
 * whose event numbers come from each version's recorddata.h, with several 22-bit counter
 * wraps between uptime events and ring overflows; every item checked against what the
 * system's client reports (event, processor, data, and the time from the item's true
 * counter); fed whole and in pieces; every refusal; tables, catalogues, and the imported
 * trace stream decoded back. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/wire.h>

#include "harness.h"
#include "rtems_import.h"
#include "rtems_record.h"
#include "rtems_record_catalog.h"
#include "rtems_stream.h"
#include "trace_decode.h"

struct got {
    struct emb_rtems_record_event *v;
    size_t n, cap;
};

static int collect(void *arg, const struct emb_rtems_record_event *ev)
{
    struct got *g = arg;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 4096;
        g->v = realloc(g->v, g->cap * sizeof *g->v);
    }
    g->v[g->n++] = *ev;
    return 0;
}

static bool same_events(const struct got *a, const struct got *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct emb_rtems_record_event *x = &a->v[i], *y = &b->v[i];
        if (x->bt != y->bt || x->ns != y->ns || x->data != y->data || x->offset != y->offset ||
            x->cpu != y->cpu || x->event != y->event || x->unreliable != y->unreliable)
            return false;
    }
    return true;
}

static const uint32_t formats[4] = {EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_FORMAT_LE_64,
                                    EMB_RTEMS_RECORD_FORMAT_BE_32, EMB_RTEMS_RECORD_FORMAT_BE_64};
static const char *const format_names[4] = {"le32", "le64", "be32", "be64"};

/* A run of the simulated target: bursts of events, drains, and now and then a burst big
 * enough to overflow a ring. With `tail_unsynced`, processor 1 overflows at the end with
 * no uptime pair after it. */
static void simulate(struct rs *s, unsigned rounds, bool tail_unsynced)
{
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned cpu = 0; cpu < s->ncpu; cpu++) {
            unsigned burst = (r % 7 == 3 && cpu == 1) ? s->count + 20 + r % 11 : 5 + r % 13;
            for (unsigned i = 0; i < burst; i++)
                rs_step(s, cpu);
        }
        rs_drain(s);
    }
    if (tail_unsynced) {
        /* Far from the next uptime event: the overflowed items have no pair after them. */
        s->cpu[1].next_uptime = UINT64_MAX;
        for (unsigned i = 0; i < s->count + 40; i++)
            rs_step(s, 1);
        rs_drain(s);
    }
}

/* Compares the reader's items with the simulator's, processor by processor. */
static int compare(const struct rs *s, const struct got *g, const char *what, bool unsynced_end)
{
    int bad = 0;
    uint64_t timed = 0, adjust = 0, unreliable = 0;
    for (unsigned cpu = 0; cpu < s->ncpu; cpu++) {
        size_t gi = 0;
        for (size_t ei = 0; ei < s->nexp; ei++) {
            const struct rs_exp *e = &s->exp[ei];
            if (e->cpu != cpu)
                continue;
            /* The reader's own events (all but the overflows the simulator expects) are
             * not items of the stream. */
            while (gi < g->n && (g->v[gi].cpu != cpu || (g->v[gi].made &&
                                                         g->v[gi].event != s->ev->overflow))) {
                if (g->v[gi].cpu == cpu && (g->v[gi].event == EMB_RTEMS_RECORD_EV_TIME_ADJUSTMENT ||
                                            g->v[gi].event == s->ev->time_adjustment))
                    adjust++;
                gi++;
            }
            if (gi == g->n) {
                diag("%s: cpu %u: item %zu (event %u) missing", what, cpu, ei, e->event);
                return 1;
            }
            const struct emb_rtems_record_event *v = &g->v[gi++];
            if (v->event != e->event || v->data != e->data) {
                if (bad++ < 5)
                    diag("%s: cpu %u: expected event %u data 0x%" PRIx64 ", got %u 0x%" PRIx64,
                         what, cpu, e->event, e->data, v->event, v->data);
                continue;
            }
            if (v->unreliable)
                unreliable++;
            if (e->timed && e->resolved) {
                timed++;
                if (v->bt != e->bt || v->ns != emb_rtems_record_bt_to_ns(e->bt)) {
                    if (bad++ < 5)
                        diag("%s: cpu %u: event %u at counter %" PRIu64 ": bt 0x%" PRIx64
                             ", expected 0x%" PRIx64, what, cpu, e->event, e->counter, v->bt, e->bt);
                }
            } else if (e->timed && !v->unreliable && !unsynced_end) {
                if (bad++ < 5)
                    diag("%s: cpu %u: event %u has a time but no uptime pair", what, cpu, e->event);
            }
        }
    }
    ok(bad == 0, "%s: %zu items match event, data and time (%" PRIu64 " times checked)", what,
       s->nexp, timed);
    if (!unsynced_end)
        ok(adjust == 0, "%s: no time adjustments in a well-formed stream", what);
    if (unsynced_end)
        ok(unreliable > s->count / 2, "%s: %" PRIu64 " items after the last uptime pair are "
           "marked as best-effort times", what, unreliable);
    return bad;
}

static void run_stream(unsigned version, unsigned f)
{
    char what[64];
    snprintf(what, sizeof what, "v%u %s", version, format_names[f]);
    struct rs s;
    rs_init(&s, version, formats[f], 2, 64, 48000000u, 0x9E3779B97F4A7C15ull + version * 31 + f);
    simulate(&s, 60, false);

    /* Whole. */
    struct got g = {0};
    struct emb_rtems_record_options opt = {.handler = collect, .arg = &g};
    struct emb_rtems_record *rr = emb_rtems_record_new(&opt);
    ok(emb_rtems_record_feed(rr, s.out, s.len) == 0 && emb_rtems_record_finish(rr) == 0, "%s: reads (%zu bytes)",
       what, s.len);
    const struct emb_rtems_record_info *in = emb_rtems_record_info(rr);
    ok_eq(in->version, version, "%s: version", what);
    ok(in->table_exact, "%s: the version's own event table", what);
    ok_eq(in->data_size, f % 2 ? 8 : 4, "%s: item data size", what);
    ok_eq(in->big_endian, f >= 2, "%s: byte order", what);
    ok_eq(in->per_cpu_items, 64, "%s: ring capacity", what);
    ok_eq(in->frequency, 48000000u, "%s: frequency", what);
    ok_eq(in->cpus_seen, 3, "%s: both processors", what);
    ok(s.lost > 0 && in->lost == s.lost, "%s: %" PRIu64 " items lost in overflows, %" PRIu64
       " reported", what, s.lost, in->lost);
    if (version >= 9) {
        ok(!strcmp(in->arch, "arm") && !strcmp(in->multilib, "armv7-a/neon") &&
           !strcmp(in->bsp, "xilinx_zynq_a9_qemu") && !strcmp(in->version_control_key, "6.1-0-g1234abcd") &&
           !strcmp(in->tools, "13.3.0 20240521 (RTEMS 6, RSB)"), "%s: header texts (%s, %s, %s)",
           what, in->arch, in->bsp, in->tools);
        ok_eq(in->cpu_count, 2, "%s: processor maximum", what);
    }
    /* Several wraps between uptime events, really. */
    uint64_t max_gap = 0;
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        uint64_t last = 0;
        for (size_t i = 0; i < s.nexp; i++)
            if (s.exp[i].cpu == cpu && s.exp[i].event == s.ev->uptime_high) {
                if (last && s.exp[i].counter - last > max_gap)
                    max_gap = s.exp[i].counter - last;
                last = s.exp[i].counter;
            }
    }
    ok(max_gap >= 4u << 22, "%s: %.1f counter wraps between uptime events", what,
       (double)max_gap / (1u << 22));
    compare(&s, &g, what, false);
    emb_rtems_record_free(rr);

    /* In pieces of every awkward size: the same items. */
    struct got g2 = {0};
    opt.arg = &g2;
    rr = emb_rtems_record_new(&opt);
    size_t pos = 0, step = 1;
    int rc = 0;
    while (pos < s.len && rc == 0) {
        size_t n = step < s.len - pos ? step : s.len - pos;
        rc = emb_rtems_record_feed(rr, s.out + pos, n);
        pos += n;
        step = step % 23 + 1;
    }
    ok(rc == 0 && emb_rtems_record_finish(rr) == 0 && same_events(&g, &g2), "%s: fed in pieces of 1 to 23 bytes: same %zu items",
       what, g2.n);
    emb_rtems_record_free(rr);
    free(g2.v);
    free(g.v);
    rs_free(&s);
}

static void unsynced_end(unsigned version)
{
    struct rs s;
    rs_init(&s, version, EMB_RTEMS_RECORD_FORMAT_LE_32, 2, 64, 10000000u, 777 + version);
    simulate(&s, 10, true);
    struct got g = {0};
    struct emb_rtems_record_options opt = {.handler = collect, .arg = &g};
    struct emb_rtems_record *rr = emb_rtems_record_new(&opt);
    ok(emb_rtems_record_feed(rr, s.out, s.len) == 0 && emb_rtems_record_finish(rr) == 0,
       "v%u: a stream ending after an overflow without an uptime pair reads", version);
    size_t marks = 0;
    for (size_t i = 0; i < g.n; i++)
        marks += g.v[i].made && g.v[i].cpu == 1 && (g.v[i].event == EMB_RTEMS_RECORD_EV_UNRELIABLE_TIME ||
                                                    g.v[i].event == s.ev->unreliable_time);
    ok_eq(marks, 1, "v%u: one UNRELIABLE_TIME event on processor 1", version);
    char what[32];
    snprintf(what, sizeof what, "v%u unsynced end", version);
    compare(&s, &g, what, true);
    /* Best-effort times still go forward. */
    uint64_t last = 0;
    int back = 0;
    for (size_t i = 0; i < g.n; i++)
        if (g.v[i].cpu == 1) {
            back += g.v[i].bt < last;
            last = g.v[i].bt;
        }
    ok(back == 0, "v%u: processor 1 times never go back", version);
    emb_rtems_record_free(rr);
    free(g.v);
    rs_free(&s);
}

/* ---- Refusals ---- */

static void put32(uint8_t *p, uint32_t v, bool big)
{
    for (unsigned i = 0; i < 4; i++)
        p[big ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

static const char *refuse(const uint8_t *buf, size_t len, uint64_t *offset)
{
    static char msg[256];
    struct emb_problems ps;
    emb_problems_init(&ps, "refused.rec");
    struct emb_rtems_record_options opt = {.problems = &ps};
    struct emb_rtems_record *rr = emb_rtems_record_new(&opt);
    int rc = emb_rtems_record_feed(rr, buf, len);
    if (rc == 0)
        rc = emb_rtems_record_finish(rr);
    const char *e = ps.n > 0 ? ps.items[0].message : NULL;
    if (ps.n > 0)
        *offset = (uint64_t)ps.items[0].offset;
    snprintf(msg, sizeof msg, "%s", rc != 0 && e ? e : "");
    emb_rtems_record_free(rr);
    emb_problems_free(&ps);
    return msg;
}

static size_t header(uint8_t *b, uint32_t format, uint32_t magic, bool big)
{
    memcpy(b, &format, 4);
    put32(b + 4, magic, big);
    return 8;
}

static size_t item32(uint8_t *b, uint32_t time, uint32_t event, uint32_t data, bool big)
{
    put32(b, time << 10 | event, big);
    put32(b + 4, data, big);
    return 8;
}

static size_t item64(uint8_t *b, uint32_t time, uint32_t event, uint64_t data, bool big)
{
    put32(b, time << 10 | event, big);
    put32(b + (big ? 4 : 8), (uint32_t)(data >> 32), big);
    put32(b + (big ? 8 : 4), (uint32_t)data, big);
    return 12;
}

static void refusals(void)
{
    uint8_t b[256];
    uint64_t off;
    size_t n;
    const char *m;

    n = header(b, 0x12345678u, EMB_RTEMS_RECORD_MAGIC, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "unknown item format 0x12345678") && off == 0, "unknown format refused: %s", m);

    n = header(b, EMB_RTEMS_RECORD_FORMAT_BE_32, EMB_RTEMS_RECORD_MAGIC, false); /* magic in the wrong order */
    m = refuse(b, n, &off);
    ok(strstr(m, "bad magic") && off == 4, "bad magic refused at byte 4: %s", m);

    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, 7, 64, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "does not begin with a VERSION") && off == 8, "no VERSION first: %s", m);

    for (uint32_t v = 0; v <= 11; v += 11) {
        n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
        n += item32(b + n, 0, 1, v, false);
        m = refuse(b, n, &off);
        ok(strstr(m, "is not supported") && off == 8, "version %u refused: %s", v, m);
    }

    n = header(b, EMB_RTEMS_RECORD_FORMAT_BE_64, EMB_RTEMS_RECORD_MAGIC, true);
    m = refuse(b, n + 5, &off);
    ok(strstr(m, "VERSION") || strstr(m, "truncated item: 5 of 12"), "truncated first item: %s", m);

    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, 1, 1, false);
    n += item32(b + n, 0, 7, 16, false);
    m = refuse(b, n + 3, &off);
    ok(strstr(m, "truncated item: 3 of 8") && off == n, "truncated item refused at byte %zu: %s",
       n, m);

    m = refuse(b, 5, &off);
    ok(strstr(m, "truncated header: 5 of 8"), "truncated header: %s", m);
    m = refuse(b, 0, &off);
    ok(strstr(m, "empty stream"), "empty stream: %s", m);

    /* Version 1 allows processors 0..31; 32 is beyond. */
    const struct rs_events *e1 = &rs_ev_v1, *e10 = &rs_ev_v10;
    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, e1->version, 1, false);
    n += item32(b + n, 0, e1->count, 16, false);
    n += item32(b + n, 0, e1->frequency, 1000, false);
    n += item32(b + n, 0, e1->processor, 32, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "processor index 32 beyond the maximum 31") && off == 32, "v1 processor 32: %s", m);

    /* Version 10 with a maximum of 1: processor 2 is beyond. */
    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, e10->version, 10, false);
    n += item32(b + n, 0, e10->pmax, 1, false);
    n += item32(b + n, 0, e10->count, 16, false);
    n += item32(b + n, 0, e10->frequency, 1000, false);
    n += item32(b + n, 0, e10->processor, 2, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "processor index 2 beyond the maximum 1") && off == 40, "v10 processor 2: %s", m);

    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, e10->version, 10, false);
    n += item32(b + n, 0, e10->pmax, 32, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "processor maximum 32 beyond 31"), "processor maximum 32: %s", m);

    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, e10->version, 10, false);
    n += item32(b + n, 0, e10->pmax, 0, false);
    n += item32(b + n, 0, e10->count, 48, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "not a power of two"), "ring capacity 48: %s", m);

    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, e10->version, 10, false);
    n += item32(b + n, 0, e10->count, 16, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "before the processor maximum"), "v10 count before maximum: %s", m);

    /* A version 10 header without each of the items the server always sends
     * (record-stream-header.c): refused where the processors' items begin. */
    static const char *const needed[3] = {"PROCESSOR_MAXIMUM", "PER_CPU_COUNT", "FREQUENCY"};
    for (unsigned skip = 0; skip < 3; skip++) {
        n = header(b, EMB_RTEMS_RECORD_FORMAT_BE_64, EMB_RTEMS_RECORD_MAGIC, true);
        n += item64(b + n, 0, e10->version, 10, true);
        if (skip != 0)
            n += item64(b + n, 0, e10->pmax, 0, true);
        if (skip != 1 && skip != 0)
            n += item64(b + n, 0, e10->count, 16, true);
        if (skip != 2)
            n += item64(b + n, 0, e10->frequency, 1000, true);
        n += item64(b + n, 0, e10->arch, 0x6d7261, true);
        size_t at = n;
        n += item64(b + n, 0, e10->processor, 0, true);
        m = refuse(b, n, &off);
        char want[64];
        snprintf(want, sizeof want, "no %s item before PROCESSOR", needed[skip]);
        ok(strstr(m, want) && off == at, "v10 header without %s refused at byte %zu: %s",
           needed[skip], at, m);
    }
    /* The first item after the header may also be a timed one. */
    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, e10->version, 10, false);
    n += item32(b + n, 0, e10->pmax, 0, false);
    n += item32(b + n, 0, e10->count, 16, false);
    n += item32(b + n, 5, e10->switch_in, 1, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "no FREQUENCY item before THREAD_SWITCH_IN") && off == 32,
       "v10 header ended by a timed item: %s", m);

    n = header(b, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(b + n, 0, 1, 1, false);
    n += item32(b + n, 0, 11, 0, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "frequency 0"), "frequency 0: %s", m);

    /* A processor that never gets an uptime pair: items are held up to a bound. */
    size_t big = 8 + 8 + (size_t)(EMB_RTEMS_RECORD_MAX_HOLD_ITEMS + 2) * 8;
    uint8_t *flood = malloc(big);
    n = header(flood, EMB_RTEMS_RECORD_FORMAT_LE_32, EMB_RTEMS_RECORD_MAGIC, false);
    n += item32(flood + n, 0, e1->version, 1, false);
    n += item32(flood + n, 0, e1->count, 16, false);
    n += item32(flood + n, 0, e1->frequency, 1000, false);
    for (uint32_t i = 0; n + 8 <= big; i++)
        n += item32(flood + n, i & 0x3FFFFF, 600, i, false);
    m = refuse(flood, n, &off);
    ok(strstr(m, "without an uptime event"), "unbounded hold-back refused: %s", m);
    free(flood);
}

/* ---- Items held when the stream ends ---- */

/* How the stream ends after processor 1 was left holding items. */
enum end_kind { END_CLEAN, END_PARTIAL, END_ERROR, END_STOPPED };

/* Processor 1's items after its last overflow have no uptime pair after them: whatever
 * ends the stream (its end, a partial item, a bad item, a stop mid-item), they are all
 * reported after one UNRELIABLE_TIME, as the system's client does at its end
 * (record-client.c rtems_record_client_destroy), marked as best-effort times. The gap
 * before them hid no counter wrap, so the best effort is the true time. */
static void held_at_end(unsigned version, unsigned f, enum end_kind end)
{
    static const char *const ends[4] = {"at its end", "in a partial item", "in an error",
                                        "stopped mid-item"};
    char what[96];
    snprintf(what, sizeof what, "v%u %s, held items, stream ending %s", version,
             format_names[f], ends[end]);
    struct rs s;
    rs_init(&s, version, formats[f], 2, 64, 48000000u, 31337 + version * 7 + f + end);
    simulate(&s, 6, false);
    rs_end_holding(&s, 1);
    size_t held = s.cpu[1].nheld;
    rs_best_effort(&s);
    if (end == END_PARTIAL || end == END_STOPPED)
        rs_bytes(&s, "\x01\x02\x03", 3);
    if (end == END_ERROR)
        rs_item_bytes(&s, s.ev->processor, 7); /* beyond the processor maximum 1 */
    struct got g = {0};
    struct emb_problems ps;
    emb_problems_init(&ps, what);
    struct emb_rtems_record_options opt = {.handler = collect, .arg = &g, .problems = &ps};
    struct emb_rtems_record *rr = emb_rtems_record_new(&opt);
    int fed = emb_rtems_record_feed(rr, s.out, s.len);
    int rc = end == END_STOPPED ? emb_rtems_record_stop(rr) : emb_rtems_record_finish(rr);
    uint64_t off = ps.n > 0 ? (uint64_t)ps.items[0].offset : 0;
    const char *err = ps.n > 0 ? ps.items[0].message : NULL;
    if (end == END_CLEAN || end == END_STOPPED)
        ok(fed == 0 && rc == 0 && err == NULL, "%s: reads", what);
    else if (end == END_PARTIAL)
        ok(fed == 0 && rc != 0 && err && strstr(err, "truncated item: 3 of") && off == s.len - 3,
           "%s: refused at byte %" PRIu64 ": %s", what, off, err ? err : "");
    else
        ok(fed != 0 && rc != 0 && err && strstr(err, "processor index 7") &&
           off == s.len - (4u + s.data_size), "%s: refused at byte %" PRIu64 ": %s", what, off,
           err ? err : "");
    size_t marks = 0, first_mark = SIZE_MAX, after = 0;
    for (size_t i = 0; i < g.n; i++) {
        if (g.v[i].cpu != 1)
            continue;
        if (g.v[i].made && (g.v[i].event == EMB_RTEMS_RECORD_EV_UNRELIABLE_TIME ||
                            g.v[i].event == s.ev->unreliable_time)) {
            marks++;
            first_mark = i;
        } else if (first_mark != SIZE_MAX) {
            after += g.v[i].unreliable;
        }
    }
    ok(held > 10 && marks == 1 && after >= held - 1,
       "%s: one UNRELIABLE_TIME, then the %zu held items (%zu best-effort times)", what,
       held, after);
    compare(&s, &g, what, false);
    emb_rtems_record_free(rr);
    emb_problems_free(&ps);
    free(g.v);
    rs_free(&s);
}

/* A version 10 stream written by hand from the real header's numbers (rs_ev_v10): the
 * reader names each item as the system does and times it as the client does, at a 1 MHz
 * counter (one tick a microsecond), with a 22-bit wrap between two items. */
static void handmade_v10(unsigned f)
{
    const struct rs_events *e = &rs_ev_v10;
    bool big = f >= 2, wide = f % 2 == 1;
    uint8_t b[256];
    size_t n = header(b, formats[f], EMB_RTEMS_RECORD_MAGIC, big);
    struct { uint32_t time, event; uint64_t data; } items[] = {
        {0, e->version, 10}, {0, e->pmax, 0}, {0, e->count, 16}, {0, e->frequency, 1000000},
        {0, e->arch, 0x6d7261}, {0, e->thread_id, 0x09010001}, {0, e->thread_name, 0x454c4449},
        {0, e->processor, 0},
        {900, e->switch_out, 0x09010001},         /* before the uptime pair: held */
        {1000, e->uptime_low, 0}, {1000, e->uptime_high, 5}, /* 5 s at counter 1000 */
        {1250, e->switch_in, 0x0A010002},         /* 250 us later */
        {100, e->user0 + 3, 0x1122334455667788u}, /* a wrap later: 2^22 - 1150 us */
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
        n += wide ? item64(b + n, items[i].time, items[i].event, items[i].data, big)
                  : item32(b + n, items[i].time, items[i].event, (uint32_t)items[i].data, big);
    struct got g = {0};
    struct emb_rtems_record_options opt = {.handler = collect, .arg = &g};
    struct emb_rtems_record *rr = emb_rtems_record_new(&opt);
    ok(emb_rtems_record_feed(rr, b, n) == 0 && emb_rtems_record_finish(rr) == 0, "hand-made v10 %s: reads",
       format_names[f]);
    const struct emb_rtems_record_info *in = emb_rtems_record_info(rr);
    ok(in->version == 10 && in->table_exact && in->cpu_count == 1 && in->per_cpu_items == 16 &&
       in->frequency == 1000000 && !strcmp(in->arch, "arm"),
       "hand-made v10 %s: header read (%u processors, %u items, %u Hz, %s)", format_names[f],
       in->cpu_count, in->per_cpu_items, in->frequency, in->arch);
    /* name, expected ns (0: no time checked) */
    static const struct { const char *name; uint64_t ns; } want[] = {
        {"VERSION", 0}, {"PROCESSOR_MAXIMUM", 0}, {"PER_CPU_COUNT", 0}, {"FREQUENCY", 0},
        {"ARCH", 0}, {"THREAD_ID", 0}, {"THREAD_NAME", 0}, {"PROCESSOR", 0},
        {"THREAD_SWITCH_OUT", 4999900000u}, {"UPTIME_LOW", 5000000000u},
        {"UPTIME_HIGH", 5000000000u}, {"THREAD_SWITCH_IN", 5000250000u},
        {"USER_3", 9193404000u}};
    size_t wrong = 0;
    char buf[32];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (i >= g.n) {
            wrong++;
            break;
        }
        const char *name = emb_rtems_record_event_name(in->table, g.v[i].event, buf, sizeof buf);
        uint64_t ns = g.v[i].ns;
        bool time_ok = want[i].ns == 0 || (ns + 1 >= want[i].ns && ns <= want[i].ns + 1);
        if (strcmp(name, want[i].name) != 0 || !time_ok || g.v[i].made) {
            if (wrong++ < 3)
                diag("item %zu: %s at %" PRIu64 " ns, expected %s at %" PRIu64, i, name, ns,
                     want[i].name, want[i].ns);
        }
    }
    ok(wrong == 0 && g.n == sizeof want / sizeof want[0] &&
       g.v[g.n - 1].data == (wide ? 0x1122334455667788u : 0x55667788u),
       "hand-made v10 %s: %zu items named and timed as the system's client does", format_names[f],
       g.n);
    emb_rtems_record_free(rr);
    free(g.v);
}

/* ---- Tables and catalogues ---- */

static void tables(void)
{
    char buf[32];
    const struct emb_rtems_record_table *t1 = emb_rtems_record_table_builtin(1), *t10 = emb_rtems_record_table_builtin(10);
    ok(!strcmp(emb_rtems_record_event_name(t1, 33, buf, sizeof buf), "OVERFLOW") &&
       !strcmp(emb_rtems_record_event_name(t1, 110, buf, sizeof buf), "UPTIME_HIGH") &&
       !strcmp(emb_rtems_record_event_name(t1, 200, buf, sizeof buf), "SYSTEM_200") &&
       !strcmp(emb_rtems_record_event_name(t1, 513, buf, sizeof buf), "USER_1"), "version 1 names");
    const struct emb_rtems_record_table *t9 = emb_rtems_record_table_builtin(9);
    /* Every number the simulator uses, against the name the system's header gives it. */
    static const char *const names[] = {
        "VERSION", "PROCESSOR", "PROCESSOR_MAXIMUM", "PER_CPU_COUNT", "FREQUENCY", "PER_CPU_TAIL",
        "PER_CPU_HEAD", "PER_CPU_OVERFLOW", "UPTIME_LOW", "UPTIME_HIGH", "ARCH", "MULTILIB", "BSP",
        "VERSION_CONTROL_KEY", "TOOLS", "THREAD_ID", "THREAD_NAME", "THREAD_SWITCH_IN",
        "THREAD_SWITCH_OUT", "USER_0", "TIME_ADJUSTMENT", "UNRELIABLE_TIME"};
    const struct { const struct emb_rtems_record_table *t; const struct rs_events *e; } lists[2] = {
        {t9, &rs_ev_v9}, {t10, &rs_ev_v10}};
    for (unsigned l = 0; l < 2; l++) {
        if (lists[l].t == NULL) {
            ok(0, "a built-in table of version %u", l == 0 ? 9u : 10u);
            continue;
        }
        const struct rs_events *ev = lists[l].e;
        const uint32_t num[] = {ev->version, ev->processor, ev->pmax, ev->count, ev->frequency,
                                ev->tail, ev->head, ev->overflow, ev->uptime_low, ev->uptime_high,
                                ev->arch, ev->multilib, ev->bsp, ev->vck, ev->tools,
                                ev->thread_id, ev->thread_name, ev->switch_in, ev->switch_out,
                                ev->user0, ev->time_adjustment, ev->unreliable_time};
        _Static_assert(sizeof num / sizeof num[0] == sizeof names / sizeof names[0], "");
        int wrong = 0;
        for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (num[i] == 0xFFFF)
                continue;
            const char *got = emb_rtems_record_event_name(lists[l].t, num[i], buf, sizeof buf);
            if (strcmp(got, names[i]) != 0 && wrong++ < 3)
                diag("version %u: event %u is %s, the header says %s", lists[l].t->version,
                     num[i], got, names[i]);
        }
        ok(wrong == 0, "version %u: the table names every event as the header numbers it",
           lists[l].t->version);
    }
    ok(!strcmp(emb_rtems_record_event_name(t10, 71, buf, sizeof buf), "INTERRUPT_ENTRY") &&
       !strcmp(emb_rtems_record_event_name(t10, 341, buf, sizeof buf), "WRITEV_EXIT") &&
       !strcmp(emb_rtems_record_event_name(t10, 342, buf, sizeof buf), "SYSTEM_342") &&
       !strcmp(emb_rtems_record_event_name(t10, 7, buf, sizeof buf), "PER_CPU_DISCARD") &&
       t10->no_time_last == rs_ev_v10.no_time_last, "version 10: more names, NO_TIME_LAST 16");
    ok(!strcmp(emb_rtems_record_event_name(t9, 340, buf, sizeof buf), "WRITEV_EXIT") &&
       !strcmp(emb_rtems_record_event_name(t9, 341, buf, sizeof buf), "SYSTEM_341") &&
       !strcmp(emb_rtems_record_event_name(t9, 59, buf, sizeof buf), "INTERRUPT_ENTRY"), "version 9 names");
    ok(t10->role_event[EMB_RTEMS_RECORD_ROLE_PROCESSOR] == rs_ev_v10.processor &&
       t10->role_event[EMB_RTEMS_RECORD_ROLE_UPTIME_LOW] == rs_ev_v10.uptime_low &&
       t10->role_event[EMB_RTEMS_RECORD_ROLE_HEAD] == 0xFFFF &&
       t10->role_event[EMB_RTEMS_RECORD_ROLE_TIME_ADJUSTMENT] == rs_ev_v10.time_adjustment &&
       t9->role_event[EMB_RTEMS_RECORD_ROLE_HEAD] == rs_ev_v9.head &&
       t9->role_event[EMB_RTEMS_RECORD_ROLE_TIME_ADJUSTMENT] == 0xFFFF &&
       t1->role_event[EMB_RTEMS_RECORD_ROLE_HEAD] == 15 && t1->role_event[EMB_RTEMS_RECORD_ROLE_PROCESSOR_MAX] == 0xFFFF,
       "roles by name");
    bool exact;
    ok(emb_rtems_record_table_for_version(7, &exact) == t9 && !exact &&
       emb_rtems_record_table_for_version(9, &exact) == t9 && exact &&
       emb_rtems_record_table_for_version(10, &exact) == t10 && exact &&
       emb_rtems_record_table_for_version(3, &exact) == emb_rtems_record_table_builtin(4) && !exact &&
       emb_rtems_record_table_for_version(11, &exact) == NULL, "versions between known tables");

    const char text[] = "# from recorddata.h\n0 EMPTY\n1 VERSION\n0x2 PROCESSOR\n3 UPTIME_LOW\n"
                        "4 UPTIME_HIGH\n5 MY_EVENT\n";
    char err[128];
    struct emb_problems ps;
    emb_problems_init(&ps, "table.txt");
    struct emb_rtems_record_table *t = emb_rtems_record_table_parse(text, sizeof text - 1, 10, &ps);
    ok(t != NULL && t->named == 6 && t->role_event[EMB_RTEMS_RECORD_ROLE_PROCESSOR] == 2 &&
       !strcmp(emb_rtems_record_event_name(t, 5, buf, sizeof buf), "MY_EVENT"), "table from text");
    struct emb_catalog *cat = t ? emb_rtems_record_catalog(t, err, sizeof err) : NULL;
    ok(cat != NULL && emb_catalog_find(cat, "my_event") != NULL &&
       emb_catalog_find(cat, "items_lost") == NULL && emb_catalog_find(cat, "overflow") != NULL,
       "its catalogue names the reader's OVERFLOW when the table has none");
    if (cat)
        emb_catalog_free(cat);
    emb_rtems_record_table_free(t);
    const char bad[] = "0 EMPTY\n1 lower_case\n";
    t = emb_rtems_record_table_parse(bad, sizeof bad - 1, 10, &ps);
    const char *why = ps.n > 0 ? ps.items[0].message : "";
    ok(t == NULL && strstr(why, "line 2"), "bad table line: %s", why);
    emb_problems_free(&ps);

    const struct emb_catalog *c1 = emb_rtems_record_catalog_builtin(1), *c4 = emb_rtems_record_catalog_builtin(4),
                             *c9 = emb_rtems_record_catalog_builtin(9), *c10 = emb_rtems_record_catalog_builtin(10);
    ok(c1 && c4 && c9 && c10 && c1->checksum != c10->checksum && c4->checksum != c10->checksum &&
       c9->checksum != c10->checksum, "four catalogues, four checksums");
    const struct emb_catalog_event *e =
        c10 ? emb_catalog_event(c10, emb_rtems_record_catalog_id(rs_ev_v10.switch_in)) : NULL;
    ok(e && !strcmp(e->name, "thread_switch_in") && e->nfields == 1 && e->payload_size == 8,
       "catalogue event per record event, with its data word");
    e = c1 ? emb_catalog_event(c1, emb_rtems_record_catalog_id(EMB_RTEMS_RECORD_EV_TIME_ADJUSTMENT)) : NULL;
    ok(e && !strcmp(e->name, "time_adjustment"), "and the importer's own events");
    e = c10 ? emb_catalog_event(c10, emb_rtems_record_catalog_id(rs_ev_v10.time_adjustment)) : NULL;
    ok(e && !strcmp(e->name, "time_adjustment") && c10 &&
       emb_catalog_event(c10, emb_rtems_record_catalog_id(EMB_RTEMS_RECORD_EV_TIME_ADJUSTMENT)) == NULL &&
       emb_catalog_event(c10, emb_rtems_record_catalog_id(EMB_RTEMS_RECORD_EV_UNRELIABLE_TIME)) == NULL,
       "version 10 has its own TIME_ADJUSTMENT and UNRELIABLE_TIME: no second ones");
}

/* ---- Import to a trace stream, decoded back ---- */

static void import_roundtrip(unsigned version)
{
    struct rs s;
    rs_init(&s, version, EMB_RTEMS_RECORD_FORMAT_BE_64, 2, 64, 100000000u, 4242 + version);
    simulate(&s, 40, false);
    struct emb_rtems_import *imp = emb_rtems_import_new(NULL);
    ok(emb_rtems_import_feed(imp, s.out, s.len) == 0 && emb_rtems_import_finish(imp) == 0,
       "v%u: imported", version);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ok(emb_rtems_import_write(imp, mem) == 0 && fclose(mem) == 0, "v%u: trace stream written (%zu bytes)",
       version, len);
    const struct emb_rtems_import_stats *st = emb_rtems_import_stats(imp);
    struct emb_trace_options to = {.catalog = emb_rtems_import_catalog(imp), .name = "import"};
    struct emb_trace *t = emb_trace_decode((const uint8_t *)buf, len, &to);
    const struct emb_trace_summary *sum = emb_trace_summary(t);
    ok(!sum->fatal && sum->errors == 0, "v%u: decodes cleanly", version);
    ok_eq(sum->events, st->events, "v%u: every written event decoded", version);
    ok_eq(sum->discarded, s.lost, "v%u: lost items are the packets' discarded events", version);
    ok_eq(emb_trace_context_count(t), 2, "v%u: a context per processor", version);
    /* Timed user events come back at the client's nanoseconds, in order per processor. */
    size_t n;
    const struct emb_trace_event *const *evs = emb_trace_events(t, &n);
    size_t checked = 0, wrong = 0;
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        size_t ei = 0;
        for (size_t i = 0; i < n; i++) {
            const struct emb_trace_event *ev = evs[i];
            if (ev->type != EMB_TREC_EVENT || ev->context_id != cpu || ev->id < 0x1000 + 512 ||
                ev->id >= 0x1400)
                continue;
            while (ei < s.nexp && (s.exp[ei].cpu != cpu || s.exp[ei].event < 512))
                ei++;
            if (ei == s.nexp)
                break;
            const struct rs_exp *e = &s.exp[ei++];
            checked++;
            if (ev->id != 0x1000 + e->event || ev->ts != emb_rtems_record_bt_to_ns(e->bt) ||
                emb_get_le64(ev->payload) != e->data)
                wrong++;
        }
    }
    ok(checked > 500 && wrong == 0, "v%u: %zu user events at the same ns with the same data",
       version, checked);
    emb_trace_free(t);
    free(buf);
    emb_rtems_import_free(imp);
    rs_free(&s);
}

int main(void)
{
    for (unsigned f = 0; f < 4; f++) {
        run_stream(1, f);
        run_stream(9, f);
        run_stream(10, f);
        handmade_v10(f);
    }
    unsynced_end(1);
    unsynced_end(9);
    unsynced_end(10);
    for (unsigned end = END_CLEAN; end <= END_STOPPED; end++) {
        held_at_end(10, end % 4, (enum end_kind)end);
        held_at_end(9, 3 - end % 4, (enum end_kind)end);
    }
    refusals();
    tables();
    import_roundtrip(1);
    import_roundtrip(9);
    import_roundtrip(10);
    return emb_test_done();
}
