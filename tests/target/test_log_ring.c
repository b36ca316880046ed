/* The log ring protocol, case by case, on the test port (tests/target/testport): its clock
 * and the points where a preempting producer runs (after the clock read, after a
 * successful compare-and-swap, before a commit or add) are in the test's hands. Each case
 * drains the ring into frames and decodes them with the host's decoder against this
 * test's own ELF, so what is checked is what `emb log` would print. */
#define _GNU_SOURCE
#include <emb/log.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_decode.h"
#include "harness.h"
#include "log_decode.h"

uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);
struct emb_log_ring *emb_test_log_ring;

static struct emb_log_ring *claim_ring;

uint64_t emb_port_timestamp_hz(void) { return 1000000000u; }
int64_t emb_port_clock_offset_ns(void) { return 0; }
struct emb_trace_ring *emb_port_trace_ring_claim(void) { return NULL; }
struct emb_log_ring *emb_port_log_ring_claim(void)
{
    if (claim_ring != NULL)
        emb_test_log_ring = claim_ring;
    return claim_ring;
}

EMB_LOG_MODULE_DEFINE(t, EMB_LOG_LEVEL_DBG);

#define RING 1024u
static uint8_t ring_buf[EMB_LOG_RING_BUF_SIZE(4096u)];
static struct emb_log_ring ring;
static struct emb_logdb *db;

/* 10 bytes each: id, timestamp, one u32. */
#define REC_SIZE 10u
static void rec(uint32_t seq) { EMB_LOG_INF(t, "rec %u", seq); }
static void nested(uint32_t seq) { EMB_LOG_WRN(t, "nested %u", seq); }

/* ---- The stream: frames in memory ---- */

static uint8_t stream[1u << 22];
static size_t stream_len;

static emb_status mem_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    if (stream_len + len > sizeof stream)
        return EMB_E_NOSPACE;
    memcpy(stream + stream_len, bytes, len);
    stream_len += len;
    return EMB_OK;
}

static const struct emb_log_output out = {mem_write, NULL};

static void setup(uint32_t size)
{
    if (emb_log_ring_init(&ring, 3, 0, ring_buf, size) != EMB_OK) {
        ok(0, "ring of %u bytes", size);
        exit(emb_test_done());
    }
    emb_test_log_ring = &ring;
    claim_ring = NULL;
    emb_test_preempt = NULL;
    emb_test_clock = 1000;
    emb_test_clock_step = 10;
    stream_len = 0;
    emb_log_write_hello(&out, NULL);
}

static emb_status drain(void)
{
    return emb_log_drain(&ring, &out, NULL);
}

/* ---- Decoding ---- */

struct got {
    int type;
    char text[160];
    uint64_t ts;
    uint64_t count;
    bool clipped;
};
static struct got got[8192];
static size_t ngot;
static uint64_t errors;

static void on_record(void *arg, const struct emb_logrec *r)
{
    (void)arg;
    if (ngot == sizeof got / sizeof got[0])
        return;
    struct got *g = &got[ngot++];
    g->type = r->type;
    g->ts = r->ts;
    g->count = r->count;
    g->clipped = r->clipped;
    size_t n = r->text_len < sizeof g->text - 1u ? r->text_len : sizeof g->text - 1u;
    if (r->text != NULL)
        memcpy(g->text, r->text, n);
    g->text[n] = '\0';
}

static void on_problem(void *arg, uint64_t offset, bool error, const char *msg)
{
    (void)arg;
    if (error) {
        errors++;
        diag("decoder: byte %llu: %s", (unsigned long long)offset, msg);
    }
}

static void decode(void)
{
    ngot = 0;
    errors = 0;
    /* The test port's hello carries no build id (emb_log_write_hello(&out, NULL)). */
    struct emb_log_decoder_options opt = {.db = db, .no_build_id_check = true, .record = on_record,
                                     .problem = on_problem};
    struct emb_log_decoder *d = emb_log_decoder_new(&opt);
    emb_log_decoder_feed(d, stream, stream_len);
    emb_log_decoder_finish(d);
    emb_log_decoder_free(d);
}

/* The ring bytes of the stream's data frames, for walking records by hand. */
static uint8_t ring_bytes[1u << 22];
static size_t ring_len;

static void collect(void *arg, const struct emb_frame_view *f)
{
    (void)arg;
    if (f->len > EMB_LOG_DATA_HEADER && f->payload[0] == EMB_LOG_FRAME_DATA) {
        memcpy(ring_bytes + ring_len, f->payload + EMB_LOG_DATA_HEADER, f->len - EMB_LOG_DATA_HEADER);
        ring_len += f->len - EMB_LOG_DATA_HEADER;
    }
}

/* Walks the ring bytes: counts sync markers and records, and where each sync falls. */
struct walk {
    unsigned syncs, dropped_records, records;
    unsigned records_before_sync[64]; /* record count when each sync was met */
    bool bad;
};

static struct walk walk_ring(void)
{
    struct walk w = {0};
    ring_len = 0;
    struct emb_frame_callbacks cb = {collect, NULL, NULL};
    struct emb_frame_decoder fd;
    emb_frame_decoder_init(&fd, 65536, &cb);
    emb_frame_decoder_feed(&fd, stream, stream_len);
    emb_frame_decoder_free(&fd);
    size_t off = 0;
    while (off < ring_len) {
        uint16_t id = emb_get_le16(ring_bytes + off);
        if (id == EMB_LOG_ID_SYNC) {
            if (w.syncs < 64)
                w.records_before_sync[w.syncs] = w.records;
            w.syncs++;
            off += EMB_LOG_SYNC_SIZE;
        } else if (id == EMB_LOG_ID_DROPPED) {
            w.dropped_records++;
            off += EMB_LOG_DROPPED_SIZE;
        } else {
            const struct emb_log_site *s = emb_logdb_site(db, id);
            const char *err;
            long n = s ? emb_log_args_size(db, s, ring_bytes + off + 6, ring_len - off - 6, &err) : -1;
            if (n < 0) {
                w.bad = true;
                break;
            }
            w.records++;
            off += 6u + (size_t)n;
        }
    }
    return w;
}

static bool ts_in_order(void)
{
    for (size_t i = 1; i < ngot; i++)
        if (got[i].ts < got[i - 1].ts)
            return false;
    return true;
}

/* ---- Cases ---- */

static void test_basic(void)
{
    setup(RING);
    for (uint32_t i = 0; i < 10; i++)
        rec(i);
    ok_eq(ring.write_pos, EMB_LOG_SYNC_SIZE + 10u * REC_SIZE, "one sync marker, then ten exact-size records");
    ok_eq(drain(), EMB_OK, "drained");
    ok_eq(ring.read_pos, ring.write_pos, "every byte handed on");
    decode();
    ok_eq(errors, 0, "decoded cleanly");
    ok_eq(ngot, 10, "ten records");
    ok(!strcmp(got[0].text, "rec 0") && !strcmp(got[9].text, "rec 9"), "texts: '%s' .. '%s'", got[0].text, got[9].text);
    ok_eq(got[0].ts, 1010, "first record at the slow path's clock reading (the second)");
    ok(ts_in_order(), "timestamps in order");
}

/* A nested producer at `point` of the next record; it also tries to drain. */
static enum emb_test_point nested_point;
static emb_status nested_drain;
static void preempt(enum emb_test_point point)
{
    if (point != nested_point) {
        emb_test_preempt = preempt; /* not this point: wait for ours */
        return;
    }
    nested(100);
    nested_drain = drain();
}

static void test_fast_path_preempted(void)
{
    static const char *const names[] = {"after the clock read", "after the swap", "before the commit"};
    static const char *const expect_order[3][2] = {{"nested 100", "rec 1"}, {"rec 1", "nested 100"}, {"rec 1", "nested 100"}};
    for (int p = EMB_TEST_AT_CLOCK; p <= EMB_TEST_AT_COMMIT; p++) {
        setup(RING);
        rec(0);
        nested_point = (enum emb_test_point)p;
        nested_drain = EMB_OK;
        emb_test_preempt = preempt;
        rec(1);
        emb_test_preempt = NULL;
        rec(2);
        ok_eq(nested_drain, p == EMB_TEST_AT_CLOCK ? EMB_OK : EMB_E_BUSY,
              "%s: a drain in the nested producer %s", names[p],
              p == EMB_TEST_AT_CLOCK ? "may read (nothing is half-written)" : "finds the ring busy");
        ok_eq(drain(), EMB_OK, "%s: drained afterwards", names[p]);
        decode();
        ok_eq(errors, 0, "%s: decoded cleanly", names[p]);
        ok_eq(ngot, 4, "%s: four records", names[p]);
        ok(ngot == 4 && !strcmp(got[1].text, expect_order[p][0]) && !strcmp(got[2].text, expect_order[p][1]),
           "%s: ring order '%s', '%s'", names[p], got[1].text, got[2].text);
        ok(ts_in_order(), "%s: timestamps follow ring order", names[p]);
        ok_eq(ring.committed, ring.write_pos, "%s: every reservation committed", names[p]);
    }
}

static void test_slow_path_preempted(void)
{
    /* The first record goes the slow way (sync marker). Preempted after its clock read,
     * the nested producer takes the first sync; the outer retries and needs none. */
    setup(RING);
    nested_point = EMB_TEST_AT_CLOCK;
    emb_test_preempt = preempt;
    rec(0);
    for (uint32_t i = 1; i < 5; i++)
        rec(i);
    drain();
    decode();
    struct walk w = walk_ring();
    ok_eq(errors, 0, "slow path, clock: decoded cleanly");
    ok(ngot == 6 && !strcmp(got[0].text, "nested 100") && !strcmp(got[1].text, "rec 0"),
       "slow path, clock: nested first (%s), then the outer", ngot ? got[0].text : "-");
    ok_eq(w.syncs, 1, "slow path, clock: one sync marker");

    /* Preempted after its swap, before the hints are refreshed: the nested producer sees
     * stale hints, takes the slow path and adds a sync marker of its own. Harmless. */
    setup(RING);
    nested_point = EMB_TEST_AT_SWAPPED;
    emb_test_preempt = preempt;
    rec(0);
    for (uint32_t i = 1; i < 5; i++)
        rec(i);
    drain();
    decode();
    w = walk_ring();
    ok_eq(errors, 0, "slow path, swap: decoded cleanly");
    ok(ngot == 6 && !strcmp(got[0].text, "rec 0") && !strcmp(got[1].text, "nested 100"),
       "slow path, swap: outer first, then nested");
    ok_eq(w.syncs, 2, "slow path, swap: a second, redundant sync marker");
    ok(ts_in_order(), "slow path, swap: timestamps in order");
    ok_eq(ring.write_pos - EMB_LOG_SYNC_SIZE * 2u, 6u * REC_SIZE, "slow path, swap: later records take the fast path");
}

/* Fills the ring with no consumer until `drops` records have been dropped. */
static uint32_t fill(uint32_t *seq, uint32_t drops)
{
    uint32_t written = 0;
    while (ring.dropped < drops) {
        uint32_t before = ring.committed;
        rec((*seq)++);
        if (ring.committed != before)
            written++;
    }
    return written;
}

static void test_drops(void)
{
    setup(RING);
    uint32_t seq = 0;
    uint32_t written = fill(&seq, 7);
    ok_eq(ring.pending, 7, "seven drops pending");
    ok_eq(drain(), EMB_OK, "drained the full ring");
    rec(seq++);
    rec(seq++);
    ok_eq(ring.pending, 0, "announced by the next record");
    drain();
    emb_log_write_stats(&out, &ring);
    decode();
    ok_eq(errors, 0, "decoded cleanly (the stats frame agrees)");
    ok_eq(ngot, written + 3u, "every record written, and one dropped record");
    ok(ngot > 2 && got[ngot - 3].type == EMB_LREC_DROPPED && got[ngot - 3].count == 7,
       "dropped(7) precedes the first record after the drops");
    uint32_t first_after = written + 7u;
    char expect[32];
    snprintf(expect, sizeof expect, "rec %u", first_after);
    ok(!strcmp(got[ngot - 2].text, expect), "the record after it is %s (got %s)", expect, got[ngot - 2].text);
    struct walk w = walk_ring();
    ok_eq(w.dropped_records, 1, "exactly one dropped record in the ring");
}

/* Drops pending; the announcing producer is preempted right after taking them. */
static void take_preempt(enum emb_test_point point)
{
    if (point != EMB_TEST_AT_SWAPPED) {
        emb_test_preempt = take_preempt;
        return;
    }
    nested(200); /* finds nothing pending: must not announce the outer's drops again */
}

static void test_drops_taken_then_preempted(void)
{
    setup(RING);
    uint32_t seq = 0;
    fill(&seq, 5);
    drain();
    emb_test_preempt = take_preempt; /* first successful swap: the take of the count */
    rec(seq++);
    emb_test_preempt = NULL;
    drain();
    emb_log_write_stats(&out, &ring);
    decode();
    struct walk w = walk_ring();
    ok_eq(errors, 0, "decoded cleanly, drops add up");
    ok_eq(w.dropped_records, 1, "one dropped record, announced once");
    size_t n = ngot;
    ok(n >= 3 && !strcmp(got[n - 3].text, "nested 200") && got[n - 2].type == EMB_LREC_DROPPED &&
       got[n - 2].count == 5, "nested record, then dropped(5) and the outer record");
}

/* The nested producer drops between the outer's swap and its hint refresh: the outer's
 * re-check must leave the fast path closed, so the next record announces the drop. */
static uint32_t outer_room_left;
static void drop_preempt(enum emb_test_point point)
{
    if (point != EMB_TEST_AT_SWAPPED) {
        emb_test_preempt = drop_preempt;
        return;
    }
    uint32_t before = ring.dropped;
    nested(300);
    outer_room_left = ring.dropped - before;
}

static void test_drop_during_hint_refresh(void)
{
    setup(RING);
    /* Leave room for the outer's sync marker and record plus one more record, not for a
     * second marker: the nested producer, which also owes a marker (the outer has not
     * reset the countdown yet), is dropped, while a plain record would still fit. */
    uint32_t seq = 0;
    while (RING - (ring.write_pos - ring.read_pos) >= EMB_LOG_SYNC_SIZE + EMB_LOG_DROPPED_SIZE + 3u * REC_SIZE)
        rec(seq++);
    ring.sync_countdown = 0;
    ring.limit = ring.write_pos; /* as the fast path leaves it when a marker is due */
    emb_test_preempt = drop_preempt;
    rec(seq++);
    emb_test_preempt = NULL;
    ok_eq(outer_room_left, 1, "the nested record found no room and was dropped");
    ok_eq(ring.pending, 1, "one drop pending");
    ok(RING - (ring.write_pos - ring.read_pos) >= EMB_LOG_DROPPED_SIZE + REC_SIZE, "a plain record and its dropped record still fit");
    ok((int32_t)(ring.limit - (ring.write_pos + REC_SIZE)) < 0,
       "the outer's hint refresh left the fast path closed");
    rec(seq++);
    ok_eq(ring.pending, 0, "the very next record took the drop");
    drain();
    emb_log_write_stats(&out, &ring);
    decode();
    ok_eq(errors, 0, "decoded cleanly, drops add up");
    ok(ngot >= 2 && got[ngot - 2].type == EMB_LREC_DROPPED && got[ngot - 2].count == 1,
       "the very next record announces the drop");
}

static void test_wrap(void)
{
    /* Records of every length across many laps of a small ring, drained now and then: the
     * ones that cross the end are written into the slack and read back from there. */
    setup(RING);
    static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ";
    char expect[2000][64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < 2000; i++) {
        uint32_t len = (i * 7u) % 40u;
        char s[48];
        memcpy(s, text, len);
        s[len] = '\0';
        EMB_LOG_DBG(t, "%u:%s:%x", i, s, i * 3u);
        uint32_t kept = len > CONFIG_EMB_LOG_STR_MAX ? CONFIG_EMB_LOG_STR_MAX : len;
        snprintf(expect[n++], sizeof expect[0], "%u:%.*s%s:%x", i, (int)kept, s,
                 len > kept ? EMB_LOG_CLIP_MARK : "", i * 3u);
        if (i % 5u == 4u)
            drain();
    }
    drain();
    ok_eq(ring.dropped, 0, "nothing dropped");
    ok(ring.write_pos > 20u * RING, "the ring wrapped %u times", ring.write_pos / RING);
    decode();
    ok_eq(errors, 0, "decoded cleanly");
    ok_eq(ngot, 2000, "every record");
    uint32_t same = 0, clipped = 0;
    for (uint32_t i = 0; i < ngot && i < n; i++) {
        same += !strcmp(got[i].text, expect[i]);
        clipped += got[i].clipped;
    }
    ok_eq(same, 2000, "every text as printf would print it, clip marks included");
    ok(clipped > 0, "clipped strings marked (%u)", clipped);
}

static void test_sync_interval(void)
{
    setup(4096u);
    for (uint32_t i = 0; i < 3u * CONFIG_EMB_LOG_SYNC_INTERVAL + 5u; i++) {
        rec(i);
        if (i % 16u == 15u)
            drain();
    }
    drain();
    struct walk w = walk_ring();
    ok(!w.bad, "ring bytes walk cleanly");
    ok_eq(w.syncs, 4, "a sync marker before records 0, 64, 128 and 192");
    int spaced = 1;
    for (unsigned i = 0; i < w.syncs && i < 64; i++)
        spaced &= w.records_before_sync[i] == i * CONFIG_EMB_LOG_SYNC_INTERVAL;
    ok(spaced, "every CONFIG_EMB_LOG_SYNC_INTERVAL records");
}

static void test_clock_high_word(void)
{
    setup(RING);
    emb_test_clock_step = 0;
    uint64_t expect[6];
    for (uint32_t i = 0; i < 6; i++) {
        expect[i] = emb_test_clock = 0xFFFFFFC0ull + 0x20u * (uint64_t)i;
        rec(i);
    }
    emb_test_clock = 0x3FFFFFFF0ull; /* a jump of many wraps */
    rec(6);
    drain();
    decode();
    struct walk w = walk_ring();
    ok_eq(errors, 0, "decoded cleanly");
    ok_eq(w.syncs, 3, "a sync marker at the start and at each change of the high word");
    int exact = ngot == 7;
    for (uint32_t i = 0; i < 6 && exact; i++) {
        if (got[i].ts != expect[i])
            diag("record %u at %llx, expected %llx", i, (unsigned long long)got[i].ts, (unsigned long long)expect[i]);
        exact &= got[i].ts == expect[i];
    }
    ok(exact, "every 64-bit time exact across the 32-bit wrap");
    ok(ngot == 7 && got[6].ts == 0x3FFFFFFF0ull, "and across a jump of many wraps");
}

static void test_claim_and_levels(void)
{
    setup(RING);
    emb_test_log_ring = &emb_log_unclaimed_ring;
    uint32_t lost = emb_log_lost_no_ring();
    rec(0);
    ok_eq(emb_log_lost_no_ring(), lost + 1, "no ring to claim: counted lost");
    claim_ring = &ring;
    rec(1);
    ok(emb_test_log_ring == &ring, "claimed the ring on the first record");
    uint32_t pos = ring.write_pos;
    ok_eq(emb_log_set_level(t, EMB_LOG_LEVEL_WRN), EMB_LOG_LEVEL_DBG, "run-time level lowered");
    rec(2);
    ok_eq(ring.write_pos, pos, "an INF call below the run-time level writes nothing");
    nested(3);
    ok(ring.write_pos > pos, "a WRN call still does");
    emb_log_set_level(t, EMB_LOG_LEVEL_DBG);
    const char *null = NULL;
    EMB_LOG_INF(t, "null %s, empty [%s], long %s", null, "", "0123456789012345678901234567890123456789");
    drain();
    decode();
    ok_eq(errors, 0, "decoded cleanly");
    ok(ngot == 3 && !strcmp(got[2].text, "null (null), empty [], long 01234567890123456789012345678901" EMB_LOG_CLIP_MARK),
       "NULL, empty and clipped strings: '%s'", ngot == 3 ? got[2].text : "-");
}

static void test_hexdump(void)
{
    setup(RING);
    uint8_t data[100];
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 37u);
    EMB_LOG_HEXDUMP_DBG(t, data, 20, "short");
    EMB_LOG_HEXDUMP_INF(t, data, sizeof data, "long");
    EMB_LOG_HEXDUMP_WRN(t, data, 0, "empty");
    drain();
    ngot = 0;
    decode();
    ok_eq(errors, 0, "decoded cleanly");
    ok(ngot == 3 && got[0].type == EMB_LREC_HEXDUMP && !strcmp(got[0].text, "short") && !got[0].clipped,
       "a short dump whole");
    ok(ngot == 3 && got[1].clipped, "a long dump clipped at CONFIG_EMB_LOG_HEXDUMP_MAX");
}

int main(void)
{
    char err[256];
    db = emb_logdb_open("/proc/self/exe", err, sizeof err);
    ok(db != NULL, "this test's own log metadata: %s", db ? "read" : err);
    if (db == NULL)
        return emb_test_done();
    ok_eq(emb_log_init(), EMB_OK, "the region fits 16-bit ids");
    test_basic();
    test_fast_path_preempted();
    test_slow_path_preempted();
    test_drops();
    test_drops_taken_then_preempted();
    test_drop_during_hint_refresh();
    test_wrap();
    test_sync_interval();
    test_clock_high_word();
    test_claim_and_levels();
    test_hexdump();
    emb_logdb_free(db);
    return emb_test_done();
}
