/* A barectf context whose packets go to a file (barectf_file_stream.h). */
#define _POSIX_C_SOURCE 200809L
#include "barectf_file_stream.h"

#include <stdlib.h>
#include <time.h>

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
    struct barectf_file_stream *s = data;
    barectf_default_open_packet(&s->ctx);
}

static void close_packet(void *data)
{
    struct barectf_file_stream *s = data;
    barectf_default_close_packet(&s->ctx);
    if (fwrite(barectf_packet_buf(&s->ctx), 1, barectf_packet_buf_size(&s->ctx), s->file) !=
        barectf_packet_buf_size(&s->ctx)) {
        perror("barectf: write");
        exit(1);
    }
}

int barectf_file_stream_open(struct barectf_file_stream *s, const char *dir, const char *name)
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
    barectf_init(&s->ctx, s->buf, BARECTF_FILE_PACKET_BYTES, cbs, s);
    open_packet(s);
    return 0;
}

int barectf_file_stream_close(struct barectf_file_stream *s)
{
    if (barectf_packet_is_open(&s->ctx) && !barectf_packet_is_empty(&s->ctx))
        close_packet(s);
    return fclose(s->file);
}
