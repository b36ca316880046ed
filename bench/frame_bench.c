/* Frame and SWO codec figures for docs/benchmarks.md ("Transports") (bench/transport.sh):
 *
 *   - wire bytes per payload byte of frames (emb/frame.h) for trace packets (256 B to
 *     4 KiB) and small log records (4 to 64 bytes), over random payloads (worst case for
 *     COBS: few zeros) and over real trace packets (many zeros);
 *   - encode (one pass and streaming) and host decode speed, MB of payload per second;
 *   - SWO/ITM parse and demux speed, MB of SWO bytes per second.
 *
 * Usage: frame_bench [TRACE.embt]   (prints a JSON document)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <emb/frame.h>

#include "frame_decode.h"
#include "swo.h"

static uint32_t rng = 0x9E3779B9u;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t sink_bytes;
static emb_status sink(void *arg, const uint8_t *b, uint32_t n)
{
    (void)arg;
    (void)b;
    sink_bytes += n;
    return EMB_OK;
}

static uint64_t got_frames, got_bytes;
static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)arg;
    (void)ch;
    (void)p;
    (void)off;
    got_frames++;
    got_bytes += len;
}

static uint64_t swo_bytes;
static void on_port(void *arg, unsigned port, const uint8_t *b, size_t n, bool lost, uint64_t t)
{
    (void)arg;
    (void)port;
    (void)b;
    (void)lost;
    (void)t;
    swo_bytes += n;
}

/* Overhead and speed for frames of `len` payload bytes taken from `src`. */
static void frames(const char *kind, const uint8_t *src, size_t src_len, size_t len, int first)
{
    size_t count = (64u << 20) / (len + 8u);
    size_t cap = count * EMB_FRAME_WIRE_MAX(len);
    uint8_t *wire = malloc(cap);
    size_t n = 0;
    double t0 = now();
    for (size_t i = 0; i < count; i++) {
        size_t at = src_len > len ? (i * 7919u * 64u) % (src_len - len) : 0;
        n += emb_frame_encode(wire + n, cap - n, 1, src + at, len);
    }
    double t_enc = now() - t0;
    /* Streaming, the payload in pieces of 100 bytes. */
    sink_bytes = 0;
    t0 = now();
    for (size_t i = 0; i < count; i++) {
        size_t at = src_len > len ? (i * 7919u * 64u) % (src_len - len) : 0;
        struct emb_frame_encoder e;
        emb_frame_encode_begin(&e, sink, NULL, 1);
        for (size_t k = 0; k < len; k += 100)
            emb_frame_encode_put(&e, src + at + k, len - k < 100 ? len - k : 100);
        emb_frame_encode_end(&e);
    }
    double t_stream = now() - t0;
    got_frames = got_bytes = 0;
    struct emb_frame_dec *d = emb_frame_dec_new(len + 16, false, on_frame, NULL, NULL);
    t0 = now();
    for (size_t i = 0; i < n; i += 65536)
        emb_frame_dec_feed(d, wire + i, n - i < 65536 ? n - i : 65536);
    double t_dec = now() - t0;
    emb_frame_dec_free(d);
    double payload = (double)count * (double)len;
    printf("%s    {\"kind\": \"%s\", \"payload\": %zu, \"wire_per_payload\": %.4f, "
           "\"overhead_pct\": %.2f, \"encode_mb_s\": %.0f, \"stream_encode_mb_s\": %.0f, "
           "\"decode_mb_s\": %.0f, \"decoded_ok\": %s}",
           first ? "" : ",\n", kind, len, (double)n / payload, ((double)n / payload - 1.0) * 100.0,
           payload / t_enc / 1e6, payload / t_stream / 1e6, payload / t_dec / 1e6,
           got_frames == count && got_bytes == (uint64_t)payload && sink_bytes == n ? "true" : "false");
    free(wire);
}

int main(int argc, char **argv)
{
    size_t rnd_len = 1u << 20;
    uint8_t *rnd = malloc(rnd_len);
    for (size_t i = 0; i < rnd_len; i++)
        rnd[i] = (uint8_t)next();
    uint8_t *trace = NULL;
    size_t trace_len = 0;
    if (argc > 1) {
        FILE *f = fopen(argv[1], "rb");
        if (f == NULL) {
            perror(argv[1]);
            return 1;
        }
        trace = malloc(64u << 20);
        trace_len = fread(trace, 1, 64u << 20, f);
        fclose(f);
    }
    printf("{\n  \"frames\": [\n");
    static const size_t packets[] = {256, 1024, 4096};
    static const size_t records[] = {4, 8, 12, 16, 24, 32, 64};
    int first = 1;
    for (size_t i = 0; i < sizeof packets / sizeof packets[0]; i++, first = 0)
        frames("trace packet, random bytes", rnd, rnd_len, packets[i], first);
    if (trace_len > 8192)
        for (size_t i = 0; i < sizeof packets / sizeof packets[0]; i++)
            frames("trace packet, real trace", trace, trace_len, packets[i], 0);
    for (size_t i = 0; i < sizeof records / sizeof records[0]; i++)
        frames("log record, random bytes", rnd, rnd_len, records[i], 0);
    printf("\n  ],\n");

    /* SWO: the random bytes as 4-byte stimulus packets on port 1, a sync every 4 KiB. */
    size_t swo_cap = rnd_len / 4u * 5u + rnd_len / 4096u * 8u + 16u, sn = 0;
    uint8_t *swo = malloc(swo_cap);
    for (size_t i = 0; i < rnd_len; i += 4) {
        if (i % 4096u == 0) {
            memset(swo + sn, 0, 5);
            swo[sn + 5] = 0x80;
            sn += 6;
        }
        swo[sn++] = 0x0B;
        memcpy(swo + sn, rnd + i, 4);
        sn += 4;
    }
    struct emb_swo_demux dm;
    emb_swo_demux_init(&dm, 0x3u, on_port, NULL);
    int rounds = 64;
    swo_bytes = 0;
    double t0 = now();
    for (int r = 0; r < rounds; r++)
        emb_swo_demux_feed(&dm, swo, sn);
    double t = now() - t0;
    printf("  \"swo\": {\"swo_mb_s\": %.0f, \"payload_mb_s\": %.0f, \"packets\": %llu, "
           "\"decoded_ok\": %s}\n}\n",
           (double)sn * rounds / t / 1e6, (double)swo_bytes / t / 1e6,
           (unsigned long long)dm.swo.stats.packets,
           swo_bytes == (uint64_t)rnd_len * (uint64_t)rounds ? "true" : "false");
    free(swo);
    free(rnd);
    free(trace);
    return 0;
}
