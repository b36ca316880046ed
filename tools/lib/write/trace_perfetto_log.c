/* The log lines a Perfetto export shows beside the trace: a log stream decoded by the one
 * log decoder (log_decode.h), each line kept with its context and time. */
#define _POSIX_C_SOURCE 200809L
#include "trace_perfetto.h"

#include <stdlib.h>
#include <string.h>

#include <emb/wire.h>

#include "buffer.h"
#include "capture.h"
#include "input_file.h"
#include "trace_perfetto_model.h"

struct collect {
    struct emb_perfetto_logs *out;
    bool failed;
};

static void on_record(void *arg, const struct emb_logrec *r)
{
    struct collect *c = arg;
    struct emb_perfetto_logs *l = c->out;
    if ((r->type != EMB_LREC_LOG && r->type != EMB_LREC_HEXDUMP) || c->failed)
        return;
    if (!r->has_ts) {
        l->untimed++;
        return;
    }
    struct emb_perfetto_log_line *a = emb_array_grow(l->lines, &l->cap, l->n + 1, sizeof *a);
    char *text = strndup(r->text ? r->text : "", r->text ? r->text_len : 0);
    char *module = strdup(r->site && r->site->module ? r->site->module : "");
    if (!a || !text || !module) {
        free(text);
        free(module);
        c->failed = true;
        return;
    }
    l->lines = a;
    a[l->n++] = (struct emb_perfetto_log_line){
        .ts = r->ts, .context = r->ctx, .level = r->site ? r->site->level : 0,
        .module = module, .text = text};
}

int emb_perfetto_logs_decode(const struct emb_logdb *db, const uint8_t *data, size_t len,
                             const char *name, struct emb_problems *ps,
                             struct emb_perfetto_logs *out)
{
    struct collect c = {.out = out};
    struct emb_log_decoder_options opt = {.db = db, .name = name, .record = on_record, .arg = &c,
                                          .problems = ps};
    struct emb_log_decoder *d = emb_log_decoder_new(&opt);
    if (!d)
        return -1;
    emb_log_decoder_feed(d, data, len);
    emb_log_decoder_finish(d);
    const struct emb_log_hello *h = emb_log_decoder_hello(d);
    out->clock_hz = h->seen ? h->clock_hz : 0;
    emb_log_decoder_free(d);
    return c.failed ? -1 : 0;
}

void emb_perfetto_logs_free(struct emb_perfetto_logs *logs)
{
    for (size_t i = 0; i < logs->n; i++) {
        free(logs->lines[i].text);
        free(logs->lines[i].module);
    }
    free(logs->lines);
    memset(logs, 0, sizeof *logs);
}

/* A sealed capture ("EMBS") holds the log stream as its log section: decodes that. */
static int capture_logs(const struct emb_logdb *db, const uint8_t *data, size_t len,
                        const char *path, struct emb_problems *ps, struct emb_perfetto_logs *out)
{
    struct emb_capture_options opt = {.catalog = emb_catalog_builtin(), .name = path,
                                      .ignore_checksum = true, .skip_trace = true};
    struct emb_capture *cap = opt.catalog ? emb_capture_decode(data, len, &opt) : NULL;
    const struct emb_capture_section *sec;
    int rc = -1;
    if (!cap)
        emb_report_in(ps, path, EMB_ERROR, -1, "out of memory");
    else if (emb_capture_failed(cap, NULL, NULL))
        for (size_t i = 0; i < emb_capture_problems(cap)->n; i++)
            emb_report_in(ps, path, EMB_ERROR, emb_capture_problems(cap)->items[i].offset, "%s",
                          emb_capture_problems(cap)->items[i].message);
    else if (!(sec = emb_capture_section(cap, EMB_CAP_SEC_LOG)) || !sec->length)
        emb_report_in(ps, path, EMB_ERROR, -1, "the capture holds no log section");
    else
        rc = emb_perfetto_logs_decode(db, sec->data, (size_t)sec->length, path, ps, out);
    emb_capture_free(cap);
    return rc;
}

int emb_perfetto_logs_read(const char *log_path, const char *elf_path, struct emb_problems *ps,
                           struct emb_perfetto_logs *out)
{
    struct emb_problems elf_ps;
    emb_problems_init(&elf_ps, elf_path);
    struct emb_logdb *db = emb_logdb_open(elf_path, &elf_ps);
    for (size_t i = 0; i < elf_ps.n; i++)
        emb_report_in(ps, elf_path, elf_ps.items[i].severity, elf_ps.items[i].offset, "%s",
                      elf_ps.items[i].message);
    emb_problems_free(&elf_ps);
    if (!db)
        return -1;
    char err[256];
    size_t len;
    uint8_t *data = emb_input_read(log_path, &len, err, sizeof err);
    int rc = -1;
    if (!data)
        emb_report_in(ps, log_path, EMB_ERROR, -1, "%s", err);
    else if (len >= 4 && emb_get_le32(data) == EMB_CAP_MAGIC)
        rc = capture_logs(db, data, len, log_path, ps, out) == 0 &&
                     !emb_problems_at_least(ps, EMB_ERROR) ? 0 : -1;
    else if (emb_perfetto_logs_decode(db, data, len, log_path, ps, out) != 0)
        emb_report_in(ps, log_path, EMB_ERROR, -1, "out of memory");
    else
        rc = emb_problems_at_least(ps, EMB_ERROR) ? -1 : 0;
    free(data);
    emb_logdb_free(db);
    return rc;
}

static uint32_t context_track(struct emb_perfetto_model *m, uint16_t id)
{
    for (size_t i = 0; i < m->ntracks; i++)
        if (m->tracks[i].kind == EMB_PERFETTO_TRACK_CONTEXT && m->tracks[i].tid == id)
            return (uint32_t)i;
    char name[32];
    snprintf(name, sizeof name, "ctx %u", id);
    return emb_perfetto_track_add(m, EMB_PERFETTO_TRACK_CONTEXT, id, (uint32_t)m->ntracks, name);
}

/* Log lines on the context that logged them, at their time on the trace's clock; a line
 * from before the trace's start has no place on it and is left out. */
void emb_perfetto_log_items(struct emb_perfetto_model *m, const struct emb_perfetto_logs *logs,
                      uint64_t order)
{
    const struct emb_trace_info *h = emb_trace_info(m->t);
    uint64_t hz = logs->clock_hz ? logs->clock_hz : h->clock_hz;
    uint64_t start = emb_trace_ticks_to_ns(h->start_ts, h->clock_hz);
    uint32_t cat = emb_perfetto_intern(m, "log");
    for (size_t i = 0; i < logs->n; i++) {
        const struct emb_perfetto_log_line *l = &logs->lines[i];
        uint64_t ns = emb_trace_ticks_to_ns(l->ts, hz);
        if (ns < start)
            continue;
        struct emb_perfetto_item *it = emb_perfetto_item_add(
            m, EMB_PERFETTO_LOG, context_track(m, l->context), ns - start, order + i);
        it->log = l;
        it->name = emb_perfetto_intern(m, l->text);
        it->cat = cat;
    }
}
