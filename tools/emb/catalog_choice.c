/* The catalogue a command decodes with (catalog_choice.h). */
#include "catalog_choice.h"

#include "catalog_known.h"
#include "cli.h"

const struct emb_catalog *emb_catalog_choose(const char *cmd, const char *path,
                                             enum emb_catalog_default fallback,
                                             const char *input, struct emb_catalog **own)
{
    *own = NULL;
    if (path != NULL) {
        char err[512];
        if (!(*own = emb_catalog_load(path, err, sizeof err)))
            emb_cli_error(cmd, "%s", err);
        return *own;
    }
    const struct emb_catalog *cat = fallback == EMB_CATALOG_OF_STREAM ? emb_catalog_for_file(input)
                                    : fallback == EMB_CATALOG_OF_CAPTURE ? emb_catalog_for_capture(input)
                                                                         : emb_catalog_builtin();
    if (cat == NULL)
        emb_cli_error(cmd, "the built-in catalogue does not parse");
    return cat;
}
