/* The fleet: crash records, captures and log streams from many devices kept in one
 * database (fleet_db.h), symbolised by the ELF its build id names (the symbol store),
 * grouped into buckets by a signature no rebuild changes (the top frames' function names
 * and the fault class), and reported. Nothing here prints: results are structures, rows
 * and problems for the command to show. */
#ifndef EMB_FLEET_H
#define EMB_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet_db.h"

struct emb_elf;

#define EMB_FLEET_HASH_HEX 65u     /* SHA-256 in hex, NUL */
#define EMB_FLEET_BUCKET_HEX 13u   /* a bucket's id: the first 12 hex digits of its
                                    * signature's SHA-256, NUL */
#define EMB_FLEET_TOP_FRAMES 3u    /* function names a signature takes */

/* One row of the records table: a crash record, a mini-record, a capture, a log stream,
 * or a refused file (refused set, reason saying why and where). */
struct emb_fleet_row {
    char hash[EMB_FLEET_HASH_HEX];
    const char *kind;          /* "crash v1", "crash v2", "mini-record", "capture", ... */
    bool refused;
    char reason[512];
    char build_key[17];        /* the first 8 bytes of the build id in hex; "" unknown */
    char build_id[41];
    char fw_version[32];
    const char *reset_reason;  /* NULL for what is no crash */
    const char *fault_class;
    unsigned fault_code;
    uint64_t fault_address, pc, uptime;
    char thread[64];
    char chain[2048];          /* "function file:line" a line, innermost first */
    char flight[512];          /* the flight recorder's summary */
    char signature[512];
    char bucket[EMB_FLEET_BUCKET_HEX];
    bool symbolised;
    const uint8_t *raw;        /* the row's bytes (within the input) */
    size_t raw_len;
};

/* Finds the ELF of a build (by its 16-hex-digit key); NULL when the store has none. */
typedef struct emb_elf *(*emb_fleet_elf_fn)(void *arg, const char *build_key);

struct emb_fleet_analysis {
    const char *name;          /* the input, in reasons */
    emb_fleet_elf_fn find_elf; /* may be NULL: nothing is symbolised */
    void *arg;
    /* The build of mini-records that arrive alone (they carry no build id): the key of
     * the record they came with, when a stored row is analysed again; NULL otherwise. */
    const char *mini_build_key;
};

/* The rows one input makes: one for a file that is no crash or is refused, one per record
 * and mini-record a retained region holds. Returns how many were written (at most max;
 * at least one). */
size_t emb_fleet_analyse(const uint8_t *bytes, size_t n, const struct emb_fleet_analysis *a,
                         struct emb_fleet_row *rows, size_t max);

/* The payload of the first channel-2 (crash record) frame in bytes, malloc'd; NULL when
 * the bytes hold none. */
uint8_t *emb_fleet_unframe_crash(const uint8_t *bytes, size_t n, size_t *len);

/* SHA-256 of bytes in hex (OpenSSL). */
void emb_fleet_sha256_hex(const void *bytes, size_t n, char out[EMB_FLEET_HASH_HEX]);
/* The signature's bucket id. */
void emb_fleet_bucket_id(const char *signature, char out[EMB_FLEET_BUCKET_HEX]);

/* Where an input came from. */
struct emb_fleet_source {
    const char *name;     /* the file, or the upload's name */
    const char *device;   /* the device id; "unknown" when none is known */
    int64_t uploaded;     /* seconds since the epoch */
};

struct emb_fleet_ingest_result {
    size_t rows;          /* rows the input made */
    size_t inserted;      /* of them, new (the rest were stored already) */
    size_t refused;       /* of them, refused */
    char reason[512];     /* the first refusal's reason */
    char bucket[EMB_FLEET_BUCKET_HEX]; /* the first row's bucket ("" none) */
};

struct emb_fleet_symbols;

/* The symbol store's reader: ELFs fetched once from the database into temporary files,
 * opened, kept until closed. */
struct emb_fleet_symbols *emb_fleet_symbols_new(struct emb_fleet_db *db);
void emb_fleet_symbols_free(struct emb_fleet_symbols *s);
struct emb_elf *emb_fleet_symbols_find(void *symbols, const char *build_key);

/* Stores an input's rows, in one transaction. Returns 0, or -1 (db->err). */
int emb_fleet_ingest(struct emb_fleet_db *db, struct emb_fleet_symbols *syms,
                     const struct emb_fleet_source *src, const uint8_t *bytes, size_t n,
                     struct emb_fleet_ingest_result *res);

struct emb_fleet_symbols_result {
    char build_id[41];
    bool added;           /* false: the store held this build already */
    size_t symbolised;    /* records of the build symbolised now */
};

/* Adds the ELF at `path` (its bytes) to the store and symbolises the records of its
 * build that were waiting for it. Returns 0, or -1 with err set (no build id, a file
 * that is no ELF, a database error). */
int emb_fleet_symbols_add(struct emb_fleet_db *db, const char *path,
                          struct emb_fleet_symbols_result *res, char *err, size_t errlen);

#endif /* EMB_FLEET_H */
