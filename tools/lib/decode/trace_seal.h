/* The integrity layer of sealed trace stream files (version 2, docs/formats/trace.md):
 * checks the header's CRC and each packet's, and gives the decoder the same stream without
 * them (a version-1 layout), with a map back to the file's offsets. Version-1 files pass
 * through unchecked. */
#ifndef EMB_HOST_TRACE_SEAL_H
#define EMB_HOST_TRACE_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emb_trace_unsealed {
    bool sealed;           /* the file was version 2: data is the checked copy */
    uint8_t *data;         /* malloc'd: the header then the packets, CRCs taken out */
    size_t size;
    uint32_t header_size;  /* bytes before the first packet, in both layouts */
    uint32_t packet_size;
    uint64_t checked;      /* packets whose CRC matched */
    uint64_t damaged;      /* packets whose CRC did not (or was cut short) */
};

/* Reports a problem at a byte offset of the sealed file; fatal: nothing can be decoded. */
typedef void (*emb_trace_seal_problem)(void *arg, long long offset, bool fatal, const char *msg);

/* When `in` is a sealed stream (magic "EMBT", version 2), checks it and fills `out`
 * (sealed = true) with the unsealed copy; every damaged packet and a damaged header are
 * reported through `problem` (a damaged or unreadable header is fatal: out->data is then
 * NULL). Otherwise leaves out->sealed false and does nothing. Returns -1 only when out of
 * memory. */
int emb_trace_unseal(const uint8_t *in, size_t n, struct emb_trace_unsealed *out,
                     emb_trace_seal_problem problem, void *arg);

/* The sealed file's offset of a byte at `off` of the unsealed copy. */
uint64_t emb_trace_sealed_offset(const struct emb_trace_unsealed *u, uint64_t off);

#endif /* EMB_HOST_TRACE_SEAL_H */
