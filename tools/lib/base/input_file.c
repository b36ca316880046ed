/* Bounded whole-file reads (input_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
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

/* Reads fd to its end, at most limit bytes. */
static uint8_t *read_fd(int fd, uint64_t limit, bool env, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(fd, &st) == 0) {
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
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
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

static uint8_t *read_path(const char *path, uint64_t limit, bool env, size_t *len, char *err,
                          size_t errlen)
{
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return NULL;
    }
    uint8_t *buf = read_fd(fd, limit, env, len, err, errlen);
    if (!is_stdin)
        close(fd);
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
