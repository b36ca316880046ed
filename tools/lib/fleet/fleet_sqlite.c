/* The SQLite backend of the fleet's storage: one file, opened in WAL mode so a server
 * ingesting and a report reading do not block each other. */
#include "fleet_db.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bind_params(sqlite3_stmt *st, size_t n, const struct emb_fleet_value *p)
{
    for (size_t i = 0; i < n; i++) {
        char name[24];
        snprintf(name, sizeof name, "$%zu", i + 1);
        int idx = sqlite3_bind_parameter_index(st, name);
        if (idx == 0)
            continue; /* the statement does not use it */
        if (!p[i].data)
            sqlite3_bind_null(st, idx);
        else if (p[i].blob)
            sqlite3_bind_blob64(st, idx, p[i].data, p[i].len, SQLITE_STATIC);
        else
            sqlite3_bind_text(st, idx, p[i].data, -1, SQLITE_STATIC);
    }
}

#define MAX_COLS 32u

static int emit_row(sqlite3_stmt *st, emb_fleet_row_fn row, void *arg)
{
    int n = sqlite3_column_count(st);
    const char *cols[MAX_COLS];
    size_t lens[MAX_COLS];
    if (n > (int)MAX_COLS)
        n = MAX_COLS;
    for (int i = 0; i < n; i++) {
        int type = sqlite3_column_type(st, i);
        if (type == SQLITE_NULL) {
            cols[i] = NULL;
            lens[i] = 0;
        } else if (type == SQLITE_BLOB) {
            cols[i] = sqlite3_column_blob(st, i);
            lens[i] = (size_t)sqlite3_column_bytes(st, i);
            if (!cols[i])
                cols[i] = "";
        } else {
            cols[i] = (const char *)sqlite3_column_text(st, i);
            lens[i] = (size_t)sqlite3_column_bytes(st, i);
        }
    }
    return row(arg, (size_t)n, cols, lens);
}

static long sqlite_exec(void *impl, const char *sql, size_t nparams,
                        const struct emb_fleet_value *params, emb_fleet_row_fn row, void *arg,
                        char *err, size_t errlen)
{
    sqlite3 *db = impl;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "sqlite: %s", sqlite3_errmsg(db));
        return -1;
    }
    bind_params(st, nparams, params);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (row && emit_row(st, row, arg) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    long changed = sqlite3_stmt_readonly(st) ? 0 : (long)sqlite3_changes(db);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "sqlite: %s", sqlite3_errmsg(db));
        changed = -1;
    }
    sqlite3_finalize(st);
    return changed;
}

static void sqlite_close(void *impl)
{
    sqlite3_close(impl);
}

static void *sqlite_open(const char *path, char *err, size_t errlen)
{
    sqlite3 *s = NULL;
    if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, s ? sqlite3_errmsg(s) : "cannot open");
        sqlite3_close(s);
        return NULL;
    }
    /* A server and a reader at once: wait for the other's lock instead of failing. */
    sqlite3_busy_timeout(s, 10000);
    if (sqlite_exec(s, "PRAGMA journal_mode=WAL", 0, NULL, NULL, NULL, err, errlen) < 0 ||
        sqlite_exec(s, "PRAGMA synchronous=NORMAL", 0, NULL, NULL, NULL, err, errlen) < 0) {
        sqlite3_close(s);
        return NULL;
    }
    return s;
}

const struct emb_fleet_db_ops emb_fleet_sqlite_ops = {
    .engine = "sqlite", .blob_type = "BLOB", .open = sqlite_open, .exec = sqlite_exec, .close = sqlite_close};
