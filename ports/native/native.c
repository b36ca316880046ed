/* The native port: clock, contexts and their rings, start and stop (the stream file header,
 * dumps and streaming are native_stream.c).
 *
 * Ring memory comes from one anonymous mapping made at start-up, so claiming a ring is an
 * atomic increment and a few stores: safe from a signal handler, which is where a thread's
 * first event may come from. */
#define _GNU_SOURCE
#include <emb/native.h>
#include <emb/native_link.h>

#include <emb/crc.h>
#include <emb/monitor.h>
#include <emb/wire.h>
#include <emb/port.h>
#include <emb/trace_events.h>

#include "native_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EMB__P CONFIG_EMB_TRACE_PACKET_SIZE

struct emb__native_state emb__native;

_Thread_local struct emb_trace_ring *emb_native_ring = &emb_trace_unclaimed_ring;

/* ---- Clock ---- */

static uint64_t emb__clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if !defined(__x86_64__) && !defined(__aarch64__)
uint64_t emb_native_clock_ns(void)
{
    return emb__clock_ns(CLOCK_MONOTONIC);
}
#endif

/* Counts counter ticks over a known stretch of CLOCK_MONOTONIC. 20 ms gives the
 * frequency to about 10 ppm, far below what trace analysis notices. */
static uint64_t emb__calibrate_hz(void)
{
#if defined(__aarch64__)
    uint64_t hz;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
    return hz;
#elif defined(__x86_64__)
    uint64_t t0 = emb__clock_ns(CLOCK_MONOTONIC), c0 = emb_port_timestamp();
    struct timespec wait = {0, 20 * 1000 * 1000};
    nanosleep(&wait, NULL);
    uint64_t t1 = emb__clock_ns(CLOCK_MONOTONIC), c1 = emb_port_timestamp();
    double hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
    return (uint64_t)(hz / 1000.0 + 0.5) * 1000u; /* to the kHz: below the noise */
#else
    return 1000000000u;
#endif
}

/* Wall-clock time at counter value 0, from a realtime read bracketed by two counter reads. */
int64_t emb__native_clock_offset(uint64_t hz)
{
    uint64_t c0 = emb_port_timestamp();
    uint64_t real = emb__clock_ns(CLOCK_REALTIME);
    uint64_t c1 = emb_port_timestamp();
    uint64_t c = c0 + (c1 - c0) / 2u;
    long double since_zero_ns = (long double)c * 1e9L / (long double)hz;
    return (int64_t)((long double)real - since_zero_ns);
}

uint64_t emb_port_timestamp_hz(void)
{
    return emb__native.clock_hz;
}

int64_t emb_port_clock_offset_ns(void)
{
    /* Measured again by emb_native_stream_header() while others read it. */
    return __atomic_load_n(&emb__native.clock_offset_ns, __ATOMIC_RELAXED);
}

/* ---- Build id ---- */

static int emb__find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + 12 <= end) {
            uint32_t namesz, descsz, type;
            memcpy(&namesz, p, 4);
            memcpy(&descsz, p + 4, 4);
            memcpy(&type, p + 8, 4);
            const uint8_t *name = p + 12;
            const uint8_t *desc = name + ((namesz + 3u) & ~3u);
            if (desc + descsz > end)
                break;
            if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                uint32_t n = descsz < EMB_TSF_BUILD_ID_MAX ? descsz : EMB_TSF_BUILD_ID_MAX;
                memcpy(emb__native.build_id, desc, n);
                emb__native.build_id_len = n;
                return 1;
            }
            p = desc + ((descsz + 3u) & ~3u);
        }
    }
    return 1; /* only the first object: the executable */
}

uint32_t emb_native_build_id(uint8_t *out, uint32_t cap)
{
    if (emb__native.build_id_len == 0u)
        dl_iterate_phdr(emb__find_build_id, NULL);
    uint32_t n = emb__native.build_id_len < cap ? emb__native.build_id_len : cap;
    if (out != NULL)
        memcpy(out, emb__native.build_id, n);
    return emb__native.build_id_len;
}

/* ---- Critical sections ---- */

static _Thread_local int emb__irq_depth;
static _Thread_local sigset_t emb__irq_saved;

emb_port_irq_state emb_port_irq_save(void)
{
    if (emb__irq_depth++ == 0) {
        /* Faults stay deliverable, as a fault exception is on a microcontroller: a
         * synchronous fault signal that is blocked kills the process unrecorded. */
        sigset_t all;
        sigfillset(&all);
        sigdelset(&all, SIGSEGV);
        sigdelset(&all, SIGBUS);
        sigdelset(&all, SIGILL);
        sigdelset(&all, SIGFPE);
        sigdelset(&all, SIGABRT);
        pthread_sigmask(SIG_BLOCK, &all, &emb__irq_saved);
    }
    return emb__irq_depth;
}

void emb_port_irq_restore(emb_port_irq_state state)
{
    (void)state;
    if (--emb__irq_depth == 0)
        pthread_sigmask(SIG_SETMASK, &emb__irq_saved, NULL);
}

/* ---- Contexts ---- */

static uint8_t *emb__ring_buf(uint32_t index)
{
    size_t ring_bytes = (size_t)emb__native.config.ring_packets * EMB__P;
    size_t commit_bytes = (size_t)emb__native.config.ring_packets * sizeof(uint32_t);
    size_t stride = ring_bytes + ((commit_bytes + EMB__P - 1u) & ~(size_t)(EMB__P - 1u));
    return emb__native.ring_memory + (size_t)index * stride;
}

static uint32_t *emb__ring_commit(uint32_t index)
{
    return (uint32_t *)(emb__ring_buf(index) + (size_t)emb__native.config.ring_packets * EMB__P);
}

uint32_t emb__native_contexts_ready(void)
{
    uint32_t n = __atomic_load_n(&emb__native.claimed, __ATOMIC_ACQUIRE);
    return n < emb__native.config.max_contexts ? n : emb__native.config.max_contexts;
}

/* Context names: written and read a byte at a time (EMB__NAME_SIZE, native_internal.h). */
static void emb__set_name(char *dst, const char *src)
{
    size_t i = 0;
    for (; i + 1u < EMB__NAME_SIZE && src[i] != '\0'; i++)
        __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
    for (; i < EMB__NAME_SIZE; i++)
        __atomic_store_n(&dst[i], '\0', __ATOMIC_RELAXED);
}

void emb__native_get_name(char *dst, const char *src)
{
    for (size_t i = 0; i < EMB__NAME_SIZE; i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    dst[EMB__NAME_SIZE - 1u] = '\0';
}

/* A signal can arrive in the middle of a claim and claim for the same thread (its first
 * event may come from a handler): claims happen with signals blocked, once per thread. */
static struct emb_trace_ring *emb__claim_blocked(void)
{
    if (emb_native_ring != &emb_trace_unclaimed_ring)
        return emb_native_ring;
    uint32_t index = __atomic_fetch_add(&emb__native.claimed, 1u, __ATOMIC_ACQ_REL);
    if (index >= emb__native.config.max_contexts)
        return NULL;
    struct emb__context *ctx = &emb__native.contexts[index];
    emb_trace_ring_init(&ctx->ring, (uint16_t)index, EMB_CONTEXT_THREAD, emb__ring_buf(index),
                        emb__ring_commit(index), emb__native.config.ring_packets);
    /* Named after the thread (prctl underneath: async-signal-safe in practice). */
    char name[16] = "";
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0)
        emb__set_name(ctx->ring.name, name);
    ctx->owner = pthread_self();
    memset(&ctx->info, 0, sizeof ctx->info);
    ctx->info.ring = &ctx->ring;
    ctx->info.os_id = (int32_t)syscall(SYS_gettid);
    __atomic_store_n(&ctx->info.state, EMB_CONTEXT_LIVE, __ATOMIC_RELEASE);
    /* Tools find the entry through the registry once the count covers it; claims race,
     * so the count only grows. */
    uint32_t seen = __atomic_load_n(&emb_debug_registry.context_count, __ATOMIC_RELAXED);
    while (seen < index + 1u &&
           !__atomic_compare_exchange_n(&emb_debug_registry.context_count, &seen, index + 1u, true,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
    emb_native_ring = &ctx->ring;
    /* The destructor flushes the ring when the thread exits (non-NULL value needed). */
    pthread_setspecific(emb__native.exit_key, ctx);
    return &ctx->ring;
}

struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    if (!emb__native.initialised)
        return NULL;
    if (emb_native_ring != &emb_trace_unclaimed_ring)
        return emb_native_ring;
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    struct emb_trace_ring *ring = emb__claim_blocked();
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return ring;
}

static void emb__context_exit(void *arg)
{
    struct emb__context *ctx = arg;
    emb_trace_flush(&ctx->ring);
    __atomic_store_n(&ctx->info.state, EMB_CONTEXT_EXITED, __ATOMIC_RELEASE);
    emb_native_ring = &emb_trace_unclaimed_ring;
}

void emb_native_context_name(const char *name)
{
    struct emb_trace_ring *ring = emb_trace_context_ring();
    if (ring == NULL || name == NULL)
        return;
    emb__set_name(ring->name, name);
    char short_name[16];
    snprintf(short_name, sizeof short_name, "%s", name);
    pthread_setname_np(pthread_self(), short_name);
}

uint16_t emb_native_context_id(void)
{
    struct emb_trace_ring *ring = emb_trace_context_ring();
    return ring != NULL ? ring->context_id : 0xFFFFu;
}

void emb_native_flush(void)
{
    if (emb_native_ring != &emb_trace_unclaimed_ring)
        emb_trace_flush(emb_native_ring);
}

/* ---- What the rest of the port and the tools see ---- */

struct emb__context *emb__native_self(void)
{
    struct emb_trace_ring *ring = emb_native_ring;
    /* The ring is the context's first member. */
    return ring != &emb_trace_unclaimed_ring ? (struct emb__context *)(void *)ring : NULL;
}

uint32_t emb__native_context_count(void)
{
    return emb__native.initialised ? emb__native_contexts_ready() : 0u;
}

struct emb__context *emb__native_context(uint32_t index)
{
    return index < emb__native_context_count() ? &emb__native.contexts[index] : NULL;
}

const uint8_t *emb__native_build_id(uint32_t *len)
{
    *len = emb__native.build_id_len;
    return emb__native.build_id;
}

void emb__native_set_stack(uintptr_t low, uint32_t size, uint32_t painted)
{
    struct emb__context *ctx = emb__native_self();
    if (ctx == NULL)
        return;
    ctx->info.stack_low = low;
    ctx->info.stack_size = size;
    ctx->info.stack_painted = painted;
}

emb_stats_thread_t *emb__native_my_stats(void)
{
    struct emb__context *ctx = emb__native_self();
    return ctx != NULL ? &ctx->info.stats : NULL;
}

/* The executable is the first object dl_iterate_phdr reports: its load bias, and the
 * runtime range of its executable segments (where a return address may point). */
static struct {
    uintptr_t bias, text_low, text_high;
} emb__image;

static int emb__scan_image(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    emb__image.bias = (uintptr_t)info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = emb__image.bias + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (emb__image.text_high == 0u || lo < emb__image.text_low)
            emb__image.text_low = lo;
        if (hi > emb__image.text_high)
            emb__image.text_high = hi;
    }
    return 1;
}

void emb__native_image_scan(void)
{
    if (emb__image.text_high == 0u)
        dl_iterate_phdr(emb__scan_image, NULL);
}

uintptr_t emb__native_load_bias(void)
{
    return emb__image.bias;
}

void emb__native_text_range(uintptr_t *low, uintptr_t *high)
{
    *low = emb__image.text_low;
    *high = emb__image.text_high;
}

/* Paints [low, limit) with EMB_STACK_PAINT, a word at a time: the stack below the
 * caller's frame, which no one has used yet. */
__attribute__((no_sanitize("address", "thread"), noinline)) static uint32_t
emb__paint(uintptr_t low, uintptr_t limit)
{
    const uint64_t word = 0x0101010101010101u * EMB_STACK_PAINT;
    for (volatile uint64_t *p = (volatile uint64_t *)low; (uintptr_t)p < limit; p++)
        *p = word;
    return (uint32_t)(limit - low);
}

void emb__native_thread_begin(void *(*entry)(void *))
{
    struct emb__context *ctx = emb__native_self();
    if (ctx != NULL)
        ctx->info.entry = (uintptr_t)entry;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size <= 0xFFFFFFFFu) {
            /* Well clear of the frames this thread already has. */
            uintptr_t limit = ((uintptr_t)__builtin_frame_address(0) - 4096u) & ~(uintptr_t)7u;
            uintptr_t low = (uintptr_t)addr; /* page-aligned */
            uint32_t painted = limit > low ? emb__paint(low, limit) : 0u;
            emb__native_set_stack(low, (uint32_t)size, painted);
        }
        pthread_attr_destroy(&attr);
    }
    emb__native_fault_thread_begin();
}

/* Painted bytes still untouched from the low end: the part of the stack never used.
 * Reads another thread's live stack, which the address sanitizer would call a bug. */
__attribute__((no_sanitize("address", "thread"))) static uint32_t
emb__stack_untouched(const uint8_t *low, uint32_t painted)
{
    uint32_t n = 0;
    while (n < painted && __atomic_load_n(&low[n], __ATOMIC_RELAXED) == EMB_STACK_PAINT)
        n++;
    return n;
}

static uint32_t emb__high_water(const struct emb__context *ctx)
{
    uint32_t painted = __atomic_load_n(&ctx->info.stack_painted, __ATOMIC_ACQUIRE);
    return painted > 0u
               ? ctx->info.stack_size - emb__stack_untouched((const uint8_t *)ctx->info.stack_low, painted)
               : 0u;
}

void emb__native_thread_end(void)
{
    /* The stack goes away with the thread: its high-water mark is kept. */
    struct emb__context *ctx = emb__native_self();
    if (ctx != NULL) {
        __atomic_store_n(&ctx->info.stats.stack_high_water, emb__high_water(ctx), __ATOMIC_RELAXED);
        __atomic_store_n(&ctx->info.stack_painted, 0u, __ATOMIC_RELEASE);
    }
    emb__native_fault_thread_end();
}

/* Monitors: each thread has its own open intervals. */
static _Thread_local struct emb_monitor_ctx emb__monitor_ctx;

struct emb_monitor_ctx *emb_port_monitor_ctx(void)
{
    return &emb__monitor_ctx;
}

emb_status emb_stats_thread_get(emb_thread_t thread, emb_stats_thread_t *out)
{
#if CONFIG_EMB_STATS
    struct emb__context *ctx = emb__native_context(thread);
    if (out == NULL)
        return EMB_E_INVALID;
    if (ctx == NULL || __atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE) == EMB_CONTEXT_FREE)
        return EMB_E_NOTFOUND;
    emb_stats_thread_t *st = &ctx->info.stats;
    out->run_cycles = __atomic_load_n(&st->run_cycles, __ATOMIC_RELAXED);
    out->blocked_cycles = __atomic_load_n(&st->blocked_cycles, __ATOMIC_RELAXED);
    out->switches = __atomic_load_n(&st->switches, __ATOMIC_RELAXED);
    out->deadline_misses = __atomic_load_n(&st->deadline_misses, __ATOMIC_RELAXED);
    out->budget_overruns = __atomic_load_n(&st->budget_overruns, __ATOMIC_RELAXED);
    out->max_boost = __atomic_load_n(&st->max_boost, __ATOMIC_RELAXED);
    out->contentions = __atomic_load_n(&st->contentions, __ATOMIC_RELAXED);
    uint32_t high_water = 0;
    if (__atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE) == EMB_CONTEXT_LIVE)
        high_water = emb__high_water(ctx);
    if (high_water < __atomic_load_n(&st->stack_high_water, __ATOMIC_RELAXED))
        high_water = __atomic_load_n(&st->stack_high_water, __ATOMIC_RELAXED);
    __atomic_store_n(&st->stack_high_water, high_water, __ATOMIC_RELAXED);
    out->stack_high_water = high_water;
    return EMB_OK;
#else
    (void)thread;
    (void)out;
    return EMB_E_STATE;
#endif
}

void emb_port_stats_reset(void)
{
    uint32_t n = emb__native_context_count();
    for (uint32_t i = 0; i < n; i++) {
        emb_stats_thread_t *st = &emb__native.contexts[i].info.stats;
        __atomic_store_n(&st->run_cycles, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&st->blocked_cycles, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&st->switches, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&st->contentions, 0u, __ATOMIC_RELAXED);
    }
    emb__native_objects_reset();
}

/* Flushes rings whose owner can no longer record into them: the caller's own, and those of
 * threads that have exited. A live thread's open packet stays open (and out of a dump). */
void emb__native_flush_quiescent(void)
{
    uint32_t n = emb__native_contexts_ready();
    for (uint32_t i = 0; i < n; i++) {
        struct emb__context *ctx = &emb__native.contexts[i];
        uint32_t state = __atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE);
        if (state == EMB_CONTEXT_EXITED || (state == EMB_CONTEXT_LIVE &&
                                          pthread_equal(ctx->owner, pthread_self())))
            emb_trace_flush(&ctx->ring);
    }
}

/* ---- Start and stop ---- */

static void emb__random_uuid(uint8_t uuid[16])
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, uuid, 16) : -1;
    if (fd >= 0)
        close(fd);
    if (n != 16) {
        uint64_t a = emb__clock_ns(CLOCK_REALTIME), b = (uint64_t)getpid() * 0x9E3779B97F4A7C15u;
        memcpy(uuid, &a, 8);
        memcpy(uuid + 8, &b, 8);
    }
    uuid[6] = (uint8_t)((uuid[6] & 0x0Fu) | 0x40u); /* RFC 4122 version 4 */
    uuid[8] = (uint8_t)((uuid[8] & 0x3Fu) | 0x80u);
}

/* The main thread's stack bounds (not painted: its stack grows on demand). */
static void emb__native_main_stack(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0)
        emb__native_set_stack((uintptr_t)addr, size > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)size, 0u);
    pthread_attr_destroy(&attr);
}

emb_status emb_native_init(const struct emb_native_config *config)
{
    if (emb__native.initialised)
        return EMB_E_STATE;
    struct emb_native_config c = config != NULL ? *config : (struct emb_native_config){0};
    if (config == NULL)
        c.stream_fd = -1;
    if (c.ring_packets == 0u)
        c.ring_packets = 64u;
    if (c.max_contexts == 0u)
        c.max_contexts = 32u;
    if (c.stream_period_us == 0u)
        c.stream_period_us = 1000u;
    if (c.trace_classes == 0u)
        c.trace_classes = EMB_TRACE_CLASSES_ALL;
    if (c.ring_packets < 2u || (c.ring_packets & (c.ring_packets - 1u)) != 0u ||
        c.max_contexts > EMB_TSF_MAX_CONTEXTS - 1u)
        return EMB_E_INVALID;
    emb__native.config = c;

    size_t ring_bytes = (size_t)c.ring_packets * EMB__P;
    size_t commit_bytes = ((size_t)c.ring_packets * sizeof(uint32_t) + EMB__P - 1u) &
                          ~(size_t)(EMB__P - 1u);
    emb__native.ring_memory_size = (size_t)c.max_contexts * (ring_bytes + commit_bytes) +
                                   c.max_contexts * sizeof(struct emb__context) + EMB__P;
    uint8_t *mem = mmap(NULL, emb__native.ring_memory_size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return EMB_E_NOSPACE;
    /* Rings first (packet-aligned: a mapping is page-aligned), then the context table. */
    emb__native.ring_memory = mem;
    emb__native.contexts = (struct emb__context *)(mem + (size_t)c.max_contexts *
                                                             (ring_bytes + commit_bytes));
    emb__native.claimed = 0;

    emb__native.clock_hz = emb__calibrate_hz();
    emb__native.clock_offset_ns = emb__native_clock_offset(emb__native.clock_hz);
    emb_native_build_id(NULL, 0);
    if (pthread_key_create(&emb__native.exit_key, emb__context_exit) != 0)
        return EMB_E_IO;

    uint8_t uuid[16];
    emb__random_uuid(uuid);
    emb_trace_init(uuid, c.mode, c.trace_classes);
    if (c.mode == EMB_TRACE_MODE_WINDOW && c.window_frame != UINT32_MAX)
        emb_trace_window_arm_at(c.window_frame);
    emb__native.initialised = true;
    emb__native_image_scan();
    struct emb_debug_registry *reg = &emb_debug_registry;
    reg->ring_packets = c.ring_packets;
    reg->contexts = &emb__native.contexts[0].info;
    reg->context_stride = sizeof(struct emb__context);
    reg->context_capacity = c.max_contexts;
    reg->context_count = 0;
    emb_debug_registry_identity(emb__native.build_id, emb__native.build_id_len,
                                emb__native.clock_hz, emb__native.clock_offset_ns);
    emb_native_context_name("main");
    if (emb__native_self() != NULL) /* main's run intervals are opened in main() */
        emb__native_self()->info.entry = (uintptr_t)__builtin_return_address(0);
    emb__native_main_stack();
    emb_stats_reset();

    if (c.mode == EMB_TRACE_MODE_STREAMING) {
        emb_status s = emb__native_stream_start();
        if (s != EMB_OK) {
            emb__native.initialised = false;
            return s;
        }
    }
    return EMB_OK;
}

void emb_native_shutdown(void)
{
    if (!emb__native.initialised)
        return;
    emb__native_stream_stop();
    emb__native.initialised = false;
    emb_native_ring = &emb_trace_unclaimed_ring;
    emb_trace_set_classes(0u);
    pthread_key_delete(emb__native.exit_key);
    __atomic_store_n(&emb_debug_registry.context_count, 0u, __ATOMIC_RELEASE);
    emb_debug_registry.contexts = NULL;
    munmap(emb__native.ring_memory, emb__native.ring_memory_size);
    emb__native.ring_memory = NULL;
    emb__native.contexts = NULL;
}

void emb_native_stats_get(struct emb_native_stats *out)
{
    out->contexts = emb__native_contexts_ready();
    out->lost_no_context = emb_trace_lost_no_ring();
    out->stream_packets = __atomic_load_n(&emb__native.stream_packets, __ATOMIC_RELAXED);
    out->stream_bytes = __atomic_load_n(&emb__native.stream_bytes, __ATOMIC_RELAXED);
    out->stream_errors = __atomic_load_n(&emb__native.stream_errors, __ATOMIC_RELAXED);
}
