/* Catalogue lookup by checksum across the built-in catalogue and the imported formats'. */
#define _POSIX_C_SOURCE 200809L
#include "catalog_known.h"

#include <stdio.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "rtems_record_catalog.h"

const struct emb_catalog *emb_catalog_known(uint32_t checksum)
{
    const struct emb_catalog *own = emb_catalog_builtin();
    if (own != NULL && own->checksum == checksum)
        return own;
    static const unsigned versions[] = {1, 4, 10};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        const struct emb_catalog *cat = emb_rr_catalog_builtin(versions[i]);
        if (cat != NULL && cat->checksum == checksum)
            return cat;
    }
    return NULL;
}

const struct emb_catalog *emb_catalog_for_file(const char *path)
{
    uint8_t head[EMB_TSF_OFF_CATALOG + 4];
    FILE *f = fopen(path, "rb");
    size_t n = f != NULL ? fread(head, 1, sizeof head, f) : 0u;
    if (f != NULL)
        fclose(f);
    if (n == sizeof head && emb_get_le32(head + EMB_TSF_OFF_MAGIC) == EMB_TSF_MAGIC) {
        const struct emb_catalog *cat = emb_catalog_known(emb_get_le32(head + EMB_TSF_OFF_CATALOG));
        if (cat != NULL)
            return cat;
    }
    return emb_catalog_builtin();
}
