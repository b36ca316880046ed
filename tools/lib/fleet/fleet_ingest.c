/* Storing an input: its rows inserted in one transaction, each keyed by the hash of its
 * bytes so an upload seen before changes nothing. A framed crash record (a channel-2
 * frame, as a device's link sends it) is stored as the record it carries. */
#include "fleet.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 257u /* a record and the mini-records the report keeps */

static const char INSERT_SQL[] =
    "INSERT INTO records (hash, kind, status, reason, source, device, uploaded, build_key,"
    " build_id, fw_version, reset_reason, fault_class, fault_code, fault_address, pc, uptime,"
    " thread, chain, flight, signature, bucket, symbolised, raw) VALUES ($1, $2, $3, $4, $5,"
    " $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)"
    " ON CONFLICT (hash) DO NOTHING";

/* Text or NULL for an empty field. */
static struct emb_fleet_value text_or_null(const char *s)
{
    return EMB_FLEET_TEXT(s && s[0] ? s : NULL);
}

static long insert_row(struct emb_fleet_db *db, const struct emb_fleet_source *src,
                       const struct emb_fleet_row *r)
{
    char uploaded[24], code[16], addr[24], pc[24], uptime[24];
    snprintf(uploaded, sizeof uploaded, "%" PRId64, src->uploaded);
    snprintf(code, sizeof code, "%u", r->fault_code);
    snprintf(addr, sizeof addr, "%" PRId64, (int64_t)r->fault_address);
    snprintf(pc, sizeof pc, "%" PRId64, (int64_t)r->pc);
    snprintf(uptime, sizeof uptime, "%" PRId64, (int64_t)r->uptime);
    bool crash = r->fault_class != NULL && !r->refused;
    struct emb_fleet_value p[] = {
        EMB_FLEET_TEXT(r->hash), EMB_FLEET_TEXT(r->kind),
        EMB_FLEET_TEXT(r->refused ? "refused" : "ok"), text_or_null(r->refused ? r->reason : NULL),
        EMB_FLEET_TEXT(src->name), EMB_FLEET_TEXT(src->device ? src->device : "unknown"),
        EMB_FLEET_TEXT(uploaded), text_or_null(r->build_key), text_or_null(r->build_id),
        text_or_null(r->fw_version), text_or_null(crash ? r->reset_reason : NULL),
        text_or_null(crash ? r->fault_class : NULL), EMB_FLEET_TEXT(crash ? code : NULL),
        EMB_FLEET_TEXT(crash ? addr : NULL), EMB_FLEET_TEXT(crash ? pc : NULL),
        EMB_FLEET_TEXT(crash ? uptime : NULL), text_or_null(r->thread), text_or_null(r->chain),
        text_or_null(r->flight), text_or_null(crash ? r->signature : NULL),
        text_or_null(crash ? r->bucket : NULL), EMB_FLEET_TEXT(r->symbolised ? "1" : "0"),
        EMB_FLEET_BLOB(r->raw, r->raw_len),
    };
    return emb_fleet_db_exec(db, INSERT_SQL, sizeof p / sizeof p[0], p, NULL, NULL);
}

static int store_rows(struct emb_fleet_db *db, const struct emb_fleet_source *src,
                      const struct emb_fleet_row *rows, size_t n, struct emb_fleet_ingest_result *res)
{
    if (emb_fleet_db_begin(db) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        long changed = insert_row(db, src, &rows[i]);
        if (changed < 0) {
            emb_fleet_db_rollback(db);
            return -1;
        }
        res->inserted += (size_t)changed;
    }
    return emb_fleet_db_commit(db);
}

static void tally(const struct emb_fleet_row *rows, size_t n, struct emb_fleet_ingest_result *res)
{
    res->rows = n;
    for (size_t i = 0; i < n; i++)
        if (rows[i].refused && res->refused++ == 0)
            snprintf(res->reason, sizeof res->reason, "%s", rows[i].reason);
    for (size_t i = 0; i < n && !res->bucket[0]; i++)
        if (!rows[i].refused && rows[i].fault_class)
            snprintf(res->bucket, sizeof res->bucket, "%s", rows[i].bucket);
}

int emb_fleet_ingest(struct emb_fleet_db *db, struct emb_fleet_symbols *syms,
                     const struct emb_fleet_source *src, const uint8_t *bytes, size_t n,
                     struct emb_fleet_ingest_result *res)
{
    memset(res, 0, sizeof *res);
    struct emb_fleet_row *rows = malloc(MAX_ROWS * sizeof *rows);
    if (!rows) {
        snprintf(db->err, sizeof db->err, "out of memory");
        return -1;
    }
    struct emb_fleet_analysis a = {.name = src->name, .find_elf = syms ? emb_fleet_symbols_find : NULL,
                                   .arg = syms};
    size_t k = emb_fleet_analyse(bytes, n, &a, rows, MAX_ROWS);
    uint8_t *payload = NULL;
    size_t payload_len = 0;
    /* Not a record as it stands: a record framed as the link sends it is one. */
    if (k == 1 && rows[0].refused && strcmp(rows[0].kind, "crash") == 0 &&
        (payload = emb_fleet_unframe_crash(bytes, n, &payload_len)) != NULL)
        k = emb_fleet_analyse(payload, payload_len, &a, rows, MAX_ROWS);
    tally(rows, k, res);
    int rc = store_rows(db, src, rows, k, res);
    free(payload);
    free(rows);
    return rc;
}
