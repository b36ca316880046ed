#define _POSIX_C_SOURCE 200809L
/* libFuzzer target: the descriptor reader on a hostile memory image at 0x20000000: find by
 * scanning for the magic, read everything the descriptor points at, pull the rings out as
 * a trace and decode it. Bounded by a read budget like any image. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desc_read.h"
#include "memsrc.h"
#include "trace_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct emb_catalog *cat;
    if (!cat && !(cat = emb_catalog_builtin()))
        abort();
    struct emb_mem *m = emb_mem_open_buffer(data, size, 0x20000000u);
    if (!m)
        return 0;
    emb_mem_set_budget(m, 32u << 20);
    struct emb_desc_image d;
    if (emb_desc_find(m, 0, 1u << 20, &d, NULL) == 0) {
        struct emb_desc_model md;
        struct emb_problems is = {0};
        emb_desc_read(m, &d, &md, &is);
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (f) {
            emb_desc_dump_trace(m, &d, &md, cat, f, &is);
            fclose(f);
            struct emb_trace_options o = {.catalog = cat, .name = "dump", .ignore_checksum = true};
            struct emb_trace *t = emb_trace_decode((const uint8_t *)out, len, &o);
            if (t)
                emb_trace_free(t);
            free(out);
        }
        emb_desc_model_free(&md);
        emb_problems_free(&is);
    }
    emb_mem_close(m);
    return 0;
}
