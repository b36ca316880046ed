/* What a decoding command reads (command_input.h). */
#include "command_input.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input_file.h"

int emb_command_input_read(const char *cmd, const char *spec, uint16_t section, uint64_t limit,
                           struct emb_command_input *in)
{
    memset(in, 0, sizeof *in);
    in->name = spec;
    char err[512];
    struct emb_input src;
    if (emb_input_open(&src, spec, err, sizeof err) != 0) {
        emb_cli_error_at(cmd, spec, -1, "%s", err);
        return EMB_EXIT_BAD;
    }
    in->bytes = emb_input_read_rest(&src, limit, &in->size, err, sizeof err);
    emb_input_close(&src);
    if (in->bytes == NULL) {
        emb_cli_error_at(cmd, spec, -1, "%s", err);
        return EMB_EXIT_BAD;
    }
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

void emb_command_input_free(struct emb_command_input *in)
{
    free(in->bytes);
    in->bytes = NULL;
    in->size = 0;
}
