/* What a decoding command reads (command_input.h). */
#include "command_input.h"

#include <stdlib.h>
#include <string.h>

#include "capture_session.h"
#include "catalog_known.h"
#include "cli.h"
#include "input_file.h"

/* A CTF trace directory made a trace stream, sealed as a capture that carries the
 * catalogue made from the trace (known by checksum until the input is freed). */
static int ctf_read(const char *cmd, const char *spec, struct emb_command_input *in)
{
    struct emb_problems ps;
    emb_problems_init_callback(&ps, spec, emb_cli_problem, (void *)cmd);
    struct emb_ctf_import *imp = &in->ctf_import;
    if (emb_ctf_import(spec, 0, imp, &ps) != 0)
        return EMB_EXIT_BAD;
    in->ctf = true;
    struct emb_capture_session s = {.trace = imp->stream, .trace_len = imp->stream_len};
    imp->stream = NULL; /* the session frees it */
    struct emb_capture_session_options o = {
        .source = spec, .label = "ctf", .catalog = imp->catalog,
        .catalog_text = imp->catalog_yaml, .catalog_text_len = imp->catalog_yaml_len};
    int rc = emb_capture_session_seal(&o, &s, &ps);
    in->bytes = s.file;
    in->size = s.file_len;
    s.file = NULL;
    emb_capture_session_free(&s);
    if (rc != 0 || emb_catalog_known_add(imp->catalog) != 0) {
        if (rc == 0)
            emb_cli_error_at(cmd, spec, -1, "too many CTF traces open at once");
        emb_command_input_free(in);
        return EMB_EXIT_BAD;
    }
    return 0;
}

/* A file, standard input or a socket, read whole (or a regular file mapped). */
static int bytes_read(const char *cmd, const char *spec, uint64_t limit, bool map,
                      struct emb_command_input *in)
{
    char err[512];
    struct emb_input src;
    if (emb_input_open(&src, spec, err, sizeof err) != 0) {
        emb_cli_error_at(cmd, spec, -1, "%s", err);
        return EMB_EXIT_BAD;
    }
    const uint8_t *mapped = map ? emb_input_map_rest(&src, limit, &in->size) : NULL;
    in->mapped = mapped != NULL;
    in->bytes = mapped ? (uint8_t *)mapped : emb_input_read_rest(&src, limit, &in->size, err, sizeof err);
    emb_input_close(&src);
    if (in->bytes == NULL) {
        emb_cli_error_at(cmd, spec, -1, "%s", err);
        return EMB_EXIT_BAD;
    }
    return 0;
}

static int input_read(const char *cmd, const char *spec, uint16_t section, uint64_t limit,
                      bool map, struct emb_command_input *in)
{
    memset(in, 0, sizeof *in);
    in->name = spec;
    int rc = emb_ctf_is_trace_dir(spec) ? ctf_read(cmd, spec, in) : bytes_read(cmd, spec, limit, map, in);
    if (rc != 0)
        return rc;
    in->part = (struct emb_capture_section){.length = in->size, .data = in->bytes};
    if (section == 0)
        return 0;
    struct emb_problems ps;
    emb_problems_init_callback(&ps, spec, emb_cli_problem, (void *)cmd);
    if (emb_capture_unwrap(in->bytes, in->size, section, emb_catalog_builtin(), &in->part, &ps) != 0) {
        emb_command_input_free(in);
        return EMB_EXIT_BAD;
    }
    in->capture = in->part.offset != 0; /* a section never starts a file */
    return 0;
}

int emb_command_input_read(const char *cmd, const char *spec, uint16_t section, uint64_t limit,
                           struct emb_command_input *in)
{
    return input_read(cmd, spec, section, limit, false, in);
}

int emb_command_input_map(const char *cmd, const char *spec, uint16_t section,
                          struct emb_command_input *in)
{
    return input_read(cmd, spec, section, 0, true, in);
}

void emb_command_input_free(struct emb_command_input *in)
{
    if (in->ctf) {
        emb_catalog_known_forget(in->ctf_import.catalog);
        emb_ctf_import_free(&in->ctf_import);
        in->ctf = false;
    }
    if (in->mapped)
        emb_input_unmap(in->bytes, in->size);
    else
        free(in->bytes);
    in->bytes = NULL;
    in->size = 0;
}
