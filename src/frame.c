/* Frame encoders (docs/formats/frame.md): COBS over channel, payload and CRC-16. */
#include <emb/frame.h>

/* CRC-16/CCITT-FALSE four bits at a time: a 32-byte table instead of 512, at about half
 * the speed of the byte table, which a frame of trace packets does not notice. */
static const uint16_t emb__crc16_nibble[16] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5, 0x60C6, 0x70E7,
    0x8108, 0x9129, 0xA14A, 0xB16B, 0xC18C, 0xD1AD, 0xE1CE, 0xF1EF,
};

uint16_t emb_crc16(uint16_t crc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    for (size_t i = 0; i < len; i++) {
        crc = (uint16_t)((crc << 4) ^ emb__crc16_nibble[((crc >> 12) ^ (p[i] >> 4)) & 0x0Fu]);
        crc = (uint16_t)((crc << 4) ^ emb__crc16_nibble[((crc >> 12) ^ (p[i] & 0x0Fu)) & 0x0Fu]);
    }
    return crc;
}

/* ---- One pass into the caller's buffer ---- */

struct emb__cobs {
    uint8_t *out;
    size_t w, code_pos;
    uint8_t code;
};

static void emb__cobs_byte(struct emb__cobs *c, uint8_t b)
{
    if (b == 0u) {
        c->out[c->code_pos] = c->code;
        c->code_pos = c->w++;
        c->code = 1u;
        return;
    }
    c->out[c->w++] = b;
    if (++c->code == 0xFFu) {
        c->out[c->code_pos] = c->code;
        c->code_pos = c->w++;
        c->code = 1u;
    }
}

size_t emb_frame_encode(uint8_t *out, size_t cap, uint8_t channel, const void *payload,
                        size_t len)
{
    if (out == NULL || channel >= EMB_FRAME_CHANNELS || (len > 0u && payload == NULL) ||
        len > SIZE_MAX / 2u || cap < EMB_FRAME_WIRE_MAX(len))
        return 0;
    const uint8_t *p = (const uint8_t *)payload;
    uint16_t crc = emb_crc16(EMB_CRC16_INIT, &channel, 1u);
    crc = emb_crc16(crc, p, len);
    struct emb__cobs c = {out, 1u, 0u, 1u};
    emb__cobs_byte(&c, channel);
    for (size_t i = 0; i < len; i++)
        emb__cobs_byte(&c, p[i]);
    emb__cobs_byte(&c, (uint8_t)crc);
    emb__cobs_byte(&c, (uint8_t)(crc >> 8));
    out[c.code_pos] = c.code;
    out[c.w++] = EMB_FRAME_DELIMITER;
    return c.w;
}

/* ---- Streaming: payload in pieces, output through a writer ---- */

/* Hands the open block to the writer: its code byte is its length. */
static void emb__flush_block(struct emb_frame_encoder *enc)
{
    enc->block[0] = enc->fill;
    if (enc->status == (uint8_t)EMB_OK) {
        emb_status s = enc->write(enc->arg, enc->block, enc->fill);
        if (s != EMB_OK)
            enc->status = (uint8_t)s;
    }
    enc->fill = 1u;
}

/* One byte of the unencoded frame (channel, payload or CRC). */
static void emb__put_byte(struct emb_frame_encoder *enc, uint8_t b)
{
    if (b == 0u) {
        emb__flush_block(enc); /* the block's end stands for this zero */
        return;
    }
    enc->block[enc->fill++] = b;
    if (enc->fill == 255u)
        emb__flush_block(enc); /* a full block (code 0xFF) implies no zero */
}

void emb_frame_enc_begin(struct emb_frame_encoder *enc, emb_frame_write_fn write, void *arg,
                     uint8_t channel)
{
    enc->write = write;
    enc->arg = arg;
    enc->fill = 1u;
    enc->status = (uint8_t)(channel < EMB_FRAME_CHANNELS ? EMB_OK : EMB_E_INVALID);
    enc->crc = emb_crc16(EMB_CRC16_INIT, &channel, 1u);
    emb__put_byte(enc, channel);
}

void emb_frame_enc_put(struct emb_frame_encoder *enc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    enc->crc = emb_crc16(enc->crc, p, len);
    for (size_t i = 0; i < len; i++)
        emb__put_byte(enc, p[i]);
}

emb_status emb_frame_enc_end(struct emb_frame_encoder *enc)
{
    uint16_t crc = enc->crc;
    emb__put_byte(enc, (uint8_t)crc);
    emb__put_byte(enc, (uint8_t)(crc >> 8));
    /* The last block always closes, empty or not: its missing zero marks the frame end. */
    emb__flush_block(enc);
    static const uint8_t delimiter = EMB_FRAME_DELIMITER;
    if (enc->status == (uint8_t)EMB_OK) {
        emb_status s = enc->write(enc->arg, &delimiter, 1u);
        if (s != EMB_OK)
            enc->status = (uint8_t)s;
    }
    return (emb_status)enc->status;
}

/* ---- Decoding ---- */

enum emb_frame_error emb_frame_decode_one(const uint8_t *in, size_t n, uint8_t *out,
                                          uint8_t *channel, size_t *payload_len)
{
    size_t i = 0, len = 0;
    while (i < n) {
        uint8_t code = in[i++];
        if (code == 0u || (size_t)(code - 1u) > n - i)
            return EMB_FRAME_BAD_COBS;
        for (uint8_t k = 1u; k < code; k++)
            out[len++] = in[i++];
        if (code != 0xFFu && i < n)
            out[len++] = 0u; /* the zero this block stood for; none after the last block */
    }
    if (len < 3u)
        return EMB_FRAME_TOO_SHORT;
    uint16_t crc = emb_crc16(EMB_CRC16_INIT, out, len - 2u);
    if ((uint16_t)(out[len - 2u] | (out[len - 1u] << 8)) != crc)
        return EMB_FRAME_BAD_CRC;
    if (out[0] >= EMB_FRAME_CHANNELS)
        return EMB_FRAME_BAD_CHANNEL;
    *channel = out[0];
    *payload_len = len - 3u;
    return EMB_FRAME_OK;
}
