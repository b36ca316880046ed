/* What the fleet's database answers: its buckets ranked by count (with first and last
 * seen, devices affected, count per firmware version), a bucket's newest example, and the
 * refused files. Read by `emb fleet buckets`, `show` and the HTML report alike. */
#ifndef EMB_FLEET_QUERY_H
#define EMB_FLEET_QUERY_H

#include "fleet.h"

#define EMB_FLEET_VERSIONS 16u /* versions kept per bucket; the rest counted as "other" */

struct emb_fleet_version_count {
    char version[32];
    uint64_t count;
};

struct emb_fleet_bucket {
    char id[EMB_FLEET_BUCKET_HEX];
    char signature[512];
    uint64_t count;
    uint64_t devices;
    int64_t first_seen, last_seen;
    struct emb_fleet_version_count versions[EMB_FLEET_VERSIONS + 1];
    size_t nversions;      /* the last one "other" when there were more */
};

struct emb_fleet_buckets {
    struct emb_fleet_bucket *items; /* most records first; ties by id */
    size_t n;
    uint64_t records;      /* accepted rows with a fault */
    uint64_t refused;      /* refused rows */
};

/* Every bucket. Returns 0, or -1 (db->err). Free with emb_fleet_buckets_free. */
int emb_fleet_buckets_query(struct emb_fleet_db *db, struct emb_fleet_buckets *out);
void emb_fleet_buckets_free(struct emb_fleet_buckets *b);

/* One stored row, as `show` and the report display it. */
struct emb_fleet_example {
    char hash[EMB_FLEET_HASH_HEX];
    char kind[32], source[256], device[128], fw_version[32], build_id[41];
    int64_t uploaded;
    char reset_reason[32], fault_class[32];
    unsigned fault_code;
    uint64_t fault_address, pc;
    char thread[64];
    char chain[2048];
    char flight[512];
    char signature[512];
    char reason[512];      /* a refused row's */
    bool symbolised;
};

/* The newest record of bucket `id` (a prefix of its id is enough when only one bucket
 * has it). Returns 1 when found, 0 when no bucket has that id, -1 on a database error. */
int emb_fleet_bucket_example(struct emb_fleet_db *db, const char *id, struct emb_fleet_example *out);

/* The refused rows, newest first, at most max. Returns how many, or -1. */
long emb_fleet_refused_query(struct emb_fleet_db *db, struct emb_fleet_example *out, size_t max);

#endif /* EMB_FLEET_QUERY_H */
