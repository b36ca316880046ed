/* A log stream of several contexts at once for `emb log`'s merge by time
 * (tests/emb/test_emb_log_merge.sh): THREADS threads, each its own context, log COUNT
 * records each at the same time, draining now and then, so the worker writes their
 * frames interleaved as they were recorded.
 *
 * usage: log_contexts PATH THREADS COUNT */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

EMB_LOG_MODULE_DEFINE(merge, EMB_LOG_LEVEL_INF);

static unsigned long count;

static void *producer(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "producer-%u", id); /* the context's name in the stream */
    pthread_setname_np(pthread_self(), name);
    for (unsigned long i = 0; i < count; i++) {
        EMB_LOG_INF(merge, "thread %u record %lu", id, i);
        if (i % 256u == 255u)
            emb_native_log_flush();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: log_contexts PATH THREADS COUNT\n");
        return 2;
    }
    unsigned threads = (unsigned)strtoul(argv[2], NULL, 0);
    count = strtoul(argv[3], NULL, 0);
    pthread_t tid[16];
    if (threads == 0u || threads > 16u)
        return 2;
    struct emb_native_config nc = {.stream_fd = -1};
    struct emb_native_log_config lc = {.path = argv[1], .fd = -1, .ring_bytes = 1u << 16};
    if (emb_native_init(&nc) != EMB_OK || emb_native_log_start(&lc) != EMB_OK)
        return 1;
    for (unsigned t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, producer, (void *)(uintptr_t)t) != 0)
            return 1;
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    emb_native_log_stop();
    emb_native_shutdown();
    return 0;
}
