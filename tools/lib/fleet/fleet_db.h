/* The fleet's storage: one interface over the databases a fleet is kept in, SQLite (one
 * file, embedded: `sqlite:path.db`, or a bare path) and PostgreSQL (`postgresql://...`,
 * libpq). Statements are written once, with `$1`, `$2`... placeholders both engines read,
 * and the schema is one list of versioned migrations (fleet_schema.c) applied in order. */
#ifndef EMB_FLEET_DB_H
#define EMB_FLEET_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A statement's parameter: text (NUL-terminated), bytes (blob), or SQL NULL (data NULL). */
struct emb_fleet_value {
    const void *data;
    size_t len;  /* bytes of a blob; ignored for text */
    bool blob;
};

#define EMB_FLEET_TEXT(s) ((struct emb_fleet_value){.data = (s)})
#define EMB_FLEET_BLOB(p, n) ((struct emb_fleet_value){.data = (p), .len = (n), .blob = true})

/* One result row: ncols columns, each NUL-terminated (a blob's bytes are followed by a
 * NUL too), NULL for SQL NULL; lens[i] its bytes. Returns 0 to go on, else stops. */
typedef int (*emb_fleet_row_fn)(void *arg, size_t ncols, const char *const *cols,
                                const size_t *lens);

struct emb_fleet_db_ops {
    const char *engine;     /* "sqlite", "postgresql" */
    const char *blob_type;  /* the column type of bytes: BLOB, BYTEA */
    /* Connects to the database `where` names (a path, a conninfo URL): the connection,
     * or NULL with err set. */
    void *(*open)(const char *where, char *err, size_t errlen);
    /* Runs one statement; rows go to row (may be NULL). Returns the rows it changed (0
     * for a query), or -1 with err set. */
    long (*exec)(void *impl, const char *sql, size_t nparams,
                 const struct emb_fleet_value *params, emb_fleet_row_fn row, void *arg,
                 char *err, size_t errlen);
    void (*close)(void *impl);
};

struct emb_fleet_db {
    const struct emb_fleet_db_ops *ops;
    void *impl;
    char err[512]; /* the last error */
    unsigned depth; /* transactions open: only the outermost is the database's */
    bool failed;    /* an inner one rolled back: the outermost cannot commit */
};

/* Opens the database `url` names (sqlite:PATH, a bare PATH, postgresql://..., postgres://)
 * and brings its schema to the newest version. NULL with a message in err on failure. */
struct emb_fleet_db *emb_fleet_db_open(const char *url, char *err, size_t errlen);
void emb_fleet_db_close(struct emb_fleet_db *db);

/* Runs one statement (see ops->exec); errors land in db->err. */
long emb_fleet_db_exec(struct emb_fleet_db *db, const char *sql, size_t nparams,
                       const struct emb_fleet_value *params, emb_fleet_row_fn row, void *arg);
/* BEGIN / COMMIT / ROLLBACK. 0 or -1. They nest: a batch (many ingests in one
 * transaction, one commit to wait for) begins around ingests that begin their own; a
 * rollback inside rolls back the batch, whose commit then fails. */
int emb_fleet_db_begin(struct emb_fleet_db *db);
int emb_fleet_db_commit(struct emb_fleet_db *db);
void emb_fleet_db_rollback(struct emb_fleet_db *db);

/* The schema version the database is at, after opening. */
int emb_fleet_db_schema_version(struct emb_fleet_db *db);
/* The newest version this tool knows. */
int emb_fleet_schema_latest(void);

/* The backends (fleet_sqlite.c, fleet_pg.c). */
extern const struct emb_fleet_db_ops emb_fleet_sqlite_ops, emb_fleet_pg_ops;
/* Applies the migrations the database lacks (fleet_schema.c). 0 or -1 (db->err). */
int emb_fleet_schema_migrate(struct emb_fleet_db *db);

#endif /* EMB_FLEET_DB_H */
