/* The catalogue a trace stream file carries in its header (trace_catalog.h). */
#include "trace_catalog.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "capture_catalog.h"

/* The "CATL" block for a catalog section body: tag, size, the zlib stream's length, the
 * body, zeros to a multiple of 4 (malloc'd, *len bytes), or NULL. */
static uint8_t *catalog_block(const uint8_t *body, size_t body_len, size_t *len)
{
    size_t size = (EMB_TSF_CAT_OFF_TEXT_LEN + body_len + 3u) & ~(size_t)3u;
    uint8_t *b = calloc(1, size);
    if (b == NULL)
        return NULL;
    emb_put_le32(b + EMB_TSF_EXT_OFF_TAG, EMB_TSF_EXT_CATALOG);
    emb_put_le32(b + EMB_TSF_EXT_OFF_SIZE, (uint32_t)size);
    emb_put_le32(b + EMB_TSF_CAT_OFF_ZLIB_LEN, (uint32_t)(body_len - EMB_CAP_CAT_OFF_ZLIB));
    memcpy(b + EMB_TSF_CAT_OFF_TEXT_LEN, body, body_len);
    *len = size;
    return b;
}

uint8_t *emb_trace_with_catalog(const uint8_t *stream, size_t len, const uint8_t *body,
                                size_t body_len, size_t *out_len, char *err, size_t errlen)
{
    if (len < EMB_TSF_FIXED_SIZE || emb_get_le32(stream) != EMB_TSF_MAGIC) {
        snprintf(err, errlen, "not a trace stream file: it cannot carry a catalogue");
        return NULL;
    }
    if (body_len < EMB_CAP_CAT_OFF_ZLIB || body_len > 0xFFFFu) {
        snprintf(err, errlen, "the catalogue compresses to %zu bytes: more than a stream header "
                 "holds (65535 bytes in all); the capture carries it", body_len);
        return NULL;
    }
    size_t old = emb_get_le16(stream + EMB_TSF_OFF_HEADER_SIZE);
    if (old > len) {
        snprintf(err, errlen, "truncated stream header: %zu of %zu bytes", len, old);
        return NULL;
    }
    size_t block_len = 0;
    uint8_t *block = catalog_block(body, body_len, &block_len);
    uint8_t *out = block != NULL ? malloc(len + block_len) : NULL;
    if (out == NULL) {
        free(block);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t hs = emb_tsf_header_put_block(out, 0xFFFFu, stream, len, block, block_len);
    free(block);
    if (hs == 0) {
        free(out);
        snprintf(err, errlen, "the stream header cannot carry the catalogue: its extension blocks "
                 "are malformed, or with it the header passes 65535 bytes");
        return NULL;
    }
    memcpy(out + hs, stream + old, len - old);
    *out_len = hs + (len - old);
    return out;
}

uint8_t *emb_trace_with_catalog_text(const uint8_t *stream, size_t len, const char *text,
                                     size_t text_len, size_t *out_len, char *err, size_t errlen)
{
    size_t body_len = 0;
    uint8_t *body = emb_capture_catalog_encode(text, text_len, &body_len, err, errlen);
    uint8_t *out = body != NULL ? emb_trace_with_catalog(stream, len, body, body_len, out_len, err,
                                                         errlen)
                                : NULL;
    free(body);
    return out;
}

int emb_trace_catalog_body(const uint8_t *stream, size_t len, struct emb_capture_section *body,
                           struct emb_problems *ps)
{
    if (len < EMB_TSF_FIXED_SIZE || emb_get_le32(stream) != EMB_TSF_MAGIC)
        return 0;
    size_t end = emb_get_le16(stream + EMB_TSF_OFF_HEADER_SIZE);
    size_t at = EMB_TSF_HEADER_BYTES((size_t)emb_get_le16(stream + EMB_TSF_OFF_CONTEXT_COUNT));
    if (end > len)
        return 0; /* the decoder reports the truncated header */
    while (at < end && end - at >= EMB_TSF_EXT_HEADER_SIZE) {
        uint32_t tag = emb_get_le32(stream + at + EMB_TSF_EXT_OFF_TAG);
        uint32_t size = emb_get_le32(stream + at + EMB_TSF_EXT_OFF_SIZE);
        if (tag == 0 || size < EMB_TSF_EXT_HEADER_SIZE || size % 4u || size > end - at)
            return 0; /* the end of the list, or blocks the decoder refuses */
        if (tag == EMB_TSF_EXT_CATALOG) {
            uint32_t zlen = size >= EMB_TSF_CAT_OFF_ZLIB ? emb_get_le32(stream + at + EMB_TSF_CAT_OFF_ZLIB_LEN) : 0;
            if (size < EMB_TSF_CAT_OFF_ZLIB || zlen > size - EMB_TSF_CAT_OFF_ZLIB) {
                emb_report(ps, EMB_ERROR, (long long)at + EMB_TSF_EXT_OFF_SIZE, "catalog block of "
                           "%" PRIu32 " bytes cannot hold its %" PRIu32 "-byte zlib stream", size, zlen);
                return -1;
            }
            *body = (struct emb_capture_section){
                .type = EMB_CAP_SEC_CATALOG, .version = 1, .data = stream + at + EMB_TSF_CAT_OFF_TEXT_LEN,
                .length = EMB_CAP_CAT_OFF_ZLIB + zlen, .offset = at + EMB_TSF_CAT_OFF_TEXT_LEN};
            return 1;
        }
        at += size;
    }
    return 0;
}
