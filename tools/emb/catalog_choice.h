/* The catalogue a command decodes with, chosen alike by every command: the YAML file
 * --catalog names, else the one the input names by checksum (a trace stream's header, a
 * capture's identity), else the built-in one. */
#ifndef EMB_CATALOG_CHOICE_H
#define EMB_CATALOG_CHOICE_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

/* `path` (--catalog, may be NULL) loaded, or the known catalogue `input` names (the bytes
 * of a trace stream or a capture, read already; NULL: the built-in one). NULL after
 * saying why ("emb CMD: ..."); *own is what the caller frees (NULL when nothing was
 * loaded). */
const struct emb_catalog *emb_catalog_choose(const char *cmd, const char *path,
                                             const uint8_t *input, size_t len,
                                             struct emb_catalog **own);

#endif /* EMB_CATALOG_CHOICE_H */
