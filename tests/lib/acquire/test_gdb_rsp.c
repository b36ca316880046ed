/* The GDB remote protocol client against scripted servers on a socket pair: the start-up
 * exchange, block sizes from PacketSize, run-length replies, binary writes with escapes,
 * acknowledgements and retransmission, console output before a stop reply, and every way
 * a server can misbehave: a bad checksum in no-ack mode, a reply longer than asked, an
 * error reply, silence, and closing the connection in the middle of a packet. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdb_rsp.h"
#include "harness.h"

struct server {
    int fd;
    int scenario;
    bool noack;
    uint8_t mem[4096]; /* at 0x1000 */
    size_t max_read;   /* the largest `m` length asked */
    int got_m, got_x;
    bool running;      /* between `c` and an interrupt */
    int interrupts, m_running; /* interrupts received; `m` served while running */
};

static int getc_fd(int fd)
{
    uint8_t c;
    return read(fd, &c, 1) == 1 ? c : -1;
}

static void put(int fd, const char *s)
{
    (void)!write(fd, s, strlen(s));
}

/* Sends a packet with a right (or, when `bad`, wrong) checksum. */
static void reply(struct server *s, const char *data, bool bad)
{
    unsigned sum = 0;
    for (const char *p = data; *p; p++)
        sum += (uint8_t)*p;
    char tail[4];
    snprintf(tail, sizeof tail, "#%02x", (sum + (bad ? 1 : 0)) & 0xFF);
    put(s->fd, "$");
    put(s->fd, data);
    put(s->fd, tail);
    if (!s->noack) {
        int c = getc_fd(s->fd);
        if (c == '-' && bad) /* the client asks again: send it right */
            reply(s, data, false);
    }
}

/* Reads a client packet (unescaped) into buf; handles the interrupt byte as "\x03". */
static int packet(struct server *s, char *buf, size_t cap)
{
    int c;
    do {
        if ((c = getc_fd(s->fd)) < 0)
            return -1;
        if (c == 0x03) {
            strcpy(buf, "\x03");
            return 1;
        }
    } while (c != '$');
    size_t n = 0;
    while ((c = getc_fd(s->fd)) >= 0 && c != '#') {
        if (c == '}')
            c = getc_fd(s->fd) ^ 0x20;
        if (n + 1 < cap)
            buf[n++] = (char)c;
    }
    getc_fd(s->fd);
    getc_fd(s->fd);
    buf[n] = '\0';
    if (!s->noack)
        put(s->fd, "+");
    return (int)n;
}

static void hexbytes(char *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static void *serve(void *arg)
{
    struct server *s = arg;
    char buf[70000];
    int n;
    while ((n = packet(s, buf, sizeof buf)) >= 0) {
        if (!strncmp(buf, "qSupported", 10)) {
            if (s->scenario == 4) { /* closes in the middle of its first reply */
                put(s->fd, "$PacketSize=1");
                close(s->fd);
                return NULL;
            }
            if (s->scenario == 5) /* says nothing at all */
                continue;
            reply(s, s->scenario == 1 ? "PacketSize=100" : "PacketSize=100;QStartNoAckMode+", false);
        } else if (!strcmp(buf, "QStartNoAckMode")) {
            reply(s, "OK", false);
            s->noack = true;
        } else if (!strcmp(buf, "?")) {
            reply(s, "S05", s->scenario == 1); /* bad first time in ack mode: resent */
        } else if (buf[0] == 'm' && s->running && s->scenario == 6) {
            /* What QEMU's stub does with a byte while the guest runs: it stops the guest
             * and answers with a stop reply, the read dropped (seen on qemu-system-arm). */
            s->running = false;
            reply(s, "T02thread:01;", false);
        } else if (buf[0] == 'm') {
            unsigned long addr, len;
            sscanf(buf + 1, "%lx,%lx", &addr, &len);
            s->got_m++;
            s->m_running += s->running; /* served in any state, as OpenOCD's gdb_server.c does */
            if (len > s->max_read)
                s->max_read = len;
            if (s->scenario == 2) {
                reply(s, "00112233445566778899aabbccddeeff00112233445566778899", false); /* too long */
                continue;
            }
            if (s->scenario == 3) {
                reply(s, "E03", false);
                continue;
            }
            if (addr < 0x1000 || addr + len > 0x1000 + sizeof s->mem) {
                reply(s, "E14", false);
                continue;
            }
            static char hex[9000];
            hexbytes(hex, s->mem + (addr - 0x1000), len);
            /* Compress runs the way servers do: "x*" + count + 29. */
            static char rle[9000];
            size_t w = 0;
            for (size_t i = 0; hex[i];) {
                size_t run = 1;
                while (hex[i + run] == hex[i] && run < 90)
                    run++;
                if (run >= 4 && run - 1 != 6 && run - 1 != 7) { /* never '#' or '$' */
                    rle[w++] = hex[i];
                    rle[w++] = '*';
                    rle[w++] = (char)(run - 1 + 29);
                } else {
                    memcpy(rle + w, hex + i, run);
                    w += run;
                }
                i += run;
            }
            rle[w] = '\0';
            reply(s, rle, false);
        } else if (buf[0] == 'X') {
            unsigned long addr, len;
            char *colon = strchr(buf, ':');
            sscanf(buf + 1, "%lx,%lx", &addr, &len);
            s->got_x++;
            memcpy(s->mem + (addr - 0x1000), colon + 1, len);
            reply(s, "OK", false);
        } else if (!strcmp(buf, "c")) {
            /* Running: a stop comes when interrupted, after some console output. */
            s->running = true;
        } else if (!strcmp(buf, "\x03")) {
            s->running = false;
            s->interrupts++;
            reply(s, "O6869", false);
            reply(s, "T05thread:01;", false);
        } else if (!strcmp(buf, "D;1")) {
            reply(s, "", false); /* an old server: no processes */
        } else if (!strcmp(buf, "D")) {
            reply(s, "OK", false);
        } else {
            reply(s, "", false);
        }
    }
    return NULL;
}

static struct emb_gdb *start(struct server *s, pthread_t *t, int scenario, int timeout, char *err,
                             size_t errlen)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    memset(s, 0, sizeof *s);
    s->fd = sv[1];
    s->scenario = scenario;
    for (size_t i = 0; i < sizeof s->mem; i++)
        s->mem[i] = (uint8_t)(i < 1000 ? 0x55 : i * 13);
    pthread_create(t, NULL, serve, s);
    return emb_gdb_open_fd(sv[0], timeout, err, errlen);
}

static void stop(struct server *s, pthread_t t, struct emb_gdb *g)
{
    emb_gdb_close(g);
    pthread_join(t, NULL);
    close(s->fd);
}

int main(void)
{
    struct server s;
    pthread_t t;
    char err[256];

    /* No-ack mode, blocks from PacketSize, run-length replies, escaped writes. */
    struct emb_gdb *g = start(&s, &t, 0, 2000, err, sizeof err);
    ok(g != NULL, "start-up exchange (%s)", g ? "ok" : err);
    ok_eq(emb_gdb_block(g), (0x100 - 8) / 2, "block size from PacketSize=100 (hex)");
    uint8_t buf[4096];
    int rc = emb_gdb_read(g, 0x1000, buf, sizeof buf);
    int same = rc == 0;
    for (size_t i = 0; i < sizeof buf && same; i++)
        same = buf[i] == (uint8_t)(i < 1000 ? 0x55 : i * 13);
    ok(same && s.max_read <= emb_gdb_block(g) && s.got_m >= 33,
       "4 KB read in %d blocks of at most %zu, run-length expanded (%s)", s.got_m, s.max_read,
       rc ? emb_gdb_error(g) : "ok");
    uint8_t w[600];
    for (size_t i = 0; i < sizeof w; i++)
        w[i] = (uint8_t)"$#}*\x03\x00"[i % 6];
    ok(emb_gdb_write(g, 0x1100, w, sizeof w) == 0 && s.got_x >= 3 && !memcmp(s.mem + 0x100, w, sizeof w),
       "600 bytes of $ # } * written with X in %d packets", s.got_x);
    ok(emb_gdb_read(g, 0x9000, buf, 4) != 0 && strstr(emb_gdb_error(g), "E14"),
       "an error reply is an error: %s", emb_gdb_error(g));
    ok(emb_gdb_resume(g) == 0 && emb_gdb_running(g), "resume");
    ok(emb_gdb_read(g, 0x1000, buf, 4) != 0 && strstr(emb_gdb_error(g), "running"),
       "no memory access while running");
    ok(emb_gdb_halt(g) == 0 && !emb_gdb_running(g), "halt: console output skipped, stop reply read");
    ok(emb_gdb_stats(g)->halts == 1, "one halt counted");
    ok(emb_gdb_detach(g) == 0, "detach falls back from D;1 to D");
    stop(&s, t, g);

    /* Acknowledgement mode, and a reply with a bad checksum asked for again. */
    g = start(&s, &t, 1, 2000, err, sizeof err);
    ok(g != NULL && emb_gdb_stats(g)->retransmits == 1, "ack mode: a bad checksum is asked for again");
    rc = g ? emb_gdb_read(g, 0x1000, buf, 300) : -1;
    ok(rc == 0 && buf[0] == 0x55, "reads in ack mode");
    if (g)
        stop(&s, t, g);

    g = start(&s, &t, 2, 2000, err, sizeof err);
    ok(g != NULL && emb_gdb_read(g, 0x1000, buf, 8) != 0 &&
       strstr(emb_gdb_error(g), "8 bytes asked, 26 answered"), "a reply longer than asked is refused: %s",
       g ? emb_gdb_error(g) : err);
    if (g)
        stop(&s, t, g);

    g = start(&s, &t, 3, 2000, err, sizeof err);
    ok(g != NULL && emb_gdb_read(g, 0x1000, buf, 8) != 0 && strstr(emb_gdb_error(g), "E03"),
       "an error reply: %s", g ? emb_gdb_error(g) : err);
    if (g)
        stop(&s, t, g);

    g = start(&s, &t, 4, 2000, err, sizeof err);
    ok(g == NULL && strstr(err, "closed the connection in the middle of a packet"),
       "a server closing mid-packet: %s", err);
    pthread_join(t, NULL);

    /* --no-halt: memory read while the target runs, never an interrupt before it; and a
     * stub that stops the target to answer (QEMU's) found out from its stop reply. */
    g = start(&s, &t, 0, 2000, err, sizeof err);
    emb_gdb_access_running(g, true);
    rc = emb_gdb_resume(g) != 0 || emb_gdb_read(g, 0x1000, buf, 600) != 0;
    ok(rc == 0 && buf[0] == 0x55 && emb_gdb_running(g) && s.m_running > 0 && s.interrupts == 0,
       "access while running: %d reads served while it ran, no interrupt sent", s.m_running);
    ok(emb_gdb_write(g, 0x1100, w, 8) == 0 && emb_gdb_running(g) && s.interrupts == 0,
       "a write while it runs, no interrupt");
    ok(!emb_gdb_stopped_to_read(g), "the server did not stop the target to read");
    stop(&s, t, g);
    g = start(&s, &t, 6, 2000, err, sizeof err);
    emb_gdb_access_running(g, true);
    ok(emb_gdb_resume(g) == 0 && emb_gdb_read(g, 0x1000, buf, 4) != 0 && emb_gdb_stopped_to_read(g) &&
       !emb_gdb_running(g) && strstr(emb_gdb_error(g), "stopped the target"),
       "a stop reply in place of the memory: the server stopped it (%s)", emb_gdb_error(g));
    ok(emb_gdb_read(g, 0x1000, buf, 4) == 0 && buf[0] == 0x55, "halted now: reads as before");
    stop(&s, t, g);

    g = start(&s, &t, 5, 100, err, sizeof err);
    ok(g == NULL && strstr(err, "no answer"), "a silent server times out: %s", err);
    shutdown(s.fd, SHUT_RDWR);
    pthread_join(t, NULL);
    close(s.fd);
    return emb_test_done();
}
