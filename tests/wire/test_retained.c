/* The retained ring transport: attach on garbage and on damaged headers, frames kept
 * oldest first through many wraps with the oldest dropped for room (counted), a frame cut
 * by a reset ended on the next attach, a frame longer than the ring lost, clear, and a
 * reset simulated after every single byte of a long run: each image attaches and decodes
 * to whole, consecutive frames with at most the cut one damaged. The host reader
 * (retained_host.h) must see the same bytes, in either byte order. */
#include <stdlib.h>
#include <string.h>

#include <emb/frame.h>
#include <emb/retained.h>

#include "frame_decode.h"
#include "harness.h"
#include "retained_host.h"

#define REGION 2048u

static _Alignas(8) uint8_t region[REGION];
static _Alignas(8) uint8_t image[REGION];

struct got {
    long first, last;   /* sequence numbers of the first and last frame */
    long n;
    int gaps;           /* a frame that does not follow the one before */
    unsigned errors;    /* damaged frames */
    unsigned big;       /* frames of the 'B' payload */
};

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct got *g = arg;
    if (ch == 5 && len > 0 && p[0] == 'B') {
        g->big++;
        return;
    }
    char text[32];
    if (ch != 0 || len == 0 || len >= sizeof text) {
        g->gaps++;
        return;
    }
    memcpy(text, p, len);
    text[len] = '\0';
    long seq = strtol(text + 4, NULL, 10);
    if (g->n > 0 && seq != g->last + 1)
        g->gaps++;
    if (g->n == 0)
        g->first = seq;
    g->last = seq;
    g->n++;
}

static void on_error(void *arg, enum emb_frame_error err, uint64_t off, size_t bytes)
{
    (void)err;
    (void)off;
    (void)bytes;
    ((struct got *)arg)->errors++;
}

struct buf {
    uint8_t b[REGION];
    size_t n;
};

static emb_status collect(void *arg, const uint8_t *p, uint32_t n)
{
    struct buf *b = arg;
    memcpy(b->b + b->n, p, n);
    b->n += n;
    return EMB_OK;
}

/* Decodes what the ring at `mem` holds, through emb_retained_read and through the host
 * reader, which must agree byte for byte. */
static struct got decode(const uint8_t *mem, int *agree)
{
    static struct buf a;
    static uint8_t h[REGION];
    a.n = 0;
    emb_retained_read((const struct emb_retained_ring *)mem, collect, &a);
    struct emb_retained_view v;
    *agree = emb_retained_find(mem, REGION, 0, &v, NULL, 0) == 0 && v.offset == 0 &&
             v.pending == a.n;
    if (*agree) {
        emb_retained_copy(mem, &v, h);
        *agree = memcmp(h, a.b, a.n) == 0;
    }
    struct got g = {.last = -1};
    struct emb_frame_dec *d = emb_frame_dec_new(4096, false, on_frame, on_error, &g);
    emb_frame_dec_feed(d, a.b, a.n);
    emb_frame_dec_finish(d);
    emb_frame_dec_free(d);
    return g;
}

static void put(struct emb_retained_ring *r, long seq)
{
    char text[32];
    int n = snprintf(text, sizeof text, "rec %ld%.*s", seq, (int)(seq % 7) * 3, "-------------------------");
    emb_retained_put_frame(r, 0, text, (size_t)n);
}

static void basics(void)
{
    struct emb_retained_info info;
    ok_eq(emb_retained_attach(region, 64, &info), EMB_E_INVALID, "a region too small is refused");
    ok_eq(emb_retained_attach(region + 1, 1024, &info), EMB_E_INVALID, "an unaligned region is refused");
    for (unsigned i = 0; i < REGION; i++)
        region[i] = (uint8_t)(i * 37u + 11u);
    ok(emb_retained_attach(region, REGION, &info) == EMB_OK && !info.intact && info.bytes == 0,
       "garbage: initialised, empty");
    struct emb_retained_ring *r = (struct emb_retained_ring *)region;
    ok(r->magic == EMB_RETAINED_MAGIC && r->size == REGION - EMB_RETAINED_HEADER_SIZE,
       "header written, magic last");
    int agree;
    struct got g = decode(region, &agree);
    ok(g.n == 0 && g.errors == 0 && agree, "nothing to read");

    /* Many wraps: the newest frames, consecutive, the rest dropped and counted. */
    for (long i = 0; i < 1000; i++)
        put(r, i);
    g = decode(region, &agree);
    ok(g.n > 20 && g.last == 999 && g.gaps == 0 && g.errors == 0 && agree,
       "after wrapping: %ld frames kept, consecutive, ending with the newest", g.n);
    ok_eq(r->dropped + (unsigned long)g.n, 1000, "kept + dropped = written");
    ok(emb_retained_pending(r) <= r->size - 1u, "one byte stays free");

    /* A reset in the middle of a frame longer than a COBS block: the next attach ends it. */
    struct emb_frame_encoder enc;
    uint8_t payload[600];
    memset(payload, 'x', sizeof payload);
    emb_frame_encode_begin(&enc, emb_retained_write, r, 0);
    emb_frame_encode_put(&enc, payload, sizeof payload);
    ok(emb_retained_attach(region, REGION, &info) == EMB_OK && info.intact && info.cut == 1 &&
       info.starts == 1, "reset mid-frame: intact, one frame cut, one start");
    g = decode(region, &agree);
    ok(g.last == 999 && g.gaps == 0 && g.errors == 1 && agree,
       "the cut frame alone is damaged (%u), the frames before it whole", g.errors);
    put(r, 1000);
    g = decode(region, &agree);
    ok(g.last == 1000 && g.gaps == 0 && g.errors == 1, "writing goes on after the attach");

    /* A frame longer than the ring is lost; the frames after it are kept. */
    static uint8_t huge[3000];
    memset(huge, 'B', sizeof huge);
    emb_retained_put_frame(r, 5, huge, sizeof huge);
    ok_eq(r->lost, 1, "a frame longer than the ring: lost, counted");
    for (long i = 2000; i < 2005; i++)
        put(r, i);
    g = decode(region, &agree);
    ok(g.first == 2000 && g.last == 2004 && g.gaps == 0 && g.errors == 0 && g.big == 0 && agree,
       "after it, the next frames (%ld..%ld)", g.first, g.last);
    /* A big frame that fits drops the older ones. */
    uint32_t dropped = r->dropped;
    emb_retained_put_frame(r, 5, huge, 1960);
    put(r, 2005);
    g = decode(region, &agree);
    ok(g.big == 1 && g.last == 2005 && g.gaps == 0 && g.errors == 0 && r->dropped > dropped,
       "a big frame that fits is kept, older ones dropped for it (%ld frames besides; big %u "
       "last %ld gaps %d errors %u dropped %u)", g.n, g.big, g.last, g.gaps, g.errors,
       r->dropped - dropped);

    emb_retained_clear(r);
    ok(emb_retained_pending(r) == 0 && r->dropped == 0 && r->lost == 0 && r->cut == 0,
       "clear empties the ring and its counts");
    emb_retained_attach(region, REGION, &info);
    ok(info.intact && info.bytes == 0 && info.starts == 2, "a cleared ring stays intact");

    /* Damaged headers start afresh; the host reader says why it refuses. */
    char why[200];
    struct emb_retained_view v;
    r->head = r->size + 5u;
    ok(emb_retained_find(region, REGION, 0, &v, why, sizeof why) != 0 &&
       strstr(why, "head or tail beyond") != NULL, "host: %s", why);
    emb_retained_attach(region, REGION, &info);
    ok(!info.intact && r->head == 0 && r->tail == 0, "head beyond the data area: reinitialised");
    r->size = 0x7FFFFFF0u;
    ok(emb_retained_find(region, REGION, 0, &v, why, sizeof why) != 0 &&
       strstr(why, "beyond the image") != NULL, "host: %s", why);
    emb_retained_attach(region, REGION, &info);
    ok(!info.intact, "another size: reinitialised");
    r->version = 9;
    emb_retained_attach(region, REGION, &info);
    ok(!info.intact && r->version == EMB_RETAINED_VERSION, "another version: reinitialised");
    memset(image, 0, sizeof image);
    ok(emb_retained_find(image, sizeof image, 0, &v, why, sizeof why) != 0 &&
       strstr(why, "no retained ring") != NULL, "host, no ring: %s", why);

    /* A big-endian target's ring, found at an offset in a larger dump. */
    for (long i = 0; i < 10; i++)
        put(r, i);
    static uint8_t dump[REGION + 256];
    memset(dump, 0xEE, sizeof dump);
    memcpy(dump + 128, region, REGION);
    for (unsigned f = 0; f < EMB_RETAINED_HEADER_SIZE; f += 4) {
        uint8_t *p = dump + 128 + f;
        if (f == 4) { /* two u16 */
            uint8_t t = p[0]; p[0] = p[1]; p[1] = t;
            t = p[2]; p[2] = p[3]; p[3] = t;
        } else {
            uint8_t t = p[0]; p[0] = p[3]; p[3] = t;
            t = p[1]; p[1] = p[2]; p[2] = t;
        }
    }
    ok(emb_retained_find(dump, sizeof dump, 0, &v, NULL, 0) == 0 && v.offset == 128 &&
       v.big_endian && v.pending == emb_retained_pending(r), "a big-endian ring at offset 128");
}

/* A reset after every byte: the image left then must attach and decode cleanly. */
static void reset_anywhere(void)
{
    struct emb_retained_info info;
    memset(region, 0, sizeof region);
    emb_retained_attach(region, 512, &info);
    struct emb_retained_ring *r = (struct emb_retained_ring *)region;
    static uint8_t wire[EMB_FRAME_WIRE_MAX(64)];
    int bad = 0, checked = 0;
    long seq = 0;
    for (; seq < 300; seq++) {
        char text[40];
        int n = snprintf(text, sizeof text, "rec %ld%.*s", seq, (int)(seq % 11) * 2, "......................");
        size_t w = emb_frame_encode(wire, sizeof wire, 0, text, (size_t)n);
        for (size_t i = 0; i < w; i++) {
            emb_retained_write(r, wire + i, 1);
            memcpy(image, region, 512);
            struct emb_retained_info ii;
            emb_retained_attach(image, 512, &ii);
            int agree;
            memset(image + 512, 0, REGION - 512);
            struct got g = decode(image, &agree);
            /* Only the delimiter missing: the attach ends the frame, which is whole. */
            bool cut_now = i + 2 < w;
            checked++;
            if (!ii.intact || g.gaps || g.errors != (cut_now ? 1u : 0u) ||
                g.last != (cut_now ? seq - 1 : seq)) {
                if (bad < 5)
                    diag("seq %ld byte %zu of %zu: intact %d gaps %d errors %u last %ld", seq, i,
                         w, ii.intact, g.gaps, g.errors, g.last);
                bad++;
            }
        }
    }
    ok(bad == 0, "a reset after any of %d bytes: intact, whole frames, the cut one alone damaged "
       "(%d bad)", checked, bad);
}

int main(void)
{
    basics();
    reset_anywhere();
    return emb_test_done();
}
