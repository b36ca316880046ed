/* Frames for byte-stream transports (SPEC-015 §7, docs/formats/frame.md): a UART, a USB
 * CDC port, a pipe, a socket or the memory channel carry
 *
 *     COBS( channel u8, payload, crc16 ) 0x00
 *
 * so a reader that starts anywhere, or loses bytes, finds the next frame at the next zero
 * byte. The CRC is CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, not reflected,
 * no final XOR; "123456789" gives 0x29B1) over the channel byte and the payload, stored
 * little-endian after the payload, inside the COBS encoding.
 *
 * Two encoders, neither needing a copy of the whole frame: emb_frame_encode() writes into
 * the caller's buffer in one pass (code bytes are patched once their block is known), and
 * the streaming encoder (emb_frame_enc_*) takes the payload in pieces and hands the
 * encoded bytes to a sink through a 254-byte block buffer. Freestanding, no allocation.
 */
#ifndef EMB_FRAME_H
#define EMB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <emb/status.h>

/* Channels (the first byte of every frame). */
enum emb_frame_channel {
    EMB_FRAME_CH_LOG = 0,
    EMB_FRAME_CH_TRACE = 1,
    EMB_FRAME_CH_CRASH = 2,
    EMB_FRAME_CH_SHELL = 3,
    EMB_FRAME_CH_APP_FIRST = 4,
    EMB_FRAME_CH_APP_LAST = 15,
};
#define EMB_FRAME_CHANNELS 16u
#define EMB_FRAME_DELIMITER 0x00u

/* Bytes a frame of `len` payload bytes takes on the wire at most: the channel and CRC
 * (3 bytes), one COBS code byte per 254 bytes or part, and the delimiter. */
#define EMB_FRAME_MAX_ENCODED(len) ((len) + 3u + ((len) + 3u) / 254u + 1u + 1u)

/* CRC-16/CCITT-FALSE, continued over `len` more bytes (start with 0xFFFF). */
uint16_t emb_crc16_ccitt(uint16_t crc, const void *data, size_t len);

/* Encodes one frame, delimiter included, into `out`. Returns the bytes written, or 0 when
 * `cap` is too small (see EMB_FRAME_MAX_ENCODED) or the channel is not 0..15. */
size_t emb_frame_encode(uint8_t *out, size_t cap, uint8_t channel, const void *payload,
                        size_t len);

/* Receives encoded bytes. Returns 0, or nonzero to abandon the frame (the encoder then
 * refuses further bytes until the next begin). */
typedef int (*emb_frame_sink)(void *arg, const uint8_t *bytes, size_t n);

/* The streaming encoder: its state and one COBS block (254 data bytes and the code). */
struct emb_frame_enc {
    emb_frame_sink sink;
    void *arg;
    uint16_t crc;
    uint8_t used;      /* data bytes in block */
    uint8_t failed;    /* the sink refused: the frame is abandoned */
    uint8_t block[255]; /* block[0] is the code byte */
};

/* Starts a frame on `channel` (0..15); the sink gets the encoded bytes as blocks fill. */
emb_status emb_frame_enc_begin(struct emb_frame_enc *e, uint8_t channel, emb_frame_sink sink,
                               void *arg);
/* Adds payload bytes. EMB_E_IO once the sink has refused. */
emb_status emb_frame_enc_put(struct emb_frame_enc *e, const void *data, size_t len);
/* Adds the CRC, the last block and the delimiter. */
emb_status emb_frame_enc_end(struct emb_frame_enc *e);

/* ---- Decoding ---- */

enum emb_frame_error {
    EMB_FRAME_OK,
    EMB_FRAME_BAD_COBS,     /* a code byte runs past the frame's end */
    EMB_FRAME_BAD_CRC,
    EMB_FRAME_TOO_SHORT,    /* fewer than 3 bytes: no room for channel and CRC */
    EMB_FRAME_BAD_CHANNEL,  /* channel byte above 15 */
    EMB_FRAME_TOO_LONG,     /* more than the reader's limit before a delimiter */
};

/* Decodes one frame's bytes (those between two delimiters, neither included) into `out`,
 * which holds at least `n` bytes: the channel at out[0], the payload from out[1]. The one
 * decoder of the format: the host's stream decoder (tools/lib/frame_decode.c) and the
 * target's command reader both call it. */
enum emb_frame_error emb_frame_decode_one(const uint8_t *in, size_t n, uint8_t *out,
                                          uint8_t *channel, size_t *payload_len);

#endif /* EMB_FRAME_H */
