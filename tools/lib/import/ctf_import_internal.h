/* Between the CTF import's two halves: the catalogue made from a trace class
 * (ctf_catalog.c) and the graph that reads the events (ctf_import.c). */
#ifndef EMB_HOST_CTF_IMPORT_INTERNAL_H
#define EMB_HOST_CTF_IMPORT_INTERNAL_H

#include <babeltrace2/babeltrace.h>

#include "ctf_import.h"

#define CTF_MAX_DEPTH 8u /* structures nested in a payload */

enum ctf_leaf_kind { CTF_LEAF_UINT, CTF_LEAF_SINT, CTF_LEAF_BOOL, CTF_LEAF_BITS, CTF_LEAF_STRING };

/* One value of a payload: where it sits in the payload's structures, what it is, and the
 * catalogue field it is written into. */
struct ctf_leaf {
    uint16_t path[CTF_MAX_DEPTH];
    uint8_t depth;
    uint8_t kind;
    const struct emb_catalog_field *field;
};

struct ctf_event_plan {
    const bt_event_class *ec;
    uint16_t id;
    char name[128];     /* its catalogue name */
    struct ctf_leaf *leaves;
    size_t nleaves;
    const struct emb_catalog_event *ev;
};

/* Every event class of the trace class, found by its address. */
struct ctf_plan {
    struct ctf_event_plan *events;
    size_t nevents;
    size_t *slots;      /* open addressing: index + 1, 0 empty */
    size_t nslots;
    struct emb_catalog *catalog;
    char *yaml;         /* the catalogue's text */
    size_t yaml_len;
};

/* Builds the plan and its catalogue from the trace class. 0, or -1 after reporting the
 * event and field the catalogue cannot hold to `ps` ("`trace`: event E field F: ..."). */
int ctf_plan_build(struct ctf_plan *p, const bt_trace_class *tc, const char *trace,
                   struct emb_problems *ps);
const struct ctf_event_plan *ctf_plan_find(const struct ctf_plan *p, const bt_event_class *ec);
/* The event's payload in the catalogue's layout (payload: ev->payload_size bytes).
 * Returns the number of strings cut to their field. */
unsigned ctf_plan_encode(const struct ctf_event_plan *e, const bt_field *payload, uint8_t *out);
void ctf_plan_free(struct ctf_plan *p);

#endif /* EMB_HOST_CTF_IMPORT_INTERNAL_H */
