/* The cost of one deferred log call with two int arguments, against what a user would do
 * otherwise: snprintf of the same message into a buffer, and LTTng-UST's tracef. Run by
 * bench/log.sh (make bench), which adds the LTTng session and the callgrind passes.
 *
 * Variants, each a loop in a function of its own (callgrind counts inside it):
 *   enabled    EMB_LOG_INF with the module enabled: a record in the thread's ring
 *   disabled   the same call below the module's run-time level: a load and a compare
 *   snprintf   snprintf("sensor %d failed: %d") into a 64-byte buffer
 *   tracef     LTTng-UST tracef with the same format (recorded only in a session)
 *   clock      emb_port_timestamp() alone: the clock read every timestamped record makes
 *   empty      the loop alone, subtracted from the others
 *
 * Built twice: log_bench as configured by default, and log_bench_nots with
 * CONFIG_EMB_LOG_TIMESTAMP=0 (library included), whose "enabled" records have no clock.
 *
 * Output, one line per variant and thread count: "VARIANT THREADS NS_PER_CALL", the
 * median over rounds of the slowest thread's CPU time per call. With --variant it runs
 * one variant once (for callgrind) and prints nothing but errors.
 */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <lttng/tracef.h>

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

EMB_LOG_MODULE_DEFINE(bench, EMB_LOG_LEVEL_INF);
EMB_LOG_MODULE_DEFINE(quiet, EMB_LOG_LEVEL_INF); /* its run-time level is lowered to ERR */

#define BENCH_NOINLINE __attribute__((noinline))

BENCH_NOINLINE void log_bench_empty(uint32_t n);
BENCH_NOINLINE void log_bench_enabled(uint32_t n);
BENCH_NOINLINE void log_bench_disabled(uint32_t n);
BENCH_NOINLINE void log_bench_snprintf(uint32_t n);
BENCH_NOINLINE void log_bench_tracef(uint32_t n);
BENCH_NOINLINE void log_bench_clock(uint32_t n);

/* The loop counter goes through an empty asm so no loop is folded or vectorised away. */
BENCH_NOINLINE void log_bench_empty(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        __asm__ __volatile__("" : : "r"(i));
}

BENCH_NOINLINE void log_bench_enabled(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        __asm__ __volatile__("" : : "r"(i));
        EMB_LOG_INF(bench, "sensor %d failed: %d", (int)i, -(int)i);
    }
}

BENCH_NOINLINE void log_bench_disabled(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        __asm__ __volatile__("" : : "r"(i));
        EMB_LOG_INF(quiet, "sensor %d failed: %d", (int)i, -(int)i);
    }
}

BENCH_NOINLINE void log_bench_snprintf(uint32_t n)
{
    char buf[64];
    for (uint32_t i = 0; i < n; i++) {
        __asm__ __volatile__("" : : "r"(i));
        snprintf(buf, sizeof buf, "sensor %d failed: %d", (int)i, -(int)i);
        __asm__ __volatile__("" : : "r"(buf) : "memory"); /* the text is used */
    }
}

BENCH_NOINLINE void log_bench_tracef(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        __asm__ __volatile__("" : : "r"(i));
        tracef("sensor %d failed: %d", (int)i, -(int)i);
    }
}

BENCH_NOINLINE void log_bench_clock(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t = emb_port_timestamp();
        __asm__ __volatile__("" : : "r"(i), "r"(t));
    }
}

static const struct {
    const char *name;
    void (*fn)(uint32_t);
} variants[] = {
    {"empty", log_bench_empty},       {"enabled", log_bench_enabled},
    {"disabled", log_bench_disabled}, {"snprintf", log_bench_snprintf},
    {"tracef", log_bench_tracef},     {"clock", log_bench_clock},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])
#define MAX_THREADS 2

/* ---- Threads that stay alive across rounds: each owns one log ring for the run ---- */

static pthread_barrier_t start_line, finish_line;
static void (*job)(uint32_t);
static uint32_t job_calls;
static unsigned job_threads;
static double cpu_ns[MAX_THREADS];
static volatile int quit;

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint32_t warmup_calls;

static void *worker(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    /* Run the ring over once before measuring (its pages are mapped on first write), in
     * eighths drained as they fill. */
    for (uint32_t done = 0; done < warmup_calls; done += warmup_calls / 8u) {
        log_bench_enabled(warmup_calls / 8u);
        emb_native_log_flush();
    }
    for (;;) {
        pthread_barrier_wait(&start_line);
        if (quit)
            return NULL;
        if (me < job_threads) {
            double t0 = thread_cpu_ns();
            job(job_calls);
            cpu_ns[me] = thread_cpu_ns() - t0;
        }
        pthread_barrier_wait(&finish_line);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fprintf(stderr, "usage: log_bench [--calls N] [--rounds R] [--threads 1,2] [--variant NAME] [--list]\n");
}

int main(int argc, char **argv)
{
    uint32_t calls = 1000000, rounds = 7;
    const char *threads_arg = "1,2", *only = NULL;
    static const struct option opts[] = {
        {"calls", required_argument, NULL, 'n'}, {"rounds", required_argument, NULL, 'r'},
        {"threads", required_argument, NULL, 't'}, {"variant", required_argument, NULL, 'v'},
        {"list", no_argument, NULL, 'l'},          {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n': calls = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'r': rounds = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 't': threads_arg = optarg; break;
        case 'v': only = optarg; break;
        case 'l':
            for (size_t i = 0; i < NVARIANTS; i++)
                printf("%s log_bench_%s\n", variants[i].name, variants[i].name);
            return 0;
        default: usage(); return 2;
        }
    }
    if (calls == 0 || rounds == 0 || rounds > 101) {
        usage();
        return 2;
    }

    struct emb_native_config nc = {.stream_fd = -1};
    if (emb_native_init(&nc) != EMB_OK) {
        fprintf(stderr, "log_bench: emb_native_init failed\n");
        return 1;
    }
    /* Rings that hold a whole round, drained between rounds only: no drop, and no worker
     * competing for the CPU while a loop runs. */
    uint32_t ring = 1024u;
    while (ring < (calls + calls / 8u + 64u) * 16u)
        ring *= 2u;
    struct emb_native_log_config lc = {.ring_bytes = ring, .max_contexts = 4, .path = "/dev/null",
                                       .fd = -1, .period_us = 100000000u, .hello_period_ms = 100000u};
    emb_status s = emb_native_log_start(&lc);
    if (s != EMB_OK) {
        fprintf(stderr, "log_bench: cannot start the log: %s\n", emb_strerror(s));
        return 1;
    }
    emb_log_set_level(quiet, EMB_LOG_LEVEL_ERR);

    if (only != NULL) {
        for (size_t i = 0; i < NVARIANTS; i++) {
            if (strcmp(variants[i].name, only) == 0) {
                variants[i].fn(calls);
                emb_native_log_stop();
                return 0;
            }
        }
        fprintf(stderr, "log_bench: no variant '%s'\n", only);
        return 2;
    }

    warmup_calls = ring / 14u + 1024u;
    pthread_barrier_init(&start_line, NULL, MAX_THREADS + 1);
    pthread_barrier_init(&finish_line, NULL, MAX_THREADS + 1);
    pthread_t th[MAX_THREADS];
    for (uintptr_t i = 0; i < MAX_THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    /* The warm-up ran the rings over: drain them as the rounds do, counting nothing. */
    job = log_bench_empty;
    job_calls = 1;
    job_threads = MAX_THREADS;
    pthread_barrier_wait(&start_line);
    pthread_barrier_wait(&finish_line);
    emb_native_log_flush();

    double samples[101];
    for (const char *p = threads_arg; *p != '\0';) {
        unsigned t = (unsigned)strtoul(p, (char **)&p, 10);
        if (*p == ',')
            p++;
        if (t < 1 || t > MAX_THREADS)
            continue;
        for (size_t v = 0; v < NVARIANTS; v++) {
            for (uint32_t r = 0; r < rounds; r++) {
                job = variants[v].fn;
                job_calls = calls;
                job_threads = t;
                pthread_barrier_wait(&start_line);
                pthread_barrier_wait(&finish_line);
                double worst = 0;
                for (unsigned k = 0; k < t; k++)
                    worst = cpu_ns[k] > worst ? cpu_ns[k] : worst;
                samples[r] = worst / calls;
                emb_native_log_flush();
            }
            qsort(samples, rounds, sizeof samples[0], cmp_double);
            printf("%s %u %.3f\n", variants[v].name, t, samples[rounds / 2u]);
            fflush(stdout);
        }
    }
    quit = 1;
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < MAX_THREADS; i++)
        pthread_join(th[i], NULL);
    emb_native_log_stop();
    struct emb_native_log_stats st;
    emb_native_log_stats_get(&st);
    emb_native_shutdown();
    if (st.dropped != 0 || st.lost_no_ring != 0) {
        fprintf(stderr, "log_bench: %llu records dropped, %u without a ring: the rings were too small\n",
                (unsigned long long)st.dropped, st.lost_no_ring);
        return 1;
    }
    fprintf(stderr, "log_bench: %llu ring bytes written, none dropped\n", (unsigned long long)st.bytes);
    return 0;
}
