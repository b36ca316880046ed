/* libFuzzer: the frame decoder on arbitrary bytes, split at a point the input chooses;
 * and the encoders on the input as a payload, which must decode back to it exactly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <emb/frame.h>

#include "frame_decode.h"

static const uint8_t *want;
static size_t want_len;
static int seen;

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)arg;
    (void)off;
    if (want != NULL) {
        if (ch != 5 || len != want_len || (len && memcmp(p, want, len)))
            abort();
        seen++;
    }
}

static emb_status sink(void *arg, const uint8_t *b, uint32_t n)
{
    struct emb_frame_dec *d = arg;
    emb_frame_dec_feed(d, b, n);
    return EMB_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    want = NULL;
    struct emb_frame_dec *d = emb_frame_dec_new(512, size > 0 && (data[0] & 1), on_frame, NULL, NULL);
    size_t cut = size > 1 ? data[1] % size : 0;
    emb_frame_dec_feed(d, data, cut);
    emb_frame_dec_feed(d, data + cut, size - cut);
    emb_frame_dec_finish(d);
    emb_frame_dec_free(d);

    want = data;
    want_len = size;
    seen = 0;
    d = emb_frame_dec_new(size + 16, false, on_frame, NULL, NULL);
    size_t cap = EMB_FRAME_WIRE_MAX(size);
    uint8_t *enc = malloc(cap);
    size_t n = emb_frame_encode(enc, cap, 5, data, size);
    if (n == 0)
        abort();
    emb_frame_dec_feed(d, enc, n);
    struct emb_frame_encoder e;
    emb_frame_encode_begin(&e, sink, d, 5);
    emb_frame_encode_put(&e, data, cut);
    emb_frame_encode_put(&e, data + cut, size - cut);
    emb_frame_encode_end(&e);
    if (seen != 2)
        abort();
    free(enc);
    emb_frame_dec_free(d);
    return 0;
}
