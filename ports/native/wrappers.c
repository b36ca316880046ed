/* Thin thread, mutex, sleep, timer and work-queue wrappers that call the kernel hooks:
 * what an RTOS would record, recorded by POSIX primitives. */
#define _GNU_SOURCE
#include <emb/native.h>

#include <emb/hooks.h>
#include <emb/trace_events.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

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

/* ---- Threads ---- */

static void *emb__thread_trampoline(void *arg)
{
    struct emb_native_thread *t = arg;
    emb_native_context_name(t->name);
    uint16_t self = emb_native_context_id();
    t->context_id = self;
    __atomic_store_n(&t->started, 1, __ATOMIC_RELEASE);
    EMB_TRACE_obj_init(EMB__OBJ_THREAD, self, t->name);
    EMB_TRACE_thread_init(self, 0u);
    EMB_TRACE_thread_start(self);
    EMB_TRACE_switch(EMB__IDLE, self, EMB__SWITCH_WAKE);
    void *result = t->entry(t->arg);
    EMB_TRACE_thread_exit(self, (int32_t)(intptr_t)result);
    EMB_TRACE_switch(self, EMB__IDLE, EMB__SWITCH_EXIT);
    emb_native_flush();
    return result;
}

int emb_native_thread_create(struct emb_native_thread *t, const char *name,
                             void *(*entry)(void *), void *arg)
{
    memset(t, 0, sizeof *t);
    t->entry = entry;
    t->arg = arg;
    strncpy(t->name, name != NULL ? name : "thread", sizeof t->name - 1u);
    return pthread_create(&t->pthread, NULL, emb__thread_trampoline, t);
}

int emb_native_thread_join(struct emb_native_thread *t, void **result)
{
    uint16_t self = emb_native_context_id();
    uint16_t target = __atomic_load_n(&t->started, __ATOMIC_ACQUIRE) ? t->context_id : EMB__IDLE;
    EMB_TRACE_wait_begin(self, EMB__WAIT_JOIN, target, 0u);
    uint64_t t0 = emb_port_timestamp();
    int rc = pthread_join(t->pthread, result);
    EMB_TRACE_wait_end(self, (int8_t)(rc == 0 ? 0 : -1), (uint32_t)(emb_port_timestamp() - t0));
    EMB_TRACE_thread_join(self, target);
    return rc;
}

/* ---- Mutexes ---- */

void emb_native_mutex_init(struct emb_native_mutex *m, const char *name)
{
    pthread_mutex_init(&m->mutex, NULL);
    m->handle = emb__new_handle();
    m->owner = EMB__IDLE;
    EMB_TRACE_obj_init(EMB__OBJ_MUTEX, m->handle, name != NULL ? name : "mutex");
}

void emb_native_mutex_lock(struct emb_native_mutex *m)
{
    uint16_t self = emb_native_context_id();
    if (pthread_mutex_trylock(&m->mutex) == 0) {
        m->owner = self;
        EMB_TRACE_mutex_lock(m->handle, false);
        return;
    }
    EMB_TRACE_mutex_lock(m->handle, true);
    EMB_TRACE_wait_begin(self, EMB__WAIT_MUTEX, m->handle, 0u);
    EMB_TRACE_switch(self, EMB__IDLE, EMB__SWITCH_BLOCK);
    uint64_t t0 = emb_port_timestamp();
    pthread_mutex_lock(&m->mutex);
    uint32_t blocked = (uint32_t)(emb_port_timestamp() - t0);
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
    uint64_t t0 = emb_port_timestamp();
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    uint32_t slept = (uint32_t)(emb_port_timestamp() - t0);
    EMB_TRACE_switch(EMB__IDLE, self, EMB__SWITCH_WAKE);
    EMB_TRACE_wait_end(self, 0, slept);
}

/* ---- Timer signals as interrupts ---- */

static void emb__timer_signal(int signo, siginfo_t *info, void *uctx)
{
    (void)signo;
    (void)uctx;
    struct emb_native_timer *t = info->si_value.sival_ptr;
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
    sev.sigev_value.sival_ptr = t;
    timer_t id;
    if (timer_create(CLOCK_MONOTONIC, &sev, &id) != 0)
        return -1;
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
        EMB_TRACE_work_end(handle, (uint32_t)(emb_port_timestamp() - start));
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
