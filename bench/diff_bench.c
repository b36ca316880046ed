/* Generates the large captures bench/diff.sh compares: the real library on the native
 * port in window mode with large rings. Two contexts record 100 events per frame in
 * step (main: frame markers and 48 words; link: 50 words between two barriers), so the
 * event count is exact. `--bad FRAME` seeds differences from that frame on: one extra
 * event, one changed word, and five frames whose link packets are 100 us apart.
 *
 *   diff_bench OUT.embt EVENTS [--bad FRAME]
 */
#define _GNU_SOURCE
#include <emb/hooks.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_barrier_t step;
static uint32_t frames, bad = UINT32_MAX;

static void spin_us(uint32_t us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < (long)us * 1000L);
}

static void *link_main(void *arg)
{
    (void)arg;
    emb_native_context_name("link");
    for (uint32_t f = 0; f < frames; f++) {
        pthread_barrier_wait(&step);
        for (uint32_t i = 0; i < 50; i++) {
            if (f >= bad && f < bad + 5)
                spin_us(100);
            EMB_TRACE_user_event(3, f, bad != UINT32_MAX && f == bad + 1 && i == 7 ? 1u : 16384u);
        }
        pthread_barrier_wait(&step);
    }
    emb_native_flush();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: diff_bench OUT.embt EVENTS [--bad FRAME]\n");
        return 2;
    }
    uint64_t events = strtoull(argv[2], NULL, 0);
    if (argc == 5 && !strcmp(argv[3], "--bad"))
        bad = (uint32_t)strtoul(argv[4], NULL, 0);
    frames = (uint32_t)(events / 100u);
    /* 20-byte events, two contexts: each ring holds its half with room to spare */
    uint32_t packets = 1024;
    while ((uint64_t)packets * 1024u < events / 2u * 20u * 5u / 4u)
        packets *= 2;
    char flags[64];
    snprintf(flags, sizeof flags, bad == UINT32_MAX ? "bench" : "bench bad=%u", bad);
    emb_native_set_identity("diff_bench 1", flags, 0);
    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_WINDOW, .ring_packets = packets, .max_contexts = 4,
        .window_frame = 0, .stream_fd = -1,
    };
    if (emb_native_init(&config) != EMB_OK)
        return 1;
    pthread_barrier_init(&step, NULL, 2);
    pthread_t link;
    pthread_create(&link, NULL, link_main, NULL);
    for (uint32_t f = 0; f < frames; f++) {
        emb_frame_start(f);
        for (uint32_t i = 0; i < 48; i++)
            EMB_TRACE_user_event(1, f, i);
        if (f == bad)
            EMB_TRACE_idle_enter();
        pthread_barrier_wait(&step);
        pthread_barrier_wait(&step);
        emb_frame_end(f);
    }
    pthread_join(link, NULL);
    int rc = emb_native_trace_dump(argv[1]) == EMB_OK ? 0 : 1;
    emb_native_shutdown();
    return rc;
}
