/* The fleet's upload endpoint (fleet_serve.h). libmicrohttpd parses HTTP; its one internal
 * polling thread runs every request, so the database connection is never shared. */
#define _POSIX_C_SOURCE 200809L
#include "fleet_serve.h"

#include "buffer.h"
#include "json.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UPLOAD_PATH "/v1/upload"

/* A token's uploads in the current minute (a fixed window). */
struct rate_window {
    int64_t minute;
    uint64_t count;
};

struct emb_fleet_server {
    struct emb_fleet_server_config c;
    struct MHD_Daemon *daemon;
    struct emb_fleet_symbols *syms;
    struct rate_window *rates; /* one per token */
};

/* What one request has sent so far. */
struct upload {
    const struct emb_fleet_token *token;
    char device[128];
    struct emb_buf body;
    bool too_large;
};

static void log_line(struct emb_fleet_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(struct emb_fleet_server *s, const char *fmt, ...)
{
    if (!s->c.log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->c.log(s->c.log_arg, line);
}

/* A JSON reply: {"error": why} or what the caller wrote with the writer. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (status == MHD_HTTP_TOO_MANY_REQUESTS)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "60");
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result refuse(struct emb_fleet_server *s, struct MHD_Connection *conn, unsigned status,
                              const char *why)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return MHD_NO;
    struct emb_json j;
    emb_json_init(&j, f, false);
    emb_json_begin_object(&j, NULL);
    emb_json_string(&j, "error", why);
    emb_json_end_object(&j);
    emb_json_end(&j);
    fclose(f);
    log_line(s, "refused %u: %s", status, why);
    enum MHD_Result ok = reply(conn, status, text);
    free(text);
    return ok;
}

static bool same(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned diff = na != nb;
    for (size_t i = 0; i < na && i < nb; i++)
        diff |= (unsigned)(a[i] ^ b[i]); /* no early exit: the time says nothing of the token */
    return diff == 0;
}

static const struct emb_fleet_token *find_token(const struct emb_fleet_server *s, const char *auth)
{
    static const char bearer[] = "Bearer ";
    if (!auth || strncmp(auth, bearer, sizeof bearer - 1) != 0)
        return NULL;
    const struct emb_fleet_token *found = NULL;
    for (size_t i = 0; i < s->c.tokens->n; i++)
        if (same(s->c.tokens->items[i].token, auth + sizeof bearer - 1))
            found = &s->c.tokens->items[i];
    return found;
}

/* Counts an upload against its token's minute; false when over the rate. */
static bool within_rate(struct emb_fleet_server *s, const struct emb_fleet_token *t)
{
    struct rate_window *w = &s->rates[t - s->c.tokens->items];
    int64_t minute = (int64_t)time(NULL) / 60;
    if (w->minute != minute) {
        w->minute = minute;
        w->count = 0;
    }
    return ++w->count <= s->c.rate;
}

static bool device_ok(const char *d)
{
    size_t n = strlen(d);
    if (n == 0 || n >= 128)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(d[i] >= '0' && d[i] <= '9') && !(d[i] >= 'a' && d[i] <= 'z') && !(d[i] >= 'A' && d[i] <= 'Z') &&
            !strchr("-_.:", d[i]))
            return false;
    return true;
}

/* The request's first call, before its body: who sends it and whether it may. Returns
 * MHD_YES with *u set to go on, else the refusal's result. */
static enum MHD_Result admit(struct emb_fleet_server *s, struct MHD_Connection *conn, const char *url,
                             const char *method, struct upload **out)
{
    if (strcmp(url, UPLOAD_PATH) != 0)
        return refuse(s, conn, MHD_HTTP_NOT_FOUND, "no such endpoint: uploads go to POST " UPLOAD_PATH);
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return refuse(s, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only POST is taken");
    const struct emb_fleet_token *t =
        find_token(s, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
    if (!t)
        return refuse(s, conn, MHD_HTTP_UNAUTHORIZED, "no valid token (Authorization: Bearer TOKEN)");
    const char *device = strcmp(t->device, "*") == 0
                             ? MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Emb-Device")
                             : t->device;
    if (!device || !device_ok(device))
        return refuse(s, conn, MHD_HTTP_BAD_REQUEST,
                      "a fleet token needs X-Emb-Device: ID (letters, digits, - _ . :)");
    const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length && strtoull(length, NULL, 10) > s->c.max_bytes)
        return refuse(s, conn, MHD_HTTP_CONTENT_TOO_LARGE, "the upload is larger than the server takes");
    if (!within_rate(s, t))
        return refuse(s, conn, MHD_HTTP_TOO_MANY_REQUESTS, "too many uploads this minute for this token");
    struct upload *u = calloc(1, sizeof *u);
    if (!u)
        return MHD_NO;
    u->token = t;
    snprintf(u->device, sizeof u->device, "%s", device);
    *out = u;
    return MHD_YES;
}

static void take(struct upload *u, const char *data, size_t n, uint64_t max)
{
    /* Past the limit (a chunked upload that grew), or out of memory: read, dropped. */
    if (u->too_large || u->body.len + n > max || !emb_buf_append(&u->body, data, n))
        u->too_large = true;
}

/* The whole body has arrived: ingest it and say what became of it. */
static enum MHD_Result finish(struct emb_fleet_server *s, struct MHD_Connection *conn, struct upload *u)
{
    if (u->too_large)
        return refuse(s, conn, MHD_HTTP_CONTENT_TOO_LARGE, "the upload is larger than the server takes");
    if (u->body.len == 0)
        return refuse(s, conn, MHD_HTTP_BAD_REQUEST, "an empty upload");
    char name[160];
    snprintf(name, sizeof name, "upload from %s", u->device);
    struct emb_fleet_source src = {.name = name, .device = u->device, .uploaded = (int64_t)time(NULL)};
    struct emb_fleet_ingest_result res;
    if (emb_fleet_ingest(s->c.db, s->syms, &src, u->body.data, u->body.len, &res) != 0)
        return refuse(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, s->c.db->err);
    if (res.refused)
        return refuse(s, conn, MHD_HTTP_UNPROCESSABLE_CONTENT, res.reason); /* stored as refused */
    char body[256];
    snprintf(body, sizeof body, "{\"status\": \"%s\", \"rows\": %zu, \"new\": %zu, \"bucket\": \"%s\"}\n",
             res.inserted ? "stored" : "stored already", res.rows, res.inserted, res.bucket);
    log_line(s, "%s: %zu bytes, %zu rows, %zu new%s%s", u->device, u->body.len, res.rows, res.inserted,
             res.bucket[0] ? ", bucket " : "", res.bucket);
    return reply(conn, res.inserted ? MHD_HTTP_CREATED : MHD_HTTP_OK, body);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **state)
{
    struct emb_fleet_server *s = cls;
    (void)version;
    struct upload *u = *state;
    if (!u) {
        enum MHD_Result ok = admit(s, conn, url, method, &u);
        *state = u;
        return ok;
    }
    if (*size) {
        take(u, data, *size, s->c.max_bytes);
        *size = 0;
        return MHD_YES;
    }
    return finish(s, conn, u);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)conn;
    (void)why;
    struct upload *u = *state;
    if (u)
        emb_buf_free(&u->body);
    free(u);
    *state = NULL;
}

static int parse_listen(const char *listen, struct sockaddr_in *addr, char *err, size_t errlen)
{
    char host[64];
    const char *colon = strrchr(listen, ':');
    char *end;
    unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    if (!colon || (size_t)(colon - listen) >= sizeof host || *end || colon[1] == '\0' || port > 65535) {
        snprintf(err, errlen, "--listen %s: HOST:PORT, please (127.0.0.1:8023)", listen);
        return -1;
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
    if (inet_pton(AF_INET, host, &addr->sin_addr) != 1) {
        snprintf(err, errlen, "--listen %s: %s is no IPv4 address", listen, host);
        return -1;
    }
    addr->sin_port = htons((uint16_t)port);
    return 0;
}

struct emb_fleet_server *emb_fleet_server_start(const struct emb_fleet_server_config *c, char *err,
                                                size_t errlen)
{
    struct sockaddr_in addr;
    if (parse_listen(c->listen, &addr, err, errlen) != 0)
        return NULL;
    struct emb_fleet_server *s = calloc(1, sizeof *s);
    if (!s || !(s->rates = calloc(c->tokens->n + 1, sizeof *s->rates)) ||
        !(s->syms = emb_fleet_symbols_new(c->db))) {
        snprintf(err, errlen, "out of memory");
        emb_fleet_server_stop(s);
        return NULL;
    }
    s->c = *c;
    /* One thread polls and runs every request; a slow client is cut off after 10 s. */
    s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, s,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errlen, "--listen %s: cannot listen there (in use, or not this machine's)", c->listen);
        emb_fleet_server_stop(s);
        return NULL;
    }
    return s;
}

unsigned emb_fleet_server_port(const struct emb_fleet_server *s)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

void emb_fleet_server_stop(struct emb_fleet_server *s)
{
    if (!s)
        return;
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    emb_fleet_symbols_free(s->syms);
    free(s->rates);
    free(s);
}

int emb_fleet_tokens_load(const char *path, struct emb_fleet_tokens *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot read it", path);
        return -1;
    }
    char line[512];
    int rc = 0;
    for (unsigned no = 1; rc == 0 && fgets(line, sizeof line, f); no++) {
        char token[128], device[128], extra[2];
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        int got = sscanf(line, "%127s %127s %1s", token, device, extra);
        if (got <= 0)
            continue;
        struct emb_fleet_token *items = got == 2 ? realloc(out->items, (out->n + 1) * sizeof *items) : NULL;
        if (!items) {
            snprintf(err, errlen, "%s:%u: TOKEN DEVICE, please (DEVICE * for a fleet token)", path, no);
            rc = -1;
            continue;
        }
        out->items = items;
        snprintf(items[out->n].token, sizeof items[0].token, "%s", token);
        snprintf(items[out->n++].device, sizeof items[0].device, "%s", device);
    }
    fclose(f);
    if (rc == 0 && out->n == 0) {
        snprintf(err, errlen, "%s: no token in it", path);
        rc = -1;
    }
    if (rc != 0)
        emb_fleet_tokens_free(out);
    return rc;
}

void emb_fleet_tokens_free(struct emb_fleet_tokens *t)
{
    free(t->items);
    memset(t, 0, sizeof *t);
}
