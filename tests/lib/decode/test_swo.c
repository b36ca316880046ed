/* The SWO/ITM parser on byte streams built from ARM's documented packet format
 * (ARMv7-M ARM appendix D4): every packet kind, byte-exact encodings, pieces of any size,
 * truncation, reserved headers, broken synchronisation, and the stimulus port demux
 * giving back exactly the bytes a target wrote to ports 0 and 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "swo.h"

struct buf {
    uint8_t b[1 << 20];
    size_t n;
};

static void put(struct buf *o, uint8_t v)
{
    o->b[o->n++] = v;
}

static void sync_packet(struct buf *o)
{
    for (int i = 0; i < 5; i++)
        put(o, 0x00);
    put(o, 0x80);
}

/* Source packet: header = port << 3 | hardware << 2 | size code; payload little-endian. */
static void source(struct buf *o, unsigned port, int hardware, unsigned size, uint32_t v)
{
    unsigned code = size == 1 ? 1 : size == 2 ? 2 : 3;
    put(o, (uint8_t)(port << 3 | (hardware ? 4u : 0u) | code));
    for (unsigned i = 0; i < size; i++)
        put(o, (uint8_t)(v >> (8 * i)));
}

/* Local timestamp format 1: 0b11TC0000 then 7-bit groups, bit 7 set on all but the last. */
static void lts1(struct buf *o, unsigned tc, uint32_t v)
{
    put(o, (uint8_t)(0xC0u | tc << 4));
    do {
        uint8_t g = v & 0x7F;
        v >>= 7;
        put(o, (uint8_t)(g | (v ? 0x80 : 0)));
    } while (v);
}

struct got {
    struct emb_swo_packet p[4096];
    size_t n;
};

static void collect(void *arg, const struct emb_swo_packet *p)
{
    struct got *g = arg;
    if (g->n < 4096)
        g->p[g->n++] = *p;
}

static int same(const struct emb_swo_packet *a, const struct emb_swo_packet *b)
{
    return a->type == b->type && a->port == b->port && a->size == b->size && a->tc == b->tc &&
           a->value == b->value && a->time == b->time && a->offset == b->offset;
}

static void every_kind(void)
{
    static struct buf o;
    o.n = 0;
    sync_packet(&o);                      /* 0 */
    source(&o, 0, 0, 1, 'A');             /* 6: 01 41 */
    source(&o, 1, 0, 4, 0x11223344u);     /* 8: 0B 44 33 22 11 */
    source(&o, 31, 0, 2, 0xBEEF);         /* 13: FA EF BE */
    lts1(&o, 0, 129);                     /* 16: C0 81 01 */
    put(&o, 0x30);                        /* 19: LTS2, 3 */
    put(&o, 0x70);                        /* 20: overflow */
    source(&o, 2, 1, 4, 0x08000123u);     /* 21: 17 23 01 00 08 (PC sample) */
    lts1(&o, 3, 0x0FFFFFFFu);             /* 26: F0 FF FF FF 7F */
    put(&o, 0x94); put(&o, 0x81); put(&o, 0x82); put(&o, 0x83); put(&o, 0x7F); /* 31: GTS1 */
    put(&o, 0xB4); put(&o, 0x85); put(&o, 0x86); put(&o, 0x87); put(&o, 0x08); /* 36: GTS2 */
    put(&o, 0x08 | 0x10);                 /* 41: extension, page 1 */
    put(&o, 0x04);                        /* 42: reserved */
    source(&o, 5, 0, 1, 0x00);            /* 43: a zero payload is not a sync */
    sync_packet(&o);                      /* 45 */
    static struct got g;
    g.n = 0;
    struct emb_swo s;
    emb_swo_init(&s, collect, &g);
    emb_swo_feed(&s, o.b, o.n);
    emb_swo_finish(&s);
    const struct emb_swo_packet want[] = {
        {EMB_SWO_SYNC, 0, 0, 0, 0, 0, 0},
        {EMB_SWO_STIMULUS, 0, 1, 0, 'A', 0, 6},
        {EMB_SWO_STIMULUS, 1, 4, 0, 0x11223344u, 0, 8},
        {EMB_SWO_STIMULUS, 31, 2, 0, 0xBEEF, 0, 13},
        {EMB_SWO_LOCAL_TS, 0, 0, 0, 129, 129, 16},
        {EMB_SWO_LOCAL_TS, 0, 0, 0, 3, 132, 19},
        {EMB_SWO_OVERFLOW, 0, 0, 0, 0, 132, 20},
        {EMB_SWO_HARDWARE, 2, 4, 0, 0x08000123u, 132, 21},
        {EMB_SWO_LOCAL_TS, 0, 0, 3, 0x0FFFFFFFu, 132 + 0x0FFFFFFFull, 26},
        {EMB_SWO_GLOBAL_TS1, 0, 0, 3, 1 | 2 << 7 | 3 << 14 | (uint64_t)0x1F << 21, 132 + 0x0FFFFFFFull, 31},
        {EMB_SWO_GLOBAL_TS2, 0, 0, 0, 5 | 6 << 7 | 7 << 14 | (uint64_t)8 << 21, 132 + 0x0FFFFFFFull, 36},
        {EMB_SWO_EXTENSION, 0, 0, 0, 1, 132 + 0x0FFFFFFFull, 41},
        {EMB_SWO_RESERVED, 0, 0, 0, 0x04, 132 + 0x0FFFFFFFull, 42},
        {EMB_SWO_STIMULUS, 5, 1, 0, 0, 132 + 0x0FFFFFFFull, 43},
        {EMB_SWO_SYNC, 0, 0, 0, 0, 132 + 0x0FFFFFFFull, 45},
    };
    size_t nwant = sizeof want / sizeof want[0];
    ok_eq(g.n, nwant, "every packet kind: %zu packets", nwant);
    for (size_t i = 0; i < nwant && i < g.n; i++)
        if (!same(&g.p[i], &want[i]))
            ok(0, "packet %zu: type %u port %u size %u tc %u value 0x%llx time %llu at %llu", i,
               g.p[i].type, g.p[i].port, g.p[i].size, g.p[i].tc, (unsigned long long)g.p[i].value,
               (unsigned long long)g.p[i].time, (unsigned long long)g.p[i].offset);
    ok(s.stats.syncs == 2 && s.stats.overflows == 1 && s.stats.stimulus[0] == 1 &&
       s.stats.stimulus[1] == 1 && s.stats.stimulus[31] == 1 && s.stats.hardware == 1 &&
       s.stats.timestamps == 5 && s.stats.extensions == 1 && s.stats.reserved == 1 &&
       !s.stats.truncated && s.stats.bytes == o.n, "counts of each kind");

    /* Byte by byte: the same packets. */
    static struct got g2;
    g2.n = 0;
    emb_swo_init(&s, collect, &g2);
    for (size_t i = 0; i < o.n; i++)
        emb_swo_feed(&s, o.b + i, 1);
    int diff = g2.n != g.n;
    for (size_t i = 0; i < g.n && !diff; i++)
        diff = !same(&g.p[i], &g2.p[i]);
    ok(!diff, "fed byte by byte: the same packets");
}

static void damage(void)
{
    struct emb_swo s;
    static struct got g;
    uint8_t cut[] = {0x0B, 0x01, 0x02};
    g.n = 0;
    emb_swo_init(&s, collect, &g);
    emb_swo_feed(&s, cut, sizeof cut);
    emb_swo_finish(&s);
    ok(s.stats.truncated && g.n == 0, "a 4-byte packet cut after 2 bytes is reported truncated");

    uint8_t lts_cut[] = {0x01, 'x', 0xC0, 0x81};
    g.n = 0;
    emb_swo_init(&s, collect, &g);
    emb_swo_feed(&s, lts_cut, sizeof lts_cut);
    emb_swo_finish(&s);
    ok(s.stats.truncated && g.n == 1, "a timestamp cut off: the packet before it survives");

    /* Three zeros then 0x80: too short for a synchronisation packet. */
    uint8_t short_sync[] = {0x00, 0x00, 0x00, 0x80, 0x09, 0x55};
    g.n = 0;
    emb_swo_init(&s, collect, &g);
    emb_swo_feed(&s, short_sync, sizeof short_sync);
    ok(s.stats.bad_sync == 1 && s.stats.reserved == 1 && g.n == 2 && g.p[1].type == EMB_SWO_STIMULUS &&
       g.p[1].port == 1 && g.p[1].value == 0x55, "a short zero run is counted, parsing goes on");

    /* Garbage: every byte value, then a sync, then a known packet is read right. */
    static struct buf o;
    o.n = 0;
    for (unsigned i = 0; i < 256; i++)
        put(&o, (uint8_t)(i * 37 + 11));
    sync_packet(&o);
    source(&o, 3, 0, 2, 0xCAFE);
    g.n = 0;
    emb_swo_init(&s, collect, &g);
    emb_swo_feed(&s, o.b, o.n);
    ok(g.n >= 2 && g.p[g.n - 1].type == EMB_SWO_STIMULUS && g.p[g.n - 1].port == 3 &&
       g.p[g.n - 1].value == 0xCAFE && g.p[g.n - 1].offset == o.n - 3,
       "after garbage, a synchronisation packet realigns the parser");
}

/* ---- The demux: bytes written to ports 0 and 1 come back in order ---- */

struct streams {
    uint8_t port[2][1 << 18];
    size_t n[2];
    unsigned lost[2];
};

static void on_bytes(void *arg, unsigned port, const uint8_t *b, size_t n, bool lost, uint64_t t)
{
    (void)t;
    struct streams *st = arg;
    memcpy(st->port[port] + st->n[port], b, n);
    st->n[port] += n;
    st->lost[port] += lost;
}

static void demux(void)
{
    static uint8_t trace[100000], log[20000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof trace; i++)
        trace[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    for (size_t i = 0; i < sizeof log; i++)
        log[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    /* The target writes the trace to port 1 a word at a time (the tail in 2 and 1 byte
     * writes) and the log to port 0 in bytes, interleaved, with timestamps and syncs. */
    static struct buf o;
    o.n = 0;
    sync_packet(&o);
    size_t ti = 0, li = 0;
    unsigned k = 0;
    while (ti < sizeof trace || li < sizeof log) {
        if (ti < sizeof trace) {
            size_t left = sizeof trace - ti;
            unsigned size = left >= 4 ? 4 : left >= 2 ? 2 : 1;
            uint32_t v = 0;
            for (unsigned i = 0; i < size; i++)
                v |= (uint32_t)trace[ti + i] << (8 * i);
            source(&o, 1, 0, size, v);
            ti += size;
        }
        if (li < sizeof log && k % 5 == 0)
            source(&o, 0, 0, 1, log[li++]);
        if (k % 17 == 0)
            lts1(&o, k % 4, k);
        if (k % 1000 == 999)
            sync_packet(&o);
        if (k % 7 == 0)
            source(&o, 9, 1, 4, k); /* hardware packets are not port bytes */
        k++;
        if (ti >= sizeof trace)
            while (li < sizeof log)
                source(&o, 0, 0, 1, log[li++]);
    }
    static struct streams st;
    memset(&st, 0, sizeof st);
    struct emb_swo_demux d;
    emb_swo_demux_init(&d, 0x3u, on_bytes, &st);
    for (size_t i = 0; i < o.n; i += 4093)
        emb_swo_demux_feed(&d, o.b + i, o.n - i < 4093 ? o.n - i : 4093);
    emb_swo_demux_finish(&d);
    ok(st.n[1] == sizeof trace && !memcmp(st.port[1], trace, sizeof trace),
       "port 1 gives back the %zu trace bytes exactly", sizeof trace);
    ok(st.n[0] == sizeof log && !memcmp(st.port[0], log, sizeof log),
       "port 0 gives back the %zu log bytes exactly", sizeof log);
    ok(st.lost[0] == 0 && st.lost[1] == 0 && !d.swo.stats.truncated && d.swo.stats.reserved == 0,
       "no losses, no reserved headers, no truncation");

    /* An overflow marks the next bytes of every port as following a loss. */
    o.n = 0;
    source(&o, 1, 0, 4, 0x01020304);
    put(&o, 0x70);
    source(&o, 0, 0, 1, 'z');
    source(&o, 1, 0, 4, 0x05060708);
    source(&o, 1, 0, 4, 0x090A0B0C);
    memset(&st, 0, sizeof st);
    emb_swo_demux_init(&d, 0x3u, on_bytes, &st);
    emb_swo_demux_feed(&d, o.b, o.n);
    ok(st.lost[0] == 1 && st.lost[1] == 1 && st.n[1] == 12 && d.swo.stats.overflows == 1,
       "an overflow flags the next chunk of each port");
}

int main(void)
{
    every_kind();
    damage();
    demux();
    return emb_test_done();
}
