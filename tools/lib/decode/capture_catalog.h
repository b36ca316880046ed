/* The catalogue section of a capture file (docs/formats/capture.md, "catalog"): the YAML
 * text of the catalogue the trace was checked with, zlib-compressed, so a capture made
 * with a user's own catalogue decodes with no --catalog. One encoder, one decoder. */
#ifndef EMB_HOST_CAPTURE_CATALOG_H
#define EMB_HOST_CAPTURE_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "problem.h"

/* Body, version 1: u32 bytes of YAML text once inflated, u32 0, then one zlib stream
 * (RFC 1950) that inflates to exactly that many bytes and ends with the body. */
#define EMB_CAP_CAT_OFF_TEXT_LEN 0u
#define EMB_CAP_CAT_OFF_RESERVED 4u
#define EMB_CAP_CAT_OFF_ZLIB 8u
/* The inflated text is bounded as a catalogue file is (emb_catalog_read_file: 16 MiB). */
#define EMB_CAP_CAT_MAX_TEXT (16u * 1024u * 1024u)

/* The section body for `text` (malloc'd, *len bytes), or NULL with a reason in err. */
uint8_t *emb_capture_catalog_encode(const char *text, size_t text_len, size_t *len, char *err,
                                    size_t errlen);

/* The YAML text a catalogue section holds (malloc'd, NUL-terminated, *len bytes), or NULL
 * after reporting to ps why not, at the byte offset in the capture. */
char *emb_capture_catalog_text(const struct emb_capture_section *s, size_t *len,
                               struct emb_problems *ps);

/* The catalogue a catalog section body carries (a capture's section, or the same body in
 * a trace stream header's "CATL" block: trace_catalog.h), parsed and checked against the
 * `checksum` its trace names; *text (may be NULL) gets the YAML text to keep (malloc'd).
 * NULL after reporting to ps at the body's byte offset why it is not to be believed
 * (`holder`, "capture" or "stream", names what carried it in the message). */
struct emb_catalog *emb_capture_catalog_read(const struct emb_capture_section *s, uint32_t checksum,
                                             const char *holder, char **text, size_t *text_len,
                                             struct emb_problems *ps);

#endif /* EMB_HOST_CAPTURE_CATALOG_H */
