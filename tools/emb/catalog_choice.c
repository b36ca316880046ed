/* The catalogue a command decodes with (catalog_choice.h). */
#define _POSIX_C_SOURCE 200809L
#include "catalog_choice.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "capture.h"
#include "capture_catalog.h"
#include "catalog_known.h"
#include "cli.h"
#include "input_file.h"
#include "trace_catalog.h"
#include "stream_kind.h"

/* The catalogue checksum the input names: 0 with *checksum, or -1 when it names none. */
static int named_checksum(const uint8_t *input, size_t len, uint32_t *checksum)
{
    switch (emb_stream_kind(input, len)) {
    case EMB_STREAM_TRACE:
        if (len < EMB_TSF_OFF_CATALOG + 4u)
            return -1;
        *checksum = emb_get_le32(input + EMB_TSF_OFF_CATALOG);
        return 0;
    case EMB_STREAM_CAPTURE: {
        struct emb_problems quiet = {0};
        struct emb_capture_section id;
        int rc = emb_capture_unwrap(input, len, EMB_CAP_SEC_IDENTITY, emb_catalog_builtin(), &id,
                                    &quiet);
        emb_problems_free(&quiet);
        if (rc != 0 || id.length < 4u)
            return -1; /* the decoder says what is wrong with it */
        *checksum = emb_get_le32(id.data + EMB_CAP_ID_OFF_CATALOG);
        return 0;
    }
    default: return -1;
    }
}

/* The catalogue the input carries (a capture's catalog section, a trace stream header's
 * catalog block), checked against the checksum it names. 0 with *own (NULL: it carries
 * none, or is refused and its decoder says why), or -1 after saying why the catalogue it
 * carries is not to be trusted. */
static int carried_catalog(const char *cmd, const char *name, const uint8_t *input, size_t len,
                           uint32_t checksum, struct emb_catalog **own)
{
    struct emb_problems ps = {0};
    emb_problems_init(&ps, name);
    struct emb_capture_section body;
    bool capture = emb_stream_kind(input, len) == EMB_STREAM_CAPTURE;
    int found = capture ? emb_capture_unwrap(input, len, EMB_CAP_SEC_CATALOG, emb_catalog_builtin(),
                                             &body, &ps) == 0
                        : emb_trace_catalog_body(input, len, &body, &ps);
    if (found > 0)
        *own = emb_capture_catalog_read(&body, checksum, capture ? "capture" : "stream", NULL, NULL,
                                        &ps);
    if (found < 0 || (found > 0 && *own == NULL))
        emb_cli_problems(cmd, &ps);
    emb_problems_free(&ps); /* no section: or a refused capture its decoder reports */
    return found < 0 || (found > 0 && *own == NULL) ? -1 : 0;
}

const struct emb_catalog *emb_catalog_choose_named(const char *cmd, const char *path,
                                                   const char *name, const uint8_t *input,
                                                   size_t len, struct emb_catalog **own)
{
    *own = NULL;
    if (path != NULL) {
        char err[512];
        if (!(*own = emb_catalog_load(path, err, sizeof err)))
            emb_cli_error(cmd, "%s", err);
        return *own;
    }
    uint32_t checksum;
    const struct emb_catalog *cat = NULL;
    if (input != NULL && named_checksum(input, len, &checksum) == 0) {
        cat = emb_catalog_known(checksum);
        if (cat == NULL) {
            if (carried_catalog(cmd, name ? name : "input", input, len, checksum, own) != 0)
                return NULL;
            cat = *own;
        }
    }
    if (cat == NULL && (cat = emb_catalog_builtin()) == NULL)
        emb_cli_error(cmd, "the built-in catalogue does not parse");
    return cat;
}

const struct emb_catalog *emb_catalog_choose(const char *cmd, const char *path,
                                             const uint8_t *input, size_t len,
                                             struct emb_catalog **own)
{
    return emb_catalog_choose_named(cmd, path, NULL, input, len, own);
}

const struct emb_catalog *emb_catalog_for_part(const char *path, const struct emb_catalog *cat,
                                               uint32_t named)
{
    const struct emb_catalog *known =
        path == NULL && cat != NULL && cat->checksum != named ? emb_catalog_known(named) : NULL;
    return known != NULL ? known : cat;
}

struct emb_catalog *emb_catalog_load_kept(const char *cmd, const char *path, char **text,
                                          size_t *text_len)
{
    char err[512];
    uint8_t *bytes = emb_input_read_max(path, EMB_CAP_CAT_MAX_TEXT, text_len, err, sizeof err);
    if (bytes == NULL) {
        emb_cli_error(cmd, "%s: %s", path, err);
        return NULL;
    }
    struct emb_catalog *cat = emb_catalog_parse((const char *)bytes, *text_len, path, err, sizeof err);
    if (cat == NULL) {
        emb_cli_error(cmd, "%s", err);
        free(bytes);
        return NULL;
    }
    *text = (char *)bytes;
    return cat;
}
