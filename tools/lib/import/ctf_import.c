/* A CTF trace through libbabeltrace2 made a trace stream of ours (ctf_import.h): a graph of
 * src.ctf.fs, utils.muxer and a sink component class of our own whose consume method
 * hands every message to the replay encoder. */
#define _POSIX_C_SOURCE 200809L
#include "ctf_import_internal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <emb/config.h>
#include <emb/trace_format.h>

#include "trace_replay.h"

#define CTX_SLOTS 4096u /* context keys; EMB_TSF_MAX_CONTEXTS of them at most */
#define STREAMS_MAX 1024u

struct ctx_slot {
    uint64_t key;
    int ctx;
    bool used;
};

struct stream_last {               /* where a stream's discarded events are counted */
    const bt_stream *stream;
    int ctx;
};

struct importer {
    const char *dir;
    struct emb_problems *ps;
    uint64_t max_events;
    struct ctf_plan plan;
    bool planned, failed, done;
    struct emb_replay *replay;
    bt_message_iterator *it;
    uint64_t clock_hz;
    struct ctx_slot slots[CTX_SLOTS];
    char names[EMB_TSF_MAX_CONTEXTS][EMB_TSF_NAME_MAX];
    unsigned nctx;
    struct stream_last streams[STREAMS_MAX];
    unsigned nstreams;
    struct emb_ctf_import_stats stats;
};

bool emb_ctf_is_trace_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/metadata", path);
    return stat(meta, &st) == 0 && S_ISREG(st.st_mode);
}

#define import_fail(imp, ...) \
    ((imp)->failed = true, emb_report((imp)->ps, EMB_ERROR, -1, __VA_ARGS__), -1)

static int64_t ticks_to_ns(uint64_t ticks, uint64_t hz)
{
    return hz == 1000000000u ? (int64_t)ticks
                             : (int64_t)((unsigned __int128)ticks * 1000000000u / hz);
}

/* The one clock every stream class shares: its frequency and its offset in ns. */
static int trace_clock(struct importer *imp, const bt_trace_class *tc, int64_t *offset_ns)
{
    const bt_clock_class *cc = NULL;
    for (uint64_t s = 0; s < bt_trace_class_get_stream_class_count(tc); s++) {
        const bt_stream_class *sc = bt_trace_class_borrow_stream_class_by_index_const(tc, s);
        const bt_clock_class *c = bt_stream_class_borrow_default_clock_class_const(sc);
        if (c == NULL)
            return import_fail(imp, "the CTF trace's stream class %" PRIu64 " has no clock: its "
                               "events have no time (docs/ctf-foreign.md): not read", s);
        if (cc != NULL && c != cc)
            return import_fail(imp, "the CTF trace's stream classes use different clocks "
                               "(docs/ctf-foreign.md): not read");
        cc = c;
    }
    if (cc == NULL)
        return import_fail(imp, "the CTF trace has no stream class: nothing to read");
    int64_t sec;
    uint64_t cycles;
    bt_clock_class_get_offset(cc, &sec, &cycles);
    imp->clock_hz = bt_clock_class_get_frequency(cc);
    if (imp->clock_hz == 0)
        return import_fail(imp, "the CTF trace's clock has frequency 0: not read");
    *offset_ns = sec * 1000000000 + ticks_to_ns(cycles, imp->clock_hz);
    return 0;
}

static void trace_uuid(const bt_trace *t, uint8_t uuid[16])
{
    const uint8_t *u = bt_trace_get_uuid(t);
    if (u != NULL) {
        memcpy(uuid, u, 16);
        return;
    }
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, uuid, 16) != 16)
        memset(uuid, 0x5A, 16);
    if (fd >= 0)
        close(fd);
}

/* The first stream's trace: the catalogue, the clock, and the replay writing to them. */
static int start(struct importer *imp, const bt_stream *stream)
{
    const bt_trace *t = bt_stream_borrow_trace_const(stream);
    const bt_trace_class *tc = bt_trace_borrow_class_const(t);
    int64_t offset_ns;
    if (trace_clock(imp, tc, &offset_ns) != 0)
        return -1;
    imp->planned = true;
    if (ctf_plan_build(&imp->plan, tc, imp->dir, imp->ps) != 0)
        return imp->failed = true, -1;
    char port[EMB_TSF_PORT_MAX];
    const bt_value *tracer = bt_trace_borrow_environment_entry_value_by_name_const(t, "tracer_name");
    snprintf(port, sizeof port, "ctf %s", tracer && bt_value_is_string(tracer)
                                              ? bt_value_string_get(tracer) : "trace");
    struct emb_tsf_info ti = {.catalog_checksum = imp->plan.catalog->checksum,
                              .clock_hz = 1000000000u, .clock_offset_ns = offset_ns,
                              .pointer_size = 8, .port = port};
    trace_uuid(t, ti.uuid);
    imp->replay = emb_replay_new(&ti);
    if (imp->replay == NULL)
        return import_fail(imp, "cannot start the trace writer (out of memory)");
    return 0;
}

static const bt_field *member(const bt_field *s, const char *name)
{
    if (s == NULL || bt_field_get_class_type(s) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return NULL;
    return bt_field_structure_borrow_member_field_by_name_const(s, name);
}

static bool field_uint(const bt_field *f, uint64_t *v)
{
    if (f == NULL)
        return false;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        *v = bt_field_integer_unsigned_get_value(f);
    else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        *v = (uint64_t)bt_field_integer_signed_get_value(f);
    else
        return false;
    return true;
}

/* A context's name, made unique: `base`, then `base-2`, `base-3`... */
static void unique_name(struct importer *imp, const char *base, char *out, size_t len)
{
    snprintf(out, len, "%.16s", base);
    for (unsigned k = 2;; k++) {
        bool taken = false;
        for (unsigned i = 0; i < imp->nctx && !taken; i++)
            taken = !strcmp(imp->names[i], out);
        if (!taken)
            return;
        snprintf(out, len, "%.16s-%u", base, k);
    }
}

/* The event's context key and name: its thread (vtid), else its CPU, else its stream. */
static uint64_t context_key(struct importer *imp, const bt_event *ev, const bt_stream *stream,
                            char *base, size_t len, uint16_t *kind)
{
    const bt_field *common = bt_event_borrow_common_context_field_const(ev);
    uint64_t v;
    if (field_uint(member(common, "vtid"), &v)) {
        const bt_field *proc = member(common, "procname");
        if (proc != NULL && bt_field_get_class_type(proc) == BT_FIELD_CLASS_TYPE_STRING)
            snprintf(base, len, "%s", bt_field_string_get_value(proc));
        else
            snprintf(base, len, "tid%" PRIu64, v);
        *kind = EMB_CONTEXT_THREAD;
        imp->stats.context_rule = "thread (vtid)";
        return (UINT64_C(1) << 62) | (v & 0xFFFFFFFFu);
    }
    const bt_packet *pkt = bt_event_borrow_packet_const(ev);
    if (pkt != NULL && field_uint(member(bt_packet_borrow_context_field_const(pkt), "cpu_id"), &v)) {
        snprintf(base, len, "cpu%" PRIu64, v);
        *kind = EMB_CONTEXT_CPU;
        imp->stats.context_rule = "cpu (cpu_id)";
        return (UINT64_C(2) << 62) | (v & 0xFFFFFFFFu);
    }
    const char *name = bt_stream_get_name(stream);
    const char *slash = name ? strrchr(name, '/') : NULL;
    if (name != NULL)
        snprintf(base, len, "%s", slash ? slash + 1 : name);
    else
        snprintf(base, len, "stream%" PRIu64, bt_stream_get_id(stream));
    *kind = EMB_CONTEXT_THREAD;
    imp->stats.context_rule = "stream";
    uint64_t sc = bt_stream_class_get_id(bt_stream_borrow_class_const(stream));
    return (UINT64_C(3) << 62) | (sc << 32) | (bt_stream_get_id(stream) & 0xFFFFFFFFu);
}

static void note_stream(struct importer *imp, const bt_stream *stream, int ctx)
{
    for (unsigned i = 0; i < imp->nstreams; i++)
        if (imp->streams[i].stream == stream) {
            imp->streams[i].ctx = ctx;
            return;
        }
    if (imp->nstreams < STREAMS_MAX)
        imp->streams[imp->nstreams++] = (struct stream_last){stream, ctx};
}

static int context_of(struct importer *imp, const bt_event *ev, const bt_stream *stream)
{
    char base[64];
    uint16_t kind;
    uint64_t key = context_key(imp, ev, stream, base, sizeof base, &kind);
    size_t s = (size_t)(key * 0x9E3779B97F4A7C15ull >> 52) % CTX_SLOTS;
    while (imp->slots[s].used && imp->slots[s].key != key)
        s = (s + 1) % CTX_SLOTS;
    if (!imp->slots[s].used) {
        if (imp->nctx >= EMB_TSF_MAX_CONTEXTS - 1u)
            return import_fail(imp, "the CTF trace has more than %u threads, processors or streams: "
                               "not read", EMB_TSF_MAX_CONTEXTS - 1u);
        unique_name(imp, base, imp->names[imp->nctx], sizeof imp->names[0]);
        int c = emb_replay_context(imp->replay, (uint16_t)imp->nctx, kind, imp->names[imp->nctx]);
        if (c < 0)
            return import_fail(imp, "out of memory");
        imp->nctx++;
        imp->slots[s] = (struct ctx_slot){.key = key, .ctx = c, .used = true};
    }
    note_stream(imp, stream, imp->slots[s].ctx);
    return imp->slots[s].ctx;
}

static int on_event(struct importer *imp, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const bt_stream *stream = bt_event_borrow_stream_const(ev);
    const struct ctf_event_plan *e = ctf_plan_find(&imp->plan, bt_event_borrow_class_const(ev));
    if (e == NULL)
        return import_fail(imp, "an event of a class its metadata did not "
                           "declare: not read");
    int ctx = context_of(imp, ev, stream);
    if (ctx < 0)
        return -1;
    uint64_t ticks = bt_clock_snapshot_get_value(bt_message_event_borrow_default_clock_snapshot_const(msg));
    uint8_t payload[CONFIG_EMB_TRACE_MAX_PAYLOAD];
    const bt_field *pf = bt_event_borrow_payload_field_const(ev);
    imp->stats.truncated_strings += pf ? ctf_plan_encode(e, pf, payload) : 0u;
    if (emb_replay_event(imp->replay, ctx, (uint64_t)ticks_to_ns(ticks, imp->clock_hz), e->id,
                         payload, e->ev->payload_size) != 0)
        return import_fail(imp, "cannot write event `%s`", e->ev->name);
    imp->stats.events++;
    if (imp->max_events != 0 && imp->stats.events >= imp->max_events)
        imp->done = true;
    return 0;
}

static void on_discarded(struct importer *imp, const bt_message *msg)
{
    uint64_t n = 0;
    const bt_stream *stream = bt_message_discarded_events_borrow_stream_const(msg);
    if (bt_message_discarded_events_get_count(msg, &n) != BT_PROPERTY_AVAILABILITY_AVAILABLE)
        n = 1; /* some were lost; the trace does not say how many */
    imp->stats.discarded_events += n;
    for (unsigned i = 0; i < imp->nstreams; i++)
        if (imp->streams[i].stream == stream)
            emb_replay_lost(imp->replay, imp->streams[i].ctx, (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n));
}

static int on_message(struct importer *imp, const bt_message *msg)
{
    bt_message_type type = bt_message_get_type(msg);
    if (type == BT_MESSAGE_TYPE_STREAM_BEGINNING && !imp->planned)
        return start(imp, bt_message_stream_beginning_borrow_stream_const(msg));
    if (imp->replay == NULL)
        return 0;
    if (type == BT_MESSAGE_TYPE_EVENT)
        return on_event(imp, msg);
    if (type == BT_MESSAGE_TYPE_DISCARDED_EVENTS) {
        on_discarded(imp, msg);
    } else if (type == BT_MESSAGE_TYPE_DISCARDED_PACKETS) {
        uint64_t n = 0;
        if (bt_message_discarded_packets_get_count(msg, &n) != BT_PROPERTY_AVAILABILITY_AVAILABLE)
            n = 1;
        imp->stats.discarded_packets += n;
    }
    return 0;
}

static bt_component_class_sink_consume_method_status consume(bt_self_component_sink *self)
{
    struct importer *imp = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    bt_message_array_const msgs;
    uint64_t n;
    switch (bt_message_iterator_next(imp->it, &msgs, &n)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
    default: return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    }
    int rc = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (rc == 0 && !imp->done)
            rc = on_message(imp, msgs[i]);
        bt_message_put_ref(msgs[i]);
    }
    if (rc != 0)
        return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    return imp->done ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END
                     : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}

static bt_component_class_initialize_method_status sink_init(bt_self_component_sink *self,
                                                             bt_self_component_sink_configuration *cfg,
                                                             const bt_value *params, void *data)
{
    (void)cfg;
    (void)params;
    bt_self_component_set_data(bt_self_component_sink_as_self_component(self), data);
    if (bt_self_component_sink_add_input_port(self, "in", NULL, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status configured(bt_self_component_sink *self)
{
    struct importer *imp = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    bt_self_component_port_input *in = bt_self_component_sink_borrow_input_port_by_name(self, "in");
    if (bt_message_iterator_create_from_sink_component(self, in, &imp->it) !=
        BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
        return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
    return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static void sink_finalize(bt_self_component_sink *self)
{
    struct importer *imp = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    bt_message_iterator_put_ref(imp->it);
    imp->it = NULL;
}

/* libbabeltrace2's reason for a failure: its root cause, taken (and cleared). */
static void bt_reason(char *buf, size_t len)
{
    const bt_error *err = bt_current_thread_take_error();
    buf[0] = '\0';
    if (err == NULL)
        return;
    uint64_t n = bt_error_get_cause_count(err);
    if (n > 0) {
        const char *m = bt_error_cause_get_message(bt_error_borrow_cause_by_index(err, n - 1));
        snprintf(buf, len, ": %s", m ? m : "");
        for (char *c = buf; *c; c++)
            if (*c == '\n')
                *c = ' ';
    }
    bt_error_release(err);
}

static const bt_component_class_source *plugin_source(const bt_plugin **pl)
{
    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &pl[0]) != BT_PLUGIN_FIND_STATUS_OK)
        return NULL;
    return bt_plugin_borrow_source_component_class_by_name_const(pl[0], "fs");
}

static const bt_component_class_filter *plugin_muxer(const bt_plugin **pl)
{
    if (bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &pl[1]) != BT_PLUGIN_FIND_STATUS_OK)
        return NULL;
    return bt_plugin_borrow_filter_component_class_by_name_const(pl[1], "muxer");
}

static bt_component_class_sink *sink_class(void)
{
    bt_component_class_sink *cc = bt_component_class_sink_create("emb-import", consume);
    if (cc == NULL)
        return NULL;
    bt_component_class_sink_set_initialize_method(cc, sink_init);
    bt_component_class_sink_set_graph_is_configured_method(cc, configured);
    bt_component_class_sink_set_finalize_method(cc, sink_finalize);
    return cc;
}

/* src.ctf.fs on the directory, each of its ports into the muxer, the muxer into our sink. */
static int build_graph(struct importer *imp, bt_graph *g, const bt_plugin **pl,
                       bt_component_class_sink *own)
{
    const bt_component_class_source *fs = plugin_source(pl);
    const bt_component_class_filter *mx = fs ? plugin_muxer(pl) : NULL;
    if (mx == NULL)
        return -2;
    bt_value *params = bt_value_map_create();
    bt_value *inputs = NULL;
    int rc = -1;
    const bt_component_source *src = NULL;
    const bt_component_filter *mux = NULL;
    const bt_component_sink *sink = NULL;
    if (params == NULL || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != 0 ||
        bt_value_array_append_string_element(inputs, imp->dir) != 0)
        goto out;
    if (bt_graph_add_source_component(g, fs, "src", params, BT_LOGGING_LEVEL_NONE, &src) != 0 ||
        bt_graph_add_filter_component(g, mx, "mux", NULL, BT_LOGGING_LEVEL_NONE, &mux) != 0 ||
        bt_graph_add_sink_component_with_initialize_method_data(g, own, "sink", NULL, imp,
                                                                BT_LOGGING_LEVEL_NONE, &sink) != 0)
        goto out;
    for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
        const bt_port_input *in = bt_component_filter_borrow_input_port_by_index_const(
            mux, bt_component_filter_get_input_port_count(mux) - 1);
        if (bt_graph_connect_ports(g, bt_component_source_borrow_output_port_by_index_const(src, i),
                                   in, NULL) != 0)
            goto out;
    }
    rc = bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                                bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL)
             ? -1 : 0;
out:
    bt_value_put_ref(params);
    return rc;
}

static int run_graph(struct importer *imp)
{
    const bt_plugin *pl[2] = {NULL, NULL};
    bt_component_class_sink *own = sink_class();
    bt_graph *g = own ? bt_graph_create(0) : NULL;
    char why[512];
    int rc = g ? build_graph(imp, g, pl, own) : -1;
    if (rc == -2) {
        emb_report(imp->ps, EMB_ERROR, -1, "libbabeltrace2 has no ctf or utils plugin "
                   "(install babeltrace2): cannot read a CTF trace");
    } else if (rc != 0) {
        bt_reason(why, sizeof why);
        emb_report(imp->ps, EMB_ERROR, -1, "libbabeltrace2 cannot open the CTF trace%s",
                   why);
    } else {
        bt_graph_run_status st;
        while ((st = bt_graph_run(g)) == BT_GRAPH_RUN_STATUS_AGAIN)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        if (st != BT_GRAPH_RUN_STATUS_OK && !imp->failed) {
            bt_reason(why, sizeof why);
            emb_report(imp->ps, EMB_ERROR, -1, "libbabeltrace2 cannot read the CTF trace%s",
                       why);
            rc = -1;
        } else {
            rc = imp->failed ? -1 : 0;
        }
        if (imp->failed)
            bt_current_thread_clear_error();
    }
    bt_graph_put_ref(g);
    bt_component_class_sink_put_ref(own);
    bt_plugin_put_ref(pl[0]);
    bt_plugin_put_ref(pl[1]);
    return rc;
}

static int finish(struct importer *imp, struct emb_ctf_import *out)
{
    if (imp->replay == NULL) {
        emb_report(imp->ps, EMB_ERROR, -1, "the CTF trace holds no stream");
        return -1;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL || emb_replay_write(imp->replay, f) != 0 || fclose(f) != 0) {
        free(buf);
        emb_report(imp->ps, EMB_ERROR, -1, "out of memory");
        return -1;
    }
    out->stream = (uint8_t *)buf;
    out->stream_len = len;
    out->catalog = imp->plan.catalog;
    imp->plan.catalog = NULL;
    out->catalog_yaml = imp->plan.yaml;
    out->catalog_yaml_len = imp->plan.yaml_len;
    imp->plan.yaml = NULL;
    imp->stats.contexts = imp->nctx;
    out->stats = imp->stats;
    if (imp->stats.truncated_strings != 0)
        emb_report(imp->ps, EMB_WARNING, -1, "%" PRIu64 " strings longer than 31 bytes were cut "
                   "to their first 31 (a string field is char[32]: docs/ctf-foreign.md)",
                   imp->stats.truncated_strings);
    if (imp->stats.discarded_packets != 0)
        emb_report(imp->ps, EMB_WARNING, -1, "libbabeltrace2 found %" PRIu64 " packets "
                   "discarded: their events are not in the trace", imp->stats.discarded_packets);
    return 0;
}

int emb_ctf_import(const char *dir, uint64_t max_events, struct emb_ctf_import *out,
                   struct emb_problems *ps)
{
    memset(out, 0, sizeof *out);
    struct importer *imp = calloc(1, sizeof *imp);
    if (imp == NULL) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        return -1;
    }
    imp->dir = dir;
    imp->ps = ps;
    imp->max_events = max_events;
    imp->stats.context_rule = "stream";
    int rc = run_graph(imp);
    if (rc == 0)
        rc = finish(imp, out);
    emb_replay_free(imp->replay);
    if (imp->plan.catalog != NULL)
        emb_catalog_free(imp->plan.catalog);
    ctf_plan_free(&imp->plan);
    free(imp);
    return rc;
}

void emb_ctf_import_free(struct emb_ctf_import *imp)
{
    free(imp->stream);
    free(imp->catalog_yaml);
    if (imp->catalog != NULL)
        emb_catalog_free(imp->catalog);
    memset(imp, 0, sizeof *imp);
}
