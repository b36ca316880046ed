/* The catalogue a command decodes with (catalog_choice.h). */
#include "catalog_choice.h"

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "capture.h"
#include "catalog_known.h"
#include "cli.h"
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

const struct emb_catalog *emb_catalog_choose(const char *cmd, const char *path,
                                             const uint8_t *input, size_t len,
                                             struct emb_catalog **own)
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
    if (input != NULL && named_checksum(input, len, &checksum) == 0)
        cat = emb_catalog_known(checksum);
    if (cat == NULL && (cat = emb_catalog_builtin()) == NULL)
        emb_cli_error(cmd, "the built-in catalogue does not parse");
    return cat;
}
