/* Frames: the CRC-16 check value, COBS boundaries (runs of 253, 254 and 255 non-zero
 * bytes, zeros everywhere), the one-pass and streaming encoders byte for byte, and the
 * decoder resynchronising past every kind of damage while counting what it drops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/frame.h>

#include "frame_decode.h"
#include "problem.h"
#include "harness.h"

static uint32_t rng = 2463534242u;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

struct sinkbuf {
    uint8_t b[8192];
    size_t n;
    size_t refuse_after; /* 0: never */
};

static emb_status sink(void *arg, const uint8_t *bytes, uint32_t n)
{
    struct sinkbuf *s = arg;
    if (s->refuse_after && s->n + n > s->refuse_after)
        return EMB_E_IO;
    memcpy(s->b + s->n, bytes, n);
    s->n += n;
    return EMB_OK;
}

struct frames {
    uint8_t ch[4096];
    size_t len[4096];
    uint8_t data[4096][1200];
    size_t n;
    unsigned errors[8];
};

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct frames *f = arg;
    if (f->n < 4096 && len <= 1200) {
        f->ch[f->n] = ch;
        f->len[f->n] = len;
        memcpy(f->data[f->n], p, len);
    }
    f->n++;
}

static void on_error(void *arg, enum emb_frame_error err, uint64_t off, size_t bytes)
{
    (void)off;
    (void)bytes;
    struct frames *f = arg;
    f->errors[err]++;
}

static void vectors(void)
{
    ok_eq(emb_crc16(EMB_CRC16_INIT, "123456789", 9), 0x29B1, "CRC-16/CCITT-FALSE check value");
    uint8_t out[64];
    /* Empty payload on channel 0: 00 | crc; the channel zero makes the first block empty. */
    uint16_t crc = emb_crc16(EMB_CRC16_INIT, "\0", 1);
    size_t n = emb_frame_encode(out, sizeof out, 0, NULL, 0);
    uint8_t want[] = {0x01, 0x03, (uint8_t)crc, (uint8_t)(crc >> 8), 0x00};
    ok(n == 5 && !memcmp(out, want, 5) && (crc & 0xFF) && (crc >> 8), "empty frame on channel 0");
    uint8_t p[] = {0x11, 0x00, 0x22};
    crc = emb_crc16(EMB_CRC16_INIT, "\x03\x11\x00\x22", 4);
    n = emb_frame_encode(out, sizeof out, 3, p, 3);
    uint8_t want2[] = {0x03, 0x03, 0x11, 0x04, 0x22, (uint8_t)crc, (uint8_t)(crc >> 8), 0x00};
    ok(n == 8 && !memcmp(out, want2, 8), "channel 3, a zero in the payload");
    ok(emb_frame_encode(out, sizeof out, 16, p, 3) == 0, "channel 16 refused");
    ok(emb_frame_encode(out, EMB_FRAME_WIRE_MAX(3) - 1, 1, p, 3) == 0, "a buffer one byte short refused");
}

static void roundtrip(void)
{
    static uint8_t payload[1100], enc[1200];
    static struct frames f;
    int bad = 0, mismatch = 0;
    size_t lens[] = {0, 1, 2, 250, 251, 252, 253, 254, 255, 256, 507, 508, 509, 1024, 1099};
    for (unsigned t = 0; t < 600; t++) {
        size_t len = t < 15 ? lens[t] : next() % 1100;
        unsigned mode = t % 4;
        for (size_t i = 0; i < len; i++) {
            uint32_t r = next();
            payload[i] = mode == 0 ? (uint8_t)(r | 1) : mode == 1 ? 0 : mode == 2 ? (uint8_t)r
                                                                              : (uint8_t)(r % 3);
        }
        uint8_t ch = (uint8_t)(t % 16);
        size_t n = emb_frame_encode(enc, sizeof enc, ch, payload, len);
        if (n == 0 || n > EMB_FRAME_WIRE_MAX(len) || memchr(enc, 0, n - 1) || enc[n - 1] != 0)
            bad++;
        /* Streaming, the payload in pieces: the same bytes. */
        static struct sinkbuf s;
        s.n = 0;
        struct emb_frame_encoder e;
        emb_frame_encode_begin(&e, sink, &s, ch);
        for (size_t i = 0; i < len;) {
            size_t k = 1 + next() % 300;
            if (k > len - i)
                k = len - i;
            emb_frame_encode_put(&e, payload + i, k);
            i += k;
        }
        emb_frame_encode_end(&e);
        if (s.n != n || memcmp(s.b, enc, n))
            mismatch++;
        f.n = 0;
        struct emb_frame_dec *d = emb_frame_dec_new(2048, false, on_frame, on_error, &f);
        emb_frame_dec_feed(d, enc, n);
        if (f.n != 1 || f.ch[0] != ch || f.len[0] != len || memcmp(f.data[0], payload, len))
            bad++;
        emb_frame_dec_free(d);
    }
    ok(bad == 0, "600 frames of 0..1099 bytes (boundaries, all zeros, no zeros) round trip");
    ok(mismatch == 0, "the streaming encoder writes the same bytes as the one-pass encoder");

    struct sinkbuf s = {.refuse_after = 100};
    struct emb_frame_encoder e;
    emb_frame_encode_begin(&e, sink, &s, 1);
    memset(payload, 7, 600);
    emb_frame_encode_put(&e, payload, 600);
    ok(emb_frame_encode_end(&e) == EMB_E_IO,
       "a sink that refuses abandons the frame");
}

/* Many frames with damage in some, fed in random pieces: every intact frame comes back,
 * each damaged one is counted once. */
static void damage(void)
{
    static uint8_t stream[1 << 20];
    static uint8_t payload[1024];
    static struct frames f;
    size_t n = 0, intact = 0, damaged = 0;
    size_t first_good = 0;
    /* A late joiner: the stream starts inside a frame. */
    memcpy(stream, "\x05garbage-tail", 13);
    n = 13;
    stream[n++] = 0;
    size_t want_len[512];
    for (unsigned k = 0; k < 400; k++) {
        size_t len = next() % 1024;
        for (size_t i = 0; i < len; i++)
            payload[i] = (uint8_t)next();
        size_t fl = emb_frame_encode(stream + n, sizeof stream - n, (uint8_t)(k % 16), payload, len);
        unsigned kind = k % 10;
        if (kind == 3) {        /* a flipped bit */
            size_t at = n + next() % (fl - 1);
            stream[at] ^= (uint8_t)(1u << (next() % 8));
            if (stream[at] == 0) /* it became a delimiter: two damaged pieces */
                stream[at] = 0x55;
            damaged++;
        } else if (kind == 6) { /* bytes lost in the middle */
            size_t cut = 1 + next() % (fl / 2 + 1);
            memmove(stream + n + 1, stream + n + 1 + cut, fl - 1 - cut);
            fl -= cut;
            damaged++;
        } else {
            if (intact == 0)
                first_good = k;
            want_len[intact++] = len;
        }
        n += fl;
        if (k % 50 == 49)
            stream[n++] = 0; /* an empty frame: ignored */
    }
    (void)first_good;
    /* Garbage with no delimiter longer than the limit, then a good frame. */
    for (size_t i = 0; i < 5000; i++)
        stream[n++] = (uint8_t)(next() | 1);
    stream[n++] = 0;
    n += emb_frame_encode(stream + n, sizeof stream - n, 15, "end", 3);
    intact++;
    /* A frame cut off by the end of the stream. */
    size_t tail = emb_frame_encode(stream + n, sizeof stream - n, 2, "unfinished", 10);
    n += tail - 4;

    f.n = 0;
    memset(f.errors, 0, sizeof f.errors);
    struct emb_frame_dec *d = emb_frame_dec_new(1024, true, on_frame, on_error, &f);
    for (size_t i = 0; i < n;) {
        size_t k = 1 + next() % 700;
        if (k > n - i)
            k = n - i;
        emb_frame_dec_feed(d, stream + i, k);
        i += k;
    }
    size_t left = emb_frame_dec_finish(d);
    const struct emb_frame_stats *st = emb_frame_dec_stats(d);
    ok_eq(f.n, intact, "every intact frame decoded (%zu)", intact);
    ok(st->dropped == damaged + 2 && st->too_long == 1 && st->too_short >= 1,
       "each damaged frame dropped once: %llu (crc %llu, cobs %llu, short %llu, long %llu)",
       (unsigned long long)st->dropped, (unsigned long long)st->bad_crc,
       (unsigned long long)st->bad_cobs, (unsigned long long)st->too_short,
       (unsigned long long)st->too_long);
    ok(st->leading == 13 && st->empty == 8 && left == tail - 4 && st->bytes == n,
       "the joined stream's head skipped, empty frames ignored, the cut tail reported");
    int lens_ok = 1;
    for (size_t i = 0; i + 1 < intact && i < 4096; i++)
        lens_ok &= f.len[i] == want_len[i];
    ok(lens_ok && f.ch[intact - 1] == 15 && f.len[intact - 1] == 3, "in order, with their lengths");
    emb_frame_dec_free(d);

    /* A channel above 15 with a right CRC. */
    uint8_t raw[] = {20, 'x', 0, 0};
    uint16_t crc = emb_crc16(EMB_CRC16_INIT, raw, 2);
    raw[2] = (uint8_t)crc;
    raw[3] = (uint8_t)(crc >> 8);
    uint8_t out[8], ch;
    size_t plen;
    uint8_t cobs[8];
    size_t cn = 0, code_at = cn++;
    uint8_t code = 1;
    for (int i = 0; i < 4; i++) {
        if (raw[i] == 0) {
            cobs[code_at] = code;
            code_at = cn++;
            code = 1;
        } else {
            cobs[cn++] = raw[i];
            code++;
        }
    }
    cobs[code_at] = code;
    ok(emb_frame_decode_one(cobs, cn, out, &ch, &plen) == EMB_FRAME_BAD_CHANNEL || raw[2] == 0 ||
       raw[3] == 0, "a channel above 15 is refused");
}


/* The view API (offsets of each frame and of its delimiter, problems as messages): a
 * reader that joins mid-frame gets a notice, a damaged frame later an error. */
struct views {
    unsigned frames, notices, errors;
    uint64_t offset[8], end[8];
    uint8_t ch[8];
};

static void on_view(void *arg, const struct emb_frame_view *f)
{
    struct views *v = arg;
    if (v->frames < 8) {
        v->offset[v->frames] = f->offset;
        v->end[v->frames] = f->end;
        v->ch[v->frames] = f->channel;
    }
    v->frames++;
}

static void on_problem(void *arg, const struct emb_problem *p)
{
    uint64_t offset = (uint64_t)p->offset;
    bool error = p->severity != EMB_NOTE;
    const char *message = p->message;
    (void)offset;
    (void)message;
    struct views *v = arg;
    if (error)
        v->errors++;
    else
        v->notices++;
}

static void views(void)
{
    uint8_t s[256];
    size_t n = 0;
    s[n++] = 0x42; /* the tail of a frame the reader missed */
    s[n++] = 0x17;
    s[n++] = 0x00;
    size_t a = n;
    n += emb_frame_encode(s + n, sizeof s - n, 1, "abc", 3);
    size_t b = n;
    n += emb_frame_encode(s + n, sizeof s - n, 3, "\0\0", 2);
    s[b + 1] ^= 0x80; /* damage the second frame: its channel byte, so its CRC fails */
    size_t c = n;
    n += emb_frame_encode(s + n, sizeof s - n, 7, "xyz", 3);
    struct views v = {0};
    struct emb_problems problems;
    emb_problems_init_callback(&problems, NULL, on_problem, &v);
    struct emb_frame_callbacks cb = {on_view, &problems, &v};
    struct emb_frame_decoder d;
    ok(emb_frame_decoder_init(&d, 1024, &cb), "view decoder");
    for (size_t i = 0; i < n; i++)
        emb_frame_decoder_feed(&d, s + i, 1);
    emb_frame_decoder_finish(&d);
    ok(v.frames == 2 && v.notices == 1 && v.errors == 1 && d.frames == 2 && d.bad_frames == 2,
       "views: joined mid-frame (a notice), one damaged frame (an error), two frames");
    ok(v.offset[0] == a && v.end[0] == b - 1 && v.ch[0] == 1 && v.offset[1] == c &&
       v.end[1] == n - 1 && v.ch[1] == 7, "views: offsets of each frame and its delimiter");
    emb_frame_decoder_free(&d);
    uint8_t out[16];
    static const uint8_t enc[] = {0x03, 0x11, 0x22, 0x02, 0x33};
    ok(emb_cobs_decode(enc, sizeof enc, out) == 4 && out[2] == 0 && out[3] == 0x33,
       "COBS alone: 11 22 00 33");
    static const uint8_t bad1[] = {0x05, 0x11}, bad2[] = {0x03, 0x00, 0x11};
    ok(emb_cobs_decode(bad1, sizeof bad1, out) == -1 && emb_cobs_decode(bad2, sizeof bad2, out) == -1,
       "COBS alone: a block past the end, a zero inside");
}

/* The host's frame reader (frame_decode.c, which undoes COBS and checks the CRC its own
 * faster way) against the wire's emb_frame_decode_one() on frames of every block length
 * with bytes flipped, cut, or forced to 0xFF: the same frames, payloads and faults. */
static void agrees_with_wire(void)
{
    static uint8_t payload[1100], enc[1200], ref[1200];
    static struct frames f;
    int differ = 0;
    for (unsigned t = 0; t < 3000; t++) {
        size_t len = next() % 1100;
        unsigned mode = t % 3;
        for (size_t i = 0; i < len; i++) {
            uint32_t r = next();
            payload[i] = mode == 0 ? (uint8_t)(r | 1) : mode == 1 ? (uint8_t)(r % 3) : (uint8_t)r;
        }
        size_t n = emb_frame_encode(enc, sizeof enc, (uint8_t)(next() % 17 % 16), payload, len);
        n--; /* without the delimiter */
        switch (t % 5) {
        case 1: enc[next() % n] ^= (uint8_t)(1u << (next() % 8)); break;
        case 2: n -= n > 1 ? 1 + next() % (n - 1) : 0; break;
        case 3: enc[next() % n] = 0xFF; break;
        case 4: enc[0] = (uint8_t)(1 + next() % 255); break;
        default: break;
        }
        for (size_t i = 0; i < n; i++)
            if (enc[i] == 0)
                enc[i] = 0x55; /* a zero would end the frame early */
        uint8_t ch = 0;
        size_t plen = 0;
        enum emb_frame_error want = emb_frame_decode_one(enc, n, ref, &ch, &plen);
        f.n = 0;
        memset(f.errors, 0, sizeof f.errors);
        struct emb_frame_dec *d = emb_frame_dec_new(2048, false, on_frame, on_error, &f);
        emb_frame_dec_feed(d, enc, n);
        emb_frame_dec_feed(d, "", 1);
        bool same = want == EMB_FRAME_OK
                        ? f.n == 1 && f.ch[0] == ch && f.len[0] == plen && !memcmp(f.data[0], ref + 1, plen)
                        : f.n == 0 && f.errors[want] == 1;
        differ += !same;
        emb_frame_dec_free(d);
    }
    ok(differ == 0, "3000 frames, a third damaged: the host's reader finds what emb_frame_decode_one finds");
}

int main(void)
{
    vectors();
    roundtrip();
    agrees_with_wire();
    damage();
    views();
    return emb_test_done();
}
