/* The log decoder on bad input (tools/lib/decode/log_decode.c): streams recorded through the real
 * rings (on the test port) and then cut, joined mid-way, corrupted, or forged: a wrong
 * build id, an id outside the metadata region, a %s length past its bounds or past the
 * end. Each must be reported with its byte offset, decode whatever is decodable, resume
 * at the next sync marker, and never crash.
 *
 * With a directory argument it also writes each stream there (good.embl, cut.embl, ...)
 * for the command-line test (tests/emb/test_emb_log_cli.sh), which decodes them with
 * this program as the ELF. */
#define _GNU_SOURCE
#include <emb/log.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_decode.h"

uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);
struct emb_log_ring *emb_test_log_ring;

uint64_t emb_port_timestamp_hz(void) { return 1000000000u; }
int64_t emb_port_clock_offset_ns(void) { return 1700000000000000000; }
struct emb_trace_ring *emb_port_trace_ring_claim(void) { return NULL; }
struct emb_log_ring *emb_port_log_ring_claim(void) { return NULL; }

EMB_LOG_MODULE_DEFINE(dec, EMB_LOG_LEVEL_DBG);

static struct emb_logdb *db;
static const char *outdir;

/* ---- Recording ---- */

static uint8_t ring_buf[EMB_LOG_RING_BUF_SIZE(4096u)];
static struct emb_log_ring ring;
static uint8_t stream[1u << 20];
static size_t stream_len;

static emb_status mem_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    memcpy(stream + stream_len, bytes, len);
    stream_len += len;
    return EMB_OK;
}

static const struct emb_log_output out = {mem_write, NULL};

/* The build id in the hello: this test's own, so `emb log --elf` of it accepts the files. */
static struct emb_log_identity identity;

/* Records `n` records of three kinds, draining every few; returns the stream length. */
static size_t record(uint32_t n)
{
    emb_log_ring_init(&ring, 5, 1, ring_buf, 4096u);
    memcpy(ring.name, "worker", 7);
    emb_test_log_ring = &ring;
    emb_test_clock = 5000;
    emb_test_clock_step = 100;
    stream_len = 0;
    static const uint8_t delimiter = 0;
    mem_write(NULL, &delimiter, 1);
    emb_log_write_hello(&out, &identity);
    for (uint32_t i = 0; i < n; i++) {
        switch (i % 3u) {
        case 0: EMB_LOG_INF(dec, "record %u of %u", i, n); break;
        case 1: EMB_LOG_WRN(dec, "name %s, value %lld", i % 2u ? "odd" : "even", -(long long)i); break;
        default: EMB_LOG_DBG(dec, "ratio %.3f", i / 7.0); break;
        }
        if (i % 10u == 9u)
            emb_log_drain(&ring, &out, NULL);
        if (i % 100u == 50u)
            emb_log_write_hello(&out, &identity); /* as a worker repeats it for late readers */
    }
    emb_log_drain(&ring, &out, NULL);
    emb_log_write_stats(&out, &ring);
    return stream_len;
}

static void save(const char *name, const uint8_t *data, size_t len)
{
    if (outdir == NULL)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    FILE *f = fopen(path, "wb");
    if (f != NULL) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

/* ---- Decoding ---- */

struct result {
    unsigned records, resyncs, unknown, dropped, lost;
    unsigned errors, notices;
    char first_text[128];
    char last_error[512];
    uint64_t last_error_offset;
    uint64_t resync_ts;
    bool fatal;
    uint64_t texts_hash;
};

static struct result res;
static bool no_build_id_check;

static void on_record(void *arg, const struct emb_logrec *r)
{
    (void)arg;
    switch (r->type) {
    case EMB_LREC_LOG:
        if (res.records == 0) {
            size_t n = r->text_len < sizeof res.first_text - 1 ? r->text_len : sizeof res.first_text - 1;
            memcpy(res.first_text, r->text, n);
            res.first_text[n] = '\0';
        }
        res.records++;
        break;
    case EMB_LREC_RESYNC:
        res.resyncs++;
        res.resync_ts = r->ts;
        break;
    case EMB_LREC_UNKNOWN: res.unknown++; break;
    case EMB_LREC_DROPPED:
    case EMB_LREC_PENDING: res.dropped += (unsigned)r->count; break;
    case EMB_LREC_LOST: res.lost++; break;
    default: break;
    }
}

static void on_problem(void *arg, uint64_t offset, bool error, const char *msg)
{
    (void)arg;
    if (error) {
        res.errors++;
        snprintf(res.last_error, sizeof res.last_error, "%s", msg);
        res.last_error_offset = offset;
    } else {
        res.notices++;
    }
}

static void decode(const uint8_t *data, size_t len, bool raw, size_t piece)
{
    memset(&res, 0, sizeof res);
    struct emb_log_decoder_options opt = {.db = db, .raw = raw, .raw_context = 5,
                                     .no_build_id_check = no_build_id_check,
                                     .record = on_record, .problem = on_problem};
    struct emb_log_decoder *d = emb_log_decoder_new(&opt);
    for (size_t i = 0; i < len; i += piece)
        emb_log_decoder_feed(d, data + i, len - i < piece ? len - i : piece);
    emb_log_decoder_finish(d);
    res.fatal = emb_log_decoder_summary(d)->fatal;
    emb_log_decoder_free(d);
}

/* ---- The bare ring bytes of one recording, for the raw cases ---- */

#include "frame_decode.h"

static uint8_t raw[1u << 20];
static size_t raw_len;

static void take_data(void *arg, const struct emb_frame_view *f)
{
    (void)arg;
    if (f->len > EMB_LOG_DATA_HEADER && f->payload[0] == EMB_LOG_FRAME_DATA) {
        memcpy(raw + raw_len, f->payload + EMB_LOG_DATA_HEADER, f->len - EMB_LOG_DATA_HEADER);
        raw_len += f->len - EMB_LOG_DATA_HEADER;
    }
}

static void extract_raw(void)
{
    raw_len = 0;
    struct emb_frame_callbacks cb = {take_data, NULL, NULL};
    struct emb_frame_decoder fd;
    emb_frame_decoder_init(&fd, 65536, &cb);
    emb_frame_decoder_feed(&fd, stream, stream_len);
    emb_frame_decoder_free(&fd);
}

/* Offset of the n-th sync marker in raw[]. */
static size_t nth_sync(unsigned n)
{
    static const uint8_t magic[] = EMB_LOG_SYNC_MAGIC;
    unsigned seen = 0;
    for (size_t i = 0; i + 6 + sizeof magic <= raw_len; i++)
        if (raw[i] == 0 && raw[i + 1] == 0 && memcmp(raw + i + 6, magic, sizeof magic) == 0 && seen++ == n)
            return i;
    return raw_len;
}

/* ---- Cases ---- */

static void test_good(void)
{
    size_t len = record(300);
    save("good.embl", stream, len);
    decode(stream, len, false, 4096);
    ok_eq(res.errors, 0, "a good stream decodes cleanly");
    ok_eq(res.records, 300, "every record");
    ok(!strcmp(res.first_text, "record 0 of 300"), "first text: %s", res.first_text);
    decode(stream, len, false, 1);
    ok_eq(res.records, 300, "fed a byte at a time: the same");
    ok_eq(res.errors, 0, "and cleanly");
}

static void test_truncated(void)
{
    size_t len = record(300);
    extract_raw();
    /* A framed stream cut inside a frame: the cut frame is reported, earlier ones kept. */
    decode(stream, len - 40u, false, 512);
    ok(res.errors >= 1, "cut inside a frame: reported (%s)", res.last_error);
    ok(res.records > 250 && res.records < 300, "the records before the cut decode (%u)", res.records);
    save("cut.embl", stream, len - 40u);
    /* Bare records cut inside a record. */
    decode(raw, raw_len - 3u, true, 100);
    ok_eq(res.records, 299, "raw, cut inside the last record: the others decode");
    ok(strstr(res.last_error, "ends inside a record") != NULL, "and the cut is named: %s", res.last_error);
}

static void test_joined(void)
{
    record(300);
    extract_raw();
    size_t second = nth_sync(1);
    ok(second < raw_len, "the recording has a second sync marker (at %zu)", second);
    unsigned full = 300, after = 0;
    /* Count records at or after the second marker from a clean decode of its suffix. */
    decode(raw + second, raw_len - second, true, 4096);
    after = res.records;
    ok(after > 0 && after < full, "%u records follow the second marker", after);
    for (size_t cut = 1; cut < second; cut += 37) {
        decode(raw + cut, raw_len - cut, true, 333);
        if (res.records != after || res.resyncs != 1 || res.errors != 0) {
            ok(0, "raw stream joined at byte %zu: %u records, %u resyncs, %u errors", cut,
               res.records, res.resyncs, res.errors);
            return;
        }
    }
    ok(1, "joined at every 37th byte before the second marker: decoding resumes exactly there");
    size_t mid = nth_sync(0) + 40u;
    save("joined.raw", raw + mid, raw_len - mid);
    /* Framed: drop the head of the stream at many offsets; the decoder must resume, never
     * report an error, and never decode more than the whole. */
    unsigned bad = 0, decoded = 0;
    for (size_t cut = 1; cut < stream_len; cut += 97) {
        decode(stream + cut, stream_len - cut, false, 256);
        /* After the last hello nothing can be placed: that is an error, and rightly so. */
        bool after_hello = res.records > 0;
        decoded += after_hello;
        if (after_hello && (res.errors != 0 || res.records > full)) {
            diag("joined at %zu: %u records, %u errors (%s)", cut, res.records, res.errors, res.last_error);
            bad++;
        }
    }
    ok_eq(bad, 0, "a framed stream joined anywhere before the last hello decodes without errors");
    ok(decoded > 20, "(%u of the joins found a hello and a sync marker)", decoded);
    save("joined.embl", stream + stream_len / 3u, stream_len - stream_len / 3u);
}

static void test_random(void)
{
    static uint8_t junk[65536];
    srand(3);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)rand();
    decode(junk, sizeof junk, false, 1000);
    ok_eq(res.records, 0, "random bytes: no records");
    decode(junk, sizeof junk, true, 1000);
    ok_eq(res.records, 0, "random bytes as raw records: no records");
    save("random.embl", junk, 4096);
}

static void test_build_id(void)
{
    struct emb_log_identity other = {(const uint8_t *)"\x01\x02\x03\x04\x05\x06\x07\x08", 8};
    struct emb_log_identity saved = identity;
    identity = other;
    size_t len = record(30);
    identity = saved;
    decode(stream, len, false, 4096);
    ok(res.fatal, "a stream from another build is refused");
    ok_eq(res.records, 0, "and nothing decoded");
    ok(strstr(res.last_error, "0102030405060708") != NULL && strstr(res.last_error, "build id mismatch"),
       "the message prints both ids: %s", res.last_error);
    save("wrong_build.embl", stream, len);

    /* A stream without a build id could be any build's: refused unless the caller says
     * to decode it anyway. */
    identity = (struct emb_log_identity){NULL, 0};
    len = record(30);
    identity = saved;
    decode(stream, len, false, 4096);
    ok(res.fatal && res.records == 0, "a stream without a build id is refused, nothing decoded");
    ok(strstr(res.last_error, "carries no build id") != NULL && strstr(res.last_error, "-Wl,--build-id") != NULL,
       "saying how to add one: %s", res.last_error);
    no_build_id_check = true;
    decode(stream, len, false, 4096);
    no_build_id_check = false;
    ok(!res.fatal && res.errors == 0 && res.records == 30, "with no_build_id_check it decodes");
    save("no_build_id.embl", stream, len);
}

/* A record patched in place inside the raw bytes. */
static void test_forged_records(void)
{
    record(200);
    extract_raw();
    size_t first = nth_sync(0) + EMB_LOG_SYNC_SIZE; /* the first record: "record 0 of 200" */
    static uint8_t copy[1u << 20];

    memcpy(copy, raw, raw_len);
    emb_put_le16(copy + first, 0xFFF0); /* far outside the region */
    decode(copy, raw_len, true, 4096);
    ok_eq(res.unknown, 1, "an id outside the region: one placeholder");
    ok(strstr(res.last_error, "outside the log metadata region") != NULL, "named: %s", res.last_error);
    ok_eq(res.last_error_offset, first, "at its byte offset (%zu)", first);
    ok_eq(res.resyncs, 1, "decoding resumes at the next sync marker");
    ok(res.records > 0 && res.records < 200, "and goes on (%u records)", res.records);
    save("bad_id.raw", copy, raw_len);

    memcpy(copy, raw, raw_len);
    emb_put_le16(copy + first, (uint16_t)(EMB_LOG_ID_BIAS + 2u)); /* inside, but no site */
    decode(copy, raw_len, true, 4096);
    ok(res.unknown == 1 && strstr(res.last_error, "names no call site") != NULL,
       "an id inside the region that names no call site: %s", res.last_error);

    /* The second record is "name %s, value %lld": its length byte follows the timestamp. */
    const struct emb_log_site *s1 = emb_logdb_site(db, emb_get_le16(raw + first));
    const char *err;
    size_t second = first + 6u + (size_t)emb_log_args_size(db, s1, raw + first + 6, raw_len, &err);
    memcpy(copy, raw, raw_len);
    copy[second + 6] = 0x7F; /* 127 > CONFIG_EMB_LOG_STR_MAX */
    decode(copy, raw_len, true, 4096);
    ok(strstr(res.last_error, "length out of bounds") != NULL, "a %%s length past its bound: %s", res.last_error);
    ok_eq(res.last_error_offset, second, "at the record's offset");
    ok_eq(res.resyncs, 1, "decoding resumes at the next sync marker");
    save("bad_strlen.raw", copy, raw_len);

    /* A %s length that runs past the end of the stream. */
    memcpy(copy, raw, second + 7u);
    copy[second + 6] = 20;
    decode(copy, second + 7u, true, 4096);
    ok(strstr(res.last_error, "ends inside a record") != NULL, "a %%s running past the end: %s", res.last_error);
    save("strlen_past_end.raw", copy, second + 7u);
}

static void test_damaged_frames(void)
{
    size_t len = record(300);
    static uint8_t copy[1u << 20];
    memcpy(copy, stream, len);
    copy[len / 2u] ^= 0x5A; /* somewhere in a data frame */
    if (copy[len / 2u] == 0)
        copy[len / 2u] = 0x5A;
    decode(copy, len, false, 4096);
    ok(res.errors >= 1, "a damaged frame is reported: %s", res.last_error);
    ok(res.lost >= 1 || res.records < 300, "its bytes are missing where they were");
    ok(res.records > 200, "the rest decodes (%u records)", res.records);
    save("damaged.embl", copy, len);
}

int main(int argc, char **argv)
{
    outdir = argc > 1 ? argv[1] : NULL;
    char err[256];
    db = emb_logdb_open("/proc/self/exe", err, sizeof err);
    ok(db != NULL, "this test's own log metadata: %s", db ? "read" : err);
    if (db == NULL)
        return emb_test_done();
    identity.build_id = db->build_id;
    identity.build_id_len = (uint8_t)db->build_id_len;
    test_good();
    test_truncated();
    test_joined();
    test_random();
    test_build_id();
    test_forged_records();
    test_damaged_frames();
    emb_logdb_free(db);
    return emb_test_done();
}
