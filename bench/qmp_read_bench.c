/* Reading a running QEMU guest (docs/benchmarks.md, "Reading without halting"): the time
 * of one read of guest RAM per method (QMP's human-monitor-command xp, pmemsave, memsave;
 * qtest's b64read) and size, the guest running all along. QEMU must have been started with
 * `-qmp unix:QMP,server=on,wait=off -qtest unix:QTEST,server=on,wait=off`.
 * Prints one JSON object per method and size: {"method", "bytes", "reads", "ms_avg",
 * "ms_min", "ms_max"}.
 * Usage: qmp_read_bench QMP QTEST ADDR READS */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "hostio.h"
#include "qmp.h"

static void measure(struct emb_qmp *q, const char *name, enum emb_qmp_method m, uint64_t addr,
                    size_t bytes, int reads)
{
    static uint8_t buf[65536];
    double total = 0, lo = 1e9, hi = 0;
    if (emb_qmp_set_method(q, m) != 0)
        return;
    for (int i = 0; i < reads; i++) {
        uint64_t t0 = emb_hostio_now_ns();
        if (emb_qmp_read(q, addr, buf, bytes) != 0) {
            fprintf(stderr, "qmp_read_bench: %s: %s\n", name, emb_qmp_error(q));
            return;
        }
        double ms = (double)(emb_hostio_now_ns() - t0) / 1e6;
        total += ms;
        lo = ms < lo ? ms : lo;
        hi = ms > hi ? ms : hi;
    }
    printf("{\"method\": \"%s\", \"bytes\": %zu, \"reads\": %d, \"ms_avg\": %.4f, \"ms_min\": %.4f, "
           "\"ms_max\": %.4f}\n", name, bytes, reads, total / reads, lo, hi);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: qmp_read_bench QMP QTEST ADDR READS\n");
        return 2;
    }
    char err[512];
    struct emb_qmp *q = emb_qmp_connect(argv[1], argv[2], 5000, err, sizeof err);
    if (!q) {
        fprintf(stderr, "qmp_read_bench: %s\n", err);
        return 1;
    }
    bool running = false;
    /* QEMU started paused (-S): let the guest run, so that every read is of a running one. */
    if (emb_qmp_running(q, &running) != 0 || (!running && !emb_qmp_execute(q, "{\"execute\": \"cont\"}"))) {
        fprintf(stderr, "qmp_read_bench: %s\n", emb_qmp_error(q));
        return 1;
    }
    uint64_t addr = strtoull(argv[3], NULL, 0);
    int reads = atoi(argv[4]);
    static const size_t sizes[] = {4, 64, 1024, 4096, 16384, 65536};
    static const struct {
        const char *name;
        enum emb_qmp_method m;
    } methods[] = {{"xp", EMB_QMP_XP}, {"pmemsave", EMB_QMP_PMEMSAVE}, {"memsave", EMB_QMP_MEMSAVE},
                   {"qtest", EMB_QMP_QTEST}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
            measure(q, methods[i].name, methods[i].m, addr, sizes[s], reads);
    emb_qmp_running(q, &running);
    fprintf(stderr, "qmp_read_bench: the guest %s throughout (%" PRIu64 " STOP events)\n",
            running ? "ran" : "was not running", emb_qmp_event_count(q, "STOP"));
    emb_qmp_close(q);
    return running ? 0 : 1;
}
