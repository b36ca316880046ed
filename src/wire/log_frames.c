/* Log frame payloads (docs/formats/log.md, "The log stream: frames"): the one encoder of
 * hello, context, stats and data frames, used by the target's drain (src/log.c) and by a
 * host that reads a log ring out of target memory. Depends on no port. */
#include <emb/log_format.h>
#include <emb/wire.h>

void emb_log_encode_hello(uint8_t p[EMB_LOG_HELLO_SIZE], const struct emb_log_hello_info *h)
{
    memset(p, 0, EMB_LOG_HELLO_SIZE);
    p[0] = EMB_LOG_FRAME_HELLO;
    p[EMB_LOG_HELLO_OFF_VERSION] = EMB_LOG_HELLO_VERSION;
    emb_put_le16(p + EMB_LOG_HELLO_OFF_SIZE, EMB_LOG_HELLO_SIZE);
    emb_put_le32(p + EMB_LOG_HELLO_OFF_MAGIC, EMB_LOG_HELLO_MAGIC);
    emb_put_le64(p + EMB_LOG_HELLO_OFF_CLOCK_HZ, h->clock_hz);
    emb_put_le64(p + EMB_LOG_HELLO_OFF_CLOCK_OFFSET, (uint64_t)h->clock_offset_ns);
    p[EMB_LOG_HELLO_OFF_ID_BYTES] = h->id_bytes;
    p[EMB_LOG_HELLO_OFF_TS_BYTES] = h->ts_bytes;
    p[EMB_LOG_HELLO_OFF_PTR_BYTES] = h->ptr_bytes;
    if (h->build_id != NULL) {
        uint8_t n = h->build_id_len < EMB_LOG_BUILD_ID_MAX ? h->build_id_len : EMB_LOG_BUILD_ID_MAX;
        p[EMB_LOG_HELLO_OFF_BUILD_ID_LEN] = n;
        memcpy(p + EMB_LOG_HELLO_OFF_BUILD_ID, h->build_id, n);
    }
    emb_put_text(p + EMB_LOG_HELLO_OFF_PORT, h->port, EMB_LOG_PORT_MAX);
}

void emb_log_encode_context(uint8_t p[EMB_LOG_CTX_SIZE], uint16_t context, uint8_t kind,
                            const char *name)
{
    p[0] = EMB_LOG_FRAME_CONTEXT;
    p[EMB_LOG_CTX_OFF_KIND] = kind;
    emb_put_le16(p + EMB_LOG_CTX_OFF_CONTEXT, context);
    emb_put_text(p + EMB_LOG_CTX_OFF_NAME, name, EMB_LOG_CTX_NAME_MAX);
}

void emb_log_encode_stats(uint8_t p[EMB_LOG_STATS_SIZE], uint16_t context, uint32_t dropped,
                          uint32_t pending, uint32_t pos)
{
    memset(p, 0, EMB_LOG_STATS_SIZE);
    p[0] = EMB_LOG_FRAME_STATS;
    emb_put_le16(p + EMB_LOG_STATS_OFF_CONTEXT, context);
    emb_put_le32(p + EMB_LOG_STATS_OFF_DROPPED, dropped);
    emb_put_le32(p + EMB_LOG_STATS_OFF_PENDING, pending);
    emb_put_le32(p + EMB_LOG_STATS_OFF_POS, pos);
}

/* Hands ring bytes [from, to) to the encoder. The bytes of the record that crossed the
 * ring's end at spill_pos lie in the slack past the buffer's end, not at its start. */
static void emb__put_range(struct emb_frame_encoder *enc, const struct emb_log_ring_image *img,
                           uint32_t from, uint32_t to)
{
    while (from != to) {
        uint32_t off = from & img->mask;
        uint32_t n;
        const uint8_t *src;
        if (from - img->spill_pos < img->spill) {
            src = img->buf + img->mask + 1u + (from - img->spill_pos);
            n = img->spill - (from - img->spill_pos);
        } else {
            src = img->buf + off;
            n = img->mask + 1u - off;
            if (img->spill != 0u && img->spill_pos - from < n)
                n = img->spill_pos - from; /* stop where the spill takes over */
        }
        if (n > to - from)
            n = to - from;
        emb_frame_encode_put(enc, src, n);
        from += n;
    }
}

emb_status emb_log_write_ring_data(emb_frame_write_fn write, void *arg, uint16_t context,
                                   const struct emb_log_ring_image *img, uint32_t from,
                                   uint32_t to, uint32_t frame_max)
{
    emb_status status = EMB_OK;
    if (frame_max == 0u)
        return EMB_E_INVALID;
    while (from != to) {
        uint32_t n = to - from < frame_max ? to - from : frame_max;
        uint8_t head[EMB_LOG_DATA_HEADER];
        head[0] = EMB_LOG_FRAME_DATA;
        head[EMB_LOG_DATA_OFF_FLAGS] = 0u;
        emb_put_le16(head + EMB_LOG_DATA_OFF_CONTEXT, context);
        emb_put_le32(head + EMB_LOG_DATA_OFF_POS, from);
        struct emb_frame_encoder enc;
        emb_frame_encode_begin(&enc, write, arg, EMB_FRAME_CH_LOG);
        emb_frame_encode_put(&enc, head, sizeof head);
        emb__put_range(&enc, img, from, from + n);
        emb_status s = emb_frame_encode_end(&enc);
        /* A failed write loses the bytes (the output counts it); the range moves on. */
        from += n;
        if (s != EMB_OK) {
            status = s;
            break;
        }
    }
    return status;
}
