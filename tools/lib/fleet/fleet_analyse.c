/* What one input is, as the fleet stores it: the decoders `emb crash` and `emb inspect`
 * use decide (a crash record and its mini-records, a capture, a trace or log stream), a
 * file they refuse is a refused row with their reason, and a record whose build's ELF is
 * in the store is symbolised into its call chain and signature. */
#include "fleet.h"

#include "capture.h"
#include "crash_report.h"
#include "frame_decode.h"
#include "stream_kind.h"
#include "trace_decode.h"

#include <emb/frame.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void row_init(struct emb_fleet_row *r, const uint8_t *raw, size_t n, const char *kind)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->raw = raw;
    r->raw_len = n;
    emb_fleet_sha256_hex(raw, n, r->hash);
}

/* The first error a decoder reported, as "byte N: message". */
static void first_problem(const struct emb_problems *ps, char *out, size_t len)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->items[i].severity >= EMB_WARNING) {
            const struct emb_problem *p = &ps->items[i];
            if (p->offset >= 0)
                snprintf(out, len, "byte %lld: %s", p->offset, p->message);
            else
                snprintf(out, len, "%s", p->message);
            return;
        }
    snprintf(out, len, "refused by its decoder");
}

static void refuse(struct emb_fleet_row *r, const struct emb_problems *ps)
{
    r->refused = true;
    first_problem(ps, r->reason, sizeof r->reason);
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Appends a code address's frames to the chain and its function names to the signature's
 * list (a function once, however many of its inlined frames follow). */
static void add_code(struct emb_fleet_row *r, const struct emb_crash_code *c,
                     const char **names, size_t *nnames)
{
    for (size_t i = 0; i < c->nframes; i++) {
        const struct emb_elf_frame *f = &c->frames[i];
        size_t used = strlen(r->chain);
        if (f->function[0] == '\0')
            continue;
        snprintf(r->chain + used, sizeof r->chain - used, "%s %s:%d%s\n", f->function,
                 f->file[0] ? basename_of(f->file) : "?", f->line, f->inlined ? " (inlined)" : "");
        if (*nnames < EMB_FLEET_TOP_FRAMES && (*nnames == 0 || strcmp(names[*nnames - 1], f->function) != 0))
            names[(*nnames)++] = f->function;
    }
}

/* The signature: the fault class and the top functions when they are known (no rebuild
 * changes them). Without the build's ELF, the build and the address, until it arrives;
 * with it but no function known (a pc in a shared library, a stripped image), the class
 * alone: a runtime address would split one bug by its load address. */
static void sign(struct emb_fleet_row *r, bool with_elf, const char **names, size_t nnames)
{
    int used = snprintf(r->signature, sizeof r->signature, "%s", r->fault_class);
    r->symbolised = with_elf;
    if (!with_elf)
        snprintf(r->signature + used, sizeof r->signature - (size_t)used, " @%s+0x%" PRIx64,
                 r->build_key[0] ? r->build_key : "unknown-build", r->pc);
    else if (nnames == 0)
        snprintf(r->signature + used, sizeof r->signature - (size_t)used, " (no function known)");
    for (size_t i = 0; i < nnames && (size_t)used < sizeof r->signature; i++)
        used += snprintf(r->signature + used, sizeof r->signature - (size_t)used, " %s", names[i]);
    emb_fleet_bucket_id(r->signature, r->bucket);
}

static void summarise_flight(struct emb_fleet_row *r, const struct emb_crash_report *rep)
{
    if (!rep->trace) {
        snprintf(r->flight, sizeof r->flight, "no flight recorder");
        return;
    }
    int used = snprintf(r->flight, sizeof r->flight, "%zu events", emb_trace_record_count(rep->trace));
    if (rep->flight.irq_enter && (size_t)used < sizeof r->flight)
        used += snprintf(r->flight + used, sizeof r->flight - (size_t)used, ", last irq %u", rep->flight.irq);
    for (size_t i = 0; i < rep->flight.nlocks && (size_t)used < sizeof r->flight; i++) {
        const struct emb_crash_lock *l = &rep->flight.locks[i];
        used += snprintf(r->flight + used, sizeof r->flight - (size_t)used, "%s%s", i ? ", " : ", locks held: ",
                         l->named ? l->name : "(unnamed)");
    }
}

static void record_fields(struct emb_fleet_row *r, const struct emb_crash_record *rec)
{
    r->kind = rec->version == 1 ? "crash v1" : "crash v2";
    emb_crash_report_hex(rec->build_id, rec->build_id_len, r->build_id, sizeof r->build_id);
    snprintf(r->build_key, sizeof r->build_key, "%.16s", r->build_id);
    snprintf(r->fw_version, sizeof r->fw_version, "%s", rec->fw_version);
    r->reset_reason = emb_crash_reset_reason_name(rec->reset_reason);
    r->fault_class = emb_crash_fault_class_name(rec->fault_class);
    r->fault_code = rec->fault_code;
    r->fault_address = rec->fault_address;
    r->pc = rec->pc;
    r->uptime = rec->uptime_ticks;
    snprintf(r->thread, sizeof r->thread, "%u", rec->thread_index);
}

/* The record's row, symbolised when the report could be built. */
static void record_row(struct emb_fleet_row *r, const struct emb_crash_input *in,
                       const struct emb_crash_report *rep)
{
    record_fields(r, &in->record);
    const char *names[EMB_FLEET_TOP_FRAMES];
    size_t nnames = 0;
    if (rep && rep->status != EMB_CRASH_REPORT_REFUSED) {
        add_code(r, &rep->pc, names, &nnames);
        if (rep->view.ra_source != EMB_CRASH_RA_NONE)
            add_code(r, &rep->caller, names, &nnames);
        for (size_t i = 1; i < rep->ncalls; i++)
            add_code(r, &rep->calls[i], names, &nnames);
        if (rep->thread_name)
            snprintf(r->thread, sizeof r->thread, "%s", rep->thread_name);
        summarise_flight(r, rep);
    }
    sign(r, rep && rep->status != EMB_CRASH_REPORT_REFUSED, names, nnames);
}

static void mini_row(struct emb_fleet_row *r, const struct emb_crash_mini *m, const char *build_key,
                     const struct emb_crash_report *rep)
{
    snprintf(r->build_key, sizeof r->build_key, "%s", build_key ? build_key : "");
    r->fault_class = emb_crash_fault_class_name(m->fault_class);
    r->fault_code = m->fault_code;
    r->pc = m->pc;
    r->uptime = m->uptime_ticks;
    r->reset_reason = "contained";
    snprintf(r->thread, sizeof r->thread, "%u", m->thread);
    const char *names[EMB_FLEET_TOP_FRAMES];
    size_t nnames = 0;
    if (rep && rep->status != EMB_CRASH_REPORT_REFUSED) {
        struct emb_crash_code code;
        emb_crash_report_code(rep, m->pc, false, &code);
        add_code(r, &code, names, &nnames);
    }
    sign(r, rep && rep->status != EMB_CRASH_REPORT_REFUSED, names, nnames);
}

/* A crash record and the mini-records after it, or mini-records alone. */
static size_t crash_rows(const uint8_t *bytes, size_t n, const struct emb_fleet_analysis *a,
                         struct emb_crash_input *in, struct emb_fleet_row *rows, size_t max)
{
    char key[17] = "";
    if (in->has_record)
        emb_crash_report_hex(in->record.build_id, in->record.build_id_len < 8 ? in->record.build_id_len : 8,
                             key, sizeof key);
    else if (a->mini_build_key)
        snprintf(key, sizeof key, "%s", a->mini_build_key);
    struct emb_elf *elf = key[0] && a->find_elf ? a->find_elf(a->arg, key) : NULL;
    struct emb_problems quiet;
    emb_problems_init(&quiet, a->name);
    struct emb_crash_report_options opt = {.catalog = emb_catalog_builtin(), .name = a->name};
    struct emb_crash_report *rep = elf ? emb_crash_report_build(in, elf, &opt, &quiet) : NULL;
    emb_problems_free(&quiet);
    size_t k = 0;
    if (in->has_record && k < max) {
        row_init(&rows[k], in->data, in->record.length, "crash");
        record_row(&rows[k++], in, rep);
    }
    for (size_t i = 0; i < in->nminis && k < max; i++) {
        size_t at = (size_t)in->minis[i].offset;
        const uint8_t *raw = at + EMB_MINI_SIZE <= in->size ? in->data + at : bytes;
        row_init(&rows[k], raw, at + EMB_MINI_SIZE <= in->size ? EMB_MINI_SIZE : n, "mini-record");
        mini_row(&rows[k++], &in->minis[i], key, rep);
    }
    emb_crash_report_free(rep);
    return k;
}

static size_t capture_rows(const uint8_t *bytes, size_t n, const struct emb_fleet_analysis *a,
                           struct emb_fleet_row *rows, size_t max)
{
    struct emb_capture_options copt = {.catalog = emb_catalog_builtin(), .name = a->name,
                                       .ignore_checksum = true, .skip_trace = true};
    struct emb_capture *c = emb_capture_decode(bytes, n, &copt);
    row_init(&rows[0], bytes, n, "capture");
    if (!c) {
        rows[0].refused = true;
        snprintf(rows[0].reason, sizeof rows[0].reason, "out of memory");
        return 1;
    }
    size_t k = 1;
    if (emb_capture_failed(c, NULL, NULL)) {
        refuse(&rows[0], emb_capture_problems(c));
    } else if (emb_capture_section(c, EMB_CAP_SEC_CRASH)) {
        struct emb_crash_input *in = malloc(sizeof *in);
        struct emb_problems ps;
        emb_problems_init(&ps, a->name);
        if (in && emb_crash_input_open(in, bytes, n, &ps) == 0)
            k = crash_rows(bytes, n, a, in, rows, max);
        else
            refuse(&rows[0], &ps);
        if (in)
            emb_crash_input_close(in);
        free(in);
        emb_problems_free(&ps);
    } else {
        size_t nsec;
        emb_capture_sections(c, &nsec);
        snprintf(rows[0].flight, sizeof rows[0].flight, "%zu sections", nsec);
    }
    emb_capture_free(c);
    return k;
}

static void trace_row(struct emb_fleet_row *r, const uint8_t *bytes, size_t n, const char *name)
{
    struct emb_problems ps;
    emb_problems_init(&ps, name);
    struct emb_trace_options topt = {.catalog = emb_catalog_builtin(), .name = name,
                                     .ignore_checksum = true, .stream = true, .problems = &ps};
    struct emb_trace *t = emb_trace_decode(bytes, n, &topt);
    if (!t || emb_trace_summary(t)->fatal || emb_problems_at_least(&ps, EMB_WARNING))
        refuse(r, &ps);
    else
        snprintf(r->flight, sizeof r->flight, "%" PRIu64 " packets", emb_trace_summary(t)->packets);
    emb_trace_free(t);
    emb_problems_free(&ps);
}

struct frames_seen {
    uint64_t first_bad;
    bool bad;
    uint8_t *crash;      /* the first channel-2 payload, copied */
    size_t crash_len;
};

static void on_frame(void *arg, uint8_t channel, const uint8_t *payload, size_t len, uint64_t offset)
{
    struct frames_seen *s = arg;
    (void)offset;
    if (channel == EMB_FRAME_CH_CRASH && !s->crash && (s->crash = malloc(len ? len : 1)) != NULL) {
        memcpy(s->crash, payload, len);
        s->crash_len = len;
    }
}

static void on_frame_error(void *arg, enum emb_frame_error err, uint64_t offset, size_t bytes)
{
    struct frames_seen *s = arg;
    (void)err;
    (void)bytes;
    if (!s->bad)
        s->first_bad = offset;
    s->bad = true;
}

/* Runs the frame decoder over bytes: the frames' statistics and the first bad one. */
static void read_frames(const uint8_t *bytes, size_t n, struct frames_seen *s, uint64_t *good)
{
    memset(s, 0, sizeof *s);
    struct emb_frame_dec *d = emb_frame_dec_new(0, false, on_frame, on_frame_error, s);
    *good = 0;
    if (!d)
        return;
    emb_frame_dec_feed(d, bytes, n);
    emb_frame_dec_finish(d);
    *good = emb_frame_dec_stats(d)->frames;
    emb_frame_dec_free(d);
}

static void log_row(struct emb_fleet_row *r, const uint8_t *bytes, size_t n)
{
    struct frames_seen s;
    uint64_t good;
    read_frames(bytes, n, &s, &good);
    free(s.crash);
    if (s.bad) {
        r->refused = true;
        snprintf(r->reason, sizeof r->reason, "byte %" PRIu64 ": a damaged frame", s.first_bad);
    } else {
        snprintf(r->flight, sizeof r->flight, "%" PRIu64 " frames", good);
    }
}

uint8_t *emb_fleet_unframe_crash(const uint8_t *bytes, size_t n, size_t *len)
{
    struct frames_seen s;
    uint64_t good;
    read_frames(bytes, n, &s, &good);
    *len = s.crash_len;
    return s.crash;
}

size_t emb_fleet_analyse(const uint8_t *bytes, size_t n, const struct emb_fleet_analysis *a,
                         struct emb_fleet_row *rows, size_t max)
{
    enum emb_stream_kind kind = emb_stream_kind(bytes, n);
    if (kind == EMB_STREAM_CAPTURE)
        return capture_rows(bytes, n, a, rows, max);
    row_init(&rows[0], bytes, n, emb_stream_kind_name(kind));
    if (kind == EMB_STREAM_TRACE || kind == EMB_STREAM_TRACE_PACKET) {
        trace_row(&rows[0], bytes, n, a->name);
        return 1;
    }
    if (kind == EMB_STREAM_LOG) {
        log_row(&rows[0], bytes, n);
        return 1;
    }
    struct emb_crash_input *in = malloc(sizeof *in);
    struct emb_problems ps;
    emb_problems_init(&ps, a->name);
    size_t k = 1;
    row_init(&rows[0], bytes, n, "crash");
    if (!in) {
        rows[0].refused = true;
        snprintf(rows[0].reason, sizeof rows[0].reason, "out of memory");
    } else if (emb_crash_input_open(in, bytes, n, &ps) == 0) {
        k = crash_rows(bytes, n, a, in, rows, max);
    } else {
        refuse(&rows[0], &ps);
    }
    if (in)
        emb_crash_input_close(in);
    free(in);
    emb_problems_free(&ps);
    return k;
}
