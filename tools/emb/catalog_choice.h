/* The catalogue a command decodes with, chosen alike by every command: the YAML file
 * --catalog names, else the one the input names by checksum (a trace stream's header, a
 * capture's identity) when this tool knows it or the capture carries it, else the built-in
 * one. */
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

/* The same, naming the input `name` in messages. A capture whose catalogue is not one
 * this tool knows decodes with the catalogue its catalog section carries, once that
 * catalogue's checksum is the one the capture names (otherwise NULL, after saying so at
 * the section's byte offset). */
const struct emb_catalog *emb_catalog_choose_named(const char *cmd, const char *path,
                                                   const char *name, const uint8_t *input,
                                                   size_t len, struct emb_catalog **own);

/* The catalogue file `path` parsed, with its text kept in *text (malloc'd, the caller
 * frees it) for a capture to carry. NULL after saying why. */
struct emb_catalog *emb_catalog_load_kept(const char *cmd, const char *path, char **text,
                                          size_t *text_len);

#endif /* EMB_CATALOG_CHOICE_H */
