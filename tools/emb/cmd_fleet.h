/* What `emb fleet`'s subcommands share: their options, parsed once by cmd_fleet.c. */
#ifndef EMB_CMD_FLEET_H
#define EMB_CMD_FLEET_H

#include <stdbool.h>
#include <stdint.h>

struct emb_fleet_args {
    const char *db;       /* --db URL (default $EMB_FLEET_DB, else sqlite:fleet.db) */
    const char *device;   /* --device ID: who sent the files ingested */
    int64_t time;         /* --time EPOCH: their upload time (0: now) */
    bool json;
    const char *output;   /* -o FILE */
    const char *listen;   /* --listen HOST:PORT */
    const char *tokens;   /* --tokens FILE */
    uint64_t max_bytes;   /* --max-bytes N: the largest upload taken */
    uint64_t rate;        /* --rate N: uploads a minute per token */
    bool quiet;
};

/* `emb fleet serve` (cmd_fleet_serve.c). */
int emb_fleet_serve_main(const struct emb_fleet_args *a);

#endif /* EMB_CMD_FLEET_H */
