/* `emb inspect`: what a capture file holds, at a glance or as JSON. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include "capture.h"
#include "capture_json.h"
#include "input_file.h"
#include "trace_decode.h"

static const char *const CMD = "emb inspect";


struct stats {
    uint64_t *by_id;        /* 65536 counters */
    uint64_t frames;        /* frame_start events */
    uint32_t first_frame, last_frame;
    uint64_t span_ns;
};

/* The counts, in one walk of the decoder's cursor (a streaming decode keeps no record):
 * none of them depends on the order. False when out of memory. */
static bool gather(const struct emb_trace *t, struct stats *s)
{
    const struct emb_catalog_event *fs = emb_catalog_find(emb_trace_catalog(t), "frame_start");
    const struct emb_catalog_field *ff = NULL;
    for (size_t f = 0; fs && f < fs->nfields; f++)
        if (fs->fields[f].meaning == EMB_CAT_MEANING_FRAME)
            ff = &fs->fields[f];
    struct emb_trace_cursor *cur = emb_trace_cursor_open(t);
    if (!cur)
        return false;
    for (const struct emb_trace_event *r; (r = emb_trace_cursor_next(cur)) != NULL;) {
        if (r->type != EMB_TREC_EVENT)
            continue;
        s->by_id[r->id]++;
        if (r->ev == fs && ff) {
            uint32_t v = (uint32_t)emb_catalog_field_get_uint(ff, r->payload);
            if (!s->frames || v < s->first_frame)
                s->first_frame = v;
            if (!s->frames || v > s->last_frame)
                s->last_frame = v;
            s->frames++;
        }
    }
    emb_trace_cursor_close(cur);
    const struct emb_trace_info *h = emb_trace_info(t);
    s->span_ns = emb_trace_ticks_to_ns(h->end_ts - h->start_ts, h->clock_hz);
    return true;
}

static const char *or_none(const char *s) { return s[0] ? s : "(none)"; }

static void print_text(const struct emb_capture *c, const struct stats *s, FILE *out)
{
    const struct emb_capture_identity *id = emb_capture_identity(c);
    const struct emb_capture_window *w = emb_capture_window(c);
    const struct emb_trace *t = emb_capture_trace(c);
    const struct emb_catalog *cat = emb_trace_catalog(t);
    const char *b = emb_color_code(out, EMB_C_BOLD), *r = emb_color_code(out, EMB_C_RESET);
    char hex[65];
    fprintf(out, "%semb inspect%s %s: capture v%u, %" PRIu64 " bytes, CRC ok\n", b, r,
            emb_capture_name(c), emb_capture_version(c), emb_capture_size(c));
    fprintf(out, "%sfile:%s     label=%s revision=%s catalogue=0x%08" PRIx32 "\n", b, r,
            or_none(id->label), or_none(id->revision), id->catalog_checksum);
    fprintf(out, "%sdevice:%s   build=%s firmware=\"%s\" flags=\"%s\"\n", b, r,
            id->build_id_len ? emb_capture_hex(id->build_id, id->build_id_len, hex) : "(none)",
            id->firmware, id->config);
    fprintf(out, "          port=%s clock_hz=%" PRIu64 " session=0x%016" PRIx64 "\n", or_none(id->port),
            id->clock_hz, id->session_id);
    fprintf(out, "%swindow:%s   ", b, r);
    if (w->armed_frame != EMB_CAP_NO_FRAME)
        fprintf(out, "armed_frame=%" PRIu32 " capacity=%" PRIu32 " bytes/context ", w->armed_frame,
                w->capacity);
    else
        fprintf(out, "not armed (a snapshot or a stream) ");
    fprintf(out, "writes=%" PRIu64 " drops=%" PRIu64 " lost_packets=%" PRIu64 "\n", w->writes,
            w->drops, w->lost_packets);
    fprintf(out, "%scontexts:%s %zu\n", b, r, w->nrows);
    for (size_t i = 0; i < w->nrows; i++)
        fprintf(out, "  %-20s id %-4u %-6s %10" PRIu64 " events  %" PRIu32 " dropped  %" PRIu32
                " packets lost  %" PRIu32 " before the first held\n", w->rows[i].name, w->rows[i].id,
                w->rows[i].kind ? "thread" : "cpu", w->rows[i].events, w->rows[i].discarded,
                w->rows[i].lost_packets, w->rows[i].earlier);
    fprintf(out, "%sevents:%s   %" PRIu64 " stored\n", b, r, w->stored);
    for (unsigned id16 = 0; id16 < 65536; id16++) {
        if (!s->by_id[id16])
            continue;
        const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id16);
        fprintf(out, "  %-20s %10" PRIu64 "\n", ev ? ev->name : "(unknown)", s->by_id[id16]);
    }
    if (s->frames)
        fprintf(out, "%sframes:%s   %" PRIu32 "..%" PRIu32 " (%" PRIu64 " epochs)\n", b, r,
                s->first_frame, s->last_frame, s->frames);
    else
        fprintf(out, "%sframes:%s   none (no frame_start event)\n", b, r);
    fprintf(out, "%sspan:%s     %" PRIu64 " us\n", b, r, s->span_ns / 1000u);
    const struct emb_trace_info *ti = emb_trace_info(t);
    if (ti->sealed)
        fprintf(out, "%strace:%s    stream v%u, sealed: header and %" PRIu64 " packet CRC-32s checked\n",
                b, r, ti->version, ti->packets_checked);
    else
        fprintf(out, "%strace:%s    stream v%u, not sealed: no packet CRCs, not checked (the "
                "capture's CRC covers it since it was captured)\n", b, r, ti->version);
    size_t n;
    const struct emb_capture_section *sec = emb_capture_sections(c, &n);
    fprintf(out, "%ssections:%s", b, r);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s %s v%u (%" PRIu64 " bytes)", i ? "," : "", emb_capture_section_name(sec[i].type),
                sec[i].version, sec[i].length);
    fputc('\n', out);
}

/* Events by type, the frame range and the time span. */
static void json_stats(struct emb_json *j, const struct emb_catalog *cat, const struct stats *s)
{
    emb_json_begin_object(j, "events");
    for (unsigned id16 = 0; id16 < 65536; id16++) {
        if (!s->by_id[id16])
            continue;
        const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id16);
        char unk[24];
        snprintf(unk, sizeof unk, "0x%04x", id16);
        emb_json_uint(j, ev ? ev->name : unk, s->by_id[id16]);
    }
    emb_json_end_object(j);
    if (s->frames) {
        emb_json_begin_object(j, "frames");
        emb_json_uint(j, "first", s->first_frame);
        emb_json_uint(j, "last", s->last_frame);
        emb_json_uint(j, "epochs", s->frames);
        emb_json_end_object(j);
    } else {
        emb_json_null(j, "frames");
    }
    emb_json_uint(j, "span_ns", s->span_ns);
}

static void json_sections(struct emb_json *j, const struct emb_capture *c)
{
    size_t n;
    const struct emb_capture_section *sec = emb_capture_sections(c, &n);
    emb_json_begin_array(j, "sections");
    for (size_t i = 0; i < n; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_string(j, "type", emb_capture_section_name(sec[i].type));
        emb_json_uint(j, "type_id", sec[i].type);
        emb_json_uint(j, "version", sec[i].version);
        emb_json_uint(j, "offset", sec[i].offset);
        emb_json_uint(j, "bytes", sec[i].length);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

static void print_json(const struct emb_capture *c, const struct stats *s, FILE *out)
{
    struct emb_json j;
    emb_json_begin_document(&j, out);
    emb_json_string(&j, "file", emb_capture_name(c));
    emb_json_uint(&j, "version", emb_capture_version(c));
    emb_json_uint(&j, "bytes", emb_capture_size(c));
    const struct emb_trace_info *ti = emb_trace_info(emb_capture_trace(c));
    emb_json_begin_object(&j, "trace_integrity");
    emb_json_uint(&j, "stream_version", ti->version);
    emb_json_bool(&j, "sealed", ti->sealed);
    emb_json_uint(&j, "packets_checked", ti->packets_checked);
    emb_json_end_object(&j);
    emb_capture_json_identity(&j, emb_capture_identity(c));
    emb_capture_json_window(&j, emb_capture_window(c));
    json_stats(&j, emb_trace_catalog(emb_capture_trace(c)), s);
    json_sections(&j, c);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

struct args {
    const char *catalog;
    bool json;
};

static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_OPTION_CATALOG(struct args),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_inspect, .options = OPTIONS,
    .usage = "emb inspect [options] FILE.emb", .operands = 1,
    .no_operands = "no capture file given", .too_many = "one capture file, please"};

int emb_cmd_inspect(int argc, char **argv)
{
    struct args a = {0};
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, NULL, &a);
    if (rc != 0)
        return rc < 0 ? EMB_EXIT_OK : rc;
    const char *path = argv[optind];
    struct emb_command_input in;
    if (emb_command_input_map(CMD, path, 0, &in) != 0)
        return EMB_EXIT_BAD;
    struct emb_catalog *own = NULL;
    const struct emb_catalog *cat = emb_catalog_choose_named(CMD, a.catalog, path, in.bytes, in.size,
                                                              &own);
    if (!cat) {
        emb_command_input_free(&in);
        return EMB_EXIT_BAD;
    }
    struct emb_capture_options opt = {.catalog = cat, .name = path, .no_merge = true,
                                      .stream = true, .mapped = in.mapped};
    struct emb_capture *cap = emb_capture_decode(in.bytes, in.size, &opt);
    /* The checks read the whole file: its pages are given back before the walk. */
    if (in.mapped)
        emb_input_map_release(in.bytes, in.size);
    rc = EMB_EXIT_BAD;
    struct stats s = {.by_id = calloc(65536, sizeof(uint64_t))};
    if (!cap || !s.by_id) {
        emb_cli_error_at(CMD, path, -1, "out of memory");
    } else if (emb_capture_failed(cap, NULL, NULL)) {
        emb_cli_problems(CMD, emb_capture_problems(cap));
    } else if (!gather(emb_capture_trace(cap), &s)) {
        emb_cli_error_at(CMD, path, -1, "out of memory");
    } else {
        if (a.json)
            print_json(cap, &s, stdout);
        else
            print_text(cap, &s, stdout);
        rc = emb_cli_close_output(CMD, stdout, NULL);
    }
    free(s.by_id);
    emb_capture_free(cap);
    emb_command_input_free(&in);
    if (own)
        emb_catalog_free(own);
    return rc;
}
