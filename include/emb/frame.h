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
 * the streaming encoder (emb_frame_encode_begin/put/end) takes the payload in pieces and hands
 * the encoded bytes to a writer one COBS block (at most 254 bytes) at a time.
 * Freestanding, no allocation.
 */
#ifndef EMB_FRAME_H
#define EMB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

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
/* A crash record frame (channel 2) carries one whole record: at most its 16-bit length. */
#define EMB_FRAME_CRASH_MAX 0xFFFFu

/* Most bytes a frame of `payload` bytes takes on the wire, delimiter included: the
 * channel and CRC (3 bytes), a COBS code byte per 254 bytes or part, the delimiter. */
#define EMB_FRAME_WIRE_MAX(payload) ((payload) + 3u + ((payload) + 3u) / 254u + 2u)

/* CRC-16/IBM-3740 (also called CCITT-FALSE): polynomial 0x1021, initial value 0xFFFF, no
 * reflection, no final xor; check value 0x29B1 over "123456789". */
#define EMB_CRC16_INIT 0xFFFFu
uint16_t emb_crc16(uint16_t crc, const void *data, size_t len);

/* Encodes one frame, delimiter included, into `out` in one pass (each code byte is
 * written once its block is known). Returns the bytes written, or 0 when `cap` is too
 * small (see EMB_FRAME_WIRE_MAX) or the channel is not 0..15. */
size_t emb_frame_encode(uint8_t *out, size_t cap, uint8_t channel, const void *payload,
                        size_t len);

/* Receives encoded bytes; returns EMB_OK or an error, which the encoder latches. */
typedef emb_status (*emb_frame_write_fn)(void *arg, const uint8_t *bytes, uint32_t len);

/* A frame in the making, for payloads given in pieces. Allocate anywhere (about 260
 * bytes); one frame at a time. */
struct emb_frame_encoder {
    emb_frame_write_fn write;
    void *arg;
    uint16_t crc;
    uint8_t fill;        /* bytes in block[], code byte included (1..255) */
    uint8_t status;      /* first emb_status a write returned */
    uint8_t block[255];  /* block[0] is the code byte, filled in when the block closes */
};

/* Starts a frame on `channel` (0..15). */
void emb_frame_encode_begin(struct emb_frame_encoder *enc, emb_frame_write_fn write, void *arg,
                     uint8_t channel);
/* Appends payload bytes. */
void emb_frame_encode_put(struct emb_frame_encoder *enc, const void *data, size_t len);
/* Appends the CRC, closes the last block and writes the delimiter. Returns EMB_OK or the
 * first error a write returned during the frame. */
emb_status emb_frame_encode_end(struct emb_frame_encoder *enc);

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
 * decoder of the format: the host's stream decoder (tools/lib/decode/frame_decode.c) and the
 * target's command reader both call it. */
enum emb_frame_error emb_frame_decode_one(const uint8_t *in, size_t n, uint8_t *out,
                                          uint8_t *channel, size_t *payload_len);

#ifdef __cplusplus
}
#endif

#endif /* EMB_FRAME_H */
