/* libFuzzer target: what `emb events` does with a sink's replies, the sink being whoever
 * answers on the socket. Each reply is decoded with the shared decoders the client uses
 * (status, event and metric records, the LOGS header and its lines); a DUMP is read as
 * calls and chains (events_chain.c) and exported as a Chrome JSON trace and a CTF
 * directory (tools/emb/events_export.c), named from an ops file the input also carries.
 *
 * Input: [kind:u8][ops_len:u16 le][ops file text][reply]; kind 0 STATUS, 1 DUMP,
 * 2 METRICS, 3 LOGS. Seeds (fuzz_seeds): the real sink's replies to its query messages
 * after the events of tests/fuzz/corpus/events_sink/scenario, with the ops file of
 * examples/services. */
#include "fuzz_file.h"

#include <emb/svc_trace.h>
#include <emb/wire.h>

#include "events_chain.h"
#include "events_cmd.h"
#include "events_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void dump(const uint8_t *r, size_t n, const struct emb_events_ops *ops, uint64_t dropped)
{
    size_t count = n / EMB_SVC_EV_LEN;
    if (n % EMB_SVC_EV_LEN != 0 || count > 255)
        return; /* refused by the client, as get_events() does */
    struct emb_svc_event ev[255];
    for (size_t i = 0; i < count; i++)
        if (emb_svc_decode_event_record(r + i * EMB_SVC_EV_LEN, &ev[i], NULL) != EMB_OK)
            return;
    struct emb_events_calls calls = {0};
    if (emb_events_calls_build(ev, count, &calls) != 0)
        return;
    for (size_t c = 0; c < calls.count; c++) {
        char buf[512];
        const struct emb_events_call *k = &calls.call[c];
        if ((k->request != EMB_EVENTS_NONE && k->request >= count) ||
            (k->outcome != EMB_EVENTS_NONE && k->outcome >= count) ||
            (k->parent != EMB_EVENTS_NONE && k->parent >= calls.count))
            abort();
        emb_events_chain(&calls, ev, ops, c, buf, sizeof buf);
        if (memchr(buf, 0, sizeof buf) == NULL)
            abort();
    }
    struct emb_events_view v = {.ev = ev, .n = count, .calls = &calls, .ops = ops,
                                .dropped = dropped};
    char *json = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&json, &len);
    if (out != NULL) {
        emb_events_write_perfetto(&v, out);
        fclose(out);
        free(json);
    }
    char err[512];
    emb_events_write_ctf(&v, emb_fuzz_scratch_dir(), err, sizeof err);
    emb_events_calls_free(&calls);
}

static void logs(const uint8_t *r, size_t n)
{
    struct emb_svc_logs_header h;
    size_t bad = 0;
    if (emb_svc_decode_logs_header(r, n, &h, &bad) != EMB_OK) {
        if (bad > n)
            abort();
        return;
    }
    /* Each line: owner, separator, text, newline (what print_logs() walks). */
    const uint8_t *p = r + EMB_SVC_LOGS_HDR_LEN, *end = r + n;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        const uint8_t *sep = memchr(p, EMB_SVC_LOG_SEP, (size_t)(nl - p));
        if (sep != NULL && sep > nl)
            abort();
        p = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    unsigned kind = data[0] & 3u;
    size_t ops_len = emb_get_le16(data + 1);
    if (ops_len > size - 3)
        ops_len = size - 3;
    struct emb_events_ops *ops = NULL;
    if (ops_len > 0) {
        const char *path = emb_fuzz_file(data + 3, ops_len);
        struct emb_problems ps;
        emb_problems_init(&ps, path);
        ops = emb_events_ops_load(path, &ps);
        emb_problems_free(&ps);
    }
    const uint8_t *r = data + 3 + ops_len;
    size_t n = size - 3 - ops_len;
    if (n > EMB_EVENTS_REPLY_MAX)
        n = EMB_EVENTS_REPLY_MAX; /* longer replies are refused by emb_events_query() */
    struct emb_svc_status st;
    size_t bad = 0;
    switch (kind) {
    case 0:
        if (emb_svc_decode_status_reply(r, n, &st, &bad) != EMB_OK && bad > n)
            abort();
        break;
    case 1:
        dump(r, n, ops, n & 0xFF);
        break;
    case 2:
        for (size_t i = 0; n % EMB_SVC_MET_LEN == 0 && i < n; i += EMB_SVC_MET_LEN) {
            struct emb_svc_metric m;
            if (emb_svc_decode_metric_record(r + i, &m, NULL) != EMB_OK)
                break;
        }
        break;
    default:
        logs(r, n);
        break;
    }
    emb_events_ops_free(ops);
    return 0;
}
