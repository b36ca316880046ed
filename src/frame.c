/* COBS framing with a CRC-16 (docs/formats/frame.md). */
#include <emb/frame.h>

/* Nibble table: 32 bytes instead of 512, four shifts per byte. */
static const uint16_t emb__crc16_nibble[16] = {
    0x0000u, 0x1021u, 0x2042u, 0x3063u, 0x4084u, 0x50A5u, 0x60C6u, 0x70E7u,
    0x8108u, 0x9129u, 0xA14Au, 0xB16Bu, 0xC18Cu, 0xD1ADu, 0xE1CEu, 0xF1EFu,
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
    enc->status = (uint8_t)EMB_OK;
    enc->crc = emb_crc16(EMB_CRC16_INIT, &channel, 1u);
    emb__put_byte(enc, channel);
}

void emb_frame_encode_put(struct emb_frame_encoder *enc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    enc->crc = emb_crc16(enc->crc, p, len);
    for (size_t i = 0; i < len; i++)
        emb__put_byte(enc, p[i]);
}

emb_status emb_frame_encode_end(struct emb_frame_encoder *enc)
{
    uint16_t crc = enc->crc;
    emb__put_byte(enc, (uint8_t)crc);
    emb__put_byte(enc, (uint8_t)(crc >> 8));
    /* The last block always closes, empty or not: its missing zero marks the frame end. */
    emb__flush_block(enc);
    static const uint8_t delimiter = 0u;
    if (enc->status == (uint8_t)EMB_OK) {
        emb_status s = enc->write(enc->arg, &delimiter, 1u);
        if (s != EMB_OK)
            enc->status = (uint8_t)s;
    }
    return (emb_status)enc->status;
}
