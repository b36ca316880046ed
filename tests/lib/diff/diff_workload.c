/* A small native workload for emb diff's corpus (tests/emb/test_diff_corpus.sh): the real
 * library on the native port, three threads, frames paced on absolute deadlines, and noise
 * seeded differently in every run. Each option seeds one difference into a run.
 *
 *   main     the frame loop: frame_start, user_event 1, work (100 us + noise), user_event 2,
 *            frame_end, idle_enter, hands the frame to the worker and the sampler, sleeps
 *            to the next 2 ms deadline, idle_exit
 *   worker   user_events only: per frame, user_event 10..17 with gaps of 3 us + noise,
 *            running beside main
 *   sampler  per frame, user_event 30 at a random delay that lets it cross main's and the
 *            worker's events and the next frame marker: cross-context jitter
 *
 * Each thread sleeps most of each frame; --realtime runs them SCHED_FIFO (where allowed)
 * so a loaded host stretches them less.
 *
 * The trace is kept in window mode (armed at --arm, one-shot rings) and dumped at the end.
 * When a ring filled and closed the window, the frame it happened in is printed
 * ("window closed in frame F": the last frame marker recorded before it), as the library
 * saw it (emb_trace_window_state).
 */
#define _GNU_SOURCE
#include <emb/hooks.h>
#include <emb/native.h>
#include <emb/trace.h>
#include <emb/trace_events.h>

#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NONE UINT32_MAX
#define WORKER_EVENTS 8u
#define PERIOD_US 2000u /* slack for a loaded host: the loop is on time again soon after a stall */

static struct {
    uint32_t seed, frames, arm, ring_packets;
    uint32_t reorder, missing;        /* worker: frame where events 11 and 12 swap / 15 is skipped */
    uint32_t shift, shift_us;         /* from this frame on, work lasts shift_us longer */
    uint32_t gap_shift, gap_us;       /* from this frame on, the worker's gap before 13 grows */
    uint32_t outlier, outlier_us;     /* this frame only, work lasts outlier_us longer */
    uint32_t burst;                   /* worker events per frame repeated this many times */
    int realtime;                     /* SCHED_FIFO, as firmware threads have priorities */
    const char *out;
} opt = {.frames = 170, .arm = 20, .ring_packets = 256, .reorder = NONE, .missing = NONE,
         .shift = NONE, .gap_shift = NONE, .gap_us = 40, .outlier = NONE, .outlier_us = 3000,
         .burst = 1, .out = "workload.embt"};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static uint32_t handed_upto; /* frames handed to the worker and the sampler */
static uint32_t ready;       /* threads in their loop: their start-up is recorded before the window */

static void report_ready(void)
{
    pthread_mutex_lock(&lock);
    ready++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}
static int running = 1;

/* xorshift32 per thread, seeded from --seed: noise that differs in every run. */
static uint32_t noise(uint32_t *s, uint32_t range)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return range ? *s % range : 0;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void busy_us(uint32_t us)
{
    uint64_t end = now_ns() + (uint64_t)us * 1000u;
    while (now_ns() < end) {
    }
}

static void sleep_until(struct timespec *next, uint32_t period_us)
{
    next->tv_nsec += (long)period_us * 1000L;
    while (next->tv_nsec >= 1000000000L) {
        next->tv_nsec -= 1000000000L;
        next->tv_sec++;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) != 0) {
    }
}

/* Each frame main hands out, in order, however late it runs: the same events in every
 * run (frames before the window are not recorded, so none is half inside it). */
static void *worker_main(void *arg)
{
    (void)arg;
    uint32_t rng = opt.seed * 2654435761u + 2u;
    report_ready();
    for (uint32_t f = 0;; f++) {
        pthread_mutex_lock(&lock);
        while (running && handed_upto <= f)
            pthread_cond_wait(&cond, &lock);
        int go = handed_upto > f;
        pthread_mutex_unlock(&lock);
        if (!go)
            break;
        if (f < opt.arm)
            continue;
        for (uint32_t r = 0; r < opt.burst; r++)
            for (uint32_t i = 0; i < WORKER_EVENTS; i++) {
                uint32_t k = i; /* the event's place; --reorder records the second and third swapped */
                if (f == opt.reorder && (i == 1u || i == 2u))
                    k = 3u - i;
                uint32_t id = 10u + k;
                if (f == opt.missing && k == 5u)
                    continue;
                busy_us(3u + noise(&rng, 3u) +
                        (k == 3u && f >= opt.gap_shift ? opt.gap_us : 0u));
                EMB_TRACE_user_event(id, f, k);
            }
    }
    return NULL;
}

/* Once per frame, a random 0..1800 us after main handed it the frame (its own noise and
 * the host's): its event falls before, among or after main's and the worker's, and
 * sometimes in the next epoch. It never holds main up. */

static void *sampler_main(void *arg)
{
    (void)arg;
    uint32_t rng = opt.seed * 2246822519u + 3u;
    report_ready();
    for (uint32_t f = 0;; f++) {
        pthread_mutex_lock(&lock);
        while (running && handed_upto <= f)
            pthread_cond_wait(&cond, &lock);
        int go = handed_upto > f;
        pthread_mutex_unlock(&lock);
        if (!go)
            break;
        struct timespec d = {0, (long)noise(&rng, 1800u) * 1000L};
        nanosleep(&d, NULL);
        if (f >= opt.arm) /* frames before the window are not sampled: none half inside */
            EMB_TRACE_user_event(30, f, 0);
    }
    return NULL;
}

static int parse(int argc, char **argv)
{
    static const struct option o[] = {
        {"seed", 1, NULL, 's'},    {"frames", 1, NULL, 'n'},    {"arm", 1, NULL, 'a'},
        {"ring-packets", 1, NULL, 'p'}, {"reorder", 1, NULL, 'r'}, {"missing", 1, NULL, 'm'},
        {"shift", 1, NULL, 'S'},   {"shift-us", 1, NULL, 'U'},  {"gap-shift", 1, NULL, 'g'},
        {"gap-us", 1, NULL, 'G'},  {"outlier", 1, NULL, 'O'},   {"outlier-us", 1, NULL, 'P'},
        {"burst", 1, NULL, 'b'},   {"realtime", 0, NULL, 'R'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:", o, NULL)) != -1) {
        uint32_t v = optarg ? (uint32_t)strtoul(optarg, NULL, 0) : 0;
        switch (c) {
        case 's': opt.seed = v; break;
        case 'n': opt.frames = v; break;
        case 'a': opt.arm = v; break;
        case 'p': opt.ring_packets = v; break;
        case 'r': opt.reorder = v; break;
        case 'm': opt.missing = v; break;
        case 'S': opt.shift = v; break;
        case 'U': opt.shift_us = v; break;
        case 'g': opt.gap_shift = v; break;
        case 'G': opt.gap_us = v; break;
        case 'O': opt.outlier = v; break;
        case 'P': opt.outlier_us = v; break;
        case 'b': opt.burst = v ? v : 1; break;
        case 'R': opt.realtime = 1; break;
        case 'o': opt.out = optarg; break;
        default:
            fprintf(stderr, "usage: diff_workload [--seed N] [--frames N] [--arm F] [--ring-packets N] "
                            "[--reorder F] [--missing F] [--shift F --shift-us U] [--gap-shift F "
                            "[--gap-us U]] [--outlier F [--outlier-us U]] [--burst N] -o OUT\n");
            return -1;
        }
    }
    return optind == argc ? 0 : -1;
}

/* The flags that change what the program does, so a seeded run never claims the
 * configuration of a plain one (the seed is noise, not configuration). */
static void stamp_identity(void)
{
    char flags[160];
    snprintf(flags, sizeof flags, "ring=%u burst=%u reorder=%d missing=%d shift=%d+%u gap=%d+%u "
             "outlier=%d+%u", opt.ring_packets, opt.burst, (int)opt.reorder, (int)opt.missing,
             (int)opt.shift, opt.shift_us, (int)opt.gap_shift, opt.gap_us, (int)opt.outlier,
             opt.outlier_us);
    emb_native_set_identity("diff-workload 1", flags, 0);
}

int main(int argc, char **argv)
{
    if (parse(argc, argv) != 0)
        return 2;
    stamp_identity();
    /* --realtime: the threads (which inherit it) preempt the host's other work, as a
     * firmware's prioritised threads would; the seeded noise and the cross-context jitter
     * remain. Where the system refuses, the run goes on at normal priority and says so. */
    if (opt.realtime) {
        struct sched_param sp = {.sched_priority = 10};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            perror("diff_workload: --realtime refused, running at normal priority");
    }
    struct emb_native_config config = {.mode = EMB_TRACE_MODE_WINDOW,
                                       .ring_packets = opt.ring_packets,
                                       .window_frame = opt.arm,
                                       .stream_fd = -1};
    emb_status st = emb_native_init(&config);
    if (st != EMB_OK) {
        fprintf(stderr, "diff_workload: %s\n", emb_strerror(st));
        return 1;
    }
    struct emb_native_thread worker, sampler;
    emb_native_thread_create(&worker, "worker", worker_main, NULL);
    emb_native_thread_create(&sampler, "sampler", sampler_main, NULL);
    pthread_mutex_lock(&lock);
    while (ready < 2u)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    uint32_t rng = opt.seed * 3266489917u + 1u;
    uint32_t last_open = NONE;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (uint32_t f = 0; f < opt.frames; f++) {
        /* the last frame whose marker was recorded before a ring filled: where the loss is */
        if (emb_trace_window_state() != EMB_TRACE_WINDOW_CLOSED)
            last_open = f;
        emb_frame_start(f);
        EMB_TRACE_user_event(1, f, 0);
        uint32_t work = 100u + noise(&rng, 20u);
        if (f >= opt.shift)
            work += opt.shift_us;
        if (f == opt.outlier)
            work += opt.outlier_us;
        busy_us(work);
        EMB_TRACE_user_event(2, f, 0);
        emb_frame_end(f);
        EMB_TRACE_idle_enter();
        /* the hand-off's wake-up costs the host's time (a preempted holder of the lock,
         * too), inside the idle time before the deadline, not in a 10 us interval */
        pthread_mutex_lock(&lock);
        handed_upto = f + 1u;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
        sleep_until(&next, PERIOD_US);
        EMB_TRACE_idle_exit();
    }
    pthread_mutex_lock(&lock);
    __atomic_store_n(&running, 0, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    emb_native_thread_join(&worker, NULL);
    emb_native_thread_join(&sampler, NULL);
    int rc = emb_native_trace_dump(opt.out) == EMB_OK ? 0 : 1;
    emb_native_shutdown();
    if (emb_trace_window_state() == EMB_TRACE_WINDOW_CLOSED)
        printf("window closed in frame %u\n", last_open);
    return rc;
}
