/* Framed byte streams, read incrementally (frame_decode.h, docs/formats/frame.md). */
#include "frame_decode.h"

#include <stdio.h>
#include <stdlib.h>

#include <emb/frame.h>

bool emb_frame_decoder_init(struct emb_frame_decoder *d, size_t max_payload,
                            const struct emb_frame_callbacks *cb)
{
    *d = (struct emb_frame_decoder){.cb = *cb, .first = true};
    d->cap = EMB_FRAME_WIRE_MAX(max_payload);
    d->enc = malloc(d->cap);
    d->dec = malloc(d->cap);
    if (d->enc == NULL || d->dec == NULL) {
        emb_frame_decoder_free(d);
        return false;
    }
    return true;
}

void emb_frame_decoder_free(struct emb_frame_decoder *d)
{
    free(d->enc);
    free(d->dec);
    d->enc = d->dec = NULL;
}

long emb_cobs_decode(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t i = 0, n = 0;
    while (i < len) {
        uint8_t code = in[i++];
        if (code == 0u)
            return -1;
        size_t run = code - 1u;
        if (run > len - i)
            return -1; /* the block claims bytes the frame does not have */
        for (size_t k = 0; k < run; k++) {
            if (in[i + k] == 0u)
                return -1;
            out[n++] = in[i + k];
        }
        i += run;
        if (code != 0xFFu && i < len)
            out[n++] = 0u; /* the zero this block's end stands for (not after the last) */
    }
    return (long)n;
}

static void emb__problem(struct emb_frame_decoder *d, uint64_t offset, bool error, const char *msg)
{
    if (d->cb.problem != NULL)
        d->cb.problem(d->cb.arg, offset, error, msg);
}

/* A delimiter ended the bytes in enc[]. */
static void emb__complete(struct emb_frame_decoder *d)
{
    bool first = d->first;
    d->first = false;
    if (d->len == 0u && !d->overflow)
        return; /* back-to-back delimiters: an empty frame, which separates nothing */
    char msg[160];
    if (d->overflow) {
        snprintf(msg, sizeof msg, "frame longer than %zu bytes: skipped to the next delimiter",
                 d->cap);
        emb__problem(d, d->frame_start, !first, msg);
        d->bad_frames++;
        return;
    }
    long n = emb_cobs_decode(d->enc, d->len, d->dec);
    const char *why = NULL;
    if (n < 0)
        why = "broken COBS encoding";
    else if (n < 3)
        why = "frame shorter than channel and CRC";
    else if (emb_crc16(EMB_CRC16_INIT, d->dec, (size_t)n - 2u) !=
             (uint16_t)(d->dec[n - 2] | (d->dec[n - 1] << 8)))
        why = "CRC mismatch";
    if (why != NULL) {
        d->bad_frames++;
        if (first) /* we may have joined mid-frame: not the stream's fault */
            snprintf(msg, sizeof msg, "skipped %zu bytes before the first frame delimiter "
                     "(a stream joined mid-frame)", d->len);
        else
            snprintf(msg, sizeof msg, "bad frame (%s, %zu bytes): skipped", why, d->len);
        emb__problem(d, d->frame_start, !first, msg);
        return;
    }
    d->frames++;
    struct emb_frame_view f = {d->dec[0], d->dec + 1, (size_t)n - 3u, d->frame_start,
                               d->frame_start + d->len};
    if (d->cb.frame != NULL)
        d->cb.frame(d->cb.arg, &f);
}

void emb_frame_decoder_feed(struct emb_frame_decoder *d, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t b = data[i];
        if (b == 0u) {
            emb__complete(d);
            d->len = 0;
            d->overflow = false;
            d->frame_start = d->pos + 1u;
        } else if (d->len < d->cap) {
            d->enc[d->len++] = b;
        } else {
            d->overflow = true;
        }
        d->pos++;
    }
}

void emb_frame_decoder_finish(struct emb_frame_decoder *d)
{
    if (d->len == 0u && !d->overflow)
        return;
    char msg[128];
    snprintf(msg, sizeof msg, "stream ends inside a frame (%zu bytes without a delimiter)",
             d->len);
    emb__problem(d, d->frame_start, true, msg);
    d->bad_frames++;
    d->len = 0;
    d->overflow = false;
}
