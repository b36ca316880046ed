/* GDB remote serial protocol client (docs/formats/gdb-rsp.md). */
#define _GNU_SOURCE
#include "gdb_rsp.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buffer.h"
#include "conn.h"
#include "hostio.h"

struct emb_gdb {
    struct emb_conn conn;
    bool noack;
    bool running;
    bool access_running; /* reads and writes go out while it runs (emb_gdb_access_running) */
    bool stopped_to_read; /* a stop reply came in place of a memory reply */
    bool has_x;          /* `X` accepted (unknown until tried) */
    bool x_tried;
    size_t packet_size;  /* what the server accepts */
    char *reply;         /* last reply, unescaped and expanded */
    size_t reply_len, reply_cap;
    char *out;           /* packet being sent */
    size_t out_cap;
    uint64_t halt_start;
    struct emb_gdb_stats stats;
    char error[256];
};

static int set_error(struct emb_gdb *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_error(struct emb_gdb *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof g->error, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- Bytes ---- */

/* The next received byte, waiting up to the deadline. -1 on timeout, close or error. */
static int next_byte(struct emb_gdb *g)
{
    int c = emb_conn_byte(&g->conn);
    if (c >= 0)
        return c;
    if (c == EMB_CONN_TIMEOUT)
        set_error(g, "no answer from the GDB server within %d ms", g->conn.timeout_ms);
    else if (c == EMB_CONN_CLOSED)
        set_error(g, "the GDB server closed the connection");
    else if (c == EMB_CONN_NO_MEMORY)
        set_error(g, "out of memory");
    else
        set_error(g, "reading from the GDB server: %s", strerror(errno));
    return -1;
}

static int send_raw(struct emb_gdb *g, const void *p, size_t n)
{
    if (emb_hostio_write_all(g->conn.fd, p, n) != 0)
        return set_error(g, "writing to the GDB server: %s", strerror(errno));
    return 0;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static const char hex_digits[] = "0123456789abcdef";

/* ---- Packets ---- */

static int reply_put(struct emb_gdb *g, char c)
{
    if (g->reply_len + 2 > g->reply_cap) {
        if (g->reply_cap >= EMB_GDB_MAX_PACKET)
            return set_error(g, "a reply longer than %u bytes", EMB_GDB_MAX_PACKET);
        size_t cap = g->reply_cap ? g->reply_cap * 2 : 4096;
        char *r = realloc(g->reply, cap);
        if (r == NULL)
            return set_error(g, "out of memory");
        g->reply = r;
        g->reply_cap = cap;
    }
    g->reply[g->reply_len++] = c;
    return 0;
}

/* Reads one packet into g->reply: skips acks and noise before `$`, skips notifications
 * (`%...#xx`), unescapes `}x`, expands run-length `*n`, checks the checksum. */
static int receive_reply(struct emb_gdb *g)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        int c;
        for (;;) {
            if ((c = next_byte(g)) < 0)
                return -1;
            if (c == '$')
                break;
            if (c == '%') { /* an asynchronous notification: not ours */
                while ((c = next_byte(g)) >= 0 && c != '#')
                    ;
                if (c < 0 || next_byte(g) < 0 || next_byte(g) < 0)
                    return -1;
            }
        }
        g->reply_len = 0;
        unsigned sum = 0;
        bool escape = false;
        for (;;) {
            if ((c = next_byte(g)) < 0) {
                if (!strcmp(g->error, "the GDB server closed the connection"))
                    set_error(g, "the GDB server closed the connection in the middle of a packet");
                return -1;
            }
            if (c == '#' && !escape)
                break;
            sum += (unsigned)c;
            if (escape) {
                if (reply_put(g, (char)(c ^ 0x20)))
                    return -1;
                escape = false;
            } else if (c == '}') {
                escape = true;
            } else if (c == '*' && g->reply_len > 0) {
                /* Run-length: the next character is the repeat count plus 29. */
                int n = next_byte(g);
                if (n < 0)
                    return -1;
                sum += (unsigned)n;
                if (n < 29 + 3 || n > 126)
                    return set_error(g, "bad run-length count 0x%02x in a reply", n);
                char prev = g->reply[g->reply_len - 1];
                for (int k = 0; k < n - 29; k++)
                    if (reply_put(g, prev))
                        return -1;
            } else if (reply_put(g, (char)c)) {
                return -1;
            }
        }
        int h = next_byte(g), l = h >= 0 ? next_byte(g) : -1;
        if (h < 0 || l < 0)
            return -1;
        int hv = hex_value(h), lv = hex_value(l);
        g->reply[g->reply_len] = '\0';
        if (hv >= 0 && lv >= 0 && (unsigned)(hv << 4 | lv) == (sum & 0xFFu)) {
            g->stats.packets_received++;
            if (!g->noack && send_raw(g, "+", 1))
                return -1;
            return 0;
        }
        if (g->noack)
            return set_error(g, "reply with a bad checksum");
        g->stats.retransmits++;
        if (send_raw(g, "-", 1))
            return -1;
    }
    return set_error(g, "four replies in a row with a bad checksum");
}

static int out_reserve(struct emb_gdb *g, size_t n)
{
    if (n <= g->out_cap)
        return 0;
    char *o = realloc(g->out, n);
    if (o == NULL)
        return set_error(g, "out of memory");
    g->out = o;
    g->out_cap = n;
    return 0;
}

/* Sends `$data#ck` (data escaped when binary) and waits for its acknowledgement. */
static int send_packet(struct emb_gdb *g, const char *data, size_t n, bool binary)
{
    if (out_reserve(g, 2 * n + 8))
        return -1;
    size_t w = 0;
    unsigned sum = 0;
    g->out[w++] = '$';
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (binary && (c == '$' || c == '#' || c == '}' || c == '*')) {
            g->out[w++] = '}';
            sum += '}';
            c = (char)(c ^ 0x20);
        }
        g->out[w++] = c;
        sum += (uint8_t)c;
    }
    g->out[w++] = '#';
    g->out[w++] = hex_digits[(sum >> 4) & 0xF];
    g->out[w++] = hex_digits[sum & 0xF];
    for (int attempt = 0; attempt < 4; attempt++) {
        if (send_raw(g, g->out, w))
            return -1;
        g->stats.packets_sent++;
        if (g->noack)
            return 0;
        int c;
        do {
            if ((c = next_byte(g)) < 0)
                return -1;
        } while (c != '+' && c != '-' && !(c == '$' && g->running && g->access_running));
        if (c == '$') { /* no ack, a packet: the stop reply of a stub that stopped to serve it */
            emb_conn_unread_byte(&g->conn);
            return 0;
        }
        if (c == '+')
            return 0;
        g->stats.retransmits++;
    }
    return set_error(g, "the GDB server refused a packet four times");
}

static int exchange(struct emb_gdb *g, const char *data, size_t n, bool binary)
{
    if (send_packet(g, data, n, binary) || receive_reply(g))
        return -1;
    return 0;
}

const char *emb_gdb_command(struct emb_gdb *g, const char *packet, size_t *reply_len)
{
    if (g->running)
        return set_error(g, "the target is running: halt it first"), NULL;
    if (exchange(g, packet, strlen(packet), false))
        return NULL;
    if (reply_len != NULL)
        *reply_len = g->reply_len;
    return g->reply;
}

/* ---- Session ---- */

/* A stop reply: S, T, or the end of the target (W, X). Console output (O) is skipped. */
static int stop_reply(struct emb_gdb *g)
{
    for (int n = 0; n < 1000; n++) {
        if (receive_reply(g))
            return -1;
        char k = g->reply_len > 0 ? g->reply[0] : '\0';
        if (k == 'S' || k == 'T')
            return 0;
        if (k == 'W' || k == 'X')
            return set_error(g, "the target ended (%s)", g->reply);
        if (k != 'O')
            return set_error(g, "expected a stop reply, got '%.40s'", g->reply);
    }
    return set_error(g, "no stop reply among 1000 console packets");
}

static struct emb_gdb *setup(struct emb_gdb *g, char *err, size_t errlen)
{
    /* Any byte halts an all-stop target; the first packet says what the server can do. */
    static const char supported[] = "qSupported:multiprocess+;swbreak+;hwbreak+;no-resumed+";
    if (send_raw(g, "+", 1) || exchange(g, supported, sizeof supported - 1, false))
        goto fail;
    const char *ps = strstr(g->reply, "PacketSize=");
    if (ps != NULL) {
        unsigned long v = strtoul(ps + 11, NULL, 16);
        if (v >= 64)
            g->packet_size = v < EMB_GDB_MAX_PACKET ? v : EMB_GDB_MAX_PACKET;
    }
    if (strstr(g->reply, "QStartNoAckMode+") != NULL) {
        if (exchange(g, "QStartNoAckMode", 15, false))
            goto fail;
        if (!strcmp(g->reply, "OK"))
            g->noack = true;
    }
    if (exchange(g, "?", 1, false))
        goto fail;
    g->running = false;
    return g;
fail:
    snprintf(err, errlen, "%s", g->error);
    emb_gdb_close(g);
    return NULL;
}

struct emb_gdb *emb_gdb_open_fd(int fd, int timeout_ms, char *err, size_t errlen)
{
    struct emb_gdb *g = calloc(1, sizeof *g);
    if (g == NULL) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    emb_conn_init(&g->conn, fd, timeout_ms > 0 ? timeout_ms : 2000);
    g->reply_cap = 4096;
    g->reply = malloc(g->reply_cap);
    if (g->reply == NULL) {
        close(fd);
        free(g);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->packet_size = 256; /* until the server says more */
    return setup(g, err, errlen);
}

struct emb_gdb *emb_gdb_connect(const char *host_port, int timeout_ms, char *err, size_t errlen)
{
    int fd = emb_hostio_connect(host_port, timeout_ms > 0 ? timeout_ms : 2000, err, errlen);
    if (fd < 0)
        return NULL;
    char why[256];
    struct emb_gdb *g = emb_gdb_open_fd(fd, timeout_ms, why, sizeof why);
    if (g == NULL)
        snprintf(err, errlen, "%s: %s", host_port, why);
    return g;
}

int emb_gdb_halt(struct emb_gdb *g)
{
    if (!g->running)
        return 0;
    g->halt_start = now_ns();
    if (send_raw(g, "\x03", 1) || stop_reply(g))
        return -1;
    g->running = false;
    g->stats.halts++;
    return 0;
}

int emb_gdb_resume(struct emb_gdb *g)
{
    if (g->running)
        return 0;
    if (send_packet(g, "c", 1, false))
        return -1;
    g->running = true;
    if (g->halt_start != 0) {
        uint64_t d = now_ns() - g->halt_start;
        g->stats.halt_ns_total += d;
        if (d > g->stats.halt_ns_max)
            g->stats.halt_ns_max = d;
        g->halt_start = 0;
    }
    return 0;
}

bool emb_gdb_running(const struct emb_gdb *g)
{
    return g->running;
}

size_t emb_gdb_block(const struct emb_gdb *g)
{
    /* Hex doubles the bytes; leave room for the framing and an escape or two. */
    size_t b = (g->packet_size - 8) / 2;
    return b > 0 ? b : 1;
}

void emb_gdb_access_running(struct emb_gdb *g, bool on)
{
    g->access_running = on;
}

bool emb_gdb_stopped_to_read(const struct emb_gdb *g)
{
    return g->stopped_to_read;
}

/* A stop reply where a memory access's reply belongs: the server stopped the target to
 * serve it (an all-stop stub that halts on any byte, as QEMU's does). */
static int stopped_instead(struct emb_gdb *g)
{
    if (!g->running || g->reply_len == 0 || (g->reply[0] != 'T' && g->reply[0] != 'S'))
        return 0;
    g->running = false;
    g->stopped_to_read = true;
    return set_error(g, "the GDB server stopped the target to serve a memory access (it sent "
                        "the stop reply %.12s): it serves memory only while the target is halted",
                     g->reply);
}

int emb_gdb_read(struct emb_gdb *g, uint64_t addr, void *buf, size_t len)
{
    if (g->running && !g->access_running)
        return set_error(g, "the target is running: halt it first");
    uint8_t *p = buf;
    size_t block = emb_gdb_block(g);
    while (len > 0) {
        size_t n = len < block ? len : block;
        char cmd[48];
        int cl = snprintf(cmd, sizeof cmd, "m%llx,%zx", (unsigned long long)addr, n);
        if (exchange(g, cmd, (size_t)cl, false) || stopped_instead(g))
            return -1;
        if (g->reply_len >= 1 && g->reply[0] == 'E' && g->reply_len <= 3)
            return set_error(g, "reading %zu bytes at 0x%llx: the server answered %s", n,
                             (unsigned long long)addr, g->reply);
        if (g->reply_len % 2 != 0 || g->reply_len == 0)
            return set_error(g, "reading at 0x%llx: a reply of %zu characters is not hex bytes",
                             (unsigned long long)addr, g->reply_len);
        size_t got = g->reply_len / 2;
        if (got > n)
            return set_error(g, "reading at 0x%llx: %zu bytes asked, %zu answered",
                             (unsigned long long)addr, n, got);
        for (size_t i = 0; i < got; i++) {
            int h = hex_value((unsigned char)g->reply[2 * i]);
            int l = hex_value((unsigned char)g->reply[2 * i + 1]);
            if (h < 0 || l < 0)
                return set_error(g, "reading at 0x%llx: not hex: '%.16s'",
                                 (unsigned long long)addr, g->reply + 2 * i);
            p[i] = (uint8_t)(h << 4 | l);
        }
        /* A short answer (unreadable memory further on) reads on from where it stopped. */
        p += got;
        addr += got;
        len -= got;
        g->stats.bytes_read += got;
    }
    return 0;
}

static int write_binary(struct emb_gdb *g, uint64_t addr, const uint8_t *p, size_t n)
{
    char head[48];
    int hl = snprintf(head, sizeof head, "X%llx,%zx:", (unsigned long long)addr, n);
    char *pkt = malloc((size_t)hl + n);
    if (pkt == NULL)
        return set_error(g, "out of memory");
    memcpy(pkt, head, (size_t)hl);
    memcpy(pkt + hl, p, n);
    int rc = exchange(g, pkt, (size_t)hl + n, true);
    free(pkt);
    return rc;
}

static int write_hex(struct emb_gdb *g, uint64_t addr, const uint8_t *p, size_t n)
{
    char *pkt = malloc(48 + 2 * n);
    if (pkt == NULL)
        return set_error(g, "out of memory");
    int w = snprintf(pkt, 48, "M%llx,%zx:", (unsigned long long)addr, n);
    for (size_t i = 0; i < n; i++) {
        pkt[w++] = hex_digits[p[i] >> 4];
        pkt[w++] = hex_digits[p[i] & 0xF];
    }
    int rc = exchange(g, pkt, (size_t)w, false);
    free(pkt);
    return rc;
}

int emb_gdb_write(struct emb_gdb *g, uint64_t addr, const void *buf, size_t len)
{
    if (g->running && !g->access_running)
        return set_error(g, "the target is running: halt it first");
    const uint8_t *p = buf;
    /* Escapes can double a binary byte: blocks of a third of the packet are always safe. */
    size_t block = (g->packet_size - 32) / 3;
    while (len > 0) {
        size_t n = len < block ? len : block;
        int rc;
        if (!g->x_tried || g->has_x) {
            rc = write_binary(g, addr, p, n);
            if (rc == 0 && !g->x_tried) {
                g->x_tried = true;
                g->has_x = g->reply_len > 0; /* an empty reply: `X` is not supported */
                if (!g->has_x)
                    rc = write_hex(g, addr, p, n);
            }
        } else {
            rc = write_hex(g, addr, p, n);
        }
        if (rc != 0 || stopped_instead(g))
            return -1;
        if (strcmp(g->reply, "OK") != 0)
            return set_error(g, "writing %zu bytes at 0x%llx: the server answered '%.20s'", n,
                             (unsigned long long)addr, g->reply);
        p += n;
        addr += n;
        len -= n;
        g->stats.bytes_written += n;
    }
    return 0;
}

int emb_gdb_detach(struct emb_gdb *g)
{
    if (g->running && emb_gdb_halt(g))
        return -1;
    /* A server that speaks of processes wants the pid; an old one only `D`. */
    if (exchange(g, "D;1", 3, false))
        return -1;
    if (strcmp(g->reply, "OK") != 0 && (exchange(g, "D", 1, false) || strcmp(g->reply, "OK")))
        return set_error(g, "detach refused: '%.20s'", g->reply);
    g->running = true;
    return 0;
}

const char *emb_gdb_error(const struct emb_gdb *g)
{
    return g->error;
}

const struct emb_gdb_stats *emb_gdb_stats(const struct emb_gdb *g)
{
    return &g->stats;
}

void emb_gdb_close(struct emb_gdb *g)
{
    if (g == NULL)
        return;
    emb_conn_close(&g->conn);
    EMB_FREE_ALL(g->reply, g->out, g);
}
