/* The catalogue section of a capture file (capture_catalog.h). */
#include "capture_catalog.h"

#include "catalog.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/wire.h>
#include <zlib.h>

uint8_t *emb_capture_catalog_encode(const char *text, size_t text_len, size_t *len, char *err,
                                    size_t errlen)
{
    if (text_len > EMB_CAP_CAT_MAX_TEXT) {
        snprintf(err, errlen, "catalogue of %zu bytes, at most %u are kept in a capture",
                 text_len, EMB_CAP_CAT_MAX_TEXT);
        return NULL;
    }
    uLong bound = compressBound((uLong)text_len);
    uint8_t *body = malloc(EMB_CAP_CAT_OFF_ZLIB + bound);
    if (!body) {
        snprintf(err, errlen, "out of memory compressing the catalogue");
        return NULL;
    }
    uLongf zlen = bound;
    if (compress2(body + EMB_CAP_CAT_OFF_ZLIB, &zlen, (const Bytef *)text, (uLong)text_len,
                  Z_BEST_COMPRESSION) != Z_OK) {
        free(body);
        snprintf(err, errlen, "cannot compress the catalogue");
        return NULL;
    }
    emb_put_le32(body + EMB_CAP_CAT_OFF_TEXT_LEN, (uint32_t)text_len);
    emb_put_le32(body + EMB_CAP_CAT_OFF_RESERVED, 0);
    *len = EMB_CAP_CAT_OFF_ZLIB + zlen;
    return body;
}

/* Inflates exactly `want` bytes from the zlib stream z[0..zlen) into out; 0, or -1 with
 * *at the stream offset of the fault and a reason. */
static int inflate_exact(const uint8_t *z, size_t zlen, uint8_t *out, size_t want, size_t *at,
                         const char **why)
{
    z_stream st = {0};
    if (inflateInit(&st) != Z_OK) {
        *why = "cannot start zlib";
        *at = 0;
        return -1;
    }
    st.next_in = (Bytef *)(uintptr_t)z;
    st.avail_in = (uInt)zlen;
    st.next_out = out;
    st.avail_out = (uInt)want + 1u; /* one byte more: a stream that runs long is caught */
    int rc = inflate(&st, Z_FINISH);
    *at = zlen - st.avail_in;
    size_t got = st.total_out;
    inflateEnd(&st);
    *why = rc == Z_DATA_ERROR ? "not a valid zlib stream"
           : got > want ? "inflates to more bytes than it says"
           : rc != Z_STREAM_END || got < want ? "the zlib stream ends early"
           : st.avail_in != 0 ? "bytes follow the zlib stream"
                              : NULL;
    return *why ? -1 : 0;
}

char *emb_capture_catalog_text(const struct emb_capture_section *s, size_t *len,
                               struct emb_problems *ps)
{
    long long at = (long long)s->offset;
    if (s->version != 1u) {
        emb_report(ps, EMB_ERROR, at - 14, "catalog section version %u is not supported "
                   "(this tool reads 1)", s->version);
        return NULL;
    }
    if (s->length < EMB_CAP_CAT_OFF_ZLIB) {
        emb_report(ps, EMB_ERROR, at, "catalog section of %" PRIu64 " bytes, at least %u expected",
                   s->length, EMB_CAP_CAT_OFF_ZLIB);
        return NULL;
    }
    if (s->length - EMB_CAP_CAT_OFF_ZLIB > compressBound(EMB_CAP_CAT_MAX_TEXT)) {
        emb_report(ps, EMB_ERROR, at, "catalog section of %" PRIu64 " bytes, more than a "
                   "catalogue of at most %u bytes compresses to", s->length, EMB_CAP_CAT_MAX_TEXT);
        return NULL;
    }
    uint32_t want = emb_get_le32(s->data + EMB_CAP_CAT_OFF_TEXT_LEN);
    if (want > EMB_CAP_CAT_MAX_TEXT) {
        emb_report(ps, EMB_ERROR, at + EMB_CAP_CAT_OFF_TEXT_LEN, "catalog section says %" PRIu32
                   " bytes of text, at most %u are allowed", want, EMB_CAP_CAT_MAX_TEXT);
        return NULL;
    }
    char *text = malloc((size_t)want + 2u);
    if (!text) {
        emb_report(ps, EMB_ERROR, at, "out of memory inflating the catalogue");
        return NULL;
    }
    size_t zat;
    const char *why;
    if (inflate_exact(s->data + EMB_CAP_CAT_OFF_ZLIB, (size_t)s->length - EMB_CAP_CAT_OFF_ZLIB,
                      (uint8_t *)text, want, &zat, &why) != 0) {
        emb_report(ps, EMB_ERROR, at + EMB_CAP_CAT_OFF_ZLIB + (long long)zat,
                   "catalog section: %s", why);
        free(text);
        return NULL;
    }
    text[want] = 0;
    *len = want;
    return text;
}

struct emb_catalog *emb_capture_catalog_read(const struct emb_capture_section *s, uint32_t checksum,
                                             const char *holder, char **text, size_t *text_len,
                                             struct emb_problems *ps)
{
    size_t len = 0;
    char *yaml = emb_capture_catalog_text(s, &len, ps);
    if (yaml == NULL)
        return NULL;
    bool capture = strcmp(holder, "capture") == 0;
    char err[512] = "";
    struct emb_catalog *cat = emb_catalog_parse(yaml, len, capture ? "catalog section" : "catalog block",
                                                err, sizeof err);
    if (cat == NULL) {
        emb_report(ps, EMB_ERROR, (long long)s->offset, "the %s's catalogue does not parse: %s",
                   holder, err);
    } else if (cat->checksum != checksum) {
        emb_report(ps, EMB_ERROR, (long long)s->offset, "the %s's catalogue has checksum 0x%08"
                   PRIx32 ", its %s names 0x%08" PRIx32 ": the %s was altered", holder,
                   cat->checksum, capture ? "trace" : "header", checksum,
                   capture ? "catalog section" : "catalog block");
        emb_catalog_free(cat);
        cat = NULL;
    }
    if (cat != NULL && text != NULL) {
        *text = yaml;
        *text_len = len;
    } else {
        free(yaml);
    }
    return cat;
}
