/* The catalogue a command decodes with, chosen alike by every command: the YAML file
 * --catalog names, else the one the input names by checksum (a trace stream's header, a
 * capture's identity) when this tool knows it or the input carries it, else the built-in
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

/* The same, naming the input `name` in messages. A capture or trace stream whose
 * catalogue is not one this tool knows decodes with the catalogue it carries (a capture's
 * catalog section, a stream header's catalog block), once that catalogue's checksum is the
 * one the input names (otherwise NULL, after saying so at the body's byte offset). */
const struct emb_catalog *emb_catalog_choose_named(const char *cmd, const char *path,
                                                   const char *name, const uint8_t *input,
                                                   size_t len, struct emb_catalog **own);

/* `cat`, chosen for an input with `path` (--catalog, may be NULL), or the catalogue this
 * tool knows by `named` when a part of the input names another (a crash record's flight
 * recorder, a descriptor's image): a part written by firmware of the built-in catalogue
 * decodes so even in a capture whose trace was recorded with a user's catalogue. */
const struct emb_catalog *emb_catalog_for_part(const char *path, const struct emb_catalog *cat,
                                               uint32_t named);

/* The catalogue file `path` parsed, with its text kept in *text (malloc'd, the caller
 * frees it) for a capture to carry. NULL after saying why. */
struct emb_catalog *emb_catalog_load_kept(const char *cmd, const char *path, char **text,
                                          size_t *text_len);

#endif /* EMB_CATALOG_CHOICE_H */
