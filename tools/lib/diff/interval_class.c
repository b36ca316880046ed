/* The class of each of the good run's intervals (two consecutive events of one context),
 * numbered as the walk of contexts.c packs the events, while their payloads are in reach:
 * the timing (timing.c) pools the intervals of one class, and no longer reads every
 * payload of the good run again, page after page of its file. */
#include <string.h>

#include "diff_internal.h"

/* The application's own number of a generic event (user_event's `id`), or 0xFFFF. */
static uint64_t event_number(const struct emb_trace_event *r)
{
    for (size_t f = 0; f < r->ev->nfields; f++)
        if (!strcmp(r->ev->fields[f].name, "id") && r->ev->fields[f].type != EMB_CAT_CHARS)
            return emb_catalog_field_get_uint(&r->ev->fields[f], r->payload);
    return 0xFFFFu;
}

/* Which fields compared exactly change from p to e, two events of one kind: the same
 * packet event within a frame (its frame field unchanged) and across frames (changed). */
static uint64_t changed_fields(struct emb_diff_work *w, const struct emb_trace_event *p,
                               const struct emb_trace_event *e)
{
    if (p->ev != e->ev)
        return 0;
    const struct emb_diff_event_rules *er = emb_diff_event_rules(w, e->ev);
    uint64_t mask = 0;
    for (size_t f = 0; f < e->ev->nfields && f < 64; f++) {
        const struct emb_catalog_field *fd = &e->ev->fields[f];
        if (fd->type == EMB_CAT_CHARS || fd->meaning == EMB_CAT_MEANING_CYCLES ||
            !emb_diff_field_exact(w, er, e->ev, f, e->payload))
            continue;
        if (emb_catalog_field_get_uint(fd, p->payload) != emb_catalog_field_get_uint(fd, e->payload))
            mask |= 1ull << f;
    }
    return mask;
}

/* What makes an interval one interval: its context, the event before and the event, and
 * where in the frame it falls, as the pair's fields tell it: the application's numbers of
 * generic events (user_event 3 -> 4 is not 4 -> 5) and which fields change between them
 * (a packet after a packet of the same frame is not the first packet of the next one), so
 * a context of user_events does not pool its gaps inside a frame with its gaps between
 * frames. (An ordinal within the epoch would say it too, until a late context's events
 * spill into the next epoch and shift every ordinal there.) Never 0. */
static uint64_t class_key(struct emb_diff_work *w, uint32_t context, const struct emb_trace_event *p,
                          const struct emb_trace_event *e)
{
    uint64_t h = emb_key_mix64(emb_key_mix64(context + 1u, p->id), e->id);
    h = emb_key_mix64(emb_key_mix64(h, event_number(p)), event_number(e));
    return emb_key_mix64(h, changed_fields(w, p, e)) | 1u;
}

/* A good run's event as class_key reads it: its id, definition and payload. */
static struct emb_trace_event event_fields(const struct emb_diff *d, const struct emb_diff_event *e)
{
    struct emb_trace_event r = {.id = emb_diff_event_id(e), .payload = emb_diff_payload(d, 0, e)};
    r.ev = emb_diff_event_def(d, e);
    return r;
}

uint32_t emb_diff_interval_class(struct emb_diff_work *w, uint32_t context,
                                 const struct emb_diff_event *before, const struct emb_diff_event *e)
{
    struct emb_trace_event p = event_fields(w->d, before), r = event_fields(w->d, e);
    uint64_t key = class_key(w, context, &p, &r);
    uint32_t x = emb_key_map_get(&w->interval_keys, key);
    if (x != UINT32_MAX)
        return x;
    if (w->interval_classes == UINT32_MAX - 1 ||
        !emb_key_map_put(&w->interval_keys, key, (uint32_t)w->interval_classes)) {
        w->oom = true;
        return UINT32_MAX;
    }
    return (uint32_t)w->interval_classes++;
}
