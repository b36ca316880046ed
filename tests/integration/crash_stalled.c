/* A streaming consumer that stalls, then a fault: the crash record's flight recorder must
 * hold the events recorded just before the fault, not the ones from when the consumer
 * stopped reading (issue: the flight recorder went stale in streaming mode).
 *
 *   crash_stalled crash RETAINED   streams into a pipe nobody reads (its buffer fills and
 *                                  the stream worker blocks: the consumer has stalled),
 *                                  records user_event(1, i, 0) for i in 0..STALE-1, then
 *                                  the markers user_event(2, k, 0xFEED) for k in 0..9,
 *                                  then faults (SIGSEGV).
 *   crash_stalled save RETAINED OUT  the next start: saves the record the fault left.
 *
 * test_crash_stalled.sh reads OUT with `emb crash --json` and checks, by order, that the
 * record's last events are the ten markers. */
#define _GNU_SOURCE
#include <emb/crash.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STALE 20000u   /* many rings' worth, and more than the pipe holds */
#define MARKERS 10u

static int crash(const char *retained)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    fcntl(fds[1], F_SETPIPE_SZ, 4096); /* the smallest buffer: the worker stalls soon */
    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_STREAMING,
        .ring_packets = 4,
        .stream_fd = fds[1],
        .stream_period_us = 100,
    };
    if (emb_native_init(&config) != EMB_OK)
        return 2;
    struct emb_native_crash_config cc = {.retained_path = retained, .fw_version = "stall"};
    if (emb_native_crash_init(&cc) != EMB_OK)
        return 2;
    for (uint32_t i = 0; i < STALE; i++)
        EMB_TRACE_user_event(1u, i, 0u);
    /* Whatever the worker got through by now, it is blocked on the full pipe for good. */
    usleep(20000);
    for (uint32_t i = 0; i < STALE; i++)
        EMB_TRACE_user_event(1u, STALE + i, 0u);
    for (uint32_t k = 0; k < MARKERS; k++)
        EMB_TRACE_user_event(2u, k, 0xFEEDu);
    volatile uintptr_t bad = 8u; /* volatile: the compiler cannot see the fault coming */
    *(volatile int *)bad = 1;
    return 0;
}

static int save(const char *retained, const char *out)
{
    struct emb_native_config config = {.mode = EMB_TRACE_MODE_SNAPSHOT, .stream_fd = -1};
    if (emb_native_init(&config) != EMB_OK)
        return 2;
    struct emb_native_crash_config cc = {.retained_path = retained, .fw_version = "stall"};
    if (emb_native_crash_init(&cc) != EMB_OK)
        return 2;
    const uint8_t *record;
    uint32_t length;
    if (emb_crash_record_get(&record, &length) != EMB_OK) {
        fprintf(stderr, "crash_stalled: no crash record in %s\n", retained);
        return 1;
    }
    FILE *f = fopen(out, "wb");
    if (f == NULL || fwrite(record, 1, length, f) != length || fclose(f) != 0)
        return 2;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "crash") == 0)
        return crash(argv[2]);
    if (argc == 4 && strcmp(argv[1], "save") == 0)
        return save(argv[2], argv[3]);
    fprintf(stderr, "usage: crash_stalled crash RETAINED | save RETAINED OUT\n");
    return 2;
}
