/* What the console does with a crash record at start: a product uploads it; the demo
 * saves it to a file for `emb crash`. */
#define _GNU_SOURCE
#include "driver.h"

#include <emb/crash.h>
#include <emb/native.h>

#include <stdio.h>

static const char *upload_url, *upload_token;

void console_crash_upload_to(const char *url, const char *token)
{
    upload_url = url;
    upload_token = token;
}

/* The upload a device of a fleet makes: the record is cleared once the server took it
 * (201 stored, 200 stored already), kept for the next start otherwise. */
static void upload(const uint8_t *record, uint32_t length)
{
    char err[256];
    int status = console_upload(upload_url, upload_token, record, length, err, sizeof err);
    if (status == 200 || status == 201) {
        printf("console: uploaded to %s (HTTP %d)\n", upload_url, status);
        emb_crash_record_clear();
    } else if (status < 0) {
        printf("console: cannot upload to %s: %s (kept)\n", upload_url, err);
    } else {
        printf("console: %s refused the record: HTTP %d (kept)\n", upload_url, status);
    }
}

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
    if (upload_url != NULL) {
        printf("\n");
        upload(record, length);
        return 0;
    }
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
