/* The integrity layer of sealed trace stream files (version 2, docs/formats/trace.md):
 * checks the header's CRC and each packet's, and gives the decoder the same stream without
 * them (a version-1 layout), with a map back to the file's offsets. Version-1 files pass
 * through unchecked. */
#ifndef EMB_HOST_TRACE_SEAL_H
#define EMB_HOST_TRACE_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "problem.h"

struct emb_trace_unsealed {
    bool sealed;           /* the file was version 2: data is the checked copy */
    uint8_t *data;         /* malloc'd: the header then the packets, CRCs taken out */
    size_t size;
    uint32_t header_size;  /* bytes before the first packet, in both layouts */
    uint32_t packet_size;
    uint64_t checked;      /* packets whose CRC matched */
    uint64_t damaged;      /* packets whose CRC did not (or was cut short) */
};

/* When `in` is a sealed stream (magic "EMBT", version 2), checks it and fills `out`
 * (sealed = true) with the unsealed copy; every damaged packet (a warning) and a damaged
 * header are reported to `problems` at the sealed file's offsets (a damaged or unreadable
 * header is an error: nothing can be decoded, out->data is then NULL). Otherwise leaves
 * out->sealed false and does nothing. `in_mapped`: `in` is a read-only file mapping whose
 * pages may be let go once copied (the system reads them again if they are touched).
 * Returns -1 only when out of memory. */
int emb_trace_unseal(const uint8_t *in, size_t n, bool in_mapped,
                     struct emb_trace_unsealed *out, struct emb_problems *problems);

/* The sealed file's offset of a byte at `off` of the unsealed copy. */
uint64_t emb_trace_sealed_offset(const struct emb_trace_unsealed *u, uint64_t off);

#endif /* EMB_HOST_TRACE_SEAL_H */
