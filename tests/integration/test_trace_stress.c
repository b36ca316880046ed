/* Stress: several producer threads and a timer signal that preempts them mid-record, all
 * recording into small rings while the streaming worker drains them concurrently. Every
 * event is accounted for: for each context, produced = decoded + discarded, exactly, and
 * no packet is lost. Runs under ThreadSanitizer too (label tsan). */
#define _GNU_SOURCE
#include <emb/hooks.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "trace_decode.h"

#define PRODUCERS 4
#define EVENTS_PER_PRODUCER 150000u
#define SIGNAL_ID 0x100u
#define MAX_CTX 64

static uint64_t produced_by_context[MAX_CTX];
static uint32_t nested_hits;       /* signals that landed inside an emitter */
static uint32_t signals_taken;
static _Thread_local uint64_t produced; /* events this thread's ring was asked to record */
static _Thread_local volatile int in_emit;
static _Thread_local uint32_t signal_seq;

static void count(uint64_t n)
{
    /* An atomic add: the signal handler may interrupt the thread's own increment. */
    __atomic_fetch_add(&produced, n, __ATOMIC_RELAXED);
}

static void on_signal(int signo)
{
    (void)signo;
    if (in_emit)
        __atomic_fetch_add(&nested_hits, 1u, __ATOMIC_RELAXED);
    __atomic_fetch_add(&signals_taken, 1u, __ATOMIC_RELAXED);
    emb_isr_enter(7);
    EMB_TRACE_user_event(SIGNAL_ID, signal_seq++, 0);
    emb_isr_exit(7, false);
    count(3);
}

static void publish_count(void)
{
    uint16_t id = emb_native_context_id();
    if (id < MAX_CTX)
        __atomic_fetch_add(&produced_by_context[id], __atomic_load_n(&produced, __ATOMIC_RELAXED),
                           __ATOMIC_RELAXED);
}

static void *producer(void *arg)
{
    uint16_t me = (uint16_t)(uintptr_t)arg;
    for (uint32_t seq = 0; seq < EVENTS_PER_PRODUCER; seq++) {
        in_emit = 1;
        EMB_TRACE_user_event(me, seq, ~seq);
        in_emit = 0;
        count(1);
    }
    /* Block the signal before reading the count, so none lands after it is published. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    publish_count();
    emb_native_flush();
    return NULL;
}

int main(void)
{
    char path[] = "/tmp/emb-stress-XXXXXX";
    int fd = mkstemp(path);
    ok(fd >= 0, "temporary stream file");
    close(fd);

    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_STREAMING,
        .ring_packets = 4,     /* small rings: the worker falls behind and producers
                                * overwrite its oldest unread packets */
        .max_contexts = MAX_CTX,
        .stream_path = path,
        .stream_fd = -1,
        .stream_period_us = 300,
    };
    ok_eq(emb_native_init(&config), EMB_OK, "native port started in streaming mode");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGRTMIN + 2, &sa, NULL);
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 2};
    timer_t timer;
    ok_eq(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0, "signal timer created");
    struct itimerspec its = {{0, 20000}, {0, 20000}}; /* every 20 us */
    timer_settime(timer, 0, &its, NULL);

    pthread_t threads[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&threads[i], NULL, producer, (void *)(i + 1));
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(threads[i], NULL);

    timer_delete(timer);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    publish_count();
    struct emb_native_stats stats;
    emb_native_stats_get(&stats);
    emb_native_shutdown();

    diag("signals taken: %u, of which inside an emitter: %u", signals_taken, nested_hits);
    ok(signals_taken > 100, "the timer signal preempted producers (%u times)", signals_taken);
#if !defined(EMB_NATIVE_TSAN)
    /* ThreadSanitizer defers signals to safe points, so only the plain build can see one
     * land between a reservation and its commit. */
    ok(nested_hits > 0, "some signals landed mid-record (%u)", nested_hits);
#endif
    ok_eq(stats.lost_no_context, 0, "every thread found a ring");
    ok_eq(stats.stream_errors, 0, "no write to the sink failed");

    struct emb_trace_options opt = {.catalog = emb_catalog_builtin(), .name = path};
    struct emb_trace *t = emb_trace_decode_file(path, &opt);
    ok(t != NULL && !emb_trace_summary(t)->fatal, "the stream decodes");
    if (t == NULL)
        return emb_test_done();
    const struct emb_trace_summary *sum = emb_trace_summary(t);
    ok_eq(sum->errors, 0, "no decoding errors");
    /* The worker falls behind: the rings take packets from it, counting their events, so
     * no gap is a packet lost on the way (every one is covered by events_discarded). */
    ok_eq(sum->lost_packets, 0, "every packet gap is an overwrite the ring counted");
    ok(sum->overwritten_packets > 0, "the rings overwrote unread packets (%llu)",
       (unsigned long long)sum->overwritten_packets);

    uint64_t total_produced = 0, total_decoded = 0, total_discarded = 0;
    int ordered = 1;
    for (size_t i = 0; i < emb_trace_context_count(t); i++) {
        const struct emb_trace_context *c = emb_trace_context(t, i);
        uint64_t want = c->id < MAX_CTX ? produced_by_context[c->id] : 0;
        ok_eq(c->events + c->discarded, want, "context %u '%s': decoded %llu + discarded %llu",
              c->id, c->name, (unsigned long long)c->events, (unsigned long long)c->discarded);
        total_produced += want;
        total_decoded += c->events;
        total_discarded += c->discarded;
        /* Within a ring each producer's sequence numbers only go up. */
        int64_t last[PRODUCERS + 2];
        for (int k = 0; k < PRODUCERS + 2; k++)
            last[k] = -1;
        for (size_t r = 0; r < c->nrecs; r++) {
            const struct emb_trace_event *e = &c->recs[r];
            if (e->type != EMB_TREC_EVENT || e->ev == NULL || e->id != EMB_TRACE_ID_USER_EVENT)
                continue;
            uint16_t who = emb_get_le16(e->payload);
            uint32_t seq = emb_get_le32(e->payload + 4);
            int k = who == SIGNAL_ID ? PRODUCERS + 1 : who;
            if (k <= 0 || k > PRODUCERS + 1 || (int64_t)seq <= last[k])
                ordered = 0;
            else
                last[k] = seq;
        }
    }
    for (int i = 0; i < MAX_CTX; i++)
        if (emb_trace_context_index(t, (uint16_t)i) < 0 && produced_by_context[i] != 0)
            ok(0, "context %d produced %llu events but has no packets", i,
               (unsigned long long)produced_by_context[i]);
    diag("produced %llu, decoded %llu, discarded %llu", (unsigned long long)total_produced,
         (unsigned long long)total_decoded, (unsigned long long)total_discarded);
    ok_eq(total_decoded + total_discarded, total_produced, "produced = decoded + discarded");
    ok(total_discarded > 0, "the test exercised drops");
    ok(total_decoded > 0, "and decoding");
    ok(ordered, "per-producer sequence numbers strictly increase in each ring");
    emb_trace_free(t);
    if (!getenv("EMB_KEEP")) unlink(path); else diag("kept %s", path);
    return emb_test_done();
}
