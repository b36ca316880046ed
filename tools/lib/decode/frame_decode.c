/* The frame decoder: delimiter split, COBS, CRC-16, counting what it drops. */
#include "frame_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/frame.h>

struct emb_frame_dec {
    emb_frame_fn fn;
    emb_frame_error_fn err_fn;
    void *arg;
    size_t max_bytes;     /* encoded bytes allowed between delimiters */
    uint8_t *in, *out;
    size_t n;             /* bytes gathered for the current frame */
    uint64_t start;       /* offset of its first byte */
    bool overlong;        /* the current frame passed the limit: drop it at its end */
    bool skipping;        /* before the first delimiter of a joined stream */
    bool fresh;           /* the next byte starts a frame */
    struct emb_frame_stats stats;
};

const char *emb_frame_error_text(enum emb_frame_error err)
{
    switch (err) {
    case EMB_FRAME_OK: return "ok";
    case EMB_FRAME_BAD_COBS: return "broken COBS encoding";
    case EMB_FRAME_BAD_CRC: return "CRC-16 mismatch";
    case EMB_FRAME_TOO_SHORT: return "too short for a channel and a CRC";
    case EMB_FRAME_BAD_CHANNEL: return "channel above 15";
    case EMB_FRAME_TOO_LONG: return "longer than the largest frame allowed";
    }
    return "?";
}

struct emb_frame_dec *emb_frame_dec_new(size_t max_payload, bool join_midway, emb_frame_fn fn,
                                        emb_frame_error_fn err_fn, void *arg)
{
    if (max_payload == 0u)
        max_payload = EMB_FRAME_DEFAULT_MAX_PAYLOAD;
    struct emb_frame_dec *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->max_bytes = EMB_FRAME_WIRE_MAX(max_payload);
    d->in = malloc(d->max_bytes);
    d->out = malloc(d->max_bytes);
    if (d->in == NULL || d->out == NULL) {
        emb_frame_dec_free(d);
        return NULL;
    }
    d->fn = fn;
    d->err_fn = err_fn;
    d->arg = arg;
    d->skipping = join_midway;
    d->fresh = true;
    return d;
}

static void emb__drop(struct emb_frame_dec *d, enum emb_frame_error err, size_t bytes)
{
    struct emb_frame_stats *s = &d->stats;
    s->dropped++;
    s->skipped += bytes;
    switch (err) {
    case EMB_FRAME_BAD_COBS: s->bad_cobs++; break;
    case EMB_FRAME_BAD_CRC: s->bad_crc++; break;
    case EMB_FRAME_TOO_SHORT: s->too_short++; break;
    case EMB_FRAME_BAD_CHANNEL: s->bad_channel++; break;
    case EMB_FRAME_TOO_LONG: s->too_long++; break;
    default: break;
    }
    if (d->err_fn != NULL)
        d->err_fn(d->arg, err, d->start, bytes);
}

/* A delimiter ended the bytes gathered since the last one. */
static void emb__end_frame(struct emb_frame_dec *d, size_t total)
{
    if (d->skipping) {
        d->stats.leading += total;
        d->skipping = false;
    } else if (d->overlong) {
        emb__drop(d, EMB_FRAME_TOO_LONG, total);
    } else if (d->n == 0u) {
        d->stats.empty++;
    } else {
        uint8_t channel;
        size_t len;
        enum emb_frame_error err = emb_frame_decode_one(d->in, d->n, d->out, &channel, &len);
        if (err != EMB_FRAME_OK) {
            emb__drop(d, err, d->n);
        } else {
            d->stats.frames++;
            d->stats.per_channel[channel]++;
            if (d->fn != NULL)
                d->fn(d->arg, channel, d->out + 1, len, d->start);
        }
    }
    d->n = 0;
    d->overlong = false;
    d->fresh = true;
}

void emb_frame_dec_feed(struct emb_frame_dec *d, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    size_t i = 0;
    while (i < n) {
        if (d->fresh) {
            d->start = d->stats.bytes;
            d->fresh = false;
        }
        const uint8_t *z = memchr(p + i, 0, n - i);
        size_t run = z != NULL ? (size_t)(z - (p + i)) : n - i;
        if (!d->skipping && !d->overlong) {
            if (d->n + run > d->max_bytes) {
                d->overlong = true;
            } else {
                memcpy(d->in + d->n, p + i, run);
                d->n += run;
            }
        }
        /* An over-long frame keeps counting its bytes for the report. */
        size_t total = d->overlong || d->skipping ? (size_t)(d->stats.bytes + run - d->start) : d->n;
        d->stats.bytes += run;
        i += run;
        if (z != NULL) {
            d->stats.bytes++;
            i++;
            emb__end_frame(d, total);
        }
    }
}

size_t emb_frame_dec_finish(struct emb_frame_dec *d)
{
    size_t left = d->fresh ? 0u : d->overlong || d->skipping ? (size_t)(d->stats.bytes - d->start) : d->n;
    if (left > 0u && !d->skipping)
        emb__drop(d, d->overlong ? EMB_FRAME_TOO_LONG : EMB_FRAME_TOO_SHORT, left);
    d->n = 0;
    d->overlong = false;
    d->fresh = true;
    return left;
}

const struct emb_frame_stats *emb_frame_dec_stats(const struct emb_frame_dec *d)
{
    return &d->stats;
}

void emb_frame_dec_free(struct emb_frame_dec *d)
{
    if (d == NULL)
        return;
    free(d->in);
    free(d->out);
    free(d);
}

/* ---- Views and messages ---- */

static void emb__view_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    struct emb_frame_decoder *d = arg;
    d->first = false;
    d->frames++;
    if (d->cb.frame != NULL) {
        /* Called at the delimiter, which the decoder has just counted. */
        struct emb_frame_view v = {ch, p, len, off, emb_frame_dec_stats(d->dec)->bytes - 1u};
        d->cb.frame(d->cb.arg, &v);
    }
}

static void emb__view_error(void *arg, enum emb_frame_error err, uint64_t off, size_t bytes)
{
    struct emb_frame_decoder *d = arg;
    bool first = d->first && off == 0u && !d->finishing;
    d->first = false;
    d->bad_frames++;
    if (d->cb.problem == NULL)
        return;
    char msg[160];
    const char *why = err == EMB_FRAME_BAD_COBS      ? "broken COBS encoding"
                      : err == EMB_FRAME_TOO_SHORT   ? "frame shorter than channel and CRC"
                      : err == EMB_FRAME_BAD_CRC     ? "CRC mismatch"
                      : err == EMB_FRAME_BAD_CHANNEL ? "channel above 15"
                                                     : NULL;
    if (d->finishing)
        snprintf(msg, sizeof msg, "stream ends inside a frame (%zu bytes without a delimiter)",
                 bytes);
    else if (why == NULL)
        snprintf(msg, sizeof msg, "frame longer than %zu bytes: skipped to the next delimiter",
                 d->max_bytes);
    else if (first) /* we may have joined mid-frame: not the stream's fault */
        snprintf(msg, sizeof msg, "skipped %zu bytes before the first frame delimiter "
                 "(a stream joined mid-frame)", bytes);
    else
        snprintf(msg, sizeof msg, "bad frame (%s, %zu bytes): skipped", why, bytes);
    d->cb.problem(d->cb.arg, off, !first, msg);
}

bool emb_frame_decoder_init(struct emb_frame_decoder *d, size_t max_payload,
                            const struct emb_frame_callbacks *cb)
{
    memset(d, 0, sizeof *d);
    if (cb != NULL)
        d->cb = *cb;
    d->first = true;
    d->max_bytes = EMB_FRAME_WIRE_MAX(max_payload ? max_payload : EMB_FRAME_DEFAULT_MAX_PAYLOAD);
    d->dec = emb_frame_dec_new(max_payload, false, emb__view_frame, emb__view_error, d);
    return d->dec != NULL;
}

void emb_frame_decoder_free(struct emb_frame_decoder *d)
{
    emb_frame_dec_free(d->dec);
    d->dec = NULL;
}

void emb_frame_decoder_feed(struct emb_frame_decoder *d, const uint8_t *data, size_t len)
{
    emb_frame_dec_feed(d->dec, data, len);
}

void emb_frame_decoder_finish(struct emb_frame_decoder *d)
{
    d->finishing = true;
    emb_frame_dec_finish(d->dec);
    d->finishing = false;
}

long emb_cobs_decode(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t r = 0, w = 0;
    while (r < len) {
        uint8_t code = in[r];
        if (code == 0u || r + code > len)
            return -1;
        for (size_t k = 1; k < code; k++) {
            if (in[r + k] == 0u)
                return -1;
            out[w++] = in[r + k];
        }
        r += code;
        if (code < 0xFFu && r < len)
            out[w++] = 0u;
    }
    return (long)w;
}
