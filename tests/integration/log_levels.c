/* Call sites of every level in modules of different compile-time levels, for the
 * compiled-out test (compiled_out.sh): with CONFIG_EMB_LOG_MAX_LEVEL at INF, the DBG sites
 * of `loud`, the INF and DBG sites of `quiet` and every site of `mute` must leave no trace
 * in the image. */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <stdio.h>
#include <string.h>

EMB_LOG_MODULE_DEFINE(loud, EMB_LOG_LEVEL_DBG);
EMB_LOG_MODULE_DEFINE(quiet, EMB_LOG_LEVEL_WRN);
EMB_LOG_MODULE_DEFINE(mute, EMB_LOG_LEVEL_NONE);

static int work(int n, const char *name, const uint8_t *frame)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        sum += i * 3;
        EMB_LOG_ERR(loud, "step %d of %d", i, n);
        EMB_LOG_WRN(loud, "sum %d", sum);
        EMB_LOG_INF(loud, "name %s", name);
        EMB_LOG_DBG(loud, "debug %d %s %f", i, name, sum / 2.0);
        EMB_LOG_HEXDUMP_DBG(loud, frame, 8, "frame");
        EMB_LOG_ERR(quiet, "quiet error %d", i);
        EMB_LOG_WRN(quiet, "quiet warning %d", sum);
        EMB_LOG_INF(quiet, "quiet info %s", name);
        EMB_LOG_DBG(quiet,
                    "quiet debug over %d lines %d",
                    i, sum);
        EMB_LOG_HEXDUMP_INF(quiet, frame, 4, "quiet frame");
        EMB_LOG_ERR(mute, "mute error %d", i);
        EMB_LOG_INF(mute, "mute %s", name);
        EMB_LOG_HEXDUMP_ERR(mute, frame, 2, "mute frame");
    }
    return sum;
}

int main(int argc, char **argv)
{
    (void)argv;
    struct emb_native_config nc = {.stream_fd = -1};
    emb_native_init(&nc);
    struct emb_native_log_config lc = {.path = "/dev/null", .fd = -1};
    emb_native_log_start(&lc);
    uint8_t frame[8];
    memset(frame, argc, sizeof frame);
    int r = work(argc * 10, "levels", frame);
    emb_native_log_stop();
    emb_native_shutdown();
    printf("%d\n", r);
    return 0;
}
