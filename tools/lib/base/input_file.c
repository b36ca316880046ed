/* Bounded whole-file reads (input_file.h). */
#define _DEFAULT_SOURCE /* madvise */
#define _POSIX_C_SOURCE 200809L
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_number.h"

uint64_t emb_input_limit(void)
{
    const char *s = getenv(EMB_INPUT_LIMIT_ENV);
    if (s == NULL || *s == '\0')
        return EMB_INPUT_LIMIT_DEFAULT;
    uint64_t v;
    if (emb_parse_size(s, 1, UINT64_MAX, &v) != 0)
        return EMB_INPUT_LIMIT_DEFAULT;
    return v;
}

static void too_large(char *err, size_t errlen, uint64_t limit, bool env, const char *what)
{
    snprintf(err, errlen, "%s more than the input limit of %" PRIu64 " bytes%s", what, limit,
             env ? " (set " EMB_INPUT_LIMIT_ENV " to read more)" : "");
}

/* Reads the rest of `in` to its end, at most limit bytes. */
static uint8_t *read_rest(struct emb_input *in, uint64_t limit, bool env, size_t *len, char *err,
                          size_t errlen)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(in->fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "is a directory");
            return NULL;
        }
        if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > limit) {
            char what[64];
            snprintf(what, sizeof what, "%" PRIu64 " bytes:", (uint64_t)st.st_size);
            too_large(err, errlen, limit, env, what);
            return NULL;
        }
    }
    if (limit > SIZE_MAX - 2)
        limit = SIZE_MAX - 2;
    /* A regular file is read into a buffer of its size; anything else grows by doubling. */
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : (size_t)1 << 16;
    if (cap < EMB_INPUT_HEAD)
        cap = EMB_INPUT_HEAD;
    size_t n = 0;
    uint8_t *buf = malloc(cap + 1);
    for (;;) {
        if (buf == NULL) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        if (n == cap) {
            if (n > limit) {
                free(buf);
                too_large(err, errlen, limit, env, "it holds");
                return NULL;
            }
            size_t next = cap > limit / 2 ? (size_t)limit + 1 : cap * 2;
            uint8_t *q = realloc(buf, next + 1);
            if (q == NULL) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = q;
            cap = next;
        }
        long r = emb_input_next(in, buf + n, cap - n);
        if (r < 0) {
            snprintf(err, errlen, "read error: %s", strerror(errno));
            free(buf);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > limit) {
        free(buf);
        too_large(err, errlen, limit, env, "it holds");
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* tcp:HOST:PORT, connected. */
static int open_tcp(const char *spec, char *err, size_t errlen)
{
    char host[256];
    snprintf(host, sizeof host, "%s", spec + 4);
    char *colon = strrchr(host, ':');
    if (colon == NULL || colon[1] == '\0') {
        snprintf(err, errlen, "give tcp:HOST:PORT");
        return -1;
    }
    *colon = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "%s", gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "cannot connect: %s", strerror(errno));
    return fd;
}

int emb_input_open(struct emb_input *in, const char *spec, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    in->name = spec;
    if (strcmp(spec, "-") == 0) {
        in->fd = STDIN_FILENO;
        return 0;
    }
    in->fd = strncmp(spec, "tcp:", 4) == 0 ? open_tcp(spec, err, errlen)
                                           : open(spec, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0 && strncmp(spec, "tcp:", 4) != 0)
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
    in->close_fd = in->fd >= 0;
    return in->fd >= 0 ? 0 : -1;
}

static long read_fd(int fd, uint8_t *buf, size_t cap)
{
    for (;;) {
        ssize_t r = read(fd, buf, cap);
        if (r >= 0 || errno != EINTR)
            return (long)r;
    }
}

long emb_input_peek(struct emb_input *in, size_t want, char *err, size_t errlen)
{
    if (want > sizeof in->head)
        want = sizeof in->head;
    while (in->head_len < want) {
        long r = read_fd(in->fd, in->head + in->head_len, sizeof in->head - in->head_len);
        if (r < 0) {
            snprintf(err, errlen, "read error: %s", strerror(errno));
            return -1;
        }
        if (r == 0)
            break;
        in->head_len += (size_t)r;
    }
    return (long)(in->head_len - in->head_pos);
}

long emb_input_next(struct emb_input *in, uint8_t *buf, size_t cap)
{
    if (in->head_pos < in->head_len) {
        size_t n = in->head_len - in->head_pos;
        if (n > cap)
            n = cap;
        memcpy(buf, in->head + in->head_pos, n);
        in->head_pos += n;
        return (long)n;
    }
    return read_fd(in->fd, buf, cap);
}

uint8_t *emb_input_read_rest(struct emb_input *in, uint64_t limit, size_t *len, char *err,
                             size_t errlen)
{
    return read_rest(in, limit != 0 ? limit : emb_input_limit(), limit == 0, len, err, errlen);
}

void emb_input_close(struct emb_input *in)
{
    if (in->close_fd && in->fd >= 0)
        close(in->fd);
    in->fd = -1;
    in->close_fd = false;
}

static uint8_t *read_path(const char *path, uint64_t limit, bool env, size_t *len, char *err,
                          size_t errlen)
{
    struct emb_input in;
    if (emb_input_open(&in, path, err, errlen) != 0)
        return NULL;
    uint8_t *buf = read_rest(&in, limit, env, len, err, errlen);
    emb_input_close(&in);
    return buf;
}

uint8_t *emb_input_read(const char *path, size_t *len, char *err, size_t errlen)
{
    return read_path(path, emb_input_limit(), true, len, err, errlen);
}

uint8_t *emb_input_read_max(const char *path, uint64_t limit, size_t *len, char *err,
                            size_t errlen)
{
    return read_path(path, limit, false, len, err, errlen);
}

const uint8_t *emb_input_map_rest(struct emb_input *in, uint64_t limit, size_t *len)
{
    struct stat st;
    if (in->head_len != 0 || fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > (limit ? limit : emb_input_limit()) ||
        (uint64_t)st.st_size > SIZE_MAX || lseek(in->fd, 0, SEEK_CUR) != 0)
        return NULL;
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
    if (m == MAP_FAILED)
        return NULL;
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    *len = (size_t)st.st_size;
    return m;
}

void emb_input_map_release(const uint8_t *bytes, size_t done)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t step = (uintptr_t)(page > 0 ? page : 4096);
    uintptr_t lo = ((uintptr_t)bytes + step - 1u) / step * step, hi = ((uintptr_t)bytes + done) / step * step;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void emb_input_unmap(const uint8_t *bytes, size_t len)
{
    if (bytes != NULL)
        munmap((void *)bytes, len);
}
