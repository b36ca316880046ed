/* Every catalogue the host tool knows: its own (catalog/trace_events.yaml) and those of
 * the streams it imports. A trace stream names its catalogue by checksum; this finds it. */
#ifndef EMB_HOST_CATALOG_KNOWN_H
#define EMB_HOST_CATALOG_KNOWN_H

#include <stdint.h>

#include "catalog.h"

/* The known catalogue with this checksum, or NULL. */
const struct emb_catalog *emb_catalog_known(uint32_t checksum);

#endif /* EMB_HOST_CATALOG_KNOWN_H */
