/* A running QEMU guest's memory through QMP and qtest (qmp.h). */
#define _GNU_SOURCE
#include "qmp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "conn.h"
#include "hostio.h"

struct emb_qmp {
    struct emb_conn qmp, qtest; /* QMP sends a JSON object per line, qtest a text line */
    int timeout_ms;
    enum emb_qmp_method method;
    char dir[64];   /* private directory for pmemsave's file */
    char file[96];
    char *reply;    /* emb_qmp_execute's */
    struct { char name[32]; uint64_t count; } events[16]; /* asynchronous events seen */
    struct emb_qmp_stats st;
    char error[512];
};

static int fail(struct emb_qmp *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct emb_qmp *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q->error, sizeof q->error, fmt, ap);
    va_end(ap);
    return -1;
}

/* The next line of QMP's or qtest's connection (conn.h); NULL (said) when none came
 * whole, in time, within EMB_QMP_MAX_LINE. */
static char *read_line(struct emb_qmp *q, struct emb_conn *c, const char *who)
{
    enum emb_conn_status st;
    char *line = emb_conn_line(c, EMB_QMP_MAX_LINE, &st);
    if (line != NULL)
        return line;
    if (st == EMB_CONN_TOO_LONG)
        fail(q, "%s: a reply longer than %u bytes", who, EMB_QMP_MAX_LINE);
    else if (st == EMB_CONN_NO_MEMORY)
        fail(q, "out of memory");
    else
        fail(q, "%s: %s", who, st == EMB_CONN_CLOSED ? "QEMU closed the connection"
                               : st == EMB_CONN_TIMEOUT ? "no reply in time" : strerror(errno));
    return NULL;
}

static void count_event(struct emb_qmp *q, const char *name)
{
    q->st.events++;
    for (size_t i = 0; name && i < sizeof q->events / sizeof q->events[0]; i++) {
        if (q->events[i].name[0] == '\0')
            snprintf(q->events[i].name, sizeof q->events[i].name, "%s", name);
        if (!strcmp(q->events[i].name, name)) {
            q->events[i].count++;
            return;
        }
    }
}

uint64_t emb_qmp_event_count(const struct emb_qmp *q, const char *name)
{
    for (size_t i = 0; i < sizeof q->events / sizeof q->events[0]; i++)
        if (!strcmp(q->events[i].name, name))
            return q->events[i].count;
    return 0;
}

/* The next reply to a command: events are counted and skipped. The caller frees it. */
static json_t *qmp_reply(struct emb_qmp *q)
{
    for (;;) {
        char *line = read_line(q, &q->qmp, "QMP");
        if (line == NULL)
            return NULL;
        json_error_t je;
        json_t *v = json_loads(line, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(v)) {
            fail(q, "QMP: not a JSON object at column %d: %s", je.column, v ? "another value" : je.text);
            json_decref(v);
            return NULL;
        }
        if (json_object_get(v, "event") != NULL) {
            count_event(q, json_string_value(json_object_get(v, "event")));
            json_decref(v);
            continue;
        }
        json_t *e = json_object_get(v, "error");
        if (e != NULL) {
            const char *cls = json_string_value(json_object_get(e, "class"));
            const char *desc = json_string_value(json_object_get(e, "desc"));
            fail(q, "QMP: %s: %s", cls ? cls : "error", desc ? desc : "(no description)");
            json_decref(v);
            return NULL;
        }
        if (json_object_get(v, "return") == NULL) {
            fail(q, "QMP: a reply with neither \"return\" nor \"error\"");
            json_decref(v);
            return NULL;
        }
        return v;
    }
}

/* Sends a command object; its reply (the whole object, freed by the caller), or NULL. */
static json_t *qmp_call(struct emb_qmp *q, json_t *cmd)
{
    char *text = json_dumps(cmd, JSON_COMPACT);
    json_decref(cmd);
    if (text == NULL) {
        fail(q, "out of memory");
        return NULL;
    }
    size_t n = strlen(text);
    text[n] = '\n'; /* json_dumps leaves room for its NUL, which becomes the delimiter */
    int rc = emb_hostio_write_all(q->qmp.fd, text, n + 1u);
    free(text);
    q->st.requests++;
    if (rc != 0) {
        fail(q, "QMP: %s", strerror(errno));
        return NULL;
    }
    return qmp_reply(q);
}

/* The greeting ({"QMP": {"version": ..., "capabilities": [...]}}), then capabilities
 * negotiation, after which QEMU takes commands. */
static int qmp_handshake(struct emb_qmp *q)
{
    char *line = read_line(q, &q->qmp, "QMP");
    if (line == NULL)
        return -1;
    json_t *g = json_loads(line, 0, NULL);
    json_t *ver = json_object_get(json_object_get(json_object_get(g, "QMP"), "version"), "qemu");
    int ok = json_is_object(ver);
    json_decref(g);
    if (!ok)
        return fail(q, "QMP: no greeting: this is not QEMU's machine protocol");
    json_t *r = qmp_call(q, json_pack("{s:s}", "execute", "qmp_capabilities"));
    json_decref(r);
    return r ? 0 : -1;
}

struct emb_qmp *emb_qmp_connect(const char *qmp, const char *qtest, int timeout_ms, char *err,
                                size_t errlen)
{
    struct emb_qmp *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    q->timeout_ms = timeout_ms > 0 ? timeout_ms : 2000;
    emb_conn_init(&q->qtest, -1, q->timeout_ms);
    if (emb_conn_open(&q->qmp, qmp, q->timeout_ms, err, errlen) != 0) {
        free(q);
        return NULL;
    }
    if (qmp_handshake(q) != 0) {
        snprintf(err, errlen, "%s: %s", qmp, q->error);
        emb_qmp_close(q);
        return NULL;
    }
    if (qtest != NULL && emb_conn_open(&q->qtest, qtest, q->timeout_ms, err, errlen) != 0) {
        emb_qmp_close(q);
        return NULL;
    }
    return q;
}

int emb_qmp_running(struct emb_qmp *q, bool *running)
{
    json_t *r = qmp_call(q, json_pack("{s:s}", "execute", "query-status"));
    if (r == NULL)
        return -1;
    json_t *v = json_object_get(json_object_get(r, "return"), "running");
    int rc = json_is_boolean(v) ? (*running = json_is_true(v), 0) : fail(q, "QMP: query-status without \"running\"");
    json_decref(r);
    return rc;
}

const char *emb_qmp_execute(struct emb_qmp *q, const char *command_json)
{
    json_t *cmd = json_loads(command_json, 0, NULL);
    if (!json_is_object(cmd)) {
        json_decref(cmd);
        fail(q, "QMP: the command is not a JSON object");
        return NULL;
    }
    json_t *r = qmp_call(q, cmd);
    if (r == NULL)
        return NULL;
    free(q->reply);
    q->reply = json_dumps(json_object_get(r, "return"), JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(r);
    return q->reply;
}

/* ---- Reads ---- */

/* Parses xp's "ADDR: 0xBB 0xBB ..." lines for [addr, addr + len). */
static int parse_xp(struct emb_qmp *q, const char *text, uint64_t addr, uint8_t *out, size_t len)
{
    size_t done = 0;
    while (done < len && *text) {
        char *end;
        uint64_t at = strtoull(text, &end, 16);
        if (end == text || *end != ':' || at != addr + done)
            return fail(q, "QMP: xp at 0x%" PRIx64 ": %.60s", addr + done, text);
        text = end + 1;
        while (done < len && *text == ' ') {
            unsigned long b = strtoul(text + 1, &end, 16);
            if (strncmp(text + 1, "0x", 2) != 0 || end != text + 5 || b > 0xFF)
                return fail(q, "QMP: xp at 0x%" PRIx64 ": %.60s", addr + done, text);
            out[done++] = (uint8_t)b;
            text = end;
        }
        text += strspn(text, "\r\n");
    }
    return done == len ? 0 : fail(q, "QMP: xp gave %zu of %zu bytes at 0x%" PRIx64, done, len, addr);
}

static int read_xp(struct emb_qmp *q, uint64_t addr, uint8_t *out, size_t len)
{
    char line[64];
    snprintf(line, sizeof line, "xp /%zubx 0x%" PRIx64, len, addr);
    json_t *r = qmp_call(q, json_pack("{s:s,s:{s:s}}", "execute", "human-monitor-command", "arguments",
                                      "command-line", line));
    if (r == NULL)
        return -1;
    const char *text = json_string_value(json_object_get(r, "return"));
    int rc = text ? parse_xp(q, text, addr, out, len) : fail(q, "QMP: xp returned no text");
    json_decref(r);
    return rc;
}

/* pmemsave or memsave into the private file, then the file read back. */
static int read_save(struct emb_qmp *q, const char *command, uint64_t addr, uint8_t *out, size_t len)
{
    if (q->dir[0] == '\0') {
        snprintf(q->dir, sizeof q->dir, "/tmp/emb-qmp-XXXXXX");
        if (mkdtemp(q->dir) == NULL) {
            q->dir[0] = '\0';
            return fail(q, "a private directory for %s: %s", command, strerror(errno));
        }
        snprintf(q->file, sizeof q->file, "%s/mem", q->dir);
    }
    json_t *r = qmp_call(q, json_pack("{s:s,s:{s:I,s:I,s:s}}", "execute", command, "arguments", "val",
                                      (json_int_t)addr, "size", (json_int_t)len, "filename", q->file));
    if (r == NULL)
        return -1;
    json_decref(r);
    int fd = open(q->file, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? pread(fd, out, len, 0) : -1;
    if (fd >= 0)
        close(fd);
    unlink(q->file);
    return n == (ssize_t)len ? 0 : fail(q, "%s: %zd of %zu bytes at 0x%" PRIx64, command, n, len, addr);
}

/* A qtest command's reply line: "OK ..." (the text after OK), else the failure. */
static const char *qtest_call(struct emb_qmp *q, const char *line, size_t n)
{
    q->st.requests++;
    if (emb_hostio_write_all(q->qtest.fd, line, n) != 0) {
        fail(q, "qtest: %s", strerror(errno));
        return NULL;
    }
    for (;;) {
        char *r = read_line(q, &q->qtest, "qtest");
        if (r == NULL)
            return NULL;
        if (!strncmp(r, "IRQ ", 4)) /* an interrupt someone intercepts: not a reply */
            continue;
        if (!strncmp(r, "OK", 2) && (r[2] == '\0' || r[2] == ' '))
            return r[2] ? r + 3 : r + 2;
        fail(q, "qtest: %.200s", r);
        return NULL;
    }
}

/* Characters of base64 (RFC 4648, padded) for len bytes, as qtest's b64read and b64write
 * carry guest memory. */
static size_t base64_size(size_t len)
{
    return (len + 2u) / 3u * 4u;
}

/* Exactly len bytes from their padded base64 text, or -1. OpenSSL's EVP_DecodeBlock decodes
 * whole groups of four characters and reads '=' as zero bits, so the padding is checked
 * here, and the last group decoded aside for the bytes its padding stands for. */
static int decode_base64(const char *text, uint8_t *out, size_t len)
{
    size_t n = strlen(text), pad = (3u - len % 3u) % 3u;
    if (n != base64_size(len) || n > INT_MAX || strspn(text + n - pad, "=") != pad ||
        strcspn(text, "=") != n - pad)
        return -1;
    if (n == 0)
        return 0;
    int head = (int)n - 4;
    uint8_t last[3];
    if (EVP_DecodeBlock(out, (const unsigned char *)text, head) != head / 4 * 3 ||
        EVP_DecodeBlock(last, (const unsigned char *)text + head, 4) != 3)
        return -1;
    memcpy(out + head / 4 * 3, last, 3u - pad);
    return 0;
}

static int read_qtest(struct emb_qmp *q, uint64_t addr, uint8_t *out, size_t len)
{
    char line[64];
    int n = snprintf(line, sizeof line, "b64read 0x%" PRIx64 " 0x%zx\n", addr, len);
    const char *b64 = qtest_call(q, line, (size_t)n);
    if (b64 == NULL)
        return -1;
    if (decode_base64(b64, out, len) != 0)
        return fail(q, "qtest: b64read at 0x%" PRIx64 ": not %zu bytes of base64", addr, len);
    return 0;
}

static enum emb_qmp_method method_for(const struct emb_qmp *q, size_t len)
{
    if (q->method != EMB_QMP_AUTO)
        return q->method;
    if (q->qtest.fd >= 0)
        return EMB_QMP_QTEST;
    return len <= EMB_QMP_XP_MAX ? EMB_QMP_XP : EMB_QMP_PMEMSAVE;
}

static void timed(struct emb_qmp *q, uint64_t t0)
{
    uint64_t ns = emb_hostio_now_ns() - t0;
    q->st.ns_total += ns;
    if (ns > q->st.ns_max)
        q->st.ns_max = ns;
}

int emb_qmp_read(struct emb_qmp *q, uint64_t addr, void *buf, size_t len)
{
    if (len == 0)
        return 0;
    uint64_t t0 = emb_hostio_now_ns();
    int rc;
    switch (method_for(q, len)) {
    case EMB_QMP_QTEST: rc = read_qtest(q, addr, buf, len); break;
    case EMB_QMP_MEMSAVE: rc = read_save(q, "memsave", addr, buf, len); break;
    case EMB_QMP_PMEMSAVE: rc = read_save(q, "pmemsave", addr, buf, len); break;
    default: rc = read_xp(q, addr, buf, len); break;
    }
    timed(q, t0);
    q->st.reads++;
    if (rc == 0)
        q->st.bytes_read += len;
    return rc;
}

int emb_qmp_write(struct emb_qmp *q, uint64_t addr, const void *buf, size_t len)
{
    if (q->qtest.fd < 0)
        return fail(q, "QMP cannot write guest memory: start QEMU with -qtest SOCKET and give it (--qtest)");
    if (len > INT_MAX / 4 * 3)
        return fail(q, "qtest: b64write of %zu bytes: too many for one command", len);
    size_t cap = 64u + base64_size(len) + 1u; /* EVP_EncodeBlock ends with a NUL */
    char *line = malloc(cap);
    if (!line)
        return fail(q, "out of memory");
    int n = snprintf(line, cap, "b64write 0x%" PRIx64 " 0x%zx ", addr, len);
    size_t m = (size_t)EVP_EncodeBlock((unsigned char *)line + n, buf, (int)len);
    line[(size_t)n + m] = '\n';
    uint64_t t0 = emb_hostio_now_ns();
    const char *r = qtest_call(q, line, (size_t)n + m + 1u);
    free(line);
    timed(q, t0);
    q->st.writes++;
    if (r == NULL)
        return -1;
    q->st.bytes_written += len;
    return 0;
}

bool emb_qmp_can_write(const struct emb_qmp *q)
{
    return q->qtest.fd >= 0;
}

int emb_qmp_set_method(struct emb_qmp *q, enum emb_qmp_method m)
{
    if (m == EMB_QMP_QTEST && q->qtest.fd < 0)
        return fail(q, "no qtest socket");
    q->method = m;
    return 0;
}

const char *emb_qmp_error(const struct emb_qmp *q)
{
    return q->error;
}

const struct emb_qmp_stats *emb_qmp_stats(const struct emb_qmp *q)
{
    return &q->st;
}

void emb_qmp_close(struct emb_qmp *q)
{
    if (!q)
        return;
    emb_conn_close(&q->qmp);
    emb_conn_close(&q->qtest);
    if (q->dir[0])
        rmdir(q->dir);
    free(q->reply);
    free(q);
}
