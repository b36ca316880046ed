#include "trace_pi.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "trace_threads.h"

/* The mutex `t` waits for, or false. */
static bool waits_for_mutex(const struct emb_trace_thread *t, uint32_t *mutex)
{
    if (t->state != EMB_TRACE_THREAD_BLOCKED || strcmp(t->wait_reason, "mutex") != 0)
        return false;
    *mutex = t->wait_object;
    return true;
}

static bool holds(const struct emb_trace_thread *t, uint32_t mutex)
{
    for (size_t k = 0; k < t->nheld; k++)
        if (t->held[k] == mutex)
            return true;
    return false;
}

static const struct emb_trace_thread *holder_of(const struct emb_trace_threads *th, uint32_t mutex)
{
    for (size_t i = 0; i < th->n; i++)
        if (holds(&th->items[i], mutex))
            return &th->items[i];
    return NULL;
}

static bool in_chain(const struct emb_trace_pi_chain *c, uint32_t thread)
{
    for (size_t k = 0; k <= c->links; k++)
        if (c->thread[k] == thread)
            return true;
    return false;
}

/* A thread waiting for a mutex `t` holds and not in the chain yet, or NULL. */
static const struct emb_trace_thread *waiter_on(const struct emb_trace_threads *th,
                                                const struct emb_trace_thread *t,
                                                const struct emb_trace_pi_chain *c, uint32_t *mutex)
{
    for (size_t i = 0; i < th->n; i++)
        if (waits_for_mutex(&th->items[i], mutex) && holds(t, *mutex) &&
            !in_chain(c, th->items[i].index))
            return &th->items[i];
    return NULL;
}

size_t emb_trace_pi_chain_through(const struct emb_trace_threads *th, const struct emb_trace_thread *t,
                                  struct emb_trace_pi_chain *out)
{
    memset(out, 0, sizeof *out);
    out->thread[0] = t->index;
    uint32_t m;
    /* Up: each waiter goes in front. */
    for (const struct emb_trace_thread *top = t, *w;
         out->links < EMB_TRACE_PI_LINKS && (w = waiter_on(th, top, out, &m)) != NULL; top = w) {
        memmove(&out->thread[1], &out->thread[0], (out->links + 1) * sizeof out->thread[0]);
        memmove(&out->mutex[1], &out->mutex[0], out->links * sizeof out->mutex[0]);
        out->thread[0] = w->index;
        out->mutex[0] = m;
        out->links++;
    }
    /* Down: the mutex the last one waits for, and its holder. */
    for (const struct emb_trace_thread *low = t, *h;
         out->links < EMB_TRACE_PI_LINKS && waits_for_mutex(low, &m) && (h = holder_of(th, m)) != NULL &&
         !in_chain(out, h->index);
         low = h) {
        out->mutex[out->links] = m;
        out->thread[++out->links] = h->index;
    }
    return out->links;
}

static bool same_chain(const struct emb_trace_pi_chain *a, const struct emb_trace_pi_chain *b)
{
    return a->links == b->links &&
           memcmp(a->thread, b->thread, (a->links + 1) * sizeof a->thread[0]) == 0 &&
           memcmp(a->mutex, b->mutex, a->links * sizeof a->mutex[0]) == 0;
}

size_t emb_trace_pi_standing(const struct emb_trace_threads *th, struct emb_trace_pi_chain *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < th->n && n < cap; i++) {
        if (emb_trace_pi_chain_through(th, &th->items[i], &out[n]) == 0)
            continue;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++)
            seen = same_chain(&out[k], &out[n]);
        n += !seen;
    }
    return n;
}

void emb_trace_pi_chain_note(struct emb_trace_threads *th, const struct emb_trace_pi_chain *c, uint64_t ts)
{
    if (c->links > th->pi_deepest)
        th->pi_deepest = c->links;
    for (size_t i = 0; i < th->npi; i++)
        if (same_chain(&th->pi[i], c)) {
            th->pi[i].count++;
            return;
        }
    if (th->npi == EMB_TRACE_PI_CHAINS) {
        th->pi_unkept++;
        return;
    }
    th->pi[th->npi] = *c;
    th->pi[th->npi].count = 1;
    th->pi[th->npi++].first_ts = ts;
}

const char *emb_trace_pi_chain_text(const struct emb_trace_threads *th, const struct emb_trace_pi_chain *c,
                                    char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k <= c->links && used < len; k++) {
        const struct emb_trace_thread *t = emb_trace_thread_find(th, c->thread[k]);
        used += (size_t)snprintf(buf + used, len - used, "%s%s(%" PRIu32 ")", k ? " -> " : "",
                                 t != NULL && t->name[0] ? t->name : "thread", c->thread[k]);
        if (k < c->links && used < len) {
            if (c->mutex_name[k][0])
                used += (size_t)snprintf(buf + used, len - used, " -> %s", c->mutex_name[k]);
            else
                used += (size_t)snprintf(buf + used, len - used, " -> 0x%08" PRIx32, c->mutex[k]);
        }
    }
    return buf;
}
