/* The fleet's upload endpoint over HTTP (libmicrohttpd): a device POSTs its crash record
 * (raw, or framed as channel-2 frames as its link sends them) or any file `emb fleet
 * ingest` takes to /v1/upload with `Authorization: Bearer TOKEN`. A device token names its
 * device; a fleet token ("*") takes the device from the X-Emb-Device header. Uploads over
 * the size limit, over a token's rate, without a good token, or malformed are refused with
 * their HTTP status and a JSON reason; a refused record is stored as refused (422). */
#ifndef EMB_FLEET_SERVE_H
#define EMB_FLEET_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet.h"

struct emb_fleet_token {
    char token[128];
    char device[128]; /* "*": a fleet token */
};

struct emb_fleet_tokens {
    struct emb_fleet_token *items;
    size_t n;
};

/* Reads a tokens file: "TOKEN DEVICE" a line ('#' starts a comment). Returns 0, or -1
 * with err saying which line is wrong. */
int emb_fleet_tokens_load(const char *path, struct emb_fleet_tokens *out, char *err, size_t errlen);
void emb_fleet_tokens_free(struct emb_fleet_tokens *t);

struct emb_fleet_server_config {
    struct emb_fleet_db *db;           /* used from the server's one thread only */
    const struct emb_fleet_tokens *tokens;
    const char *listen;                /* "HOST:PORT" (IPv4; port 0: any free port) */
    uint64_t max_bytes;                /* the largest upload taken */
    uint64_t rate;                     /* uploads a minute per token */
    /* Called with a line for each request handled (from the server's thread). */
    void (*log)(void *arg, const char *line);
    void *log_arg;
};

struct emb_fleet_server;

/* Starts serving. NULL with err set when the address is bad or cannot be bound. */
struct emb_fleet_server *emb_fleet_server_start(const struct emb_fleet_server_config *c,
                                                char *err, size_t errlen);
/* The port it listens on. */
unsigned emb_fleet_server_port(const struct emb_fleet_server *s);
void emb_fleet_server_stop(struct emb_fleet_server *s);

#endif /* EMB_FLEET_SERVE_H */
