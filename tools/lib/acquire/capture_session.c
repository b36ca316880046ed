/* Recording one run into a sealed capture (capture_session.h). */
#include "capture_session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "buffer.h"
#include "capture_catalog.h"
#include "input_file.h"
#include "trace_catalog.h"
#include "trace_decode.h"

/* A problem about another file than the sink's (a section file), or about none (file
 * NULL): the sink stamps its own file on every problem, so it is set for this one. */
static void report_on(struct emb_problems *ps, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report_on(struct emb_problems *ps, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emb_vreport_in(ps, file, EMB_ERROR, -1, fmt, ap);
    va_end(ap);
}

static uint8_t *read_input(const char *path, size_t *len, struct emb_problems *ps)
{
    char why[256];
    uint8_t *buf = emb_input_read(path, len, why, sizeof why);
    if (!buf)
        report_on(ps, path, "%s", why);
    return buf;
}

int emb_capture_session_acquire(const struct emb_capture_session_options *o,
                                struct emb_capture_session *s, struct emb_problems *problems)
{
    memset(s, 0, sizeof *s);
    if (o->live == NULL) {
        s->trace = read_input(o->source, &s->trace_len, problems);
        return s->trace != NULL ? 0 : -1;
    }
    if (emb_source_capture(o->live, &s->live, problems) != 0)
        return -1;
    s->trace = s->live.trace;
    s->trace_len = s->live.trace_len;
    s->live.trace = NULL; /* the session's now */
    return 0;
}

/* The catalogue the stream names, unless one was given; NULL when the stream carries
 * none. */
static const struct emb_catalog *catalog_named(const struct emb_capture_session_options *o,
                                               const struct emb_capture_session *s)
{
    const struct emb_catalog *cat = o->catalog != NULL ? o->catalog : s->carried;
    if (cat == NULL && o->catalog_for != NULL && s->trace_len >= EMB_TSF_OFF_CATALOG + 4u)
        cat = o->catalog_for(emb_get_le32(s->trace + EMB_TSF_OFF_CATALOG));
    return cat;
}

static const struct emb_catalog *catalog_of(const struct emb_capture_session_options *o,
                                            const struct emb_capture_session *s)
{
    const struct emb_catalog *cat = catalog_named(o, s);
    return cat != NULL ? cat : emb_catalog_builtin();
}

/* A catalogue neither given nor known, taken from the stream header's catalog block when
 * it carries one. 0, or -1 after reporting why the block is not to be believed. */
static int take_carried(const struct emb_capture_session_options *o, struct emb_capture_session *s,
                        struct emb_problems *ps)
{
    struct emb_capture_section body;
    if (catalog_named(o, s) != NULL || o->catalog_text != NULL)
        return 0;
    int found = emb_trace_catalog_body(s->trace, s->trace_len, &body, ps);
    if (found <= 0)
        return found;
    s->carried = emb_capture_catalog_read(&body, emb_get_le32(s->trace + EMB_TSF_OFF_CATALOG),
                                          "stream", &s->carried_text, &s->carried_text_len, ps);
    return s->carried != NULL ? 0 : -1;
}

/* Decodes the stream: the trace, or NULL after reporting why it is not to be sealed. */
static struct emb_trace *decode_clean(const struct emb_capture_session_options *o,
                                      const struct emb_capture_session *s, struct emb_problems *ps)
{
    struct emb_trace_options to = {.catalog = catalog_of(o, s), .name = o->source,
                                   .progress = o->progress, .progress_arg = o->progress_arg};
    struct emb_trace *t = emb_trace_decode(s->trace, s->trace_len, &to);
    if (!t) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        return NULL;
    }
    if (emb_trace_summary(t)->fatal || emb_trace_summary(t)->errors) {
        const struct emb_problems *found = emb_trace_problems(t);
        for (size_t i = 0; i < found->n; i++)
            emb_report(ps, EMB_ERROR, found->items[i].offset, "%s", found->items[i].message);
        emb_report(ps, EMB_ERROR, -1, "does not decode cleanly: not sealed");
        emb_trace_free(t);
        return NULL;
    }
    return t;
}

/* The opaque sections: the files given, else what a live source sent. The bytes read
 * are kept in owned[] for the caller to free. */
static int add_sections(const struct emb_capture_session_options *o, struct emb_capture_session *s,
                        struct emb_capture_parts *parts, uint8_t *owned[3], struct emb_problems *ps)
{
    const char *paths[3] = {o->log, o->crash, o->descriptor};
    const uint16_t types[3] = {EMB_CAP_SEC_LOG, EMB_CAP_SEC_CRASH, EMB_CAP_SEC_DESCRIPTOR};
    if (!o->log && s->live.log_len > 0)
        parts->opaque[parts->nopaque++] = (struct emb_capture_section){
            .type = EMB_CAP_SEC_LOG, .version = 1, .data = s->live.log, .length = s->live.log_len};
    if (!o->crash && s->live.crash_len > 0)
        parts->opaque[parts->nopaque++] = (struct emb_capture_section){
            .type = EMB_CAP_SEC_CRASH, .version = 1, .data = s->live.crash, .length = s->live.crash_len};
    for (int i = 0; i < 3; i++) {
        if (!paths[i])
            continue;
        size_t len = 0;
        if (!(owned[i] = read_input(paths[i], &len, ps)))
            return -1;
        parts->opaque[parts->nopaque++] = (struct emb_capture_section){
            .type = types[i], .version = 1, .data = owned[i], .length = len};
    }
    return 0;
}

static int seal_parts(const struct emb_capture_session_options *o, struct emb_capture_session *s,
                      const struct emb_trace *t, struct emb_capture_parts *parts,
                      struct emb_problems *ps)
{
    char *metadata = NULL;
    uint8_t *owned[4] = {NULL, NULL, NULL, NULL}; /* log, crash, descriptor, catalogue */
    int rc = -1;
    if (emb_capture_describe(t, o->label, o->revision, &parts->identity, &parts->window) != 0 ||
        !(metadata = emb_capture_metadata(t, &parts->metadata_len))) {
        report_on(ps, NULL, "out of memory");
        goto out;
    }
    parts->metadata = metadata;
    parts->trace = s->trace;
    parts->trace_len = s->trace_len;
    if (add_sections(o, s, parts, owned, ps) != 0)
        goto out;
    char err[256];
    const char *text = o->catalog_text ? o->catalog_text : s->carried_text;
    if (text) {
        size_t len = 0;
        size_t text_len = o->catalog_text ? o->catalog_text_len : s->carried_text_len;
        if (!(owned[3] = emb_capture_catalog_encode(text, text_len, &len, err, sizeof err))) {
            report_on(ps, NULL, "%s", err);
            goto out;
        }
        parts->opaque[parts->nopaque++] = (struct emb_capture_section){
            .type = EMB_CAP_SEC_CATALOG, .version = 1, .data = owned[3], .length = len};
    }
    if (!(s->file = emb_capture_encode(parts, &s->file_len, err, sizeof err))) {
        report_on(ps, NULL, "%s", err);
        goto out;
    }
    rc = 0;
out:
    for (int i = 0; i < 4; i++)
        free(owned[i]);
    free(metadata);
    return rc;
}

int emb_capture_session_seal(const struct emb_capture_session_options *o,
                             struct emb_capture_session *s, struct emb_problems *problems)
{
    if (s->trace == NULL) {
        emb_report(problems, EMB_ERROR, -1, "no trace stream header arrived: nothing to seal");
        return -1;
    }
    if (take_carried(o, s, problems) != 0)
        return -1;
    struct emb_trace *t = decode_clean(o, s, problems);
    if (!t)
        return -1;
    struct emb_capture_parts parts;
    memset(&parts, 0, sizeof parts);
    int rc = seal_parts(o, s, t, &parts, problems);
    s->identity = parts.identity;
    s->window = parts.window;
    emb_trace_free(t);
    return rc;
}

void emb_capture_session_free(struct emb_capture_session *s)
{
    emb_source_result_free(&s->live);
    EMB_FREE_ALL(s->trace, s->window.rows, s->file);
    emb_catalog_free(s->carried);
    free(s->carried_text);
    memset(s, 0, sizeof *s);
}
