/* Frame encoders (docs/formats/frame.md): COBS over channel, payload and CRC-16. */
#include <emb/frame.h>

#include <emb/config.h>

#include <string.h>

#if CONFIG_EMB_FRAME_CRC_TABLE256
/* CRC-16/CCITT-FALSE a byte at a time: 512 bytes of table, for hosts and big targets. */
static const uint16_t emb__crc16_table[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5, 0x60C6, 0x70E7,
    0x8108, 0x9129, 0xA14A, 0xB16B, 0xC18C, 0xD1AD, 0xE1CE, 0xF1EF,
    0x1231, 0x0210, 0x3273, 0x2252, 0x52B5, 0x4294, 0x72F7, 0x62D6,
    0x9339, 0x8318, 0xB37B, 0xA35A, 0xD3BD, 0xC39C, 0xF3FF, 0xE3DE,
    0x2462, 0x3443, 0x0420, 0x1401, 0x64E6, 0x74C7, 0x44A4, 0x5485,
    0xA56A, 0xB54B, 0x8528, 0x9509, 0xE5EE, 0xF5CF, 0xC5AC, 0xD58D,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76D7, 0x66F6, 0x5695, 0x46B4,
    0xB75B, 0xA77A, 0x9719, 0x8738, 0xF7DF, 0xE7FE, 0xD79D, 0xC7BC,
    0x48C4, 0x58E5, 0x6886, 0x78A7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xC9CC, 0xD9ED, 0xE98E, 0xF9AF, 0x8948, 0x9969, 0xA90A, 0xB92B,
    0x5AF5, 0x4AD4, 0x7AB7, 0x6A96, 0x1A71, 0x0A50, 0x3A33, 0x2A12,
    0xDBFD, 0xCBDC, 0xFBBF, 0xEB9E, 0x9B79, 0x8B58, 0xBB3B, 0xAB1A,
    0x6CA6, 0x7C87, 0x4CE4, 0x5CC5, 0x2C22, 0x3C03, 0x0C60, 0x1C41,
    0xEDAE, 0xFD8F, 0xCDEC, 0xDDCD, 0xAD2A, 0xBD0B, 0x8D68, 0x9D49,
    0x7E97, 0x6EB6, 0x5ED5, 0x4EF4, 0x3E13, 0x2E32, 0x1E51, 0x0E70,
    0xFF9F, 0xEFBE, 0xDFDD, 0xCFFC, 0xBF1B, 0xAF3A, 0x9F59, 0x8F78,
    0x9188, 0x81A9, 0xB1CA, 0xA1EB, 0xD10C, 0xC12D, 0xF14E, 0xE16F,
    0x1080, 0x00A1, 0x30C2, 0x20E3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83B9, 0x9398, 0xA3FB, 0xB3DA, 0xC33D, 0xD31C, 0xE37F, 0xF35E,
    0x02B1, 0x1290, 0x22F3, 0x32D2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xB5EA, 0xA5CB, 0x95A8, 0x8589, 0xF56E, 0xE54F, 0xD52C, 0xC50D,
    0x34E2, 0x24C3, 0x14A0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
    0xA7DB, 0xB7FA, 0x8799, 0x97B8, 0xE75F, 0xF77E, 0xC71D, 0xD73C,
    0x26D3, 0x36F2, 0x0691, 0x16B0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xD94C, 0xC96D, 0xF90E, 0xE92F, 0x99C8, 0x89E9, 0xB98A, 0xA9AB,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18C0, 0x08E1, 0x3882, 0x28A3,
    0xCB7D, 0xDB5C, 0xEB3F, 0xFB1E, 0x8BF9, 0x9BD8, 0xABBB, 0xBB9A,
    0x4A75, 0x5A54, 0x6A37, 0x7A16, 0x0AF1, 0x1AD0, 0x2AB3, 0x3A92,
    0xFD2E, 0xED0F, 0xDD6C, 0xCD4D, 0xBDAA, 0xAD8B, 0x9DE8, 0x8DC9,
    0x7C26, 0x6C07, 0x5C64, 0x4C45, 0x3CA2, 0x2C83, 0x1CE0, 0x0CC1,
    0xEF1F, 0xFF3E, 0xCF5D, 0xDF7C, 0xAF9B, 0xBFBA, 0x8FD9, 0x9FF8,
    0x6E17, 0x7E36, 0x4E55, 0x5E74, 0x2E93, 0x3EB2, 0x0ED1, 0x1EF0,
};

uint16_t emb_crc16(uint16_t crc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    for (size_t i = 0; i < len; i++)
        crc = (uint16_t)((crc << 8) ^ emb__crc16_table[((crc >> 8) ^ p[i]) & 0xFFu]);
    return crc;
}
#else
/* CRC-16/CCITT-FALSE four bits at a time: a 32-byte table instead of 512, at about half
 * the speed of the byte table (CONFIG_EMB_FRAME_CRC_TABLE256). */
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
#endif

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

/* A run of bytes: the non-zero stretches copied whole, up to the end of the block. */
static void emb__cobs_run(struct emb__cobs *c, const uint8_t *p, size_t len)
{
    while (len > 0u) {
        if (*p == 0u) {
            emb__cobs_byte(c, 0u);
            p++;
            len--;
            continue;
        }
        size_t n = (size_t)(0xFFu - c->code); /* room left in the block, at least 1 */
        if (n > len)
            n = len;
        const uint8_t *z = (const uint8_t *)memchr(p, 0, n);
        if (z != NULL)
            n = (size_t)(z - p);
        memcpy(c->out + c->w, p, n);
        c->w += n;
        c->code = (uint8_t)(c->code + n);
        p += n;
        len -= n;
        if (c->code == 0xFFu) {
            c->out[c->code_pos] = c->code;
            c->code_pos = c->w++;
            c->code = 1u;
        }
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
    emb__cobs_run(&c, p, len);
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

void emb_frame_encode_begin(struct emb_frame_encoder *enc, emb_frame_write_fn write, void *arg,
                     uint8_t channel)
{
    enc->write = write;
    enc->arg = arg;
    enc->fill = 1u;
    enc->status = (uint8_t)(channel < EMB_FRAME_CHANNELS ? EMB_OK : EMB_E_INVALID);
    enc->crc = emb_crc16(EMB_CRC16_INIT, &channel, 1u);
    emb__put_byte(enc, channel);
}

void emb_frame_encode_put(struct emb_frame_encoder *enc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    enc->crc = emb_crc16(enc->crc, p, len);
    while (len > 0u) {
        if (*p == 0u) {
            emb__flush_block(enc); /* the block's end stands for this zero */
            p++;
            len--;
            continue;
        }
        size_t n = 255u - (size_t)enc->fill; /* room left in the block, at least 1 */
        if (n > len)
            n = len;
        const uint8_t *z = (const uint8_t *)memchr(p, 0, n);
        if (z != NULL)
            n = (size_t)(z - p);
        memcpy(enc->block + enc->fill, p, n);
        enc->fill = (uint8_t)(enc->fill + n);
        p += n;
        len -= n;
        if (enc->fill == 255u)
            emb__flush_block(enc); /* a full block (code 0xFF) implies no zero */
    }
}

emb_status emb_frame_encode_end(struct emb_frame_encoder *enc)
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
