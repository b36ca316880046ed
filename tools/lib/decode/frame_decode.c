/* The frame decoder: delimiter split, COBS, CRC-16, counting what it drops. */
#include "frame_decode.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/frame.h>

/* ---- One frame, as emb_frame_decode_one() decodes it, faster ----
 * The wire's decoder is sized for the target: a byte at a time, the CRC four bits at a
 * time. The host reads megabytes of frames, so it copies each COBS block whole (eight
 * bytes at once when it is short: both buffers have SLACK bytes past their end) and
 * checks the same CRC-16 eight bytes at a time with tables made from emb_crc16() itself. */
enum { SLACK = 8 };

static uint16_t crc_tables[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* crc_tables[k][x]: the CRC register after byte x and k zero bytes, from zero. */
static void make_crc_tables(void)
{
    for (unsigned x = 0; x < 256u; x++) {
        uint8_t b = (uint8_t)x;
        crc_tables[0][x] = emb_crc16(0, &b, 1u);
    }
    for (unsigned k = 1; k < 8u; k++)
        for (unsigned x = 0; x < 256u; x++) {
            uint16_t c = crc_tables[k - 1u][x];
            crc_tables[k][x] = (uint16_t)((c << 8) ^ crc_tables[0][c >> 8]);
        }
}

static uint16_t crc16(uint16_t crc, const uint8_t *p, size_t len)
{
    for (; len >= 8u; p += 8, len -= 8u)
        crc = crc_tables[7][p[0] ^ (crc >> 8)] ^ crc_tables[6][p[1] ^ (crc & 0xFFu)] ^
              crc_tables[5][p[2]] ^ crc_tables[4][p[3]] ^ crc_tables[3][p[4]] ^
              crc_tables[2][p[5]] ^ crc_tables[1][p[6]] ^ crc_tables[0][p[7]];
    for (; len > 0u; p++, len--)
        crc = (uint16_t)((crc << 8) ^ crc_tables[0][(crc >> 8) ^ *p]);
    return crc;
}

/* COBS undone the general way, a block at a time; the decoded length, or -1. */
static long undo_cobs_blocks(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t i = 0, len = 0;
    while (i < n) {
        size_t code = in[i++];
        if (code == 0u || code - 1u > n - i)
            return -1;
        size_t run = code - 1u;
        memcpy(out + len, in + i, run <= SLACK ? SLACK : run);
        len += run;
        i += run;
        if (code != 0xFFu && i < n)
            out[len++] = 0u; /* the zero this block stood for; none after the last block */
    }
    return (long)len;
}

/* COBS undone: without a full block (code 0xFF), the frame is its bytes after the first,
 * each later code byte standing for the zero it replaces, so one copy and a walk along
 * the codes do it (most of a log frame's blocks are a byte or two long). */
static long undo_cobs(const uint8_t *in, size_t n, uint8_t *out)
{
    memcpy(out, in + 1, n - 1u);
    for (size_t i = 0; i < n;) {
        size_t code = in[i];
        if (code == 0xFFu)
            return undo_cobs_blocks(in, n, out);
        if (code == 0u || code - 1u > n - i - 1u)
            return -1;
        i += code;
        if (i < n)
            out[i - 1u] = 0u;
    }
    return (long)n - 1;
}

static enum emb_frame_error decode_one(const uint8_t *in, size_t n, uint8_t *out,
                                       uint8_t *channel, size_t *payload_len)
{
    long decoded = undo_cobs(in, n, out);
    if (decoded < 0)
        return EMB_FRAME_BAD_COBS;
    size_t len = (size_t)decoded;
    if (len < 3u)
        return EMB_FRAME_TOO_SHORT;
    uint16_t crc = crc16(EMB_CRC16_INIT, out, len - 2u);
    if ((uint16_t)(out[len - 2u] | (out[len - 1u] << 8)) != crc)
        return EMB_FRAME_BAD_CRC;
    if (out[0] >= EMB_FRAME_CHANNELS)
        return EMB_FRAME_BAD_CHANNEL;
    *channel = out[0];
    *payload_len = len - 3u;
    return EMB_FRAME_OK;
}

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
    pthread_once(&crc_once, make_crc_tables);
    d->max_bytes = EMB_FRAME_WIRE_MAX(max_payload);
    d->in = calloc(1, d->max_bytes + SLACK);
    d->out = calloc(1, d->max_bytes + SLACK);
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

static void drop(struct emb_frame_dec *d, enum emb_frame_error err, size_t bytes)
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
static void end_frame(struct emb_frame_dec *d, size_t total)
{
    if (d->skipping) {
        d->stats.leading += total;
        d->skipping = false;
    } else if (d->overlong) {
        drop(d, EMB_FRAME_TOO_LONG, total);
    } else if (d->n == 0u) {
        d->stats.empty++;
    } else {
        uint8_t channel;
        size_t len;
        enum emb_frame_error err = decode_one(d->in, d->n, d->out, &channel, &len);
        if (err != EMB_FRAME_OK) {
            drop(d, err, d->n);
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
            end_frame(d, total);
        }
    }
}

size_t emb_frame_dec_finish(struct emb_frame_dec *d)
{
    size_t left = d->fresh ? 0u : d->overlong || d->skipping ? (size_t)(d->stats.bytes - d->start) : d->n;
    if (left > 0u && !d->skipping)
        drop(d, d->overlong ? EMB_FRAME_TOO_LONG : EMB_FRAME_TOO_SHORT, left);
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
