/* libFuzzer target: the `emb import rtems-record --events` parser (rtems_record.c): a
 * target's event list as `NUMBER NAME` lines, read into a table for a version the input's
 * first byte picks, every event named and given its role, and the table turned into a
 * trace catalogue (rtems_record_catalog.c) the way the importer does. Seeds: the output
 * of docs/formats/rtems-record.md's recipe run over a recorddata.h laid out as RTEMS lays
 * it out (the one tests/emb/test_import_cli.sh makes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "rtems_record.h"
#include "rtems_record_catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned version = 1u + data[0] % 10u;
    char err[512];
    struct emb_problems ps;
    emb_problems_init(&ps, "fuzz.txt");
    struct emb_rtems_record_table *t =
        emb_rtems_record_table_parse((const char *)data + 1, size - 1, version, &ps);
    size_t problems = ps.n;
    emb_problems_free(&ps);
    if (t == NULL) {
        if (problems != 1)
            abort(); /* a refused table says why, once */
        return 0;
    }
    char name[64];
    for (unsigned e = 0; e < EMB_RTEMS_RECORD_EVENTS + 4; e++) {
        const char *s = emb_rtems_record_event_name(t, e, name, sizeof name);
        if (s == NULL || s[0] == 0)
            abort();
        (void)emb_rtems_record_event_role(t, e);
    }
    struct emb_catalog *cat = emb_rtems_record_catalog(t, err, sizeof err);
    if (cat != NULL)
        emb_catalog_free(cat);
    emb_rtems_record_table_free(t);
    return 0;
}
