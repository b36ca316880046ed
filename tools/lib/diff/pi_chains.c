/* The two runs' priority inheritance chains side by side (diff.h): each run's chains as
 * `emb trace --summary` finds them (trace_threads, trace_pi), paired by their text, which
 * names threads and mutexes as each run's obj_init names them (indexes and handles may
 * differ between runs; the names say which thread and mutex they are). */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "trace_threads.h"

/* The entry of `text`, added when new; NULL when out of memory. */
static struct emb_diff_pi_chain *entry(struct emb_diff_pi_chain **v, size_t *n, const char *text,
                                       size_t links)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].text, text) == 0)
            return &(*v)[i];
    struct emb_diff_pi_chain *grown = realloc(*v, (*n + 1) * sizeof **v);
    if (grown == NULL)
        return NULL;
    *v = grown;
    struct emb_diff_pi_chain *c = &grown[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->text, sizeof c->text, "%s", text);
    c->links = links;
    return c;
}

int emb_diff_pi_chains(const struct emb_diff *d, struct emb_diff_pi_chain **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    for (int side = 0; side < 2; side++) {
        struct emb_trace_threads th;
        if (emb_trace_threads_compute(d->trace[side], &th) != 0)
            goto oom;
        for (size_t i = 0; i < th.npi; i++) {
            char text[sizeof (*out)->text];
            emb_trace_pi_chain_text(&th, &th.pi[i], text, sizeof text);
            struct emb_diff_pi_chain *c = entry(out, n, text, th.pi[i].links);
            if (c == NULL) {
                emb_trace_threads_free(&th);
                goto oom;
            }
            c->waits[side] += th.pi[i].count;
        }
        emb_trace_threads_free(&th);
    }
    return 0;
oom:
    free(*out);
    *out = NULL;
    *n = 0;
    return -1;
}
