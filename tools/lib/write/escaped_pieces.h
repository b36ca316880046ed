/* Text a writer repeats on every line, escaped once per trace: pieces of one text, written
 * through an emb_out (out_buf.h) into memory, that each line then copies. The catalogue's
 * field keys are pieces every such writer has, found by event id; the writer adds its own
 * (names, contexts, kinds) through the callbacks. The NDJSON and Perfetto JSON writers
 * build theirs so (trace_ndjson.c, trace_perfetto.c). */
#ifndef EMB_WRITE_ESCAPED_PIECES_H
#define EMB_WRITE_ESCAPED_PIECES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "out_buf.h"

/* A piece of the text. */
struct emb_piece {
    uint32_t at, len;
};

struct emb_escaped_pieces {
    char *text;
    size_t size;
    uint32_t *slot;  /* catalogue event id -> its index in `event` plus one; 0: none */
    const struct emb_catalog_event **event; /* by index, in catalogue order */
    uint32_t *first_key; /* per event: its first field's index in `key` */
    struct emb_piece *key; /* per field of every event */
};

struct emb_escaped_pieces_spec {
    /* A field's key as the writer puts it; k is its place among the event's fields. */
    void (*key)(struct emb_out *o, const char *name, size_t k);
    /* Optional: the writer's own pieces for an event (index: its place in the catalogue),
     * before its keys; and every other piece, after the events'. */
    void (*event)(struct emb_out *o, const struct emb_catalog_event *ev, size_t index, void *arg);
    void (*rest)(struct emb_out *o, void *arg);
    void *arg;
};

/* Builds the pieces of `cat`'s events and the writer's. False when out of memory (then
 * nothing is held). */
bool emb_escaped_pieces_build(struct emb_escaped_pieces *p, const struct emb_catalog *cat,
                              const struct emb_escaped_pieces_spec *spec);
void emb_escaped_pieces_free(struct emb_escaped_pieces *p);

/* Within a callback: where the next piece begins, and the piece from there to here. */
uint32_t emb_escaped_pieces_at(const struct emb_out *o);
void emb_escaped_pieces_end(const struct emb_out *o, struct emb_piece *piece, uint32_t at);

/* The catalogue event's keys, or NULL when it is not the one its id names. */
static inline const struct emb_piece *emb_escaped_pieces_keys(const struct emb_escaped_pieces *p,
                                                              const struct emb_catalog_event *ev)
{
    uint32_t slot = p->slot[ev->id];
    return slot != 0u && p->event[slot - 1u] == ev ? &p->key[p->first_key[slot - 1u]] : NULL;
}

/* Copies a piece to the output (the text has 32 bytes after its last piece, so a short
 * piece is one fixed-size copy). */
static inline void emb_escaped_pieces_put(struct emb_out *o, const struct emb_escaped_pieces *p,
                                          struct emb_piece piece)
{
    if (piece.len <= 32u)
        emb_out_short(o, p->text + piece.at, piece.len);
    else
        emb_out_bytes(o, p->text + piece.at, piece.len);
}

#endif /* EMB_WRITE_ESCAPED_PIECES_H */
