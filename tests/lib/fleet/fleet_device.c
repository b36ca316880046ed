/* A device of the fleet on the native port: it faults the way it is told, in a function
 * of its own, and its next start saves the crash record the port's fault path left, as a
 * device uploads it. Built twice (fleet_device_a, fleet_device_b) with another firmware
 * version and other code before the faulting functions, so the two builds' addresses and
 * build ids differ and their functions' names do not: one bug across both is one bucket.
 *
 *   fleet_device crash RETAINED KIND   KIND: null (SIGSEGV), div0 (SIGFPE), trap (SIGILL),
 *                                      abort (SIGABRT, raised in the C library)
 *   fleet_device save RETAINED OUT     the next start: saves the record (exit 1: none)
 *   fleet_device frame RETAINED OUT    the same, framed as the device's link sends it: one
 *                                      channel-2 frame (emb_frame_encode)
 */
#define _GNU_SOURCE
#include <emb/crash.h>
#include <emb/frame.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FLEET_FW_VERSION
#define FLEET_FW_VERSION "1.0.0"
#endif

#ifdef FLEET_PADDING
/* The second build's own code, placed before the faulting functions: their addresses move. */
__attribute__((noinline)) int fleet_padding(volatile int *p)
{
    int s = 0;
    for (int i = 0; i < 64; i++)
        s += p[i % 4] * i + (s >> 3);
    return s;
}
#endif

static volatile int *volatile sensor_regs = (volatile int *)16; /* a bad pointer */
static volatile int divisor;

__attribute__((noinline)) static int sensor_read(int reg)
{
    return sensor_regs[reg];
}

__attribute__((noinline)) static int sensor_poll(int reg)
{
    EMB_TRACE_user_event(6u, (uint32_t)reg, 0u);
    return sensor_read(reg) + 1;
}

__attribute__((noinline)) static int average(int sum)
{
    return sum / divisor;
}

__attribute__((noinline)) static int filter_update(int sum)
{
    EMB_TRACE_user_event(7u, (uint32_t)sum, 0u);
    return average(sum) + 1;
}

__attribute__((noinline)) static void config_check(int value)
{
    EMB_TRACE_user_event(8u, (uint32_t)value, 0u);
    if (value != 42)
        __builtin_trap();
}

__attribute__((noinline)) static void config_abort(int value)
{
    EMB_TRACE_user_event(8u, (uint32_t)value, 0u);
    if (value != 42)
        abort();
}

static int start(const char *retained)
{
    struct emb_native_config config = {.mode = EMB_TRACE_MODE_SNAPSHOT, .stream_fd = -1};
    if (emb_native_init(&config) != EMB_OK)
        return -1;
    struct emb_native_crash_config cc = {.retained_path = retained, .fw_version = FLEET_FW_VERSION};
    return emb_native_crash_init(&cc) == EMB_OK ? 0 : -1;
}

static int crash(const char *retained, const char *kind)
{
    if (start(retained) != 0)
        return 2;
    for (uint32_t i = 0; i < 50; i++)
        EMB_TRACE_user_event(1u, i, 0u);
    if (strcmp(kind, "null") == 0)
        return sensor_poll(3);
    if (strcmp(kind, "div0") == 0)
        return filter_update(100);
    if (strcmp(kind, "trap") == 0)
        config_check(7);
    if (strcmp(kind, "abort") == 0)
        config_abort(7);
    fprintf(stderr, "fleet_device: no fault kind %s (null, div0, trap, abort)\n", kind);
    return 2;
}

static uint8_t frame_buf[EMB_FRAME_WIRE_MAX(EMB_FRAME_CRASH_MAX)];

static int save(const char *retained, const char *out, bool framed)
{
    if (start(retained) != 0)
        return 2;
    const uint8_t *record;
    uint32_t length;
    if (emb_crash_record_get(&record, &length) != EMB_OK)
        return 1;
    if (framed) {
        length = (uint32_t)emb_frame_encode(frame_buf, sizeof frame_buf, EMB_FRAME_CH_CRASH, record, length);
        record = frame_buf;
    }
    FILE *f = fopen(out, "wb");
    if (length == 0 || f == NULL || fwrite(record, 1, length, f) != length || fclose(f) != 0)
        return 2;
    emb_crash_record_clear();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "crash") == 0)
        return crash(argv[2], argv[3]);
    if (argc == 4 && (strcmp(argv[1], "save") == 0 || strcmp(argv[1], "frame") == 0))
        return save(argv[2], argv[3], argv[1][0] == 'f');
    fprintf(stderr, "usage: fleet_device crash RETAINED KIND | save|frame RETAINED OUT\n");
    return 2;
}
