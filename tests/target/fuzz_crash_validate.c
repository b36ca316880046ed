/* libFuzzer target: emb_crash_validate (src/crash.c), the check a target runs at boot to
 * decide whether its retained region holds a crash record, built for the host. It must
 * never claim more bytes than the region holds or a record whose CRC is wrong, and every
 * record the host's decoder (crash_decode.c) reads must be one it keeps: otherwise the
 * next boot throws away a crash `emb crash` could have shown. Input: [flags:u8][region]; flags bit 0
 * recomputes the CRC over the length the record claims, so mutations get past it.
 * Seeds: tests/support/golden's records (v1, v2, Cortex-M). */
#include <emb/crash.h>
#include <emb/crash_format.h>
#include <emb/crc.h>
#include <emb/wire.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t cap = size - 1;
    uint8_t *r = malloc(cap ? cap : 1);
    if (r == NULL)
        return 0;
    memcpy(r, data + 1, cap);
    if ((data[0] & 1u) && cap >= EMB_CRASH_PREFIX_SIZE) {
        uint32_t len = emb_get_le16(r + EMB_CRASH_OFF_LENGTH);
        if (len >= EMB_CRASH_CRC_SIZE && len <= cap)
            emb_put_le32(r + len - EMB_CRASH_CRC_SIZE, emb_crc32(0u, r, len - EMB_CRASH_CRC_SIZE));
    }
    uint32_t length = 0xFFFFFFFFu;
    emb_status s = emb_crash_validate(r, cap, &length);
    if (s == EMB_OK) {
        if (length < EMB_CRASH_PREFIX_SIZE + EMB_CRASH_CRC_SIZE || length > cap ||
            emb_get_le32(r) != EMB_CRASH_MAGIC ||
            emb_crc32(0u, r, length - EMB_CRASH_CRC_SIZE) != emb_get_le32(r + length - EMB_CRASH_CRC_SIZE))
            abort();
    } else if (length != 0 || (s != EMB_E_NOTFOUND && s != EMB_E_CORRUPT)) {
        abort();
    }
    /* The host may refuse more (a field out of range: a writer's bug, reported as such),
     * but every record it reads must be one the target keeps. */
    struct emb_crash_record rec;
    if (emb_crash_decode(r, cap, &rec, NULL) == 0 && s != EMB_OK) {
        fprintf(stderr, "the host reads a record the target discards (%s)\n", emb_strerror(s));
        abort();
    }
    free(r);
    return 0;
}
