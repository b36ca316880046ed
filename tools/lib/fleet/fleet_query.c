/* The fleet's queries. Two grouped scans of the bucket index (records_by_bucket) give the
 * buckets and their counts per version; a bucket's newest example is one lookup in
 * records_newest. Ties are broken by id and hash so every engine answers alike. */
#include "fleet_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char BUCKETS_SQL[] =
    "SELECT bucket, MIN(signature), COUNT(*), COUNT(DISTINCT device), MIN(uploaded),"
    " MAX(uploaded) FROM records WHERE status = 'ok' AND bucket IS NOT NULL GROUP BY bucket"
    " ORDER BY COUNT(*) DESC, bucket";
static const char VERSIONS_SQL[] =
    "SELECT bucket, COALESCE(fw_version, ''), COUNT(*) FROM records WHERE status = 'ok'"
    " AND bucket IS NOT NULL GROUP BY bucket, fw_version ORDER BY bucket, 2";
static const char COUNTS_SQL[] =
    "SELECT status, COUNT(*) FROM records WHERE status = 'refused' OR bucket IS NOT NULL"
    " GROUP BY status";

static const char *str(const char *s)
{
    return s ? s : "";
}

static int add_bucket(void *arg, size_t n, const char *const *c, const size_t *lens)
{
    struct emb_fleet_buckets *b = arg;
    (void)lens;
    if (n != 6)
        return 1;
    struct emb_fleet_bucket *items = realloc(b->items, (b->n + 1) * sizeof *items);
    if (!items)
        return 1;
    b->items = items;
    struct emb_fleet_bucket *k = &items[b->n++];
    memset(k, 0, sizeof *k);
    snprintf(k->id, sizeof k->id, "%s", str(c[0]));
    snprintf(k->signature, sizeof k->signature, "%s", str(c[1]));
    k->count = strtoull(str(c[2]), NULL, 10);
    k->devices = strtoull(str(c[3]), NULL, 10);
    k->first_seen = strtoll(str(c[4]), NULL, 10);
    k->last_seen = strtoll(str(c[5]), NULL, 10);
    return 0;
}

static struct emb_fleet_bucket *find(struct emb_fleet_buckets *b, const char *id)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->items[i].id, id) == 0)
            return &b->items[i];
    return NULL;
}

static int add_version(void *arg, size_t n, const char *const *c, const size_t *lens)
{
    (void)lens;
    struct emb_fleet_bucket *k = n == 3 ? find(arg, str(c[0])) : NULL;
    if (!k)
        return 0;
    uint64_t count = strtoull(str(c[2]), NULL, 10);
    if (k->nversions < EMB_FLEET_VERSIONS) {
        struct emb_fleet_version_count *v = &k->versions[k->nversions++];
        snprintf(v->version, sizeof v->version, "%s", str(c[1])[0] ? c[1] : "(none)");
        v->count = count;
    } else {
        struct emb_fleet_version_count *v = &k->versions[EMB_FLEET_VERSIONS];
        snprintf(v->version, sizeof v->version, "other");
        v->count += count;
        k->nversions = EMB_FLEET_VERSIONS + 1;
    }
    return 0;
}

static int add_counts(void *arg, size_t n, const char *const *c, const size_t *lens)
{
    struct emb_fleet_buckets *b = arg;
    (void)lens;
    if (n == 2 && c[0])
        *(strcmp(c[0], "refused") == 0 ? &b->refused : &b->records) = strtoull(str(c[1]), NULL, 10);
    return 0;
}

int emb_fleet_buckets_query(struct emb_fleet_db *db, struct emb_fleet_buckets *out)
{
    memset(out, 0, sizeof *out);
    if (emb_fleet_db_exec(db, BUCKETS_SQL, 0, NULL, add_bucket, out) < 0 ||
        emb_fleet_db_exec(db, VERSIONS_SQL, 0, NULL, add_version, out) < 0 ||
        emb_fleet_db_exec(db, COUNTS_SQL, 0, NULL, add_counts, out) < 0) {
        emb_fleet_buckets_free(out);
        return -1;
    }
    return 0;
}

void emb_fleet_buckets_free(struct emb_fleet_buckets *b)
{
    free(b->items);
    memset(b, 0, sizeof *b);
}

#define EXAMPLE_COLUMNS                                                                   \
    "hash, kind, source, device, fw_version, build_id, uploaded, reset_reason,"          \
    " fault_class, fault_code, fault_address, pc, thread, chain, flight, signature,"     \
    " reason, symbolised"

static int read_example(void *arg, size_t n, const char *const *c, const size_t *lens)
{
    struct emb_fleet_example *e = arg;
    (void)lens;
    if (n != 18)
        return 1;
    memset(e, 0, sizeof *e);
    snprintf(e->hash, sizeof e->hash, "%s", str(c[0]));
    snprintf(e->kind, sizeof e->kind, "%s", str(c[1]));
    snprintf(e->source, sizeof e->source, "%s", str(c[2]));
    snprintf(e->device, sizeof e->device, "%s", str(c[3]));
    snprintf(e->fw_version, sizeof e->fw_version, "%s", str(c[4]));
    snprintf(e->build_id, sizeof e->build_id, "%s", str(c[5]));
    e->uploaded = strtoll(str(c[6]), NULL, 10);
    snprintf(e->reset_reason, sizeof e->reset_reason, "%s", str(c[7]));
    snprintf(e->fault_class, sizeof e->fault_class, "%s", str(c[8]));
    e->fault_code = (unsigned)strtoul(str(c[9]), NULL, 10);
    e->fault_address = (uint64_t)strtoll(str(c[10]), NULL, 10);
    e->pc = (uint64_t)strtoll(str(c[11]), NULL, 10);
    snprintf(e->thread, sizeof e->thread, "%s", str(c[12]));
    snprintf(e->chain, sizeof e->chain, "%s", str(c[13]));
    snprintf(e->flight, sizeof e->flight, "%s", str(c[14]));
    snprintf(e->signature, sizeof e->signature, "%s", str(c[15]));
    snprintf(e->reason, sizeof e->reason, "%s", str(c[16]));
    e->symbolised = atoi(str(c[17])) != 0;
    return 1;
}

struct bucket_ids {
    char first[EMB_FLEET_BUCKET_HEX];
    size_t n;
};

static int count_ids(void *arg, size_t n, const char *const *c, const size_t *lens)
{
    struct bucket_ids *ids = arg;
    (void)lens;
    if (n == 1 && c[0] && ids->n++ == 0)
        snprintf(ids->first, sizeof ids->first, "%s", c[0]);
    return ids->n > 1;
}

int emb_fleet_bucket_example(struct emb_fleet_db *db, const char *id, struct emb_fleet_example *out)
{
    char pattern[EMB_FLEET_BUCKET_HEX + 1];
    struct bucket_ids ids = {0};
    if (strlen(id) >= EMB_FLEET_BUCKET_HEX || strspn(id, "0123456789abcdef") != strlen(id) || !id[0])
        return 0;
    snprintf(pattern, sizeof pattern, "%s%%", id);
    struct emb_fleet_value p[] = {EMB_FLEET_TEXT(pattern)};
    if (emb_fleet_db_exec(db, "SELECT DISTINCT bucket FROM records WHERE bucket LIKE $1 LIMIT 2", 1, p,
                          count_ids, &ids) < 0)
        return -1;
    if (ids.n != 1)
        return 0;
    struct emb_fleet_value q[] = {EMB_FLEET_TEXT(ids.first)};
    memset(out, 0, sizeof *out);
    if (emb_fleet_db_exec(db, "SELECT " EXAMPLE_COLUMNS " FROM records WHERE bucket = $1 AND status = 'ok'"
                          " ORDER BY uploaded DESC, hash DESC LIMIT 1", 1, q, read_example, out) < 0)
        return -1;
    return out->hash[0] ? 1 : 0;
}

struct example_list {
    struct emb_fleet_example *items;
    size_t n, max;
};

static int add_example(void *arg, size_t n, const char *const *c, const size_t *lens)
{
    struct example_list *l = arg;
    if (l->n == l->max)
        return 1;
    read_example(&l->items[l->n++], n, c, lens);
    return 0;
}

long emb_fleet_refused_query(struct emb_fleet_db *db, struct emb_fleet_example *out, size_t max)
{
    struct example_list l = {out, 0, max};
    if (emb_fleet_db_exec(db, "SELECT " EXAMPLE_COLUMNS " FROM records WHERE status = 'refused'"
                          " ORDER BY uploaded DESC, hash DESC", 0, NULL, add_example, &l) < 0)
        return -1;
    return (long)l.n;
}
