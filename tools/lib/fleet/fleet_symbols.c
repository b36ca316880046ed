/* The symbol store: each firmware's ELF kept in the database under its build id, so any
 * machine that reads the fleet can symbolise its records; a record that arrived before
 * its ELF is symbolised (chain, signature, bucket) when the ELF is added. */
#define _POSIX_C_SOURCE 200809L
#include "fleet.h"

#include "elf_image.h"
#include "input_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CACHED 32u

struct cached_elf {
    char key[17];
    char path[64];
    struct emb_elf *elf;
};

struct emb_fleet_symbols {
    struct emb_fleet_db *db;
    struct cached_elf cache[CACHED];
    size_t n;
};

struct emb_fleet_symbols *emb_fleet_symbols_new(struct emb_fleet_db *db)
{
    struct emb_fleet_symbols *s = calloc(1, sizeof *s);
    if (s)
        s->db = db;
    return s;
}

void emb_fleet_symbols_free(struct emb_fleet_symbols *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        emb_elf_close(s->cache[i].elf);
        unlink(s->cache[i].path);
    }
    free(s);
}

/* Writes the ELF's bytes to a temporary file (the ELF reader reads files). */
static int write_temp(const char *bytes, size_t n, char path[64])
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, 64, "%.40s/emb-fleet-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, bytes + done, n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    close(fd);
    if (done != n) {
        unlink(path);
        return -1;
    }
    return 0;
}

static int fetch_elf(void *arg, size_t ncols, const char *const *cols, const size_t *lens)
{
    struct cached_elf *c = arg;
    char err[256];
    if (ncols == 1 && cols[0] && write_temp(cols[0], lens[0], c->path) == 0 &&
        !(c->elf = emb_elf_open(c->path, err, sizeof err)))
        unlink(c->path);
    return 1;
}

struct emb_elf *emb_fleet_symbols_find(void *symbols, const char *build_key)
{
    struct emb_fleet_symbols *s = symbols;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->cache[i].key, build_key) == 0)
            return s->cache[i].elf;
    if (s->n == CACHED)
        return NULL; /* a fleet of more builds than that in one run is symbolised later */
    struct cached_elf c = {0};
    snprintf(c.key, sizeof c.key, "%s", build_key);
    struct emb_fleet_value p[] = {EMB_FLEET_TEXT(build_key)};
    emb_fleet_db_exec(s->db, "SELECT elf FROM symbols WHERE build_key = $1 ORDER BY added LIMIT 1",
                      1, p, fetch_elf, &c);
    if (!c.elf)
        return NULL; /* not cached: the ELF may be added while a server runs */
    s->cache[s->n++] = c;
    return c.elf;
}

/* A stored row waiting for its ELF. */
struct waiting {
    char hash[EMB_FLEET_HASH_HEX];
    uint8_t *raw;
    size_t len;
};

struct waiting_list {
    struct waiting *items;
    size_t n, cap;
};

static int collect_waiting(void *arg, size_t ncols, const char *const *cols, const size_t *lens)
{
    struct waiting_list *l = arg;
    if (ncols != 2 || !cols[0] || !cols[1])
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct waiting *items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return 1;
        l->items = items;
        l->cap = cap;
    }
    struct waiting *w = &l->items[l->n];
    snprintf(w->hash, sizeof w->hash, "%s", cols[0]);
    if (!(w->raw = malloc(lens[1] ? lens[1] : 1)))
        return 1;
    memcpy(w->raw, cols[1], lens[1]);
    w->len = lens[1];
    l->n++;
    return 0;
}

static struct emb_elf *only_elf(void *arg, const char *build_key)
{
    (void)build_key;
    return arg;
}

static long update_row(struct emb_fleet_db *db, const char *hash, const struct emb_fleet_row *r)
{
    struct emb_fleet_value p[] = {
        EMB_FLEET_TEXT(hash), EMB_FLEET_TEXT(r->chain[0] ? r->chain : NULL),
        EMB_FLEET_TEXT(r->flight[0] ? r->flight : NULL), EMB_FLEET_TEXT(r->signature),
        EMB_FLEET_TEXT(r->bucket), EMB_FLEET_TEXT(r->thread[0] ? r->thread : NULL),
    };
    return emb_fleet_db_exec(db,
                             "UPDATE records SET chain = $2, flight = $3, signature = $4, bucket = $5,"
                             " thread = $6, symbolised = 1 WHERE hash = $1",
                             6, p, NULL, NULL);
}

/* Analyses each waiting row again with the build's ELF; stores those it symbolised. */
static int symbolise_waiting(struct emb_fleet_db *db, struct emb_elf *elf, const char *key,
                             struct waiting_list *l, size_t *done)
{
    struct emb_fleet_row *row = malloc(sizeof *row);
    struct emb_fleet_analysis a = {.name = "stored record", .find_elf = only_elf, .arg = elf,
                                   .mini_build_key = key};
    int rc = row ? emb_fleet_db_begin(db) : -1;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        if (emb_fleet_analyse(l->items[i].raw, l->items[i].len, &a, row, 1) == 1 && !row->refused &&
            row->symbolised) {
            if (update_row(db, l->items[i].hash, row) < 0)
                rc = -1;
            else
                (*done)++;
        }
    }
    if (rc == 0)
        rc = emb_fleet_db_commit(db);
    else if (row)
        emb_fleet_db_rollback(db);
    free(row);
    return rc;
}

static int resymbolise(struct emb_fleet_db *db, struct emb_elf *elf, const char *key, size_t *done)
{
    struct waiting_list l = {0};
    struct emb_fleet_value p[] = {EMB_FLEET_TEXT(key)};
    int rc = emb_fleet_db_exec(db,
                               "SELECT hash, raw FROM records WHERE build_key = $1 AND symbolised = 0"
                               " AND status = 'ok' AND fault_class IS NOT NULL",
                               1, p, collect_waiting, &l) < 0 ? -1 : 0;
    if (rc == 0)
        rc = symbolise_waiting(db, elf, key, &l, done);
    for (size_t i = 0; i < l.n; i++)
        free(l.items[i].raw);
    free(l.items);
    return rc;
}

static int store_elf(struct emb_fleet_db *db, const char *path, const char *id, const char *key,
                     bool *added, char *err, size_t errlen)
{
    size_t n;
    uint8_t *bytes = emb_input_read(path, &n, err, errlen);
    if (!bytes)
        return -1;
    const char *slash = strrchr(path, '/');
    char added_at[24];
    snprintf(added_at, sizeof added_at, "%lld", (long long)time(NULL));
    struct emb_fleet_value p[] = {EMB_FLEET_TEXT(id), EMB_FLEET_TEXT(key),
                                  EMB_FLEET_TEXT(slash ? slash + 1 : path), EMB_FLEET_TEXT(added_at),
                                  EMB_FLEET_BLOB(bytes, n)};
    long changed = emb_fleet_db_exec(db,
                                     "INSERT INTO symbols (build_id, build_key, name, added, elf)"
                                     " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (build_id) DO NOTHING",
                                     5, p, NULL, NULL);
    free(bytes);
    if (changed < 0) {
        snprintf(err, errlen, "%s", db->err);
        return -1;
    }
    *added = changed > 0;
    return 0;
}

int emb_fleet_symbols_add(struct emb_fleet_db *db, const char *path,
                          struct emb_fleet_symbols_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    struct emb_elf *elf = emb_elf_open(path, err, errlen);
    if (!elf)
        return -1;
    const uint8_t *id;
    size_t idlen = emb_elf_build_id(elf, &id);
    int rc = -1;
    char key[17];
    if (idlen < 8) {
        snprintf(err, errlen, "%s: no build id (link with --build-id): its records could not be told apart", path);
    } else {
        for (size_t i = 0; i < idlen && i < 20; i++)
            snprintf(res->build_id + 2 * i, 3, "%02x", id[i]);
        snprintf(key, sizeof key, "%.16s", res->build_id);
        rc = store_elf(db, path, res->build_id, key, &res->added, err, errlen);
    }
    if (rc == 0 && (rc = resymbolise(db, elf, key, &res->symbolised)) != 0)
        snprintf(err, errlen, "%s", db->err);
    emb_elf_close(elf);
    return rc;
}
