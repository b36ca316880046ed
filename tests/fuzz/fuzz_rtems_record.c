/* libFuzzer: the RTEMS record reader and importer on arbitrary bytes, fed in pieces
 * whose sizes come from the input, then finished; the import written out. Nothing may
 * crash, leak or read out of bounds, whatever the stream claims. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rtems_import.h"
#include "rtems_record.h"

static int count(void *arg, const struct emb_rr_event *ev)
{
    (*(uint64_t *)arg) += ev->event;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t sum = 0;
    struct emb_rr_options opt = {.handler = count, .arg = &sum};
    struct emb_rr *rr = emb_rr_new(&opt);
    size_t pos = 0;
    unsigned step = size > 0 ? data[0] % 17u + 1u : 1u;
    while (pos < size) {
        size_t n = step < size - pos ? step : size - pos;
        if (emb_rr_feed(rr, data + pos, n) != 0)
            break;
        pos += n;
    }
    emb_rr_finish(rr);
    uint64_t off;
    (void)emb_rr_error(rr, &off);
    emb_rr_free(rr);

    struct emb_rr_import *imp = emb_rr_import_new(NULL);
    if (emb_rr_import_feed(imp, data, size) == 0)
        emb_rr_import_finish(imp);
    FILE *null = fopen("/dev/null", "wb");
    if (null != NULL) {
        emb_rr_import_write(imp, null);
        fclose(null);
    }
    emb_rr_import_free(imp);
    return 0;
}
