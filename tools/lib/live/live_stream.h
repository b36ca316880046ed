/* A trace stream read while it grows (a file being written, a live source polled), decoded
 * round by round: each round decodes the stream's header and only the whole packets that
 * arrived since the last one, continuing the last round's decode
 * (emb_trace_options.continues), so the cost of a round is what arrived in it, not the
 * stream so far. `emb trace --follow` writes each round's records; `emb top` counts them.
 *
 *   emb_live_stream_bytes()    the stream's bytes as they come, cut anywhere
 *   emb_live_stream_packets()  or a header and whole packets (a live source's hook)
 *   emb_live_stream_next()     the new packets, decoded (NULL: none)
 */
#ifndef EMB_HOST_LIVE_STREAM_H
#define EMB_HOST_LIVE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_decode.h"

/* What the rounds cost: a test proves them linear in the stream. */
struct emb_live_stream_stats {
    uint64_t rounds;          /* emb_live_stream_next() calls that decoded */
    uint64_t packets_decoded; /* packets given to the decoder, all rounds */
    uint64_t bytes_decoded;   /* bytes given to the decoder (headers included), all rounds */
};

struct emb_live_stream;

/* `opt` (its catalogue, name and problem sink) is copied; opt->continues is the stream's
 * own. NULL when out of memory. */
struct emb_live_stream *emb_live_stream_new(const struct emb_trace_options *opt);
void emb_live_stream_free(struct emb_live_stream *s);

/* The stream's next bytes, from its first: the header is found in them. False when out of
 * memory. */
bool emb_live_stream_bytes(struct emb_live_stream *s, const uint8_t *p, size_t n);
/* The stream's header as it stands (it may have grown) and packets that follow those given
 * before. False when out of memory. */
bool emb_live_stream_packets(struct emb_live_stream *s, const uint8_t *header, size_t header_len,
                             const uint8_t *packets, size_t len);

/* The packets that arrived since the last call, decoded as the stream's continuation, or
 * NULL when there are none (or out of memory: *oom set). With `last`, a packet cut short
 * at the end is decoded too (a stream that ends there, as a dump does). The trace is the
 * stream's until the next call; its contexts' records are this round's only. */
const struct emb_trace *emb_live_stream_next(struct emb_live_stream *s, bool last, bool *oom);

/* The stream's first bytes as held: its header once whole, else what came of it (the
 * command chooses the catalogue from them, emb_catalog_choose). */
const uint8_t *emb_live_stream_start(const struct emb_live_stream *s, size_t *len);
/* Whether the header is whole (or refused: then it never will be). */
bool emb_live_stream_header_done(const struct emb_live_stream *s);
/* Sets the catalogue (before the first round that decodes). */
void emb_live_stream_set_catalog(struct emb_live_stream *s, const struct emb_catalog *cat);

const struct emb_live_stream_stats *emb_live_stream_stats(const struct emb_live_stream *s);

#endif /* EMB_HOST_LIVE_STREAM_H */
