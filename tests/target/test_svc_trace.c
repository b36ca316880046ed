/* The service-tracing wire format byte for byte, and the emitter's state machine driven
 * through a scripted port. */
#include <emb/svc_trace.h>
#include <emb/wire.h>

#include <string.h>

#include "harness.h"

/* ---- A scripted port ---- */

static enum emb_svc_resolve port_answer = EMB_SVC_RESOLVE_NONE;
static uint32_t port_slot = 7, port_id = 100;
static int port_resolves;
static bool port_send_ok = true;
static int port_sends;
static uint8_t port_last[EMB_SVC_MSG_MAX];
static size_t port_last_len;
static uint32_t port_last_slot;

enum emb_svc_resolve emb_port_svc_resolve(uint32_t *slot, uint32_t *sink_id)
{
    port_resolves++;
    if (port_answer == EMB_SVC_RESOLVE_OK) {
        *slot = port_slot;
        *sink_id = port_id;
    }
    return port_answer;
}

bool emb_port_svc_send(uint32_t slot, const void *msg, size_t len)
{
    port_sends++;
    port_last_slot = slot;
    port_last_len = len;
    memcpy(port_last, msg, len);
    return port_send_ok;
}

static void port_reset(enum emb_svc_resolve answer)
{
    port_answer = answer;
    port_resolves = 0;
    port_sends = 0;
    port_send_ok = true;
    port_last_len = 0;
}

static bool bytes_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (memcmp(a, b, n) == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            diag("    first difference at byte %zu: got 0x%02x, expected 0x%02x", i, a[i], b[i]);
    return false;
}

/* ---- Wire layouts ---- */

static void test_event_layout(void)
{
    static const uint8_t want[EMB_SVC_MSG_EVENT_LEN] = {
        0x01,                                                               /* EVENT */
        0x04, 0x03, 0x02, 0x01,                                             /* seq */
        0x00, 0x00, 0x00, 0x00,                                             /* at_s */
        'c', 'l', 'i', 'e', 'n', 't', 0, 0, 0, 0, 0, 0,                     /* caller */
        'b', 'l', 'o', 'c', 'k', '-', 'd', 'r', 'i', 'v', 'e', 'r',         /* peer (12) */
        0x11,                                                               /* op */
        0x05,                                                               /* QUEUE_FULL */
    };
    struct emb_svc_event ev = {.seq = 0x01020304u, .at_s = 0, .caller = "client",
                               .peer = "block-driver", .op = 0x11,
                               .kind = EMB_SVC_KIND_QUEUE_FULL};
    uint8_t buf[64];
    memset(buf, 0xAA, sizeof buf);
    ok_eq(emb_svc_encode_event_msg(buf, sizeof buf, &ev), 35, "EVENT message is 35 bytes");
    ok(bytes_eq(buf, want, sizeof want), "EVENT bytes");
    ok_eq(buf[35], 0xAA, "EVENT writes nothing past its length");
    ok_eq(emb_svc_encode_event_msg(buf, 34, &ev), 0, "EVENT refuses a 34-byte buffer");

    struct emb_svc_msg m;
    size_t bad = 99;
    ok_eq(emb_svc_decode_msg(want, sizeof want, &m, &bad), EMB_OK, "EVENT decodes");
    ok(m.op == EMB_SVC_OP_EVENT && m.u.event.seq == 0x01020304u && m.u.event.at_s == 0 &&
           strcmp(m.u.event.caller, "client") == 0 && strcmp(m.u.event.peer, "block-driver") == 0 &&
           m.u.event.op == 0x11 && m.u.event.kind == EMB_SVC_KIND_QUEUE_FULL,
       "EVENT decodes to what was encoded");

    /* The record inside a DUMP reply: the same bytes without the opcode. */
    ev.at_s = 0x0A0B0C0Du;
    ok_eq(emb_svc_encode_event_record(buf, sizeof buf, &ev), EMB_SVC_EV_LEN, "record is 34 bytes");
    ok(buf[4] == 0x0D && buf[5] == 0x0C && buf[6] == 0x0B && buf[7] == 0x0A,
       "at_s is little-endian at record offset 4");
    ok(bytes_eq(buf + 8, want + 9, 26), "record fields after at_s match the message's");
}

static void test_metric_layout(void)
{
    uint8_t want[EMB_SVC_MSG_METRIC_LEN] = {0x04, 'f', 's'};
    memcpy(want + 13, "reads", 5);
    const uint8_t value[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    memcpy(want + 33, value, 8);
    struct emb_svc_metric met = {.owner = "fs", .name = "reads", .value = 0x0807060504030201ull};
    uint8_t buf[64];
    ok_eq(emb_svc_encode_metric_msg(buf, sizeof buf, &met), 41, "METRIC message is 41 bytes");
    ok(bytes_eq(buf, want, sizeof want), "METRIC bytes; value at offset 33");
    struct emb_svc_msg m;
    ok_eq(emb_svc_decode_msg(want, sizeof want, &m, NULL), EMB_OK, "METRIC decodes");
    ok(strcmp(m.u.metric.owner, "fs") == 0 && strcmp(m.u.metric.name, "reads") == 0 &&
           m.u.metric.value == 0x0807060504030201ull,
       "METRIC decodes to what was encoded");
    /* A name of exactly 20 bytes fills its cell with no terminator. */
    struct emb_svc_metric full = {.owner = "block-driver", .name = "abcdefghijklmnopqrst"};
    emb_svc_encode_metric_record(buf, sizeof buf, &full);
    ok(memcmp(buf, "block-driverabcdefghijklmnopqrst", 32) == 0, "12 + 20 byte names fill cells");
    struct emb_svc_metric back;
    ok_eq(emb_svc_decode_metric_record(buf, &back, NULL), EMB_OK, "full cells decode");
    ok(strcmp(back.name, "abcdefghijklmnopqrst") == 0, "full metric name decodes whole");
}

static void test_log_layout(void)
{
    static const uint8_t want[] = {0x06, 'f', 's', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'h', 'i'};
    uint8_t buf[EMB_SVC_MSG_LOG_MAX + 8];
    ok_eq(emb_svc_encode_log_msg(buf, sizeof buf, "fs", "hi", 2), 15, "LOG of 2 bytes is 15");
    ok(bytes_eq(buf, want, sizeof want), "LOG bytes");
    ok_eq(emb_svc_encode_log_msg(buf, sizeof buf, "fs", "", 0), 13, "empty LOG is 13 bytes");

    /* Cut at the byte count: a 3-byte character straddling the limit is split. */
    uint8_t text[EMB_SVC_LOG_TEXT_MAX + 10];
    memset(text, 'x', sizeof text);
    text[EMB_SVC_LOG_TEXT_MAX - 1] = 0xE2; /* first byte of U+2026 */
    text[EMB_SVC_LOG_TEXT_MAX] = 0x80;
    text[EMB_SVC_LOG_TEXT_MAX + 1] = 0xA6;
    ok_eq(emb_svc_encode_log_msg(buf, sizeof buf, "fs", text, sizeof text),
          13 + EMB_SVC_LOG_TEXT_MAX, "long LOG text is cut at EMB_SVC_LOG_TEXT_MAX bytes");
    ok_eq(buf[13 + EMB_SVC_LOG_TEXT_MAX - 1], 0xE2, "the cut may end mid-character");
    ok_eq(emb_svc_encode_log_msg(buf, 13 + EMB_SVC_LOG_TEXT_MAX - 1, "fs", text, sizeof text), 0,
          "LOG refuses a buffer one byte short");

    struct emb_svc_msg m;
    ok_eq(emb_svc_decode_msg(want, sizeof want, &m, NULL), EMB_OK, "LOG decodes");
    ok(strcmp(m.u.log.owner, "fs") == 0 && m.u.log.len == 2 && memcmp(m.u.log.text, "hi", 2) == 0,
       "LOG decodes owner and text");
}

static void test_query_layouts(void)
{
    uint8_t buf[16];
    ok_eq(emb_svc_encode_dump(buf, sizeof buf, 200), 2, "DUMP is 2 bytes");
    ok(buf[0] == 0x02 && buf[1] == 200, "DUMP bytes: [2][count]");
    ok_eq(emb_svc_encode_status(buf, sizeof buf), 1, "STATUS is 1 byte");
    ok_eq(buf[0], 0x03, "STATUS bytes: [3]");
    ok_eq(emb_svc_encode_metrics(buf, sizeof buf), 1, "METRICS is 1 byte");
    ok_eq(buf[0], 0x05, "METRICS bytes: [5]");
    static const uint8_t logs[] = {0x07, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
    ok_eq(emb_svc_encode_logs(buf, sizeof buf, 0x0102030405060708ull), 9, "LOGS is 9 bytes");
    ok(bytes_eq(buf, logs, sizeof logs), "LOGS bytes: [7][since:u64 le]");

    struct emb_svc_msg m;
    ok(emb_svc_decode_msg(logs, sizeof logs, &m, NULL) == EMB_OK &&
           m.u.since == 0x0102030405060708ull, "LOGS decodes since");
    ok(emb_svc_decode_msg(logs, 1, &m, NULL) == EMB_OK && m.u.since == 0,
       "a bare LOGS means since = 0");
    const uint8_t dump[] = {0x02, 17};
    ok(emb_svc_decode_msg(dump, 2, &m, NULL) == EMB_OK && m.u.dump_count == 17, "DUMP decodes");
}

static void test_reply_layouts(void)
{
    struct emb_svc_status st = {.capacity = 0x11223344u, .accepted = 0x0102030405060708ull,
                                .dropped = 0x1112131415161718ull, .held = 0x21222324u,
                                .malformed = 0x3132333435363738ull,
                                .faults = 0x4142434445464748ull};
    static const uint8_t want[EMB_SVC_STATUS_LEN] = {
        0x44, 0x33, 0x22, 0x11,                         /* capacity */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* accepted */
        0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* dropped */
        0x24, 0x23, 0x22, 0x21,                         /* held */
        0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31, /* malformed */
        0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41, /* faults */
    };
    uint8_t buf[64];
    ok_eq(emb_svc_encode_status_reply(buf, sizeof buf, &st), 40, "STATUS reply is 40 bytes");
    ok(bytes_eq(buf, want, sizeof want), "STATUS reply bytes");
    struct emb_svc_status back;
    ok(emb_svc_decode_status_reply(want, sizeof want, &back, NULL) == EMB_OK &&
           back.capacity == st.capacity && back.accepted == st.accepted &&
           back.dropped == st.dropped && back.held == st.held && back.malformed == st.malformed &&
           back.faults == st.faults,
       "STATUS reply decodes");
    ok(emb_svc_decode_status_reply(want, 20, &back, NULL) == EMB_OK && back.held == 0 &&
           back.dropped == st.dropped, "the 20-byte minimum STATUS reply decodes");
    size_t bad = 0;
    ok(emb_svc_decode_status_reply(want, 19, &back, &bad) == EMB_E_CORRUPT && bad == 19,
       "a 19-byte STATUS reply is refused at its end");

    struct emb_svc_logs_header h = {.next = 0x0102030405060708ull, .oldest = 0x1112131415161718ull,
                                    .count = 0x2122232425262728ull, .wrapped = 1};
    static const uint8_t hdr[EMB_SVC_LOGS_HDR_LEN] = {
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* next */
        0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* oldest */
        0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* count */
        0x01,                                           /* wrapped */
    };
    ok_eq(emb_svc_encode_logs_header(buf, sizeof buf, &h), 25, "LOGS header is 25 bytes");
    ok(bytes_eq(buf, hdr, sizeof hdr), "LOGS header bytes");
    struct emb_svc_logs_header hb;
    ok(emb_svc_decode_logs_header(hdr, sizeof hdr, &hb, NULL) == EMB_OK && hb.next == h.next &&
           hb.oldest == h.oldest && hb.count == h.count && hb.wrapped == 1,
       "LOGS header decodes");
    uint8_t badhdr[EMB_SVC_LOGS_HDR_LEN];
    memcpy(badhdr, hdr, sizeof hdr);
    badhdr[24] = 2;
    ok(emb_svc_decode_logs_header(badhdr, sizeof badhdr, &hb, &bad) == EMB_E_CORRUPT && bad == 24,
       "a wrapped byte other than 0 or 1 is refused at offset 24");
}

static void test_decode_refusals(void)
{
    uint8_t ev[EMB_SVC_MSG_EVENT_LEN + 1];
    struct emb_svc_event e = {.seq = 1, .caller = "client", .peer = "fs",
                              .kind = EMB_SVC_KIND_REQUEST};
    emb_svc_encode_event_msg(ev, sizeof ev, &e);
    struct emb_svc_msg m;
    size_t bad = 0;
    ok(emb_svc_decode_msg(ev, 0, &m, &bad) == EMB_E_CORRUPT && bad == 0, "empty message refused");
    ok(emb_svc_decode_msg(ev, 34, &m, &bad) == EMB_E_CORRUPT && bad == 34,
       "truncated EVENT refused at its end");
    ev[35] = 0;
    ok(emb_svc_decode_msg(ev, 36, &m, &bad) == EMB_E_CORRUPT && bad == 36,
       "oversized EVENT refused");
    ev[34] = 0;
    ok(emb_svc_decode_msg(ev, 35, &m, &bad) == EMB_E_CORRUPT && bad == 34, "kind 0 refused at 34");
    ev[34] = EMB_SVC_KIND_MAX + 1;
    ok(emb_svc_decode_msg(ev, 35, &m, &bad) == EMB_E_CORRUPT && bad == 34, "kind 7 refused at 34");
    ev[34] = EMB_SVC_KIND_ABORTED;
    ev[9] = 0;
    ok(emb_svc_decode_msg(ev, 35, &m, &bad) == EMB_E_CORRUPT && bad == 9,
       "empty caller refused at offset 9");
    const uint8_t unknown[] = {0x09, 0};
    ok(emb_svc_decode_msg(unknown, 2, &m, &bad) == EMB_E_CORRUPT && bad == 0, "opcode 9 refused");
    const uint8_t zero[] = {0x00};
    ok(emb_svc_decode_msg(zero, 1, &m, &bad) == EMB_E_CORRUPT, "opcode 0 refused");
    const uint8_t st2[] = {0x03, 0x00};
    ok(emb_svc_decode_msg(st2, 2, &m, &bad) == EMB_E_CORRUPT && bad == 2, "STATUS with a payload");
    const uint8_t dump1[] = {0x02};
    ok(emb_svc_decode_msg(dump1, 1, &m, &bad) == EMB_E_CORRUPT, "DUMP without its count");
    uint8_t logs5[5] = {0x07};
    ok(emb_svc_decode_msg(logs5, 5, &m, &bad) == EMB_E_CORRUPT, "LOGS with a short cursor");
    uint8_t log[EMB_SVC_MSG_LOG_MAX + 1];
    emb_svc_encode_log_msg(log, sizeof log, "fs", "x", 1);
    ok(emb_svc_decode_msg(log, 12, &m, &bad) == EMB_E_CORRUPT, "LOG shorter than its owner");
    ok(emb_svc_decode_msg(log, sizeof log, &m, &bad) == EMB_E_CORRUPT && bad == sizeof log,
       "LOG longer than 13 + EMB_SVC_LOG_TEXT_MAX refused");
    ok(emb_svc_decode_msg(log, EMB_SVC_MSG_LOG_MAX, &m, &bad) == EMB_OK, "LOG at the maximum");
    log[1] = 0;
    ok(emb_svc_decode_msg(log, 14, &m, &bad) == EMB_E_CORRUPT && bad == 1, "LOG with no owner");
    uint8_t met[EMB_SVC_MSG_METRIC_LEN] = {0x04, 'f', 's'};
    ok(emb_svc_decode_msg(met, sizeof met, &m, &bad) == EMB_E_CORRUPT && bad == 13,
       "METRIC with an empty name refused at offset 13");
    ok(strcmp(emb_svc_kind_name(EMB_SVC_KIND_QUEUE_FULL), "queue_full") == 0 &&
           strcmp(emb_svc_kind_name(9), "?") == 0, "kind names");
}

/* ---- The emitter ---- */

static void test_names_and_offsets(void)
{
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    ok(!emb_svc_trace_caller_set(&t), "no caller before set_caller");
    ok_eq(emb_svc_trace_set_caller(&t, ""), EMB_E_INVALID, "empty name refused");
    ok_eq(emb_svc_trace_set_caller(&t, "block-driver1"), EMB_E_INVALID, "13-byte name refused");
    ok_eq(emb_svc_trace_set_caller(&t, "block-driver"), EMB_OK, "12-byte name accepted");
    ok_eq(emb_svc_trace_set_caller(&t, "fs"), EMB_E_STATE, "the name is written once");
    ok(emb_svc_trace_caller_set(&t), "caller set");

    ok_eq(emb_svc_trace_op_offset(&t, "fs"), 0, "offset 0 unless declared");
    ok_eq(emb_svc_trace_set_op_offset(&t, "fs", 4), EMB_OK, "declare fs at 4");
    ok_eq(emb_svc_trace_op_offset(&t, "fs"), 4, "fs at 4");
    ok_eq(emb_svc_trace_op_offset(&t, "fsx"), 0, "fsx is another peer");
    ok_eq(emb_svc_trace_set_op_offset(&t, "fs", 2), EMB_OK, "declare fs again");
    ok_eq(emb_svc_trace_op_offset(&t, "fs"), 2, "a second declaration replaces the first");
    char peer[8] = "p0";
    for (unsigned i = 1; i < CONFIG_EMB_SVC_TRACE_PEERS; i++) {
        peer[1] = (char)('0' + i);
        emb_svc_trace_set_op_offset(&t, peer, (uint16_t)i);
    }
    ok_eq(emb_svc_trace_set_op_offset(&t, "one-more", 1), EMB_E_NOSPACE, "the table is bounded");

    uint8_t buf[EMB_SVC_MSG_EVENT_LEN];
    const uint8_t req[] = {0xA0, 0xA1, 0xA2};
    ok_eq(emb_svc_trace_encode(&t, buf, sizeof buf, "fs", req, sizeof req, EMB_SVC_KIND_REQUEST),
          35, "encode");
    ok_eq(buf[1 + EMB_SVC_EV_OFF_OP], 0xA2, "op is the request's byte at the peer's offset");
    ok_eq(emb_get_le32(buf + 1), 1, "first event has seq 1");
    ok_eq(emb_svc_trace_encode(&t, buf, sizeof buf, "fs", req, 2, EMB_SVC_KIND_REPLY), 35, "again");
    ok_eq(buf[1 + EMB_SVC_EV_OFF_OP], 0, "op 0 when the request is shorter than the offset");
    ok_eq(buf[1], 2, "sequence numbers count up");
    ok_eq(emb_svc_trace_encode(&t, buf, sizeof buf, "a-peer-with-a-long-name", req, 3,
                               EMB_SVC_KIND_REPLY), 35, "long peer name");
    ok(memcmp(buf + 1 + EMB_SVC_EV_OFF_PEER, "a-peer-with-", 12) == 0, "peer name cut at 12 bytes");
    ok_eq(emb_svc_trace_encode(&t, buf, sizeof buf, "fs", req, 3, (enum emb_svc_kind)0), 0,
          "kind 0 is not encoded");
    ok_eq(emb_svc_trace_encode(&t, buf, 34, "fs", req, 3, EMB_SVC_KIND_REPLY), 0,
          "a short buffer is refused");

    struct emb_svc_trace anon = EMB_SVC_TRACE_INIT;
    ok_eq(emb_svc_trace_encode(&anon, buf, sizeof buf, "fs", req, 3, EMB_SVC_KIND_REPLY), 0,
          "nothing is encoded before set_caller");
    uint8_t mbuf[EMB_SVC_MSG_METRIC_LEN];
    ok_eq(emb_svc_trace_encode_metric(&t, mbuf, sizeof mbuf, "a-metric-name-longer-than-20", 5),
          41, "encode_metric");
    ok(memcmp(mbuf + 1, "block-driver", 12) == 0 &&
           memcmp(mbuf + 13, "a-metric-name-longer", 20) == 0 && mbuf[33] == 5,
       "metric owner is the caller; name cut at 20");
    uint8_t lbuf[EMB_SVC_MSG_LOG_MAX];
    ok_eq(emb_svc_trace_encode_log(&t, lbuf, sizeof lbuf, "ready", 5), 18, "encode_log");
    ok(memcmp(lbuf + 1, "block-driver", 12) == 0 && memcmp(lbuf + 13, "ready", 5) == 0,
       "log owner is the caller");
}

static void test_untraced(void)
{
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "client");
    port_reset(EMB_SVC_RESOLVE_NONE);
    ok(!emb_svc_trace_resolved(&t), "not resolved before the first call");
    for (int i = 0; i < 1000; i++)
        emb_svc_trace_call(&t, "fs", "r", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 1, "a service without the capability resolves once");
    ok_eq(port_sends, 0, "and sends nothing");
    ok_eq(t.state, EMB_SVC_STATE_UNTRACED, "its fast-path word is 0");
    ok(emb_svc_trace_resolved(&t), "resolved");
    ok_eq(emb_svc_trace_sink_slot(&t), EMB_SVC_NO_SLOT, "no slot");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "no late resolution");
}

static void test_tracing_and_failures(void)
{
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "client");
    port_reset(EMB_SVC_RESOLVE_OK);
    emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 1, "first call resolves");
    ok_eq(port_sends, 1, "and sends");
    ok_eq(port_last_slot, port_slot, "on the resolved slot");
    ok(port_last_len == 35 && port_last[0] == EMB_SVC_OP_EVENT && port_last[34] == 1 &&
           port_last[33] == 1, "an EVENT with the request's op and kind");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "healthy path: nothing late to report");
    ok(!emb_svc_trace_take_sink_changed(&t), "first sink is not a change");

    port_send_ok = false;
    for (int i = 0; i < 10; i++)
        emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_TIMEOUT);
    ok_eq(t.send_failures, 10, "failed sends are counted");
    port_send_ok = true;
    emb_svc_trace_call(&t, "fs", "\x01", 1, EMB_SVC_KIND_REPLY);
    ok_eq(port_last[1], 12, "failed sends used sequence numbers: the sink sees the gap");
    ok_eq(t.sent, 2, "sent counts successes");
    ok_eq(port_resolves, 1, "a latched sink is never resolved again");

    int before = port_sends;
    emb_svc_trace_call(&t, "events", "\x02", 1, EMB_SVC_KIND_REQUEST);
    emb_svc_trace_call(&t, "events", "\x02", 1, EMB_SVC_KIND_REPLY);
    ok_eq(port_sends, before, "calls to the sink itself are never traced");

    emb_svc_trace_metric(&t, "reads", 42);
    ok(port_last_len == 41 && port_last[0] == EMB_SVC_OP_METRIC && port_last[33] == 42,
       "metric sent");
    emb_svc_trace_log(&t, "hello", 5);
    ok(port_last_len == 18 && port_last[0] == EMB_SVC_OP_LOG, "log copy sent");

    struct emb_svc_trace anon = EMB_SVC_TRACE_INIT;
    port_reset(EMB_SVC_RESOLVE_OK);
    emb_svc_trace_call(&anon, "fs", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok(port_sends == 0 && anon.unnamed == 1, "an unnamed service sends nothing, and counts it");

    struct emb_svc_trace q = EMB_SVC_TRACE_INIT;
    port_reset(EMB_SVC_RESOLVE_OK);
    emb_svc_trace_set_caller(&q, "client");
    emb_svc_trace_call(&q, "events", "\x02", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 0, "a call to the sink does not even resolve");
}

static void test_late_resolution(void)
{
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "fs");
    port_reset(EMB_SVC_RESOLVE_MISS);
    emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 1, "first call resolves and misses");
    ok_eq(t.state, EMB_SVC_STATE_MISSING, "missing");
    ok(!emb_svc_trace_resolved(&t), "a miss is not a resolution");
    for (unsigned i = 1; i < EMB_SVC_RESOLVE_RETRY_EVERY; i++)
        emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 1, "no retry before RESOLVE_RETRY_EVERY calls");
    emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 2, "retry on the RESOLVE_RETRY_EVERYth call");
    for (unsigned i = 0; i < 2 * EMB_SVC_RESOLVE_RETRY_EVERY; i++)
        emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 4, "one retry per RESOLVE_RETRY_EVERY calls");
    ok_eq(port_sends, 0, "nothing sent while missing");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "nothing to report before resolution");

    port_answer = EMB_SVC_RESOLVE_OK;
    for (unsigned i = 0; i < EMB_SVC_RESOLVE_RETRY_EVERY; i++)
        emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REQUEST);
    ok_eq(port_resolves, 5, "the next retry finds the sink");
    ok_eq(port_sends, 1, "the call that resolved sends");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 4, "late resolution reports the 4 misses");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "exactly once");
    for (unsigned i = 0; i < 3 * EMB_SVC_RESOLVE_RETRY_EVERY; i++)
        emb_svc_trace_call(&t, "block-driver", "\x01", 1, EMB_SVC_KIND_REPLY);
    ok_eq(port_resolves, 5, "latched: never resolved again");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "and never reported again");

    emb_svc_trace_set_sink(&t, EMB_SVC_NO_SLOT, 0);
    ok_eq(emb_svc_trace_sink_slot(&t), port_slot, "a miss after the latch changes nothing");
    ok(!emb_svc_trace_should_resolve(&t), "no resolution once latched");
}

static void test_sink_changed(void)
{
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_sink(&t, 3, 1000);
    ok(!emb_svc_trace_take_sink_changed(&t), "first latch is not a change");
    emb_svc_trace_set_sink(&t, 3, 1000);
    ok(!emb_svc_trace_take_sink_changed(&t), "the same sink again is not a change");
    emb_svc_trace_set_sink(&t, 3, 1001);
    ok(emb_svc_trace_take_sink_changed(&t), "another sink behind the same slot is a change");
    ok(!emb_svc_trace_take_sink_changed(&t), "reported once");
    ok(!emb_svc_trace_take_sink_changed(&t), "and not again");
    emb_svc_trace_set_sink(&t, 9, 1001);
    emb_svc_trace_set_sink(&t, 9, 1002);
    ok(emb_svc_trace_take_sink_changed(&t), "two changes before a take: reported");
    ok(!emb_svc_trace_take_sink_changed(&t), "once");
    ok_eq(emb_svc_trace_sink_slot(&t), 9, "the latest sink is used");
    ok_eq(emb_svc_trace_take_late_resolve(&t), 0, "a change is not a late resolution");
}

int main(void)
{
    test_event_layout();
    test_metric_layout();
    test_log_layout();
    test_query_layouts();
    test_reply_layouts();
    test_decode_refusals();
    test_names_and_offsets();
    test_untraced();
    test_tracing_and_failures();
    test_late_resolution();
    test_sink_changed();
    return emb_test_done();
}
