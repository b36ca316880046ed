/* Byte-stream framing (docs/formats/frame.md): COBS(channel u8, payload, crc16) then a
 * zero delimiter. A frame holds no zero byte but its delimiter, so a reader that starts
 * anywhere, or loses bytes, resynchronises at the next zero.
 *
 * The encoder streams: it keeps one COBS block (at most 254 bytes) and hands finished
 * blocks to the caller's write function, so a frame is never held whole in memory and the
 * payload can be passed in pieces straight from where it lies (a ring, a record).
 */
#ifndef EMB_FRAME_H
#define EMB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Channels of SPEC-015 §7. */
enum emb_frame_channel {
    EMB_FRAME_CH_LOG = 0,
    EMB_FRAME_CH_TRACE = 1,
    EMB_FRAME_CH_CRASH = 2,
    EMB_FRAME_CH_SHELL = 3,
    EMB_FRAME_CH_APP_FIRST = 4, /* 4 to 15: the application's */
    EMB_FRAME_CH_APP_LAST = 15,
};

/* CRC-16/IBM-3740 (also called CCITT-FALSE): polynomial 0x1021, initial value 0xFFFF, no
 * reflection, no final xor; check value 0x29B1 over "123456789". */
#define EMB_CRC16_INIT 0xFFFFu
uint16_t emb_crc16(uint16_t crc, const void *data, size_t len);

/* Receives encoded bytes; returns EMB_OK or an error, which the encoder latches. */
typedef emb_status (*emb_frame_write_fn)(void *arg, const uint8_t *bytes, uint32_t len);

/* A frame in the making. Allocate anywhere (about 260 bytes); one frame at a time. */
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

/* Most bytes a frame of `payload` bytes takes on the wire, delimiter included. */
#define EMB_FRAME_WIRE_MAX(payload) ((payload) + 3u + ((payload) + 3u) / 254u + 2u)

#ifdef __cplusplus
}
#endif

#endif /* EMB_FRAME_H */
