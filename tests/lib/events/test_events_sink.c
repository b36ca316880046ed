/* The sink's logic: ring, loss counting, metric table, log window and its cursor, and the
 * refusal of everything malformed, all through the same messages the sockets carry. */
#include "events_sink.h"

#include <emb/wire.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static uint8_t reply[EMB_EVENTS_REPLY_MAX];

static struct emb_events_sink *new_sink(uint32_t capacity, uint32_t log_lines, uint32_t metrics,
                                        uint32_t callers)
{
    struct emb_events_sink_config cfg;
    emb_events_sink_config_default(&cfg);
    cfg.capacity = capacity;
    cfg.log_lines = log_lines;
    cfg.metrics = metrics;
    cfg.callers = callers;
    return emb_events_sink_new(&cfg);
}

static void send_event(struct emb_events_sink *s, const char *caller, uint32_t seq,
                       const char *peer, uint8_t op, uint8_t kind, uint32_t now)
{
    struct emb_svc_event ev = {.seq = seq, .op = op, .kind = kind};
    snprintf(ev.caller, sizeof ev.caller, "%s", caller);
    snprintf(ev.peer, sizeof ev.peer, "%s", peer);
    uint8_t msg[EMB_SVC_MSG_EVENT_LEN];
    emb_svc_encode_event_msg(msg, sizeof msg, &ev);
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, now, NULL);
}

/* A LOSSES report: the emitter's last sequence number used and its refused sends so far. */
static void send_losses(struct emb_events_sink *s, const char *owner, uint32_t seq,
                        uint32_t refused)
{
    struct emb_svc_losses l = {.seq = seq, .refused = refused};
    snprintf(l.owner, sizeof l.owner, "%s", owner);
    uint8_t msg[EMB_SVC_MSG_LOSSES_LEN];
    emb_svc_encode_losses_msg(msg, sizeof msg, &l);
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, 0, NULL);
}

static void send_log(struct emb_events_sink *s, const char *owner, const char *text)
{
    uint8_t msg[EMB_SVC_MSG_LOG_MAX];
    size_t n = emb_svc_encode_log_msg(msg, sizeof msg, owner, text, strlen(text));
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, n, 0, NULL);
}

static long query_dump(struct emb_events_sink *s, uint8_t count)
{
    uint8_t q[2];
    emb_svc_encode_dump(q, sizeof q, count);
    return emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, q, sizeof q, 0, reply);
}

static struct emb_svc_status query_status(struct emb_events_sink *s)
{
    uint8_t q[1];
    emb_svc_encode_status(q, sizeof q);
    long n = emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, q, 1, 0, reply);
    struct emb_svc_status st = {0};
    if (n != EMB_SVC_STATUS_LEN || emb_svc_decode_status_reply(reply, (size_t)n, &st, NULL))
        diag("STATUS reply of %ld bytes did not decode", n);
    return st;
}

static void test_config(void)
{
    ok(new_sink(0, 4, 4, 4) == NULL, "capacity 0 refused");
    ok(new_sink(4, 0, 4, 4) == NULL, "log window 0 refused");
    ok(new_sink(4, 4, EMB_EVENTS_REPLY_MAX / EMB_SVC_MET_LEN + 1, 4) == NULL,
       "a metric table too large to reply with refused");
    struct emb_events_sink *s = new_sink(1, 1, 1, 1);
    ok(s != NULL, "the smallest sink");
    emb_events_sink_free(s);
}

static void test_ring(void)
{
    struct emb_events_sink *s = new_sink(4, 8, 8, 8);
    ok_eq(query_dump(s, 10), 0, "empty ring: empty DUMP");
    for (uint32_t i = 1; i <= 10; i++)
        send_event(s, "client", i, "fs", (uint8_t)i, EMB_SVC_KIND_REQUEST, 100 + i);
    struct emb_svc_status st = query_status(s);
    ok_eq(st.capacity, 4, "capacity");
    ok_eq(st.accepted, 10, "accepted counts every event");
    ok_eq(st.held, 4, "held is bounded by capacity");
    ok_eq(st.dropped, 0, "no gaps, nothing dropped");
    ok_eq(st.malformed, 0, "nothing malformed");

    long n = query_dump(s, 255);
    ok_eq(n, 4 * EMB_SVC_EV_LEN, "DUMP 255 returns the 4 held");
    struct emb_svc_event ev;
    bool in_order = true;
    for (int i = 0; i < 4; i++) {
        if (emb_svc_decode_event_record(reply + i * EMB_SVC_EV_LEN, &ev, NULL) != EMB_OK ||
            ev.seq != (uint32_t)(7 + i) || ev.at_s != (uint32_t)(107 + i) || ev.op != 7 + i ||
            strcmp(ev.caller, "client") || strcmp(ev.peer, "fs"))
            in_order = false;
    }
    ok(in_order, "the most recent, oldest first, stamped with the sink's time");
    n = query_dump(s, 2);
    ok(n == 2 * EMB_SVC_EV_LEN && emb_svc_decode_event_record(reply, &ev, NULL) == EMB_OK &&
           ev.seq == 9, "DUMP 2 returns the last two");

    /* Byte for byte: what the sink stores is the emitter's record with at_s filled in. */
    struct emb_svc_event want = {.seq = 11, .at_s = 0x01020304u, .caller = "fs",
                                 .peer = "block-driver", .op = 3, .kind = EMB_SVC_KIND_REPLY};
    uint8_t msg[EMB_SVC_MSG_EVENT_LEN], rec[EMB_SVC_EV_LEN];
    struct emb_svc_event sent = want;
    sent.at_s = 0xFFFFFFFFu; /* whatever the emitter puts there is replaced */
    emb_svc_encode_event_msg(msg, sizeof msg, &sent);
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, 0x01020304u, NULL);
    emb_svc_encode_event_record(rec, sizeof rec, &want);
    ok(query_dump(s, 1) == EMB_SVC_EV_LEN && memcmp(reply, rec, EMB_SVC_EV_LEN) == 0,
       "DUMP record bytes = the event with the sink's at_s");
    emb_events_sink_free(s);
}

static void test_loss_counting(void)
{
    struct emb_events_sink *s = new_sink(64, 8, 8, 2);
    send_event(s, "client", 5, "fs", 0, EMB_SVC_KIND_REQUEST, 0);
    ok_eq(query_status(s).dropped, 0, "a first sighting is not a loss (the sink may be new)");
    send_event(s, "client", 6, "fs", 0, EMB_SVC_KIND_REPLY, 0);
    send_losses(s, "client", 9, 3); /* 7..9 refused: the emitter says so before event 10 */
    send_event(s, "client", 10, "fs", 0, EMB_SVC_KIND_REQUEST, 0);
    ok_eq(query_status(s).dropped, 3, "seq 7..9 never arrived, as reported: 3 dropped");
    send_event(s, "fs", 1, "block-driver", 0, EMB_SVC_KIND_REQUEST, 0);
    send_losses(s, "fs", 2, 1);
    send_event(s, "fs", 3, "block-driver", 0, EMB_SVC_KIND_REPLY, 0);
    ok_eq(query_status(s).dropped, 4, "losses are per emitter");
    ok_eq(query_status(s).faults, 0, "every jump so far was explained");
    send_event(s, "client", 1, "fs", 0, EMB_SVC_KIND_REQUEST, 0);
    send_event(s, "client", 2, "fs", 0, EMB_SVC_KIND_REPLY, 0);
    ok_eq(query_status(s).dropped, 4, "a sequence that restarts is an emitter restart, not a loss");
    send_losses(s, "client", 2, 0);
    ok(query_status(s).dropped == 4 && query_status(s).faults == 0,
       "its counts restarted too: a report with nothing refused adds nothing");
    /* Only two emitters are followed; a third still has its events kept. */
    send_event(s, "third", 1, "fs", 0, EMB_SVC_KIND_REQUEST, 0);
    send_event(s, "third", 9, "fs", 0, EMB_SVC_KIND_REPLY, 0);
    struct emb_svc_status st = query_status(s);
    ok(st.accepted == 9 && st.dropped == 4 && st.faults == 0,
       "an emitter beyond the table is stored, not followed");
    emb_events_sink_free(s);
}

/* A granted emitter claiming a number it never used: the datagram of the audit, `fs` with
 * seq 0xFFFFFFFF, once made the sink report 4294967292 dropped. A jump no report explains,
 * and a report claiming more lost numbers than refused sends, are faults, not losses. */
static void test_unbelievable_sequence(void)
{
    struct emb_events_sink *s = new_sink(64, 8, 8, 8);
    send_event(s, "fs", 1, "block-driver", 0, EMB_SVC_KIND_REQUEST, 0);
    send_event(s, "fs", 2, "block-driver", 0, EMB_SVC_KIND_REPLY, 0);
    send_event(s, "fs", 0xFFFFFFFFu, "block-driver", 0, EMB_SVC_KIND_REPLY, 0);
    struct emb_svc_status st = query_status(s);
    ok_eq(st.dropped, 0, "seq 0xFFFFFFFF after 2 is no loss (dropped %llu)",
          (unsigned long long)st.dropped);
    ok_eq(st.faults, 1, "it is one fault of that emitter");
    send_event(s, "client", 1, "fs", 0, EMB_SVC_KIND_REQUEST, 0);
    send_losses(s, "client", 1000001, 10);
    st = query_status(s);
    ok(st.dropped == 0 && st.faults == 1 + 1,
       "a report of 1000000 numbers lost with 10 sends refused is a fault too");
    send_losses(s, "client", 1000011, 20);
    send_event(s, "client", 1000012, "fs", 0, EMB_SVC_KIND_REPLY, 0);
    st = query_status(s);
    ok(st.dropped == 10 && st.faults == 2, "then 10 lost with 10 more refused: believed");
    emb_events_sink_free(s);
}

static void test_metrics(void)
{
    struct emb_events_sink *s = new_sink(4, 4, 2, 4);
    struct emb_svc_metric m = {.owner = "fs", .name = "reads", .value = 1};
    uint8_t msg[EMB_SVC_MSG_METRIC_LEN];
    emb_svc_encode_metric_msg(msg, sizeof msg, &m);
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, 0, NULL);
    m.value = 0xFFFFFFFFFFFFFFF0ull;
    emb_svc_encode_metric_msg(msg, sizeof msg, &m);
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, 0, NULL);
    struct emb_svc_metric other = {.owner = "block-driver", .name = "reads", .value = 7};
    emb_svc_encode_metric_msg(msg, sizeof msg, &other);
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, 0, NULL);
    struct emb_svc_metric third = {.owner = "fs", .name = "errors", .value = 3};
    emb_svc_encode_metric_msg(msg, sizeof msg, &third);
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, 0, NULL);

    uint8_t q[1];
    emb_svc_encode_metrics(q, 1);
    long n = emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, q, 1, 0, reply);
    ok_eq(n, 2 * EMB_SVC_MET_LEN, "two metrics held: latest value per (owner, name)");
    uint8_t want[EMB_SVC_MET_LEN];
    m.value = 0xFFFFFFFFFFFFFFF0ull;
    emb_svc_encode_metric_record(want, sizeof want, &m);
    ok(memcmp(reply, want, EMB_SVC_MET_LEN) == 0, "first record: fs/reads with its latest value");
    emb_svc_encode_metric_record(want, sizeof want, &other);
    ok(memcmp(reply + EMB_SVC_MET_LEN, want, EMB_SVC_MET_LEN) == 0, "second: block-driver/reads");
    struct emb_events_sink_stats stats;
    emb_events_sink_stats(s, &stats);
    ok(stats.metrics_full == 1 && stats.metric_samples == 3, "a third name found the table full");

    /* Bytes after a name's NUL do not make another metric. */
    emb_svc_encode_metric_msg(msg, sizeof msg, &other);
    msg[1 + 12 + 10] = 'Z';
    emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, msg, sizeof msg, 0, NULL);
    emb_events_sink_stats(s, &stats);
    ok(stats.metrics_held == 2 && stats.metrics_full == 1, "names compare as text");
    emb_events_sink_free(s);
}

/* Parses a LOGS reply; returns the number of lines and checks each is "owner\x1f<k>". */
static int parse_logs(long n, struct emb_svc_logs_header *h, uint64_t first, const char *owner)
{
    if (n < (long)EMB_SVC_LOGS_HDR_LEN ||
        emb_svc_decode_logs_header(reply, (size_t)n, h, NULL) != EMB_OK)
        return -1;
    int lines = 0;
    const char *p = (const char *)reply + EMB_SVC_LOGS_HDR_LEN, *end = (const char *)reply + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            return -1;
        char want[64];
        int w = snprintf(want, sizeof want, "%s\x1fline %llu", owner,
                         (unsigned long long)(first + (uint64_t)lines));
        if (nl - p != w || memcmp(p, want, (size_t)w) != 0)
            return -1;
        lines++;
        p = nl + 1;
    }
    return lines;
}

static long query_logs(struct emb_events_sink *s, uint64_t since)
{
    uint8_t q[EMB_SVC_MSG_LOGS_LEN];
    emb_svc_encode_logs(q, sizeof q, since);
    return emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, q, sizeof q, 0, reply);
}

static void test_logs_cursor(void)
{
    struct emb_events_sink *s = new_sink(4, 4, 4, 4);
    struct emb_svc_logs_header h;
    long n = query_logs(s, 0);
    ok(n == EMB_SVC_LOGS_HDR_LEN && emb_svc_decode_logs_header(reply, 25, &h, NULL) == EMB_OK &&
           h.next == 0 && h.oldest == 0 && h.count == 0 && h.wrapped == 0,
       "no lines: header only, oldest 0, count 0");
    char text[32];
    for (int k = 1; k <= 3; k++) {
        snprintf(text, sizeof text, "line %d", k);
        send_log(s, "fs", text);
    }
    ok(parse_logs(query_logs(s, 0), &h, 1, "fs") == 3 && h.next == 3 && h.oldest == 1 &&
           h.count == 3 && !h.wrapped, "since 0: lines 1..3, next 3");
    ok(parse_logs(query_logs(s, 2), &h, 3, "fs") == 1 && h.next == 3, "since 2: line 3");
    ok(parse_logs(query_logs(s, 3), &h, 4, "fs") == 0 && h.next == 3 && !h.wrapped,
       "since 3: nothing new, next stays 3");

    for (int k = 4; k <= 10; k++) {
        snprintf(text, sizeof text, "line %d", k);
        send_log(s, "fs", text);
    }
    /* The window holds 7..10 now. */
    ok(parse_logs(query_logs(s, 0), &h, 7, "fs") == 4 && h.next == 10 && h.oldest == 7 &&
           h.count == 4 && h.wrapped == 1, "after wrap, since 0: 7..10, wrapped");
    ok(parse_logs(query_logs(s, 3), &h, 7, "fs") == 4 && h.wrapped == 1,
       "since 3: lines 4..6 were lost: wrapped");
    ok(parse_logs(query_logs(s, 5), &h, 7, "fs") == 4 && h.wrapped == 1, "since 5: line 6 lost");
    ok(parse_logs(query_logs(s, 6), &h, 7, "fs") == 4 && h.wrapped == 0,
       "since 6: nothing lost: not wrapped");
    ok(parse_logs(query_logs(s, 8), &h, 9, "fs") == 2 && h.next == 10 && !h.wrapped,
       "since 8: 9..10");
    ok(parse_logs(query_logs(s, 10), &h, 11, "fs") == 0 && h.next == 10, "since 10: nothing");
    ok(parse_logs(query_logs(s, 99), &h, 7, "fs") == 4 && h.next == 10 && h.wrapped == 1,
       "a cursor past the newest line (an older sink's) reads as since 0");
    uint8_t bare[1] = {EMB_SVC_OP_LOGS};
    ok(parse_logs(emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, bare, 1, 0, reply), &h, 7,
                  "fs") == 4, "bare LOGS is since 0");

    /* Framing bytes inside a line cannot split it. */
    send_log(s, "bd", "a\nb\x1f" "c");
    n = query_logs(s, 10);
    ok(n == 25 + 2 + 1 + 5 + 1 && memcmp(reply + 25, "bd\x1f" "a b c\n", 9) == 0,
       "newline and 0x1F in a line are replaced");
    emb_events_sink_free(s);
}

static void test_logs_paging(void)
{
    /* A reply too small for the whole window: a reader following `next` sees every line
     * exactly once. */
    struct emb_events_sink_config cfg;
    emb_events_sink_config_default(&cfg);
    cfg.log_lines = 64;
    cfg.logs_reply_max = EMB_SVC_LOGS_HDR_LEN + 2 + 12 + EMB_SVC_LOG_TEXT_MAX;
    struct emb_events_sink *s = emb_events_sink_new(&cfg);
    char text[EMB_SVC_LOG_TEXT_MAX + 1];
    for (int k = 1; k <= 50; k++) {
        int w = snprintf(text, sizeof text, "line %d", k);
        memset(text + w, ' ', 100);
        text[w + 100] = '\0';
        send_log(s, "client", text);
    }
    uint64_t cursor = 0, seen = 0;
    bool in_order = true;
    int queries = 0;
    struct emb_svc_logs_header h;
    do {
        long n = query_logs(s, cursor);
        if (n < 25 || emb_svc_decode_logs_header(reply, (size_t)n, &h, NULL) != EMB_OK)
            break;
        const char *p = (const char *)reply + 25, *end = (const char *)reply + n;
        while (p < end) {
            char want[32];
            snprintf(want, sizeof want, "client\x1fline %llu ", (unsigned long long)seen + 1);
            if (strncmp(p, want, strlen(want)) != 0)
                in_order = false;
            seen++;
            p = memchr(p, '\n', (size_t)(end - p)) + 1;
        }
        cursor = h.next;
        queries++;
    } while (cursor < 50 && queries < 100);
    ok(seen == 50 && in_order, "paged LOGS: all 50 lines, each once, in order");
    ok(queries > 1, "the reply limit forced paging (%d queries)", queries);
    emb_events_sink_free(s);
}

static void test_malformed(void)
{
    struct emb_events_sink *s = new_sink(8, 4, 4, 4);
    send_event(s, "client", 1, "fs", 0, EMB_SVC_KIND_REQUEST, 0);
    uint8_t ev[EMB_SVC_MSG_EVENT_LEN + 1];
    struct emb_svc_event e = {.seq = 2, .caller = "client", .peer = "fs",
                              .kind = EMB_SVC_KIND_REPLY};
    emb_svc_encode_event_msg(ev, sizeof ev, &e);
    uint8_t big[4096];
    memset(big, 0x41, sizeof big);
    big[0] = EMB_SVC_OP_LOG;
    const uint8_t unknown[] = {0x09, 1, 2, 3};
    const uint8_t zero[] = {0};
    uint8_t badkind[EMB_SVC_MSG_EVENT_LEN];
    memcpy(badkind, ev, sizeof badkind);
    badkind[34] = 0x7F;
    uint8_t status[1];
    emb_svc_encode_status(status, 1);

    long r[16];
    int k = 0;
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, ev, 0, 0, NULL);
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, ev, 20, 0, NULL);
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, ev, 36, 0, NULL);
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, big, sizeof big, 0, NULL);
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, unknown, sizeof unknown, 0, NULL);
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, zero, 1, 0, NULL);
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, badkind, sizeof badkind, 0, NULL);
    r[k++] = emb_events_sink_handle(s, EMB_EVENTS_FROM_INTAKE, status, 1, 0, NULL);
    bool none = true;
    for (int i = 0; i < k; i++)
        none = none && r[i] == -1;
    ok(none, "nothing from the intake is answered");
    long q1 = emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, ev, EMB_SVC_MSG_EVENT_LEN, 0, reply);
    long q2 = emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, unknown, sizeof unknown, 0, reply);
    ok(q1 == 0 && q2 == 0, "a refused query gets an empty reply");

    struct emb_svc_status st = query_status(s);
    ok_eq(st.malformed, 10, "every malformed or misdirected message is counted");
    ok_eq(st.accepted, 1, "none of them reached the ring: an EVENT on the query socket included");
    ok_eq(query_dump(s, 8), EMB_SVC_EV_LEN, "the ring holds only the good event");
    send_event(s, "client", 2, "fs", 0, EMB_SVC_KIND_REPLY, 0);
    ok_eq(query_status(s).accepted, 2, "and the sink keeps serving");
    emb_events_sink_count_malformed(s);
    ok_eq(query_status(s).malformed, 11, "transport-detected oversize counts too");
    emb_events_sink_free(s);
}

int main(void)
{
    test_config();
    test_ring();
    test_loss_counting();
    test_metrics();
    test_logs_cursor();
    test_logs_paging();
    test_unbelievable_sequence();
    test_malformed();
    return emb_test_done();
}
