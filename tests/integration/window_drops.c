/* Fires known numbers of events after a trace window closed, on several rings, with the
 * real library on the native port, and dumps the window; test_window_drops.sh checks that
 * every reader counts each of them as dropped. The run, in order:
 *
 *   main's frame 0 arms the window; WORKERS threads each record BEFORE events into it;
 *   main records frames (frame_start, user_event, frame_end) until its ring fills and
 *   closes the window (the event that found it full is dropped: 1); then, with the window closed, main fires AFTER_MAIN
 *   events and each worker fires AFTER events, and from a signal handler on its own thread
 *   (a nested producer) AFTER_SIGNAL more; the workers exit, main dumps.
 *
 * Prints what each context must count as dropped, one "name count" line each, then
 * "total N". usage: window_drops OUT.embt
 */
#define _GNU_SOURCE
#include <emb/hooks.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 3u
#define BEFORE 20u
#define AFTER 57u
#define AFTER_SIGNAL 9u
#define AFTER_MAIN 41u

static pthread_barrier_t recorded; /* every worker has recorded into the window */
static pthread_barrier_t closed;   /* main has closed the window */

static void on_signal(int sig)
{
    (void)sig;
    for (unsigned k = 0; k < AFTER_SIGNAL; k++)
        EMB_TRACE_user_event(3u, k, 0u);
}

static void *worker(void *arg)
{
    uint32_t me = (uint32_t)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "worker%u", me);
    emb_native_context_name(name);
    for (unsigned k = 0; k < BEFORE; k++)
        EMB_TRACE_pipe_write(me, k);
    pthread_barrier_wait(&recorded);
    pthread_barrier_wait(&closed);
    for (unsigned k = 0; k < AFTER; k++)
        EMB_TRACE_pipe_write(me, BEFORE + k);
    raise(SIGUSR1); /* the handler runs on this thread before raise returns */
    return NULL;
}

static bool window_closed(void)
{
    return emb_trace_window_state() == EMB_TRACE_WINDOW_CLOSED;
}

/* Records frames into main's ring until an event finds it full, checking after each
 * event, so that exactly one (the one that closed the window) is lost here. */
static bool fill_window(void)
{
    EMB_TRACE_user_event(1u, 0u, 0u);
    if (window_closed())
        return true;
    emb_frame_end(0);
    for (uint32_t i = 1; i < 100000u; i++) {
        emb_frame_start(i);
        if (window_closed())
            return true;
        EMB_TRACE_user_event(1u, i, 0u);
        if (window_closed())
            return true;
        emb_frame_end(i);
        if (window_closed())
            return true;
    }
    return false;
}

static int fail(const char *what)
{
    fprintf(stderr, "window_drops: %s\n", what);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: window_drops OUT.embt\n");
        return 2;
    }
    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_WINDOW,
        .ring_packets = 4,
        .window_frame = 0,
        .stream_fd = -1,
    };
    if (emb_native_init(&config) != EMB_OK)
        return fail("emb_native_init failed");
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_barrier_init(&recorded, NULL, WORKERS + 1u);
    pthread_barrier_init(&closed, NULL, WORKERS + 1u);
    emb_frame_start(0); /* arms the window */

    /* Plain threads: the port's thread wrappers record events of their own. */
    pthread_t t[WORKERS];
    for (unsigned i = 0; i < WORKERS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
            return fail("cannot start a worker");
    pthread_barrier_wait(&recorded);
    if (!fill_window())
        return fail("the window did not close");
    pthread_barrier_wait(&closed);
    for (unsigned k = 0; k < AFTER_MAIN; k++)
        EMB_TRACE_user_event(2u, k, 0u);
    for (unsigned i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    if (emb_native_trace_dump(argv[1]) != EMB_OK)
        return fail("dump failed");
    emb_native_shutdown();

    printf("main %u\n", 1u + AFTER_MAIN);
    for (unsigned i = 0; i < WORKERS; i++)
        printf("worker%u %u\n", i, AFTER + AFTER_SIGNAL);
    printf("total %u\n", 1u + AFTER_MAIN + WORKERS * (AFTER + AFTER_SIGNAL));
    return 0;
}
