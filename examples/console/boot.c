/* What the console does with a crash record at start: a product uploads it; the demo
 * saves it to a file for `emb crash`. */
#define _GNU_SOURCE
#include "driver.h"

#include <emb/crash.h>
#include <emb/native.h>

#include <stdio.h>

int console_crash_start(const char *path, const char *save_path)
{
    struct emb_native_crash_config config = {.retained_path = path, .fw_version = "0.1.0"};
    emb_status s = emb_native_crash_init(&config);
    if (s != EMB_OK) {
        fprintf(stderr, "console: cannot set up the retained region %s: %s\n", path,
                emb_strerror(s));
        return -1;
    }
    const uint8_t *record;
    uint32_t length;
    s = emb_crash_record_get(&record, &length);
    if (s == EMB_E_CORRUPT)
        fprintf(stderr, "console: %s holds a torn crash record; ignored\n", path);
    if (s != EMB_OK)
        return 0;
    printf("console: the previous run crashed: %u-byte crash record", length);
    FILE *f = save_path != NULL ? fopen(save_path, "wb") : NULL;
    if (f != NULL && fwrite(record, 1, length, f) == length && fclose(f) == 0) {
        printf(", saved to %s\n", save_path);
        emb_crash_record_clear();
    } else {
        printf(" (kept: %s)\n", save_path != NULL ? "cannot save it" : "no --crash-out");
        if (f != NULL)
            fclose(f);
    }
    return 0;
}
