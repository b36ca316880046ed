/* Trace over a framed byte stream (docs/formats/frame.md, channel 1): the trace stream
 * file's header as one frame, then each completed packet as one frame, the header repeated
 * every so many packets so a reader that joins late (a serial line opened after boot, a
 * probe attached to a running target) can decode from the next repeat on. A packet that
 * cannot be sent is dropped, never waited for: the reader sees the gap in its
 * packet_seq_num. */
#ifndef EMB_TRACE_LINK_H
#define EMB_TRACE_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <emb/status.h>
#include <emb/trace.h>
#include <emb/trace_format.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sends one frame, all of it or nothing; anything but EMB_OK means it was not sent. */
typedef emb_status (*emb_trace_link_send_fn)(void *arg, uint8_t channel, const void *payload,
                                             size_t len);

struct emb_trace_link {
    emb_trace_link_send_fn send;
    void *arg;
    const uint8_t *header;  /* the encoded stream header */
    size_t header_len;
    uint32_t header_every;  /* packets between repeats of the header; 0: only the first */
    uint32_t since_header;
    uint8_t header_due;     /* the header must go before the next packet */
    uint32_t packets;       /* sent */
    uint32_t dropped;       /* could not be sent */
    uint32_t headers;       /* sent */
};

/* Encodes the stream header into `buf` (EMB_TSF_HEADER_BYTES(count) bytes) and prepares
 * the link; the header goes out with the first packet, or at emb_trace_link_header(). */
emb_status emb_trace_link_init(struct emb_trace_link *l, emb_trace_link_send_fn send, void *arg,
                               uint8_t *buf, size_t cap, const struct emb_tsf_info *info,
                               const struct emb_tsf_context *contexts, uint16_t count,
                               uint32_t header_every);

/* Sends the header now. */
emb_status emb_trace_link_header(struct emb_trace_link *l);

/* Sends every completed packet of `ring` (streaming mode), the header first when due.
 * Returns the packets taken from the ring (sent or dropped). */
uint32_t emb_trace_link_drain(struct emb_trace_link *l, struct emb_trace_ring *ring);

#ifdef __cplusplus
}
#endif

#endif /* EMB_TRACE_LINK_H */
