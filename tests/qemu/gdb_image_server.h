/* A GDB server for tests that serves a memory image instead of a target: regions of bytes
 * the test owns (a RAM snapshot it may corrupt at will), on a TCP port of the loopback
 * interface, one client at a time, in a thread. `m` outside the regions is answered E14
 * and counted, so a test can check that a client never asks for memory it has no business
 * reading. */
#ifndef EMB_TEST_GDB_IMAGE_SERVER_H
#define EMB_TEST_GDB_IMAGE_SERVER_H

#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct img_region {
    uint64_t addr;
    uint32_t size;
    uint8_t *bytes;
};

struct img_server {
    int listen_fd, port;
    pthread_t thread;
    volatile int stop;
    struct img_region regions[16];
    size_t nregions;
    /* What clients asked: reads, writes, and requests outside the regions. */
    volatile uint64_t reads, writes, outside, connections;
};

static int img__getc(int fd)
{
    uint8_t c;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 5000) <= 0)
        return -1;
    return read(fd, &c, 1) == 1 ? c : -1;
}

/* One write per packet: a packet in pieces meets Nagle and the peer's delayed ACK. */
static void img__reply(int fd, const char *data)
{
    static char out[70016];
    unsigned sum = 0;
    size_t n = strlen(data);
    for (size_t i = 0; i < n; i++)
        sum += (uint8_t)data[i];
    out[0] = '$';
    memcpy(out + 1, data, n);
    snprintf(out + 1 + n, 4, "#%02x", sum & 0xFF);
    (void)!write(fd, out, n + 4);
}

/* A client packet, unescaped; "\x03" for the interrupt byte; -1 at the end. */
static int img__packet(int fd, char *buf, size_t cap, bool ack)
{
    int c;
    do {
        if ((c = img__getc(fd)) < 0)
            return -1;
        if (c == 0x03) {
            strcpy(buf, "\x03");
            return 1;
        }
    } while (c != '$');
    size_t n = 0;
    while ((c = img__getc(fd)) >= 0 && c != '#') {
        if (c == '}')
            c = img__getc(fd) ^ 0x20;
        if (n + 1 < cap)
            buf[n++] = (char)c;
    }
    img__getc(fd);
    img__getc(fd);
    buf[n] = '\0';
    if (ack)
        (void)!write(fd, "+", 1);
    return (int)n;
}

static uint8_t *img__find(struct img_server *s, uint64_t addr, uint64_t len)
{
    for (size_t i = 0; i < s->nregions; i++)
        if (addr >= s->regions[i].addr && addr + len <= s->regions[i].addr + s->regions[i].size)
            return s->regions[i].bytes + (addr - s->regions[i].addr);
    return NULL;
}

static void img__session(struct img_server *s, int fd)
{
    static char buf[70000], hex[70000];
    bool ack = true;
    int n;
    while (!s->stop && (n = img__packet(fd, buf, sizeof buf, ack)) >= 0) {
        if (!strncmp(buf, "qSupported", 10)) {
            img__reply(fd, "PacketSize=4000;QStartNoAckMode+");
        } else if (!strcmp(buf, "QStartNoAckMode")) {
            img__reply(fd, "OK");
            ack = false;
        } else if (!strcmp(buf, "?") || !strcmp(buf, "\x03")) {
            img__reply(fd, "S05");
        } else if (buf[0] == 'm') {
            unsigned long long addr = 0, len = 0;
            sscanf(buf + 1, "%llx,%llx", &addr, &len);
            s->reads++;
            uint8_t *p = len <= 0x1000 ? img__find(s, addr, len) : NULL;
            if (!p) {
                s->outside++;
                img__reply(fd, "E14");
                continue;
            }
            for (size_t i = 0; i < len; i++)
                sprintf(hex + 2 * i, "%02x", p[i]);
            hex[2 * len] = '\0';
            img__reply(fd, hex);
        } else if (buf[0] == 'X' || buf[0] == 'M') {
            unsigned long long addr = 0, len = 0;
            sscanf(buf + 1, "%llx,%llx", &addr, &len);
            const char *colon = strchr(buf, ':');
            uint8_t *p = colon ? img__find(s, addr, len) : NULL;
            s->writes++;
            if (!p) {
                s->outside++;
                img__reply(fd, "E14");
                continue;
            }
            for (size_t i = 0; i < len; i++) {
                if (buf[0] == 'X') {
                    p[i] = (uint8_t)colon[1 + i];
                } else {
                    unsigned v;
                    sscanf(colon + 1 + 2 * i, "%2x", &v);
                    p[i] = (uint8_t)v;
                }
            }
            img__reply(fd, "OK");
        } else if (!strcmp(buf, "c")) {
            /* running until the next interrupt byte */
        } else if (!strcmp(buf, "D;1") || !strcmp(buf, "D")) {
            img__reply(fd, "OK");
            return;
        } else {
            img__reply(fd, "");
        }
    }
}

static void *img__serve(void *arg)
{
    struct img_server *s = arg;
    while (!s->stop) {
        struct pollfd p = {s->listen_fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        s->connections++;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        img__session(s, fd);
        close(fd);
    }
    return NULL;
}

static inline int img_server_start(struct img_server *s)
{
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(s->listen_fd, 4) != 0 || getsockname(s->listen_fd, (struct sockaddr *)&a, &l) != 0)
        return -1;
    s->port = ntohs(a.sin_port);
    s->stop = 0;
    return pthread_create(&s->thread, NULL, img__serve, s) == 0 ? 0 : -1;
}

static inline void img_server_stop(struct img_server *s)
{
    s->stop = 1;
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
}

#endif /* EMB_TEST_GDB_IMAGE_SERVER_H */
