/* The frame decoder (docs/formats/frame.md): the host's one reader of COBS frames. It
 * takes a byte stream in pieces of any size, splits it on zero bytes, undoes COBS, checks
 * the channel and the CRC-16, and hands each good frame to a handler. A bad frame (broken
 * COBS, wrong CRC, too short, unknown channel, longer than the limit) is counted with its
 * byte offset and dropped; decoding goes on at the next delimiter, so one damaged frame
 * costs only itself. Memory: one buffer of the largest frame allowed. */
#ifndef EMB_HOST_FRAME_DECODE_H
#define EMB_HOST_FRAME_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/frame.h>

#define EMB_FRAME_DEFAULT_MAX_PAYLOAD 65536u

/* A good frame; `payload` is valid during the call. */
typedef void (*emb_frame_fn)(void *arg, uint8_t channel, const uint8_t *payload, size_t len,
                             uint64_t offset);
/* A dropped frame, for messages; may be NULL. */
typedef void (*emb_frame_error_fn)(void *arg, enum emb_frame_error err, uint64_t offset,
                                   size_t bytes);

struct emb_frame_stats {
    uint64_t bytes;       /* fed */
    uint64_t frames;      /* good frames */
    uint64_t per_channel[16];
    uint64_t dropped;     /* bad frames, all causes */
    uint64_t bad_cobs, bad_crc, too_short, bad_channel, too_long;
    uint64_t empty;       /* zero-length runs between delimiters (ignored, not errors) */
    uint64_t skipped;     /* bytes of dropped frames */
    uint64_t leading;     /* bytes before the first delimiter, when told to skip them */
};

struct emb_frame_dec;

/* `max_payload`: the largest payload accepted (0: EMB_FRAME_DEFAULT_MAX_PAYLOAD).
 * `join_midway`: the stream may start inside a frame (a late joiner on a serial line):
 * bytes before the first delimiter are skipped, not reported as a bad frame. */
struct emb_frame_dec *emb_frame_dec_new(size_t max_payload, bool join_midway, emb_frame_fn fn,
                                        emb_frame_error_fn err_fn, void *arg);
void emb_frame_dec_feed(struct emb_frame_dec *d, const void *buf, size_t n);
/* The end of the stream: bytes after the last delimiter are an unfinished frame, counted
 * as dropped (too short). Returns how many bytes that was. */
size_t emb_frame_dec_finish(struct emb_frame_dec *d);
const struct emb_frame_stats *emb_frame_dec_stats(const struct emb_frame_dec *d);
void emb_frame_dec_free(struct emb_frame_dec *d);
const char *emb_frame_error_text(enum emb_frame_error err);

/* ---- The same reader with views and messages (the deferred log's decoder uses it) ----
 * A frame comes as a view with the stream offsets of its first encoded byte and of its
 * delimiter; a problem as a message. Bytes before the first delimiter that are not a
 * valid frame are a notice (error false: a reader that started mid-stream), anything
 * else dropped is an error; a stream that ends inside a frame too. */
struct emb_frame_view {
    uint8_t channel;
    const uint8_t *payload; /* valid during the callback */
    size_t len;
    uint64_t offset;        /* stream offset of the frame's first encoded byte */
    uint64_t end;           /* stream offset of its delimiter */
};

struct emb_frame_callbacks {
    void (*frame)(void *arg, const struct emb_frame_view *frame);
    void (*problem)(void *arg, uint64_t offset, bool error, const char *message);
    void *arg;
};

struct emb_frame_decoder {
    struct emb_frame_callbacks cb;
    struct emb_frame_dec *dec;
    size_t max_bytes;       /* encoded bytes a frame may have */
    bool first;             /* no frame ended yet */
    bool finishing;
    uint64_t frames, bad_frames;  /* bad_frames counts the skipped leading bytes too */
};

/* For frames of at most `max_payload` payload bytes; false when out of memory. */
bool emb_frame_decoder_init(struct emb_frame_decoder *d, size_t max_payload,
                            const struct emb_frame_callbacks *cb);
void emb_frame_decoder_free(struct emb_frame_decoder *d);
void emb_frame_decoder_feed(struct emb_frame_decoder *d, const uint8_t *data, size_t len);
/* The stream ended: bytes after the last delimiter are a cut frame (reported). */
void emb_frame_decoder_finish(struct emb_frame_decoder *d);

/* Undoes COBS on one frame body (no delimiter) into `out` (room for `len` bytes): the
 * decoded length, or -1 when a code byte points past the end or a zero is inside. */
long emb_cobs_decode(const uint8_t *in, size_t len, uint8_t *out);

#endif /* EMB_HOST_FRAME_DECODE_H */
