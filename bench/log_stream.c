/* A large deferred-log stream for the decode benchmark (bench/decode.sh): COUNT records
 * of "sensor %d read %u mV" from the real library, written by the native port to PATH,
 * drained every 512 records so none is dropped; with THREADS, that many threads (each
 * its own context) log COUNT / THREADS records each at once. The ELF is this program.
 *
 * usage: log_stream PATH COUNT [THREADS] */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

EMB_LOG_MODULE_DEFINE(sensor, EMB_LOG_LEVEL_INF);

static unsigned long count;

static void *producer(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < count; i++) {
        EMB_LOG_INF(sensor, "sensor %d read %u mV", (int)(i % 8u), (unsigned)(i * 7u % 5000u));
        if (i % 512u == 511u)
            emb_native_log_flush();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: log_stream PATH COUNT [THREADS]\n");
        return 2;
    }
    unsigned threads = argc == 4 ? (unsigned)strtoul(argv[3], NULL, 0) : 0u;
    pthread_t tid[16];
    if (threads > 16u)
        return 2;
    count = strtoul(argv[2], NULL, 0) / (threads ? threads : 1u);
    struct emb_native_config nc = {.stream_fd = -1};
    struct emb_native_log_config lc = {.path = argv[1], .fd = -1, .ring_bytes = 1u << 16};
    if (emb_native_init(&nc) != EMB_OK || emb_native_log_start(&lc) != EMB_OK)
        return 1;
    if (threads == 0u)
        producer(NULL);
    for (unsigned t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, producer, NULL) != 0)
            return 1;
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    emb_native_log_stop();
    struct emb_native_log_stats st;
    emb_native_log_stats_get(&st);
    emb_native_shutdown();
    if (st.dropped != 0) {
        fprintf(stderr, "log_stream: %llu records dropped\n", (unsigned long long)st.dropped);
        return 1;
    }
    return 0;
}
