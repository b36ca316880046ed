/* CONFIG_EMB_SVC_TRACE=0: call sites compile to nothing, even for a service that holds the
 * capability; the codec is still there for the host. Built with -DCONFIG_EMB_SVC_TRACE=0. */
#include <emb/svc_trace.h>

#include "harness.h"

#if CONFIG_EMB_SVC_TRACE
#error "this test is built with CONFIG_EMB_SVC_TRACE=0"
#endif

static int resolves, sends;

enum emb_svc_resolve emb_port_svc_resolve(uint32_t *slot, uint32_t *sink_id)
{
    resolves++;
    *slot = 1;
    *sink_id = 1;
    return EMB_SVC_RESOLVE_OK;
}

bool emb_port_svc_send(uint32_t slot, const void *msg, size_t len)
{
    (void)slot;
    (void)msg;
    (void)len;
    sends++;
    return true;
}

/* The call sites alone, in a function of their own: it compiles to a bare return. */
__attribute__((noinline)) void call_sites(struct emb_svc_trace *t)
{
    emb_svc_trace_call(t, "fs", "r", 1, EMB_SVC_KIND_REQUEST);
    emb_svc_trace_metric(t, "reads", 1);
    emb_svc_trace_log(t, "line", 4);
}

int main(void)
{
    struct emb_svc_trace t = EMB_SVC_TRACE_INIT;
    emb_svc_trace_set_caller(&t, "client");
    emb_svc_trace_set_sink(&t, 1, 1);
    for (int i = 0; i < 100; i++)
        call_sites(&t);
    ok_eq(resolves, 0, "compiled out: nothing resolves");
    ok_eq(sends, 0, "compiled out: nothing is sent, though the service holds a sink");
    uint8_t buf[EMB_SVC_MSG_EVENT_LEN];
    ok_eq(emb_svc_trace_encode(&t, buf, sizeof buf, "fs", "r", 1, EMB_SVC_KIND_REPLY),
          EMB_SVC_MSG_EVENT_LEN, "the codec is still there");
    return emb_test_done();
}
