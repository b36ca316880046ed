/* The integrity layer of sealed trace stream files (version 2, docs/formats/trace.md):
 * checks the header's CRC and each packet's, and gives the decoder the same stream without
 * them (a version-1 layout) as a view of the file: each packet is read in place, only the
 * header (its version rewritten) is copied, and a map leads back to the file's offsets.
 * Version-1 files pass through unchecked. */
#ifndef EMB_HOST_TRACE_SEAL_H
#define EMB_HOST_TRACE_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/trace_format.h>

#include "problem.h"

struct emb_trace_unsealed {
    bool sealed;           /* the file was version 2: read through this view */
    const uint8_t *in;     /* the sealed file's bytes (the packets are read there) */
    uint8_t *header;       /* malloc'd: the header_size bytes of the header, as version 1 */
    size_t size;           /* bytes of the layout without the CRCs */
    uint32_t header_size;  /* bytes before the first packet, in both layouts */
    uint32_t packet_size;
    uint64_t checked;      /* packets whose CRC matched */
    uint64_t damaged;      /* packets whose CRC did not (or was cut short) */
};

/* When `in` is a sealed stream (magic "EMBT", version 2), checks it and fills `out`
 * (sealed = true) with the view without CRCs; every damaged packet (a warning) and a
 * damaged header are reported to `problems` at the sealed file's offsets (a damaged or
 * unreadable header is an error: nothing can be decoded, out->header is then NULL).
 * Otherwise leaves out->sealed false and does nothing. `in` must outlive the view.
 * `in_mapped`: `in` is a read-only file mapping whose pages may be let go once checked
 * (the system reads them again when they are touched). Returns -1 only when out of
 * memory. */
int emb_trace_unseal(const uint8_t *in, size_t n, bool in_mapped,
                     struct emb_trace_unsealed *out, struct emb_problems *problems);

/* The sealed file's offset of a byte at `off` of the unsealed copy. */
uint64_t emb_trace_sealed_offset(const struct emb_trace_unsealed *u, uint64_t off);
/* The inverse: the offset in the view of the sealed file's byte `off` (a byte that is no
 * packet CRC's). */
uint64_t emb_trace_unsealed_offset(const struct emb_trace_unsealed *u, uint64_t off);

/* `len` bytes of the view at `off` (off + len <= size) as one run: in place when they lie
 * within the header or within one packet, else (across a packet's CRC) copied into
 * `scratch`, which holds len bytes. */
const uint8_t *emb_trace_unsealed_bytes(const struct emb_trace_unsealed *u, uint64_t off,
                                        size_t len, uint8_t *scratch);
/* The same bytes in place, or NULL when they cross a packet's CRC. */
static inline const uint8_t *emb_trace_unsealed_in_place(const struct emb_trace_unsealed *u,
                                                         uint64_t off, size_t len)
{
    if (off + len <= u->header_size)
        return u->header + off;
    if (off < u->header_size)
        return NULL;
    uint64_t k = (off - u->header_size) / u->packet_size;
    uint64_t r = (off - u->header_size) % u->packet_size;
    if (r + len > u->packet_size)
        return NULL;
    return u->in + u->header_size + k * ((uint64_t)u->packet_size + EMB_TSF_PACKET_CRC_SIZE) + r;
}

#endif /* EMB_HOST_TRACE_SEAL_H */
