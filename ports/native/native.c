/* The native port: clock, contexts and their rings, dump and streaming.
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

static struct {
    struct emb_native_config config;
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    uint8_t build_id[EMB_TSF_BUILD_ID_MAX];
    uint32_t build_id_len;
    struct emb__context *contexts; /* config.max_contexts entries */
    uint8_t *ring_memory;
    size_t ring_memory_size;
    uint32_t claimed;              /* contexts handed out, may exceed max_contexts */
    pthread_key_t exit_key;
    /* streaming */
    int sink_fd;
    bool sink_owned;
    bool sink_seekable;
    size_t header_size;
    pthread_t worker;
    volatile int worker_stop;
    bool worker_running;
    uint64_t stream_packets, stream_bytes;
    uint32_t stream_errors;
    bool initialised;
    /* identity block */
    char firmware[EMB_TSF_FIRMWARE_MAX];
    char flags[EMB_TSF_CONFIG_MAX];
    uint64_t session_id;
} emb__native;

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
static int64_t emb__clock_offset(uint64_t hz)
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

static uint32_t emb__contexts_ready(void)
{
    uint32_t n = __atomic_load_n(&emb__native.claimed, __ATOMIC_ACQUIRE);
    return n < emb__native.config.max_contexts ? n : emb__native.config.max_contexts;
}

/* A signal can arrive in the middle of a claim and claim for the same thread (its first
 * event may come from a handler): claims happen with signals blocked, once per thread. */
/* Context names are read while their threads may be naming them (a repeated stream
 * header, emb_native_stream_header): written and read a byte at a time with atomics,
 * which a signal handler may do too. A name read mid-change is one header's blemish. */
#define EMB__NAME_SIZE sizeof(((struct emb_trace_ring *)0)->name)

static void emb__set_name(char *dst, const char *src)
{
    size_t i = 0;
    for (; i + 1u < EMB__NAME_SIZE && src[i] != '\0'; i++)
        __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
    for (; i < EMB__NAME_SIZE; i++)
        __atomic_store_n(&dst[i], '\0', __ATOMIC_RELAXED);
}

static void emb__get_name(char *dst, const char *src)
{
    for (size_t i = 0; i < EMB__NAME_SIZE; i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    dst[EMB__NAME_SIZE - 1u] = '\0';
}

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
    return emb__native.initialised ? emb__contexts_ready() : 0u;
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
static void emb__flush_quiescent(void)
{
    uint32_t n = emb__contexts_ready();
    for (uint32_t i = 0; i < n; i++) {
        struct emb__context *ctx = &emb__native.contexts[i];
        uint32_t state = __atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE);
        if (state == EMB_CONTEXT_EXITED || (state == EMB_CONTEXT_LIVE &&
                                          pthread_equal(ctx->owner, pthread_self())))
            emb_trace_flush(&ctx->ring);
    }
}

/* ---- Stream file header ---- */

void emb_native_set_identity(const char *firmware_version, const char *config,
                             uint64_t session_id)
{
    snprintf(emb__native.firmware, sizeof emb__native.firmware, "%s",
             firmware_version != NULL ? firmware_version : "");
    snprintf(emb__native.flags, sizeof emb__native.flags, "%s", config != NULL ? config : "");
    emb__native.session_id = session_id;
}

/* Room for the largest header: every context, the extension blocks, the SEAL block. */
#define EMB__HEADER_CAP (EMB_TSF_HEADER_BYTES(EMB_TSF_MAX_CONTEXTS + 1) + EMB_TSF_EXT_MAX + \
                         EMB_TSF_SEAL_SIZE)

/* Encodes the header with room for `table_entries` contexts: a stream's header is
 * rewritten at the end with the contexts that appeared meanwhile, in the same bytes.
 * A sealed header (a file this port writes) is version 2 with a SEAL block holding its
 * CRC; each packet after it is followed by its CRC (emb__write_packet). */
static size_t emb__encode_header(uint8_t *out, size_t cap, uint32_t table_entries,
                                 bool with_totals, bool sealed)
{
    struct emb_tsf_context table[EMB_TSF_MAX_CONTEXTS];
    char names[EMB_TSF_MAX_CONTEXTS][EMB__NAME_SIZE];
    uint32_t n = emb__contexts_ready();
    uint16_t count = 0;
    for (uint32_t i = 0; i < n && count < EMB_TSF_MAX_CONTEXTS; i++) {
        struct emb__context *ctx = &emb__native.contexts[i];
        if (__atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE) == EMB_CONTEXT_FREE)
            continue;
        uint32_t pos = emb_port_load32_acquire(&ctx->ring.write_pos);
        emb__get_name(names[count], ctx->ring.name);
        table[count] = (struct emb_tsf_context){
            .id = ctx->ring.context_id,
            .kind = ctx->ring.context_kind,
            .discarded = with_totals ? __atomic_load_n(&ctx->ring.discarded, __ATOMIC_RELAXED) : 0u,
            .packets = with_totals ? (pos + EMB__P - 1u) / EMB__P : 0u,
            .name = names[count],
        };
        count++;
    }
    uint32_t lost = emb_trace_lost_no_ring();
    if (lost > 0u && count < EMB_TSF_MAX_CONTEXTS)
        table[count++] = (struct emb_tsf_context){
            .id = 0xFFFFu, .kind = EMB_CONTEXT_THREAD, .discarded = lost, .name = "(no ring)"};
    struct emb_tsf_info info = {
        .catalog_checksum = EMB_TRACE_CATALOG_CHECKSUM,
        .packet_size = EMB__P,
        .clock_hz = emb__native.clock_hz,
        .clock_offset_ns = __atomic_load_n(&emb__native.clock_offset_ns, __ATOMIC_RELAXED),
        .build_id = emb__native.build_id,
        .build_id_len = (uint8_t)emb__native.build_id_len,
        .pointer_size = (uint8_t)sizeof(void *),
        .port = EMB_PORT_NAME,
    };
    memcpy(info.uuid, emb_trace_uuid(), 16);
    uint64_t session = emb__native.session_id;
    if (session == 0u)
        session = emb_get_le64(info.uuid);
    struct emb_tsf_identity identity = {session, emb__native.firmware, emb__native.flags};
    info.identity = &identity;
    info.ring_packets = emb__native.config.ring_packets;
    size_t size = emb_tsf_encode_header(out, cap, &info, table, count);
    if (size == 0u)
        return 0;
    size_t seal = size;
    if (sealed) {
        if (size + EMB_TSF_SEAL_SIZE > cap || size + EMB_TSF_SEAL_SIZE > 0xFFFFu)
            return 0;
        emb_put_le16(out + EMB_TSF_OFF_VERSION, EMB_TSF_VERSION_SEALED);
        emb_put_le32(out + seal + EMB_TSF_EXT_OFF_TAG, EMB_TSF_EXT_SEAL);
        emb_put_le32(out + seal + EMB_TSF_EXT_OFF_SIZE, EMB_TSF_SEAL_SIZE);
        memset(out + seal + EMB_TSF_SEAL_OFF_HEADER_CRC, 0, 8);
        size += EMB_TSF_SEAL_SIZE;
        emb_put_le16(out + EMB_TSF_OFF_HEADER_SIZE, (uint16_t)size);
    }
    if (table_entries > count) {
        /* Reserve room for contexts that appear later: the identity block moves down into
         * the zeros when the header is rewritten with more of them. */
        size_t full = EMB_TSF_HEADER_BYTES((size_t)table_entries) + EMB_TSF_EXT_MAX +
                      (sealed ? EMB_TSF_SEAL_SIZE : 0u);
        if (full <= cap && full <= 0xFFFFu && full > size) {
            memset(out + size, 0, full - size);
            emb_put_le16(out + EMB_TSF_OFF_HEADER_SIZE, (uint16_t)full);
            size = full;
        }
    }
    if (sealed) /* last: the CRC covers every byte of the header, this field as zero */
        emb_put_le32(out + seal + EMB_TSF_SEAL_OFF_HEADER_CRC, emb_crc32(0, out, size));
    return size;
}

int emb__native_write_all(int fd, const void *buf, size_t len)
{
    sigset_t pipe_set, saved, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &saved);
    bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    const uint8_t *p = (const uint8_t *)buf;
    int rc = 0;
    while (len > 0u) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        p += n;
        len -= (size_t)n;
    }
    int saved_errno = errno;
    if (rc != 0 && saved_errno == EPIPE && !was_pending) {
        /* The SIGPIPE this write raised: take it now, while it is still blocked. */
        static const struct timespec now = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &now) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    errno = saved_errno;
    return rc;
}

static int emb__write_all(int fd, const void *buf, size_t len)
{
    return emb__native_write_all(fd, buf, len);
}

/* A packet of a sealed file: its bytes, then their CRC-32, computed here, by the writer of
 * the file, off the recording path. */
static int emb__write_packet(int fd, const uint8_t *packet, uint32_t size)
{
    uint8_t crc[EMB_TSF_PACKET_CRC_SIZE];
    emb_put_le32(crc, emb_crc32(0, packet, size));
    return emb__write_all(fd, packet, size) == 0 && emb__write_all(fd, crc, sizeof crc) == 0 ? 0 : -1;
}

/* ---- Dump ---- */

struct emb__dump {
    int fd;
    int failed;
};

static void emb__dump_packet(void *arg, const struct emb_trace_ring *ring, const uint8_t *packet,
                             uint32_t size)
{
    (void)ring;
    struct emb__dump *d = arg;
    if (!d->failed && emb__write_packet(d->fd, packet, size) != 0)
        d->failed = 1;
}

emb_status emb_native_trace_dump(const char *path)
{
    if (!emb__native.initialised || path == NULL)
        return EMB_E_STATE;
    emb__flush_quiescent();
    static uint8_t header[EMB__HEADER_CAP];
    size_t header_size = emb__encode_header(header, sizeof header, 0, true, true);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return EMB_E_IO;
    struct emb__dump d = {fd, 0};
    if (header_size == 0u || emb__write_all(fd, header, header_size) != 0)
        d.failed = 1;
    static _Alignas(8) uint8_t scratch[EMB__P];
    uint32_t n = emb__contexts_ready();
    for (uint32_t i = 0; i < n && !d.failed; i++) {
        struct emb__context *ctx = &emb__native.contexts[i];
        if (__atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE) != EMB_CONTEXT_FREE)
            emb_trace_ring_snapshot(&ctx->ring, scratch, emb__dump_packet, &d);
    }
    if (close(fd) != 0)
        d.failed = 1;
    return d.failed ? EMB_E_IO : EMB_OK;
}

/* ---- Streaming ---- */

static void emb__stream_packet(void *arg, const struct emb_trace_ring *ring, const uint8_t *packet,
                               uint32_t size)
{
    (void)arg;
    (void)ring;
    /* Counted atomically: emb_native_stats_get() reads them while the worker runs. */
    if (emb__write_packet(emb__native.sink_fd, packet, size) != 0) {
        __atomic_fetch_add(&emb__native.stream_errors, 1u, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&emb__native.stream_packets, 1u, __ATOMIC_RELAXED);
    __atomic_fetch_add(&emb__native.stream_bytes, size, __ATOMIC_RELAXED);
}

static void emb__sink_packet(void *arg, const struct emb_trace_ring *ring, const uint8_t *packet,
                             uint32_t size)
{
    (void)ring;
    const struct emb_native_sink *sink = arg;
    if (sink->packet(sink->arg, packet, size) != 0) {
        __atomic_fetch_add(&emb__native.stream_errors, 1u, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&emb__native.stream_packets, 1u, __ATOMIC_RELAXED);
    __atomic_fetch_add(&emb__native.stream_bytes, size, __ATOMIC_RELAXED);
}

static void emb__stream_drain(void)
{
    /* A copy: a sink that blocks (a pipe nobody reads) must not hold a ring's slot, or
     * the ring would keep its old packets and the flight recorder go stale. One worker
     * drains, so one scratch packet serves every ring. */
    static uint8_t scratch[CONFIG_EMB_TRACE_PACKET_SIZE];
    uint32_t n = emb__contexts_ready();
    for (uint32_t i = 0; i < n; i++) {
        struct emb__context *ctx = &emb__native.contexts[i];
        if (__atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE) != EMB_CONTEXT_FREE)
            emb_trace_ring_consume_copy(&ctx->ring, scratch,
                                        emb__native.config.stream_sink ? emb__sink_packet
                                                                       : emb__stream_packet,
                                        (void *)emb__native.config.stream_sink);
    }
}

static void *emb__stream_worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "emb-stream");
    uint32_t period = emb__native.config.stream_period_us;
    struct timespec wait = {period / 1000000u, (long)(period % 1000000u) * 1000L};
    while (!__atomic_load_n(&emb__native.worker_stop, __ATOMIC_ACQUIRE)) {
        emb__stream_drain();
        nanosleep(&wait, NULL);
    }
    return NULL;
}

size_t emb_native_stream_header(uint8_t *out, size_t cap)
{
    if (!emb__native.initialised)
        return 0;
    __atomic_store_n(&emb__native.clock_offset_ns, emb__clock_offset(emb__native.clock_hz),
                     __ATOMIC_RELAXED);
    return emb__encode_header(out, cap, 0, false, false);
}

static emb_status emb__stream_start(void)
{
    const struct emb_native_config *c = &emb__native.config;
    if (c->stream_sink != NULL) {
        static uint8_t header[EMB__HEADER_CAP];
        size_t n = emb__encode_header(header, sizeof header, 0, false, false);
        if (n == 0u || c->stream_sink->start(c->stream_sink->arg, header, n) != 0)
            return EMB_E_IO;
        emb__native.sink_fd = -1;
        emb__native.sink_owned = false;
        emb__native.sink_seekable = false;
    } else if (c->stream_path != NULL) {
        emb__native.sink_fd = open(c->stream_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        emb__native.sink_owned = true;
    } else {
        emb__native.sink_fd = c->stream_fd;
        emb__native.sink_owned = false;
    }
    if (c->stream_sink == NULL && emb__native.sink_fd < 0)
        return EMB_E_IO;
    if (c->stream_sink == NULL)
        emb__native.sink_seekable = lseek(emb__native.sink_fd, 0, SEEK_CUR) >= 0;
    static uint8_t header[EMB__HEADER_CAP];
    /* A file gets room for every context so the header can be completed at shutdown. */
    uint32_t entries = emb__native.sink_seekable ? c->max_contexts + 1u : 0u;
    if (entries > EMB_TSF_MAX_CONTEXTS)
        entries = EMB_TSF_MAX_CONTEXTS;
    if (c->stream_sink == NULL) {
        emb__native.header_size = emb__encode_header(header, sizeof header, entries, false, true);
        if (emb__native.header_size == 0u ||
            emb__write_all(emb__native.sink_fd, header, emb__native.header_size) != 0)
            return EMB_E_IO;
    }
    emb__native.worker_stop = 0;
    /* The worker records nothing and must never be the thread a timer signal lands on:
     * it is born with every signal blocked (a thread inherits its creator's mask). */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    int rc = pthread_create(&emb__native.worker, NULL, emb__stream_worker, NULL);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0)
        return EMB_E_IO;
    emb__native.worker_running = true;
    return EMB_OK;
}

static void emb__stream_stop(void)
{
    if (!emb__native.worker_running)
        return;
    __atomic_store_n(&emb__native.worker_stop, 1, __ATOMIC_RELEASE);
    pthread_join(emb__native.worker, NULL);
    emb__native.worker_running = false;
    emb__flush_quiescent();
    emb__stream_drain();
    if (emb__native.sink_seekable) {
        static uint8_t header[EMB__HEADER_CAP];
        size_t cap = emb__native.header_size;
        size_t n = emb__encode_header(header, cap,
                                      (uint32_t)((cap - EMB_TSF_FIXED_SIZE - EMB_TSF_EXT_MAX -
                                                  EMB_TSF_SEAL_SIZE) / EMB_TSF_CONTEXT_SIZE),
                                      true, true);
        if (n == cap && pwrite(emb__native.sink_fd, header, n, 0) != (ssize_t)n)
            __atomic_fetch_add(&emb__native.stream_errors, 1u, __ATOMIC_RELAXED);
    }
    if (emb__native.config.stream_sink != NULL)
        emb__native.config.stream_sink->stop(emb__native.config.stream_sink->arg);
    if (emb__native.sink_owned)
        close(emb__native.sink_fd);
    emb__native.sink_fd = -1;
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
    emb__native.clock_offset_ns = emb__clock_offset(emb__native.clock_hz);
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
        emb_status s = emb__stream_start();
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
    emb__stream_stop();
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
    out->contexts = emb__contexts_ready();
    out->lost_no_context = emb_trace_lost_no_ring();
    out->stream_packets = __atomic_load_n(&emb__native.stream_packets, __ATOMIC_RELAXED);
    out->stream_bytes = __atomic_load_n(&emb__native.stream_bytes, __ATOMIC_RELAXED);
    out->stream_errors = __atomic_load_n(&emb__native.stream_errors, __ATOMIC_RELAXED);
}
