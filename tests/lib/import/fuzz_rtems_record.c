/* libFuzzer: the RTEMS record reader and importer on arbitrary bytes, fed in pieces
 * whose sizes come from the input, then finished; the import written out. Nothing may
 * crash, leak or read out of bounds, whatever the stream claims. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rtems_import.h"
#include "rtems_record.h"

static int count(void *arg, const struct emb_rtems_record_event *ev)
{
    (*(uint64_t *)arg) += ev->event;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t sum = 0;
    struct emb_problems ps;
    emb_problems_init(&ps, "fuzz.rec");
    struct emb_rtems_record_options opt = {.handler = count, .arg = &sum, .problems = &ps};
    struct emb_rtems_record *rr = emb_rtems_record_new(&opt);
    size_t pos = 0;
    unsigned step = size > 0 ? data[0] % 17u + 1u : 1u;
    while (pos < size) {
        size_t n = step < size - pos ? step : size - pos;
        if (emb_rtems_record_feed(rr, data + pos, n) != 0)
            break;
        pos += n;
    }
    emb_rtems_record_finish(rr);
    if (emb_rtems_record_failed(rr) && ps.n != 1)
        __builtin_trap(); /* a failed read reports exactly one problem */
    emb_rtems_record_free(rr);
    emb_problems_free(&ps);

    struct emb_rtems_import *imp = emb_rtems_import_new(NULL);
    if (emb_rtems_import_feed(imp, data, size) == 0)
        emb_rtems_import_finish(imp);
    FILE *null = fopen("/dev/null", "wb");
    if (null != NULL) {
        emb_rtems_import_write(imp, null);
        fclose(null);
    }
    emb_rtems_import_free(imp);
    return 0;
}
