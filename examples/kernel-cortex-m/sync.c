/* Mutexes with priority inheritance, counting semaphores, a message queue, notification
 * bits and delayed work. Each records its outcome where it is decided: mutex_lock when
 * the mutex is taken (contended or not), prio_inherit and thread_priority where a holder
 * is boosted and restored, sem_give, msgq_send/receive/full_block, notify_set/wait,
 * dwork_schedule/work_submit/work_start/work_end. */
#include "kernel.h"

#include <emb/trace_events.h>

enum { SRC_THREAD = 0, SRC_ISR = 1 };
enum { PRIO_INHERIT = 1, PRIO_RESTORE = 2 };
enum { OBJ_MUTEX = 1, OBJ_SEM = 2, OBJ_QUEUE = 3, OBJ_WORK = 10 };
#define NO_THREAD 0xFFFFu

static uint8_t wake_source(void)
{
    return kern_cpu.irq_nesting ? SRC_ISR : SRC_THREAD;
}

/* ---- Mutexes ---- */

/* The mutex `t` waits for, after moving `t` to its place in the mutex's waiters for its
 * new priority (requeue); NULL when `t` waits for no mutex. */
struct kern_mutex *kern__requeue_mutex_waiter(struct kern_thread *t)
{
    if (t->state != KERN_BLOCKED || t->wait_reason != KERN_WAIT_MUTEX || t->wait_queue == NULL)
        return NULL;
    struct kern_mutex *m = t->wait_object;
    kern__wait_requeue(t);
    EMB_TRACE_requeue(t->index, m->obj.handle);
    return m;
}

void kern_mutex_init(struct kern_mutex *m, const char *name)
{
    kern__object_init(&m->obj, OBJ_MUTEX, name);
}

static void mutex_take(struct kern_mutex *m, struct kern_thread *t)
{
    m->owner = t;
    m->next_owned = t->owned;
    t->owned = m;
    m->stats.acquisitions++;
}

/* The priority a thread is owed: its own, or its most urgent waiter's on any mutex it
 * holds. */
static uint8_t owed_priority(const struct kern_thread *t)
{
    uint8_t p = t->base_priority;
    for (const struct kern_mutex *m = t->owned; m != NULL; m = m->next_owned)
        if (m->waiters.head != NULL && m->waiters.head->eff_priority > p)
            p = m->waiters.head->eff_priority;
    return p;
}

/* Raises the owner of `m` to `self`'s priority, and on along the chain: when the owner
 * itself waits for a mutex (A waits for m held by B, B waits for m2 held by C), C is
 * raised too, link by link, each recorded by a prio_inherit naming the mutex it passed
 * through. A chain back to `self` is a deadlock; one longer than KERN_PI_MAX_DEPTH links
 * stops there (pi_depth_exceeded). */
static void inherit(struct kern_mutex *m, struct kern_thread *self)
{
    uint8_t prio = self->eff_priority;
    for (uint8_t depth = 1u; m != NULL && m->owner != NULL; depth++) {
        struct kern_thread *owner = m->owner;
        if (owner == self) {
            EMB_TRACE_deadlock_detected(self->index, m->obj.handle);
            return;
        }
        if (owner->eff_priority >= prio)
            return;
        if (depth > KERN_PI_MAX_DEPTH) {
            EMB_TRACE_pi_depth_exceeded(owner->index, depth);
            return;
        }
        EMB_TRACE_prio_inherit(owner->index, owner->eff_priority, prio, m->obj.handle);
        uint32_t boost = (uint32_t)(prio - owner->base_priority);
        if (boost > owner->stats.max_boost)
            owner->stats.max_boost = boost;
        kern__set_priority(owner, prio, PRIO_INHERIT);
        m = kern__requeue_mutex_waiter(owner);
    }
}

/* After a waiter left (a timeout) or a mutex changed hands: each thread along the chain
 * from `t` gets the priority it is now owed, until one keeps its own. */
static void settle(struct kern_thread *t)
{
    for (unsigned depth = 0; t != NULL && depth <= KERN_PI_MAX_DEPTH; depth++) {
        uint8_t owed = owed_priority(t);
        if (owed == t->eff_priority)
            return;
        kern__set_priority(t, owed, PRIO_RESTORE);
        struct kern_mutex *next = kern__requeue_mutex_waiter(t);
        t = next != NULL ? next->owner : NULL;
    }
}

int kern_mutex_lock(struct kern_mutex *m, uint32_t timeout)
{
    emb_port_irq_state s = emb_irq_lock();
    struct kern_thread *self = kern_cpu.current;
    int rc = KERN_OK;
    if (m->owner == self) {
        m->depth++;
    } else if (m->owner == NULL) {
        mutex_take(m, self);
        EMB_TRACE_mutex_lock(m->obj.handle, false);
    } else {
        self->stats.contentions++;
        m->stats.contentions++;
        inherit(m, self);
        uint64_t t0 = emb_port_timestamp();
        rc = kern__block(&m->waiters, KERN_WAIT_MUTEX, m, m->obj.handle, timeout, &s);
        uint32_t waited = emb_monitor_cycles(t0, emb_port_timestamp());
        m->stats.wait_cycles += waited;
        if (waited > m->stats.max_wait_cycles)
            m->stats.max_wait_cycles = waited;
        if (rc == KERN_OK)
            EMB_TRACE_mutex_lock(m->obj.handle, true); /* handed over by the unlock */
        else if (m->owner != NULL)
            settle(m->owner);
    }
    emb_irq_unlock(s);
    return rc;
}

static void unlink_owned(struct kern_thread *t, struct kern_mutex *m)
{
    for (struct kern_mutex **link = &t->owned; *link != NULL; link = &(*link)->next_owned)
        if (*link == m) {
            *link = m->next_owned;
            break;
        }
    m->next_owned = NULL;
}

void kern_mutex_unlock(struct kern_mutex *m)
{
    emb_port_irq_state s = emb_irq_lock();
    struct kern_thread *self = kern_cpu.current;
    if (m->owner != self) {
        emb_irq_unlock(s);
        return;
    }
    if (m->depth > 0u) {
        m->depth--;
        emb_irq_unlock(s);
        return;
    }
    unlink_owned(self, m);
    struct kern_thread *next = kern__first_waiter(&m->waiters);
    m->owner = NULL;
    EMB_TRACE_mutex_unlock(m->obj.handle, next != NULL ? next->index : NO_THREAD);
    if (next != NULL) {
        kern__wake(next, KERN_OK, SRC_THREAD); /* leaves the wait queue first */
        mutex_take(m, next);
    }
    kern__set_priority(self, owed_priority(self), PRIO_RESTORE);
    emb_irq_unlock(s);
}

/* ---- Counting semaphores ---- */

void kern_sem_init(struct kern_sem *sem, const char *name, uint32_t count, uint32_t limit)
{
    sem->count = count;
    sem->limit = limit;
    kern__object_init(&sem->obj, OBJ_SEM, name);
}

int kern_sem_take(struct kern_sem *sem, uint32_t timeout)
{
    emb_port_irq_state s = emb_irq_lock();
    int rc = KERN_OK;
    if (sem->count > 0u)
        sem->count--;
    else
        rc = kern__block(&sem->waiters, KERN_WAIT_SEM, sem, sem->obj.handle, timeout, &s);
    emb_irq_unlock(s);
    return rc;
}

void kern_sem_give_isr(struct kern_sem *sem)
{
    emb_port_irq_state s = emb_irq_lock();
    struct kern_thread *t = kern__first_waiter(&sem->waiters);
    EMB_TRACE_sem_give(sem->obj.handle, t != NULL ? t->index : NO_THREAD);
    if (t != NULL)
        kern__wake(t, KERN_OK, wake_source()); /* the count goes to it directly */
    else if (sem->count < sem->limit)
        sem->count++;
    emb_irq_unlock(s);
}

/* ---- The message queue: words, first in first out ---- */

void kern_queue_init(struct kern_queue *q, const char *name, uint32_t *slots, uint32_t capacity)
{
    q->slots = slots;
    q->capacity = capacity;
    kern__object_init(&q->obj, OBJ_QUEUE, name);
}

int kern_queue_send(struct kern_queue *q, uint32_t msg, uint32_t timeout)
{
    emb_port_irq_state s = emb_irq_lock();
    int rc = KERN_OK;
    while (rc == KERN_OK && q->used == q->capacity) {
        EMB_TRACE_msgq_full_block(q->obj.handle);
        rc = kern__block(&q->senders, KERN_WAIT_QUEUE, q, q->obj.handle, timeout, &s);
    }
    if (rc == KERN_OK) {
        q->slots[(q->head + q->used++) % q->capacity] = msg;
        EMB_TRACE_msgq_send(q->obj.handle, 1u, (uint16_t)q->used);
        struct kern_thread *r = kern__first_waiter(&q->receivers);
        if (r != NULL)
            kern__wake(r, KERN_OK, wake_source());
    }
    emb_irq_unlock(s);
    return rc;
}

int kern_queue_receive(struct kern_queue *q, uint32_t *msg, uint32_t timeout)
{
    emb_port_irq_state s = emb_irq_lock();
    int rc = KERN_OK;
    while (rc == KERN_OK && q->used == 0u)
        rc = kern__block(&q->receivers, KERN_WAIT_QUEUE, q, q->obj.handle, timeout, &s);
    if (rc == KERN_OK) {
        *msg = q->slots[q->head];
        q->head = (q->head + 1u) % q->capacity;
        q->used--;
        EMB_TRACE_msgq_receive(q->obj.handle, 1u, (uint16_t)q->used);
        struct kern_thread *w = kern__first_waiter(&q->senders);
        if (w != NULL)
            kern__wake(w, KERN_OK, SRC_THREAD);
    }
    emb_irq_unlock(s);
    return rc;
}

/* ---- Notification bits ---- */

void kern_notify_isr(struct kern_thread *t, uint32_t bits)
{
    emb_port_irq_state s = emb_irq_lock();
    t->notify_bits |= bits;
    bool woke = t->state == KERN_BLOCKED && t->wait_reason == KERN_WAIT_NOTIFY &&
                (t->notify_bits & t->notify_mask) != 0u;
    EMB_TRACE_notify_set(t->index, woke, bits);
    if (woke)
        kern__wake(t, KERN_OK, wake_source());
    emb_irq_unlock(s);
}

uint32_t kern_notify_wait(uint32_t mask, uint32_t timeout)
{
    emb_port_irq_state s = emb_irq_lock();
    struct kern_thread *self = kern_cpu.current;
    int rc = KERN_OK;
    if ((self->notify_bits & mask) == 0u) {
        self->notify_mask = mask;
        rc = kern__block(NULL, KERN_WAIT_NOTIFY, self, self->index, timeout, &s);
    }
    uint32_t got = self->notify_bits & mask;
    self->notify_bits &= ~mask;
    EMB_TRACE_notify_wait(mask, 0u, (int8_t)rc);
    emb_irq_unlock(s);
    return got;
}

/* ---- Delayed work, run by the work thread ---- */

struct kern_thread *kern_work_runner;
static struct kern_work *delayed, *queued, *queued_tail;

void kern_work_init(struct kern_work *w, const char *name, void (*handler)(struct kern_work *))
{
    w->handler = handler;
    kern__object_init(&w->obj, OBJ_WORK, name);
}

void kern_work_schedule(struct kern_work *w, uint32_t delay)
{
    emb_port_irq_state s = emb_irq_lock();
    if (w->state == 0u) {
        w->due_tick = kern_cpu.tick + delay;
        w->state = 1u;
        w->next = delayed;
        delayed = w;
        EMB_TRACE_dwork_schedule(w->obj.handle, w->due_tick);
    }
    emb_irq_unlock(s);
}

/* From the tick, interrupt lock held: the delayed items that are due go to the queue. */
void kern__work_tick(uint32_t tick)
{
    for (struct kern_work **link = &delayed; *link != NULL;) {
        struct kern_work *w = *link;
        if ((int32_t)(tick - w->due_tick) < 0) {
            link = &w->next;
            continue;
        }
        *link = w->next;
        w->next = NULL;
        w->state = 2u;
        w->submitted = emb_port_timestamp();
        if (queued_tail != NULL)
            queued_tail->next = w;
        else
            queued = w;
        queued_tail = w;
        EMB_TRACE_work_submit(0u, w->obj.handle, 0);
        if (kern_work_runner != NULL)
            kern_notify_isr(kern_work_runner, 1u);
    }
}

/* The tick the earliest delayed item falls due at, or false (interrupt lock held). */
bool kern__work_next_due(uint32_t *due)
{
    bool any = false;
    for (const struct kern_work *w = delayed; w != NULL; w = w->next)
        if (!any || (int32_t)(w->due_tick - *due) < 0) {
            *due = w->due_tick;
            any = true;
        }
    return any;
}

static struct kern_work *work_take(void)
{
    emb_port_irq_state s = emb_irq_lock();
    struct kern_work *w = queued;
    if (w != NULL) {
        queued = w->next;
        if (queued == NULL)
            queued_tail = NULL;
        w->state = 3u;
    }
    emb_irq_unlock(s);
    return w;
}

void kern_work_thread(void *arg)
{
    (void)arg;
    kern_work_runner = kern_cpu.current;
    for (;;) {
        (void)kern_notify_wait(1u, KERN_FOREVER);
        for (struct kern_work *w; (w = work_take()) != NULL;) {
            uint64_t t0 = emb_port_timestamp();
            EMB_TRACE_work_start(w->obj.handle, emb_monitor_cycles(w->submitted, t0));
            w->handler(w);
            uint32_t took = emb_monitor_cycles(t0, emb_port_timestamp());
            EMB_TRACE_work_end(w->obj.handle, took);
            emb_monitor_close(EMB_MONITOR_WORK_HANDLER, took, (uintptr_t)w->handler);
            w->state = 0u;
        }
    }
}
