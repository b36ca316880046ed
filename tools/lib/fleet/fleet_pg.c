/* The PostgreSQL backend of the fleet's storage, through libpq: parameters are sent apart
 * from the statement (never spliced into it), bytes as binary; results come back as text
 * and a BYTEA column is unescaped into its bytes. */
#include "fleet_db.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 32u
#define MAX_COLS 32u
#define BYTEA_OID 17u

static int emit_rows(PGresult *res, emb_fleet_row_fn row, void *arg)
{
    int nrows = PQntuples(res), ncols = PQnfields(res);
    if (ncols > (int)MAX_COLS)
        ncols = MAX_COLS;
    for (int r = 0; r < nrows; r++) {
        const char *cols[MAX_COLS];
        size_t lens[MAX_COLS];
        unsigned char *owned[MAX_COLS] = {0};
        for (int c = 0; c < ncols; c++) {
            if (PQgetisnull(res, r, c)) {
                cols[c] = NULL;
                lens[c] = 0;
            } else if (PQftype(res, c) == BYTEA_OID) {
                owned[c] = PQunescapeBytea((const unsigned char *)PQgetvalue(res, r, c), &lens[c]);
                cols[c] = owned[c] ? (const char *)owned[c] : "";
            } else {
                cols[c] = PQgetvalue(res, r, c);
                lens[c] = (size_t)PQgetlength(res, r, c);
            }
        }
        int stop = row(arg, (size_t)ncols, cols, lens);
        for (int c = 0; c < ncols; c++)
            PQfreemem(owned[c]);
        if (stop)
            return 1;
    }
    return 0;
}

static long pg_exec(void *impl, const char *sql, size_t nparams,
                    const struct emb_fleet_value *params, emb_fleet_row_fn row, void *arg,
                    char *err, size_t errlen)
{
    const char *values[MAX_PARAMS];
    int lengths[MAX_PARAMS], formats[MAX_PARAMS];
    if (nparams > MAX_PARAMS) {
        snprintf(err, errlen, "postgresql: %zu parameters (at most %u)", nparams, MAX_PARAMS);
        return -1;
    }
    for (size_t i = 0; i < nparams; i++) {
        values[i] = params[i].data;
        lengths[i] = (int)params[i].len;
        formats[i] = params[i].blob ? 1 : 0;
    }
    PGresult *res = PQexecParams(impl, sql, (int)nparams, NULL, values, lengths, formats, 0);
    ExecStatusType st = PQresultStatus(res);
    long changed = 0;
    if (st == PGRES_TUPLES_OK) {
        if (row)
            emit_rows(res, row, arg);
    } else if (st == PGRES_COMMAND_OK) {
        changed = atol(PQcmdTuples(res));
    } else {
        snprintf(err, errlen, "postgresql: %s", PQerrorMessage(impl));
        size_t n = strlen(err);
        if (n > 0 && err[n - 1] == '\n')
            err[n - 1] = '\0';
        changed = -1;
    }
    PQclear(res);
    return changed;
}

static void pg_close(void *impl)
{
    PQfinish(impl);
}

/* libpq's notices ("relation already exists, skipping") are no business of the tool's. */
static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static void *pg_open(const char *conninfo, char *err, size_t errlen)
{
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) {
        snprintf(err, errlen, "postgresql: %s", PQerrorMessage(c));
        size_t n = strlen(err);
        if (n > 0 && err[n - 1] == '\n')
            err[n - 1] = '\0';
        PQfinish(c);
        return NULL;
    }
    PQsetNoticeProcessor(c, quiet_notice, NULL);
    return c;
}

const struct emb_fleet_db_ops emb_fleet_pg_ops = {
    .engine = "postgresql", .blob_type = "BYTEA", .open = pg_open, .exec = pg_exec, .close = pg_close};
