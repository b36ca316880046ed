/* Feeds the events sink's message handler arbitrary messages from both sockets. Input: a
 * sequence of [flags:u8][len:u8][len bytes]; flags bit 0 picks the query socket. After each
 * message the sink's invariants are checked and every reply is decoded with the shared
 * decoders. */
#include "events_sink.h"

#include <stdlib.h>
#include <string.h>

static uint8_t reply[EMB_EVENTS_REPLY_MAX];

static void check_reply(uint8_t op, long n)
{
    if (n < 0 || n > (long)EMB_EVENTS_REPLY_MAX)
        abort();
    size_t len = (size_t)n;
    if (op == EMB_SVC_OP_DUMP) {
        if (len % EMB_SVC_EV_LEN != 0)
            abort();
        for (size_t i = 0; i < len; i += EMB_SVC_EV_LEN) {
            struct emb_svc_event ev;
            if (emb_svc_decode_event_record(reply + i, &ev, NULL) != EMB_OK)
                abort(); /* only well-formed events are ever stored */
        }
    } else if (op == EMB_SVC_OP_METRICS) {
        if (len % EMB_SVC_MET_LEN != 0)
            abort();
        for (size_t i = 0; i < len; i += EMB_SVC_MET_LEN) {
            struct emb_svc_metric m;
            if (emb_svc_decode_metric_record(reply + i, &m, NULL) != EMB_OK)
                abort();
        }
    } else if (op == EMB_SVC_OP_LOGS && len > 0) {
        struct emb_svc_logs_header h;
        if (emb_svc_decode_logs_header(reply, len, &h, NULL) != EMB_OK || h.count > 8)
            abort();
        if (len > EMB_SVC_LOGS_HDR_LEN && reply[len - 1] != '\n')
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct emb_events_sink_config cfg;
    emb_events_sink_config_default(&cfg);
    cfg.capacity = 5;  /* tiny, so wrap-around happens within one input */
    cfg.log_lines = 8;
    cfg.metrics = 3;
    cfg.callers = 2;
    cfg.logs_reply_max = 600;
    struct emb_events_sink *s = emb_events_sink_new(&cfg);
    if (s == NULL)
        abort();
    uint32_t now = 0;
    while (size >= 2) {
        uint8_t flags = data[0];
        size_t len = data[1];
        data += 2;
        size -= 2;
        if (len > size)
            len = size;
        enum emb_events_origin from = (flags & 1) ? EMB_EVENTS_FROM_QUERY : EMB_EVENTS_FROM_INTAKE;
        now += flags >> 4;
        /* Copy, so the sanitizer sees a read past the message as one. */
        uint8_t *msg = malloc(len ? len : 1);
        memcpy(msg, data, len);
        long n = emb_events_sink_handle(s, from, msg, len, now, reply);
        if (from == EMB_EVENTS_FROM_INTAKE && n != -1)
            abort();
        if (from == EMB_EVENTS_FROM_QUERY)
            check_reply(len ? msg[0] : 0, n);
        free(msg);
        struct emb_events_sink_stats st;
        emb_events_sink_stats(s, &st);
        if (st.held > st.capacity || st.held > st.accepted || st.metrics_held > cfg.metrics ||
            st.log_held > cfg.log_lines)
            abort();
        data += len;
        size -= len;
    }
    emb_events_sink_free(s);
    return 0;
}
