/* libFuzzer target: the catalogue parser and the TSDL writer on arbitrary bytes. Any
 * input must give a catalogue or an error message with a location, never a crash. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    struct emb_catalog *cat =
        emb_catalog_parse((const char *)data, size, "fuzz.yaml", err, sizeof err);
    if (cat == NULL) {
        if (strncmp(err, "fuzz.yaml:", 10) != 0)
            abort(); /* every error names the file and a line */
        return 0;
    }
    FILE *null = fopen("/dev/null", "w");
    if (null != NULL) {
        struct emb_tsdl_params p = {.clock_hz = 1000};
        emb_catalog_write_tsdl(cat, &p, null);
        fclose(null);
    }
    for (uint32_t id = 1; id <= 65535u; id++) {
        const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id);
        if (ev == NULL)
            continue;
        if (ev->size != 8u + ev->payload_size || ev->payload_size > 64u)
            abort();
        uint8_t payload[64] = {0};
        for (size_t i = 0; i < ev->nfields; i++) {
            if (ev->fields[i].offset + ev->fields[i].size > ev->payload_size)
                abort();
            (void)emb_catalog_field_get_int(&ev->fields[i], payload);
        }
    }
    emb_catalog_free(cat);
    return 0;
}
