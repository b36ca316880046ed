/* The fleet at scale (bench/fleet.sh): N crash records encoded by the target library's own
 * encoders (v1 and v2 alternating) for one firmware image, varied in fault class, faulting
 * function (the image's own function addresses, read from a file), firmware version,
 * device and uptime, each ingested as `emb fleet ingest` does (symbolised with the image
 * from the symbol store, 500 records a transaction); then the bucket query, timed.
 *
 *   fleet_bench DB_URL N FW.elf PCS_FILE   prints "ingest SECONDS RECORDS/S CPU_US" (wall
 *                                          time, and this process's CPU time a record: the
 *                                          figure a loaded machine disturbs least) and
 *                                          "buckets MEDIAN_MS BUCKETS" (of 5 queries)
 */
#define _POSIX_C_SOURCE 200809L
#include <emb/crash.h>

#include "elf_image.h"
#include "fleet.h"
#include "fleet_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PCS 256u

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t read_pcs(const char *path, uint32_t *pcs)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    unsigned long v;
    while (f && n < MAX_PCS && fscanf(f, "%lx", &v) == 1)
        pcs[n++] = (uint32_t)v + 2u; /* inside the function, past its first instruction */
    if (f)
        fclose(f);
    return n;
}

static const char *const VERSIONS[] = {"2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.2.0"};
static const uint8_t CLASSES[] = {EMB_FAULT_MEMORY, EMB_FAULT_BUS, EMB_FAULT_ARITH, EMB_FAULT_ILLEGAL};

/* Record i: its own uptime (so its own bytes), a device of 1000, a function of the image. */
static size_t make_record(uint8_t *out, size_t cap, uint64_t i, const uint8_t *id, size_t idlen,
                          const uint32_t *pcs, size_t npcs)
{
    struct emb_crash_info info = {
        .build_id = id, .build_id_len = (uint8_t)idlen, .fw_version = VERSIONS[i % 5],
        .uptime_ticks = 1000u * i + 17u, .reset_reason = EMB_RESET_FAULT,
        .fault_class = CLASSES[(i / 7) % 4], .fault_code = 1, .thread_index = (uint16_t)(i % 8),
        .fault_address = 0x20000000u + (uint32_t)(i % 4096), .pc = pcs[(i * 7919u) % npcs],
        .lr = pcs[(i * 104729u) % npcs], .sp = 0x20001000u, .stack_base = 0x20000000u,
        .stack_size = 0x1000u,
    };
    return i % 2 ? emb_crash_encode_v2(out, cap, &info) : emb_crash_encode_v1(out, cap, &info);
}

static int ingest_all(struct emb_fleet_db *db, uint64_t n, const uint8_t *id, size_t idlen,
                      const uint32_t *pcs, size_t npcs)
{
    struct emb_fleet_symbols *syms = emb_fleet_symbols_new(db);
    uint8_t rec[512];
    char device[32];
    int rc = 0;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        if (i % 500u == 0)
            rc = i > 0 && emb_fleet_db_commit(db) != 0 ? -1 : emb_fleet_db_begin(db);
        size_t len = make_record(rec, sizeof rec, i, id, idlen, pcs, npcs);
        snprintf(device, sizeof device, "dev-%04u", (unsigned)(i % 1000u));
        struct emb_fleet_source src = {.name = "bench", .device = device, .uploaded = 1800000000 + (int64_t)i};
        struct emb_fleet_ingest_result res;
        if (rc != 0 || len == 0 || emb_fleet_ingest(db, syms, &src, rec, len, &res) != 0 || res.refused) {
            fprintf(stderr, "fleet_bench: record %llu: %s\n", (unsigned long long)i, len ? db->err : "encoder");
            rc = -1;
        }
    }
    if (rc == 0)
        rc = emb_fleet_db_commit(db);
    emb_fleet_symbols_free(syms);
    return rc;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: fleet_bench DB_URL N FW.elf PCS_FILE\n");
        return 2;
    }
    char err[600];
    uint64_t n = strtoull(argv[2], NULL, 10);
    uint32_t pcs[MAX_PCS];
    size_t npcs = read_pcs(argv[4], pcs);
    struct emb_elf *elf = emb_elf_open(argv[3], err, sizeof err);
    const uint8_t *id = NULL;
    size_t idlen = elf ? emb_elf_build_id(elf, &id) : 0;
    struct emb_fleet_db *db = emb_fleet_db_open(argv[1], err, sizeof err);
    struct emb_fleet_symbols_result added;
    if (!elf || idlen == 0 || npcs == 0 || !db || emb_fleet_symbols_add(db, argv[3], &added, err, sizeof err) != 0) {
        fprintf(stderr, "fleet_bench: %s\n", npcs ? err : "no function addresses");
        return 2;
    }
    double t0 = now();
    clock_t c0 = clock();
    if (ingest_all(db, n, id, idlen > 20 ? 20 : idlen, pcs, npcs) != 0)
        return 1;
    double t = now() - t0, cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    printf("ingest %.2f %.0f %.0f\n", t, (double)n / t, cpu * 1e6 / (double)n);
    double ms[5];
    size_t nb = 0;
    for (int k = 0; k < 5; k++) {
        struct emb_fleet_buckets b;
        double q0 = now();
        if (emb_fleet_buckets_query(db, &b) != 0)
            return 1;
        ms[k] = (now() - q0) * 1000.0;
        nb = b.n;
        emb_fleet_buckets_free(&b);
    }
    qsort(ms, 5, sizeof ms[0], by_value);
    printf("buckets %.1f %zu\n", ms[2], nb);
    emb_fleet_db_close(db);
    emb_elf_close(elf);
    return 0;
}
