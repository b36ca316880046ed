/* The native port's stream writer (native_stream.c): the stream file's header, the trace
 * dump and the streaming worker, over the port's contexts (native.c). */
#define _GNU_SOURCE
#include <emb/native.h>
#include <emb/native_link.h>

#include <emb/crc.h>
#include <emb/wire.h>
#include <emb/port.h>
#include <emb/trace_events.h>

#include "native_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EMB__P CONFIG_EMB_TRACE_PACKET_SIZE

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
    uint32_t n = emb__native_contexts_ready();
    uint16_t count = 0;
    for (uint32_t i = 0; i < n && count < EMB_TSF_MAX_CONTEXTS; i++) {
        struct emb__context *ctx = &emb__native.contexts[i];
        if (__atomic_load_n(&ctx->info.state, __ATOMIC_ACQUIRE) == EMB_CONTEXT_FREE)
            continue;
        uint32_t pos = emb_port_load32_acquire(&ctx->ring.write_pos);
        emb__native_get_name(names[count], ctx->ring.name);
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
    emb__native_flush_quiescent();
    static uint8_t header[EMB__HEADER_CAP];
    size_t header_size = emb__encode_header(header, sizeof header, 0, true, true);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return EMB_E_IO;
    struct emb__dump d = {fd, 0};
    if (header_size == 0u || emb__write_all(fd, header, header_size) != 0)
        d.failed = 1;
    static _Alignas(8) uint8_t scratch[EMB__P];
    uint32_t n = emb__native_contexts_ready();
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
    uint32_t n = emb__native_contexts_ready();
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
    __atomic_store_n(&emb__native.clock_offset_ns, emb__native_clock_offset(emb__native.clock_hz),
                     __ATOMIC_RELAXED);
    return emb__encode_header(out, cap, 0, false, false);
}

emb_status emb__native_stream_start(void)
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

void emb__native_stream_stop(void)
{
    if (!emb__native.worker_running)
        return;
    __atomic_store_n(&emb__native.worker_stop, 1, __ATOMIC_RELEASE);
    pthread_join(emb__native.worker, NULL);
    emb__native.worker_running = false;
    emb__native_flush_quiescent();
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
