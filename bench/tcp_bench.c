/* The TCP record server under load (bench/transport.sh): THREADS threads record
 * user_event at RATE events per second in all (0: as fast as they can) for SECONDS,
 * streaming through the native port's TCP record server to one client, and prints what
 * was recorded as JSON. With PORTFILE `-` the client is a thread of this program that
 * reads the socket through the host's frame decoder (tools/lib/decode/frame_decode.c) and counts
 * what a reader would miss: packet_seq_num gaps (packets lost) and the packets' running
 * events_discarded (events the producers found no room for); otherwise the port goes to
 * PORTFILE for an outside client (emb capture --tcp), which judges the loss itself.
 *
 * Usage: tcp_bench PORTFILE|- RATE SECONDS THREADS RING_PACKETS
 */
#define _GNU_SOURCE
#include <emb/native.h>
#include <emb/native_link.h>
#include <emb/trace_events.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame_decode.h"

/* ---- The reader: frames from the socket, per-context sequence and discard counts ---- */

struct reader {
    uint16_t port;
    pthread_t thread;
    uint64_t bytes, frames, packets, headers, lost, damaged;
    uint32_t next_seq[256], discarded[256];
    uint8_t seen[256];
};

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct reader *r = arg;
    r->frames++;
    if (ch != 1 || len < 4)
        return;
    if (emb_get_le32(p) == EMB_TSF_MAGIC) {
        r->headers++;
        return;
    }
    if (emb_get_le32(p) != EMB_PKT_MAGIC || len < EMB_PKT_HEADER_SIZE)
        return;
    r->packets++;
    uint32_t ctx = emb_get_le16(p + EMB_PKT_OFF_CONTEXT_ID) & 0xFFu;
    uint32_t seq = emb_get_le32(p + EMB_PKT_OFF_SEQ);
    if (r->seen[ctx] && seq != r->next_seq[ctx])
        r->lost += seq - r->next_seq[ctx];
    else if (!r->seen[ctx])
        r->lost += seq; /* packets before the first one seen */
    r->seen[ctx] = 1;
    r->next_seq[ctx] = seq + 1;
    r->discarded[ctx] = emb_get_le32(p + EMB_PKT_OFF_DISCARDED);
}

#define BENCH_TOKEN "tcp-bench-secret-0123456789"

static void *read_socket(void *arg)
{
    struct reader *r = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(r->port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    static const char hello[] = "EMB-TOKEN " BENCH_TOKEN "\n"; /* served after the secret */
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        write(fd, hello, sizeof hello - 1) != (ssize_t)(sizeof hello - 1)) {
        perror("tcp_bench: connect");
        return NULL;
    }
    struct emb_frame_dec *d = emb_frame_dec_new(1u << 16, false, on_frame, NULL, r);
    static uint8_t buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        r->bytes += (uint64_t)n;
        emb_frame_dec_feed(d, buf, (size_t)n);
    }
    r->damaged = emb_frame_dec_stats(d)->dropped;
    emb_frame_dec_free(d);
    close(fd);
    return NULL;
}

static double rate_per_thread, seconds;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct worker {
    struct emb_native_thread t;
    unsigned long events;
    double elapsed;
};

static void *run(void *arg)
{
    struct worker *w = arg;
    double t0 = now(), end = t0 + seconds;
    unsigned long i = 0;
    for (;;) {
        for (unsigned k = 0; k < 256; k++, i++)
            EMB_TRACE_user_event((uint16_t)i, 7u, (uint32_t)i);
        double t = now();
        if (t >= end)
            break;
        if (rate_per_thread > 0) {
            double due = t0 + (double)i / rate_per_thread;
            if (due > t) {
                struct timespec d = {(time_t)(due - t), (long)((due - t - (double)(time_t)(due - t)) * 1e9)};
                nanosleep(&d, NULL);
            }
        }
    }
    emb_native_flush();
    w->events = i;
    w->elapsed = now() - t0;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: tcp_bench PORTFILE RATE SECONDS THREADS RING_PACKETS\n");
        return 2;
    }
    double rate = atof(argv[2]);
    seconds = atof(argv[3]);
    int threads = atoi(argv[4]);
    rate_per_thread = rate / threads;
    /* TCP with the bench's own secret; a reader outside (emb capture) is given it in a file. */
    struct emb_native_server_config sc = {.tcp = true, .token = BENCH_TOKEN,
                                          .header_period_ms = 1000, .queue_bytes = 64u << 20};
    struct emb_native_server *server = emb_native_server_start(&sc);
    if (server == NULL) {
        perror("tcp_bench: server");
        return 1;
    }
    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_STREAMING,
        .ring_packets = (uint32_t)atoi(argv[5]),
        .stream_fd = -1,
        .stream_period_us = 500,
        .stream_sink = emb_native_server_sink(server),
    };
    emb_native_set_identity("tcp-bench 1", "bench=tcp", 0);
    if (emb_native_init(&config) != EMB_OK) {
        fprintf(stderr, "tcp_bench: emb_native_init failed\n");
        return 1;
    }
    static struct reader rd;
    bool inside = strcmp(argv[1], "-") == 0;
    if (inside) {
        rd.port = emb_native_server_port(server);
        pthread_create(&rd.thread, NULL, read_socket, &rd);
    } else {
        FILE *f = fopen(argv[1], "w");
        fprintf(f, "%u\n", emb_native_server_port(server));
        fclose(f);
    }
    struct emb_native_link_stats st;
    do {
        struct timespec t = {0, 5 * 1000 * 1000};
        nanosleep(&t, NULL);
        emb_native_server_stats(server, &st);
    } while (st.clients == 0);
    struct worker *w = calloc((size_t)threads, sizeof *w);
    for (int i = 0; i < threads; i++)
        emb_native_thread_create(&w[i].t, "producer", run, &w[i]);
    unsigned long events = 0;
    double elapsed = 0;
    for (int i = 0; i < threads; i++) {
        emb_native_thread_join(&w[i].t, NULL);
        events += w[i].events;
        if (w[i].elapsed > elapsed)
            elapsed = w[i].elapsed;
    }
    emb_native_shutdown();
    emb_native_server_stats(server, &st);
    emb_native_server_stop(server);
    uint64_t discarded = 0;
    if (inside) {
        pthread_join(rd.thread, NULL);
        for (int i = 0; i < 256; i++)
            discarded += rd.discarded[i];
        printf("{\"reader\": {\"bytes\": %llu, \"frames\": %llu, \"headers\": %llu, "
               "\"packets\": %llu, \"lost_packets\": %llu, \"discarded_events\": %llu, "
               "\"damaged_frames\": %llu}, ",
               (unsigned long long)rd.bytes, (unsigned long long)rd.frames,
               (unsigned long long)rd.headers, (unsigned long long)rd.packets,
               (unsigned long long)rd.lost, (unsigned long long)discarded,
               (unsigned long long)rd.damaged);
    } else {
        printf("{");
    }
    printf("\"rate\": %.0f, \"threads\": %d, \"events\": %lu, \"seconds\": %.3f, "
           "\"events_per_s\": %.0f, \"frames\": %llu, \"bytes\": %llu, \"server_dropped\": %llu, "
           "\"stalls\": %llu}\n",
           rate, threads, events, elapsed, (double)events / elapsed,
           (unsigned long long)st.frames, (unsigned long long)st.bytes,
           (unsigned long long)st.dropped, (unsigned long long)st.stalls);
    return 0;
}
