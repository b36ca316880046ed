/* The embgen command: exit statuses, error messages, no output left behind on failure,
 * output that depends only on the catalogue, and generated-name collisions.
 *
 *   test_embgen EMBGEN CATALOG
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog.h"
#include "harness.h"

static const char *embgen;
static char dir[] = "/tmp/emb-test-embgen-XXXXXX";

static char *path_in(const char *name)
{
    static char buf[4][512];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* Runs embgen with `args`, stderr into dir/err.txt; returns the exit status. */
static int run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", embgen, args, path_in("out.txt"),
             path_in("err.txt"));
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *s = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 + 1 > cap) {
            char *t = realloc(s, cap = 2 * cap + 8192);
            if (t == NULL) {
                free(s);
                fclose(f);
                return NULL;
            }
            s = t;
        }
        got = fread(s + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    fclose(f);
    s[n] = '\0';
    if (len != NULL)
        *len = n;
    return s;
}

static bool file_has(const char *path, const char *needle)
{
    char *s = slurp(path, NULL);
    bool found = s != NULL && strstr(s, needle) != NULL;
    if (!found)
        diag("%s: no `%s` in: %s", path, needle, s != NULL ? s : "(unreadable)");
    free(s);
    return found;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_embgen EMBGEN CATALOG\n");
        return 2;
    }
    embgen = argv[1];
    const char *catalog = argv[2];
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    char args[2048];

    ok_eq(run("--help"), 0, "--help exits 0");
    ok(file_has(path_in("out.txt"), "usage: embgen --catalog FILE"), "--help prints the usage");
    ok_eq(run(""), 2, "no --catalog: exit 2");
    ok(file_has(path_in("err.txt"), "--catalog FILE is required"), "and says why");
    ok_eq(run("--catalog"), 2, "--catalog without a value: exit 2");
    ok_eq(run("--bogus"), 2, "unknown option: exit 2");
    snprintf(args, sizeof args, "--catalog '%s' extra", catalog);
    ok_eq(run(args), 2, "stray argument: exit 2");
    ok_eq(run("--catalog /nonexistent.yaml"), 2, "missing catalogue: exit 2");
    ok(file_has(path_in("err.txt"), "/nonexistent.yaml: No such file"), "names the file");

    /* A bad catalogue: exit 2, FILE:LINE:COL, and no output written. */
    write_text(path_in("bad.yaml"), "version: 1\n"
                                    "classes:\n"
                                    "  - name: a\n"
                                    "    id: 0\n"
                                    "    events:\n"
                                    "      - {name: e, id: 1, fields: [{name: f, type: u7}]}\n");
    snprintf(args, sizeof args, "--catalog '%s' --header '%s' --tsdl '%s'", path_in("bad.yaml"),
             path_in("bad.h"), path_in("bad.tsdl"));
    ok_eq(run(args), 2, "bad catalogue: exit 2");
    char where[600];
    snprintf(where, sizeof where, "%s:6:51: unknown type `u7`", path_in("bad.yaml"));
    ok(file_has(path_in("err.txt"), where), "error names FILE:LINE:COL");
    ok(!exists(path_in("bad.h")) && !exists(path_in("bad.tsdl")), "nothing written");

    /* Two names that generate the same C identifier. */
    write_text(path_in("clash.yaml"),
               "version: 1\n"
               "classes:\n"
               "  - name: a\n"
               "    id: 0\n"
               "    events:\n"
               "      - {name: x_y, id: 1, fields: [{name: z, type: u8, values: {w: 0}}]}\n"
               "      - {name: x, id: 2, fields: [{name: y_z, type: u8, values: {w: 0}}]}\n");
    snprintf(args, sizeof args, "--catalog '%s' --header '%s'", path_in("clash.yaml"),
             path_in("clash.h"));
    ok_eq(run(args), 2, "colliding generated names: exit 2");
    ok(file_has(path_in("err.txt"), "generate `EMB_TRACE_X_Y_Z_W`"), "names the collision");
    ok(!exists(path_in("clash.h")), "nothing written");

    /* The real catalogue, twice: same bytes, whatever the output paths. */
    snprintf(args, sizeof args, "--catalog '%s' --header '%s' --tsdl '%s' --embed '%s'", catalog,
             path_in("a.h"), path_in("a.tsdl"), path_in("a.c"));
    ok_eq(run(args), 0, "real catalogue: exit 0");
    snprintf(args, sizeof args, "--catalog '%s' --header '%s' --tsdl '%s' --embed '%s'", catalog,
             path_in("b.h"), path_in("b.tsdl"), path_in("b.c"));
    ok_eq(run(args), 0, "again");
    static const char *const pairs[][2] = {{"a.h", "b.h"}, {"a.tsdl", "b.tsdl"}, {"a.c", "b.c"}};
    for (size_t i = 0; i < 3; i++) {
        size_t la = 0, lb = 0;
        char *a = slurp(path_in(pairs[i][0]), &la);
        char *b = slurp(path_in(pairs[i][1]), &lb);
        ok(a != NULL && b != NULL && la > 0 && la == lb && memcmp(a, b, la) == 0,
           "%s is reproducible (%zu bytes)", pairs[i][0], la);
        free(a);
        free(b);
    }
    char err[512];
    struct emb_catalog *cat = emb_catalog_load(catalog, err, sizeof err);
    if (ok(cat != NULL, "catalogue loads")) {
        char line[128];
        snprintf(line, sizeof line, "#define EMB_TRACE_CATALOG_CHECKSUM 0x%08Xu\n",
                 (unsigned)cat->checksum);
        ok(file_has(path_in("a.h"), line), "header carries the checksum");
        ok(file_has(path_in("a.tsdl"), "uuid = \"00000000-0000-0000-0000-000000000000\";") &&
               file_has(path_in("a.tsdl"), "freq = 1000000000;"),
           "reference TSDL: zero uuid, 1 GHz");
        ok(file_has(path_in("a.h"), "    emb_put_le32(emb__p, item);\n    emb_put_le32(emb__p + 4, latency);\n"),
           "work_start stores its payload as two words");
        ok(file_has(path_in("a.h"), "    emb_put_le64(emb__p + 4, pc);\n"),
           "irq_lock_max stores its 64-bit pc in one store");
        /* The embedded YAML is the catalogue, byte for byte. */
        size_t ylen = 0;
        char *yaml = slurp(catalog, &ylen);
        snprintf(line, sizeof line, "emb_catalog_yaml_len = %zuu;", ylen);
        ok(yaml != NULL && file_has(path_in("a.c"), line), "embedded length");
        free(yaml);
        emb_catalog_free(cat);
    }

    /* An output that cannot be written: exit 1. */
    snprintf(args, sizeof args, "--catalog '%s' --header /nonexistent-dir/x.h", catalog);
    ok_eq(run(args), 1, "unwritable output: exit 1");

    static const char *const files[] = {"out.txt", "err.txt", "bad.yaml", "clash.yaml", "a.h",
                                        "a.tsdl",  "a.c",     "b.h",      "b.tsdl",     "b.c"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        remove(path_in(files[i]));
    rmdir(dir);
    return emb_test_done();
}
