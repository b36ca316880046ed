/* The host's reader of framed byte streams (docs/formats/frame.md): COBS(channel u8,
 * payload, crc16) frames between zero delimiters. Incremental: bytes go in as they arrive
 * (a file, a pipe, a socket) and whole, checked frames come out.
 *
 * A reader that starts mid-stream cannot tell where the first frame began: the bytes
 * before the first delimiter are reported as skipped (a notice, not an error) unless they
 * form a valid frame themselves. A frame that fails its COBS structure or CRC, or grows
 * past the maximum size, is reported with its byte offset and skipped; reading goes on at
 * the next delimiter.
 */
#ifndef EMB_HOST_FRAME_DECODE_H
#define EMB_HOST_FRAME_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emb_frame_view {
    uint8_t channel;
    const uint8_t *payload; /* valid during the callback */
    size_t len;
    uint64_t offset;        /* stream offset of the frame's first encoded byte */
    uint64_t end;           /* stream offset of its delimiter */
};

struct emb_frame_callbacks {
    void (*frame)(void *arg, const struct emb_frame_view *frame);
    /* A bad frame (error) or bytes skipped before the first frame (notice). */
    void (*problem)(void *arg, uint64_t offset, bool error, const char *message);
    void *arg;
};

struct emb_frame_decoder {
    struct emb_frame_callbacks cb;
    uint8_t *enc;         /* encoded bytes of the frame being read */
    uint8_t *dec;         /* its decoding */
    size_t cap;           /* most encoded bytes a frame may have */
    size_t len;
    uint64_t frame_start; /* stream offset of enc[0] */
    uint64_t pos;         /* stream offset of the next byte fed */
    bool overflow;        /* the current frame outgrew cap: skip to the next delimiter */
    bool first;           /* no delimiter seen yet */
    uint64_t frames, bad_frames;
};

/* Prepares a decoder for frames of at most `max_payload` payload bytes. Returns false
 * when out of memory. */
bool emb_frame_decoder_init(struct emb_frame_decoder *d, size_t max_payload,
                            const struct emb_frame_callbacks *cb);
void emb_frame_decoder_free(struct emb_frame_decoder *d);

/* Feeds stream bytes; calls back for each frame completed by them. */
void emb_frame_decoder_feed(struct emb_frame_decoder *d, const uint8_t *data, size_t len);

/* The stream ended: bytes after the last delimiter are a cut frame (reported). */
void emb_frame_decoder_finish(struct emb_frame_decoder *d);

/* Decodes one COBS-encoded frame body (no delimiter) into `out` (room for `len` bytes).
 * Returns the decoded length, or -1 when the encoding is broken (a code byte that points
 * past the end, a zero inside). */
long emb_cobs_decode(const uint8_t *in, size_t len, uint8_t *out);

#endif /* EMB_HOST_FRAME_DECODE_H */
