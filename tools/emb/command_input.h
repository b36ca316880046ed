/* What a decoding command reads, the one way: its operand opened once (a file, "-" for
 * standard input, tcp:HOST:PORT) and read whole, bounded by the input limit; when it is
 * a sealed capture (docs/formats/capture.md), the section the command decodes. */
#ifndef EMB_COMMAND_INPUT_H
#define EMB_COMMAND_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "ctf_import.h"

struct emb_command_input {
    const char *name;                /* the operand, for messages */
    uint8_t *bytes;                  /* the whole input (malloc'd, or mapped) */
    size_t size;
    bool mapped;                     /* bytes is a read-only file mapping */
    bool capture;                    /* it was a capture, and `part` is its section */
    struct emb_capture_section part; /* what to decode: a section, or the whole input */
    /* A CTF trace directory (a directory with a `metadata` file) is read through
     * libbabeltrace2 (docs/ctf-foreign.md): `bytes` is then the trace stream it became,
     * and its catalogue is known by checksum until the input is freed. */
    bool ctf;
    struct emb_ctf_import ctf_import;
};

/* Reads `spec` (a CTF trace directory: through the CTF import); `section` (an emb_capture_section_type, 0: none) is taken out of a
 * capture, `limit` bounds the bytes (0: the input limit). 0, or EMB_EXIT_BAD after
 * saying why ("emb CMD: FILE: the capture holds no log section"). */
int emb_command_input_read(const char *cmd, const char *spec, uint16_t section, uint64_t limit,
                           struct emb_command_input *in);
/* The same, a regular file mapped rather than read (a decoder that walks it once then
 * keeps memory flat: emb_trace_options.mapped); anything else is read. */
int emb_command_input_map(const char *cmd, const char *spec, uint16_t section,
                          struct emb_command_input *in);
void emb_command_input_free(struct emb_command_input *in);

#endif /* EMB_COMMAND_INPUT_H */
