/* Catalogue lookup by checksum across the built-in catalogue and the imported formats'. */
#define _POSIX_C_SOURCE 200809L
#include "catalog_known.h"
#include "capture.h"

#include <stdbool.h>
#include <stdio.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "rtems_record_catalog.h"
#include "stream_kind.h"

const struct emb_catalog *emb_catalog_known(uint32_t checksum)
{
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

const struct emb_catalog *emb_catalog_for_file(const char *path)
{
    uint8_t head[EMB_TSF_OFF_CATALOG + 4];
    FILE *f = fopen(path, "rb");
    size_t n = f != NULL ? fread(head, 1, sizeof head, f) : 0u;
    if (f != NULL)
        fclose(f);
    if (n == sizeof head && emb_stream_kind(head, n) == EMB_STREAM_TRACE) {
        const struct emb_catalog *cat = emb_catalog_known(emb_get_le32(head + EMB_TSF_OFF_CATALOG));
        if (cat != NULL)
            return cat;
    }
    return emb_catalog_builtin();
}

/* Walks the capture's sections (docs/formats/capture.md) to the identity section; only
 * the catalogue checksum is read, the decoder checks everything else. */
const struct emb_catalog *emb_catalog_for_capture(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t h[32];
    uint32_t checksum = 0;
    bool found = false;
    if (f != NULL && fread(h, 1, sizeof h, f) == sizeof h && emb_stream_kind(h, sizeof h) == EMB_STREAM_CAPTURE) {
        uint32_t sections = emb_get_le32(h + 16);
        long off = emb_get_le16(h + 6);
        for (uint32_t i = 0; i < sections && i < 64 && !found; i++) {
            uint8_t sh[16], body[4];
            if (fseek(f, off, SEEK_SET) != 0 || fread(sh, 1, sizeof sh, f) != sizeof sh)
                break;
            uint64_t len = emb_get_le64(sh + 8);
            if (emb_get_le16(sh) == 1 && fread(body, 1, 4, f) == 4) {
                checksum = emb_get_le32(body);
                found = true;
            }
            if (len > (1ull << 40))
                break;
            off += 16 + (long)((len + 7u) & ~(uint64_t)7u);
        }
    }
    if (f != NULL)
        fclose(f);
    const struct emb_catalog *cat = found ? emb_catalog_known(checksum) : NULL;
    return cat != NULL ? cat : emb_catalog_builtin();
}
