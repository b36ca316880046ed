/* Text a writer repeats, escaped once per trace (escaped_pieces.h). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "escaped_pieces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

uint32_t emb_escaped_pieces_at(const struct emb_out *o)
{
    return (uint32_t)ftell(o->file) + (uint32_t)o->len;
}

void emb_escaped_pieces_end(const struct emb_out *o, struct emb_piece *piece, uint32_t at)
{
    piece->at = at;
    piece->len = emb_escaped_pieces_at(o) - at;
}

static void write_pieces(struct emb_out *o, struct emb_escaped_pieces *p,
                         const struct emb_catalog *cat, const struct emb_escaped_pieces_spec *spec)
{
    size_t index = 0, nkeys = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++, index++) {
            const struct emb_catalog_event *ev = &cat->classes[c].events[e];
            if (spec->event)
                spec->event(o, ev, index, spec->arg);
            p->event[index] = ev;
            p->first_key[index] = (uint32_t)nkeys;
            for (size_t k = 0; k < ev->nfields; k++) {
                uint32_t at = emb_escaped_pieces_at(o);
                spec->key(o, ev->fields[k].name, k);
                emb_escaped_pieces_end(o, &p->key[nkeys++], at);
            }
            p->slot[ev->id] = (uint32_t)index + 1u;
        }
    if (spec->rest)
        spec->rest(o, spec->arg);
    emb_out_spaces(o, 32); /* room for emb_escaped_pieces_put's fixed-size copy */
}

void emb_escaped_pieces_free(struct emb_escaped_pieces *p)
{
    EMB_FREE_ALL(p->text, p->slot, p->event, p->first_key, p->key);
    memset(p, 0, sizeof *p);
}

bool emb_escaped_pieces_build(struct emb_escaped_pieces *p, const struct emb_catalog *cat,
                              const struct emb_escaped_pieces_spec *spec)
{
    size_t nevents = 0, nfields = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++, nevents++)
            nfields += cat->classes[c].events[e].nfields;
    memset(p, 0, sizeof *p);
    p->slot = calloc(65536, sizeof *p->slot);
    p->event = calloc(nevents + 1, sizeof *p->event);
    p->first_key = calloc(nevents + 1, sizeof *p->first_key);
    p->key = calloc(nfields + 1, sizeof *p->key);
    FILE *f = open_memstream(&p->text, &p->size);
    struct emb_out o;
    bool ok = p->slot && p->event && p->first_key && p->key && f && emb_out_init(&o, f);
    if (ok) {
        write_pieces(&o, p, cat, spec);
        ok = emb_out_finish(&o) == 0;
    }
    if (f != NULL && fclose(f) != 0)
        ok = false;
    if (!ok)
        emb_escaped_pieces_free(p);
    return ok;
}
