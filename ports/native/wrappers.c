/* Thin thread, mutex, sleep, timer and work-queue wrappers that call the kernel hooks:
 * what an RTOS would record, recorded by POSIX primitives. */
#define _GNU_SOURCE
#include <emb/native.h>

#include <emb/hooks.h>
#include <emb/monitor.h>
#include <emb/trace_events.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "native_internal.h"

/* Catalogue values (catalog/trace_events.yaml) used by the wrappers. */
enum {
    EMB__SWITCH_BLOCK = 1,
    EMB__SWITCH_EXIT = 3,
    EMB__SWITCH_SLEEP = 4,
    EMB__SWITCH_WAKE = 5,
    EMB__WAIT_MUTEX = 0,
    EMB__WAIT_SLEEP = 5,
    EMB__WAIT_JOIN = 6,
    EMB__OBJ_THREAD = 0,
    EMB__OBJ_MUTEX = 1,
    EMB__OBJ_TIMER = 6,
    EMB__OBJ_WORKQ = 9,
};

/* The thread id a switch names when a thread leaves the CPU for "nobody in particular". */
#define EMB__IDLE 0xFFFFu

static uint32_t emb__next_handle = 0x100u;

static uint32_t emb__new_handle(void)
{
    return __atomic_fetch_add(&emb__next_handle, 1u, __ATOMIC_RELAXED);
}

/* ---- Statistics and the THREAD_RUN monitor ---- */

/* Thread statistics are written by their own thread only (readers use relaxed loads):
 * a load and a store, not a locked add. */
static void emb__add64(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static void emb__add32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static void emb__max32(uint32_t *p, uint32_t v)
{
    uint32_t seen = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > seen && !__atomic_compare_exchange_n(p, &seen, v, true, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
    }
}

/* When the calling thread last started running (0: not known yet). */
static _Thread_local uint64_t emb__run_start;

static void emb__switch_in(void)
{
    emb__run_start = emb_port_timestamp();
}

/* The thread stops running: a run interval for the statistics and the THREAD_RUN
 * monitor, whose opener is the thread's entry function. */
static void emb__switch_out(void)
{
    uint64_t now = emb_port_timestamp();
    struct emb__context *ctx = emb__native_self();
    if (ctx == NULL)
        return;
    if (CONFIG_EMB_STATS)
        emb__add32(&ctx->info.stats.switches, 1u);
    if (emb__run_start != 0u) {
        uint32_t cycles = emb_monitor_cycles(emb__run_start, now);
        if (CONFIG_EMB_STATS)
            emb__add64(&ctx->info.stats.run_cycles, cycles);
        emb_monitor_close(EMB_MONITOR_THREAD_RUN, cycles, ctx->info.entry);
    }
    emb__run_start = 0u;
}

static void emb__blocked(uint64_t cycles)
{
    emb_stats_thread_t *st = emb__native_my_stats();
    if (CONFIG_EMB_STATS && st != NULL)
        emb__add64(&st->blocked_cycles, cycles);
}

/* ---- Objects with statistics ---- */

#define EMB__MAX_OBJECTS 256u
static struct emb_object_info emb__objects[EMB__MAX_OBJECTS];
static uint32_t emb__object_count;

struct emb_object_info *emb__native_object_new(uint16_t type, uint32_t handle, const char *name)
{
    struct emb_debug_registry *reg = &emb_debug_registry;
    if (reg->objects == NULL) {
        reg->object_stride = sizeof emb__objects[0];
        reg->object_capacity = EMB__MAX_OBJECTS;
        __atomic_store_n(&reg->objects, emb__objects, __ATOMIC_RELEASE);
    }
    uint32_t index = __atomic_fetch_add(&emb__object_count, 1u, __ATOMIC_RELAXED);
    if (index >= EMB__MAX_OBJECTS)
        return NULL;
    struct emb_object_info *o = &emb__objects[index];
    memset(o, 0, sizeof *o);
    o->handle = handle;
    o->type = type;
    strncpy(o->name, name, sizeof o->name - 1u);
    __atomic_store_n(&o->state, 1u, __ATOMIC_RELEASE);
    emb__max32(&reg->object_count, index + 1u);
    return o;
}

void emb__native_objects_reset(void)
{
    uint32_t n = __atomic_load_n(&emb__object_count, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < n && i < EMB__MAX_OBJECTS; i++)
        memset(&emb__objects[i].stats, 0, sizeof emb__objects[i].stats);
}

emb_status emb_stats_object_get(emb_handle_t handle, emb_stats_object_t *out)
{
    if (!CONFIG_EMB_STATS)
        return EMB_E_STATE;
    if (out == NULL)
        return EMB_E_INVALID;
    uint32_t n = __atomic_load_n(&emb__object_count, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < n && i < EMB__MAX_OBJECTS; i++) {
        const struct emb_object_info *o = &emb__objects[i];
        if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) != 1u || o->handle != handle)
            continue;
        out->wait_cycles = __atomic_load_n(&o->stats.wait_cycles, __ATOMIC_RELAXED);
        out->acquisitions = __atomic_load_n(&o->stats.acquisitions, __ATOMIC_RELAXED);
        out->contentions = __atomic_load_n(&o->stats.contentions, __ATOMIC_RELAXED);
        out->max_wait_cycles = __atomic_load_n(&o->stats.max_wait_cycles, __ATOMIC_RELAXED);
        out->max_queue = __atomic_load_n(&o->stats.max_queue, __ATOMIC_RELAXED);
        return EMB_OK;
    }
    return EMB_E_NOTFOUND;
}

/* ---- Threads ---- */

static void *emb__thread_trampoline(void *arg)
{
    struct emb_native_thread *t = arg;
    emb_native_context_name(t->name);
    uint16_t self = emb_native_context_id();
    t->context_id = self;
    emb__native_thread_begin(t->entry);
    __atomic_store_n(&t->started, 1, __ATOMIC_RELEASE);
    EMB_TRACE_obj_init(EMB__OBJ_THREAD, self, t->name);
    EMB_TRACE_thread_init(self, 0u);
    EMB_TRACE_thread_start(self);
    EMB_TRACE_switch(EMB__IDLE, self, EMB__SWITCH_WAKE);
    emb__switch_in();
    void *result = t->entry(t->arg);
    EMB_TRACE_thread_exit(self, (int32_t)(intptr_t)result);
    EMB_TRACE_switch(self, EMB__IDLE, EMB__SWITCH_EXIT);
    emb__switch_out();
    emb_native_flush();
    emb__native_thread_end();
    return result;
}

int emb_native_thread_create(struct emb_native_thread *t, const char *name,
                             void *(*entry)(void *), void *arg)
{
    memset(t, 0, sizeof *t);
    t->entry = entry;
    t->arg = arg;
    strncpy(t->name, name != NULL ? name : "thread", sizeof t->name - 1u);
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    pthread_attr_setstacksize(&attr, EMB_NATIVE_STACK_SIZE);
    int rc = pthread_create(&t->pthread, &attr, emb__thread_trampoline, t);
    pthread_attr_destroy(&attr);
    return rc;
}

int emb_native_thread_join(struct emb_native_thread *t, void **result)
{
    uint16_t self = emb_native_context_id();
    uint16_t target = __atomic_load_n(&t->started, __ATOMIC_ACQUIRE) ? t->context_id : EMB__IDLE;
    EMB_TRACE_wait_begin(self, EMB__WAIT_JOIN, target, 0u);
    emb__switch_out();
    uint64_t t0 = emb_port_timestamp();
    int rc = pthread_join(t->pthread, result);
    uint64_t waited = emb_port_timestamp() - t0;
    emb__blocked(waited);
    emb__switch_in();
    EMB_TRACE_wait_end(self, (int8_t)(rc == 0 ? 0 : -1), (uint32_t)waited);
    EMB_TRACE_thread_join(self, target);
    return rc;
}

/* ---- Mutexes ---- */

void emb_native_mutex_init(struct emb_native_mutex *m, const char *name)
{
    pthread_mutex_init(&m->mutex, NULL);
    m->handle = emb__new_handle();
    m->owner = EMB__IDLE;
    m->waiters = 0;
    m->info = emb__native_object_new(EMB__OBJ_MUTEX, m->handle, name != NULL ? name : "mutex");
    EMB_TRACE_obj_init(EMB__OBJ_MUTEX, m->handle, name != NULL ? name : "mutex");
}

void emb_native_mutex_lock(struct emb_native_mutex *m)
{
    uint16_t self = emb_native_context_id();
    struct emb_stats_object *os = m->info != NULL && CONFIG_EMB_STATS ? &m->info->stats : NULL;
    if (pthread_mutex_trylock(&m->mutex) == 0) {
        m->owner = self;
        if (os != NULL)
            __atomic_fetch_add(&os->acquisitions, 1u, __ATOMIC_RELAXED);
        EMB_TRACE_mutex_lock(m->handle, false);
        return;
    }
    EMB_TRACE_mutex_lock(m->handle, true);
    EMB_TRACE_wait_begin(self, EMB__WAIT_MUTEX, m->handle, 0u);
    EMB_TRACE_switch(self, EMB__IDLE, EMB__SWITCH_BLOCK);
    emb__switch_out();
    uint32_t waiting = __atomic_add_fetch(&m->waiters, 1u, __ATOMIC_RELAXED);
    uint64_t t0 = emb_port_timestamp();
    pthread_mutex_lock(&m->mutex);
    uint64_t waited = emb_port_timestamp() - t0;
    uint32_t blocked = (uint32_t)waited;
    __atomic_sub_fetch(&m->waiters, 1u, __ATOMIC_RELAXED);
    emb__blocked(waited);
    emb__switch_in();
    emb_stats_thread_t *ts = emb__native_my_stats();
    if (CONFIG_EMB_STATS && ts != NULL)
        emb__add32(&ts->contentions, 1u);
    if (os != NULL) {
        __atomic_fetch_add(&os->acquisitions, 1u, __ATOMIC_RELAXED);
        __atomic_fetch_add(&os->contentions, 1u, __ATOMIC_RELAXED);
        __atomic_fetch_add(&os->wait_cycles, waited, __ATOMIC_RELAXED);
        emb__max32(&os->max_wait_cycles, emb_monitor_cycles(0u, waited));
        emb__max32(&os->max_queue, waiting);
    }
    m->owner = self;
    EMB_TRACE_switch(EMB__IDLE, self, EMB__SWITCH_WAKE);
    EMB_TRACE_wait_end(self, 0, blocked);
}

void emb_native_mutex_unlock(struct emb_native_mutex *m)
{
    m->owner = EMB__IDLE;
    /* pthreads does not say who gets the mutex next: handed_to is "nobody known". */
    EMB_TRACE_mutex_unlock(m->handle, EMB__IDLE);
    pthread_mutex_unlock(&m->mutex);
}

void emb_native_mutex_destroy(struct emb_native_mutex *m)
{
    EMB_TRACE_obj_destroy(EMB__OBJ_MUTEX, m->handle, 0u);
    pthread_mutex_destroy(&m->mutex);
}

/* ---- Sleep ---- */

void emb_native_sleep_us(uint32_t us)
{
    uint16_t self = emb_native_context_id();
    EMB_TRACE_wait_begin(self, EMB__WAIT_SLEEP, 0u, us);
    EMB_TRACE_switch(self, EMB__IDLE, EMB__SWITCH_SLEEP);
    emb__switch_out();
    uint64_t t0 = emb_port_timestamp();
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    uint64_t waited = emb_port_timestamp() - t0;
    uint32_t slept = (uint32_t)waited;
    emb__blocked(waited);
    emb__switch_in();
    EMB_TRACE_switch(EMB__IDLE, self, EMB__SWITCH_WAKE);
    EMB_TRACE_wait_end(self, 0, slept);
}

/* ---- Timer signals as interrupts ---- */

/* Running timers by slot. A signal carries its timer's slot, not its address: one queued
 * before emb_native_timer_stop() may arrive after it, when the timer's memory is gone
 * (a timer in main()'s frame, delivered during exit), and finds the slot empty. */
#define EMB__TIMERS 32
static struct emb_native_timer *emb__timers[EMB__TIMERS];

static void emb__timer_signal(int signo, siginfo_t *info, void *uctx)
{
    (void)signo;
    (void)uctx;
    int slot = info->si_value.sival_int;
    struct emb_native_timer *t =
        slot >= 1 && slot <= EMB__TIMERS ? __atomic_load_n(&emb__timers[slot - 1], __ATOMIC_ACQUIRE) : NULL;
    if (t == NULL || t->isr == NULL)
        return;
    int saved_errno = errno;
    emb_isr_enter(t->irq);
    t->isr(t->arg);
    emb_isr_exit(t->irq, false);
    __atomic_fetch_add(&t->fired, 1u, __ATOMIC_RELAXED);
    errno = saved_errno;
}

int emb_native_timer_start(struct emb_native_timer *t, uint16_t irq, uint32_t period_us,
                           void (*isr)(void *arg), void *arg)
{
    t->irq = irq;
    t->isr = isr;
    t->arg = arg;
    t->fired = 0;
    int signo = SIGRTMIN + 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = emb__timer_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, NULL) != 0)
        return -1;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = signo;
    int slot = 0;
    for (int i = 0; i < EMB__TIMERS && slot == 0; i++) {
        struct emb_native_timer *none = NULL;
        if (__atomic_compare_exchange_n(&emb__timers[i], &none, t, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            slot = i + 1;
    }
    if (slot == 0)
        return -1;
    t->slot = slot;
    sev.sigev_value.sival_int = slot;
    timer_t id;
    if (timer_create(CLOCK_MONOTONIC, &sev, &id) != 0) {
        __atomic_store_n(&emb__timers[slot - 1], NULL, __ATOMIC_RELEASE);
        return -1;
    }
    t->timer = id;
    EMB_TRACE_obj_init(EMB__OBJ_TIMER, irq, "timer");
    struct itimerspec its = {
        .it_interval = {period_us / 1000000u, (long)(period_us % 1000000u) * 1000L},
        .it_value = {period_us / 1000000u, (long)(period_us % 1000000u) * 1000L},
    };
    return timer_settime(id, 0, &its, NULL);
}

void emb_native_timer_stop(struct emb_native_timer *t)
{
    if (t->timer != NULL) {
        timer_delete((timer_t)t->timer);
        t->timer = NULL;
    }
    if (t->slot >= 1 && t->slot <= EMB__TIMERS)
        __atomic_store_n(&emb__timers[t->slot - 1], NULL, __ATOMIC_RELEASE);
    t->slot = 0;
}

/* ---- Work queue ---- */

enum { EMB__WORK_IDLE = 0, EMB__WORK_QUEUED = 1, EMB__WORK_RUNNING = 2 };

static void *emb__workq_main(void *arg)
{
    struct emb_native_workq *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (q->head == q->tail && !q->stopping)
            pthread_cond_wait(&q->cond, &q->lock);
        if (q->head == q->tail)
            break;
        struct emb_native_work *w = q->items[q->tail % EMB_NATIVE_WORKQ_DEPTH];
        q->tail++;
        /* What the item says is read under the lock: its owner may queue it again (and
         * so rewrite it) as soon as it runs. */
        w->state = EMB__WORK_RUNNING;
        uint32_t handle = w->handle;
        uint64_t submitted_at = w->submitted_at;
        void (*handler)(struct emb_native_work *) = w->handler;
        pthread_mutex_unlock(&q->lock);
        uint64_t start = emb_port_timestamp();
        EMB_TRACE_work_start(handle, (uint32_t)(start - submitted_at));
        handler(w);
        uint32_t took = emb_monitor_cycles(start, emb_port_timestamp());
        EMB_TRACE_work_end(handle, took);
        emb_monitor_close(EMB_MONITOR_WORK_HANDLER, took, (uintptr_t)handler);
        pthread_mutex_lock(&q->lock);
        if (w->state == EMB__WORK_RUNNING)
            w->state = EMB__WORK_IDLE;
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

int emb_native_workq_start(struct emb_native_workq *q, const char *name)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, NULL);
    q->handle = emb__new_handle();
    q->info = emb__native_object_new(EMB__OBJ_WORKQ, q->handle, name != NULL ? name : "workq");
    EMB_TRACE_obj_init(EMB__OBJ_WORKQ, q->handle, name != NULL ? name : "workq");
    return emb_native_thread_create(&q->thread, name != NULL ? name : "workq", emb__workq_main, q);
}

int emb_native_workq_submit(struct emb_native_workq *q, struct emb_native_work *work)
{
    pthread_mutex_lock(&q->lock);
    if (work->handle == 0u)
        work->handle = emb__new_handle();
    int result;
    if (work->state == EMB__WORK_QUEUED)
        result = 1;
    else if (q->head - q->tail >= EMB_NATIVE_WORKQ_DEPTH || q->stopping)
        result = -1;
    else
        result = 0;
    /* Recorded under the lock, before the worker can see the item: submit precedes start. */
    EMB_TRACE_work_submit(q->handle, work->handle, (int8_t)result);
    if (result == 0) {
        work->state = EMB__WORK_QUEUED;
        work->submitted_at = emb_port_timestamp();
        q->items[q->head % EMB_NATIVE_WORKQ_DEPTH] = work;
        q->head++;
        if (CONFIG_EMB_STATS && q->info != NULL) {
            __atomic_fetch_add(&q->info->stats.acquisitions, 1u, __ATOMIC_RELAXED);
            emb__max32(&q->info->stats.max_queue, q->head - q->tail);
        }
        pthread_cond_signal(&q->cond);
    }
    pthread_mutex_unlock(&q->lock);
    return result;
}

bool emb_native_work_busy(struct emb_native_workq *q, const struct emb_native_work *work)
{
    pthread_mutex_lock(&q->lock);
    bool busy = work->state != EMB__WORK_IDLE;
    pthread_mutex_unlock(&q->lock);
    return busy;
}

void emb_native_workq_stop(struct emb_native_workq *q)
{
    pthread_mutex_lock(&q->lock);
    q->stopping = true;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
    emb_native_thread_join(&q->thread, NULL);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
}
