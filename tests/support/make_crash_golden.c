/* Writes the golden crash files of tests/support/golden/ (see its README):
 *   crash_v1.bin      a v1 record, x86-64 native layout, with a hand-built flight recorder
 *   crash_v2.bin      a v2 record of a small target
 *   retained.bin      a retained region as the native port leaves it: the v1 record, then
 *                     a ring of 8 mini-records after 11 contained faults
 * Usage: make_crash_golden DIR */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>

#include "crash_golden.h"

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
        fprintf(stderr, "usage: make_crash_golden DIR\n");
        return 2;
    }
    const struct emb_catalog *cat = emb_catalog_builtin();
    static uint8_t buf[65536];
    int rc = 0;
    size_t n = golden_v1(buf, sizeof buf, cat);
    rc |= n == 0 || save(argv[1], "crash_v1.bin", buf, n);
    n = golden_v2(buf, sizeof buf);
    rc |= n == 0 || save(argv[1], "crash_v2.bin", buf, n);

    static uint8_t region[4096];
    if (emb_crash_retained_init(region, sizeof region) != EMB_OK ||
        golden_v1(emb_crash_region.record, emb_crash_region.record_cap, cat) == 0)
        return 1;
    for (unsigned i = 0; i < 11; i++)
        if (emb_crash_mini_write((uint8_t)(1 + i % 3), (uint16_t)(10 + i), 1, EMB_FAULT_MEMORY,
                                 (uint8_t)i, 0x2000u + 4u * i) != EMB_OK)
            return 1;
    rc |= save(argv[1], "retained.bin", region, sizeof region);
    return rc;
}
