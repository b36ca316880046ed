/* `emb capture extract`: one section of a sealed capture given back as its own file. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include "trace_catalog.h"

static const char *const CMD = "emb capture extract";

struct args {
    const char *output;
    int section;
};

static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_CALL("trace", no_argument, EMB_CAP_SEC_TRACE),
    EMB_CLI_CALL("log", no_argument, EMB_CAP_SEC_LOG),
    EMB_CLI_CALL("crash", no_argument, EMB_CAP_SEC_CRASH),
    EMB_CLI_CALL("descriptor", no_argument, EMB_CAP_SEC_DESCRIPTOR),
    EMB_CLI_OPTION_OUTPUT(struct args),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_capture_extract, .shortopts = ":o:h", .options = OPTIONS,
    .usage = "emb capture extract CAPTURE --trace|--log|--crash|--descriptor -o OUT", .operands = 1,
    .no_operands = "no capture file given", .too_many = "one capture file, please"};

static int on_option(void *arg, int opt, char *value)
{
    struct args *a = arg;
    (void)value; /* every option it sees is a section's, with no value */
    if (a->section != 0 && a->section != opt) {
        emb_cli_error(CMD, "one section, please");
        return EMB_EXIT_BAD;
    }
    a->section = opt;
    return EMB_EXIT_OK;
}

/* The trace section as a stream file that carries the capture's catalogue in its header
 * (a catalog section's body, copied as it is: the reader checks it), so the stream
 * decodes with no --catalog as the capture did. */
static int write_trace(const char *path, const struct emb_command_input *in)
{
    struct emb_problems quiet = {0};
    struct emb_capture_section cat;
    int has = emb_capture_unwrap(in->bytes, in->size, EMB_CAP_SEC_CATALOG, emb_catalog_builtin(),
                                 &cat, &quiet) == 0;
    emb_problems_free(&quiet);
    if (!has)
        return emb_cli_write_bytes(CMD, path, in->part.data, (size_t)in->part.length);
    char err[256];
    size_t len = 0;
    uint8_t *stream = emb_trace_with_catalog(in->part.data, (size_t)in->part.length, cat.data,
                                             (size_t)cat.length, &len, err, sizeof err);
    if (stream == NULL) {
        emb_cli_error_at(CMD, in->name, (long long)in->part.offset, "%s", err);
        return EMB_EXIT_BAD;
    }
    int rc = emb_cli_write_bytes(CMD, path, stream, len);
    free(stream);
    return rc;
}

int emb_cmd_capture_extract(int argc, char **argv)
{
    struct args a = {0};
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, on_option, &a);
    if (rc != 0)
        return rc < 0 ? EMB_EXIT_OK : rc;
    if (a.section == 0 || a.output == NULL) {
        emb_cli_error(CMD, a.section == 0 ? "which section: --trace, --log, --crash or --descriptor"
                                          : "give the file to write with -o OUT");
        return EMB_EXIT_BAD;
    }
    struct emb_command_input in;
    if (emb_command_input_read(CMD, argv[optind], (uint16_t)a.section, 0, &in) != 0)
        return EMB_EXIT_BAD;
    if (!in.capture) {
        emb_cli_error_at(CMD, argv[optind], 0, "not a sealed capture (its magic is not \"EMBS\")");
        rc = EMB_EXIT_BAD;
    } else if (a.section == EMB_CAP_SEC_TRACE) {
        rc = write_trace(a.output, &in);
    } else {
        rc = emb_cli_write_bytes(CMD, a.output, in.part.data, (size_t)in.part.length);
    }
    emb_command_input_free(&in);
    return rc;
}
