/* Reading the target's own state for `emb top` (top_target.h): a reader thread fills a
 * snapshot under a lock, the views copy it. */
#define _POSIX_C_SOURCE 200809L
#include "top_target.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <emb/trace_format.h>

#include "desc_read.h"
#include "elf_image.h"
#include "memsrc.h"
#include "qmp.h"

#define VIEW_BUDGET (64ull << 20) /* bytes one read may take: the descriptor bounds the rest */
#define FRESH_WAIT_S 5

struct stack {
    uint32_t index, used, size;
    char name[24];
};

/* What one read found. */
struct snapshot {
    struct stack stacks[EMB_DESC_MAX_THREADS];
    size_t nstacks;
    struct emb_live_ring rings[EMB_LIVE_MAX_RINGS];
    size_t nrings;
};

struct top_target {
    struct emb_elf *elf;
    struct emb_qmp *qmp;
    struct emb_mem *mem;
    struct emb_desc_image image; /* large: the struct is allocated */
    uint64_t interval_ms;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t read_done;
    /* Under the lock: */
    bool quit, failed, reported;
    uint64_t reads_started, reads_done;
    struct snapshot latest, work;
    bool have;
};

/* A trace ring's unread bytes: from its consumer's position (less the claim flags) to the
 * writer's, at most the ring. */
static uint64_t trace_unread(const struct emb_desc_context *c)
{
    uint32_t unread = c->write_pos - (c->read_pos & ~(uint32_t)EMB_TRACE_READ_BUSY);
    return unread <= c->buf_mask + 1ull ? unread : c->buf_mask + 1ull;
}

static size_t rings_of(const struct emb_desc_model *md, struct emb_live_ring *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < md->ncontexts && n < cap; i++) {
        const struct emb_desc_context *c = &md->contexts[i];
        if (c->ring == 0 || !c->ring_ok)
            continue;
        struct emb_live_ring *r = &out[n++];
        *r = (struct emb_live_ring){.kind = "trace", .context_id = c->context_id, .unread = trace_unread(c),
                                    .size = c->buf_mask + 1ull, .dropped = c->discarded};
        memcpy(r->name, c->name, sizeof r->name);
    }
    for (size_t i = 0; i < md->nlogrings && n < cap; i++) {
        const struct emb_desc_logring *l = &md->logrings[i];
        if (!l->ok)
            continue;
        struct emb_live_ring *r = &out[n++];
        uint32_t unread = l->committed - l->read_pos;
        *r = (struct emb_live_ring){.kind = "log", .context_id = l->context_id, .size = l->mask + 1ull,
                                    .unread = unread <= l->mask + 1ull ? unread : l->mask + 1ull,
                                    .dropped = l->dropped};
        memcpy(r->name, l->name, sizeof r->name);
    }
    return n;
}

/* One read of the descriptor into `out`. */
static bool read_once(struct top_target *t, struct snapshot *out)
{
    struct emb_desc_model md = {0};
    emb_mem_set_budget(t->mem, VIEW_BUDGET); /* per read: emb top may run for days */
    bool ok = emb_desc_read(t->mem, &t->image, &md, NULL) == 0;
    out->nstacks = 0;
    for (size_t i = 0; ok && md.kernel != NULL && i < md.kernel->nthreads; i++) {
        const struct emb_desc_thread *th = &md.kernel->threads[i];
        if (th->stack_size == 0 || out->nstacks == EMB_DESC_MAX_THREADS)
            continue;
        struct stack *st = &out->stacks[out->nstacks++];
        *st = (struct stack){.index = th->index, .used = th->stack_used, .size = th->stack_size};
        memcpy(st->name, th->name, sizeof st->name);
    }
    out->nrings = ok ? rings_of(&md, out->rings, EMB_LIVE_MAX_RINGS) : 0u;
    emb_desc_model_free(&md);
    return ok;
}

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void *reader(void *arg)
{
    struct top_target *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->quit && !t->failed) {
        t->reads_started++;
        pthread_mutex_unlock(&t->lock);
        bool ok = read_once(t, &t->work);
        pthread_mutex_lock(&t->lock);
        t->failed = !ok;
        if (ok) {
            t->latest = t->work;
            t->have = true;
        }
        t->reads_done = t->reads_started;
        pthread_cond_broadcast(&t->read_done);
        pthread_mutex_unlock(&t->lock);
        sleep_ms(t->interval_ms);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

void top_target_close(struct top_target *t)
{
    if (t == NULL)
        return;
    if (t->started) {
        pthread_mutex_lock(&t->lock);
        t->quit = true;
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->thread, NULL);
    }
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->read_done);
    emb_mem_close(t->mem);
    emb_qmp_close(t->qmp);
    emb_elf_close(t->elf);
    free(t);
}

/* The reader, with the signals blocked: they are the command's (Ctrl-C ends the view). */
static bool start_reader(struct top_target *t)
{
    sigset_t block, old;
    sigfillset(&block);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    t->started = pthread_create(&t->thread, NULL, reader, t) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return t->started;
}

struct top_target *top_target_open(const char *qmp, const char *elf, uint64_t interval_ms,
                                   struct emb_problems *problems)
{
    char err[512];
    uint64_t sym = 0;
    struct top_target *t = calloc(1, sizeof *t);
    if (t == NULL) {
        emb_report(problems, EMB_ERROR, -1, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->read_done, NULL);
    t->interval_ms = interval_ms;
    if (!(t->elf = emb_elf_open(elf, err, sizeof err)) ||
        !(t->qmp = emb_qmp_connect(qmp, NULL, 2000, err, sizeof err)) ||
        !(t->mem = emb_qmp_mem_open(t->qmp, t->elf, qmp, err, sizeof err))) {
        emb_report(problems, EMB_ERROR, -1, "%s", err);
    } else if (emb_elf_symbol(t->elf, "emb_debug_descriptor", &sym, NULL) != 0) {
        emb_report(problems, EMB_ERROR, -1, "%s has no emb_debug_descriptor symbol: nothing to read the "
                   "threads and rings by", elf);
    } else if (emb_desc_find(t->mem, sym, 0, &t->image, problems) == 0) {
        if (start_reader(t))
            return t;
        emb_report(problems, EMB_ERROR, -1, "no thread to read the target with");
    }
    top_target_close(t);
    return NULL;
}

/* Waits until a read that starts after now has ended, FRESH_WAIT_S at most. */
static void wait_fresh(struct top_target *t)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += FRESH_WAIT_S;
    uint64_t want = t->reads_started + 1u;
    while (!t->failed && t->reads_done < want &&
           pthread_cond_timedwait(&t->read_done, &t->lock, &until) == 0) {
    }
}

bool top_target_apply(struct top_target *t, struct emb_live_model *model, bool fresh,
                      struct emb_problems *problems)
{
    pthread_mutex_lock(&t->lock);
    if (fresh)
        wait_fresh(t);
    bool failed = t->failed, report = failed && !t->reported;
    t->reported |= failed;
    for (size_t i = 0; t->have && i < t->latest.nstacks; i++) {
        const struct stack *st = &t->latest.stacks[i];
        emb_live_model_set_stack(model, st->index, st->name, st->used, st->size);
    }
    if (t->have)
        emb_live_model_set_rings(model, t->latest.rings, t->latest.nrings);
    pthread_mutex_unlock(&t->lock);
    if (report)
        emb_report(problems, EMB_ERROR, -1, "the target's descriptor could not be read");
    return !failed;
}
