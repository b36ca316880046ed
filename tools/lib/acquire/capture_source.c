/* Capture sources: bytes from wherever the target sends them, to a trace stream. */
#define _GNU_SOURCE
#include "capture_source.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <emb/frame.h>
#include <emb/shell.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#include "crash_decode.h"
#include "desc_read.h"
#include "elf_image.h"
#include "elf_sym.h"
#include "frame_decode.h"
#include "gdb_rsp.h"
#include "hostio.h"
#include "input_file.h"
#include "memaccess.h"
#include "memchan_host.h"
#include "probe.h"
#include "retained_host.h"
#include "swo.h"
#include "trace_assemble.h"

#define EMB__IDLE_AFTER_CLOSE_MS 300u
#define EMB__PING_MS 250u

struct emb__bytes {
    uint8_t *p;
    size_t n, cap;
};

static int emb__append(struct emb__bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (q == NULL)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

/* Splits a raw trace stream that may have lost bytes (SWO) into its header and whole
 * packets for the assembler, skipping to the next packet magic after a loss. */
struct emb__splitter {
    struct emb__bytes buf;
    bool have_header;
    uint32_t packet_size;
};

struct emb__cap {
    const struct emb_source_options *o;
    struct emb_source_stats *st;
    struct emb_frame_dec *dec;
    struct emb_tasm *tasm;
    struct emb__bytes log;
    struct emb__bytes crash;    /* the newest whole crash record that came on channel 2 */
    struct emb__splitter sp;
    struct emb__bytes down;     /* command frames waiting to go to the target */
    uint64_t start_ms, last_progress_ms, last_ping_ms, last_packet_ms, closed_ms;
    uint64_t last_packets;
    uint32_t cookie;
    bool direct;                /* the trace and log arrive whole, not as frames */
};

static uint64_t emb__now(void)
{
    return emb_hostio_now_ms();
}

/* ---- What arrives ---- */

static void emb__on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct emb__cap *c = arg;
    if (ch == EMB_FRAME_CH_TRACE) {
        emb_trace_assemble_frame(c->tasm, p, len);
    } else if (ch == EMB_FRAME_CH_LOG) {
        /* The log stream is kept as log frames, what `emb log` reads (docs/capture-sources.md):
         * encoding is deterministic, so these are the bytes the target sent, minus damage. */
        uint8_t stack[512];
        size_t cap = EMB_FRAME_WIRE_MAX(len);
        uint8_t *f = cap <= sizeof stack ? stack : malloc(cap);
        if (f != NULL) {
            size_t n = emb_frame_encode(f, cap, EMB_FRAME_CH_LOG, p, len);
            emb__append(&c->log, f, n);
            if (f != stack)
                free(f);
        }
    } else if (ch == EMB_FRAME_CH_CRASH) {
        /* A crash record the target found at start and sent (docs/formats/frame.md): kept
         * when it checks out (magic, length, CRC), the newest one winning. */
        struct emb_crash_record r;
        if (emb_crash_decode(p, len, &r, NULL) == 0 && r.length == len) {
            c->crash.n = 0;
            emb__append(&c->crash, p, len);
            c->st->crash_records++;
        } else {
            c->st->bad_crash_records++;
        }
    } else if (ch == EMB_FRAME_CH_SHELL && len >= 2) {
        c->st->replies++;
        /* PING and ARM_WINDOW replies carry the window state. */
        uint32_t state = 0;
        if (p[0] == (EMB_SHELL_PING | EMB_SHELL_REPLY) && len >= 7)
            state = p[6];
        else if (p[0] == (EMB_SHELL_ARM_WINDOW | EMB_SHELL_REPLY) && len >= 6)
            state = emb_get_le32(p + 2);
        if (state == EMB_TRACE_WINDOW_CLOSED && !c->st->window_closed) {
            c->st->window_closed = true;
            c->closed_ms = emb__now();
        }
    }
}

/* Where, inside the packet starting at `b`, another packet or a header starts: the one at
 * `b` was cut short (the ITM switched off on its way, with no overflow packet to say so).
 * The target writes words, so a cut falls on a multiple of 4 bytes from the packet's
 * start. 0 when the packet is whole. */
static size_t emb__cut_at(const uint8_t *b, size_t avail, uint32_t packet_size)
{
    for (size_t k = 4; k < packet_size && k + 4u <= avail; k += 4u) {
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

static void emb__split(struct emb__cap *c, const uint8_t *p, size_t n, bool lost)
{
    struct emb__splitter *s = &c->sp;
    if (lost && s->have_header && s->buf.n > 0) {
        /* Bytes went missing before these: the packet in progress is not whole. */
        c->st->resyncs += s->buf.n;
        s->buf.n = 0;
    }
    emb__append(&s->buf, p, n);
    size_t pos = 0;
    for (;;) {
        uint8_t *b = s->buf.p + pos;
        size_t avail = s->buf.n - pos;
        if (!s->have_header) {
            if (avail < EMB_TSF_FIXED_SIZE)
                break;
            uint16_t hs = emb_get_le16(b + EMB_TSF_OFF_HEADER_SIZE);
            uint32_t ps = emb_get_le32(b + EMB_TSF_OFF_PACKET_SIZE);
            if (emb_get_le32(b) != EMB_TSF_MAGIC || hs < EMB_TSF_FIXED_SIZE || ps < 256u ||
                ps > 65536u || (ps & (ps - 1u)) != 0u) {
                pos++;
                c->st->resyncs++;
                continue;
            }
            if (avail < hs)
                break;
            emb_trace_assemble_frame(c->tasm, b, hs);
            s->have_header = true;
            s->packet_size = ps;
            pos += hs;
            continue;
        }
        if (avail < 4u)
            break;
        if (emb_get_le32(b) == EMB_TSF_MAGIC) {
            /* A repeated header (for readers that attach late): the splitter looks for
             * the next one as it looked for the first. */
            s->have_header = false;
            continue;
        }
        if (emb_get_le32(b) != EMB_PKT_MAGIC) {
            pos++;
            c->st->resyncs++;
            continue;
        }
        if (avail < s->packet_size)
            break;
        if (emb_get_le32(b + EMB_PKT_OFF_PACKET_SIZE) != 8u * s->packet_size) {
            pos++;
            c->st->resyncs++;
            continue;
        }
        size_t cut = emb__cut_at(b, avail, s->packet_size);
        if (cut != 0u) {
            pos += cut;
            c->st->resyncs += cut;
            continue;
        }
        emb_trace_assemble_frame(c->tasm, b, s->packet_size);
        pos += s->packet_size;
    }
    memmove(s->buf.p, s->buf.p + pos, s->buf.n - pos);
    s->buf.n -= pos;
}

static void emb__on_swo(void *arg, unsigned port, const uint8_t *b, size_t n, bool lost, uint64_t t)
{
    (void)t;
    struct emb__cap *c = arg;
    if (port == 1)
        emb__split(c, b, n, lost);
    else if (port == 0)
        emb__append(&c->log, b, n);
}

/* ---- Commands to the target ---- */

static void emb__command(struct emb__cap *c, const uint8_t *cmd, size_t len)
{
    uint8_t frame[64];
    size_t n = emb_frame_encode(frame, sizeof frame, EMB_FRAME_CH_SHELL, cmd, len);
    emb__append(&c->down, frame, n);
}

static void emb__ping(struct emb__cap *c)
{
    uint8_t ping[5] = {EMB_SHELL_PING};
    emb_put_le32(ping + 1, ++c->cookie);
    emb__command(c, ping, sizeof ping);
}

/* ---- When to stop ---- */

static void emb__stats(struct emb__cap *c)
{
    struct emb_source_stats *st = c->st;
    const struct emb_frame_stats *fs = emb_frame_dec_stats(c->dec);
    const struct emb_trace_assemble_stats *ts = emb_trace_assemble_stats(c->tasm);
    if (!c->direct) {
        st->frames = fs->frames;
        st->bad_frames = fs->dropped;
        st->packets = ts->packets;
        st->headers = ts->headers;
        st->foreign = ts->foreign;
        st->log_bytes = c->log.n;
    }
    uint64_t now = emb__now();
    st->elapsed_ms = now - c->start_ms;
    if (ts->packets != c->last_packets) {
        c->last_packets = ts->packets;
        c->last_packet_ms = now;
    }
    if (c->o->progress != NULL && now - c->last_progress_ms >= 200u) {
        c->last_progress_ms = now;
        c->o->progress(c->o->progress_arg, st);
    }
}

/* Returns a reason to stop, or NULL to go on. */
static const char *emb__should_stop(struct emb__cap *c)
{
    const struct emb_source_options *o = c->o;
    emb__stats(c);
    uint64_t now = emb__now();
    if (o->stop != NULL && *o->stop)
        return "interrupted";
    if (o->duration_s > 0 && (double)(now - c->start_ms) >= o->duration_s * 1000.0)
        return "duration";
    if (o->max_packets > 0 && c->st->packets >= o->max_packets)
        return "count";
    if (o->until_window_closed) {
        if (c->st->window_closed && now - c->closed_ms >= EMB__IDLE_AFTER_CLOSE_MS &&
            now - c->last_packet_ms >= EMB__IDLE_AFTER_CLOSE_MS)
            return "window closed";
        if (!c->st->window_closed && now - c->last_ping_ms >= EMB__PING_MS) {
            c->last_ping_ms = now;
            emb__ping(c);
        }
    }
    return NULL;
}

/* ---- Byte streams: file, tcp, serial ---- */

static int emb__stream_loop(struct emb__cap *c, int fd, bool live, bool can_write)
{
    uint8_t buf[65536];
    for (;;) {
        const char *why = emb__should_stop(c);
        if (why != NULL) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "%s", why);
            return 0;
        }
        if (can_write && c->down.n > 0) {
            if (emb_hostio_write_all(fd, c->down.p, c->down.n) == 0)
                c->down.n = 0;
        }
        ssize_t n = emb_hostio_read(fd, buf, sizeof buf, live ? 50 : -1);
        if (n == -2 || (n < 0 && errno == EINTR))
            continue;
        if (n < 0 && errno == EIO) {
            /* A serial line whose other end went away (a pseudo-terminal's master). */
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "end of source");
            return 0;
        }
        if (n < 0)
            return -1;
        if (n == 0) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "end of source");
            return 0;
        }
        c->st->bytes += (uint64_t)n;
        emb_frame_dec_feed(c->dec, buf, (size_t)n);
        if (!live && c->st->bytes > emb_input_limit()) {
            /* A file of frames (or /dev/zero): bounded like any other whole input. */
            errno = EFBIG;
            return -1;
        }
    }
}

static int emb__file(struct emb__cap *c, struct emb_source_result *r, char *err, size_t errlen)
{
    int fd = strcmp(c->o->target, "-") ? open(c->o->target, O_RDONLY | O_CLOEXEC) : 0;
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", c->o->target, strerror(errno));
        return -1;
    }
    uint8_t head[4];
    ssize_t hn = read(fd, head, sizeof head);
    if (hn == 4 && emb_get_le32(head) == EMB_TSF_MAGIC) {
        /* Already a trace stream: taken as it is. */
        struct emb__bytes all = {0};
        emb__append(&all, head, 4);
        uint8_t buf[65536];
        ssize_t n;
        uint64_t limit = emb_input_limit();
        while ((n = read(fd, buf, sizeof buf)) > 0 && all.n <= limit)
            if (emb__append(&all, buf, (size_t)n) != 0) {
                n = -1;
                break;
            }
        if (fd != 0)
            close(fd);
        if (n < 0 || all.n > limit) {
            if (n < 0)
                snprintf(err, errlen, "%s: %s", c->o->target, all.p ? strerror(errno) : "out of memory");
            else
                snprintf(err, errlen, "%s: more than the input limit of %llu bytes (set "
                         EMB_INPUT_LIMIT_ENV " to read more)", c->o->target,
                         (unsigned long long)limit);
            free(all.p);
            return -1;
        }
        r->trace = all.p;
        r->trace_len = all.n;
        c->st->bytes = all.n;
        snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "end of source");
        return 0;
    }
    if (hn > 0) {
        c->st->bytes += (uint64_t)hn;
        emb_frame_dec_feed(c->dec, head, (size_t)hn);
    }
    int rc = emb__stream_loop(c, fd, false, false);
    if (rc != 0 && errno == EFBIG)
        snprintf(err, errlen, "%s: more than the input limit of %llu bytes (set "
                 EMB_INPUT_LIMIT_ENV " to read more)", c->o->target,
                 (unsigned long long)emb_input_limit());
    else if (rc != 0)
        snprintf(err, errlen, "%s: read error: %s", c->o->target, strerror(errno));
    if (fd != 0)
        close(fd);
    return rc;
}

/* A live, two-way link (socket or serial line) read to its end; takes the descriptor. */
static int emb__stream_live(struct emb__cap *c, int fd, char *err, size_t errlen)
{
    int rc = emb__stream_loop(c, fd, true, true);
    if (rc != 0)
        snprintf(err, errlen, "%s: %s", c->o->target, strerror(errno));
    close(fd);
    return rc;
}

/* The record server's first line from a TCP client (docs/formats/frame.md). */
static int emb__send_token(int fd, const char *token, char *err, size_t errlen,
                           const char *target)
{
    static const char prefix[] = "EMB-TOKEN ";
    size_t tl = strlen(token);
    uint8_t line[sizeof prefix + 256];
    if (tl > 256 || memchr(token, '\n', tl) != NULL) {
        snprintf(err, errlen, "%s: the token is longer than 256 bytes or holds a newline", target);
        return -1;
    }
    memcpy(line, prefix, sizeof prefix - 1);
    memcpy(line + sizeof prefix - 1, token, tl);
    line[sizeof prefix - 1 + tl] = '\n';
    if (emb_hostio_write_all(fd, line, sizeof prefix + tl) != 0) {
        snprintf(err, errlen, "%s: sending the token: %s", target, strerror(errno));
        return -1;
    }
    return 0;
}

static int emb__tcp(struct emb__cap *c, char *err, size_t errlen)
{
    int fd = emb_hostio_connect(c->o->target, 5000, err, errlen);
    if (fd < 0)
        return -1;
    if (c->o->token != NULL && emb__send_token(fd, c->o->token, err, errlen, c->o->target) != 0) {
        close(fd);
        return -1;
    }
    return emb__stream_live(c, fd, err, errlen);
}

/* The record server's owner-only socket: served when the server runs as this user, and
 * believed only then (SO_PEERCRED: another user could have bound a socket at the path). */
static int emb__unix(struct emb__cap *c, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(c->o->target) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "%s: socket path longer than %zu bytes", c->o->target,
                 sizeof sa.sun_path - 1);
        return -1;
    }
    strcpy(sa.sun_path, c->o->target);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "%s: no record server answers there (%s)", c->o->target,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
        snprintf(err, errlen, "%s: the record server there runs as uid %u, not as you (uid %u): "
                 "refused", c->o->target, (unsigned)cred.uid, (unsigned)getuid());
        close(fd);
        return -1;
    }
    return emb__stream_live(c, fd, err, errlen);
}

static int emb__serial(struct emb__cap *c, char *err, size_t errlen)
{
    int fd = emb_hostio_serial_open(c->o->target, c->o->baud ? c->o->baud : 115200u);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open at %u baud: %s", c->o->target,
                 c->o->baud ? c->o->baud : 115200u, strerror(errno));
        return -1;
    }
    return emb__stream_live(c, fd, err, errlen);
}

static int emb__swo(struct emb__cap *c, char *err, size_t errlen)
{
    int fd = strcmp(c->o->target, "-") ? open(c->o->target, O_RDONLY | O_CLOEXEC) : 0;
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", c->o->target, strerror(errno));
        return -1;
    }
    struct emb_swo_demux d;
    emb_swo_demux_init(&d, 0x3u, emb__on_swo, c);
    uint8_t buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        c->st->bytes += (uint64_t)n;
        emb_swo_demux_feed(&d, buf, (size_t)n);
        const char *why = emb__should_stop(c);
        if (why != NULL) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "%s", why);
            break;
        }
    }
    emb_swo_demux_finish(&d);
    c->st->overflows = d.swo.stats.overflows;
    if (c->st->stop_reason[0] == '\0')
        snprintf(c->st->stop_reason, sizeof c->st->stop_reason,
                 d.swo.stats.truncated ? "end of source (last packet cut short)" : "end of source");
    if (fd != 0)
        close(fd);
    if (n < 0) {
        snprintf(err, errlen, "%s: read error: %s", c->o->target, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- A retained ring's image ---- */

static int emb__retained(struct emb__cap *c, char *err, size_t errlen)
{
    struct emb__bytes img = {0};
    char why_read[200];
    if (!(img.p = emb_input_read(c->o->target, &img.n, why_read, sizeof why_read))) {
        snprintf(err, errlen, "%s: %s", c->o->target, why_read);
        return -1;
    }
    struct emb_retained_view v;
    char why[200];
    if (emb_retained_find(img.p, img.n, 0, &v, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", c->o->target, why);
        free(img.p);
        return -1;
    }
    uint8_t *frames = malloc(v.pending + 1u);
    if (frames == NULL) {
        snprintf(err, errlen, "out of memory");
        free(img.p);
        return -1;
    }
    emb_retained_copy(img.p, &v, frames);
    c->st->bytes = v.pending;
    c->st->retained_starts = v.starts;
    c->st->retained_dropped = v.dropped;
    c->st->retained_cut = v.cut;
    c->st->retained_lost = v.lost;
    emb_frame_dec_feed(c->dec, frames, v.pending);
    free(frames);
    free(img.p);
    snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "end of source");
    return 0;
}

/* ---- The memory channel: gdb and pid ---- */

static void emb__sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* One round: what the up ring holds, then what waits to go down. */
static int emb__mch_round(struct emb__cap *c, struct emb_mch *m, char *err, size_t errlen)
{
    static uint8_t buf[1 << 20];
    size_t got;
    do {
        if (emb_memchan_host_read_up(m, 0, buf, sizeof buf, &got, err, errlen) != 0)
            return -1;
        c->st->bytes += got;
        emb_frame_dec_feed(c->dec, buf, got);
    } while (got == sizeof buf);
    if (c->down.n > 0 && m->ndown > 0) {
        size_t written;
        if (emb_memchan_host_write_down(m, 0, c->down.p, c->down.n, &written, err, errlen) != 0)
            return -1;
        if (written == c->down.n)
            c->down.n = 0;
    }
    c->st->polls++;
    return 0;
}

static int emb__gdb(struct emb__cap *c, char *err, size_t errlen)
{
    const struct emb_source_options *o = c->o;
    uint64_t addr = o->memchan_addr;
    if (addr == 0 && o->elf != NULL && emb_elf_file_symbol(o->elf, "emb_memchan", &addr, NULL, err, errlen))
        return -1;
    struct emb_gdb *g = emb_gdb_connect(o->target, 2000, err, errlen);
    if (g == NULL)
        return -1;
    struct emb_memchan_host_range ram = {o->ram_start, o->ram_end};
    if (ram.start == 0 && ram.end == 0)
        ram = (struct emb_memchan_host_range){0x20000000u, 0x20400000u};
    struct emb_memchan_host_ops ops = emb_memaccess_gdb(g);
    struct emb_mch m;
    int rc = 0;
    if (addr == 0)
        rc = emb_memchan_host_find(&ops, &ram, 1, &addr, err, errlen);
    if (rc == 0)
        rc = emb_memchan_host_open(&m, &ops, addr, o->pointer_size ? o->pointer_size : 4u, &ram, 1, err, errlen);
    if (rc == 0 && m.nup == 0) {
        snprintf(err, errlen, "the memory channel at 0x%llx has no up ring", (unsigned long long)addr);
        rc = -1;
    }
    if (rc != 0) {
        emb_gdb_close(g);
        return -1;
    }
    int poll = o->poll_ms > 0 ? o->poll_ms : 10;
    for (;;) {
        const char *why = emb__should_stop(c);
        if (emb_gdb_halt(g) != 0 || emb__mch_round(c, &m, err, errlen) != 0) {
            if (err[0] == '\0')
                snprintf(err, errlen, "%s", emb_gdb_error(g));
            rc = c->st->polls > 0 ? 0 : -1;
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "target lost");
            break;
        }
        if (why != NULL) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "%s", why);
            break;
        }
        emb_gdb_resume(g);
        emb__sleep_ms(poll);
    }
    const struct emb_gdb_stats *gs = emb_gdb_stats(g);
    c->st->halts = gs->halts;
    c->st->halt_ms_avg = gs->halts ? (double)gs->halt_ns_total / (double)gs->halts / 1e6 : 0.0;
    c->st->halt_ms_max = (double)gs->halt_ns_max / 1e6;
    /* Let the target run on after the capture. */
    emb_gdb_detach(g);
    emb_gdb_close(g);
    return rc;
}

/* ---- Through the descriptor: gdb ---- */

struct emb__desc {
    struct emb_elf *elf;
    struct emb_probe *probe;
    struct emb_mem *mem;
    struct emb_desc_image image;
    struct emb_desc_model model;
    struct emb_desc_issues issues;
    struct emb__bytes notes;
};

static void emb__note(struct emb__desc *d, const char *msg)
{
    emb__append(&d->notes, msg, strlen(msg));
    emb__append(&d->notes, "\n", 1);
}

/* Finds the descriptor by the ELF's symbol and reads what it says, while halted; checks
 * that the target runs this ELF. 1 when the registry is not filled in yet. */
static int emb__desc_load(struct emb__desc *d, char *err, size_t errlen)
{
    uint64_t sym;
    emb_desc_model_free(&d->model);
    memset(&d->issues, 0, sizeof d->issues);
    if (emb_elf_symbol(d->elf, "emb_debug_descriptor", &sym, NULL) != 0) {
        snprintf(err, errlen, "%s has no emb_debug_descriptor symbol", emb_elf_path(d->elf));
        return -1;
    }
    if (emb_desc_find(d->mem, sym, 0, &d->image, err, errlen) != 0)
        return -1;
    emb_desc_read(d->mem, &d->image, &d->model, &d->issues);
    if (!d->model.ready)
        return 1;
    const uint8_t *id;
    size_t n = emb_elf_build_id(d->elf, &id);
    if (n && d->model.build_id_len && (n != d->model.build_id_len || memcmp(id, d->model.build_id, n))) {
        char a[80] = "", b[80] = "";
        for (size_t i = 0; i < d->model.build_id_len && i < 32; i++)
            snprintf(a + 2 * i, 3, "%02x", d->model.build_id[i]);
        for (size_t i = 0; i < n && i < 32; i++)
            snprintf(b + 2 * i, 3, "%02x", id[i]);
        snprintf(err, errlen, "the target runs another build: its build id is %s, %s has %s", a,
                 emb_elf_path(d->elf), b);
        return -1;
    }
    if (d->issues.total) {
        snprintf(err, errlen, "%s", d->issues.msg[0]);
        for (size_t i = 1; i < d->issues.n; i++)
            emb__note(d, d->issues.msg[i]);
        return -1;
    }
    return 0;
}

/* The run-time class mask as the target has it now. */
static bool emb__class_mask(struct emb__desc *d, uint32_t *mask)
{
    uint64_t p;
    uint8_t b[4];
    if (!emb_desc_word(&d->image, EMB_DESC_RINGS, 2, &p) || emb_mem_read(d->mem, p, b, 4) != 4)
        return false;
    *mask = d->image.little ? emb_get_le32(b) : ((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
    return true;
}

static int emb__gdb_desc(struct emb__cap *c, struct emb_source_result *res, char *err, size_t errlen)
{
    const struct emb_source_options *o = c->o;
    struct emb__desc d = {0};
    int rc = -1;
    c->direct = true;
    c->st->via_descriptor = true;
    if (!(d.elf = emb_elf_open(o->elf, err, errlen)))
        return -1;
    if (!(d.probe = emb_probe_open(o->target, d.elf, err, errlen))) {
        emb_elf_close(d.elf);
        return -1;
    }
    d.mem = emb_probe_mem(d.probe);
    int poll = o->poll_ms > 0 ? o->poll_ms : 10;
    bool once = o->duration_s <= 0 && o->max_packets == 0 && !o->until_window_closed;
    /* A target that has not started its library yet: wait for it, a few seconds at most. */
    int loaded;
    uint64_t waited_from = emb__now();
    while ((loaded = emb__desc_load(&d, err, errlen)) == 1) {
        if ((o->stop && *o->stop) || emb__now() - waited_from > 5000u) {
            snprintf(err, errlen, "the target's registry is not filled in: its library has not started");
            loaded = -1;
            break;
        }
        if (emb_probe_resume(d.probe) != 0)
            break;
        emb__sleep_ms(poll);
        if (emb_probe_halt(d.probe) != 0)
            break;
    }
    struct emb_desc_follow *f = NULL;
    if (loaded == 0) {
        const struct emb_desc_follow_options fo = {.consume = d.model.probe_consumer};
        f = emb_desc_follow_new(&d.image, &d.model, &fo);
        if (!f)
            snprintf(err, errlen, "out of memory");
    }
    bool seen_on = false;
    uint64_t zero_since = 0;
    while (f) {
        const char *why = emb__should_stop(c);
        uint32_t mask = 0;
        bool have_mask = emb__class_mask(&d, &mask);
        if (!why && once)
            why = "snapshot";
        if (!why && o->until_window_closed && have_mask) {
            /* Recording has stopped: the mask dropped to zero (a window closed, the firmware
             * turned tracing off), or stayed at zero while nothing new arrived. */
            uint64_t now = emb__now();
            if (mask != 0) {
                seen_on = true;
                zero_since = 0;
            } else if (seen_on) {
                why = "tracing stopped";
            } else if (zero_since == 0) {
                zero_since = now;
            } else if (now - zero_since >= EMB__IDLE_AFTER_CLOSE_MS) {
                why = "tracing off";
            }
        }
        if (why) {
            emb_desc_follow_finish(f, d.mem, &d.issues);
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "%s", why);
            break;
        }
        if (emb_desc_follow_poll(f, d.mem, &d.issues) != 0)
            break;
        c->st->packets = emb_desc_follow_stats(f)->packets;
        if (emb_probe_resume(d.probe) != 0) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "target lost");
            break;
        }
        emb__sleep_ms(poll);
        if (emb_probe_halt(d.probe) != 0) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "target lost");
            break;
        }
    }
    if (f) {
        /* The crash record the target holds now, if any. */
        if (d.model.has_crash && d.model.crash_cap > 0) {
            uint8_t *area = malloc(d.model.crash_cap);
            struct emb_crash_record r;
            if (area && emb_mem_read(d.mem, d.model.crash_area, area, d.model.crash_cap) == d.model.crash_cap &&
                emb_crash_decode(area, d.model.crash_cap, &r, NULL) == 0) {
                res->crash = area;
                res->crash_len = r.length;
                area = NULL;
            }
            free(area);
        }
        const struct emb_desc_follow_stats *fs = emb_desc_follow_stats(f);
        size_t len = 0;
        const uint8_t *log = emb_desc_follow_log(f, &len);
        if (log)
            emb__append(&c->log, log, len);
        res->trace = emb_desc_follow_trace(f, &res->trace_len);
        c->st->packets = fs->packets;
        c->st->packets_lost = fs->packets_lost;
        c->st->log_bytes = fs->log_bytes;
        c->st->log_lost = fs->log_lost;
        c->st->log_busy = fs->log_busy;
        c->st->released = fs->released;
        c->st->polls = fs->polls;
        c->st->headers = 1;
        for (size_t i = 0; i < d.issues.n; i++)
            emb__note(&d, d.issues.msg[i]);
        if (d.issues.total)
            snprintf(err, errlen, "%s", d.issues.msg[0]);
        else
            rc = 0;
        emb_desc_follow_free(f);
    }
    if (emb_probe_detach(d.probe) != 0 && rc == 0) {
        snprintf(err, errlen, "detach: %s", emb_probe_error(d.probe));
        rc = -1;
    }
    const struct emb_probe_stats *ps = emb_probe_stats(d.probe);
    c->st->halts = ps->holds;
    c->st->halt_ms_avg = ps->holds ? ps->hold_ms_total / (double)ps->holds : 0.0;
    c->st->halt_ms_max = ps->hold_ms_max;
    c->st->round_trips = ps->round_trips;
    c->st->bytes_read = ps->bytes_read;
    c->st->bytes = ps->bytes_read;
    if (d.notes.n) {
        emb__append(&d.notes, "", 1);
        res->notes = (char *)d.notes.p;
    }
    emb_desc_model_free(&d.model);
    emb_probe_close(d.probe);
    emb_elf_close(d.elf);
    return rc;
}

/* Which way a GDB source reads: the descriptor when the ELF has one and no memory channel
 * (and no window is to be armed through the shell). */
static bool emb__via_descriptor(const struct emb_source_options *o)
{
    if (o->via != EMB_GDB_VIA_AUTO)
        return o->via == EMB_GDB_VIA_DESCRIPTOR;
    if (o->elf == NULL || o->arm)
        return false;
    uint64_t a;
    char err[256];
    return emb_elf_file_symbol(o->elf, "emb_debug_descriptor", &a, NULL, err, sizeof err) == 0 &&
           emb_elf_file_symbol(o->elf, "emb_memchan", &a, NULL, err, sizeof err) != 0;
}

static int emb__pid(struct emb__cap *c, char *err, size_t errlen)
{
    const struct emb_source_options *o = c->o;
    char *end;
    long v = strtol(o->target, &end, 10);
    if (*o->target == '\0' || *end != '\0' || v <= 0) {
        snprintf(err, errlen, "'%s' is not a process id", o->target);
        return -1;
    }
    pid_t pid = (pid_t)v;
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        snprintf(err, errlen, "no process %d", (int)pid);
        return -1;
    }
    struct emb_memchan_host_range ranges[256];
    int nr = emb_memaccess_pid_ranges(pid, ranges, 256, err, errlen);
    if (nr < 0)
        return -1;
    struct emb_memchan_host_ops ops = emb_memaccess_pid(&pid);
    uint64_t addr = o->memchan_addr;
    struct emb_memchan_host_range scan[256];
    size_t ns = emb_memaccess_scan_ranges(ranges, (size_t)nr, scan);
    if (addr == 0 && emb_proc_symbol(pid, "emb_memchan", &addr, err, errlen) != 0 &&
        emb_memchan_host_find(&ops, scan, ns, &addr, err, errlen) != 0)
        return -1;
    struct emb_mch m;
    /* The heap holds the native port's ring buffers: every writable mapping is RAM here. */
    if (emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, errlen) != 0)
        return -1;
    if (m.nup == 0 || m.up[0].size == 0) {
        snprintf(err, errlen, "process %d: the memory channel has no up ring", (int)pid);
        return -1;
    }
    int poll = o->poll_ms > 0 ? o->poll_ms : 10;
    for (;;) {
        const char *why = emb__should_stop(c);
        bool alive = kill(pid, 0) == 0;
        if (emb__mch_round(c, &m, err, errlen) != 0 || !alive) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "end of source");
            break;
        }
        if (why != NULL) {
            snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "%s", why);
            break;
        }
        emb__sleep_ms(poll);
    }
    err[0] = '\0';
    return 0;
}

/* ---- Entry ---- */

int emb_source_kind_parse(const char *name)
{
    static const char *const names[] = {"file", "tcp", "serial", "swo", "gdb", "pid", "retained",
                                        "unix"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

int emb_source_capture(const struct emb_source_options *opt, struct emb_source_result *res,
                       char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    err[0] = '\0';
    struct emb__cap c = {.o = opt, .st = &res->stats};
    bool joined = opt->kind == EMB_SOURCE_SERIAL;
    c.dec = emb_frame_dec_new(70000, joined, emb__on_frame, NULL, &c);
    c.tasm = emb_trace_assemble_new(0);
    if (c.dec == NULL || c.tasm == NULL) {
        snprintf(err, errlen, "out of memory");
        emb_frame_dec_free(c.dec);
        emb_trace_assemble_free(c.tasm);
        return -1;
    }
    c.start_ms = c.last_packet_ms = emb__now();
    if (opt->arm) {
        uint8_t arm[1] = {EMB_SHELL_ARM_WINDOW};
        emb__command(&c, arm, 1);
    }
    int rc;
    switch (opt->kind) {
    case EMB_SOURCE_FILE: rc = emb__file(&c, res, err, errlen); break;
    case EMB_SOURCE_TCP: rc = emb__tcp(&c, err, errlen); break;
    case EMB_SOURCE_UNIX: rc = emb__unix(&c, err, errlen); break;
    case EMB_SOURCE_SERIAL: rc = emb__serial(&c, err, errlen); break;
    case EMB_SOURCE_SWO: rc = emb__swo(&c, err, errlen); break;
    case EMB_SOURCE_GDB:
        if (emb__via_descriptor(opt) && opt->elf == NULL) {
            snprintf(err, errlen, "reading through the descriptor needs the firmware: --elf FW");
            rc = -1;
        } else {
            rc = emb__via_descriptor(opt) ? emb__gdb_desc(&c, res, err, errlen) : emb__gdb(&c, err, errlen);
        }
        break;
    case EMB_SOURCE_PID: rc = emb__pid(&c, err, errlen); break;
    case EMB_SOURCE_RETAINED: rc = emb__retained(&c, err, errlen); break;
    default:
        snprintf(err, errlen, "unknown source");
        rc = -1;
    }
    emb_frame_dec_finish(c.dec);
    emb__stats(&c);
    if (res->trace == NULL) {
        size_t len;
        const uint8_t *s = emb_trace_assemble_stream(c.tasm, &len);
        if (s != NULL && (res->trace = malloc(len)) != NULL) {
            memcpy(res->trace, s, len);
            res->trace_len = len;
        }
    }
    res->log = c.log.p;
    res->log_len = c.log.n;
    if (res->crash == NULL && c.crash.n > 0) {
        res->crash = c.crash.p;
        res->crash_len = c.crash.n;
    } else {
        free(c.crash.p);
    }
    emb_frame_dec_free(c.dec);
    emb_trace_assemble_free(c.tasm);
    free(c.sp.buf.p);
    free(c.down.p);
    return rc;
}

void emb_source_result_free(struct emb_source_result *res)
{
    free(res->trace);
    free(res->log);
    free(res->crash);
    free(res->notes);
    memset(res, 0, sizeof *res);
}
