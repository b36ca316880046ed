/* `emb trace --latency`: the latency metrics of trace_latency.h as a table or JSON, with
 * the build's identity (port, build id, catalogue, clock) beside them. */
#include "trace_write.h"

#include <inttypes.h>
#include <stdio.h>

#include "json.h"
#include "text.h"
#include "trace_latency.h"

static double ns(uint64_t ticks, uint64_t hz)
{
    return hz ? (double)ticks * 1e9 / (double)hz : 0.0;
}

int emb_trace_write_latency(const struct emb_trace *t, FILE *out)
{
    struct emb_trace_latency l;
    if (emb_trace_latency_compute(t, &l) != 0)
        return -1;
    const struct emb_trace_info *h = emb_trace_info(t);
    char id[65] = "";
    for (unsigned i = 0; i < h->build_id_len && i < 32; i++)
        snprintf(id + 2 * i, 3, "%02x", h->build_id[i]);
    fprintf(out, "%s: port %s, build id %s, catalogue 0x%08" PRIx32 ", clock %" PRIu64 " Hz\n",
            emb_trace_name(t), h->port[0] ? h->port : "?", id[0] ? id : "-", h->catalog_checksum, h->clock_hz);
    const char *bold = emb_color_code(out, EMB_C_BOLD), *reset = emb_color_code(out, EMB_C_RESET);
    fprintf(out, "%s%-18s %8s %12s %12s %12s%s\n", bold, "metric", "count", "min ns", "mean ns", "max ns", reset);
    for (unsigned m = 0; m < EMB_LAT_COUNT; m++) {
        const struct emb_latency_stat *s = &l.m[m];
        if (s->count == 0) {
            fprintf(out, "%-18s %8s\n", emb_latency_metric_name(m), "-");
            continue;
        }
        fprintf(out, "%-18s %8" PRIu64 " %12.0f %12.0f %12.0f\n", emb_latency_metric_name(m), s->count,
                ns(s->min, h->clock_hz), ns(s->sum, h->clock_hz) / (double)s->count, ns(s->max, h->clock_hz));
    }
    return ferror(out) ? -1 : 0;
}

int emb_trace_write_json_latency(const struct emb_trace *t, FILE *out)
{
    struct emb_trace_latency l;
    if (emb_trace_latency_compute(t, &l) != 0)
        return -1;
    const struct emb_trace_info *h = emb_trace_info(t);
    struct emb_json j;
    emb_json_begin_document(&j, out);
    emb_json_string(&j, "file", emb_trace_name(t));
    emb_json_begin_object(&j, "identity");
    emb_json_string(&j, "port", h->port);
    char id[65] = "";
    for (unsigned i = 0; i < h->build_id_len && i < 32; i++)
        snprintf(id + 2 * i, 3, "%02x", h->build_id[i]);
    emb_json_string(&j, "build_id", id);
    emb_json_uint(&j, "catalog_checksum", h->catalog_checksum);
    emb_json_uint(&j, "clock_hz", h->clock_hz);
    emb_json_string(&j, "firmware", h->firmware);
    emb_json_string(&j, "config", h->config);
    emb_json_end_object(&j);
    emb_json_begin_object(&j, "latency");
    for (unsigned m = 0; m < EMB_LAT_COUNT; m++) {
        const struct emb_latency_stat *s = &l.m[m];
        emb_json_begin_object(&j, emb_latency_metric_name(m));
        emb_json_uint(&j, "count", s->count);
        emb_json_uint(&j, "min_ticks", s->min);
        emb_json_uint(&j, "max_ticks", s->max);
        emb_json_uint(&j, "sum_ticks", s->sum);
        emb_json_double(&j, "max_ns", ns(s->max, h->clock_hz));
        emb_json_end_object(&j);
    }
    emb_json_end_object(&j);
    emb_json_end_object(&j);
    emb_json_end(&j);
    return ferror(out) ? -1 : 0;
}
