/* Opening the fleet's database by its URL, and the calls every module makes through the
 * backend's table. */
#include "fleet_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static struct emb_fleet_db *open_with(const struct emb_fleet_db_ops *ops, const char *where, char *err,
                                      size_t errlen)
{
    void *impl = ops->open(where, err, errlen);
    if (!impl)
        return NULL;
    struct emb_fleet_db *db = calloc(1, sizeof *db);
    if (!db) {
        snprintf(err, errlen, "out of memory");
        ops->close(impl);
        return NULL;
    }
    db->ops = ops;
    db->impl = impl;
    return db;
}

struct emb_fleet_db *emb_fleet_db_open(const char *url, char *err, size_t errlen)
{
    struct emb_fleet_db *db;
    if (starts_with(url, "postgresql://") || starts_with(url, "postgres://"))
        db = open_with(&emb_fleet_pg_ops, url, err, errlen);
    else if (starts_with(url, "sqlite:"))
        db = open_with(&emb_fleet_sqlite_ops, url + strlen("sqlite:"), err, errlen);
    else if (strstr(url, "://")) {
        snprintf(err, errlen, "%s: not a database this tool knows (sqlite:PATH or postgresql://...)", url);
        return NULL;
    } else
        db = open_with(&emb_fleet_sqlite_ops, url, err, errlen);
    if (!db)
        return NULL;
    if (emb_fleet_schema_migrate(db) != 0) {
        snprintf(err, errlen, "%s", db->err);
        emb_fleet_db_close(db);
        return NULL;
    }
    return db;
}

void emb_fleet_db_close(struct emb_fleet_db *db)
{
    if (!db)
        return;
    db->ops->close(db->impl);
    free(db);
}

long emb_fleet_db_exec(struct emb_fleet_db *db, const char *sql, size_t nparams,
                       const struct emb_fleet_value *params, emb_fleet_row_fn row, void *arg)
{
    return db->ops->exec(db->impl, sql, nparams, params, row, arg, db->err, sizeof db->err);
}

int emb_fleet_db_begin(struct emb_fleet_db *db)
{
    if (db->depth++ > 0)
        return db->failed ? -1 : 0;
    db->failed = false;
    if (emb_fleet_db_exec(db, "BEGIN", 0, NULL, NULL, NULL) < 0) {
        db->depth = 0;
        return -1;
    }
    return 0;
}

int emb_fleet_db_commit(struct emb_fleet_db *db)
{
    if (db->depth == 0 || --db->depth > 0)
        return db->failed ? -1 : 0;
    if (db->failed) {
        db->depth = 1;
        emb_fleet_db_rollback(db);
        snprintf(db->err, sizeof db->err, "the batch was rolled back after an error");
        return -1;
    }
    return emb_fleet_db_exec(db, "COMMIT", 0, NULL, NULL, NULL) < 0 ? -1 : 0;
}

void emb_fleet_db_rollback(struct emb_fleet_db *db)
{
    if (db->depth > 1) {
        db->depth--;
        db->failed = true; /* the outermost rolls back when it ends */
        return;
    }
    char keep[sizeof db->err];
    memcpy(keep, db->err, sizeof keep); /* the error that made us roll back is the one to tell */
    emb_fleet_db_exec(db, "ROLLBACK", 0, NULL, NULL, NULL);
    memcpy(db->err, keep, sizeof keep);
    db->depth = 0;
    db->failed = false;
}