/* `emb trace -f perfetto` writes from a streaming decode, which keeps no record: the JSON
 * writer builds its model in two walks of the cursor (tools/lib/write/trace_perfetto_build.c).
 * Its output must be byte for byte what it writes from a decode that keeps every record,
 * on every hand-built trace file (make_trace_files: every slice pair, switches, flows,
 * counters, losses, a corrupt packet, an unknown id, a truncated file). Usage:
 * test_perfetto_stream TRACE_FILES_DIR */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "input_file.h"
#include "trace_decode.h"
#include "trace_perfetto.h"

/* The file's Trace Event JSON, from a decode that streams or keeps its records. */
static char *perfetto_json(const uint8_t *data, size_t len, bool stream, size_t *n)
{
    struct emb_trace_options o = {.catalog = emb_catalog_builtin(), .name = "t.embt",
                                  .stream = stream, .ignore_checksum = true};
    struct emb_trace *t = emb_trace_decode(data, len, &o);
    char *text = NULL;
    FILE *f = open_memstream(&text, n);
    if (t == NULL || f == NULL)
        abort();
    int rc = emb_trace_write_perfetto_json(t, NULL, f);
    fclose(f);
    emb_trace_free(t);
    ok(rc == 0, "%s decode: written", stream ? "streaming" : "kept");
    return text;
}

static void compare(const char *dir, const char *name)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len, nkept, nstream;
    uint8_t *data = emb_input_read(path, &len, err, sizeof err);
    ok(data != NULL, "%s read (%s)", name, data ? "ok" : err);
    if (data == NULL)
        return;
    char *kept = perfetto_json(data, len, false, &nkept);
    char *streamed = perfetto_json(data, len, true, &nstream);
    ok(nkept == nstream && memcmp(kept, streamed, nkept) == 0,
       "%s: the streaming decode's JSON is the kept decode's (%zu and %zu bytes)", name, nstream,
       nkept);
    if (!strcmp(name, "good.embt")) /* it holds every kind of item: the test has teeth */
        ok(strstr(streamed, "\"ph\": \"X\"") && strstr(streamed, "\"ph\": \"s\"") &&
               strstr(streamed, "\"ph\": \"C\"") && strstr(streamed, "\"ph\": \"i\""),
           "good.embt: slices, flows, counters and instants");
    free(kept);
    free(streamed);
    free(data);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_perfetto_stream TRACE_FILES_DIR\n");
        return 2;
    }
    static const char *const files[] = {"good.embt", "corrupt.embt", "truncated.embt",
                                        "unknown.embt"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        compare(argv[1], files[i]);
    return emb_test_done();
}
