/* Capture sources that carry bytes (capture_source.h): a file, a serial line, the record
 * server's sockets, a raw SWO capture, and the image of a retained ring. */
#define _GNU_SOURCE
#include "capture_source_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "frame_decode.h"
#include "hostio.h"
#include "posix_serial.h"
#include "input_file.h"
#include "retained_host.h"
#include "swo.h"
#include "trace_assemble.h"

/* ---- Byte streams: file, tcp, unix, serial ---- */

/* Reads fd to its end (or a stop condition) into the frame decoder. 0, or -1 with errno
 * (EFBIG: a file of frames past the input limit). */
static int stream_loop(struct emb_source_run *c, int fd, bool live, bool can_write)
{
    uint8_t buf[65536];
    for (;;) {
        const char *why = emb_source_should_stop(c);
        if (why != NULL) {
            emb_source_stopped(c, why);
            return 0;
        }
        if (can_write && c->down.len > 0) {
            if (emb_hostio_write_all(fd, c->down.data, c->down.len) == 0)
                c->down.len = 0;
        }
        ssize_t n = emb_hostio_read(fd, buf, sizeof buf, live ? 50 : -1);
        if (n == -2 || (n < 0 && errno == EINTR))
            continue;
        /* n < 0 with EIO: a serial line whose other end went away (a pseudo-terminal's
         * master). */
        if (n == 0 || (n < 0 && errno == EIO)) {
            emb_source_stopped(c, "end of source");
            return 0;
        }
        if (n < 0)
            return -1;
        c->st->bytes += (uint64_t)n;
        emb_frame_dec_feed(c->dec, buf, (size_t)n);
        if (!live && c->st->bytes > emb_input_limit()) {
            /* A file of frames (or /dev/zero): bounded like any other whole input. */
            errno = EFBIG;
            return -1;
        }
    }
}

static void too_large(struct emb_source_run *c)
{
    emb_source_error(c, "more than the input limit of %llu bytes (set " EMB_INPUT_LIMIT_ENV
                     " to read more)", (unsigned long long)emb_input_limit());
}

/* A file that is a trace stream already, its first four bytes read: taken as it is. */
static int whole_stream(struct emb_source_run *c, int fd, const uint8_t head[4])
{
    struct emb_buf all = {0};
    emb_buf_append(&all, head, 4);
    uint8_t buf[65536];
    ssize_t n;
    uint64_t limit = emb_input_limit();
    while ((n = read(fd, buf, sizeof buf)) > 0 && all.len <= limit)
        if (!emb_buf_append(&all, buf, (size_t)n)) {
            n = -1;
            break;
        }
    if (n < 0 || all.len > limit) {
        if (n < 0)
            emb_source_error(c, "%s", all.failed ? "out of memory" : strerror(errno));
        else
            too_large(c);
        emb_buf_free(&all);
        return -1;
    }
    c->res->trace = emb_buf_take(&all, &c->res->trace_len);
    c->st->bytes = c->res->trace_len;
    emb_source_stopped(c, "end of source");
    return 0;
}

static int open_input(struct emb_source_run *c)
{
    int fd = strcmp(c->o->target, "-") ? open(c->o->target, O_RDONLY | O_CLOEXEC) : 0;
    if (fd < 0)
        emb_source_error(c, "cannot open: %s", strerror(errno));
    return fd;
}

int emb_source_file(struct emb_source_run *c)
{
    int fd = open_input(c);
    if (fd < 0)
        return -1;
    uint8_t head[4];
    ssize_t hn = read(fd, head, sizeof head);
    int rc;
    if (hn == 4 && emb_get_le32(head) == EMB_TSF_MAGIC) {
        rc = whole_stream(c, fd, head);
    } else {
        if (hn > 0) {
            c->st->bytes += (uint64_t)hn;
            emb_frame_dec_feed(c->dec, head, (size_t)hn);
        }
        rc = stream_loop(c, fd, false, false);
        if (rc != 0 && errno == EFBIG)
            too_large(c);
        else if (rc != 0)
            emb_source_error(c, "read error: %s", strerror(errno));
    }
    if (fd != 0)
        close(fd);
    return rc;
}

/* A live, two-way link (socket or serial line) read to its end; takes the descriptor. */
static int stream_live(struct emb_source_run *c, int fd)
{
    int rc = stream_loop(c, fd, true, true);
    if (rc != 0)
        emb_source_error(c, "%s", strerror(errno));
    close(fd);
    return rc;
}

/* The record server's first line from a TCP client (docs/formats/frame.md). */
static int send_token(struct emb_source_run *c, int fd, const char *token)
{
    static const char prefix[] = "EMB-TOKEN ";
    size_t tl = strlen(token);
    uint8_t line[sizeof prefix + 256];
    if (tl > 256 || memchr(token, '\n', tl) != NULL) {
        emb_source_error(c, "the token is longer than 256 bytes or holds a newline");
        return -1;
    }
    memcpy(line, prefix, sizeof prefix - 1);
    memcpy(line + sizeof prefix - 1, token, tl);
    line[sizeof prefix - 1 + tl] = '\n';
    if (emb_hostio_write_all(fd, line, sizeof prefix + tl) != 0) {
        emb_source_error(c, "sending the token: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int emb_source_tcp(struct emb_source_run *c)
{
    char err[256];
    int fd = emb_hostio_connect(c->o->target, 5000, err, sizeof err);
    if (fd < 0) {
        emb_source_error_named(c, err);
        return -1;
    }
    if (c->o->token != NULL && send_token(c, fd, c->o->token) != 0) {
        close(fd);
        return -1;
    }
    return stream_live(c, fd);
}

/* The record server's owner-only socket: served when the server runs as this user, and
 * believed only then (SO_PEERCRED: another user could have bound a socket at the path). */
int emb_source_unix(struct emb_source_run *c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(c->o->target) >= sizeof sa.sun_path) {
        emb_source_error(c, "socket path longer than %zu bytes", sizeof sa.sun_path - 1);
        return -1;
    }
    strcpy(sa.sun_path, c->o->target);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        emb_source_error(c, "no record server answers there (%s)", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
        emb_source_error(c, "the record server there runs as uid %u, not as you (uid %u): refused",
                         (unsigned)cred.uid, (unsigned)getuid());
        close(fd);
        return -1;
    }
    return stream_live(c, fd);
}

int emb_source_serial(struct emb_source_run *c)
{
    uint32_t baud = c->o->baud ? c->o->baud : 115200u;
    int fd = emb_posix_serial_open(c->o->target, baud);
    if (fd < 0) {
        emb_source_error(c, "cannot open at %u baud: %s", baud, strerror(errno));
        return -1;
    }
    return stream_live(c, fd);
}

/* ---- A raw SWO capture ---- */

/* Where, inside the `span` bytes of the packet or header starting at `b`, another packet
 * or a header starts: the one at `b` was cut short (the ITM switched off on its way, with
 * no overflow packet to say so). The target writes words, so a cut falls on a multiple of
 * 4 bytes from its start. 0 when it is whole. */
static size_t cut_at(const uint8_t *b, size_t avail, size_t span, uint32_t packet_size)
{
    for (size_t k = 4; k < span && k + 4u <= avail; k += 4u) {
        uint32_t magic = emb_get_le32(b + k);
        if (magic == EMB_PKT_MAGIC) {
            if (k + EMB_PKT_OFF_PACKET_SIZE + 4u > avail ||
                emb_get_le32(b + k + EMB_PKT_OFF_PACKET_SIZE) == 8u * packet_size)
                return k;
        } else if (magic == EMB_TSF_MAGIC) {
            if (k + EMB_TSF_OFF_PACKET_SIZE + 4u > avail ||
                emb_get_le32(b + k + EMB_TSF_OFF_PACKET_SIZE) == packet_size)
                return k;
        }
    }
    return 0;
}

/* The stream header at b, when a whole one is there: its size, 0 when more bytes are
 * needed, -1 when b holds no header (skip a byte). */
static long split_header(struct emb_source_run *c, const uint8_t *b, size_t avail)
{
    if (avail < EMB_TSF_FIXED_SIZE)
        return 0;
    uint16_t hs = emb_get_le16(b + EMB_TSF_OFF_HEADER_SIZE);
    uint32_t ps = emb_get_le32(b + EMB_TSF_OFF_PACKET_SIZE);
    if (emb_get_le32(b) != EMB_TSF_MAGIC || hs < EMB_TSF_FIXED_SIZE || ps < 256u || ps > 65536u ||
        (ps & (ps - 1u)) != 0u)
        return -1;
    if (avail < hs)
        return 0;
    /* A header cut short is skipped as a packet is: the next header repeats it. */
    size_t cut = cut_at(b, avail, hs, ps);
    if (cut != 0u) {
        c->st->resyncs += cut;
        return (long)cut;
    }
    emb_trace_assemble_frame(c->tasm, b, hs);
    c->sp.have_header = true;
    c->sp.packet_size = ps;
    return hs;
}

/* The packet at b: bytes taken (a whole packet, or the part before a cut), 0 when more
 * bytes are needed or a header follows, -1 when b holds no packet (skip a byte). */
static long split_packet(struct emb_source_run *c, const uint8_t *b, size_t avail)
{
    struct emb_source_splitter *s = &c->sp;
    if (avail < 4u)
        return 0;
    if (emb_get_le32(b) == EMB_TSF_MAGIC) {
        /* A repeated header (for readers that attach late): the splitter looks for the
         * next one as it looked for the first. */
        s->have_header = false;
        return 0;
    }
    if (emb_get_le32(b) != EMB_PKT_MAGIC)
        return -1;
    if (avail < s->packet_size)
        return 0;
    if (emb_get_le32(b + EMB_PKT_OFF_PACKET_SIZE) != 8u * s->packet_size)
        return -1;
    size_t cut = cut_at(b, avail, s->packet_size, s->packet_size);
    if (cut != 0u) {
        c->st->resyncs += cut;
        return (long)cut;
    }
    emb_trace_assemble_frame(c->tasm, b, s->packet_size);
    return (long)s->packet_size;
}

/* Bytes of a raw trace stream (SWO port 1), `lost` when bytes went missing before them. */
static void split(struct emb_source_run *c, const uint8_t *p, size_t n, bool lost)
{
    struct emb_source_splitter *s = &c->sp;
    if (lost && s->have_header && s->buf.len > 0) {
        /* Bytes went missing before these: the packet in progress is not whole. */
        c->st->resyncs += s->buf.len;
        s->buf.len = 0;
    }
    emb_buf_append(&s->buf, p, n);
    size_t pos = 0;
    for (;;) {
        bool had_header = s->have_header;
        long took = had_header ? split_packet(c, s->buf.data + pos, s->buf.len - pos)
                               : split_header(c, s->buf.data + pos, s->buf.len - pos);
        if (took < 0) {
            pos++;
            c->st->resyncs++;
        } else if (took > 0) {
            pos += (size_t)took;
        } else if (had_header == s->have_header) {
            break; /* more bytes needed */
        }
    }
    if (pos > 0)
        memmove(s->buf.data, s->buf.data + pos, s->buf.len - pos);
    s->buf.len -= pos;
}

static void on_swo(void *arg, unsigned port, const uint8_t *b, size_t n, bool lost, uint64_t t)
{
    (void)t;
    struct emb_source_run *c = arg;
    if (port == 1)
        split(c, b, n, lost);
    else if (port == 0)
        emb_buf_append(&c->log, b, n);
}

int emb_source_swo(struct emb_source_run *c)
{
    int fd = open_input(c);
    if (fd < 0)
        return -1;
    struct emb_swo_demux d;
    emb_swo_demux_init(&d, 0x3u, on_swo, c);
    uint8_t buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        c->st->bytes += (uint64_t)n;
        emb_swo_demux_feed(&d, buf, (size_t)n);
        const char *why = emb_source_should_stop(c);
        if (why != NULL) {
            emb_source_stopped(c, why);
            break;
        }
    }
    emb_swo_demux_finish(&d);
    c->st->overflows = d.swo.stats.overflows;
    if (c->st->stop_reason[0] == '\0')
        emb_source_stopped(c, d.swo.stats.truncated ? "end of source (last packet cut short)"
                                                    : "end of source");
    if (fd != 0)
        close(fd);
    if (n < 0) {
        emb_source_error(c, "read error: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- A retained ring's image ---- */

int emb_source_retained(struct emb_source_run *c)
{
    size_t len;
    char why[200];
    uint8_t *img = emb_input_read(c->o->target, &len, why, sizeof why);
    if (img == NULL) {
        emb_source_error(c, "%s", why);
        return -1;
    }
    struct emb_retained_view v;
    uint8_t *frames = NULL;
    if (emb_retained_find(img, len, 0, &v, why, sizeof why) != 0)
        emb_source_error(c, "%s", why);
    else if ((frames = malloc(v.pending + 1u)) == NULL)
        emb_source_error(c, "out of memory");
    if (frames == NULL) {
        free(img);
        return -1;
    }
    emb_retained_copy(img, &v, frames);
    c->st->bytes = v.pending;
    c->st->retained_starts = v.starts;
    c->st->retained_dropped = v.dropped;
    c->st->retained_cut = v.cut;
    c->st->retained_lost = v.lost;
    emb_frame_dec_feed(c->dec, frames, v.pending);
    free(frames);
    free(img);
    emb_source_stopped(c, "end of source");
    return 0;
}
