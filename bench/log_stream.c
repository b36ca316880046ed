/* A large deferred-log stream for the decode benchmark (bench/decode.sh): COUNT records
 * of "sensor %d read %u mV" from the real library, written by the native port to PATH,
 * drained every 512 records so none is dropped. The ELF is this program.
 *
 * usage: log_stream PATH COUNT */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <stdio.h>
#include <stdlib.h>

EMB_LOG_MODULE_DEFINE(sensor, EMB_LOG_LEVEL_INF);

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: log_stream PATH COUNT\n");
        return 2;
    }
    unsigned long count = strtoul(argv[2], NULL, 0);
    struct emb_native_config nc = {.stream_fd = -1};
    struct emb_native_log_config lc = {.path = argv[1], .fd = -1, .ring_bytes = 1u << 16};
    if (emb_native_init(&nc) != EMB_OK || emb_native_log_start(&lc) != EMB_OK)
        return 1;
    for (unsigned long i = 0; i < count; i++) {
        EMB_LOG_INF(sensor, "sensor %d read %u mV", (int)(i % 8u), (unsigned)(i * 7u % 5000u));
        if (i % 512u == 511u)
            emb_native_log_flush();
    }
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
