/* A live log for `emb log --follow`: logs "ready", waits until the reader shows it has
 * decoded that much (by creating MARKER), then logs COUNT more records and stops.
 *
 * usage: log_follow pipe MARKER COUNT     the stream goes to standard output
 *        log_follow tcp MARKER COUNT      it listens on 127.0.0.1, prints "port N" on
 *                                         standard output, and waits for its reader */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

EMB_LOG_MODULE_DEFINE(follow, EMB_LOG_LEVEL_INF);

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    bool tcp = !strcmp(argv[1], "tcp");
    unsigned count = (unsigned)strtoul(argv[3], NULL, 0);
    struct emb_native_config nc = {.stream_fd = -1};
    if (emb_native_init(&nc) != EMB_OK)
        return 1;
    struct emb_native_log_config lc = {.fd = tcp ? -1 : STDOUT_FILENO, .tcp = tcp,
                                       .hello_period_ms = 200};
    if (emb_native_log_start(&lc) != EMB_OK)
        return 1;
    if (tcp) {
        /* Records logged with no reader connected are drained and discarded: wait for it. */
        printf("port %u\n", emb_native_log_tcp_port());
        fflush(stdout);
        struct emb_native_log_stats st = {0};
        for (int waited = 0; st.clients == 0u && waited < 20000; waited++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            emb_native_log_stats_get(&st);
        }
    }
    EMB_LOG_INF(follow, "ready");
    for (int waited = 0; access(argv[2], F_OK) != 0 && waited < 20000; waited++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    for (unsigned i = 0; i < count; i++) {
        EMB_LOG_INF(follow, "record %u of %u", i + 1, count);
        if (i % 50u == 49u) {
            struct timespec ms = {0, 2000000};
            nanosleep(&ms, NULL);
        }
    }
    EMB_LOG_WRN(follow, "done");
    emb_native_log_stop();
    emb_native_shutdown();
    return 0;
}
