/* Every catalogue the host tool knows: its own (catalog/trace_events.yaml) and those of
 * the streams it imports. A trace stream names its catalogue by checksum; this finds it. */
#ifndef EMB_HOST_CATALOG_KNOWN_H
#define EMB_HOST_CATALOG_KNOWN_H

#include <stdint.h>

#include "catalog.h"

/* The known catalogue with this checksum, or NULL. */
const struct emb_catalog *emb_catalog_known(uint32_t checksum);

/* The catalogue a trace stream file asks for: its header's checksum looked up with
 * emb_catalog_known(); the built-in catalogue when the file cannot be read or names an
 * unknown one (the decoder then reports the mismatch). */
const struct emb_catalog *emb_catalog_for_file(const char *path);

/* The same for a capture file ("EMBS"): the checksum its identity section carries. */
const struct emb_catalog *emb_catalog_for_capture(const char *path);

#endif /* EMB_HOST_CATALOG_KNOWN_H */
