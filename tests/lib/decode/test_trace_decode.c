/* The trace stream decoder on hand-built streams: every field, every loss, every kind of
 * bad input, and random bytes. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "trace_builder.h"
#include "stream_kind.h"
#include "trace_decode.h"

static const struct emb_catalog *cat;

static const struct tb_ctx two_ctx[] = {
    {.id = 0, .kind = EMB_CONTEXT_THREAD, .name = "main"},
    {.id = 5, .kind = EMB_CONTEXT_THREAD, .name = "audio"},
};

static struct emb_trace *decode(const struct tb *b)
{
    struct emb_trace_options o = {.catalog = cat, .name = "t.embt"};
    struct emb_trace *t = emb_trace_decode(b->buf, b->len, &o);
    if (!t)
        abort();
    return t;
}

static uint64_t field_u(const struct emb_trace_event *e, const char *name)
{
    for (size_t i = 0; e->ev && i < e->ev->nfields; i++)
        if (!strcmp(e->ev->fields[i].name, name))
            return emb_catalog_field_get_uint(&e->ev->fields[i], e->payload);
    return 0xDEADBEEF;
}

/* True when some issue's message contains `text` (and, if offset >= 0, is at offset). */
static bool has_issue(const struct emb_trace *t, long long offset, const char *text)
{
    const struct emb_problems *ps = emb_trace_problems(t);
    for (size_t i = 0; i < ps->n; i++)
        if (strstr(ps->items[i].message, text) && (offset < 0 || ps->items[i].offset == offset))
            return true;
    for (size_t i = 0; i < ps->n; i++)
        diag("issue at %lld: %s", ps->items[i].offset, ps->items[i].message);
    return false;
}

/* Two contexts, three packets, ISR flags, every record merged in time. */
static void test_valid(void)
{
    struct tb b;
    tb_begin(&b, cat->checksum, 256, 1000000000u, 1700000000000000000LL, two_ctx, 2);
    tb_open(&b, 0, EMB_CONTEXT_THREAD, 0, 1000);
    tb_event(&b, cat, 1000, 0, "switch", TB_V(1, 2, 1));
    tb_event(&b, cat, 1010, tb_isr(1), "irq_enter", TB_V(11));
    tb_event(&b, cat, 1030, tb_isr(1), "irq_exit", TB_V(11, 1));
    tb_close(&b, 1040, 0);
    tb_open(&b, 5, EMB_CONTEXT_THREAD, 0, 1005);
    tb_event(&b, cat, 1020, 0, "msgq_send", TB_V(0x1234, 8, 3));
    tb_event(&b, cat, 1030, 0, "obj_init", TB_V(3, 0x1234, (uintptr_t)"audio_q"));
    tb_close(&b, 1050, 0);
    tb_open(&b, 0, EMB_CONTEXT_THREAD, 1, 1040);
    tb_event(&b, cat, 1060, 0, "frame_start", TB_V(7));
    tb_event(&b, cat, 1061, 0, "idle_enter", NULL);
    tb_close(&b, 1070, 0);

    struct emb_trace *t = decode(&b);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    ok(!s->fatal && s->errors == 0, "valid stream decodes without issues");
    ok_eq(s->events, 7, "7 events");
    ok_eq(s->packets, 3, "3 packets");
    ok_eq(emb_trace_context_count(t), 2, "2 contexts");
    ok(!strcmp(emb_trace_context(t, 1)->name, "audio"), "context name from the table");
    ok_eq(emb_trace_context(t, 0)->events, 5, "main has 5 events");
    ok_eq(emb_trace_info(t)->start_ts, 1000, "trace start is the earliest timestamp_begin");
    ok(!strcmp(emb_trace_info(t)->port, "test"), "port name");
    ok_eq(emb_trace_info(t)->build_id_len, 4, "build id length");

    size_t n;
    const struct emb_trace_event *const *e = emb_trace_events(t, &n);
    ok_eq(n, 7, "7 merged records");
    static const char *const order[] = {"switch", "irq_enter", "msgq_send", "irq_exit",
                                        "obj_init", "frame_start", "idle_enter"};
    bool in_order = n == 7;
    for (size_t i = 0; in_order && i < n; i++) {
        in_order = e[i]->ev && !strcmp(e[i]->ev->name, order[i]);
        if (i && e[i]->ts < e[i - 1]->ts)
            in_order = false;
    }
    ok(in_order, "merged by time; a tie keeps context order (irq_exit, ctx 0, before obj_init)");
    if (n == 7) {
        ok_eq(field_u(e[0], "from"), 1, "switch.from");
        ok_eq(field_u(e[0], "to"), 2, "switch.to");
        ok_eq(e[0]->ns, 0, "first event at ns 0");
        ok_eq(e[1]->kind, EMB_EVT_KIND_ISR, "irq_enter is from an ISR");
        ok_eq(e[1]->depth, 1, "at depth 1");
        ok_eq(e[1]->ns, 10, "ns since start");
        ok_eq(e[2]->context_id, 5, "msgq_send on ctx 5");
        ok_eq(field_u(e[2], "used"), 3, "msgq_send.used");
        ok_eq(e[0]->wall_ns, 1700000000000001000LL, "wall clock = offset + ns");
        ok_eq(e[6]->ev->nfields, 0, "idle_enter has no fields");
        ok_eq(e[2]->offset, 112 + 2 * 32 + 256 + 64, "event offset in the file");
        char buf[64];
        const struct emb_catalog_field *f = &e[4]->ev->fields[2];
        ok(!strcmp(emb_trace_field_text(f, e[4]->payload, buf, sizeof buf), "\"audio_q\""),
           "char[16] as quoted text: %s", buf);
        f = &e[4]->ev->fields[0];
        ok(!strcmp(emb_trace_field_text(f, e[4]->payload, buf, sizeof buf), "queue"),
           "enum label: %s", buf);
        f = &e[4]->ev->fields[1];
        ok(!strcmp(emb_trace_field_text(f, e[4]->payload, buf, sizeof buf), "0x00001234"),
           "hex padded to the field size: %s", buf);
        f = &e[3]->ev->fields[1];
        ok(!strcmp(emb_trace_field_text(f, e[3]->payload, buf, sizeof buf), "true"),
           "bool: %s", buf);
        f = &e[0]->ev->fields[2];
        ok(!strcmp(emb_trace_field_text(f, e[0]->payload, buf, sizeof buf), "block"),
           "switch reason label: %s", buf);
    }
    size_t np;
    const struct emb_trace_packet *pk = emb_trace_packets(t, &np);
    ok(np == 3 && pk[0].clean && pk[1].clean && pk[2].clean, "3 clean packets");
    emb_trace_free(t);
    free(b.buf);
}

/* 32-bit event timestamps unwrap across 2^32 inside a packet. */
static void test_unwrap(void)
{
    struct tb b;
    uint64_t base = 0x2FFFFFF00ull;
    tb_begin(&b, cat->checksum, 256, 1000000000u, 0, two_ctx, 1);
    tb_open(&b, 0, 0, 0, base);
    tb_event(&b, cat, base + 0xF0, 0, "tick", TB_V(1));
    tb_event(&b, cat, base + 0x110, 0, "tick", TB_V(2)); /* low word wrapped */
    tb_event(&b, cat, base + 0x110, 0, "tick", TB_V(3)); /* equal: no wrap */
    tb_close(&b, base + 0x200, 0);
    struct emb_trace *t = decode(&b);
    size_t n;
    const struct emb_trace_event *const *e = emb_trace_events(t, &n);
    ok(n == 3 && e[0]->ts == base + 0xF0 && e[1]->ts == base + 0x110 && e[2]->ts == base + 0x110,
       "timestamps unwrap against the previous event");
    ok(n == 3 && e[1]->ns == 0x110, "ns since start across the wrap");
    ok(emb_trace_summary(t)->errors == 0, "no issues");
    emb_trace_free(t);
    free(b.buf);
}

/* Lost packets (seq gaps) and discarded events (running totals, then the table's final). */
static void test_losses(void)
{
    struct tb b;
    struct tb_ctx c[] = {{.id = 2, .kind = 1, .discarded = 15, .packets = 6, .name = "audio"},
                         {.id = 0xFFFF, .discarded = 4, .name = "none"}};
    tb_begin(&b, cat->checksum, 256, 1000000000u, 0, c, 2);
    tb_open(&b, 2, 1, 0, 100);
    tb_event(&b, cat, 110, 0, "tick", TB_V(1));
    tb_close(&b, 120, 0);
    /* Fewer discarded events than missing packets: the gap is not the ring's own
     * overwrite (each overwritten packet held an event), so the packets were lost. */
    tb_open(&b, 2, 1, 3, 200);
    tb_event(&b, cat, 210, 0, "tick", TB_V(2));
    tb_close(&b, 220, 1);
    tb_open(&b, 2, 1, 4, 300);
    tb_event(&b, cat, 310, 0, "tick", TB_V(3));
    tb_close(&b, 320, 12);
    struct emb_trace *t = decode(&b);
    const struct emb_trace_context *ctx = emb_trace_context(t, 0);
    ok_eq(emb_trace_context_count(t), 1, "the 0xFFFF pseudo-context is not a context");
    ok_eq(emb_trace_summary(t)->lost_no_context, 4, "lost for want of a ring: 4");
    ok_eq(ctx->lost_packets, 2, "seq 0 then 3: 2 packets lost");
    ok_eq(ctx->discarded, 15, "discarded: the table's final total");
    ok_eq(ctx->table_packets, 6, "packets opened, from the table");
    ok_eq(emb_trace_summary(t)->errors, 0, "losses are not errors");
    size_t n;
    const struct emb_trace_event *const *e = emb_trace_events(t, &n);
    /* tick, LOST(2) @200, tick, DISCARDED(1) @220, tick, DISCARDED(11) @320,
     * DISCARDED(3) */
    ok_eq(n, 7, "3 events and 4 markers");
    if (n == 7) {
        ok(e[1]->type == EMB_TREC_LOST && e[1]->count == 2 && e[1]->ts == 200,
           "lost marker before the packet after the gap");
        ok(e[3]->type == EMB_TREC_DISCARDED && e[3]->count == 1 && e[3]->ts == 220,
           "discarded marker at the close of the packet that counted them");
        ok(e[5]->type == EMB_TREC_DISCARDED && e[5]->count == 11 && e[5]->ts == 320,
           "and at the next");
        ok(e[6]->type == EMB_TREC_DISCARDED && e[6]->count == 3,
           "drops after the last packet, from the table");
        ok(e[4]->type == EMB_TREC_EVENT && field_u(e[4], "count") == 3, "events go on");
    }
    emb_trace_free(t);
    free(b.buf);
}

/* A streaming ring whose consumer fell behind overwrites its oldest unread packets; the
 * reader raises the next packet's events_discarded by their events (at least one each),
 * so the gap is the ring's, its events discarded, not packets lost on the way. */
static void test_overwritten(void)
{
    struct tb b;
    struct tb_ctx c[] = {{.id = 2, .kind = 1, .name = "audio"}};
    tb_begin(&b, cat->checksum, 256, 1000000000u, 0, c, 1);
    tb_open(&b, 2, 1, 0, 100);
    tb_event(&b, cat, 110, 0, "tick", TB_V(1));
    tb_close(&b, 120, 0);
    tb_open(&b, 2, 1, 3, 200);
    tb_event(&b, cat, 210, 0, "tick", TB_V(2));
    tb_close(&b, 220, 5);
    struct emb_trace *t = decode(&b);
    const struct emb_trace_context *ctx = emb_trace_context(t, 0);
    ok_eq(ctx->lost_packets, 0, "an overwrite gap is not a loss on the way");
    ok_eq(ctx->overwritten_packets, 2, "two packets overwritten");
    ok_eq(emb_trace_summary(t)->overwritten_packets, 2, "summed");
    ok_eq(ctx->discarded, 5, "their events discarded");
    size_t n;
    const struct emb_trace_event *const *e = emb_trace_events(t, &n);
    ok(n == 3 && e[0]->type == EMB_TREC_EVENT && e[1]->type == EMB_TREC_EVENT &&
           e[2]->type == EMB_TREC_DISCARDED && e[2]->count == 5,
       "one discarded marker, no lost marker");
    emb_trace_free(t);
    free(b.buf);
}

/* Three packets, the middle one broken in the given way. Returns the middle's offset. */
static size_t three_packets(struct tb *b)
{
    tb_begin(b, cat->checksum, 256, 1000000000u, 0, two_ctx, 2);
    for (uint32_t i = 0; i < 3; i++) {
        tb_open(b, 0, 1, i, 100 * i + 100);
        tb_event(b, cat, 100 * i + 110, 0, "tick", TB_V(i));
        tb_event(b, cat, 100 * i + 120, 0, "tick", TB_V(i + 10));
        tb_close(b, 100 * i + 150, 0);
    }
    return EMB_TSF_FIXED_SIZE + 2 * EMB_TSF_CONTEXT_SIZE + 256;
}

static void expect_skip(const char *what, size_t field_off, uint32_t value, const char *message)
{
    struct tb b;
    size_t mid = three_packets(&b);
    emb_put_le32(b.buf + mid + field_off, value);
    struct emb_trace *t = decode(&b);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    ok(!s->fatal && s->events == 4 && s->bad_packets == 1,
       "%s: the packets around it still decode (%llu events)", what,
       (unsigned long long)s->events);
    ok(has_issue(t, (long long)mid, message), "%s: reported at byte %zu", what, mid);
    emb_trace_free(t);
    free(b.buf);
}

static void test_bad_packets(void)
{
    expect_skip("bad magic", EMB_PKT_OFF_MAGIC, 0x12345678, "bad packet magic 0x12345678");
    expect_skip("wrong uuid", EMB_PKT_OFF_UUID + 4, 0, "uuid");
    expect_skip("stream id", EMB_PKT_OFF_STREAM_ID, 1, "stream_id 1");
    expect_skip("instance", EMB_PKT_OFF_INSTANCE, 9, "stream_instance_id 9");
    expect_skip("packet size", EMB_PKT_OFF_PACKET_SIZE, 8 * 512, "packet_size 4096 bits");
    expect_skip("content size too big", EMB_PKT_OFF_CONTENT_SIZE, 8 * 256 + 32, "content_size");
    expect_skip("content size too small", EMB_PKT_OFF_CONTENT_SIZE, 8 * 60, "content_size");
    expect_skip("content size unaligned", EMB_PKT_OFF_CONTENT_SIZE, 8 * 66, "content_size");
    expect_skip("end before begin", EMB_PKT_OFF_TS_END, 5, "timestamp_end 5");

    /* An event past the content end: the events before it stay. */
    struct tb b;
    size_t mid = three_packets(&b);
    /* tick is 12 bytes: the second tick at 76 becomes a 20-byte user_event, content 88 */
    emb_put_le16(b.buf + mid + 76 + 4, emb_catalog_find(cat, "user_event")->id);
    struct emb_trace *t = decode(&b);
    ok_eq(emb_trace_summary(t)->events, 5, "event past the content end: earlier events kept");
    ok(has_issue(t, (long long)(mid + 76), "runs past the content end"), "and reported there");
    size_t np;
    const struct emb_trace_packet *pk = emb_trace_packets(t, &np);
    ok(np == 3 && !pk[1].clean && pk[0].clean && pk[2].clean, "only that packet is unclean");
    emb_trace_free(t);
    free(b.buf);

    /* timestamp_end before the last event. */
    mid = three_packets(&b);
    emb_put_le64(b.buf + mid + EMB_PKT_OFF_TS_END, 215);
    emb_put_le64(b.buf + mid + EMB_PKT_OFF_TS_BEGIN, 200);
    t = decode(&b);
    ok(has_issue(t, (long long)(mid + EMB_PKT_OFF_TS_END), "before the packet's last event"),
       "timestamp_end before the last event is reported");
    emb_trace_free(t);
    free(b.buf);

    /* Bad flags. */
    mid = three_packets(&b);
    emb_put_le16(b.buf + mid + 64 + 6, 0x0100);
    t = decode(&b);
    ok(has_issue(t, (long long)(mid + 64 + 6), "flags 0x0100"), "reserved flag bits");
    ok_eq(emb_trace_summary(t)->events, 4, "the bad packet's events are not trusted after it");
    emb_trace_free(t);
    free(b.buf);

    /* A packet out of order in its context. */
    mid = three_packets(&b);
    emb_put_le32(b.buf + mid + EMB_PKT_OFF_SEQ, 0);
    t = decode(&b);
    ok(has_issue(t, (long long)(mid + EMB_PKT_OFF_SEQ), "does not follow"), "repeated seq");
    ok_eq(emb_trace_summary(t)->events, 4, "the repeated packet is skipped");
    emb_trace_free(t);
    free(b.buf);
}

static void test_unknown_event(void)
{
    struct tb b;
    size_t mid = three_packets(&b);
    emb_put_le16(b.buf + mid + 76 + 4, 0xFFF0);
    struct emb_trace *t = decode(&b);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    ok_eq(s->events, 5, "events before the unknown id and in other packets decode");
    ok_eq(s->unknown, 1, "one unknown");
    ok(has_issue(t, (long long)(mid + 76), "unknown event id 0xfff0"), "reported at its offset");
    size_t n;
    const struct emb_trace_event *const *e = emb_trace_events(t, &n);
    ok(n == 6 && e[3]->type == EMB_TREC_UNKNOWN && e[3]->id == 0xFFF0 &&
           e[3]->payload_size == 4,
       "a placeholder with the raw bytes to the content end");
    emb_trace_free(t);
    free(b.buf);
}

static void test_truncated(void)
{
    struct tb b;
    three_packets(&b);
    b.len -= 100;
    struct emb_trace *t = decode(&b);
    ok_eq(emb_trace_summary(t)->events, 4, "truncated: the first two packets decode");
    ok(has_issue(t, (long long)(b.len - 156), "truncated packet: 156 of 256 bytes"),
       "truncated final packet reported");
    emb_trace_free(t);
    b.len = EMB_TSF_FIXED_SIZE + 2 * EMB_TSF_CONTEXT_SIZE + 256 + 40;
    t = decode(&b);
    ok(has_issue(t, -1, "truncated packet: 40 of 256"),
       "a cut packet header is reported");
    ok_eq(emb_trace_summary(t)->events, 2, "and the first packet decodes");
    emb_trace_free(t);
    b.len = 50;
    t = decode(&b);
    ok(emb_trace_summary(t)->fatal && has_issue(t, 50, "truncated header: 50 of 112"),
       "truncated header");
    emb_trace_free(t);
    free(b.buf);
}

static void expect_fatal(const char *what, size_t off, unsigned width, uint64_t value,
                         const char *message)
{
    struct tb b;
    three_packets(&b);
    if (width == 1)
        b.buf[off] = (uint8_t)value;
    else if (width == 2)
        emb_put_le16(b.buf + off, (uint16_t)value);
    else if (width == 4)
        emb_put_le32(b.buf + off, (uint32_t)value);
    else
        emb_put_le64(b.buf + off, value);
    struct emb_trace *t = decode(&b);
    ok(emb_trace_summary(t)->fatal && emb_trace_summary(t)->events == 0, "%s: refused", what);
    ok(has_issue(t, -1, message), "%s: says '%s'", what, message);
    emb_trace_free(t);
    free(b.buf);
}

static void test_bad_header(void)
{
    char msg[128];
    expect_fatal("magic", 0, 4, 0x464C457F, "not a trace stream file: magic 0x464c457f");
    expect_fatal("bare packet", 0, 4, EMB_PKT_MAGIC, "bare CTF packet");
    expect_fatal("version", EMB_TSF_OFF_VERSION, 2, 3, "version 3 is not supported");
    expect_fatal("version 2 without a seal", EMB_TSF_OFF_VERSION, 2, 2, "without its SEAL block");
    expect_fatal("header size", EMB_TSF_OFF_HEADER_SIZE, 2, 120, "header size 120");
    expect_fatal("header size beyond file", EMB_TSF_OFF_HEADER_SIZE, 2, 60000, "truncated header");
    expect_fatal("contexts", EMB_TSF_OFF_CONTEXT_COUNT, 2, 1025, "context count 1025 exceeds 1024");
    expect_fatal("build id", EMB_TSF_OFF_BUILD_ID_LEN, 1, 33, "build id length 33 exceeds 32");
    expect_fatal("packet size", EMB_TSF_OFF_PACKET_SIZE, 4, 300, "packet size 300");
    expect_fatal("packet size small", EMB_TSF_OFF_PACKET_SIZE, 4, 128, "packet size 128");
    expect_fatal("packet size big", EMB_TSF_OFF_PACKET_SIZE, 4, 131072, "packet size 131072");
    expect_fatal("clock", EMB_TSF_OFF_CLOCK_HZ, 8, 0, "clock frequency is 0");
    snprintf(msg, sizeof msg, "catalogue checksum 0x12345678 differs from the catalogue's 0x%08x",
             (unsigned)cat->checksum);
    expect_fatal("checksum", EMB_TSF_OFF_CATALOG, 4, 0x12345678, msg);

    struct tb b;
    three_packets(&b);
    emb_put_le32(b.buf + EMB_TSF_OFF_CATALOG, 0x12345678);
    struct emb_trace_options o = {.catalog = cat, .ignore_checksum = true};
    struct emb_trace *t = emb_trace_decode(b.buf, b.len, &o);
    ok(!emb_trace_summary(t)->fatal && emb_trace_summary(t)->events == 6,
       "ignore_checksum decodes anyway (and still reports it)");
    emb_trace_free(t);
    o.base_offset = 1000;
    emb_put_le32(b.buf + EMB_TSF_OFF_MAGIC, 0);
    t = emb_trace_decode(b.buf, b.len, &o);
    ok(has_issue(t, 1000, "magic"), "offsets count from base_offset");
    emb_trace_free(t);
    t = emb_trace_decode(NULL, 0, &o);
    ok(t && emb_trace_summary(t)->fatal, "an empty input is refused");
    emb_trace_free(t);
    free(b.buf);

    o.base_offset = 0;
    o.name = NULL;
    t = emb_trace_decode_file("/nonexistent/trace.embt", &o);
    ok(t && emb_trace_summary(t)->fatal && has_issue(t, -1, "cannot open"),
       "a missing file is a fatal issue");
    ok(t && !strcmp(emb_trace_name(t), "/nonexistent/trace.embt"), "named by its path");
    emb_trace_free(t);
}

/* A context that is not in the table gets a name; ties within a context keep ring order. */
static void test_contexts(void)
{
    struct tb b;
    tb_begin(&b, cat->checksum, 256, 32768, 0, NULL, 0);
    tb_open(&b, 7, 0, 0, 0);
    tb_event(&b, cat, 32768, 0, "tick", TB_V(1));
    tb_event(&b, cat, 32768, 0, "tick", TB_V(2));
    tb_close(&b, 32768 * 2, 0);
    struct emb_trace *t = decode(&b);
    ok(emb_trace_context_count(t) == 1 && !strcmp(emb_trace_context(t, 0)->name, "ctx 7"),
       "an unlisted context is named 'ctx 7'");
    ok_eq(emb_trace_context_index(t, 7), 0, "indexed by id");
    ok_eq(emb_trace_context_index(t, 8), -1, "unknown id");
    size_t n;
    const struct emb_trace_event *const *e = emb_trace_events(t, &n);
    ok(n == 2 && field_u(e[0], "count") == 1 && field_u(e[1], "count") == 2,
       "equal timestamps keep ring order");
    ok(n == 2 && e[0]->ns == 1000000000u, "32768 Hz ticks to ns");
    emb_trace_free(t);
    free(b.buf);

    ok_eq(emb_trace_ticks_to_ns(3, 3), 1000000000, "3 ticks at 3 Hz");
    ok_eq(emb_trace_ticks_to_ns(UINT64_MAX, 1000000000u), UINT64_MAX, "1 GHz is identity");
    ok_eq(emb_trace_ticks_to_ns(25000001, 25000000), 1000000040, "25 MHz");
    ok_eq(emb_trace_ticks_to_ns(40000000000ull, 40000000000ull), 1000000000, "40 GHz");
}

/* The clock's multiply and shift against the exact 128-bit floor(ticks * 1e9 / hz) (what
 * emb_trace_ticks_to_ns computes by division), for random and boundary tick counts. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;

static uint64_t exact_ns(uint64_t ticks, uint64_t hz)
{
    return hz == 0 ? ticks : (uint64_t)((u128)ticks * 1000000000u / hz);
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* A tick count: uniform over 64 bits, below a random power of two, near 2^64 or near a
 * multiple of hz. */
static uint64_t pick_ticks(uint64_t *s, uint64_t hz)
{
    uint64_t r = next_random(s), k = r >> 8;
    switch (r & 3u) {
    case 0: return k;
    case 1: return k >> (r >> 2 & 63u);
    case 2: return UINT64_MAX - (r >> 2 & 255u);
    default: return (k >> 40) * hz + (uint64_t)(int64_t)(int8_t)(r >> 2);
    }
}

static bool clock_matches(uint64_t hz, uint64_t *s)
{
    struct emb_trace_clock c;
    uint64_t start = next_random(s) >> (next_random(s) & 63u);
    int64_t offset = (int64_t)next_random(s);
    emb_trace_clock_init(&c, hz, start, offset);
    for (int i = 0; i < 200000; i++) {
        uint64_t x = pick_ticks(s, hz), ns;
        int64_t wall;
        if (emb_trace_clock_ns(&c, x) != exact_ns(x, hz))
            return diag("%" PRIu64 " Hz: %" PRIu64 " ticks", hz, x), false;
        uint64_t ts = i & 1 ? start + x : x;
        emb_trace_clock_times(&c, ts, &ns, &wall);
        if (ns != exact_ns(ts - start, hz) ||
            (uint64_t)wall != (uint64_t)offset + exact_ns(ts, hz))
            return diag("%" PRIu64 " Hz: ts %" PRIu64 " from %" PRIu64, hz, ts, start), false;
    }
    return true;
}

static void test_clock(void)
{
    static const uint64_t rates[] = {32768u, 16000000u, 2100000000u, 1000000000u, 3u,
                                     25000000u, 40000000000ull, 1u, 0u, 999999937u,
                                     UINT64_MAX, 0x8000000000000001ull};
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        ok(clock_matches(rates[i], &s), "%" PRIu64 " Hz: equal to the 128-bit division",
           rates[i]);
    }
    struct emb_trace_clock c; /* 1e9 / 32768 = 30517.578125, 0.578125 = 0x94 / 2^8 */
    emb_trace_clock_init(&c, 32768u, 0, 0);
    ok(c.whole == 30517u && c.frac_hi == 0x9400000000000000ull && c.frac_lo == 0,
       "32768 Hz: 30517 and 0.578125 ns a tick");
}
#else
static void test_clock(void)
{
    ok(true, "no 128-bit integers: the clock always divides");
}
#endif

/* Random and mutated input: never a crash, never an event outside the input. */
/* The order the merge promises: timestamp, then context, then ring order, as a stable sort
 * of every record gives it (the reference the k-way merge is checked against). */
static int cmp_reference(const void *a, const void *b)
{
    const struct emb_trace_event *x = *(const struct emb_trace_event *const *)a;
    const struct emb_trace_event *y = *(const struct emb_trace_event *const *)b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->ctx != y->ctx)
        return x->ctx < y->ctx ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Whether emb_trace_events() and a cursor both give the sorted order of every record. */
static bool merge_is_sorted_order(const struct emb_trace *t)
{
    size_t n, all = 0;
    const struct emb_trace_event *const *e = emb_trace_events(t, &n);
    for (size_t i = 0; i < emb_trace_context_count(t); i++)
        all += emb_trace_context(t, i)->nrecs;
    const struct emb_trace_event **ref = malloc((all + 1) * sizeof *ref);
    size_t k = 0;
    for (size_t i = 0; i < emb_trace_context_count(t); i++)
        for (size_t r = 0; r < emb_trace_context(t, i)->nrecs; r++)
            ref[k++] = &emb_trace_context(t, i)->recs[r];
    qsort(ref, all, sizeof *ref, cmp_reference);
    bool same = n == all && (n == 0 || memcmp(ref, e, n * sizeof *ref) == 0);
    struct emb_trace_cursor *c = emb_trace_cursor_open(t);
    for (size_t i = 0; i < all && same; i++)
        same = emb_trace_cursor_next(c) == ref[i];
    same = same && emb_trace_cursor_next(c) == NULL;
    emb_trace_cursor_close(c);
    free(ref);
    return same;
}

static bool same_record(const struct emb_trace_event *a, const struct emb_trace_event *b)
{
    return a->ts == b->ts && a->ns == b->ns && a->wall_ns == b->wall_ns &&
           a->offset == b->offset && a->ev == b->ev && a->payload == b->payload &&
           a->payload_size == b->payload_size && a->count == b->count && a->ctx == b->ctx &&
           a->context_id == b->context_id && a->id == b->id && a->type == b->type &&
           a->kind == b->kind && a->depth == b->depth;
}

/* A streaming decode of the same bytes: no records kept, and its cursor yields the
 * records the decode that keeps them merges, field for field, with the same counts. */
static bool stream_is_same(const uint8_t *data, size_t len, const struct emb_trace *kept)
{
    struct emb_trace_options o = {.catalog = cat, .stream = true};
    struct emb_trace *t = emb_trace_decode(data, len, &o);
    size_t n, none;
    const struct emb_trace_event *const *e = emb_trace_events(kept, &n);
    emb_trace_events(t, &none);
    bool same = none == 0 && emb_trace_record_count(t) == n &&
                emb_trace_last_ts(t) == emb_trace_last_ts(kept) &&
                emb_trace_summary(t)->events == emb_trace_summary(kept)->events &&
                emb_trace_summary(t)->errors == emb_trace_summary(kept)->errors;
    struct emb_trace_cursor *c = emb_trace_cursor_open(t);
    for (size_t i = 0; i < n && same; i++) {
        const struct emb_trace_event *r = emb_trace_cursor_next(c);
        same = r != NULL && same_record(r, e[i]);
    }
    same = same && emb_trace_cursor_next(c) == NULL;
    emb_trace_cursor_close(c);
    emb_trace_free(t);
    return same;
}

static void test_random(void)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    struct tb b;
    three_packets(&b);
    uint8_t *copy = malloc(b.len);
    bool sane = true, ordered = true, streamed = true;
    for (int round = 0; round < 3000; round++) {
        memcpy(copy, b.buf, b.len);
        size_t len = b.len;
        int flips = 1 + round % 8;
        for (int k = 0; k < flips; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t at = (x >> 8) % len;
            /* keep the checksum so the mutations reach the packets */
            if (at >= EMB_TSF_OFF_CATALOG && at < EMB_TSF_OFF_CATALOG + 4)
                continue;
            copy[at] = (uint8_t)(x >> 32);
        }
        if (round % 5 == 0)
            len = (x >> 20) % (b.len + 1);
        if (round % 7 == 0)
            for (size_t i = EMB_TSF_FIXED_SIZE; i < len; i++)
                copy[i] = (uint8_t)((x >> (i % 56)) ^ i);
        struct emb_trace_options o = {.catalog = cat};
        struct emb_trace *t = emb_trace_decode(copy, len, &o);
        size_t n;
        const struct emb_trace_event *const *e = emb_trace_events(t, &n);
        for (size_t i = 0; i < n; i++)
            if (e[i]->payload && (e[i]->payload < copy || e[i]->payload + e[i]->payload_size > copy + len))
                sane = false;
        ordered = ordered && merge_is_sorted_order(t);
        streamed = streamed && stream_is_same(copy, len, t);
        emb_trace_free(t);
    }
    ok(sane, "3000 mutated streams: every payload lies inside the input");
    ok(ordered, "3000 mutated streams: the k-way merge and the cursor give the sorted order");
    ok(streamed, "3000 mutated streams: a streaming decode's cursor yields the same records");
    free(copy);
    free(b.buf);
}

struct sink_seen {
    unsigned n, errors, warnings;
    long long last_offset;
};

static void on_problem(void *arg, const struct emb_problem *p)
{
    struct sink_seen *seen = arg;
    seen->n++;
    seen->errors += p->severity == EMB_ERROR;
    seen->warnings += p->severity == EMB_WARNING;
    seen->last_offset = p->offset;
}

/* Problems go to the caller's sink when it gives one: a damaged packet a warning at its
 * offset, a refused header an error; the trace then keeps none of its own. */
static void test_problem_sink(void)
{
    struct tb b;
    size_t mid = three_packets(&b);
    emb_put_le32(b.buf + mid + EMB_PKT_OFF_MAGIC, 0x12345678);
    struct sink_seen seen = {0};
    struct emb_problems ps;
    emb_problems_init_callback(&ps, "t.embt", on_problem, &seen);
    struct emb_trace_options o = {.catalog = cat, .name = "t.embt", .problems = &ps};
    struct emb_trace *t = emb_trace_decode(b.buf, b.len, &o);
    ok(t && seen.n == 1 && seen.warnings == 1 && seen.last_offset == (long long)mid,
       "a bad packet: one warning at its offset, in the caller's sink");
    ok(t && emb_trace_summary(t)->errors == 1 && emb_trace_problems(t)->n == 0,
       "counted in the summary, not kept by the trace");
    emb_trace_free(t);
    emb_put_le32(b.buf, 0x464c457fu);
    memset(&seen, 0, sizeof seen);
    t = emb_trace_decode(b.buf, b.len, &o);
    ok(t && emb_trace_summary(t)->fatal && seen.n == 1 && seen.errors == 1 && seen.last_offset == 0,
       "a refused header: one error at byte 0");
    emb_trace_free(t);
    free(b.buf);
}

/* The first bytes of each kind of stream (docs/formats/trace.md and capture.md for the
 * magics "EMBT" and "EMBS"; RTEMS's cpukit/include/rtems/recorddata.h for the record
 * stream: a format word, RTEMS_RECORD_FORMAT_LE_32 0x11111111 or _BE_32 0x33333333, then
 * RTEMS_RECORD_MAGIC 0x82e14ec1 in that byte order). */
static void test_stream_kind(void)
{
    struct tb b;
    tb_begin(&b, cat->checksum, 256, 1000000000u, 0, two_ctx, 2);
    size_t header_size = b.len;
    tb_open(&b, 0, EMB_CONTEXT_THREAD, 0, 1000);
    tb_event(&b, cat, 1000, 0, "idle_enter", NULL);
    tb_close(&b, 1010, 0);
    ok_eq(emb_stream_kind(b.buf, b.len), EMB_STREAM_TRACE, "a trace stream file");
    ok_eq(emb_stream_kind(b.buf + header_size, b.len - header_size), EMB_STREAM_TRACE_PACKET,
          "its packets without the header: a bare packet");
    static const uint8_t capture[] = {'E', 'M', 'B', 'S', 1, 0, 32, 0};
    ok_eq(emb_stream_kind(capture, sizeof capture), EMB_STREAM_CAPTURE, "\"EMBS\": a capture");
    static const uint8_t rtems_le[] = {0x11, 0x11, 0x11, 0x11, 0xc1, 0x4e, 0xe1, 0x82};
    static const uint8_t rtems_be[] = {0x33, 0x33, 0x33, 0x33, 0x82, 0xe1, 0x4e, 0xc1};
    static const uint8_t rtems_bad[] = {0x33, 0x33, 0x33, 0x33, 0xc1, 0x4e, 0xe1, 0x82};
    ok_eq(emb_stream_kind(rtems_le, sizeof rtems_le), EMB_STREAM_RTEMS, "RTEMS record, LE 32");
    ok_eq(emb_stream_kind(rtems_be, sizeof rtems_be), EMB_STREAM_RTEMS, "RTEMS record, BE 32");
    ok_eq(emb_stream_kind(rtems_bad, sizeof rtems_bad), EMB_STREAM_UNKNOWN,
          "a big-endian format word with a little-endian magic: not RTEMS");
    ok_eq(emb_stream_kind(b.buf, 3), EMB_STREAM_UNKNOWN, "three bytes: not enough to tell");
    ok(!strcmp(emb_stream_kind_name(EMB_STREAM_CAPTURE), "capture"), "kinds have names");
    free(b.buf);
}

int main(void)
{
    cat = emb_catalog_builtin();
    ok(cat != NULL, "built-in catalogue");
    if (!cat)
        return emb_test_done();
    test_valid();
    test_unwrap();
    test_losses();
    test_overwritten();
    test_bad_packets();
    test_unknown_event();
    test_truncated();
    test_bad_header();
    test_contexts();
    test_clock();
    test_random();
    test_stream_kind();
    test_problem_sink();
    return emb_test_done();
}
