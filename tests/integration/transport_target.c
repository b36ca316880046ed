/* A native-port program that streams a known trace over one of the byte-stream transports,
 * for tests/integration/test_transports.py:
 *
 *   transport_target fd N COUNT            frames to descriptor N (a pipe, a pty master)
 *   transport_target file PATH COUNT       frames to a file
 *   transport_target tcp PORTFILE COUNT    the TCP record server (its port written to
 *                                          PORTFILE); records once a client is connected
 *   transport_target memchan PIDFILE COUNT the memory channel; writes its pid, records
 *                                          when standard input gives a byte, then stays
 *                                          alive until standard input closes
 *   transport_target retained PATH COUNT   the retained ring in the file PATH: the trace
 *                                          (channel 1) and a log line (channel 0) every
 *                                          LOG_EVERY events of thread 1
 *   transport_target upload PATH OUT       the next start: attaches to the ring in PATH,
 *                                          prints what it found, writes its frames to OUT
 *                                          and clears it
 *
 * Two threads each record COUNT user_event(id = i mod 65536, a = thread number 1 or 2,
 * b = i), paced so that the rings never overflow: a reader counts every one.
 * `--wait-stdin` (before the mode) waits for a byte on standard input before recording;
 * `--linger MS` keeps the descriptor open that long after the last frame (a pseudo-terminal
 * drops what its reader has not taken when its master closes); `--region BYTES` sizes the
 * retained ring's file (default 1 MiB); `--log-every N` (default 50, 0: none); `--log-tail N`:
 * N more log lines once the trace has ended (COUNT, COUNT + 1, ...); `--die`: after the
 * last frame, starts a log frame longer than a COBS block and dies (SIGKILL) in its
 * middle, as a reset would strike; `--log` (fd and file modes): the deferred log shares
 * the descriptor with the trace (emb_native_framed_log_output): a log line every
 * LOG_EVERY events of each thread ("log N" from thread 1, "log2 N" from thread 2) and
 * the --log-tail lines, as channel 0 frames between the trace's. `--crash-region PATH`
 * (fd, file and tcp modes): keeps crash records in the retained region file PATH; a
 * record found there at start is sent over the link as a channel 2 frame (the tcp mode:
 * to every client) and cleared; `--fault`: after recording, faults (SIGSEGV, in
 * fault_now()), so the next start finds the record. */
#define _GNU_SOURCE
#include <emb/native.h>
#include <emb/native_link.h>
#include <emb/trace_events.h>

#include <emb/crash.h>
#include <emb/frame.h>
#include <emb/log.h>
#include <emb/native_log.h>
#include <emb/retained.h>

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long count;
static unsigned long log_every = 50, log_tail;
static struct emb_retained_ring *retained;
static int shared_log; /* --log: log frames on the framed descriptor too */

EMB_LOG_MODULE_DEFINE(tt, EMB_LOG_LEVEL_INF);

/* A deferred log record ("log N"): the native log worker frames it into the retained
 * ring next to the trace. */
static void log_line(unsigned long i)
{
    EMB_LOG_INF(tt, "log %u", (unsigned)i);
}

static int logging(void)
{
    return retained != NULL || shared_log;
}

/* Waits until the streaming worker has taken every flushed packet. */
static void wait_drained(void)
{
    struct emb_native_stats a, b;
    emb_native_stats_get(&a);
    /* 200 ms without a new packet: a stream worker preempted on a loaded machine must
     * not pass for a drained one (its period is 1 ms). */
    for (int same = 0; same < 40;) {
        struct timespec t = {0, 5 * 1000 * 1000};
        nanosleep(&t, NULL);
        emb_native_stats_get(&b);
        same = b.stream_packets == a.stream_packets ? same + 1 : 0;
        a = b;
    }
}

static void pace(unsigned long i)
{
    if ((i & 127u) == 127u) {
        struct timespec t = {0, 300 * 1000};
        nanosleep(&t, NULL);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < count; i++) {
        EMB_TRACE_user_event((uint16_t)i, 2u, (uint32_t)i);
        if (shared_log && log_every != 0u && i % log_every == 0u)
            EMB_LOG_WRN(tt, "log2 %u from %s", (unsigned)i, "worker");
        pace(i);
    }
    return NULL;
}

static void record(void)
{
    struct emb_native_thread t;
    emb_native_thread_create(&t, "worker", worker, NULL);
    for (unsigned long i = 0; i < count; i++) {
        EMB_TRACE_user_event((uint16_t)i, 1u, (uint32_t)i);
        if (logging() && log_every != 0u && i % log_every == 0u)
            log_line(i);
        pace(i);
    }
    emb_native_thread_join(&t, NULL);
}

static emb_status write_fd(void *arg, const uint8_t *p, uint32_t n)
{
    return fwrite(p, 1, n, arg) == n ? EMB_OK : EMB_E_IO;
}

/* The next start: what the previous run left in the ring goes to OUT. */
static int upload(const char *path, const char *out, size_t region)
{
    struct emb_retained_info info;
    struct emb_retained_ring *r = emb_native_retained_map(path, region, &info);
    FILE *f = fopen(out, "wb");
    if (r == NULL || f == NULL) {
        perror("transport_target: upload");
        return 1;
    }
    emb_status s = emb_retained_read(r, write_fd, f);
    if (fclose(f) != 0 || s != EMB_OK) {
        perror("transport_target: upload");
        return 1;
    }
    printf("intact=%d bytes=%u starts=%u dropped=%u cut=%u lost=%u\n", info.intact, info.bytes,
           info.starts, info.dropped, info.cut, info.lost);
    emb_retained_clear(r);
    emb_native_retained_unmap(r);
    return 0;
}

/* Dies in the middle of a frame: the first blocks are in the ring, the rest never come. */
static void die_mid_frame(void)
{
    struct emb_frame_encoder enc;
    uint8_t payload[600];
    memset(payload, 'x', sizeof payload);
    emb_frame_encode_begin(&enc, emb_retained_write, retained, EMB_FRAME_CH_LOG);
    emb_frame_encode_put(&enc, payload, sizeof payload);
    kill(getpid(), SIGKILL);
}

/* The seeded fault: a store through a pointer to nowhere (read at run time, so the
 * compiler cannot see it). */
static volatile uint32_t *volatile nowhere = (volatile uint32_t *)(uintptr_t)0x10u;

__attribute__((noinline)) static void fault_now(volatile uint32_t *where)
{
    *where = 0xDEADu; /* transport_target: the seeded fault */
}

/* The start of a product that uploads its crash record: the one found in the retained
 * region goes over the link, and is cleared once the link took it. */
static int send_found_crash(struct emb_native_framed *framed, struct emb_native_server *server)
{
    const uint8_t *record;
    uint32_t length;
    emb_status s = emb_crash_record_get(&record, &length);
    if (s != EMB_OK) {
        printf("transport_target: no crash record (%s)\n", emb_strerror(s));
        return 0;
    }
    s = framed != NULL ? emb_native_framed_send_crash(framed, record, length)
                       : emb_native_server_send_crash(server, record, length);
    if (s != EMB_OK) {
        fprintf(stderr, "transport_target: sending the crash record failed: %s\n", emb_strerror(s));
        return 1;
    }
    printf("transport_target: sent the %u-byte crash record of the previous run\n", length);
    fflush(stdout);
    emb_crash_record_clear();
    return 0;
}

static void wait_stdin(void)
{
    char c;
    (void)!read(0, &c, 1);
}

int main(int argc, char **argv)
{
    int a = 1;
    int wait = 0;
    long linger_ms = 0;
    size_t region = 1u << 20;
    int die = 0, fault = 0;
    const char *crash_region = NULL;
    for (;;) {
        if (a < argc && !strcmp(argv[a], "--wait-stdin")) {
            wait = 1;
            a++;
        } else if (a < argc && !strcmp(argv[a], "--log")) {
            shared_log = 1;
            a++;
        } else if (a < argc && !strcmp(argv[a], "--die")) {
            die = 1;
            a++;
        } else if (a < argc && !strcmp(argv[a], "--fault")) {
            fault = 1;
            a++;
        } else if (a + 1 < argc && !strcmp(argv[a], "--crash-region")) {
            crash_region = argv[a + 1];
            a += 2;
        } else if (a + 1 < argc && !strcmp(argv[a], "--region")) {
            region = strtoul(argv[a + 1], NULL, 0);
            a += 2;
        } else if (a + 1 < argc && !strcmp(argv[a], "--log-tail")) {
            log_tail = strtoul(argv[a + 1], NULL, 0);
            a += 2;
        } else if (a + 1 < argc && !strcmp(argv[a], "--log-every")) {
            log_every = strtoul(argv[a + 1], NULL, 0);
            a += 2;
        } else if (a + 1 < argc && !strcmp(argv[a], "--linger")) {
            linger_ms = atol(argv[a + 1]);
            a += 2;
        } else {
            break;
        }
    }
    if (argc - a != 3) {
        fprintf(stderr, "usage: transport_target [options] fd|file|tcp|memchan|retained ARG COUNT\n"
                        "       transport_target [--region BYTES] upload PATH OUT\n");
        return 2;
    }
    const char *mode = argv[a], *arg = argv[a + 1];
    if (!strcmp(mode, "upload"))
        return upload(arg, argv[a + 2], region);
    count = strtoul(argv[a + 2], NULL, 10);
    struct emb_native_config config = {
        .mode = EMB_TRACE_MODE_STREAMING,
        .ring_packets = 256,
        .stream_fd = -1,
        .stream_period_us = 500,
    };
    struct emb_native_framed *framed = NULL;
    struct emb_native_server *server = NULL;
    int fd = -1;
    if (!strcmp(mode, "fd") || !strcmp(mode, "file")) {
        fd = !strcmp(mode, "fd") ? atoi(arg) : open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || (framed = emb_native_framed_new(fd, 8)) == NULL) {
            perror("transport_target");
            return 1;
        }
        config.stream_sink = &framed->sink;
    } else if (!strcmp(mode, "tcp") || !strcmp(mode, "unix")) {
        /* unix: the owner-only socket at its default path; tcp: the token comes from
         * EMB_SERVER_TOKEN, as a deployed application would take it. */
        struct emb_native_server_config sc = {.tcp = !strcmp(mode, "tcp"),
                                              .header_period_ms = 200};
        if ((server = emb_native_server_start(&sc)) == NULL) {
            perror("transport_target: server");
            return 1;
        }
        config.stream_sink = emb_native_server_sink(server);
    } else if (!strcmp(mode, "memchan")) {
        config.stream_sink = emb_native_memchan_sink(4u << 20, 256, 16);
    } else if (!strcmp(mode, "retained")) {
        struct emb_retained_info info;
        if ((retained = emb_native_retained_map(arg, region, &info)) == NULL) {
            perror("transport_target: retained");
            return 1;
        }
        config.stream_sink = emb_native_retained_sink(retained, 4);
    } else {
        fprintf(stderr, "transport_target: unknown mode %s\n", mode);
        return 2;
    }
    emb_native_set_identity("transport-test 1", "transport=test", 0);
    if (emb_native_init(&config) != EMB_OK) {
        fprintf(stderr, "transport_target: emb_native_init failed\n");
        return 1;
    }
    if (crash_region != NULL) {
        struct emb_native_crash_config cc = {.retained_path = crash_region, .fw_version = "tt-1"};
        if ((framed == NULL && server == NULL) || emb_native_crash_init(&cc) != EMB_OK) {
            fprintf(stderr, "transport_target: --crash-region needs the fd, file or tcp mode\n");
            return 2;
        }
        if (send_found_crash(framed, server) != 0)
            return 1;
    }
    if (server != NULL) {
        FILE *f = fopen(arg, "w");
        if (emb_native_server_port(server) != 0)
            fprintf(f, "%u\n", emb_native_server_port(server));
        else
            fprintf(f, "%s\n", emb_native_server_path(server));
        fclose(f);
        struct emb_native_link_stats st;
        do {
            struct timespec t = {0, 10 * 1000 * 1000};
            nanosleep(&t, NULL);
            emb_native_server_stats(server, &st);
        } while (st.clients == 0);
    }
    if (shared_log && framed == NULL) {
        fprintf(stderr, "transport_target: --log is for the fd and file modes\n");
        return 2;
    }
    if (logging()) {
        /* A hello often: a reader of a wrapped ring needs one after the oldest kept frame. */
        struct emb_native_log_config lc = {
            .fd = -1, .hello_period_ms = retained != NULL ? 1 : 100,
            .output = retained != NULL ? emb_native_retained_log_output(retained)
                                       : emb_native_framed_log_output(framed)};
        if (emb_native_log_start(&lc) != EMB_OK) {
            fprintf(stderr, "transport_target: emb_native_log_start failed\n");
            return 1;
        }
    }
    if (!strcmp(mode, "memchan")) {
        FILE *f = fopen(arg, "w");
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        wait = 1;
    }
    if (wait)
        wait_stdin();
    record();
    emb_native_flush();
    if (fault)
        fault_now(nowhere);
    if (!strcmp(mode, "memchan"))
        wait_stdin(); /* until the reader is done */
    if (logging()) {
        /* The trace first, then the log tail: the newest frames are log lines. */
        wait_drained();
        for (unsigned long i = 0; i < log_tail; i++) {
            log_line(count + i);
            if ((i & 63u) == 63u) {
                emb_native_log_flush(); /* the thread's log ring is small */
                struct timespec t = {0, 200 * 1000};
                nanosleep(&t, NULL); /* and the worker's hellos come in between */
            }
        }
        emb_native_log_stop();
    }
    emb_native_shutdown();
    if (retained != NULL && die)
        die_mid_frame();
    if (server != NULL) {
        struct emb_native_link_stats st;
        emb_native_server_stats(server, &st);
        fprintf(stderr, "transport_target: server: %llu frames, %llu headers, %llu dropped\n",
                (unsigned long long)st.frames, (unsigned long long)st.headers,
                (unsigned long long)st.dropped);
        emb_native_server_stop(server);
    }
    if (framed != NULL) {
        struct emb_native_link_stats st;
        emb_native_framed_stats(framed, &st);
        fprintf(stderr, "transport_target: %llu frames, %llu headers, %llu dropped, %llu log frames, "
                        "%llu log frames dropped\n",
                (unsigned long long)st.frames, (unsigned long long)st.headers,
                (unsigned long long)st.dropped, (unsigned long long)st.log_frames,
                (unsigned long long)st.log_dropped);
        emb_native_framed_free(framed);
    }
    if (linger_ms > 0) {
        struct timespec t = {linger_ms / 1000, (linger_ms % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
    if (fd > 2)
        close(fd);
    return 0;
}
