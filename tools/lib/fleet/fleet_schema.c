/* The fleet's schema: migrations applied in order, each once, its number kept in
 * fleet_schema. A statement names the type of bytes as %s (BLOB in SQLite, BYTEA in
 * PostgreSQL); every other word is read alike by both engines. */
#include "fleet_db.h"

#include <stdio.h>
#include <stdlib.h>

/* Version 1: the tables. A record is keyed by the SHA-256 of its bytes, so the same
 * upload twice is one row. Symbols keep the ELF itself, keyed by its build id and by the
 * 8-byte prefix a v2 record carries (build_key). */
static const char *const V1[] = {
    "CREATE TABLE symbols (build_id TEXT PRIMARY KEY, build_key TEXT NOT NULL,"
    " name TEXT NOT NULL, added BIGINT NOT NULL, elf %s NOT NULL)",
    "CREATE INDEX symbols_by_key ON symbols (build_key)",
    "CREATE TABLE records (hash TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,"
    " reason TEXT, source TEXT NOT NULL, device TEXT NOT NULL, uploaded BIGINT NOT NULL,"
    " build_key TEXT, build_id TEXT, fw_version TEXT, reset_reason TEXT, fault_class TEXT,"
    " fault_code INTEGER, fault_address BIGINT, pc BIGINT, uptime BIGINT, thread TEXT,"
    " chain TEXT, flight TEXT, signature TEXT, bucket TEXT, symbolised INTEGER NOT NULL,"
    " raw %s NOT NULL)",
    /* `buckets` reads this index alone: grouped by bucket, counted by version and device,
     * first and last seen, for the accepted records only. */
    "CREATE INDEX records_by_bucket ON records (status, bucket, fw_version, device, uploaded,"
    " signature)",
    /* what `symbols add` looks for: the records of one build still without symbols */
    "CREATE INDEX records_unsymbolised ON records (build_key, symbolised)",
    NULL,
};

/* Version 2: a bucket's newest example found without a scan (`show`, the report). */
static const char *const V2[] = {
    "CREATE INDEX records_newest ON records (bucket, uploaded, hash)",
    NULL,
};

static const char *const *const MIGRATIONS[] = {V1, V2};
#define NMIGRATIONS ((int)(sizeof MIGRATIONS / sizeof MIGRATIONS[0]))

int emb_fleet_schema_latest(void)
{
    return NMIGRATIONS;
}

static int read_int(void *arg, size_t n, const char *const *cols, const size_t *lens)
{
    (void)lens;
    if (n > 0 && cols[0])
        *(int *)arg = atoi(cols[0]);
    return 1;
}

int emb_fleet_db_schema_version(struct emb_fleet_db *db)
{
    int v = 0;
    if (emb_fleet_db_exec(db, "SELECT MAX(version) FROM fleet_schema", 0, NULL, read_int, &v) < 0)
        return -1;
    return v;
}

static int apply(struct emb_fleet_db *db, int version)
{
    for (const char *const *s = MIGRATIONS[version - 1]; *s; s++) {
        char sql[1024];
        snprintf(sql, sizeof sql, *s, db->ops->blob_type, db->ops->blob_type);
        if (emb_fleet_db_exec(db, sql, 0, NULL, NULL, NULL) < 0)
            return -1;
    }
    char v[16];
    snprintf(v, sizeof v, "%d", version);
    struct emb_fleet_value p[] = {EMB_FLEET_TEXT(v)};
    return emb_fleet_db_exec(db, "INSERT INTO fleet_schema (version) VALUES ($1)", 1, p, NULL, NULL) < 0
               ? -1 : 0;
}

int emb_fleet_schema_migrate(struct emb_fleet_db *db)
{
    if (emb_fleet_db_exec(db, "CREATE TABLE IF NOT EXISTS fleet_schema (version INTEGER NOT NULL)",
                          0, NULL, NULL, NULL) < 0)
        return -1;
    int have = emb_fleet_db_schema_version(db);
    if (have < 0)
        return -1;
    if (have > NMIGRATIONS) {
        snprintf(db->err, sizeof db->err,
                 "the database's schema is version %d, newer than this tool's %d", have, NMIGRATIONS);
        return -1;
    }
    for (int v = have + 1; v <= NMIGRATIONS; v++) {
        if (emb_fleet_db_begin(db) != 0)
            return -1;
        if (apply(db, v) != 0) {
            emb_fleet_db_rollback(db);
            return -1;
        }
        if (emb_fleet_db_commit(db) != 0)
            return -1;
    }
    return 0;
}
