/* A control loop traced with a barectf tracer (generated at build time from
 * sensor_barectf.yaml), for the foreign-CTF tests. Two barectf contexts write their
 * packets to two stream files of DIR: `sampler` (cycle_start, then three samples a cycle,
 * with jitter in settle_ns) and `controller` (actuate, every cycle). With SEED_AT >= 0,
 * cycle SEED_AT's actuation has another duty: the difference `emb diff` must name first.
 * The trace's `metadata` is barectf's, copied beside the streams by the test.
 *
 * usage: barectf_sensor DIR CYCLES SEED_AT JITTER */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "barectf.h"

#define PACKET_BYTES 512u

struct stream {
    struct barectf_default_ctx ctx;
    FILE *file;
    uint8_t buf[PACKET_BYTES];
};

static uint64_t clock_ns(void *data)
{
    (void)data;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int backend_full(void *data)
{
    (void)data;
    return 0; /* a file takes every packet */
}

static void open_packet(void *data)
{
    struct stream *s = data;
    barectf_default_open_packet(&s->ctx);
}

static void close_packet(void *data)
{
    struct stream *s = data;
    barectf_default_close_packet(&s->ctx);
    if (fwrite(barectf_packet_buf(&s->ctx), 1, barectf_packet_buf_size(&s->ctx), s->file) !=
        barectf_packet_buf_size(&s->ctx)) {
        perror("barectf_sensor: write");
        exit(1);
    }
}

static int stream_open(struct stream *s, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    s->file = fopen(path, "wb");
    if (s->file == NULL) {
        perror(path);
        return -1;
    }
    struct barectf_platform_callbacks cbs = {
        .default_clock_get_value = clock_ns, .is_backend_full = backend_full,
        .open_packet = open_packet, .close_packet = close_packet};
    barectf_init(&s->ctx, s->buf, PACKET_BYTES, cbs, s);
    open_packet(s);
    return 0;
}

static int stream_close(struct stream *s)
{
    if (barectf_packet_is_open(&s->ctx) && !barectf_packet_is_empty(&s->ctx))
        close_packet(s);
    return fclose(s->file);
}

static unsigned next_random(unsigned *r)
{
    *r = *r * 1103515245u + 12345u;
    return *r >> 16;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: barectf_sensor DIR CYCLES SEED_AT JITTER\n");
        return 2;
    }
    long cycles = atol(argv[2]), seed_at = atol(argv[3]);
    unsigned jitter = (unsigned)strtoul(argv[4], NULL, 10) | 1u;
    struct stream sampler, controller;
    if (stream_open(&sampler, argv[1], "sampler") != 0 || stream_open(&controller, argv[1], "controller") != 0)
        return 1;
    static const char *const units[3] = {"mV", "mA", "degC"};
    for (long c = 0; c < cycles; c++) {
        barectf_default_trace_cycle_start(&sampler.ctx, (uint32_t)c);
        for (uint8_t ch = 0; ch < 3; ch++)
            barectf_default_trace_sample(&sampler.ctx, (uint32_t)c, ch, (int16_t)((c * 37 + ch * 11) % 200 - 100),
                                         units[ch], 800u + next_random(&jitter) % 400u);
        uint16_t duty = (uint16_t)(500 + (c * 13) % 100 + (c == seed_at ? 250 : 0));
        barectf_default_trace_actuate(&controller.ctx, (uint32_t)c, duty);
    }
    return stream_close(&sampler) != 0 || stream_close(&controller) != 0;
}
