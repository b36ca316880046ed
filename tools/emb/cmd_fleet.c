/* `emb fleet`: many devices' crash records in one database. `ingest` stores files (each
 * validated as `emb crash` and `emb inspect` would; a refused one stored with its reason),
 * `symbols add` keeps a firmware's ELF for its build, `buckets` and `show` read the
 * buckets, `report` writes the HTML report and `serve` receives uploads over HTTP
 * (cmd_fleet_serve.c). docs/fleet.md. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include "cmd_fleet.h"
#include "fleet_query.h"
#include "fleet_report.h"
#include "input_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

static const char *const CMD = "emb fleet";

#define MAX_INPUT (16u << 20) /* a record, a retained region or a capture */

enum { OPT_DB = 256, OPT_DEVICE, OPT_TIME, OPT_LISTEN, OPT_TOKENS, OPT_MAX_BYTES, OPT_RATE, OPT_QUIET };
static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_STRING("db", OPT_DB, struct emb_fleet_args, db),
    EMB_CLI_STRING("device", OPT_DEVICE, struct emb_fleet_args, device),
    EMB_CLI_CALL("time", required_argument, OPT_TIME),
    EMB_CLI_OPTION_JSON(struct emb_fleet_args),
    EMB_CLI_OPTION_OUTPUT(struct emb_fleet_args),
    EMB_CLI_STRING("listen", OPT_LISTEN, struct emb_fleet_args, listen),
    EMB_CLI_STRING("tokens", OPT_TOKENS, struct emb_fleet_args, tokens),
    EMB_CLI_CALL("max-bytes", required_argument, OPT_MAX_BYTES),
    EMB_CLI_CALL("rate", required_argument, OPT_RATE),
    EMB_CLI_FLAG("quiet", OPT_QUIET, struct emb_fleet_args, quiet),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_fleet, .shortopts = ":o:h", .options = OPTIONS};

static int on_option(void *arg, int opt, char *value)
{
    struct emb_fleet_args *a = arg;
    uint64_t v;
    int rc = 0;
    switch (opt) {
    case OPT_TIME:
        rc = emb_cli_option_u64(CMD, "time", value, 0, INT64_MAX, "seconds since the epoch", &v);
        a->time = (int64_t)v;
        return rc;
    case OPT_MAX_BYTES: return emb_cli_option_u64(CMD, "max-bytes", value, 1, MAX_INPUT, "a size in bytes", &a->max_bytes);
    case OPT_RATE: return emb_cli_option_u64(CMD, "rate", value, 1, 1000000, "uploads a minute", &a->rate);
    default: return 0;
    }
}

static struct emb_fleet_db *open_db(const struct emb_fleet_args *a)
{
    char err[600];
    struct emb_fleet_db *db = emb_fleet_db_open(a->db, err, sizeof err);
    if (!db)
        emb_cli_error(CMD, "%s", err);
    return db;
}

/* Files ingested a transaction: one commit (one wait for the disk) per batch, not per
 * file. A database error rolls the batch back and stops. */
#define BATCH 500u

/* Commits the batch when it is full, or (end) whatever it holds; begins the next. */
static int batch_step(struct emb_fleet_db *db, bool end)
{
    static unsigned held;
    if (!end && ++held < BATCH)
        return 0;
    held = 0;
    if (emb_fleet_db_commit(db) != 0 || (!end && emb_fleet_db_begin(db) != 0)) {
        emb_cli_error(CMD, "%s (the last %u files' rows are not stored)", db->err, BATCH);
        return -1;
    }
    return 0;
}

static int ingest_file(struct emb_fleet_db *db, struct emb_fleet_symbols *syms,
                       const struct emb_fleet_args *a, const char *path)
{
    char msg[512];
    size_t size;
    uint8_t *bytes = emb_input_read_max(path, MAX_INPUT, &size, msg, sizeof msg);
    if (!bytes) {
        emb_cli_error_at(CMD, path, -1, "%s", msg);
        return EMB_EXIT_BAD;
    }
    struct emb_fleet_source src = {.name = path, .device = a->device,
                                   .uploaded = a->time ? a->time : (int64_t)time(NULL)};
    struct emb_fleet_ingest_result res;
    int rc = emb_fleet_ingest(db, syms, &src, bytes, size, &res);
    free(bytes);
    if (rc != 0) {
        emb_cli_error(CMD, "%s: %s", path, db->err);
        return -1; /* the database failed: stop */
    }
    if (batch_step(db, false) != 0)
        return -1;
    if (res.refused)
        fprintf(stderr, "%s: %s: %s (stored as refused)\n", CMD, path, res.reason);
    if (!a->quiet)
        printf("%s: %zu row%s, %zu new%s%s\n", path, res.rows, res.rows == 1 ? "" : "s", res.inserted,
               res.bucket[0] ? ", bucket " : "", res.bucket);
    return res.refused ? EMB_EXIT_BAD : EMB_EXIT_OK;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* A directory's files, in name order, each ingested. */
static int ingest_dir(struct emb_fleet_db *db, struct emb_fleet_symbols *syms,
                      const struct emb_fleet_args *a, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        emb_cli_error_at(CMD, dir, -1, "%s", strerror(errno));
        return EMB_EXIT_BAD;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char **grown = e->d_name[0] == '.' ? names : realloc(names, (n + 1) * sizeof *names);
        if (e->d_name[0] == '.' || !grown)
            continue;
        names = grown;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if ((names[n] = malloc(len)) != NULL)
            snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int worst = EMB_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        int rc = worst < 0 ? -1 : ingest_file(db, syms, a, names[i]);
        worst = rc < 0 ? -1 : (rc > worst ? rc : worst);
        free(names[i]);
    }
    free(names);
    return worst;
}

static int cmd_ingest(const struct emb_fleet_args *a, int argc, char **argv)
{
    if (optind >= argc) {
        emb_cli_error(CMD, "no file given: emb fleet ingest [--db URL] FILE...");
        return EMB_EXIT_BAD;
    }
    struct emb_fleet_db *db = open_db(a);
    if (!db)
        return EMB_EXIT_BAD;
    struct emb_fleet_symbols *syms = emb_fleet_symbols_new(db);
    int worst = emb_fleet_db_begin(db) == 0 ? EMB_EXIT_OK : -1;
    for (int i = optind; i < argc && worst >= 0; i++) {
        struct stat st;
        bool dir = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode);
        int rc = dir ? ingest_dir(db, syms, a, argv[i]) : ingest_file(db, syms, a, argv[i]);
        worst = rc < 0 ? -1 : (rc > worst ? rc : worst);
    }
    if (worst >= 0 && batch_step(db, true) != 0)
        worst = -1;
    else if (worst < 0)
        emb_fleet_db_rollback(db);
    emb_fleet_symbols_free(syms);
    emb_fleet_db_close(db);
    return worst < 0 ? EMB_EXIT_BAD : worst;
}

static int cmd_symbols(const struct emb_fleet_args *a, int argc, char **argv)
{
    if (optind + 2 > argc || strcmp(argv[optind], "add") != 0) {
        emb_cli_error(CMD, "usage: emb fleet symbols add [--db URL] FW.elf...");
        return EMB_EXIT_BAD;
    }
    struct emb_fleet_db *db = open_db(a);
    if (!db)
        return EMB_EXIT_BAD;
    int rc = EMB_EXIT_OK;
    for (int i = optind + 1; i < argc; i++) {
        struct emb_fleet_symbols_result res;
        char err[600];
        if (emb_fleet_symbols_add(db, argv[i], &res, err, sizeof err) != 0) {
            emb_cli_error(CMD, "%s", err);
            rc = EMB_EXIT_BAD;
            continue;
        }
        if (!a->quiet)
            printf("%s: build %s %s, %zu record%s symbolised\n", argv[i], res.build_id,
                   res.added ? "added" : "stored already", res.symbolised, res.symbolised == 1 ? "" : "s");
    }
    emb_fleet_db_close(db);
    return rc;
}

static const char *utc(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(buf, len, "%" PRId64, t);
    return buf;
}

/* Target-derived text (signatures, chains, device ids) made safe for a terminal. */
static const char *esc(const char *text)
{
    static char buf[2][4 * 2048];
    static unsigned next;
    return emb_text_escape_str(buf[next++ % 2u], sizeof buf[0], text);
}

/* A bucket's and a stored row's fields, under their own names. */
#define BUCKET(member, kind) EMB_JSON_FIELD(struct emb_fleet_bucket, member, #member, kind)
static const struct emb_json_field BUCKET_FIELDS[] = {
    BUCKET(id, TEXT),      BUCKET(signature, TEXT), BUCKET(count, UINT),
    BUCKET(devices, UINT), BUCKET(first_seen, INT), BUCKET(last_seen, INT),
};
#undef BUCKET
#define EXAMPLE(member, kind) EMB_JSON_FIELD(struct emb_fleet_example, member, #member, kind)
static const struct emb_json_field EXAMPLE_FIELDS[] = {
    EXAMPLE(hash, TEXT),       EXAMPLE(kind, TEXT),         EXAMPLE(source, TEXT),
    EXAMPLE(device, TEXT),     EXAMPLE(fw_version, TEXT),   EXAMPLE(build_id, TEXT),
    EXAMPLE(uploaded, INT),    EXAMPLE(reset_reason, TEXT), EXAMPLE(fault_class, TEXT),
    EXAMPLE(fault_code, UINT), EXAMPLE(fault_address, HEX), EXAMPLE(pc, HEX),
    EXAMPLE(thread, TEXT),     EXAMPLE(symbolised, BOOL),
};
#undef EXAMPLE

static void json_bucket(struct emb_json *j, const struct emb_fleet_bucket *b)
{
    EMB_JSON_FIELDS(j, b, BUCKET_FIELDS);
    emb_json_begin_object(j, "versions");
    for (size_t v = 0; v < b->nversions; v++)
        emb_json_uint(j, b->versions[v].version, b->versions[v].count);
    emb_json_end_object(j);
}

static void print_buckets_json(const struct emb_fleet_buckets *b)
{
    struct emb_json j;
    emb_json_begin_document(&j, stdout);
    j.flat_depth = 3;
    emb_json_uint(&j, "records", b->records);
    emb_json_uint(&j, "refused", b->refused);
    emb_json_begin_array(&j, "buckets");
    for (size_t i = 0; i < b->n; i++) {
        emb_json_begin_object(&j, NULL);
        json_bucket(&j, &b->items[i]);
        emb_json_end_object(&j);
    }
    emb_json_end_array(&j);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

static void print_versions(const struct emb_fleet_bucket *b)
{
    for (size_t v = 0; v < b->nversions; v++)
        printf("%s%s %" PRIu64, v ? ", " : "", esc(b->versions[v].version), b->versions[v].count);
    printf("\n");
}

static void print_buckets_text(const struct emb_fleet_buckets *b)
{
    char t1[64], t2[64];
    printf("%" PRIu64 " records in %zu buckets, %" PRIu64 " refused\n", b->records, b->n, b->refused);
    for (size_t i = 0; i < b->n; i++) {
        const struct emb_fleet_bucket *k = &b->items[i];
        printf("%s %6" PRIu64 " records %4" PRIu64 " devices  %s\n", k->id, k->count, k->devices,
               esc(k->signature));
        printf("             first %s, last %s; versions ", utc(k->first_seen, t1, sizeof t1),
               utc(k->last_seen, t2, sizeof t2));
        print_versions(k);
    }
}

static int cmd_buckets(const struct emb_fleet_args *a)
{
    struct emb_fleet_db *db = open_db(a);
    if (!db)
        return EMB_EXIT_BAD;
    struct emb_fleet_buckets b;
    int rc = emb_fleet_buckets_query(db, &b);
    if (rc != 0)
        emb_cli_error(CMD, "%s", db->err);
    else if (a->json)
        print_buckets_json(&b);
    else
        print_buckets_text(&b);
    emb_fleet_buckets_free(&b);
    emb_fleet_db_close(db);
    return rc == 0 ? EMB_EXIT_OK : EMB_EXIT_BAD;
}

static void json_example(struct emb_json *j, const struct emb_fleet_example *e)
{
    emb_json_begin_object(j, "example");
    EMB_JSON_FIELDS(j, e, EXAMPLE_FIELDS);
    emb_json_begin_array(j, "chain");
    for (const char *line = e->chain; *line;) {
        size_t n = strcspn(line, "\n");
        emb_json_string_n(j, NULL, line, n);
        line += n + (line[n] == '\n');
    }
    emb_json_end_array(j);
    emb_json_string(j, "flight", e->flight);
    emb_json_end_object(j);
}

static void print_show_text(const struct emb_fleet_bucket *b, const struct emb_fleet_example *e)
{
    char t1[64], t2[64];
    printf("bucket    %s  %s\n", b->id, esc(b->signature));
    printf("count     %" PRIu64 " on %" PRIu64 " devices, first seen %s, last seen %s\n", b->count,
           b->devices, utc(b->first_seen, t1, sizeof t1), utc(b->last_seen, t2, sizeof t2));
    printf("versions  ");
    print_versions(b);
    printf("example   %s (%s) from device %s, uploaded %s\n", e->hash, e->kind, esc(e->device),
           utc(e->uploaded, t1, sizeof t1));
    printf("firmware  %s, build %s\n", esc(e->fw_version[0] ? e->fw_version : "?"),
           e->build_id[0] ? e->build_id : "?");
    printf("fault     %s, code %u, at address 0x%" PRIx64 "; reset %s\n", e->fault_class, e->fault_code,
           e->fault_address, e->reset_reason);
    printf("pc        0x%" PRIx64 " in thread %s\n", e->pc, esc(e->thread));
    printf("chain     %s\n", e->symbolised ? "" : "not symbolised: the store has no ELF of this build");
    for (const char *line = e->chain; *line;) {
        size_t n = strcspn(line, "\n");
        char one[512];
        snprintf(one, sizeof one, "%.*s", (int)n, line);
        printf("  %s\n", esc(one));
        line += n + (line[n] == '\n');
    }
    if (e->flight[0])
        printf("flight    %s\n", esc(e->flight));
}

static const struct emb_fleet_bucket *bucket_of(const struct emb_fleet_buckets *b, const char *id)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->items[i].id, id) == 0)
            return &b->items[i];
    return NULL;
}

static int show(struct emb_fleet_db *db, const struct emb_fleet_args *a, const char *id)
{
    struct emb_fleet_example e;
    int found = emb_fleet_bucket_example(db, id, &e);
    if (found < 0) {
        emb_cli_error(CMD, "%s", db->err);
        return EMB_EXIT_BAD;
    }
    struct emb_fleet_buckets b = {0};
    char bucket[EMB_FLEET_BUCKET_HEX];
    if (found)
        emb_fleet_bucket_id(e.signature, bucket);
    const struct emb_fleet_bucket *k =
        found && emb_fleet_buckets_query(db, &b) == 0 ? bucket_of(&b, bucket) : NULL;
    if (!k) {
        emb_cli_error(CMD, "no bucket %s (emb fleet buckets lists them; a prefix is enough when only one has it)", id);
        emb_fleet_buckets_free(&b);
        return EMB_EXIT_BAD;
    }
    if (a->json) {
        struct emb_json j;
        emb_json_begin_document(&j, stdout);
        j.flat_depth = 2;
        json_bucket(&j, k);
        json_example(&j, &e);
        emb_json_end_object(&j);
        emb_json_end(&j);
    } else {
        print_show_text(k, &e);
    }
    emb_fleet_buckets_free(&b);
    return EMB_EXIT_OK;
}

static int cmd_show(const struct emb_fleet_args *a, int argc, char **argv)
{
    if (optind + 1 != argc) {
        emb_cli_error(CMD, "usage: emb fleet show [--db URL] [--json] BUCKET");
        return EMB_EXIT_BAD;
    }
    struct emb_fleet_db *db = open_db(a);
    if (!db)
        return EMB_EXIT_BAD;
    int rc = show(db, a, argv[optind]);
    emb_fleet_db_close(db);
    return rc;
}

static int write_report(void *arg, FILE *f)
{
    return emb_fleet_report_html(arg, f);
}

static int cmd_report(const struct emb_fleet_args *a)
{
    if (!a->output) {
        emb_cli_error(CMD, "usage: emb fleet report [--db URL] -o fleet.html");
        return EMB_EXIT_BAD;
    }
    struct emb_fleet_db *db = open_db(a);
    if (!db)
        return EMB_EXIT_BAD;
    int rc = emb_cli_write_output(CMD, a->output, write_report, db);
    if (rc != EMB_EXIT_OK && db->err[0])
        emb_cli_error(CMD, "%s", db->err);
    emb_fleet_db_close(db);
    return rc;
}

int emb_cmd_fleet(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(emb_help_fleet, argc < 2 ? stderr : stdout);
        return argc < 2 ? EMB_EXIT_BAD : EMB_EXIT_OK;
    }
    const char *sub = argv[1];
    const char *env = getenv("EMB_FLEET_DB");
    struct emb_fleet_args a = {.db = env && env[0] ? env : "sqlite:fleet.db", .device = "unknown",
                               .listen = "127.0.0.1:8023", .max_bytes = 1u << 20, .rate = 60};
    int rc = emb_cli_parse_options(&COMMAND, argc - 1, argv + 1, on_option, &a);
    if (rc != 0)
        return rc < 0 ? EMB_EXIT_OK : rc;
    argc -= 1;
    argv += 1;
    if (!strcmp(sub, "ingest"))
        return cmd_ingest(&a, argc, argv);
    if (!strcmp(sub, "symbols"))
        return cmd_symbols(&a, argc, argv);
    if (!strcmp(sub, "buckets"))
        return cmd_buckets(&a);
    if (!strcmp(sub, "show"))
        return cmd_show(&a, argc, argv);
    if (!strcmp(sub, "report"))
        return cmd_report(&a);
    if (!strcmp(sub, "serve"))
        return emb_fleet_serve_main(&a);
    emb_cli_error(CMD, "unknown subcommand '%s' (ingest, symbols, buckets, show, report, serve)", sub);
    return EMB_EXIT_BAD;
}
