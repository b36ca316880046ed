/* Threads, the ready structure, PendSV switching, the tick and timeouts. Where each hook
 * goes: emb_irq_lock() around every change of kernel state (the IRQ_LOCK monitor), the
 * switch event and the THREAD_RUN monitor where PendSV changes threads, ready/wait_begin/
 * wake/wait_end where a thread changes state, emb_isr_enter()/emb_isr_exit() around every
 * handler, tick/timeout_arm/timeout_fire in the tick. */
#include "kernel.h"

#include <string.h>

#include <emb/descriptor.h>
#include <emb/trace_events.h>

#include "mps2.h"

#include <emb/cortex_m.h>

#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SCB_SHPR3 (*(volatile uint32_t *)0xE000ED20u)
#define ICSR_PENDSVSET (1u << 28)
#define NO_THREAD 0xFFFFu

/* sched switch reasons (catalog/trace_events.yaml) */
enum { SW_PREEMPT = 0, SW_BLOCK = 1, SW_YIELD = 2, SW_EXIT = 3, SW_SLEEP = 4 };
/* ready causes, wake sources */
enum { READY_WAKE = 0, READY_TIMEOUT = 1, READY_CREATE = 3 };
enum { SRC_THREAD = 0, SRC_ISR = 1, SRC_TIMEOUT = 2 };

struct kern_cpu kern_cpu;
struct kern_ready kern_ready;
struct kern_thread *kern_all_threads;
struct kern_object *kern_registry[KERN_OBJECT_TYPES];
static struct kern_thread *all_tail;
static struct kern_thread *timeouts;
static uint8_t thread_count;
static uint32_t boot_psp[16]; /* where PendSV saves the start-up code's registers, once */
static unsigned tick_timer;   /* the CMSDK timer that ticks */
static uint32_t tick_period;  /* core cycles a tick */
static uint64_t tick_base;    /* the trace clock when the tick started */

/* ---- The ready structure ---- */

static void ready_push(struct kern_thread *t, bool front)
{
    uint8_t p = t->eff_priority;
    t->next_ready = NULL;
    if (kern_ready.head[p] == NULL) {
        kern_ready.head[p] = kern_ready.tail[p] = t;
    } else if (front) {
        t->next_ready = kern_ready.head[p];
        kern_ready.head[p] = t;
    } else {
        kern_ready.tail[p]->next_ready = t;
        kern_ready.tail[p] = t;
    }
    kern_ready.bitmap |= 1u << p;
}

static void ready_remove(struct kern_thread *t)
{
    uint8_t p = t->eff_priority;
    struct kern_thread **link = &kern_ready.head[p], *prev = NULL;
    while (*link != NULL && *link != t) {
        prev = *link;
        link = &(*link)->next_ready;
    }
    if (*link == NULL)
        return;
    *link = t->next_ready;
    if (kern_ready.tail[p] == t)
        kern_ready.tail[p] = prev;
    if (kern_ready.head[p] == NULL)
        kern_ready.bitmap &= ~(1u << p);
}

static uint8_t ready_top(void)
{
    return kern_ready.bitmap ? (uint8_t)(31 - __builtin_clz(kern_ready.bitmap)) : 0u;
}

static void pend_switch(void)
{
    kern_cpu.reschedule = 1u;
    if (kern_cpu.sched_lock == 0u)
        SCB_ICSR = ICSR_PENDSVSET;
}

static void maybe_preempt(const struct kern_thread *t)
{
    if (kern_cpu.current != NULL && t->eff_priority > kern_cpu.current->eff_priority)
        pend_switch();
}

void kern__ready(struct kern_thread *t, uint8_t cause)
{
    t->state = KERN_READY;
    ready_push(t, false);
    EMB_TRACE_ready(t->index, cause);
    maybe_preempt(t);
}

/* ---- Threads ---- */

static void thread_exit(void)
{
    emb_port_irq_state s = emb_irq_lock();
    struct kern_thread *t = kern_cpu.current;
    t->state = KERN_DEAD;
    EMB_TRACE_thread_exit(t->index, 0);
    pend_switch();
    emb_irq_unlock(s);
    for (;;) {
    }
}

void kern__object_init(struct kern_object *o, uint8_t type, const char *name)
{
    o->type = type;
    o->lifecycle = 1u;
    o->generation++;
    o->name = name;
    o->handle = (uint32_t)(uintptr_t)o;
    o->registry_next = kern_registry[type % KERN_OBJECT_TYPES];
    kern_registry[type % KERN_OBJECT_TYPES] = o;
    EMB_TRACE_obj_init(type, o->handle, name);
}

/* The frame the first switch to the thread pops: r4-r11 as PendSV saves them, then the
 * hardware's exception frame with the entry as pc and the exit path as lr. */
static uint32_t *first_frame(uint32_t *top, void (*entry)(void *), void *arg)
{
    uint32_t *sp = (uint32_t *)((uintptr_t)top & ~(uintptr_t)7u);
    *--sp = 0x01000000u;                              /* xpsr: Thumb */
    *--sp = (uint32_t)(uintptr_t)entry & ~1u;         /* pc */
    *--sp = (uint32_t)(uintptr_t)thread_exit;         /* lr */
    for (int r = 0; r < 4; r++)
        *--sp = 0u;                                   /* r12, r3, r2, r1 */
    *--sp = (uint32_t)(uintptr_t)arg;                 /* r0 */
    for (int r = 0; r < 8; r++)
        *--sp = 0u;                                   /* r11 .. r4 */
    return sp;
}

void kern_thread_create(struct kern_thread *t, const char *name, uint8_t priority,
                        uint32_t *stack, uint32_t stack_bytes, void (*entry)(void *), void *arg)
{
    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < stack_bytes / 4u; i++)
        stack[i] = EMB_STACK_PAINT * 0x01010101u;
    t->stack_low = stack;
    t->stack_size = stack_bytes;
    t->entry = entry;
    t->sp = first_frame(stack + stack_bytes / 4u, entry, arg);
    t->base_priority = t->eff_priority = priority < KERN_PRIORITIES ? priority : KERN_PRIORITIES - 1u;
    t->wait_reason = KERN_WAIT_NONE;
    strncpy(t->name, name, sizeof t->name - 1u);
    emb_port_irq_state s = emb_irq_lock();
    t->index = thread_count++;
    if (all_tail != NULL)
        all_tail->next_all = t;
    else
        kern_all_threads = t;
    all_tail = t;
    EMB_TRACE_obj_init(0u, t->index, t->name);
    EMB_TRACE_thread_init(t->index, t->base_priority);
    kern__ready(t, READY_CREATE);
    emb_irq_unlock(s);
}

struct kern_thread *kern_self(void)
{
    return kern_cpu.current;
}

uint32_t kern_ticks(void)
{
    return kern_cpu.tick;
}

void kern__set_priority(struct kern_thread *t, uint8_t eff, uint8_t cause)
{
    if (eff == t->eff_priority)
        return;
    bool ready = t->state == KERN_READY;
    if (ready)
        ready_remove(t);
    t->eff_priority = eff;
    if (ready)
        ready_push(t, false);
    EMB_TRACE_thread_priority(t->index, t->base_priority, eff, cause);
    if (t == kern_cpu.current) {
        if (ready_top() > eff)
            pend_switch(); /* lowered below a ready thread */
    } else if (ready) {
        maybe_preempt(t);
    }
}

/* ---- Switching ---- */

static void switch_out(struct kern_thread *cur, uint64_t now)
{
    uint32_t ran = emb_monitor_cycles(cur->switched_in, now);
    cur->stats.run_cycles += now - cur->switched_in;
    cur->stats.switches++;
    emb_monitor_close(EMB_MONITOR_THREAD_RUN, ran, (uintptr_t)cur->entry);
}

/* PendSV's body: `sp` is where the running thread's registers were saved; returns where
 * the next thread's are. The kernel's own accounting (run time, switches) is taken at
 * the same point as the switch event, so the trace and the kernel agree. */
__attribute__((used)) uint32_t *kern__switch(uint32_t *sp)
{
    emb_port_irq_state s = emb_irq_lock();
    struct kern_thread *cur = kern_cpu.current, *next;
    uint8_t reason = SW_PREEMPT;
    bool yielding = kern_cpu.yielding != 0u;
    kern_cpu.reschedule = 0u;
    kern_cpu.yielding = 0u;
    if (cur != NULL) {
        cur->sp = sp;
        if (cur->state == KERN_RUNNING) {
            if (kern_cpu.sched_lock != 0u || (!yielding && cur->eff_priority >= ready_top())) {
                emb_irq_unlock(s);
                return sp;
            }
            cur->state = KERN_READY;
            ready_push(cur, !yielding);
            reason = yielding ? SW_YIELD : SW_PREEMPT;
        } else {
            reason = cur->state == KERN_DEAD ? SW_EXIT
                     : cur->wait_reason == KERN_WAIT_SLEEP ? SW_SLEEP : SW_BLOCK;
        }
    }
    uint8_t top = ready_top();
    next = kern_ready.head[top];
    ready_remove(next);
    next->state = KERN_RUNNING;
    if (next == cur) {
        emb_irq_unlock(s);
        return sp;
    }
    uint64_t now = emb_port_timestamp();
    if (cur != NULL)
        switch_out(cur, now);
    EMB_TRACE_switch(cur != NULL ? cur->index : NO_THREAD, next->index, reason);
    kern_cpu.switches++;
    next->switched_in = now;
    kern_cpu.current = next;
    emb_irq_unlock(s);
    return next->sp;
}

/* Saves r4-r11 on the thread's stack (the hardware saved the rest), lets kern__switch
 * choose, restores the next thread's and returns to thread mode on the process stack. */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm__ __volatile__("mrs r0, psp\n\t"
                         "stmdb r0!, {r4-r11}\n\t"
                         "bl kern__switch\n\t"
                         "ldmia r0!, {r4-r11}\n\t"
                         "msr psp, r0\n\t"
                         "mvn lr, #2\n\t" /* EXC_RETURN 0xFFFFFFFD: thread mode, PSP */
                         "bx lr\n\t");
}

void kern_start(unsigned timer, uint32_t tick_reload)
{
    SCB_SHPR3 |= 0xFFu << 16; /* PendSV the least urgent exception: it switches last */
    __asm__ __volatile__("msr psp, %0" ::"r"(boot_psp + 16) : "memory");
    tick_timer = timer;
    tick_period = tick_reload + 1u;
    tick_base = emb_port_timestamp();
    mps2_timer_start(timer, tick_reload);
    emb_port_irq_state s = emb_irq_lock();
    pend_switch();
    emb_irq_unlock(s);
    for (;;) {
    }
}

void kern_yield(void)
{
    emb_port_irq_state s = emb_irq_lock();
    EMB_TRACE_yield();
    kern_cpu.yielding = 1u;
    pend_switch();
    emb_irq_unlock(s);
}

void kern_sched_lock(void)
{
    emb_port_irq_state s = emb_irq_lock();
    kern_cpu.sched_lock++;
    emb_irq_unlock(s);
    emb_sched_lock();
}

void kern_sched_unlock(void)
{
    emb_sched_unlock();
    emb_port_irq_state s = emb_irq_lock();
    if (kern_cpu.sched_lock > 0u && --kern_cpu.sched_lock == 0u && kern_cpu.reschedule)
        pend_switch();
    emb_irq_unlock(s);
}

/* ---- Waiting and waking ---- */

static void timeout_arm(struct kern_thread *t, uint32_t due)
{
    struct kern_thread **link = &timeouts;
    while (*link != NULL && (int32_t)((*link)->wake_tick - due) <= 0)
        link = &(*link)->next_timeout;
    t->wake_tick = due;
    t->next_timeout = *link;
    *link = t;
    t->timeout_armed = 1u;
    EMB_TRACE_timeout_arm(t->index, due);
}

static void timeout_cancel(struct kern_thread *t)
{
    for (struct kern_thread **link = &timeouts; *link != NULL; link = &(*link)->next_timeout)
        if (*link == t) {
            *link = t->next_timeout;
            break;
        }
    t->timeout_armed = 0u;
}

/* Most urgent first, in arrival order within a priority. */
static void wait_insert(struct kern_wait_queue *q, struct kern_thread *t)
{
    struct kern_thread **link = &q->head;
    while (*link != NULL && (*link)->eff_priority >= t->eff_priority)
        link = &(*link)->next_wait;
    t->next_wait = *link;
    *link = t;
    t->wait_queue = q;
}

static void wait_remove(struct kern_thread *t)
{
    struct kern_thread **link = &t->wait_queue->head;
    while (*link != NULL && *link != t)
        link = &(*link)->next_wait;
    if (*link == t)
        *link = t->next_wait;
}

/* A waiter whose priority changed goes to its new place in its queue. */
void kern__wait_requeue(struct kern_thread *t)
{
    struct kern_wait_queue *q = t->wait_queue;
    if (q == NULL)
        return;
    wait_remove(t);
    wait_insert(q, t);
}

/* The most urgent waiter (kern__wake() takes it off the queue). */
struct kern_thread *kern__first_waiter(struct kern_wait_queue *q)
{
    return q->head;
}

/* Blocks the running thread: call with the interrupt lock held (*lock); returns with it
 * held again, once woken, with the wake's result. */
int kern__block(struct kern_wait_queue *q, uint8_t reason, void *object, uint32_t handle,
                uint32_t timeout, emb_port_irq_state *lock)
{
    struct kern_thread *t = kern_cpu.current;
    t->state = KERN_BLOCKED;
    t->wait_reason = reason;
    t->wait_object = object;
    t->wake_result = KERN_OK;
    t->wait_queue = NULL;
    if (q != NULL)
        wait_insert(q, t);
    uint32_t deadline = timeout == KERN_FOREVER ? 0u : kern_cpu.tick + timeout;
    if (timeout != KERN_FOREVER)
        timeout_arm(t, deadline);
    t->blocked_since = emb_port_timestamp();
    EMB_TRACE_wait_begin(t->index, reason, handle, deadline);
    pend_switch();
    emb_irq_unlock(*lock); /* PendSV runs here: another thread until this one is woken */
    *lock = emb_irq_lock();
    uint64_t blocked = emb_port_timestamp() - t->blocked_since;
    t->stats.blocked_cycles += blocked;
    t->wait_reason = KERN_WAIT_NONE;
    t->wait_object = NULL;
    EMB_TRACE_wait_end(t->index, t->wake_result, emb_monitor_cycles(0u, blocked));
    return t->wake_result;
}

void kern__wake(struct kern_thread *t, int8_t result, uint8_t source)
{
    if (t->state != KERN_BLOCKED)
        return;
    if (t->wait_queue != NULL) {
        wait_remove(t);
        t->wait_queue = NULL;
    }
    if (t->timeout_armed)
        timeout_cancel(t);
    t->wake_result = result;
    struct kern_thread *waker = kern_cpu.current;
    EMB_TRACE_wake(source, source == SRC_THREAD && waker != NULL ? waker->index : NO_THREAD,
                   t->index, result);
    kern__ready(t, source == SRC_TIMEOUT ? READY_TIMEOUT : READY_WAKE);
}

void kern_sleep(uint32_t ticks)
{
    emb_port_irq_state s = emb_irq_lock();
    (void)kern__block(NULL, KERN_WAIT_SLEEP, NULL, 0u, ticks, &s);
    emb_irq_unlock(s);
}

/* ---- Interrupts and the tick ---- */

void kern_isr_enter(uint16_t irq)
{
    kern_cpu.irq_nesting++;
    emb_isr_enter(irq);
}

void kern_isr_exit(uint16_t irq)
{
    emb_isr_exit(irq, kern_cpu.reschedule != 0u);
    kern_cpu.irq_nesting--;
}

/* The kernel's time is the trace clock's (the port's free-running timestamp, at the
 * core clock like the tick timer): the tick is how many tick periods have passed since
 * kern_start, whichever interrupt notices. The tick timer is only the alarm that makes
 * one notice, so a stretched period (tickless idle) or a late or lost interrupt costs
 * no tick. */
/* Brings the tick up to the clock (interrupt lock held): the timeouts and delayed work
 * due by now. Returns the ticks that passed. */
static uint32_t ticks_catch_up(void)
{
    uint32_t now = (uint32_t)((emb_port_timestamp() - tick_base) / tick_period);
    uint32_t passed = now - kern_cpu.tick;
    if (passed == 0u)
        return 0u;
    kern_cpu.tick = now;
    EMB_TRACE_tick(now);
    while (timeouts != NULL && (int32_t)(now - timeouts->wake_tick) >= 0) {
        struct kern_thread *t = timeouts;
        EMB_TRACE_timeout_fire(t->index);
        kern__wake(t, t->wait_reason == KERN_WAIT_SLEEP ? KERN_OK : KERN_TIMEOUT, SRC_TIMEOUT);
    }
    kern__work_tick(now);
    return passed;
}

void kern_tick_isr(void)
{
    emb_port_irq_state s = emb_irq_lock();
    kern_cpu.tick_irqs++;
    (void)ticks_catch_up();
    emb_irq_unlock(s);
}

/* ---- Tickless idle ---- */

/* Ticks from now to the earliest timeout or delayed work; KERN_FOREVER for none. */
static uint32_t ticks_to_deadline(void)
{
    uint32_t now = kern_cpu.tick, n = KERN_FOREVER, due;
    if (timeouts != NULL)
        n = (int32_t)(timeouts->wake_tick - now) > 0 ? timeouts->wake_tick - now : 0u;
    if (kern__work_next_due(&due))
        n = (int32_t)(due - now) <= 0 ? 0u : due - now < n ? due - now : n;
    return n;
}

/* Core cycles from the clock's `now` to the start of tick `tick`. */
static uint32_t cycles_to_tick(uint64_t now, uint32_t tick)
{
    uint64_t at = tick_base + (uint64_t)tick * tick_period;
    return at > now ? (uint32_t)(at - now) : 1u;
}

void kern_idle_sleep(void)
{
    uint32_t n = ticks_to_deadline();
    if (n > KERN_TICKLESS_MAX)
        n = KERN_TICKLESS_MAX;
    if (n < 2u || kern_cpu.reschedule || tick_period == 0u) {
        __asm__ __volatile__("wfi" ::: "memory"); /* a tick is due next anyway */
        return;
    }
    uint64_t t0 = emb_port_timestamp();
    uint32_t until = kern_cpu.tick + n;
    if (!mps2_timer_pending(tick_timer))
        mps2_timer_set_value(tick_timer, cycles_to_tick(t0, until)); /* one long period */
    EMB_TRACE_tickless_sleep(tick_base + (uint64_t)until * tick_period);
    __asm__ __volatile__("wfi" ::: "memory"); /* until an interrupt: the tick's, or another's */
    uint64_t t1 = emb_port_timestamp();
    /* Woken early: the alarm goes back to the next tick (it reloads by itself when it
     * ran out, and its interrupt catches up then). */
    if (!mps2_timer_pending(tick_timer))
        mps2_timer_set_value(tick_timer,
                             cycles_to_tick(t1, (uint32_t)((t1 - tick_base) / tick_period) + 1u));
    kern_cpu.tickless_sleeps++;
    kern_cpu.ticks_slept += ticks_catch_up();
    if (t1 - t0 > kern_cpu.longest_tickless)
        kern_cpu.longest_tickless = (uint32_t)(t1 - t0);
    EMB_TRACE_tickless_wake(emb_monitor_cycles(t0, t1));
}

/* ---- Faults (emb/cortex_m.h) ---- */

/* The flight recorder holds the last packets only, long after the threads and objects
 * were named: the names go in again at the fault, and the fault names the thread. */
uint16_t emb_cm_fault_announce(void)
{
    for (struct kern_thread *t = kern_all_threads; t != NULL; t = t->next_all)
        EMB_TRACE_obj_init(0u, t->index, t->name);
    for (unsigned type = 0; type < KERN_OBJECT_TYPES; type++)
        for (struct kern_object *o = kern_registry[type]; o != NULL; o = o->registry_next)
            EMB_TRACE_obj_init(o->type, o->handle, o->name);
    return kern_cpu.current != NULL ? kern_cpu.current->index : NO_THREAD;
}

/* ---- Statistics (emb/monitor.h): the kernel observes its threads ---- */

static uint32_t stack_used(const struct kern_thread *t)
{
    const uint8_t *p = (const uint8_t *)t->stack_low, *end = p + t->stack_size;
    while (p < end && *p == EMB_STACK_PAINT)
        p++;
    return (uint32_t)(end - p);
}

emb_status emb_stats_thread_get(emb_thread_t thread, emb_stats_thread_t *out)
{
    if (out == NULL)
        return EMB_E_INVALID;
    for (struct kern_thread *t = kern_all_threads; t != NULL; t = t->next_all) {
        if (t->index != thread)
            continue;
        emb_port_irq_state s = emb_irq_lock();
        *out = t->stats;
        if (t == kern_cpu.current)
            out->run_cycles += emb_port_timestamp() - t->switched_in;
        emb_irq_unlock(s);
        out->stack_high_water = stack_used(t);
        return EMB_OK;
    }
    return EMB_E_NOTFOUND;
}
