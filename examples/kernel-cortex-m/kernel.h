/* A small preemptive kernel for ARMv7-M (Cortex-M3, M4, M7), written to show where each
 * of the library's hooks goes (README.md). Threads with their own stacks and priorities,
 * PendSV switching, a periodic tick, mutexes with priority inheritance, counting
 * semaphores, a message queue, per-thread notification bits and delayed work. Every
 * operation records what it did through the catalogue's emitters (emb/trace_events.h) and
 * the hooks (emb/hooks.h), and the debug descriptor learns the layout of the structures
 * below from layout.c, so a tool lists the threads without knowing this kernel.
 *
 * Priorities: a larger number is more urgent; 0 is the idle thread's. Everything here is
 * static: the caller owns every control block and stack. */
#ifndef KERNEL_H
#define KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/hooks.h>
#include <emb/monitor.h>

#define KERN_PRIORITIES 8u
#define KERN_MAX_THREADS 8u
#define KERN_FOREVER 0xFFFFFFFFu
#define KERN_PI_MAX_DEPTH 8u /* links of a priority inheritance chain followed */

/* The catalogue's wait_begin reasons (catalog/trace_events.yaml), and none. */
enum kern_wait_reason {
    KERN_WAIT_MUTEX = 0,
    KERN_WAIT_SEM = 1,
    KERN_WAIT_QUEUE = 2,
    KERN_WAIT_SLEEP = 5,
    KERN_WAIT_NOTIFY = 7,
    KERN_WAIT_NONE = 8,
};

enum kern_state {
    KERN_READY = 0,
    KERN_RUNNING = 1,
    KERN_BLOCKED = 2,
    KERN_DEAD = 3,
};

/* A wait's result (wake_result, wait_end's result). */
#define KERN_OK 0
#define KERN_TIMEOUT (-1)

struct kern_mutex;
struct kern_wait_queue;

/* The thread control block. `sp` is first so the switch code finds it at offset 0. */
struct kern_thread {
    uint32_t *sp;                    /* saved stack pointer while not running */
    struct kern_thread *next_ready;  /* ready list of its priority */
    struct kern_thread *next_all;    /* every thread, in creation order */
    struct kern_thread *next_wait;   /* the wait queue it is on */
    struct kern_wait_queue *wait_queue;
    struct kern_thread *next_timeout;/* the timeout list: sorted by wake_tick */
    uint32_t wake_tick;              /* timeout node: the tick it times out at */
    uint32_t timeout_armed;          /* 1 while on the timeout list */
    void *wait_object;               /* what it waits for */
    uint8_t state;                   /* enum kern_state */
    uint8_t wait_reason;             /* enum kern_wait_reason */
    uint8_t base_priority;
    uint8_t eff_priority;            /* raised by priority inheritance */
    int8_t wake_result;
    uint8_t index;                   /* as the trace names it */
    uint16_t pad;
    struct kern_mutex *owned;        /* mutexes it holds, the last taken first */
    uint32_t notify_bits;            /* pending notification bits */
    uint32_t notify_mask;            /* bits a notify wait waits for */
    uint64_t switched_in;            /* trace clock when it last started running */
    uint64_t blocked_since;
    uint32_t *stack_low;
    uint32_t stack_size;             /* bytes */
    void (*entry)(void *arg);
    char name[12];
    emb_stats_thread_t stats;        /* what emb_stats_thread_get() returns */
};

struct kern_wait_queue {
    struct kern_thread *head;        /* most urgent first */
};

/* The per-CPU state a debugger reads (the descriptor's scheduler section). */
struct kern_cpu {
    struct kern_thread *current;
    struct kern_thread *next;        /* chosen by PendSV */
    uint32_t irq_nesting;            /* interrupt handlers running */
    uint32_t sched_lock;             /* kern_sched_lock() depth */
    uint32_t reschedule;             /* a switch is pending */
    uint32_t yielding;
    uint32_t tick;
    uint32_t switches;               /* every switch, counted here and traced */
    uint32_t tick_irqs;              /* tick interrupts taken */
    uint32_t tickless_sleeps;        /* idle sleeps with the tick stretched */
    uint32_t ticks_slept;            /* ticks they counted without an interrupt */
    uint32_t longest_tickless;       /* the longest, in trace clock ticks */
};

/* The ready structure: one FIFO per priority and a bitmap of the non-empty ones. */
struct kern_ready {
    uint32_t bitmap;
    struct kern_thread *head[KERN_PRIORITIES];
    struct kern_thread *tail[KERN_PRIORITIES];
};

/* Every kernel object starts with this header (the descriptor's type header offsets). */
struct kern_object {
    uint8_t type;                    /* obj_init's type values: 1 mutex, 2 sem, 3 queue */
    uint8_t lifecycle;               /* 1 live */
    uint16_t generation;
    const char *name;
    struct kern_object *registry_next; /* every object of its type */
    uint32_t handle;                 /* as the trace names it */
};

struct kern_mutex {
    struct kern_object obj;
    struct kern_thread *owner;
    struct kern_mutex *next_owned;   /* the owner's owned list */
    struct kern_wait_queue waiters;
    uint32_t depth;
    emb_stats_object_t stats;
};

struct kern_sem {
    struct kern_object obj;
    uint32_t count;
    uint32_t limit;
    struct kern_wait_queue waiters;
};

struct kern_queue {
    struct kern_object obj;
    uint32_t *slots;
    uint32_t capacity, used, head;
    struct kern_wait_queue receivers, senders;
};

/* Delayed work: run `handler` on the work thread once `delay` ticks have passed. */
struct kern_work {
    struct kern_object obj;
    void (*handler)(struct kern_work *w);
    struct kern_work *next;
    uint32_t due_tick;
    uint32_t state;                  /* 0 idle, 1 delayed, 2 queued, 3 running */
    uint64_t submitted;
};

extern struct kern_cpu kern_cpu;
extern struct kern_ready kern_ready;
extern struct kern_thread *kern_all_threads;
#define KERN_OBJECT_TYPES 12u
extern struct kern_object *kern_registry[KERN_OBJECT_TYPES]; /* heads by obj_init type */

/* Threads. kern_thread_create() may be called before kern_start() or from a thread. */
void kern_thread_create(struct kern_thread *t, const char *name, uint8_t priority,
                        uint32_t *stack, uint32_t stack_bytes, void (*entry)(void *), void *arg);
/* Starts the tick (`tick_reload` + 1 core cycles a tick, from the CMSDK timer `timer`) and
 * switches to the most urgent thread; never returns. */
void kern_start(unsigned timer, uint32_t tick_reload) __attribute__((noreturn));
void kern_yield(void);
void kern_sleep(uint32_t ticks);
void kern_sched_lock(void);
void kern_sched_unlock(void);
uint32_t kern_ticks(void);
struct kern_thread *kern_self(void);

/* The tick's interrupt handler work (called by the timer's handler). */
void kern_tick_isr(void);
/* The idle thread's sleep, called with interrupts masked (cpsid i; an interrupt wakes
 * the core all the same and runs once they are unmasked). Tickless: when no timeout or
 * delayed work falls due within two ticks, the tick timer is stretched to the first
 * that does (at most KERN_TICKLESS_MAX ticks), the core sleeps through the ticks between
 * (tickless_sleep, tickless_wake), and on waking, whatever woke it, the ticks that passed
 * are counted as if each had interrupted: kern_ticks(), timeouts and delayed work stay
 * right, and the idle thread's run time covers the sleep like any other. */
void kern_idle_sleep(void);
#define KERN_TICKLESS_MAX 1000u
/* Every interrupt handler of the kernel's starts and ends with these. */
void kern_isr_enter(uint16_t irq);
void kern_isr_exit(uint16_t irq);

/* Synchronisation and communication. Functions named _isr may be called from interrupt
 * handlers; the others only from threads. Timeouts in ticks (KERN_FOREVER). */
void kern_mutex_init(struct kern_mutex *m, const char *name);
int kern_mutex_lock(struct kern_mutex *m, uint32_t timeout);
void kern_mutex_unlock(struct kern_mutex *m);

void kern_sem_init(struct kern_sem *s, const char *name, uint32_t count, uint32_t limit);
int kern_sem_take(struct kern_sem *s, uint32_t timeout);
void kern_sem_give_isr(struct kern_sem *s);

void kern_queue_init(struct kern_queue *q, const char *name, uint32_t *slots, uint32_t capacity);
int kern_queue_send(struct kern_queue *q, uint32_t msg, uint32_t timeout);
int kern_queue_receive(struct kern_queue *q, uint32_t *msg, uint32_t timeout);

void kern_notify_isr(struct kern_thread *t, uint32_t bits);
/* Waits for any bit of `mask`; returns the bits that were pending (and clears them), or 0
 * on timeout. */
uint32_t kern_notify_wait(uint32_t mask, uint32_t timeout);

void kern_work_init(struct kern_work *w, const char *name, void (*handler)(struct kern_work *));
void kern_work_schedule(struct kern_work *w, uint32_t delay);
/* The work thread's body: runs submitted work items for ever. */
void kern_work_thread(void *arg);
extern struct kern_thread *kern_work_runner;

/* ---- Inside the kernel (kernel.c and sync.c) ---- */
void kern__ready(struct kern_thread *t, uint8_t cause);
int kern__block(struct kern_wait_queue *q, uint8_t reason, void *object, uint32_t handle,
                uint32_t timeout, emb_port_irq_state *lock);
void kern__wake(struct kern_thread *t, int8_t result, uint8_t source);
struct kern_thread *kern__first_waiter(struct kern_wait_queue *q);
void kern__wait_requeue(struct kern_thread *t);
struct kern_mutex *kern__requeue_mutex_waiter(struct kern_thread *t);
void kern__set_priority(struct kern_thread *t, uint8_t eff, uint8_t cause);
void kern__object_init(struct kern_object *o, uint8_t type, const char *name);
void kern__work_tick(uint32_t tick);
bool kern__work_next_due(uint32_t *due);

#endif /* KERNEL_H */
