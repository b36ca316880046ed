/* What the catalogue's three parts share (catalog_parse.c reads the YAML, catalog.c lays
 * events out, checksums and answers queries, catalog_tsdl.c writes CTF metadata): the
 * limits the catalogue is checked against and the type and layout rules. */
#ifndef EMB_HOST_CATALOG_INTERNAL_H
#define EMB_HOST_CATALOG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"

#define CATALOG_MAX_PAYLOAD 64u /* CONFIG_EMB_TRACE_MAX_PAYLOAD's default */
#define CATALOG_MAX_CHARS 32u
#define CATALOG_MAX_CLASSES 32u
#define CATALOG_MAX_NAME 64u
#define CATALOG_MAX_FILE (16u << 20)

/* The type spelled `name` ("u16"; not char[N]): its type and size. False when unknown. */
bool emb_catalog_type_lookup(const char *name, enum emb_catalog_type *type, uint32_t *size);
/* The meaning spelled `name` ("thread"), or EMB_CAT_MEANING_NONE when unknown. */
enum emb_catalog_meaning emb_catalog_meaning_lookup(const char *name);
bool emb_catalog_type_is_integer(enum emb_catalog_type t); /* not bool, not char[N] */
bool emb_catalog_type_is_signed(enum emb_catalog_type t);

/* Lays out the event's fields (catalog.h: in order, natural alignment capped at 4, the
 * payload padded to 4) and sets its payload_size and size. */
void emb_catalog_layout_event(struct emb_catalog_event *ev);
/* Once every class is read: classes sorted by id, the id table and each event's class
 * pointer rebuilt for the sorted order, and the checksum computed. False when out of
 * memory. */
bool emb_catalog_index(struct emb_catalog *cat);

#endif /* EMB_HOST_CATALOG_INTERNAL_H */
