/* The catalogue a trace stream file carries in its header ("CATL" extension block,
 * docs/formats/trace.md), so a bare stream decodes with no --catalog as a capture does.
 * The block's body is a capture's catalog section body (capture_catalog.h): one codec of
 * the compressed catalogue, in two containers. The host writes it (an import, a trace taken
 * out of a capture, a live capture's saved stream); the target never does. */
#ifndef EMB_HOST_TRACE_CATALOG_H
#define EMB_HOST_TRACE_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "problem.h"

/* The stream `stream` (len bytes) with its header carrying the catalog section body
 * `body` (body_len bytes: emb_capture_catalog_encode's, or a capture's catalog section)
 * in a "CATL" block, in place of one it had; the packets follow unchanged (malloc'd,
 * *out_len bytes). NULL with a reason in err. */
uint8_t *emb_trace_with_catalog(const uint8_t *stream, size_t len, const uint8_t *body,
                                size_t body_len, size_t *out_len, char *err, size_t errlen);

/* The same from the catalogue's YAML text. */
uint8_t *emb_trace_with_catalog_text(const uint8_t *stream, size_t len, const char *text,
                                     size_t text_len, size_t *out_len, char *err, size_t errlen);

/* The catalogue body the stream's header carries, as a catalog section (data, length and
 * byte offset in the stream) for emb_capture_catalog_read(..., "stream", ...): 1, or 0
 * when it carries none (or is no stream file: its decoder says why), or -1 after
 * reporting to ps a "CATL" block too small for what it says it holds. */
int emb_trace_catalog_body(const uint8_t *stream, size_t len, struct emb_capture_section *body,
                           struct emb_problems *ps);

#endif /* EMB_HOST_TRACE_CATALOG_H */
