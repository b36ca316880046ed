/* Every catalogue the host tool knows: its own (catalog/trace_events.yaml) and those of
 * the streams it imports. A trace stream names its catalogue by checksum; this finds it. */
#ifndef EMB_HOST_CATALOG_KNOWN_H
#define EMB_HOST_CATALOG_KNOWN_H

#include <stdint.h>

#include "catalog.h"

/* The known catalogue with this checksum, or NULL. */
const struct emb_catalog *emb_catalog_known(uint32_t checksum);

/* A catalogue made at run time (a CTF trace's, ctf_import.h) is known by its checksum from
 * emb_catalog_known_add() until emb_catalog_known_forget() (a few at once: two for a
 * comparison). Returns 0, or -1 when too many are known. Not owned. */
int emb_catalog_known_add(const struct emb_catalog *cat);
void emb_catalog_known_forget(const struct emb_catalog *cat);

#endif /* EMB_HOST_CATALOG_KNOWN_H */
