/* The RTEMS record reader and importer: streams of versions 1 and 10 in all four item
 * formats, built by a simulated target (rtems_stream.h), with several 22-bit counter
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
    struct emb_rr_event *v;
    size_t n, cap;
};

static int collect(void *arg, const struct emb_rr_event *ev)
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
        const struct emb_rr_event *x = &a->v[i], *y = &b->v[i];
        if (x->bt != y->bt || x->ns != y->ns || x->data != y->data || x->offset != y->offset ||
            x->cpu != y->cpu || x->event != y->event || x->unreliable != y->unreliable)
            return false;
    }
    return true;
}

static const uint32_t formats[4] = {EMB_RR_FORMAT_LE_32, EMB_RR_FORMAT_LE_64,
                                    EMB_RR_FORMAT_BE_32, EMB_RR_FORMAT_BE_64};
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
            while (gi < g->n && (g->v[gi].cpu != cpu || g->v[gi].event >= EMB_RR_EVENTS)) {
                if (g->v[gi].cpu == cpu && g->v[gi].event == EMB_RR_EV_TIME_ADJUSTMENT)
                    adjust++;
                gi++;
            }
            if (gi == g->n) {
                diag("%s: cpu %u: item %zu (event %u) missing", what, cpu, ei, e->event);
                return 1;
            }
            const struct emb_rr_event *v = &g->v[gi++];
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
                if (v->bt != e->bt || v->ns != emb_rr_bt_to_ns(e->bt)) {
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
    struct emb_rr_options opt = {.handler = collect, .arg = &g};
    struct emb_rr *rr = emb_rr_new(&opt);
    ok(emb_rr_feed(rr, s.out, s.len) == 0 && emb_rr_finish(rr) == 0, "%s: reads (%zu bytes)",
       what, s.len);
    const struct emb_rr_info *in = emb_rr_info(rr);
    ok_eq(in->version, version, "%s: version", what);
    ok(in->table_exact, "%s: the version's own event table", what);
    ok_eq(in->data_size, f % 2 ? 8 : 4, "%s: item data size", what);
    ok_eq(in->big_endian, f >= 2, "%s: byte order", what);
    ok_eq(in->per_cpu_items, 64, "%s: ring capacity", what);
    ok_eq(in->frequency, 48000000u, "%s: frequency", what);
    ok_eq(in->cpus_seen, 3, "%s: both processors", what);
    ok(s.lost > 0 && in->lost == s.lost, "%s: %" PRIu64 " items lost in overflows, %" PRIu64
       " reported", what, s.lost, in->lost);
    if (version >= 10) {
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
    emb_rr_free(rr);

    /* In pieces of every awkward size: the same items. */
    struct got g2 = {0};
    opt.arg = &g2;
    rr = emb_rr_new(&opt);
    size_t pos = 0, step = 1;
    int rc = 0;
    while (pos < s.len && rc == 0) {
        size_t n = step < s.len - pos ? step : s.len - pos;
        rc = emb_rr_feed(rr, s.out + pos, n);
        pos += n;
        step = step % 23 + 1;
    }
    ok(rc == 0 && emb_rr_finish(rr) == 0 && same_events(&g, &g2), "%s: fed in pieces of 1 to 23 bytes: same %zu items",
       what, g2.n);
    emb_rr_free(rr);
    free(g2.v);
    free(g.v);
    rs_free(&s);
}

static void unsynced_end(unsigned version)
{
    struct rs s;
    rs_init(&s, version, EMB_RR_FORMAT_LE_32, 2, 64, 10000000u, 777 + version);
    simulate(&s, 10, true);
    struct got g = {0};
    struct emb_rr_options opt = {.handler = collect, .arg = &g};
    struct emb_rr *rr = emb_rr_new(&opt);
    ok(emb_rr_feed(rr, s.out, s.len) == 0 && emb_rr_finish(rr) == 0,
       "v%u: a stream ending after an overflow without an uptime pair reads", version);
    size_t marks = 0;
    for (size_t i = 0; i < g.n; i++)
        marks += g.v[i].event == EMB_RR_EV_UNRELIABLE_TIME && g.v[i].cpu == 1;
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
    emb_rr_free(rr);
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
    struct emb_rr *rr = emb_rr_new(NULL);
    int rc = emb_rr_feed(rr, buf, len);
    if (rc == 0)
        rc = emb_rr_finish(rr);
    const char *e = emb_rr_error(rr, offset);
    snprintf(msg, sizeof msg, "%s", rc != 0 && e ? e : "");
    emb_rr_free(rr);
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

static void refusals(void)
{
    uint8_t b[256];
    uint64_t off;
    size_t n;
    const char *m;

    n = header(b, 0x12345678u, EMB_RR_MAGIC, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "unknown item format 0x12345678") && off == 0, "unknown format refused: %s", m);

    n = header(b, EMB_RR_FORMAT_BE_32, EMB_RR_MAGIC, false); /* magic in the wrong order */
    m = refuse(b, n, &off);
    ok(strstr(m, "bad magic") && off == 4, "bad magic refused at byte 4: %s", m);

    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(b + n, 0, 7, 64, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "does not begin with a VERSION") && off == 8, "no VERSION first: %s", m);

    for (uint32_t v = 0; v <= 11; v += 11) {
        n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
        n += item32(b + n, 0, 1, v, false);
        m = refuse(b, n, &off);
        ok(strstr(m, "is not supported") && off == 8, "version %u refused: %s", v, m);
    }

    n = header(b, EMB_RR_FORMAT_BE_64, EMB_RR_MAGIC, true);
    m = refuse(b, n + 5, &off);
    ok(strstr(m, "VERSION") || strstr(m, "truncated item: 5 of 12"), "truncated first item: %s", m);

    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
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
    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(b + n, 0, 1, 1, false);
    n += item32(b + n, 0, 35, 32, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "processor index 32 beyond the maximum 31") && off == 16, "v1 processor 32: %s", m);

    /* Version 10 with a maximum of 1: processor 2 is beyond. */
    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(b + n, 0, 1, 10, false);
    n += item32(b + n, 0, 119, 1, false);
    n += item32(b + n, 0, 110, 16, false);
    n += item32(b + n, 0, 118, 2, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "processor index 2 beyond the maximum 1") && off == 32, "v10 processor 2: %s", m);

    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(b + n, 0, 1, 10, false);
    n += item32(b + n, 0, 119, 32, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "processor maximum 32 beyond 31"), "processor maximum 32: %s", m);

    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(b + n, 0, 1, 10, false);
    n += item32(b + n, 0, 119, 0, false);
    n += item32(b + n, 0, 110, 48, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "not a power of two"), "ring capacity 48: %s", m);

    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(b + n, 0, 1, 10, false);
    n += item32(b + n, 0, 110, 16, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "before the processor maximum"), "v10 count before maximum: %s", m);

    n = header(b, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(b + n, 0, 1, 1, false);
    n += item32(b + n, 0, 11, 0, false);
    m = refuse(b, n, &off);
    ok(strstr(m, "frequency 0"), "frequency 0: %s", m);

    /* A processor that never gets an uptime pair: items are held up to a bound. */
    size_t big = 8 + 8 + (size_t)(EMB_RR_MAX_HOLD_ITEMS + 2) * 8;
    uint8_t *flood = malloc(big);
    n = header(flood, EMB_RR_FORMAT_LE_32, EMB_RR_MAGIC, false);
    n += item32(flood + n, 0, 1, 1, false);
    for (uint32_t i = 0; n + 8 <= big; i++)
        n += item32(flood + n, i & 0x3FFFFF, 600, i, false);
    m = refuse(flood, n, &off);
    ok(strstr(m, "without an uptime event"), "unbounded hold-back refused: %s", m);
    free(flood);
}

/* ---- Tables and catalogues ---- */

static void tables(void)
{
    char buf[32];
    const struct emb_rr_table *t1 = emb_rr_table_builtin(1), *t10 = emb_rr_table_builtin(10);
    ok(!strcmp(emb_rr_event_name(t1, 33, buf, sizeof buf), "OVERFLOW") &&
       !strcmp(emb_rr_event_name(t1, 110, buf, sizeof buf), "UPTIME_HIGH") &&
       !strcmp(emb_rr_event_name(t1, 200, buf, sizeof buf), "SYSTEM_200") &&
       !strcmp(emb_rr_event_name(t1, 513, buf, sizeof buf), "USER_1"), "version 1 names");
    ok(!strcmp(emb_rr_event_name(t10, 112, buf, sizeof buf), "PER_CPU_OVERFLOW") &&
       !strcmp(emb_rr_event_name(t10, 302, buf, sizeof buf), "THREAD_SWITCH_IN") &&
       !strcmp(emb_rr_event_name(t10, 340, buf, sizeof buf), "WRITEV_EXIT") &&
       !strcmp(emb_rr_event_name(t10, 341, buf, sizeof buf), "SYSTEM_341"), "version 10 names");
    ok(t10->role_event[EMB_RR_ROLE_PROCESSOR] == 118 && t10->role_event[EMB_RR_ROLE_UPTIME_LOW] == 321 &&
       t1->role_event[EMB_RR_ROLE_HEAD] == 15 && t1->role_event[EMB_RR_ROLE_PROCESSOR_MAX] == 0xFFFF,
       "roles by name");
    bool exact;
    ok(emb_rr_table_for_version(7, &exact) == t10 && !exact &&
       emb_rr_table_for_version(3, &exact) == emb_rr_table_builtin(4) && !exact &&
       emb_rr_table_for_version(11, &exact) == NULL, "versions between known tables");

    const char text[] = "# from recorddata.h\n0 EMPTY\n1 VERSION\n0x2 PROCESSOR\n3 UPTIME_LOW\n"
                        "4 UPTIME_HIGH\n5 MY_EVENT\n";
    char err[128];
    struct emb_rr_table *t = emb_rr_table_parse(text, sizeof text - 1, 10, err, sizeof err);
    ok(t != NULL && t->named == 6 && t->role_event[EMB_RR_ROLE_PROCESSOR] == 2 &&
       !strcmp(emb_rr_event_name(t, 5, buf, sizeof buf), "MY_EVENT"), "table from text");
    struct emb_catalog *cat = t ? emb_rr_catalog(t, err, sizeof err) : NULL;
    ok(cat != NULL && emb_catalog_find(cat, "my_event") != NULL &&
       emb_catalog_find(cat, "items_lost") == NULL && emb_catalog_find(cat, "overflow") != NULL,
       "its catalogue names the reader's OVERFLOW when the table has none");
    if (cat)
        emb_catalog_free(cat);
    emb_rr_table_free(t);
    const char bad[] = "0 EMPTY\n1 lower_case\n";
    t = emb_rr_table_parse(bad, sizeof bad - 1, 10, err, sizeof err);
    ok(t == NULL && strstr(err, "line 2"), "bad table line: %s", err);

    const struct emb_catalog *c1 = emb_rr_catalog_builtin(1), *c4 = emb_rr_catalog_builtin(4),
                             *c10 = emb_rr_catalog_builtin(10);
    ok(c1 && c4 && c10 && c1->checksum != c10->checksum && c4->checksum != c10->checksum,
       "three catalogues, three checksums");
    const struct emb_cat_event *e = c10 ? emb_catalog_event(c10, emb_rr_catalog_id(302)) : NULL;
    ok(e && !strcmp(e->name, "thread_switch_in") && e->nfields == 1 && e->payload_size == 8,
       "catalogue event per record event, with its data word");
    e = c10 ? emb_catalog_event(c10, emb_rr_catalog_id(EMB_RR_EV_TIME_ADJUSTMENT)) : NULL;
    ok(e && !strcmp(e->name, "time_adjustment"), "and the importer's own events");
}

/* ---- Import to a trace stream, decoded back ---- */

static void import_roundtrip(unsigned version)
{
    struct rs s;
    rs_init(&s, version, EMB_RR_FORMAT_BE_64, 2, 64, 100000000u, 4242 + version);
    simulate(&s, 40, false);
    struct emb_rr_import *imp = emb_rr_import_new(NULL);
    ok(emb_rr_import_feed(imp, s.out, s.len) == 0 && emb_rr_import_finish(imp) == 0,
       "v%u: imported", version);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ok(emb_rr_import_write(imp, mem) == 0 && fclose(mem) == 0, "v%u: trace stream written (%zu bytes)",
       version, len);
    const struct emb_rr_import_stats *st = emb_rr_import_stats(imp);
    struct emb_trace_options to = {.catalog = emb_rr_import_catalog(imp), .name = "import"};
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
            if (ev->id != 0x1000 + e->event || ev->ts != emb_rr_bt_to_ns(e->bt) ||
                emb_get_le64(ev->payload) != e->data)
                wrong++;
        }
    }
    ok(checked > 500 && wrong == 0, "v%u: %zu user events at the same ns with the same data",
       version, checked);
    emb_trace_free(t);
    free(buf);
    emb_rr_import_free(imp);
    rs_free(&s);
}

int main(void)
{
    for (unsigned f = 0; f < 4; f++) {
        run_stream(1, f);
        run_stream(10, f);
    }
    unsynced_end(1);
    unsynced_end(10);
    refusals();
    tables();
    import_roundtrip(1);
    import_roundtrip(10);
    return emb_test_done();
}
