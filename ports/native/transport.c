/* Byte-stream transports of the native port (emb/native_link.h): frames to a descriptor
 * (a pipe, a file, a serial port) and the crash frame every transport sends. The TCP record
 * server is transport_server.c, the memory channel and the retained ring transport_memory.c. */
#define _GNU_SOURCE
#include <emb/native_link.h>

#include <emb/frame.h>
#include <emb/log.h>
#include <emb/native.h>

#include "native_internal.h"
#include "posix_serial.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_internal.h"

static int emb__write_all(int fd, const uint8_t *p, size_t n)
{
    return emb__native_write_all(fd, p, n);
}

emb_status emb__native_crash_frame(const uint8_t *record, size_t len, uint8_t **frame, size_t *n)
{
    *frame = NULL;
    *n = 0;
    if (record == NULL || len == 0u || len > EMB_FRAME_CRASH_MAX)
        return EMB_E_INVALID;
    size_t cap = EMB_FRAME_WIRE_MAX(len);
    uint8_t *f = malloc(cap);
    if (f == NULL || (*n = emb_frame_encode(f, cap, EMB_FRAME_CH_CRASH, record, len)) == 0u) {
        free(f);
        return EMB_E_NOSPACE;
    }
    *frame = f;
    return EMB_OK;
}

/* ---- Frames to a descriptor ---- */

/* With the lock held. */
static int emb__framed_write(struct emb_native_framed *f, const uint8_t *payload, size_t len)
{
    size_t n = emb_frame_encode(f->buf, EMB__FRAME_MAX, EMB_FRAME_CH_TRACE, payload, len);
    if (n == 0u || emb__write_all(f->fd, f->buf, n) != 0)
        return -1;
    f->stats.frames++;
    f->stats.bytes += n;
    return 0;
}

static int emb__framed_header(struct emb_native_framed *f, const uint8_t *header, size_t len)
{
    if (emb__framed_write(f, header, len) != 0)
        return -1;
    f->stats.headers++;
    f->since_header = 0;
    return 0;
}

static int emb__framed_start(void *arg, const uint8_t *header, size_t len)
{
    struct emb_native_framed *f = arg;
    /* A delimiter first: a serial reader already listening takes the first frame as
     * whole instead of as the tail of one it joined in the middle of. */
    static const uint8_t delimiter = EMB_FRAME_DELIMITER;
    pthread_mutex_lock(&f->lock);
    int rc = emb__write_all(f->fd, &delimiter, 1) == 0 ? 0 : -1;
    if (rc == 0) {
        f->stats.bytes++;
        rc = emb__framed_header(f, header, len);
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

static int emb__framed_packet(void *arg, const uint8_t *packet, size_t len)
{
    struct emb_native_framed *f = arg;
    static uint8_t header[EMB__HEADER_MAX];
    size_t hn = 0;
    if (f->header_every != 0u && f->since_header >= f->header_every)
        /* A repeat for readers that joined late, with the clock offset measured again
         * (outside the lock: only this worker touches since_header and `header`). */
        hn = emb_native_stream_header(header, sizeof header);
    pthread_mutex_lock(&f->lock);
    if (hn > 0u)
        emb__framed_header(f, header, hn);
    int rc = emb__framed_write(f, packet, len);
    if (rc != 0)
        f->stats.dropped++;
    else
        f->since_header++;
    pthread_mutex_unlock(&f->lock);
    return rc;
}

static void emb__framed_stop(void *arg)
{
    (void)arg;
}

struct emb_native_framed *emb_native_framed_new(int fd, uint32_t header_every)
{
    struct emb_native_framed *f = calloc(1, sizeof *f + EMB__FRAME_MAX);
    if (f == NULL)
        return NULL;
    f->fd = fd;
    f->header_every = header_every;
    pthread_mutex_init(&f->lock, NULL);
    f->sink = (struct emb_native_sink){emb__framed_start, emb__framed_packet, emb__framed_stop, f};
    return f;
}

emb_status emb_native_framed_send_crash(struct emb_native_framed *f, const uint8_t *record,
                                        size_t len)
{
    size_t n;
    uint8_t *frame;
    emb_status st = emb__native_crash_frame(record, len, &frame, &n);
    if (st != EMB_OK)
        return st;
    pthread_mutex_lock(&f->lock);
    int rc = emb__write_all(f->fd, frame, n);
    if (rc == 0) {
        f->stats.frames++;
        f->stats.bytes += n;
        f->stats.crash_frames++;
    }
    pthread_mutex_unlock(&f->lock);
    free(frame);
    return rc == 0 ? EMB_OK : EMB_E_IO;
}

/* The deferred log's frames on a framed link, gathered whole. The log's writers are one
 * at a time already (emb_log_output_acquire()), so the gathering needs no lock of its own. */
struct emb_native_framed_log {
    struct emb_log_output out;
    struct emb_native_framed *link;
    uint8_t *buf;
    size_t len, cap;
    bool broken;  /* out of memory in this frame: it is dropped at its delimiter */
};

static bool emb__gather(struct emb_native_framed_log *g, const uint8_t *p, size_t n)
{
    if (g->len + n > g->cap) {
        size_t cap = g->cap ? g->cap : 4096u;
        while (cap < g->len + n)
            cap *= 2u;
        uint8_t *b = realloc(g->buf, cap);
        if (b == NULL)
            return false;
        g->buf = b;
        g->cap = cap;
    }
    memcpy(g->buf + g->len, p, n);
    g->len += n;
    return true;
}

static emb_status emb__framed_log_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    struct emb_native_framed_log *g = arg;
    struct emb_native_framed *f = g->link;
    emb_status status = EMB_OK;
    while (len > 0u) {
        const uint8_t *z = memchr(bytes, EMB_FRAME_DELIMITER, len);
        size_t n = z != NULL ? (size_t)(z - bytes) + 1u : len;
        if (!g->broken && !emb__gather(g, bytes, n))
            g->broken = true;
        bytes += n;
        len -= (uint32_t)n;
        if (z == NULL)
            break;
        pthread_mutex_lock(&f->lock);
        if (!g->broken && emb__write_all(f->fd, g->buf, g->len) == 0) {
            if (g->len > 1u) { /* not a writer's lone leading delimiter */
                f->stats.log_frames++;
                f->stats.frames++;
            }
            f->stats.bytes += g->len;
        } else {
            f->stats.log_dropped++;
            status = EMB_E_IO;
        }
        pthread_mutex_unlock(&f->lock);
        g->len = 0;
        g->broken = false;
    }
    return status;
}

const struct emb_log_output *emb_native_framed_log_output(struct emb_native_framed *f)
{
    if (f == NULL)
        return NULL;
    if (f->log == NULL) {
        f->log = calloc(1, sizeof *f->log);
        if (f->log == NULL)
            return NULL;
        f->log->link = f;
        f->log->out = (struct emb_log_output){emb__framed_log_write, f->log};
    }
    return &f->log->out;
}

void emb_native_framed_stats(struct emb_native_framed *f, struct emb_native_link_stats *out)
{
    pthread_mutex_lock(&f->lock);
    *out = f->stats;
    pthread_mutex_unlock(&f->lock);
}

void emb_native_framed_free(struct emb_native_framed *f)
{
    if (f == NULL)
        return;
    if (f->log != NULL)
        free(f->log->buf);
    free(f->log);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

int emb_native_serial_open(const char *path, uint32_t baud)
{
    return emb_posix_serial_open(path, baud);
}

