/* Catalogue lookup by checksum across the built-in catalogue and the imported formats'. */
#define _POSIX_C_SOURCE 200809L
#include "catalog_known.h"

#include "rtems_record_catalog.h"

#define ADDED_MAX 8u
static const struct emb_catalog *added[ADDED_MAX];

int emb_catalog_known_add(const struct emb_catalog *cat)
{
    for (unsigned i = 0; i < ADDED_MAX; i++)
        if (added[i] == NULL) {
            added[i] = cat;
            return 0;
        }
    return -1;
}

void emb_catalog_known_forget(const struct emb_catalog *cat)
{
    for (unsigned i = 0; i < ADDED_MAX; i++)
        if (added[i] == cat)
            added[i] = NULL;
}

const struct emb_catalog *emb_catalog_known(uint32_t checksum)
{
    for (unsigned i = 0; i < ADDED_MAX; i++)
        if (added[i] != NULL && added[i]->checksum == checksum)
            return added[i];
    const struct emb_catalog *own = emb_catalog_builtin();
    if (own != NULL && own->checksum == checksum)
        return own;
    static const unsigned versions[] = {1, 4, 9, 10};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        const struct emb_catalog *cat = emb_rtems_record_catalog_builtin(versions[i]);
        if (cat != NULL && cat->checksum == checksum)
            return cat;
    }
    return NULL;
}
