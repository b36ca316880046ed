/* The console's crash upload: one HTTP/1.0 POST over a TCP socket, as small as a device's
 * network stack would make it (the server side is `emb fleet serve`, libmicrohttpd). */
#define _GNU_SOURCE
#include "driver.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* "http://HOST:PORT/PATH" split; 0, or -1 when it is not that. */
static int split_url(const char *url, char *host, size_t hostlen, char *port, size_t portlen,
                     const char **path)
{
    static const char scheme[] = "http://";
    if (strncmp(url, scheme, sizeof scheme - 1) != 0)
        return -1;
    const char *h = url + sizeof scheme - 1;
    const char *colon = strchr(h, ':');
    const char *slash = strchr(h, '/');
    if (!colon || !slash || colon > slash || (size_t)(colon - h) >= hostlen ||
        (size_t)(slash - colon - 1) >= portlen)
        return -1;
    snprintf(host, hostlen, "%.*s", (int)(colon - h), h);
    snprintf(port, portlen, "%.*s", (int)(slash - colon - 1), colon + 1);
    *path = slash;
    return 0;
}

static int connect_to(const char *host, const char *port, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %s:%s", host, port);
    return fd;
}

static int send_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int console_upload(const char *url, const char *token, const uint8_t *record, uint32_t len,
                   char *err, size_t errlen)
{
    char host[256], port[16], head[1024], reply[64] = "";
    const char *path;
    if (split_url(url, host, sizeof host, port, sizeof port, &path) != 0) {
        snprintf(err, errlen, "%s: http://HOST:PORT/PATH, please", url);
        return -1;
    }
    int fd = connect_to(host, port, err, errlen);
    if (fd < 0)
        return -1;
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.0\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/octet-stream\r\nContent-Length: %u\r\n\r\n",
                     path, host, port, token ? token : "", len);
    int status = -1;
    size_t got = 0;
    if (send_all(fd, head, (size_t)n) == 0 && send_all(fd, record, len) == 0) {
        ssize_t r;
        while (got + 1 < sizeof reply && (r = recv(fd, reply + got, sizeof reply - 1 - got, 0)) > 0)
            got += (size_t)r;
        reply[got] = '\0';
        if (sscanf(reply, "HTTP/%*d.%*d %d", &status) != 1)
            status = -1;
    }
    close(fd);
    if (status < 0)
        snprintf(err, errlen, "no HTTP reply from %s:%s", host, port);
    return status;
}
