/* The console demo: a workload shaped like a fantasy-console firmware.
 *
 *   main        the frame loop: start a frame, hand rendering to a work queue, publish the
 *               finished frame to the video link under the frame-buffer lock, end the frame
 *   audio       mixes a buffer every 2.5 ms under the audio lock
 *   video-link  waits for published frames and sends each as a burst of link packets
 *   render      the work queue thread that runs render jobs
 *   timer IRQ   a 4 kHz timer signal playing the interrupt: ticks and audio DMA requests
 *
 * Everything is recorded through the catalogue's emitters and the native port's wrappers.
 * The trace is streamed to a file (or kept in snapshot or one-shot window rings and dumped
 * at the end) for `emb trace`. What happens is also logged through the deferred log
 * (emb/log.h) into a log stream for `emb log`, on the trace's clock.
 */
#define _GNU_SOURCE
#include <emb/hooks.h>
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>
#include <emb/trace_events.h>

#include "driver.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* user_event ids: what the application itself records. */
enum {
    EV_PUBLISH = 1,     /* a = frame, b = 1 if published */
    EV_AUDIO_MIX = 2,   /* a = buffer, b = samples */
    EV_LINK_TX = 3,     /* a = frame, b = bytes */
    EV_RENDER = 4,      /* a = frame, b = tiles */
    EV_AUDIO_DMA = 5,   /* a = tick, b = 0 (from the timer interrupt) */
};

#ifndef CONSOLE_VERSION
#define CONSOLE_VERSION "0.1.0"
#endif

EMB_LOG_MODULE_DEFINE(console, EMB_LOG_LEVEL_INF);
EMB_LOG_MODULE_DEFINE(audio, EMB_LOG_LEVEL_INF);
EMB_LOG_MODULE_DEFINE(link, EMB_LOG_LEVEL_INF);

#define TIMER_IRQ 11u
#define FRAME_BUFFER_BYTES (320u * 240u * 2u)
#define LINK_PACKET_BYTES 16384u

struct options {
    uint32_t frames;
    uint32_t period_us;
    enum emb_trace_mode mode;
    uint32_t arm_frame;
    uint32_t stall_frame; /* from this frame on, the link stalls 40 us per packet */
    uint32_t skip_publish; /* this frame is never published */
    const char *out;
    uint32_t fault_frame;  /* the sensor driver faults at this frame */
    const char *retained;  /* retained region file (crash records) */
    const char *crash_out; /* where the previous run's crash record is saved */
    const char *log;
};

static struct options opt = {
    .frames = 300,
    .period_us = 1000,
    .mode = EMB_TRACE_MODE_STREAMING,
    .arm_frame = UINT32_MAX,
    .stall_frame = UINT32_MAX,
    .skip_publish = UINT32_MAX,
    .out = "console.embt",
    .fault_frame = UINT32_MAX,
    .log = NULL, /* default: next to the trace, console.embt -> console.embl */
};

static struct emb_native_mutex frame_lock, audio_lock;
static pthread_cond_t frame_ready = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t frame_ready_lock = PTHREAD_MUTEX_INITIALIZER;
/* Published frames, in order, for the link: it sends every one, however late it runs, so
 * two runs send the same packets (a link that skipped to the newest frame under load
 * would make each run's packets depend on the host). Guarded by frame_ready_lock. */
#define PUBLISHED_QUEUE 64u
static uint32_t published[PUBLISHED_QUEUE];
static uint32_t published_head, published_tail;
static int running = 1;      /* read by every thread, cleared once by main: atomics */
static uint32_t ticks;       /* incremented by the timer signal, on whichever thread */

/* Spins for `us` microseconds: work the trace can see take time. */
static void busy_us(uint32_t us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t.tv_nsec - t0.tv_nsec) <
             (uint64_t)us * 1000u);
}

static void timer_isr(void *arg)
{
    (void)arg;
    uint32_t n = __atomic_add_fetch(&ticks, 1u, __ATOMIC_RELAXED);
    EMB_TRACE_tick(n);
    if (n % 10u == 0u)
        EMB_TRACE_user_event(EV_AUDIO_DMA, n, 0);
    if (n % 250u == 0u)
        EMB_LOG_INF(console, "timer interrupt %u (logged from the handler)", n);
}

static void *audio_main(void *arg)
{
    (void)arg;
    for (uint32_t buffer = 0; __atomic_load_n(&running, __ATOMIC_ACQUIRE); buffer++) {
        emb_native_mutex_lock(&audio_lock);
        busy_us(60);
        EMB_TRACE_user_event(EV_AUDIO_MIX, buffer, 256);
        emb_native_mutex_unlock(&audio_lock);
        if (buffer % 20u == 0u)
            EMB_LOG_INF(audio, "mixed buffer %u: %d samples at %.1f kHz", buffer, 256, 102.4);
        emb_native_sleep_us(2500);
    }
    return NULL;
}

static void *video_link_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&frame_ready_lock);
        while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) && published_head == published_tail)
            pthread_cond_wait(&frame_ready, &frame_ready_lock);
        bool have = published_head != published_tail;
        uint32_t frame = have ? published[published_tail++ % PUBLISHED_QUEUE] : 0u;
        pthread_cond_broadcast(&frame_ready); /* room in the queue */
        pthread_mutex_unlock(&frame_ready_lock);
        if (!have)
            break;
        emb_native_mutex_lock(&frame_lock);
        for (uint32_t off = 0; off < FRAME_BUFFER_BYTES; off += LINK_PACKET_BYTES) {
            uint32_t bytes = FRAME_BUFFER_BYTES - off < LINK_PACKET_BYTES ? FRAME_BUFFER_BYTES - off
                                                                          : LINK_PACKET_BYTES;
            if (frame >= opt.stall_frame)
                busy_us(40); /* the seeded fault: a stall that only shows in timing */
            EMB_TRACE_user_event(EV_LINK_TX, frame, bytes);
            if (frame == 0u && off == 0u) {
                const uint32_t header[3] = {frame, off, bytes};
                EMB_LOG_HEXDUMP_INF(link, header, sizeof header, "first packet header");
            }
        }
        emb_native_mutex_unlock(&frame_lock);
        if (frame == opt.stall_frame)
            EMB_LOG_WRN(link, "frame %u: link stalling 40 us per packet", frame);
    }
    return NULL;
}

struct render_job {
    struct emb_native_work work;
    uint32_t frame;
};

static void render(struct emb_native_work *work)
{
    struct render_job *job = (struct render_job *)work;
    busy_us(150);
    EMB_TRACE_user_event(EV_RENDER, job->frame, 300);
    EMB_LOG_DBG(console, "rendered frame %u", job->frame); /* above the module's level: compiled out */
}

static void frame_loop(struct emb_native_workq *renderer)
{
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    /* Deep enough that a render thread the host holds up for a few frames renders them
     * late rather than not at all (the frame goes unrendered only when it is 16 behind). */
    static struct render_job jobs[16];
    for (uint32_t frame = 0; frame < opt.frames; frame++) {
        emb_frame_start(frame);
        struct render_job *job = &jobs[frame % 16u];
        if (!emb_native_work_busy(renderer, &job->work)) { /* else the frame goes unrendered */
            job->frame = frame;
            job->work.handler = render;
            emb_native_workq_submit(renderer, &job->work);
        }
        busy_us(200);
        sensor_driver_poll(frame);

        bool publish = frame != opt.skip_publish;
        emb_native_mutex_lock(&frame_lock);
        EMB_TRACE_user_event(EV_PUBLISH, frame, publish);
        emb_native_mutex_unlock(&frame_lock);
        if (publish) {
            pthread_mutex_lock(&frame_ready_lock);
            while (published_head - published_tail == PUBLISHED_QUEUE) /* the link is a queue behind */
                pthread_cond_wait(&frame_ready, &frame_ready_lock);
            published[published_head++ % PUBLISHED_QUEUE] = frame;
            pthread_cond_broadcast(&frame_ready);
            pthread_mutex_unlock(&frame_ready_lock);
        }
        emb_frame_end(frame);
        if (!publish)
            EMB_LOG_ERR(console, "frame %u rendered but never published", frame);
        else if (frame % 50u == 0u)
            EMB_LOG_INF(console, "frame %u published", frame);

        next.tv_nsec += (long)opt.period_us * 1000L;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        EMB_TRACE_idle_enter();
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {
            /* interrupted by the timer signal: keep waiting for the deadline */
        }
        EMB_TRACE_idle_exit();
    }
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: console [options]\n"
            "  --frames N          frames to run (300)\n"
            "  --period-us N       frame period in microseconds (1000)\n"
            "  --mode MODE         streaming | snapshot | window (streaming)\n"
            "  --arm-frame N       window mode: arm at frame N\n"
            "  --stall-frame N     from frame N on, the video link stalls 40 us per packet\n"
            "  --skip-publish N    frame N is rendered but never published\n"
            "  -o, --out FILE      trace stream file to write (console.embt)\n"
            "  --retained FILE     keep crash records in this retained region file\n"
            "  --crash-out FILE    save the previous run's crash record here\n"
            "  --upload URL        upload it to emb fleet serve instead (http://HOST:PORT/v1/upload,\n"
            "                      the token in EMB_UPLOAD_TOKEN)\n"
            "  --fault-frame N     the sensor driver faults at frame N (needs --retained)\n"
            "  --log FILE          log stream file to write (the trace file's name, .embl)\n");
}

static int parse_options(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"frames", required_argument, NULL, 'f'},    {"period-us", required_argument, NULL, 'p'},
        {"mode", required_argument, NULL, 'm'},      {"arm-frame", required_argument, NULL, 'a'},
        {"stall-frame", required_argument, NULL, 's'}, {"skip-publish", required_argument, NULL, 'k'},
        {"out", required_argument, NULL, 'o'},       {"help", no_argument, NULL, 'h'},
        {"retained", required_argument, NULL, 'r'},  {"crash-out", required_argument, NULL, 'c'},
        {"fault-frame", required_argument, NULL, 'F'}, {"upload", required_argument, NULL, 'U'},
        {"log", required_argument, NULL, 'l'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': opt.frames = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'p': opt.period_us = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'a': opt.arm_frame = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 's': opt.stall_frame = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'k': opt.skip_publish = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'o': opt.out = optarg; break;
        case 'r': opt.retained = optarg; break;
        case 'c': opt.crash_out = optarg; break;
        case 'F': opt.fault_frame = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'U': console_crash_upload_to(optarg, getenv("EMB_UPLOAD_TOKEN")); break;
        case 'l': opt.log = optarg; break;
        case 'm':
            if (strcmp(optarg, "streaming") == 0)
                opt.mode = EMB_TRACE_MODE_STREAMING;
            else if (strcmp(optarg, "snapshot") == 0)
                opt.mode = EMB_TRACE_MODE_SNAPSHOT;
            else if (strcmp(optarg, "window") == 0)
                opt.mode = EMB_TRACE_MODE_WINDOW;
            else {
                fprintf(stderr, "console: unknown mode '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return 2;
        }
    }
    return 0;
}

/* The identity the trace carries: the experiment flags that change what the program
 * does, so a good and a bad run of this one binary never claim the same configuration. */
static void stamp_identity(void)
{
    char flags[160] = "";
    size_t n = 0;
    if (opt.stall_frame != UINT32_MAX)
        n += (size_t)snprintf(flags + n, sizeof flags - n, "%sstall-frame=%u", n ? " " : "",
                              opt.stall_frame);
    if (opt.skip_publish != UINT32_MAX && n < sizeof flags)
        n += (size_t)snprintf(flags + n, sizeof flags - n, "%sskip-publish=%u", n ? " " : "",
                              opt.skip_publish);
    if (opt.period_us != 1000u && n < sizeof flags)
        snprintf(flags + n, sizeof flags - n, "%speriod-us=%u", n ? " " : "", opt.period_us);
    emb_native_set_identity("console " CONSOLE_VERSION, flags, 0);
}

int main(int argc, char **argv)
{
    if (parse_options(argc, argv) != 0)
        return 2;
    stamp_identity();
    struct emb_native_config config = {
        .mode = opt.mode,
        .ring_packets = opt.mode == EMB_TRACE_MODE_STREAMING ? 64u : 512u,
        .window_frame = opt.arm_frame,
        .stream_path = opt.mode == EMB_TRACE_MODE_STREAMING ? opt.out : NULL,
        .stream_fd = -1,
    };
    emb_status status = emb_native_init(&config);
    if (status != EMB_OK) {
        fprintf(stderr, "console: cannot start tracing: %s\n", emb_strerror(status));
        return 1;
    }
    if (opt.retained != NULL && console_crash_start(opt.retained, opt.crash_out) != 0)
        return 1;
    char log_path[4096];
    if (opt.log == NULL) {
        size_t n = strlen(opt.out);
        if (n > 5 && strcmp(opt.out + n - 5, ".embt") == 0)
            n -= 5;
        snprintf(log_path, sizeof log_path, "%.*s.embl", (int)n, opt.out);
        opt.log = log_path;
    }
    struct emb_native_log_config log_config = {.path = opt.log, .fd = -1};
    status = emb_native_log_start(&log_config);
    if (status != EMB_OK)
        fprintf(stderr, "console: cannot start the log: %s\n", emb_strerror(status));
    EMB_LOG_INF(console, "console: %u frames every %u us", opt.frames, opt.period_us);
    emb_native_mutex_init(&frame_lock, "frame-buffer");
    emb_native_mutex_init(&audio_lock, "audio");
    sensor_driver_init(opt.fault_frame);

    struct emb_native_workq renderer;
    struct emb_native_thread audio, link;
    emb_native_workq_start(&renderer, "render");
    emb_native_thread_create(&audio, "audio", audio_main, NULL);
    emb_native_thread_create(&link, "video-link", video_link_main, NULL);
    struct emb_native_timer timer = {0};
    if (emb_native_timer_start(&timer, TIMER_IRQ, 250, timer_isr, NULL) != 0)
        fprintf(stderr, "console: no timer signal; running without the interrupt context\n");

    frame_loop(&renderer);

    emb_native_timer_stop(&timer);
    pthread_mutex_lock(&frame_ready_lock);
    __atomic_store_n(&running, 0, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&frame_ready);
    pthread_mutex_unlock(&frame_ready_lock);
    emb_native_thread_join(&audio, NULL);
    emb_native_thread_join(&link, NULL);
    emb_native_workq_stop(&renderer);

    EMB_LOG_INF(console, "done: %u frames, %u timer interrupts", opt.frames,
                __atomic_load_n(&ticks, __ATOMIC_RELAXED));
    emb_native_log_stop();
    int rc = 0;
    if (opt.mode != EMB_TRACE_MODE_STREAMING && emb_native_trace_dump(opt.out) != EMB_OK) {
        fprintf(stderr, "console: cannot write %s\n", opt.out);
        rc = 1;
    }
    struct emb_native_stats stats;
    emb_native_stats_get(&stats);
    emb_native_shutdown();
    printf("console: %u frames, %u contexts, %u timer interrupts, trace in %s\n", opt.frames,
           stats.contexts, __atomic_load_n(&ticks, __ATOMIC_RELAXED), opt.out);
    return rc;
}
