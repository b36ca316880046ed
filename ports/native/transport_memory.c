/* The native port's in-memory transports (emb/native_link.h): the memory channel a debugger
 * reads, and the retained ring (a file mapped shared, surviving the process). */
#define _GNU_SOURCE
#include <emb/native_link.h>

#include <emb/log.h>
#include <emb/memchan.h>
#include <emb/native.h>
#include <emb/shell.h>
#include <emb/trace_format.h>

#include "native_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "transport_internal.h"

/* ---- The memory channel ---- */

static struct {
    struct emb_native_sink sink;
    uint8_t *up, *down;
    uint32_t header_every, since_header;
} emb__mc;

static int emb__mc_header(const uint8_t *header, size_t len)
{
    if (emb_memchan_send_frame(0, EMB_FRAME_CH_TRACE, header, len) != EMB_OK)
        return -1;
    emb__mc.since_header = 0;
    return 0;
}

static int emb__mc_start(void *arg, const uint8_t *header, size_t len)
{
    (void)arg;
    emb__mc_header(header, len);
    return 0;
}

static int emb__mc_packet(void *arg, const uint8_t *packet, size_t len)
{
    (void)arg;
    emb_memchan_poll_shell(0, 0);
    if (emb__mc.header_every != 0u && emb__mc.since_header >= emb__mc.header_every) {
        static uint8_t header[EMB__HEADER_MAX];
        size_t hn = emb_native_stream_header(header, sizeof header);
        if (hn > 0u)
            emb__mc_header(header, hn);
    }
    if (emb_memchan_send_frame(0, EMB_FRAME_CH_TRACE, packet, len) != EMB_OK)
        return -1;
    emb__mc.since_header++;
    return 0;
}

static void emb__mc_stop(void *arg)
{
    (void)arg;
    emb_memchan_poll_shell(0, 0);
}

const struct emb_native_sink *emb_native_memchan_sink(uint32_t up_bytes, uint32_t down_bytes,
                                                      uint32_t header_every)
{
    free(emb__mc.up);
    free(emb__mc.down);
    emb__mc.up = malloc(up_bytes);
    emb__mc.down = malloc(down_bytes);
    if (emb__mc.up == NULL || emb__mc.down == NULL)
        return NULL;
    const struct emb_memchan_buffer up = {"emb-frames", emb__mc.up, up_bytes};
    const struct emb_memchan_buffer down = {"emb-shell", emb__mc.down, down_bytes};
    if (emb_memchan_init(&up, 1, &down, 1) != EMB_OK)
        return NULL;
    emb__mc.header_every = header_every;
    emb__mc.since_header = 0;
    emb__mc.sink = (struct emb_native_sink){emb__mc_start, emb__mc_packet, emb__mc_stop, NULL};
    return &emb__mc.sink;
}

/* ---- The retained ring ---- */

static struct {
    pthread_mutex_t lock;
    struct emb_retained_ring *ring;
    size_t bytes;
    struct emb_native_sink sink;
    uint32_t header_every, since_header;
} emb__rt = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct emb_retained_ring *emb_native_retained_map(const char *path, size_t bytes,
                                                  struct emb_retained_info *info)
{
    if (path == NULL || bytes < EMB_RETAINED_HEADER_SIZE + EMB_RETAINED_MIN_DATA ||
        bytes > 0x80000000u || emb__rt.ring != NULL) {
        errno = EINVAL;
        return NULL;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || ((size_t)st.st_size != bytes && ftruncate(fd, 0) != 0) ||
        ftruncate(fd, (off_t)bytes) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (mem == MAP_FAILED) {
        errno = e;
        return NULL;
    }
    if (emb_retained_attach(mem, bytes, info) != EMB_OK) {
        munmap(mem, bytes);
        errno = EINVAL;
        return NULL;
    }
    emb__rt.ring = mem;
    emb__rt.bytes = bytes;
    return mem;
}

void emb_native_retained_unmap(struct emb_retained_ring *ring)
{
    if (ring == NULL || ring != emb__rt.ring)
        return;
    pthread_mutex_lock(&emb__rt.lock);
    msync(ring, emb__rt.bytes, MS_SYNC);
    munmap(ring, emb__rt.bytes);
    emb__rt.ring = NULL;
    pthread_mutex_unlock(&emb__rt.lock);
}

emb_status emb_native_retained_put_frame(struct emb_retained_ring *ring, uint8_t channel,
                                         const void *payload, size_t len)
{
    pthread_mutex_lock(&emb__rt.lock);
    emb_status s = ring == emb__rt.ring ? emb_retained_put_frame(ring, channel, payload, len)
                                        : EMB_E_INVALID;
    pthread_mutex_unlock(&emb__rt.lock);
    return s;
}

static int emb__rt_start(void *arg, const uint8_t *header, size_t len)
{
    emb__rt.since_header = 0;
    return emb_native_retained_put_frame(arg, EMB_FRAME_CH_TRACE, header, len) == EMB_OK ? 0 : -1;
}

static int emb__rt_packet(void *arg, const uint8_t *packet, size_t len)
{
    if (emb__rt.header_every != 0u && emb__rt.since_header >= emb__rt.header_every) {
        static uint8_t header[EMB__HEADER_MAX];
        size_t hn = emb_native_stream_header(header, sizeof header);
        if (hn > 0u)
            (void)emb__rt_start(arg, header, hn);
    }
    emb__rt.since_header++;
    return emb_native_retained_put_frame(arg, EMB_FRAME_CH_TRACE, packet, len) == EMB_OK ? 0 : -1;
}

static void emb__rt_stop(void *arg)
{
    (void)arg;
}

const struct emb_native_sink *emb_native_retained_sink(struct emb_retained_ring *ring,
                                                       uint32_t header_every)
{
    if (ring == NULL || ring != emb__rt.ring)
        return NULL;
    emb__rt.header_every = header_every;
    emb__rt.since_header = 0;
    emb__rt.sink = (struct emb_native_sink){emb__rt_start, emb__rt_packet, emb__rt_stop, ring};
    return &emb__rt.sink;
}

/* The deferred log's frames, gathered whole before they go into the ring. */
static struct {
    struct emb_log_output out;
    uint8_t *buf;
    size_t len, cap;
} emb__rtlog;

static emb_status emb__rtlog_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    struct emb_retained_ring *ring = arg;
    emb_status status = EMB_OK;
    while (len > 0u) {
        const uint8_t *z = memchr(bytes, EMB_FRAME_DELIMITER, len);
        size_t n = z != NULL ? (size_t)(z - bytes) + 1u : len;
        if (emb__rtlog.len + n > emb__rtlog.cap) {
            size_t cap = emb__rtlog.cap ? emb__rtlog.cap : 4096u;
            while (cap < emb__rtlog.len + n)
                cap *= 2u;
            uint8_t *b = realloc(emb__rtlog.buf, cap);
            if (b == NULL)
                return EMB_E_NOSPACE;
            emb__rtlog.buf = b;
            emb__rtlog.cap = cap;
        }
        memcpy(emb__rtlog.buf + emb__rtlog.len, bytes, n);
        emb__rtlog.len += n;
        bytes += n;
        len -= (uint32_t)n;
        if (z != NULL) {
            pthread_mutex_lock(&emb__rt.lock);
            emb_status s = ring == emb__rt.ring
                               ? emb_retained_write(ring, emb__rtlog.buf, (uint32_t)emb__rtlog.len)
                               : EMB_E_INVALID;
            pthread_mutex_unlock(&emb__rt.lock);
            if (s != EMB_OK)
                status = s;
            emb__rtlog.len = 0;
        }
    }
    return status;
}

const struct emb_log_output *emb_native_retained_log_output(struct emb_retained_ring *ring)
{
    if (ring == NULL || ring != emb__rt.ring)
        return NULL;
    emb__rtlog.len = 0;
    emb__rtlog.out = (struct emb_log_output){emb__rtlog_write, ring};
    return &emb__rtlog.out;
}
