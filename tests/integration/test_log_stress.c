/* Stress: producer threads and a timer signal that preempts them mid-record, all logging
 * into small rings that the worker drains too slowly, so records drop. Every record is
 * accounted for: per context, decoded + announced drops + drops pending at the end =
 * produced, exactly; each producer's sequence numbers only go up; and the decoder finds
 * each ring's own drop count equal to what its dropped records announced. Runs under
 * ThreadSanitizer too (label tsan). */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "log_decode.h"

#define PRODUCERS 4
#define RECORDS_PER_PRODUCER 60000u
#define MAX_CTX 0x8100

EMB_LOG_MODULE_DEFINE(stress, EMB_LOG_LEVEL_DBG);

static uint64_t produced_by_context[MAX_CTX];
static uint32_t signals_taken, nested_hits;
static _Thread_local uint64_t produced;
static _Thread_local volatile int in_log;
static _Thread_local uint32_t signal_seq;

static void count(void)
{
    __atomic_fetch_add(&produced, 1u, __ATOMIC_RELAXED); /* the handler may interrupt it */
}

static void on_signal(int signo)
{
    (void)signo;
    if (in_log)
        __atomic_fetch_add(&nested_hits, 1u, __ATOMIC_RELAXED);
    __atomic_fetch_add(&signals_taken, 1u, __ATOMIC_RELAXED);
    EMB_LOG_WRN(stress, "signal %u", signal_seq++);
    count();
}

static void publish_count(void)
{
    struct emb_log_ring *ring = emb_native_log_ring;
    if (ring != &emb_log_unclaimed_ring && ring->context_id < MAX_CTX)
        __atomic_fetch_add(&produced_by_context[ring->context_id],
                           __atomic_load_n(&produced, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

static void *producer(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    for (uint32_t seq = 0; seq < RECORDS_PER_PRODUCER; seq++) {
        in_log = 1;
        EMB_LOG_INF(stress, "producer %u seq %u", me, seq);
        in_log = 0;
        count();
        if (seq % 128u == 127u) { /* let the worker catch up now and then: drops and records */
            struct timespec pause = {0, 30000};
            nanosleep(&pause, NULL);
        }
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 3);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    publish_count();
    return NULL;
}

/* ---- Decoding ---- */

struct ctx_count {
    uint16_t id;
    uint64_t records, dropped;
    int64_t last_seq[PRODUCERS + 2];
};
static struct ctx_count ctxs[64];
static size_t nctx;
static int ordered = 1;
static uint64_t decode_errors;

static struct ctx_count *ctx_of(uint16_t id)
{
    for (size_t i = 0; i < nctx; i++)
        if (ctxs[i].id == id)
            return &ctxs[i];
    struct ctx_count *c = &ctxs[nctx++];
    c->id = id;
    for (int k = 0; k < PRODUCERS + 2; k++)
        c->last_seq[k] = -1;
    return c;
}

static void on_record(void *arg, const struct emb_logrec *r)
{
    (void)arg;
    struct ctx_count *c = ctx_of(r->ctx);
    if (r->type == EMB_LREC_DROPPED || r->type == EMB_LREC_PENDING) {
        c->dropped += r->count;
        return;
    }
    if (r->type != EMB_LREC_LOG)
        return;
    c->records++;
    unsigned who, seq;
    int k;
    if (sscanf(r->text, "producer %u seq %u", &who, &seq) == 2)
        k = (int)who;
    else if (sscanf(r->text, "signal %u", &seq) == 1)
        k = PRODUCERS + 1;
    else
        k = 0;
    if (k <= 0 || k > PRODUCERS + 1 || (int64_t)seq <= c->last_seq[k])
        ordered = 0;
    else
        c->last_seq[k] = seq;
}

static void on_problem(void *arg, uint64_t offset, bool error, const char *msg)
{
    (void)arg;
    if (error) {
        decode_errors++;
        diag("decoder: byte %llu: %s", (unsigned long long)offset, msg);
    }
}

int main(void)
{
    char path[] = "/tmp/emb-log-stress-XXXXXX";
    int fd = mkstemp(path);
    ok(fd >= 0, "temporary stream file");
    close(fd);

    struct emb_native_config config = {.stream_fd = -1};
    ok_eq(emb_native_init(&config), EMB_OK, "native port started");
    struct emb_native_log_config lc = {
        .ring_bytes = 1024,  /* small rings: the worker falls behind and producers drop */
        .path = path,
        .fd = -1,
        .period_us = 400,
    };
    ok_eq(emb_native_log_start(&lc), EMB_OK, "log started");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGRTMIN + 3, &sa, NULL);
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 3};
    timer_t timer;
    ok_eq(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0, "signal timer created");
    struct itimerspec its = {{0, 20000}, {0, 20000}};
    timer_settime(timer, 0, &its, NULL);

    pthread_t threads[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&threads[i], NULL, producer, (void *)(i + 1));
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(threads[i], NULL);

    timer_delete(timer);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 3);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    publish_count();
    emb_native_log_stop();
    struct emb_native_log_stats stats;
    emb_native_log_stats_get(&stats);
    emb_native_shutdown();

    diag("signals taken: %u, of which inside a log call: %u", signals_taken, nested_hits);
    ok(signals_taken > 100, "the timer signal preempted producers (%u times)", signals_taken);
#if !defined(EMB_NATIVE_TSAN)
    ok(nested_hits > 0, "some signals landed inside a log call (%u)", nested_hits);
#endif
    ok_eq(stats.lost_no_ring, 0, "every thread found a ring");
    ok_eq(stats.write_errors, 0, "no write to the output failed");
    ok(stats.dropped > 0, "the test exercised drops (%llu)", (unsigned long long)stats.dropped);

    char err[256];
    struct emb_logdb *db = emb_logdb_open("/proc/self/exe", err, sizeof err);
    ok(db != NULL, "own ELF: %s", db ? "read" : err);
    FILE *f = fopen(path, "rb");
    ok(f != NULL, "stream file readable");
    if (db == NULL || f == NULL)
        return emb_test_done();
    struct emb_log_decoder_options opt = {.db = db, .record = on_record, .problem = on_problem};
    struct emb_log_decoder *d = emb_log_decoder_new(&opt);
    static uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        emb_log_decoder_feed(d, buf, n);
    emb_log_decoder_finish(d);
    fclose(f);
    const struct emb_log_decoder_summary *sum = emb_log_decoder_summary(d);
    ok_eq(decode_errors, 0, "decoded without errors (each ring's drop count agrees with its "
                            "dropped records)");
    ok_eq(sum->resyncs, 0, "no resynchronisation was needed");
    ok_eq(sum->lost_bytes, 0, "no ring bytes missing");

    uint64_t total_produced = 0, total_decoded = 0, total_dropped = 0;
    for (size_t i = 0; i < nctx; i++) {
        struct ctx_count *c = &ctxs[i];
        uint64_t want = c->id < MAX_CTX ? produced_by_context[c->id] : 0;
        ok_eq(c->records + c->dropped, want, "context %u: decoded %llu + dropped %llu", c->id,
              (unsigned long long)c->records, (unsigned long long)c->dropped);
        total_produced += want;
        total_decoded += c->records;
        total_dropped += c->dropped;
    }
    uint64_t all = 0;
    for (int i = 0; i < MAX_CTX; i++)
        all += produced_by_context[i];
    ok_eq(total_produced, all, "every producing context is in the stream");
    diag("produced %llu, decoded %llu, dropped %llu", (unsigned long long)all,
         (unsigned long long)total_decoded, (unsigned long long)total_dropped);
    ok_eq(total_decoded + total_dropped, all, "produced = decoded + dropped, exactly");
    ok_eq(total_dropped, stats.dropped, "the rings' own drop counts say the same");
    ok(total_decoded > 0, "and records were decoded");
    ok(ordered, "each producer's sequence numbers strictly increase in its ring");
    emb_log_decoder_free(d);
    emb_logdb_free(db);
    unlink(path);
    return emb_test_done();
}
