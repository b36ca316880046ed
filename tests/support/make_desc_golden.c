/* Writes the golden descriptor images of tests/support/golden/ (see its README):
 *   descriptor_le64.bin   a 64-bit little-endian target's memory at 0x20000000
 *   descriptor_be32.bin   a 32-bit big-endian target's memory at 0x20000000
 * Usage: make_desc_golden DIR */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>

#include "desc_golden.h"

static int save(const char *dir, const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_desc_golden DIR\n");
        return 2;
    }
    static struct dg g;
    const struct emb_catalog *cat = emb_catalog_builtin();
    dg_build(&g, 8, true, cat);
    int rc = save(argv[1], "descriptor_le64.bin", g.img, DG_SIZE);
    dg_build(&g, 4, false, cat);
    rc |= save(argv[1], "descriptor_be32.bin", g.img, DG_SIZE);
    return rc;
}
