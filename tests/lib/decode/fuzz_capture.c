/* libFuzzer target: the capture file reader (tools/lib/decode/capture.c) and, for inputs it
 * accepts, inspect-style walks. The CRC is recomputed over each input so that mutations
 * reach the section and identity checks behind it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <emb/crc.h>
#include <emb/wire.h>

#include "capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct emb_catalog *cat;
    if (!cat && !(cat = emb_catalog_builtin()))
        abort();
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    if (size >= 36 && (data[size - 5] & 1)) {
        /* half the inputs: a length and a CRC that agree, to get past them */
        emb_put_le64(buf + EMB_CAP_OFF_LENGTH, size);
        emb_put_le32(buf + size - 4, emb_crc32(0, buf, size - 4));
    }
    struct emb_capture_options opt = {.catalog = cat, .name = "fuzz"};
    struct emb_capture *c = emb_capture_decode(buf, size, &opt);
    if (c && !emb_capture_failed(c, NULL, NULL)) {
        size_t n;
        const struct emb_capture_section *s = emb_capture_sections(c, &n);
        for (size_t i = 0; i < n; i++)
            (void)emb_capture_section_name(s[i].type);
        const struct emb_trace *t = emb_capture_trace(c);
        for (size_t i = 0; t && i < emb_trace_context_count(t); i++)
            (void)emb_trace_context(t, i)->nrecs;
    }
    emb_capture_free(c);
    free(buf);
    return 0;
}
