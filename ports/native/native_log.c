/* The native port's log: per-thread rings claimed on a thread's first record, and the
 * worker that drains them into frames on the output. Ring memory is one mapping made at
 * start, so a claim is an atomic increment and a few stores: safe from a signal handler,
 * where a thread's first record may come from. */
#define _GNU_SOURCE
#include <emb/native_log.h>

#include <emb/native.h>
#include <emb/port.h>

#include "native_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

_Thread_local struct emb_log_ring *emb_native_log_ring = &emb_log_unclaimed_ring;

enum { EMB__LCTX_FREE = 0, EMB__LCTX_LIVE = 1, EMB__LCTX_RETIRED = 2 };

struct emb__lctx {
    struct emb_log_ring ring;
    pthread_t owner;
    uint32_t state; /* EMB__LCTX_*, published with release once the ring is ready */
};

#define EMB__OUT_BUF 65536u

static struct {
    struct emb_native_log_config config;
    struct emb__lctx *contexts;
    uint8_t *memory;
    size_t memory_size;
    size_t stride;
    uint32_t claimed;
    pthread_key_t exit_key;
    bool started;
    /* output */
    int fd;             /* file or pipe; or the TCP client, -1 while none */
    bool fd_owned;
    int listen_fd;      /* TCP */
    uint16_t tcp_port;
    uint8_t out_buf[EMB__OUT_BUF];
    size_t out_len;
    struct emb_log_output output;
    uint8_t build_id[EMB_LOG_BUILD_ID_MAX];
    uint8_t build_id_len;
    bool in_round;      /* the worker's round: it flushes at its end */
    /* worker */
    pthread_t worker;
    bool worker_running;
    int worker_stop;
    uint64_t last_hello_ns;
    /* stats */
    uint64_t bytes, discarded;
    uint32_t write_errors;
    uint32_t clients;
    uint64_t dropped_final; /* every ring's drops, kept when the rings go */
    uint32_t contexts_final;
} emb__nlog = {.fd = -1, .listen_fd = -1};

/* ---- Contexts ---- */

static uint32_t emb__ready(void)
{
    uint32_t n = __atomic_load_n(&emb__nlog.claimed, __ATOMIC_ACQUIRE);
    return n < emb__nlog.config.max_contexts ? n : emb__nlog.config.max_contexts;
}

static struct emb_log_ring *emb__claim_blocked(void)
{
    if (emb_native_log_ring != &emb_log_unclaimed_ring)
        return emb_native_log_ring;
    uint32_t index = __atomic_fetch_add(&emb__nlog.claimed, 1u, __ATOMIC_ACQ_REL);
    if (index >= emb__nlog.config.max_contexts)
        return NULL;
    struct emb__lctx *ctx = &emb__nlog.contexts[index];
    /* The trace's context id when the thread has one, so log and trace name the same
     * thread alike. */
    uint16_t id = emb_native_context_id();
    if (id == 0xFFFFu)
        id = (uint16_t)(0x8000u + index);
    emb_log_ring_init(&ctx->ring, id, EMB_CONTEXT_THREAD, emb__nlog.memory + index * emb__nlog.stride,
                      emb__nlog.config.ring_bytes);
    char name[16] = "";
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0)
        memcpy(ctx->ring.name, name, sizeof name);
    ctx->owner = pthread_self();
    __atomic_store_n(&ctx->state, EMB__LCTX_LIVE, __ATOMIC_RELEASE);
    emb_native_log_ring = &ctx->ring;
    pthread_setspecific(emb__nlog.exit_key, ctx);
    return &ctx->ring;
}

struct emb_log_ring *emb_port_log_ring_claim(void)
{
    if (!__atomic_load_n(&emb__nlog.started, __ATOMIC_ACQUIRE))
        return NULL;
    if (emb_native_log_ring != &emb_log_unclaimed_ring)
        return emb_native_log_ring;
    /* A signal could claim for this thread in the middle of the claim. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    struct emb_log_ring *ring = emb__claim_blocked();
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return ring;
}

static void emb__context_exit(void *arg)
{
    struct emb__lctx *ctx = arg;
    __atomic_store_n(&ctx->state, EMB__LCTX_RETIRED, __ATOMIC_RELEASE);
    emb_native_log_ring = &emb_log_unclaimed_ring;
}

/* ---- Output ---- */

static uint64_t emb__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void emb__drop_client(void)
{
    if (emb__nlog.config.tcp && emb__nlog.fd >= 0) {
        close(emb__nlog.fd);
        emb__nlog.fd = -1;
    }
}

/* Writes the buffer out. A TCP client that went away is dropped; the stream goes on
 * for the next one. */
static void emb__out_flush(void)
{
    const uint8_t *p = emb__nlog.out_buf;
    size_t len = emb__nlog.out_len;
    emb__nlog.out_len = 0;
    if (emb__nlog.config.output != NULL) {
        if (len > 0u && emb__nlog.config.output->write(emb__nlog.config.output->arg, p,
                                                        (uint32_t)len) != EMB_OK)
            __atomic_fetch_add(&emb__nlog.write_errors, 1u, __ATOMIC_RELAXED);
        return;
    }
    if (emb__nlog.fd < 0)
        return;
    while (len > 0u) {
        ssize_t n = emb__nlog.config.tcp ? send(emb__nlog.fd, p, len, MSG_NOSIGNAL)
                  : emb__native_write_all(emb__nlog.fd, p, len) == 0 ? (ssize_t)len : -1;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            __atomic_fetch_add(&emb__nlog.write_errors, 1u, __ATOMIC_RELAXED);
            emb__drop_client();
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

static emb_status emb__out_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    while (len > 0u) {
        size_t room = EMB__OUT_BUF - emb__nlog.out_len;
        size_t n = len < room ? len : room;
        memcpy(emb__nlog.out_buf + emb__nlog.out_len, bytes, n);
        emb__nlog.out_len += n;
        bytes += n;
        len -= (uint32_t)n;
        if (emb__nlog.out_len == EMB__OUT_BUF)
            emb__out_flush();
    }
    /* IMMEDIATE mode and text lines write from the call site: each frame (ending in its
     * delimiter) or line goes out at once. */
    if (!emb__nlog.in_round && emb__nlog.out_len > 0u &&
        (emb__nlog.out_buf[emb__nlog.out_len - 1u] == 0u || emb__nlog.config.text))
        emb__out_flush();
    return EMB_OK;
}

static void emb__hello(void)
{
    if (emb__nlog.config.text)
        return;
    struct emb_log_identity id = {emb__nlog.build_id, emb__nlog.build_id_len};
    emb_log_write_hello(&emb__nlog.output, &id);
    emb__nlog.last_hello_ns = emb__now_ns();
}

/* TCP: takes a waiting client (one at a time), who first hears a hello. */
static void emb__accept(int timeout_ms)
{
    if (!emb__nlog.config.tcp || emb__nlog.listen_fd < 0)
        return;
    struct pollfd pfd = {emb__nlog.listen_fd, POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) <= 0)
        return;
    int fd = accept4(emb__nlog.listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (emb__nlog.fd >= 0) {
        close(fd); /* busy: one reader at a time */
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    emb__nlog.fd = fd;
    __atomic_fetch_add(&emb__nlog.clients, 1u, __ATOMIC_RELAXED);
    static const uint8_t delimiter = 0u; /* a reader syncs on it at once */
    emb__out_write(NULL, &delimiter, 1u);
    emb__hello();
}

/* Drains every ring (a busy ring is tried again a few times: a producer is mid-record
 * for nanoseconds). Returns the ring bytes handed on. */
static uint64_t emb__drain_all(bool final)
{
    uint64_t total = 0;
    uint32_t n = emb__ready();
    for (uint32_t i = 0; i < n; i++) {
        struct emb__lctx *ctx = &emb__nlog.contexts[i];
        if (__atomic_load_n(&ctx->state, __ATOMIC_ACQUIRE) == EMB__LCTX_FREE)
            continue;
        uint32_t bytes = 0;
        for (int attempt = 0; attempt < (final ? 1000 : 64); attempt++) {
            emb_status s = emb_log_drain(&ctx->ring, &emb__nlog.output, &bytes);
            if (s != EMB_E_BUSY)
                break;
            sched_yield();
        }
        total += bytes;
    }
    return total;
}

/* One round of the worker, with the output to itself. */
static void emb__round(bool final)
{
    emb_port_irq_state s = emb_port_irq_save();
    if (emb_log_output_acquire() != NULL) {
        emb__nlog.in_round = true;
        emb__accept(0);
        if (!emb__nlog.config.text) {
            uint64_t period = (uint64_t)emb__nlog.config.hello_period_ms * 1000000u;
            if (emb__now_ns() - emb__nlog.last_hello_ns >= period)
                emb__hello();
            uint64_t bytes = emb__drain_all(final);
            if (emb__nlog.fd >= 0)
                __atomic_fetch_add(&emb__nlog.bytes, bytes, __ATOMIC_RELAXED);
            else
                __atomic_fetch_add(&emb__nlog.discarded, bytes, __ATOMIC_RELAXED);
        }
        emb__out_flush();
        emb__nlog.in_round = false;
        emb_log_output_release();
    }
    emb_port_irq_restore(s);
}

static void *emb__worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "emb-log");
    uint32_t period = emb__nlog.config.period_us;
    struct timespec wait = {period / 1000000u, (long)(period % 1000000u) * 1000L};
    while (!__atomic_load_n(&emb__nlog.worker_stop, __ATOMIC_ACQUIRE)) {
        emb__round(false);
        nanosleep(&wait, NULL);
    }
    return NULL;
}

void emb_native_log_flush(void)
{
    if (emb__nlog.started)
        emb__round(false);
}

/* ---- Start and stop ---- */

static emb_status emb__open_output(void)
{
    const struct emb_native_log_config *c = &emb__nlog.config;
    if (c->output != NULL) {
        emb__nlog.fd = -1;
        emb__nlog.fd_owned = false;
        return EMB_OK;
    }
    if (c->tcp) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return EMB_E_IO;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(c->tcp_port)};
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 4) != 0 ||
            getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
            close(fd);
            return EMB_E_IO;
        }
        emb__nlog.listen_fd = fd;
        emb__nlog.tcp_port = ntohs(addr.sin_port);
        emb__nlog.fd = -1;
        return EMB_OK;
    }
    if (c->path != NULL) {
        emb__nlog.fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        emb__nlog.fd_owned = true;
    } else {
        emb__nlog.fd = c->fd;
        emb__nlog.fd_owned = false;
    }
    return emb__nlog.fd >= 0 ? EMB_OK : EMB_E_IO;
}

emb_status emb_native_log_start(const struct emb_native_log_config *config)
{
    if (emb__nlog.started)
        return EMB_E_STATE;
    emb_status status = emb_log_init();
    if (status != EMB_OK)
        return status;
    struct emb_native_log_config c = config != NULL ? *config : (struct emb_native_log_config){.fd = -1};
    if (c.ring_bytes == 0u)
        c.ring_bytes = 16384u;
    if (c.max_contexts == 0u)
        c.max_contexts = 32u;
    if (c.period_us == 0u)
        c.period_us = 1000u;
    if (c.hello_period_ms == 0u)
        c.hello_period_ms = 1000u;
    if ((c.ring_bytes & (c.ring_bytes - 1u)) != 0u || c.ring_bytes < 2u * EMB_LOG_RESERVE_MAX ||
        c.max_contexts > 4096u)
        return EMB_E_INVALID;
    emb__nlog.config = c;
    emb__nlog.stride = ((size_t)EMB_LOG_RING_BUF_SIZE(c.ring_bytes) + 63u) & ~(size_t)63u;
    emb__nlog.memory_size = c.max_contexts * (emb__nlog.stride + sizeof(struct emb__lctx));
    uint8_t *mem = mmap(NULL, emb__nlog.memory_size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return EMB_E_NOSPACE;
    emb__nlog.memory = mem;
    emb__nlog.contexts = (struct emb__lctx *)(mem + c.max_contexts * emb__nlog.stride);
    emb__nlog.claimed = 0;
    emb__nlog.out_len = 0;
    emb__nlog.in_round = false;
    emb__nlog.bytes = emb__nlog.discarded = 0;
    emb__nlog.write_errors = 0;
    emb__nlog.clients = 0;
    emb__nlog.build_id_len = (uint8_t)emb_native_build_id(emb__nlog.build_id, sizeof emb__nlog.build_id);
    if (emb__nlog.build_id_len > EMB_LOG_BUILD_ID_MAX)
        emb__nlog.build_id_len = EMB_LOG_BUILD_ID_MAX;
    if (pthread_key_create(&emb__nlog.exit_key, emb__context_exit) != 0 ||
        (status = emb__open_output()) != EMB_OK) {
        munmap(mem, emb__nlog.memory_size);
        return status != EMB_OK ? status : EMB_E_IO;
    }
    emb__nlog.output = (struct emb_log_output){emb__out_write, NULL};
    emb_log_set_output(&emb__nlog.output);
    if (c.tcp) {
        emb__accept((int)c.tcp_wait_ms);
    } else if (!c.text) {
        static const uint8_t delimiter = 0u;
        emb__out_write(NULL, &delimiter, 1u);
        emb__hello();
    }
    emb__out_flush();
    __atomic_store_n(&emb__nlog.started, true, __ATOMIC_RELEASE);
    if (c.text)
        return EMB_OK;
    /* The worker records nothing and must never take a timer signal: it starts with
     * every signal blocked (and SIGPIPE from a closed reader stays pending, harmless). */
    emb__nlog.worker_stop = 0;
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    int rc = pthread_create(&emb__nlog.worker, NULL, emb__worker, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0)
        return EMB_E_IO;
    emb__nlog.worker_running = true;
    return EMB_OK;
}

void emb_native_log_stop(void)
{
    if (!emb__nlog.started)
        return;
    if (emb__nlog.worker_running) {
        __atomic_store_n(&emb__nlog.worker_stop, 1, __ATOMIC_RELEASE);
        pthread_join(emb__nlog.worker, NULL);
        emb__nlog.worker_running = false;
    }
    /* A last round from here, with SIGPIPE held back like the worker's. */
    sigset_t pipe_set, saved;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &saved);
    emb__round(true);
    emb_port_irq_state s = emb_port_irq_save();
    if (!emb__nlog.config.text && emb_log_output_acquire() != NULL) {
        uint32_t n = emb__ready();
        for (uint32_t i = 0; i < n; i++)
            if (__atomic_load_n(&emb__nlog.contexts[i].state, __ATOMIC_ACQUIRE) != EMB__LCTX_FREE)
                emb_log_write_stats(&emb__nlog.output, &emb__nlog.contexts[i].ring);
        emb__out_flush();
        emb_log_output_release();
    }
    emb_port_irq_restore(s);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    emb_log_set_output(NULL);
    __atomic_store_n(&emb__nlog.started, false, __ATOMIC_RELEASE);
    struct emb_native_log_stats last;
    emb_native_log_stats_get(&last);
    emb__nlog.dropped_final = last.dropped;
    emb__nlog.contexts_final = last.contexts;
    emb_native_log_ring = &emb_log_unclaimed_ring;
    if (emb__nlog.config.tcp)
        emb__drop_client();
    else if (emb__nlog.fd_owned)
        close(emb__nlog.fd);
    emb__nlog.fd = -1;
    if (emb__nlog.listen_fd >= 0)
        close(emb__nlog.listen_fd);
    emb__nlog.listen_fd = -1;
    pthread_key_delete(emb__nlog.exit_key);
    munmap(emb__nlog.memory, emb__nlog.memory_size);
    emb__nlog.memory = NULL;
    emb__nlog.contexts = NULL;
}

uint16_t emb_native_log_tcp_port(void)
{
    return emb__nlog.config.tcp ? emb__nlog.tcp_port : 0u;
}

void emb_native_log_stats_get(struct emb_native_log_stats *out)
{
    memset(out, 0, sizeof *out);
    out->lost_no_ring = emb_log_lost_no_ring();
    out->bytes = __atomic_load_n(&emb__nlog.bytes, __ATOMIC_RELAXED);
    out->discarded = __atomic_load_n(&emb__nlog.discarded, __ATOMIC_RELAXED);
    out->write_errors = __atomic_load_n(&emb__nlog.write_errors, __ATOMIC_RELAXED);
    out->clients = __atomic_load_n(&emb__nlog.clients, __ATOMIC_RELAXED);
    if (emb__nlog.contexts == NULL) {
        out->dropped = emb__nlog.dropped_final;
        out->contexts = emb__nlog.contexts_final;
        return;
    }
    out->contexts = emb__ready();
    for (uint32_t i = 0; i < out->contexts; i++)
        out->dropped += __atomic_load_n(&emb__nlog.contexts[i].ring.dropped, __ATOMIC_RELAXED);
}
