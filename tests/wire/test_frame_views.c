/* Framing (src/wire/frame.c, tools/lib/decode/frame_decode.c): the CRC-16 check value, COBS by the
 * textbook examples, and round trips of payloads built to hit every block boundary, fed
 * to the decoder in pieces of every size, with corruption and mid-stream starts. */
#include <emb/frame.h>

#include <stdlib.h>
#include <string.h>

#include "frame_decode.h"
#include "problem.h"
#include "harness.h"

static uint8_t wire[1u << 20];
static size_t wire_len;

static emb_status collect(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    memcpy(wire + wire_len, bytes, len);
    wire_len += len;
    return EMB_OK;
}

static size_t encode(uint8_t channel, const uint8_t *payload, size_t len, size_t piece)
{
    struct emb_frame_encoder enc;
    size_t start = wire_len;
    emb_frame_encode_begin(&enc, collect, NULL, channel);
    for (size_t i = 0; i < len; i += piece)
        emb_frame_encode_put(&enc, payload + i, len - i < piece ? len - i : piece);
    emb_frame_encode_end(&enc);
    return wire_len - start;
}

struct seen {
    uint8_t channel;
    uint8_t payload[70000];
    size_t len;
    uint64_t offset;
    unsigned frames, errors, notices;
    uint64_t problem_offset;
};
static struct seen seen;

static void on_frame(void *arg, const struct emb_frame_view *f)
{
    (void)arg;
    seen.channel = f->channel;
    memcpy(seen.payload, f->payload, f->len);
    seen.len = f->len;
    seen.offset = f->offset;
    seen.frames++;
}

static void on_problem(void *arg, const struct emb_problem *p)
{
    uint64_t offset = (uint64_t)p->offset;
    bool error = p->severity != EMB_NOTE;
    const char *msg = p->message;
    (void)arg;
    (void)msg;
    if (error)
        seen.errors++;
    else
        seen.notices++;
    seen.problem_offset = offset;
}

static void decode(const uint8_t *data, size_t len, size_t piece)
{
    memset(&seen, 0, sizeof seen);
    struct emb_problems problems;
    emb_problems_init_callback(&problems, NULL, on_problem, NULL);
    struct emb_frame_callbacks cb = {on_frame, &problems, NULL};
    struct emb_frame_decoder d;
    emb_frame_decoder_init(&d, 66000, &cb);
    for (size_t i = 0; i < len; i += piece)
        emb_frame_decoder_feed(&d, data + i, len - i < piece ? len - i : piece);
    emb_frame_decoder_finish(&d);
    emb_frame_decoder_free(&d);
}

static void test_crc(void)
{
    ok_eq(emb_crc16(EMB_CRC16_INIT, "123456789", 9), 0x29B1, "CRC-16/IBM-3740 check value");
    ok_eq(emb_crc16(emb_crc16(EMB_CRC16_INIT, "1234", 4), "56789", 5), 0x29B1, "in pieces");
}

static void test_cobs_vectors(void)
{
    /* The examples of Cheshire and Baker's paper, as encoded blocks (no delimiter). */
    static const struct { uint8_t in[8]; size_t n; uint8_t out[10]; size_t m; } v[] = {
        {{0x00}, 1, {0x01, 0x01}, 2},
        {{0x00, 0x00}, 2, {0x01, 0x01, 0x01}, 3},
        {{0x11, 0x22, 0x00, 0x33}, 4, {0x03, 0x11, 0x22, 0x02, 0x33}, 5},
        {{0x11, 0x22, 0x33, 0x44}, 4, {0x05, 0x11, 0x22, 0x33, 0x44}, 5},
        {{0x11, 0x00, 0x00, 0x00}, 4, {0x02, 0x11, 0x01, 0x01, 0x01}, 5},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t out[16];
        long n = emb_cobs_decode(v[i].out, v[i].m, out);
        ok(n == (long)v[i].n && memcmp(out, v[i].in, v[i].n) == 0, "COBS example %zu decodes", i);
    }
    uint8_t out[16];
    static const uint8_t bad1[] = {0x05, 0x11, 0x22};
    static const uint8_t bad2[] = {0x03, 0x11, 0x00};
    ok_eq(emb_cobs_decode(bad1, sizeof bad1, out), -1, "a block longer than the frame is refused");
    ok_eq(emb_cobs_decode(bad2, sizeof bad2, out), -1, "a zero inside a frame is refused");
}

static void test_round_trips(void)
{
    static uint8_t payload[66000];
    static const size_t lengths[] = {0, 1, 2, 251, 252, 253, 254, 255, 256, 507, 508, 509, 1000, 65535};
    static const size_t pieces[] = {1, 3, 254, 4096};
    unsigned good = 0, total = 0, bounded = 0, zero_free = 0;
    for (int pattern = 0; pattern < 4; pattern++) {
        for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
            size_t len = lengths[li];
            for (size_t i = 0; i < len; i++) {
                switch (pattern) {
                case 0: payload[i] = 0; break;                               /* all zeros */
                case 1: payload[i] = (uint8_t)(1u + i % 255u); break;        /* no zeros */
                case 2: payload[i] = (uint8_t)(i % 7u == 0 ? 0 : i); break;  /* some */
                default: payload[i] = (uint8_t)rand(); break;
                }
            }
            for (size_t pi = 0; pi < sizeof pieces / sizeof pieces[0]; pi++) {
                wire_len = 0;
                size_t n = encode((uint8_t)(pattern + 4), payload, len, pieces[pi]);
                bounded += n <= EMB_FRAME_WIRE_MAX(len);
                zero_free += memchr(wire, 0, n - 1u) == NULL && wire[n - 1u] == 0u;
                decode(wire, wire_len, pieces[(pi + 1u) % 4u]);
                total++;
                good += seen.frames == 1 && seen.errors == 0 && seen.len == len &&
                        seen.channel == pattern + 4 && memcmp(seen.payload, payload, len) == 0;
            }
        }
    }
    ok_eq(good, total, "every payload round-trips (%u frames)", total);
    ok_eq(bounded, total, "wire size within EMB_FRAME_WIRE_MAX");
    ok_eq(zero_free, total, "no zero byte but the delimiter");
}

static void test_damage(void)
{
    static uint8_t payload[600];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 13u);
    wire_len = 0;
    encode(0, payload, 100, 100);
    size_t first = wire_len;
    encode(1, payload, 600, 600);
    encode(2, payload, 10, 10);

    static uint8_t copy[4096];
    memcpy(copy, wire, wire_len);
    copy[first + 50] ^= 0x40; /* a bit flip inside the second frame */
    if (copy[first + 50] == 0)
        copy[first + 50] = 1;
    decode(copy, wire_len, 7);
    ok_eq(seen.frames, 2, "a damaged frame is skipped, its neighbours kept");
    ok_eq(seen.errors, 1, "and reported");
    ok_eq(seen.problem_offset, first, "at the damaged frame's offset");
    ok_eq(seen.channel, 2, "the last frame decoded after it");

    decode(wire + 30, wire_len - 30, 5);
    ok_eq(seen.frames, 2, "joined mid-frame: the two frames after the first delimiter");
    ok_eq(seen.errors, 0, "the cut first frame is no error");
    ok_eq(seen.notices, 1, "but a notice");

    decode(wire, wire_len - 5, 64);
    ok_eq(seen.frames, 2, "a cut last frame: the others decode");
    ok_eq(seen.errors, 1, "and the cut is reported");

    static uint8_t junk[5000];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)rand();
    decode(junk, sizeof junk, 333);
    ok_eq(seen.frames, 0, "random bytes hold no frame that passes its CRC");
}

int main(void)
{
    srand(1);
    test_crc();
    test_cobs_vectors();
    test_round_trips();
    test_damage();
    return emb_test_done();
}
