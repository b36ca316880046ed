/* The catalogue a command decodes with, chosen alike by every command: the YAML file
 * --catalog names, else the one the input names by checksum (a trace stream, a capture),
 * else the built-in one. */
#ifndef EMB_CATALOG_CHOICE_H
#define EMB_CATALOG_CHOICE_H

#include "catalog.h"

enum emb_catalog_default {
    EMB_CATALOG_BUILTIN,    /* the tool's own catalogue */
    EMB_CATALOG_OF_STREAM,  /* the one a trace stream file's header names */
    EMB_CATALOG_OF_CAPTURE, /* the one a capture file's identity names */
};

/* `path` (--catalog, may be NULL) loaded, or the default for `input`. NULL after saying
 * why ("emb CMD: ..."); *own is what the caller frees (NULL when nothing was loaded). */
const struct emb_catalog *emb_catalog_choose(const char *cmd, const char *path,
                                             enum emb_catalog_default fallback,
                                             const char *input, struct emb_catalog **own);

#endif /* EMB_CATALOG_CHOICE_H */
