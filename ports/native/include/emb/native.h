/* The native port: the library in a POSIX process.
 *
 * Threads are contexts, each with its own trace ring claimed on its first event; a signal
 * handler plays the nested interrupt. The thin thread, mutex, timer and work-queue wrappers
 * below call the kernel hooks for real, so a threaded program traced through them looks to
 * the tools like firmware on an RTOS.
 *
 * Include with _GNU_SOURCE (or _POSIX_C_SOURCE >= 200809L) defined: it uses pthreads.
 */
#ifndef EMB_NATIVE_H
#define EMB_NATIVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <emb/status.h>
#include <emb/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

struct emb_native_config {
    enum emb_trace_mode mode;  /* snapshot (default), window or streaming */
    uint32_t trace_classes;    /* run-time class mask; 0 means every class */
    uint32_t ring_packets;     /* packets per context ring, a power of two; 0: 64 */
    uint32_t max_contexts;     /* rings available to threads; 0: 32 */
    uint32_t window_frame;     /* window mode: the frame that arms it; UINT32_MAX: by call */
    const char *stream_path;   /* streaming: file the packets go to (created, truncated) */
    int stream_fd;             /* streaming: or a descriptor (pipe, socket); -1 if unused */
    uint32_t stream_period_us; /* streaming: how often the worker drains; 0: 1000 */
};

/* Starts the library in this process: clock calibration, rings, and in streaming mode the
 * worker thread. The calling thread becomes context "main". */
emb_status emb_native_init(const struct emb_native_config *config);

/* Stops streaming (after a last drain of every ring whose thread has exited or that
 * belongs to the caller) and releases the rings. Threads created through the wrappers
 * must have been joined. */
void emb_native_shutdown(void);

/* Writes every complete packet of every ring as a trace stream file (docs/formats/trace.md):
 * snapshot or window mode. Flushes the caller's ring and the rings of exited threads first. */
emb_status emb_native_trace_dump(const char *path);

/* Stamps the build and run identity every trace header carries (the identity block of
 * docs/formats/trace.md): the firmware version (at most 31 characters kept), its
 * configuration and experiment flags as "key=value ..." text (at most 159 kept), and a
 * session id (0: the first 8 bytes of the trace uuid, new every run). Call it before
 * emb_native_init() so a stream's header carries it; a dump takes it when written.
 * A two-run comparison refuses two captures whose identities are equal unless told they
 * are runs of the same build, so stamp every flag that changes what the program does. */
void emb_native_set_identity(const char *firmware_version, const char *config,
                             uint64_t session_id);

/* Names the calling thread's context (at most 19 characters are kept). */
void emb_native_context_name(const char *name);

/* The calling thread's context id (claims a ring if it has none; 0xFFFF when none left). */
uint16_t emb_native_context_id(void);

/* Flushes the calling thread's ring (call before the thread stops recording for long). */
void emb_native_flush(void);

/* The GNU build id of the running executable; returns its length (0 if none). */
uint32_t emb_native_build_id(uint8_t *out, uint32_t cap);

/* Counts the native port keeps. */
struct emb_native_stats {
    uint32_t contexts;          /* rings claimed */
    uint32_t lost_no_context;   /* events from threads that found no free ring */
    uint64_t stream_packets;    /* packets written to the stream sink */
    uint64_t stream_bytes;
    uint32_t stream_errors;     /* failed writes to the sink (packets counted lost) */
};
void emb_native_stats_get(struct emb_native_stats *out);

/* ---- Thin wrappers that call the kernel hooks ---- */

struct emb_native_thread {
    pthread_t pthread;
    uint16_t context_id; /* valid once started */
    void *(*entry)(void *);
    void *arg;
    char name[20];
    volatile int started;
};

/* Starts a thread as a context of its own named `name`: thread_init/start, and on return
 * thread_exit and a flush of its ring. */
int emb_native_thread_create(struct emb_native_thread *t, const char *name,
                             void *(*entry)(void *), void *arg);
int emb_native_thread_join(struct emb_native_thread *t, void **result);

struct emb_native_mutex {
    pthread_mutex_t mutex;
    uint32_t handle;
    uint16_t owner;
};

/* A mutex whose lock records mutex_lock(contended) and, when it has to wait,
 * wait_begin / switch / wait_end around the block; unlock records mutex_unlock. */
void emb_native_mutex_init(struct emb_native_mutex *m, const char *name);
void emb_native_mutex_lock(struct emb_native_mutex *m);
void emb_native_mutex_unlock(struct emb_native_mutex *m);
void emb_native_mutex_destroy(struct emb_native_mutex *m);

/* Sleeps, recording the thread switching out (reason sleep) and back in. */
void emb_native_sleep_us(uint32_t us);

/* A periodic timer whose signal plays an interrupt: `isr` runs in a signal handler
 * between irq_enter(irq) and irq_exit(irq), on whichever thread the signal lands. */
struct emb_native_timer {
    void *timer;             /* timer_t */
    uint16_t irq;
    void (*isr)(void *arg);
    void *arg;
    volatile uint32_t fired;
};
int emb_native_timer_start(struct emb_native_timer *t, uint16_t irq, uint32_t period_us,
                           void (*isr)(void *arg), void *arg);
void emb_native_timer_stop(struct emb_native_timer *t);

/* A work queue served by one thread: submit records work_submit, the worker records
 * work_start(latency) and work_end(duration) around each item. An item is queued at most
 * once at a time; one that is running may be queued again. */
#define EMB_NATIVE_WORKQ_DEPTH 64u
struct emb_native_work {
    void (*handler)(struct emb_native_work *work);
    uint32_t handle;       /* 0: assigned at the first submit */
    /* Guarded by the queue's lock. */
    uint64_t submitted_at;
    uint8_t state;         /* idle, queued or running */
};
struct emb_native_workq {
    struct emb_native_thread thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct emb_native_work *items[EMB_NATIVE_WORKQ_DEPTH];
    uint32_t head, tail;
    uint32_t handle;
    bool stopping;
};
int emb_native_workq_start(struct emb_native_workq *q, const char *name);
/* Returns 0 when queued, 1 when the item was already queued (nothing changes), or -1 when
 * the queue is full; work_submit records the same value as its result. */
int emb_native_workq_submit(struct emb_native_workq *q, struct emb_native_work *work);
/* True while the item is queued or running: its owner must not change it then. */
bool emb_native_work_busy(struct emb_native_workq *q, const struct emb_native_work *work);
/* Runs what is queued, then stops the worker thread and joins it. */
void emb_native_workq_stop(struct emb_native_workq *q);

#ifdef __cplusplus
}
#endif

#endif /* EMB_NATIVE_H */
