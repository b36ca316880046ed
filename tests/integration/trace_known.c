/* Records a known sequence with the real library on the native port and dumps it as a
 * trace stream file, for test_trace_e2e.sh to decode with `emb trace` and check event for
 * event. The sequence (the checker computes the same):
 *
 *   main:    obj_init(queue, 0x51, "known-queue"), then for frame i in 0..frames-1:
 *            frame_start(i), user_event(1, i, 7i+1), msgq_send(0x51, 32, i % 8),
 *            when i % 10 == 0 an interrupt: irq_enter(5), tick(i), irq_exit(5, false),
 *            frame_end(i)
 *   worker:  pipe_write(0x77, k) for k in 0..writes-1
 *
 * usage: trace_known OUT FRAMES WRITES [RING_PACKETS]   (snapshot mode, dumped at the end)
 */
#define _GNU_SOURCE
#include <emb/hooks.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include <stdio.h>
#include <stdlib.h>

static unsigned writes;

static void *worker(void *arg)
{
    (void)arg;
    for (unsigned k = 0; k < writes; k++)
        EMB_TRACE_pipe_write(0x77u, k);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: trace_known OUT FRAMES WRITES [RING_PACKETS]\n");
        return 2;
    }
    unsigned frames = (unsigned)strtoul(argv[2], NULL, 0);
    writes = (unsigned)strtoul(argv[3], NULL, 0);
    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_SNAPSHOT,
        .ring_packets = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 0,
        .stream_fd = -1,
    };
    emb_status st = emb_native_init(&config);
    if (st != EMB_OK) {
        fprintf(stderr, "trace_known: emb_native_init: %s\n", emb_strerror(st));
        return 1;
    }
    struct emb_native_thread t;
    if (emb_native_thread_create(&t, "worker", worker, NULL) != 0) {
        fprintf(stderr, "trace_known: cannot start the worker thread\n");
        return 1;
    }
    EMB_TRACE_obj_init(3u, 0x51u, "known-queue");
    for (unsigned i = 0; i < frames; i++) {
        emb_frame_start(i);
        EMB_TRACE_user_event(1u, i, 7u * i + 1u);
        EMB_TRACE_msgq_send(0x51u, 32u, (uint16_t)(i % 8u));
        if (i % 10u == 0) {
            emb_isr_enter(5u);
            EMB_TRACE_tick(i);
            emb_isr_exit(5u, false);
        }
        emb_frame_end(i);
    }
    emb_native_thread_join(&t, NULL);
    st = emb_native_trace_dump(argv[1]);
    emb_native_shutdown();
    if (st != EMB_OK) {
        fprintf(stderr, "trace_known: dump to %s: %s\n", argv[1], emb_strerror(st));
        return 1;
    }
    return 0;
}
