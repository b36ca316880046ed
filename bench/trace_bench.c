/* Cost of one two-field trace event: the library enabled, disabled at run time, compiled
 * out, with bus-locked atomics, against a bare ring write and LTTng-UST, in one run.
 *
 *   trace_bench [--events N] [--rounds R] [--threads 1,2] [--lttng-traced]
 *               [--callgrind] [--variant NAME] [--list]
 *
 * Wall-clock mode (default): for each thread count, that many threads (each its own
 * context and ring) run every variant together, R rounds, N events per thread per run;
 * prints "wall VARIANT THREADS MEDIAN_NS MIN_NS CPU_NS" lines: ns per event per thread,
 * the median (and least) over rounds of the mean over threads, and the same median from
 * the threads' CPU time, which shows when the threads were descheduled. --callgrind: the
 * main thread runs each variant's loop once with N events, untimed, for callgrind's
 * per-function counts (run.sh collects one variant per run with --toggle-collect).
 * Every run is checked: events the library recorded must show in the ring, events that
 * must cost nothing must leave it untouched; a variant that cannot be measured (LTTng's
 * tracepoint not enabled with --lttng-traced) fails the program with status 1.
 * Bench/run.sh drives it (sessions, callgrind, the table and the JSON).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <emb/native.h>
#include <emb/trace_events.h>

#include "bench.h"

#define BENCH_MAX_THREADS 8u
#define BENCH_MAX_ROUNDS 64u
#define BENCH_SEED 0x5eed0000u

enum bench_expect {
    EXPECT_NOTHING, /* neither ring may change */
    EXPECT_RING,    /* the context's trace ring grows by at least n events */
    EXPECT_BARE,    /* the bare array's index grows by exactly n records */
};

struct bench_variant {
    const char *name;
    const char *function; /* the loop, for callgrind --toggle-collect */
    void (*loop)(uint32_t n, uint32_t seed);
    enum bench_expect expect;
    bool class_off;   /* run with the work class cleared at run time */
    bool lttng_traced;
};

static const struct bench_variant bench_variants[] = {
#define BENCH_V(name, fn) name, #fn, fn
    {BENCH_V("empty", bench_loop_empty), EXPECT_NOTHING, false, false},
    {BENCH_V("compiled_out", bench_loop_compiled_out), EXPECT_NOTHING, false, false},
    {BENCH_V("runtime_disabled", bench_loop_disabled), EXPECT_NOTHING, true, false},
    {BENCH_V("clock", bench_loop_clock), EXPECT_NOTHING, false, false},
    {BENCH_V("bare", bench_loop_bare), EXPECT_BARE, false, false},
    {BENCH_V("enabled", bench_loop_enabled), EXPECT_RING, false, false},
    {BENCH_V("enabled_locked", bench_loop_locked), EXPECT_RING, false, false},
    {BENCH_V("lttng_idle", bench_loop_lttng_idle), EXPECT_NOTHING, false, false},
    {BENCH_V("lttng_traced", bench_loop_lttng_traced), EXPECT_NOTHING, false, true},
#undef BENCH_V
};
#define BENCH_NVARIANTS (sizeof bench_variants / sizeof bench_variants[0])

struct bench_opts {
    uint32_t events;
    uint32_t rounds;
    uint32_t threads[BENCH_MAX_THREADS];
    uint32_t nthreads_list;
    bool lttng_traced;
    uint32_t lttng_wait_s;
    bool callgrind;
    const char *only; /* run this variant alone (callgrind) */
};

struct bench_worker {
    pthread_t thread;
    uint32_t index;
    struct bench_bare_ring *bare;
    double ns[BENCH_MAX_ROUNDS][BENCH_NVARIANTS];     /* wall clock per event */
    double cpu_ns[BENCH_MAX_ROUNDS][BENCH_NVARIANTS]; /* thread CPU time per event */
    char error[200];
};

/* What the main thread hands the workers for each step; read after the start barrier. */
struct bench_run {
    pthread_barrier_t start;
    pthread_barrier_t done;
    const struct bench_variant *variant;
    uint32_t vindex;
    uint32_t round; /* UINT32_MAX: warm-up, not recorded */
    uint32_t n;
    bool quit;
};

static struct bench_run bench_run;

static double bench_now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void bench_apply_classes(const struct bench_variant *v)
{
    uint32_t all = EMB_TRACE_CLASSES_ALL;
    emb_trace_set_classes(v->class_off ? all & ~(1u << EMB_TRACE_CLASS_WORK) : all);
}

/* Runs one variant's loop on the calling thread and checks what it left behind. Returns
 * the elapsed wall-clock nanoseconds (and the thread's CPU time in *cpu_ns), or a
 * negative value with `error` filled in. */
static double bench_run_one(const struct bench_variant *v, uint32_t n, struct bench_bare_ring *bare,
                            double *cpu_ns, char *error, size_t error_size)
{
    struct emb_trace_ring *ring = emb_trace_context_ring();
    if (ring == NULL) {
        snprintf(error, error_size, "%s: no trace ring for this thread", v->name);
        return -1.0;
    }
    uint32_t pos0 = __atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED);
    uint32_t head0 = __atomic_load_n(&bare->head, __ATOMIC_RELAXED);
    uint32_t lost0 = emb_trace_lost_no_ring();
    double c0 = bench_now_ns(CLOCK_THREAD_CPUTIME_ID);
    double t0 = bench_now_ns(CLOCK_MONOTONIC);
    v->loop(n, BENCH_SEED);
    double t1 = bench_now_ns(CLOCK_MONOTONIC);
    *cpu_ns = bench_now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    uint32_t ring_bytes = __atomic_load_n(&ring->write_pos, __ATOMIC_RELAXED) - pos0;
    uint32_t bare_bytes = __atomic_load_n(&bare->head, __ATOMIC_RELAXED) - head0;
    uint64_t event_bytes = (uint64_t)n * EMB_TRACE_SIZE_WORK_START;

    bool good;
    switch (v->expect) {
    case EXPECT_RING:
        /* The events, plus a packet header and padding every packet: never less, and
         * well under twice as much. */
        good = ring_bytes >= event_bytes && ring_bytes < 2u * event_bytes &&
               bare_bytes == 0u;
        break;
    case EXPECT_BARE:
        good = ring_bytes == 0u && bare_bytes == (uint32_t)(n * 16u);
        break;
    default:
        good = ring_bytes == 0u && bare_bytes == 0u;
        break;
    }
    if (emb_trace_lost_no_ring() != lost0)
        good = false;
    if (!good) {
        snprintf(error, error_size,
                 "%s: %u events moved the trace ring by %u bytes and the bare array by %u bytes",
                 v->name, n, ring_bytes, bare_bytes);
        return -1.0;
    }
    return t1 - t0;
}

static void *bench_worker_main(void *arg)
{
    struct bench_worker *w = arg;
    char name[20];
    snprintf(name, sizeof name, "bench-%u", w->index);
    emb_native_context_name(name); /* claims this thread's ring */
    bench_bare_ring = w->bare;

    for (;;) {
        pthread_barrier_wait(&bench_run.start);
        if (bench_run.quit)
            break;
        if (w->error[0] == '\0') {
            double cpu;
            double ns = bench_run_one(bench_run.variant, bench_run.n, w->bare, &cpu, w->error,
                                      sizeof w->error);
            if (bench_run.round != UINT32_MAX && ns >= 0.0) {
                w->ns[bench_run.round][bench_run.vindex] = ns / bench_run.n;
                w->cpu_ns[bench_run.round][bench_run.vindex] = cpu / bench_run.n;
            }
        }
        pthread_barrier_wait(&bench_run.done);
    }
    emb_native_flush();
    return NULL;
}

static bool bench_variant_active(const struct bench_opts *o, const struct bench_variant *v)
{
    if (o->only != NULL)
        return strcmp(o->only, v->name) == 0;
    return !v->lttng_traced || o->lttng_traced;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns its median. */
static double bench_median(double *v, uint32_t n)
{
    qsort(v, n, sizeof v[0], bench_cmp_double);
    return n % 2u ? v[n / 2u] : (v[n / 2u - 1u] + v[n / 2u]) / 2.0;
}

/* One step: every worker runs `v` once. */
static void bench_step(const struct bench_variant *v, uint32_t vindex, uint32_t round, uint32_t n)
{
    bench_apply_classes(v);
    bench_run.variant = v;
    bench_run.vindex = vindex;
    bench_run.round = round;
    bench_run.n = n;
    pthread_barrier_wait(&bench_run.start);
    pthread_barrier_wait(&bench_run.done);
}

static int bench_wall(const struct bench_opts *o, uint32_t nthreads)
{
    static struct bench_worker workers[BENCH_MAX_THREADS];
    memset(workers, 0, sizeof workers);
    memset(&bench_run, 0, sizeof bench_run);
    if (pthread_barrier_init(&bench_run.start, NULL, nthreads + 1u) != 0 ||
        pthread_barrier_init(&bench_run.done, NULL, nthreads + 1u) != 0) {
        fprintf(stderr, "trace_bench: cannot create barriers\n");
        return 1;
    }
    for (uint32_t t = 0; t < nthreads; t++) {
        workers[t].index = t;
        workers[t].bare = aligned_alloc(64, sizeof *workers[t].bare);
        if (workers[t].bare == NULL) {
            fprintf(stderr, "trace_bench: out of memory\n");
            return 1;
        }
        memset(workers[t].bare, 0, sizeof *workers[t].bare);
        int e = pthread_create(&workers[t].thread, NULL, bench_worker_main, &workers[t]);
        if (e != 0) {
            fprintf(stderr, "trace_bench: pthread_create: %s\n", strerror(e));
            return 1;
        }
    }

    /* Warm-up: faults in the rings and the arrays, trains the branches. */
    uint32_t warm = o->events / 10u > 1000u ? o->events / 10u : 1000u;
    for (uint32_t vi = 0; vi < BENCH_NVARIANTS; vi++)
        if (bench_variant_active(o, &bench_variants[vi]))
            bench_step(&bench_variants[vi], vi, UINT32_MAX, warm);
    /* Rounds, each variant once per round, the order rotated so no variant always
     * follows the same neighbour. */
    for (uint32_t r = 0; r < o->rounds; r++) {
        for (uint32_t k = 0; k < BENCH_NVARIANTS; k++) {
            uint32_t vi = (k + r) % BENCH_NVARIANTS;
            if (bench_variant_active(o, &bench_variants[vi]))
                bench_step(&bench_variants[vi], vi, r, o->events);
        }
    }
    bench_run.quit = true;
    pthread_barrier_wait(&bench_run.start);

    int status = 0;
    for (uint32_t t = 0; t < nthreads; t++) {
        pthread_join(workers[t].thread, NULL);
        free(workers[t].bare);
        if (workers[t].error[0] != '\0') {
            fprintf(stderr, "trace_bench: thread %u of %u: %s\n", t, nthreads, workers[t].error);
            status = 1;
        }
    }
    pthread_barrier_destroy(&bench_run.start);
    pthread_barrier_destroy(&bench_run.done);
    emb_trace_set_classes(EMB_TRACE_CLASSES_ALL);
    if (status != 0)
        return status;

    for (uint32_t vi = 0; vi < BENCH_NVARIANTS; vi++) {
        if (!bench_variant_active(o, &bench_variants[vi]))
            continue;
        double wall[BENCH_MAX_ROUNDS], cpu[BENCH_MAX_ROUNDS];
        for (uint32_t r = 0; r < o->rounds; r++) {
            double sum = 0.0, cpu_sum = 0.0;
            for (uint32_t t = 0; t < nthreads; t++) {
                sum += workers[t].ns[r][vi];
                cpu_sum += workers[t].cpu_ns[r][vi];
            }
            wall[r] = sum / nthreads;
            cpu[r] = cpu_sum / nthreads;
        }
        double median = bench_median(wall, o->rounds);
        printf("wall %s %u %.3f %.3f %.3f\n", bench_variants[vi].name, nthreads, median, wall[0],
               bench_median(cpu, o->rounds));
    }
    fflush(stdout);
    return 0;
}

static int bench_callgrind(const struct bench_opts *o)
{
    static struct bench_bare_ring bare;
    bench_bare_ring = &bare;
    char error[200];
    for (uint32_t vi = 0; vi < BENCH_NVARIANTS; vi++) {
        const struct bench_variant *v = &bench_variants[vi];
        if (!bench_variant_active(o, v))
            continue;
        bench_apply_classes(v);
        double cpu;
        if (bench_run_one(v, o->events, &bare, &cpu, error, sizeof error) < 0.0) {
            fprintf(stderr, "trace_bench: %s\n", error);
            return 1;
        }
        printf("callgrind %s %s %u\n", v->name, v->function, o->events);
    }
    emb_trace_set_classes(EMB_TRACE_CLASSES_ALL);
    return 0;
}

/* LTTng-UST registers with the session daemon from its constructor and waits a few
 * seconds at most for the enablers: under valgrind that can end before the event is on. */
static int bench_check_lttng(const struct bench_opts *o)
{
    bool traced_needed = false;
    for (uint32_t vi = 0; vi < BENCH_NVARIANTS; vi++)
        traced_needed |= bench_variants[vi].lttng_traced && bench_variant_active(o, &bench_variants[vi]);
    if (bench_lttng_idle_enabled()) {
        fprintf(stderr, "trace_bench: emb_bench:work_start_idle is enabled in an LTTng session; "
                        "the not-traced cost cannot be measured\n");
        return 1;
    }
    if (!traced_needed)
        return 0;
    for (uint32_t waited_ms = 0; !bench_lttng_traced_enabled(); waited_ms += 50u) {
        if (waited_ms >= o->lttng_wait_s * 1000u) {
            fprintf(stderr, "trace_bench: emb_bench:work_start is not enabled after %u s: is an "
                            "LTTng session tracing it (bench/trace.sh creates one)?\n",
                    o->lttng_wait_s);
            return 1;
        }
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    return 0;
}

static bool bench_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool bench_parse_threads(char *s, struct bench_opts *o)
{
    o->nthreads_list = 0;
    for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->nthreads_list == BENCH_MAX_THREADS ||
            !bench_parse_u32(tok, 1u, BENCH_MAX_THREADS, &o->threads[o->nthreads_list]))
            return false;
        o->nthreads_list++;
    }
    return o->nthreads_list > 0u;
}

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: trace_bench [--events N] [--rounds R] [--threads LIST] [--lttng-traced]\n"
            "                   [--lttng-wait S] [--callgrind [--variant NAME]] [--list]\n"
            "  --events N      events per thread per run (default 2000000)\n"
            "  --rounds R      runs per variant, the median is reported (default 11, max %u)\n"
            "  --threads LIST  thread counts, comma-separated (default 1,2; max %u)\n"
            "  --lttng-traced  measure emb_bench:work_start, which a session must enable\n"
            "  --lttng-wait S  seconds to wait for that (default 10)\n"
            "  --callgrind     run each loop once on this thread, untimed\n"
            "  --variant NAME  run only this variant (any mode)\n"
            "  --list          print each variant and its loop function\n",
            BENCH_MAX_ROUNDS, BENCH_MAX_THREADS);
}

int main(int argc, char **argv)
{
    struct bench_opts o = {.events = 2000000u, .rounds = 11u, .threads = {1u, 2u},
                           .nthreads_list = 2u, .lttng_wait_s = 10u};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (strcmp(a, "--help") == 0) {
            bench_usage(stdout);
            return 0;
        } else if (strcmp(a, "--lttng-traced") == 0) {
            o.lttng_traced = true;
        } else if (strcmp(a, "--callgrind") == 0) {
            o.callgrind = true;
        } else if (strcmp(a, "--list") == 0) {
            for (uint32_t vi = 0; vi < BENCH_NVARIANTS; vi++)
                printf("%s %s\n", bench_variants[vi].name, bench_variants[vi].function);
            return 0;
        } else if (val != NULL && strcmp(a, "--variant") == 0) {
            o.only = val, i++;
            ok = false;
            for (uint32_t vi = 0; vi < BENCH_NVARIANTS; vi++)
                ok |= strcmp(val, bench_variants[vi].name) == 0;
        } else if (val != NULL && strcmp(a, "--events") == 0) {
            ok = bench_parse_u32(val, 1000u, 100000000u, &o.events), i++;
        } else if (val != NULL && strcmp(a, "--rounds") == 0) {
            ok = bench_parse_u32(val, 1u, BENCH_MAX_ROUNDS, &o.rounds), i++;
        } else if (val != NULL && strcmp(a, "--lttng-wait") == 0) {
            ok = bench_parse_u32(val, 0u, 600u, &o.lttng_wait_s), i++;
        } else if (val != NULL && strcmp(a, "--threads") == 0) {
            ok = bench_parse_threads(argv[i + 1], &o), i++;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "trace_bench: bad argument '%s'%s%s\n", a, val ? " " : "", val ? val : "");
            bench_usage(stderr);
            return 2;
        }
    }

    struct emb_native_config config = {.mode = EMB_TRACE_MODE_SNAPSHOT, .stream_fd = -1};
    emb_status s = emb_native_init(&config);
    if (s != EMB_OK) {
        fprintf(stderr, "trace_bench: emb_native_init: %s\n", emb_strerror(s));
        return 1;
    }
    if (bench_check_lttng(&o) != 0)
        return 1;
    printf("info events %u\ninfo rounds %u\ninfo timestamp_hz %llu\ninfo port %s\n", o.events,
           o.rounds, (unsigned long long)emb_port_timestamp_hz(), EMB_PORT_NAME);

    int status = 0;
    if (o.callgrind) {
        status = bench_callgrind(&o);
    } else {
        for (uint32_t k = 0; k < o.nthreads_list && status == 0; k++)
            status = bench_wall(&o, o.threads[k]);
    }
    if (status == 0 && emb_trace_lost_no_ring() != 0u) {
        fprintf(stderr, "trace_bench: %u events found no ring\n", emb_trace_lost_no_ring());
        status = 1;
    }
    emb_native_shutdown();
    return status;
}
