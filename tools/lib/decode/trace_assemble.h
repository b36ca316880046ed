/* Rebuilds a trace stream file ("EMBT") from what a framed transport carried on channel 1:
 * stream headers and packets, in any order a late joiner sees them. Packets before the
 * first header are held until it comes; a repeated header of the same stream replaces the
 * stored one (its context table may have grown); packets of another stream (another uuid:
 * the target restarted) are counted and left out. */
#ifndef EMB_HOST_TRACE_ASSEMBLE_H
#define EMB_HOST_TRACE_ASSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emb_trace_assemble_stats {
    uint64_t headers;     /* header frames seen */
    uint64_t packets;     /* packets kept */
    uint64_t held;        /* of those, packets that came before the first header */
    uint64_t foreign;     /* packets or headers of another stream, left out */
    uint64_t malformed;   /* channel-1 frames that are neither */
    uint64_t dropped_held; /* packets before any header beyond the hold limit */
};

struct emb_trace_assembler;

struct emb_trace_assembler *emb_trace_assemble_new(size_t hold_limit_bytes);
/* One channel-1 frame payload. */
void emb_trace_assemble_frame(struct emb_trace_assembler *a, const uint8_t *payload, size_t len);
/* The stream so far: the stored header then the packets; NULL (and 0) before any header. */
const uint8_t *emb_trace_assemble_stream(struct emb_trace_assembler *a, size_t *len);
/* The same without copying: the stored header and the packets kept so far, in order (a
 * live reader takes the packets past those it has seen). False before any header. */
bool emb_trace_assemble_parts(const struct emb_trace_assembler *a, const uint8_t **header,
                              size_t *header_len, const uint8_t **packets, size_t *packets_len);
const struct emb_trace_assemble_stats *emb_trace_assemble_stats(const struct emb_trace_assembler *a);
void emb_trace_assemble_free(struct emb_trace_assembler *a);

#endif /* EMB_HOST_TRACE_ASSEMBLE_H */
