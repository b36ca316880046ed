/* The capture file (docs/formats/capture.md): the golden file decodes field by field and
 * is what the encoder writes today; every flipped byte, every truncation, an unknown
 * version, a wrong catalogue, a contradicting identity are refused with their offset.
 *
 * `test_capture --write-golden FILE` writes the golden file (tests/support/golden/README.md). */
#define _GNU_SOURCE

#include "recorder.h"

#include <emb/crc.h>
#include <emb/wire.h>

#include "harness.h"

static const char LOG_BYTES[] = "opaque log stream bytes, kept as they are";

/* Two contexts, window armed at frame 2, frames 0..5, a timer interrupt on main. */
static uint8_t *golden_capture(size_t *len)
{
    static const char *const names[] = {"main", "link"};
    static const uint32_t packets[] = {4, 4};
    struct rec r;
    rec_begin(&r, 2, names, packets, 2, 3);
    for (uint32_t f = 0; f < 6; f++) {
        uint64_t T = 1000000ull * (f + 1);
        rec_frame(&r, T, f);
        rec_isr_enter(&r, 0, T + 100000, 11);
        EMB_TRACE_tick(f);
        rec_isr_exit(&r, 0, T + 101000, 11);
        rec_at(&r, 0, T + 200000);
        EMB_TRACE_user_event(1, f, 1);
        rec_at(&r, 0, T + 300000);
        EMB_TRACE_frame_end(f);
        rec_at(&r, 1, T + 400000);
        EMB_TRACE_user_event(3, f, 16384);
    }
    size_t slen;
    uint8_t *stream = rec_stream(&r, "golden 1.0", "alloc=tlsf stall-frame=612", 0x5EED0001u, &slen);
    uint8_t *cap = rec_seal(stream, slen, "good", (const uint8_t *)LOG_BYTES, sizeof LOG_BYTES - 1, len);
    free(stream);
    return cap;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static struct emb_capture *decode(const uint8_t *b, size_t n, const char **msg, long long *off)
{
    struct emb_capture_options o = {.catalog = emb_catalog_builtin(), .name = "t"};
    struct emb_capture *c = emb_capture_decode(b, n, &o);
    if (!emb_capture_failed(c, off, msg))
        *msg = NULL;
    return c;
}

/* Rewrites the CRC after an edit, so a check past the CRC is reached. */
static void reseal(uint8_t *b, size_t n)
{
    emb_put_le32(b + n - 4, emb_crc32(0, b, n - 4));
}

static void expect_refused(const uint8_t *b, size_t n, const char *what, const char *text)
{
    const char *msg;
    long long off;
    struct emb_capture *c = decode(b, n, &msg, &off);
    ok(msg && strstr(msg, text), "%s: refused, says '%s' (%s, byte %lld)", what, text, msg ? msg : "accepted", off);
    emb_capture_free(c);
}

static void test_golden(void)
{
    size_t glen, len;
    uint8_t *g = read_file(EMB_GOLDEN_DIR "/capture_v1.emb", &glen);
    ok(g != NULL, "the golden file is there");
    if (!g)
        return;
    const char *msg;
    long long off;
    struct emb_capture *c = decode(g, glen, &msg, &off);
    ok(!msg, "the golden file decodes (%s)", msg ? msg : "ok");
    if (!msg) {
        const struct emb_capture_identity *id = emb_capture_identity(c);
        ok(!strcmp(id->label, "good") && !strcmp(id->revision, "0123456789abcdef"), "label and revision");
        ok(!strcmp(id->firmware, "golden 1.0") && !strcmp(id->config, "alloc=tlsf stall-frame=612"),
           "firmware version and configuration flags, as the firmware stamped them");
        ok_eq(id->session_id, 0x5EED0001u, "session id");
        ok_eq(id->clock_hz, 1000000000u, "clock");
        ok(id->build_id_len == 8 && id->build_id[0] == 0xB0 && id->build_id[7] == 0x01, "build id");
        ok(!strcmp(id->port, "test") && id->pointer_size == 4, "port and pointer size");
        ok_eq(id->catalog_checksum, EMB_TRACE_CATALOG_CHECKSUM, "catalogue checksum");
        const struct emb_capture_window *w = emb_capture_window(c);
        ok_eq(w->armed_frame, 2, "armed frame");
        ok_eq(w->capacity, 4 * CONFIG_EMB_TRACE_PACKET_SIZE, "capacity: the ring's bytes");
        /* frames 2..5: main records window_armed once, then per frame frame_start,
         * irq_enter, tick, irq_exit, user_event, frame_end; link one user_event */
        ok_eq(w->stored, 1 + 4 * 6 + 4, "events stored");
        ok(w->drops == 0 && w->writes == w->stored && w->nrows == 2, "no drops, two contexts");
        ok(!strcmp(w->rows[1].name, "link") && w->rows[1].events == 4, "context rows");
        size_t n;
        const struct emb_capture_section *s = emb_capture_sections(c, &n);
        ok(n == 5 && s[0].type == EMB_CAP_SEC_IDENTITY && s[1].type == EMB_CAP_SEC_WINDOW &&
           s[2].type == EMB_CAP_SEC_METADATA && s[3].type == EMB_CAP_SEC_TRACE &&
           s[4].type == EMB_CAP_SEC_LOG, "sections in order");
        ok(s[4].length == sizeof LOG_BYTES - 1 && !memcmp(s[4].data, LOG_BYTES, s[4].length),
           "the log section holds its bytes unchanged");
        ok(s[2].length > 100 && !memcmp(s[2].data, "/* CTF 1.8", 10), "CTF metadata");
        ok_eq(emb_trace_summary(emb_capture_trace(c))->events, w->stored, "the trace decodes");
    }
    emb_capture_free(c);
    uint8_t *now = golden_capture(&len);
    ok(len == glen && !memcmp(now, g, len), "the encoder writes the golden file byte for byte");
    ok(emb_get_le32(g + glen - 4) == emb_crc32(0, g, glen - 4),
       "its CRC is the target's CRC-32 (include/emb/crc.h) too");
    free(now);
    free(g);
}

static void test_bad_input(void)
{
    size_t n;
    uint8_t *b = golden_capture(&n);
    uint8_t *m = malloc(n);
    const char *msg;
    long long off;

    size_t accepted = 0, crashed_offsets = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(m, b, n);
        m[i] ^= 0xFF;
        struct emb_capture *c = decode(m, n, &msg, &off);
        accepted += msg == NULL;
        crashed_offsets += msg && off > (long long)n;
        emb_capture_free(c);
    }
    ok(accepted == 0, "every one of the %zu byte flips is refused (%zu accepted)", n, accepted);
    ok(crashed_offsets == 0, "and every refusal names an offset inside the file");

    size_t trunc_ok = 0;
    for (size_t len = 0; len < n; len++) {
        struct emb_capture *c = decode(b, len, &msg, &off);
        trunc_ok += msg && (strstr(msg, "truncated") || strstr(msg, "magic"));
        emb_capture_free(c);
    }
    ok(trunc_ok == n, "every truncation is refused as truncated (%zu of %zu)", trunc_ok, n);

    memcpy(m, b, n);
    m[EMB_CAP_OFF_VERSION] = 2;
    reseal(m, n);
    expect_refused(m, n, "version 2", "capture version 2 is not supported (this tool reads version 1)");

    memcpy(m, b, n);
    size_t id_body = EMB_CAP_HEADER_SIZE + EMB_CAP_SEC_HEADER_SIZE;
    emb_put_le32(m + id_body + EMB_CAP_ID_OFF_CATALOG, 0x12345678);
    reseal(m, n);
    char want[160];
    snprintf(want, sizeof want, "catalogue checksum 0x12345678 differs from the tool's catalogue 0x%08x",
             (unsigned)EMB_TRACE_CATALOG_CHECKSUM);
    expect_refused(m, n, "a wrong catalogue checksum (both printed)", want);

    memcpy(m, b, n);
    m[id_body + EMB_CAP_ID_OFF_CONFIG] = 'X';
    reseal(m, n);
    expect_refused(m, n, "flags edited in the identity", "disagree");

    memcpy(m, b, n);
    m[n - 1] ^= 1;
    expect_refused(m, n, "a CRC changed", "CRC-32 mismatch");

    memcpy(m, b, n);
    emb_put_le64(m + EMB_CAP_OFF_LENGTH, n + 8);
    reseal(m, n);
    expect_refused(m, n, "a length beyond the file", "truncated");

    uint8_t *longer = malloc(n + 8);
    memcpy(longer, b, n);
    memset(longer + n, 0, 8);
    expect_refused(longer, n + 8, "bytes after the end", "follow the");
    free(longer);

    uint8_t embt[8];
    emb_put_le32(embt, EMB_TSF_MAGIC);
    emb_put_le32(embt + 4, 1);
    expect_refused(embt, sizeof embt, "a trace stream file", "seal it with 'emb capture'");
    expect_refused(b, 0, "an empty file", "truncated");
    free(m);
    free(b);
}

static void test_unknown_section(void)
{
    size_t slen, n;
    static const char *const names[] = {"main"};
    struct rec r;
    rec_begin(&r, 1, names, NULL, UINT32_MAX, 5);
    rec_frame(&r, 1000, 0);
    uint8_t *stream = rec_stream(&r, "fw", "", 1, &slen);
    const struct emb_catalog *cat = emb_catalog_builtin();
    struct emb_trace_options to = {.catalog = cat};
    struct emb_trace *t = emb_trace_decode(stream, slen, &to);
    struct emb_capture_parts p;
    memset(&p, 0, sizeof p);
    emb_capture_describe(t, "x", NULL, &p.identity, &p.window);
    char *meta = emb_capture_metadata(t, &p.metadata_len);
    p.metadata = meta;
    p.trace = stream;
    p.trace_len = slen;
    p.opaque[p.nopaque++] = (struct emb_capture_section){.type = 99, .version = 7,
                                                     .data = (const uint8_t *)"abc", .length = 3};
    p.opaque[p.nopaque++] = (struct emb_capture_section){.type = EMB_CAP_SEC_CRASH, .version = 1,
                                                     .data = (const uint8_t *)"crash", .length = 5};
    char err[64];
    uint8_t *b = emb_capture_encode(&p, &n, err, sizeof err);
    const char *msg;
    long long off;
    struct emb_capture *c = decode(b, n, &msg, &off);
    ok(!msg && emb_capture_section(c, 99) && emb_capture_section(c, 99)->length == 3,
       "a section type the tool does not know is kept and skipped");
    ok(emb_capture_section(c, EMB_CAP_SEC_CRASH) && !memcmp(emb_capture_section(c, EMB_CAP_SEC_CRASH)->data, "crash", 5),
       "the crash section holds its bytes");
    ok(emb_capture_window(c)->armed_frame == EMB_CAP_NO_FRAME, "a stream is not an armed window");
    emb_capture_free(c);
    /* a second identity section */
    p.opaque[0].type = EMB_CAP_SEC_LOG;
    p.opaque[0].version = 1;
    p.opaque[1].type = EMB_CAP_SEC_LOG;
    free(b);
    b = emb_capture_encode(&p, &n, err, sizeof err);
    expect_refused(b, n, "two log sections", "a second log section");
    p.opaque[0].type = EMB_CAP_SEC_TRACE;
    ok(emb_capture_encode(&p, &n, err, sizeof err) == NULL, "the encoder refuses a second trace section");
    free(b);
    free(meta);
    free(p.window.rows);
    emb_trace_free(t);
    free(stream);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-golden")) {
        size_t n;
        uint8_t *b = golden_capture(&n);
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0)
            return 2;
        free(b);
        return 0;
    }
    test_golden();
    test_bad_input();
    test_unknown_section();
    return emb_test_done();
}
