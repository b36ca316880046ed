/* The k-way merge of a log stream's contexts by time (log_merge.h). */
#include "log_merge.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

struct kept {              /* a record waiting for its turn, its bytes in one block */
    struct emb_logrec rec;
    uint64_t seq;          /* arrival: orders records of one time as the stream did */
    char *bytes;
};

struct resume {            /* a context's first record in a piece of the input */
    uint64_t index;        /* its place among the context's records */
    uint64_t ts;
};

struct lane {              /* one context's records */
    uint16_t ctx;
    bool planned;          /* the first walk saw it */
    bool ordered;          /* the first walk's records never went back in time */
    bool sorted;           /* it went back in time, and what it kept was sorted */
    uint64_t planned_n, pushed;
    uint64_t last_ts;      /* the first walk's last record */
    uint64_t last_piece;   /* the piece of the input of the first walk's last record */
    struct resume *resumes; /* the first walk's: where the context's records resume */
    size_t nresumes, resume_cap, next_resume;
    struct kept *q;        /* waiting: q[head..len) */
    size_t head, len, cap;
};

struct emb_log_merge {
    void (*out)(void *arg, const struct emb_logrec *r);
    void *arg;
    struct lane *lanes;
    size_t nlanes, cap, last;
    uint64_t seq, piece;
    int name_width;
    bool finished, failed;
};

struct emb_log_merge *emb_log_merge_new(void (*out)(void *arg, const struct emb_logrec *r),
                                        void *arg)
{
    struct emb_log_merge *m = calloc(1, sizeof *m);
    if (m != NULL) {
        m->out = out;
        m->arg = arg;
    }
    return m;
}

void emb_log_merge_free(struct emb_log_merge *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nlanes; i++) {
        struct lane *l = &m->lanes[i];
        for (size_t k = l->head; k < l->len; k++)
            free(l->q[k].bytes);
        free(l->q);
        free(l->resumes);
    }
    free(m->lanes);
    free(m);
}

bool emb_log_merge_failed(const struct emb_log_merge *m)
{
    return m->failed;
}

void emb_log_merge_next_piece(struct emb_log_merge *m)
{
    m->piece++;
}

int emb_log_merge_plan_name_width(const struct emb_log_merge *m)
{
    return m->name_width;
}

static struct lane *lane_of(struct emb_log_merge *m, uint16_t ctx)
{
    if (m->last < m->nlanes && m->lanes[m->last].ctx == ctx)
        return &m->lanes[m->last];
    for (size_t i = 0; i < m->nlanes; i++)
        if (m->lanes[i].ctx == ctx)
            return &m->lanes[m->last = i];
    struct lane *lanes = emb_array_grow(m->lanes, &m->cap, m->nlanes + 1u, sizeof *lanes);
    if (lanes == NULL)
        return NULL;
    m->lanes = lanes;
    m->last = m->nlanes++;
    struct lane *l = &m->lanes[m->last];
    memset(l, 0, sizeof *l);
    l->ctx = ctx;
    l->ordered = true;
    return l;
}

/* The lane of a record's context; NULL, the merge failed, when memory runs out. */
static struct lane *record_lane(struct emb_log_merge *m, const struct emb_logrec *r)
{
    struct lane *l = lane_of(m, r->ctx);
    if (l == NULL)
        m->failed = true;
    return l;
}

void emb_log_merge_plan(struct emb_log_merge *m, const struct emb_logrec *r)
{
    struct lane *l = record_lane(m, r);
    if (l == NULL)
        return;
    if (l->planned_n > 0u && r->ts < l->last_ts)
        l->ordered = false;
    if (l->planned_n == 0u || l->last_piece != m->piece) {
        struct resume *rs = emb_array_grow(l->resumes, &l->resume_cap, l->nresumes + 1u, sizeof *rs);
        if (rs == NULL) {
            m->failed = true;
            return;
        }
        l->resumes = rs;
        l->resumes[l->nresumes++] = (struct resume){l->planned_n, r->ts};
    }
    l->planned = true;
    l->last_ts = r->ts;
    l->last_piece = m->piece;
    l->planned_n++;
    int w = (int)strlen(r->ctx_name);
    if (w > m->name_width)
        m->name_width = w;
}

static int cmp_kept(const void *x, const void *y)
{
    const struct kept *a = x, *b = y;
    if (a->rec.ts != b->rec.ts)
        return a->rec.ts < b->rec.ts ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool earlier(uint64_t ts, uint64_t seq, const struct kept *k)
{
    return ts != k->rec.ts ? ts < k->rec.ts : seq < k->seq;
}

/* Every record of the lane has been pushed. */
static bool complete(const struct emb_log_merge *m, const struct lane *l)
{
    return m->finished || (l->planned && l->pushed >= l->planned_n);
}

enum gate {               /* what a lane lets the merge hand on */
    GATE_CLOSED,           /* nothing: its next record could be earlier than anything */
    GATE_HEAD,             /* what is earlier than its first waiting record */
    GATE_FLOOR,            /* what is no later than its next record, still to come */
    GATE_OPEN,             /* anything: it has no record left */
};

/* A lane's gate. An ordered lane's first waiting record is the earliest it will have;
 * with none waiting, its next record's time is known when that record is the first of
 * its piece of the input (the first walk noted it: *floor), else it is in the piece
 * being decoded and will be pushed soon. Any other lane is closed until it has all its
 * records, then sorted. */
static enum gate gate(const struct emb_log_merge *m, struct lane *l, uint64_t *floor)
{
    if (l->planned && l->ordered && !m->finished) {
        if (l->head < l->len)
            return GATE_HEAD;
        if (complete(m, l))
            return GATE_OPEN;
        while (l->next_resume < l->nresumes && l->resumes[l->next_resume].index < l->pushed)
            l->next_resume++;
        if (l->next_resume == l->nresumes || l->resumes[l->next_resume].index != l->pushed)
            return GATE_CLOSED;
        *floor = l->resumes[l->next_resume].ts;
        return GATE_FLOOR;
    }
    if (!complete(m, l))
        return GATE_CLOSED;
    if (!l->sorted) {
        bool in_order = true;
        for (size_t k = l->head + 1u; k < l->len && in_order; k++)
            in_order = cmp_kept(&l->q[k - 1u], &l->q[k]) < 0;
        if (!in_order)
            qsort(l->q + l->head, l->len - l->head, sizeof *l->q, cmp_kept);
        l->sorted = true;
    }
    return l->head < l->len ? GATE_HEAD : GATE_OPEN;
}

/* Hands on the earliest waiting record while every lane's gate lets it through. */
static void drain(struct emb_log_merge *m)
{
    for (;;) {
        struct lane *best = NULL;
        uint64_t limit = UINT64_MAX, floor;
        for (size_t i = 0; i < m->nlanes; i++) {
            struct lane *l = &m->lanes[i];
            switch (gate(m, l, &floor)) {
            case GATE_CLOSED: return;
            case GATE_FLOOR: limit = floor < limit ? floor : limit; break;
            case GATE_HEAD:
                if (best == NULL || cmp_kept(&l->q[l->head], &best->q[best->head]) < 0)
                    best = l;
                break;
            case GATE_OPEN: break;
            }
        }
        /* A record still to come at the floor's time arrives later: it goes after. */
        if (best == NULL || best->q[best->head].rec.ts > limit)
            return;
        struct kept *k = &best->q[best->head++];
        m->out(m->arg, &k->rec);
        free(k->bytes);
        if (best->head == best->len)
            best->head = best->len = 0;
    }
}

/* Whether a record of lane `l` at (ts, seq) is earlier than anything else can be. */
static bool turn_now(struct emb_log_merge *m, struct lane *l, uint64_t ts, uint64_t seq)
{
    if (l->head < l->len || !l->planned || !l->ordered)
        return false;
    for (size_t i = 0; i < m->nlanes; i++) {
        struct lane *o = &m->lanes[i];
        uint64_t floor;
        if (o == l)
            continue;
        switch (gate(m, o, &floor)) {
        case GATE_CLOSED: return false;
        case GATE_FLOOR:
            if (ts > floor)
                return false;
            break;
        case GATE_HEAD:
            if (!earlier(ts, seq, &o->q[o->head]))
                return false;
            break;
        case GATE_OPEN: break;
        }
    }
    return true;
}

/* Copies the record's bytes into one block of its own. */
static bool keep(struct lane *l, const struct emb_logrec *r, uint64_t seq)
{
    if (l->len == l->cap && l->head > 0u) {
        memmove(l->q, l->q + l->head, (l->len - l->head) * sizeof *l->q);
        l->len -= l->head;
        l->head = 0;
    }
    struct kept *q = emb_array_grow(l->q, &l->cap, l->len + 1u, sizeof *q);
    if (q == NULL)
        return false;
    l->q = q;
    size_t name = strlen(r->ctx_name) + 1u;
    char *bytes = malloc(r->text_len + r->data_len + name);
    if (bytes == NULL)
        return false;
    struct kept *k = &l->q[l->len++];
    k->rec = *r;
    k->seq = seq;
    k->bytes = bytes;
    if (r->text != NULL) {
        memcpy(bytes, r->text, r->text_len);
        k->rec.text = bytes;
    }
    if (r->data != NULL) {
        memcpy(bytes + r->text_len, r->data, r->data_len);
        k->rec.data = (const uint8_t *)bytes + r->text_len;
    }
    memcpy(bytes + r->text_len + r->data_len, r->ctx_name, name);
    k->rec.ctx_name = bytes + r->text_len + r->data_len;
    return true;
}

void emb_log_merge_push(struct emb_log_merge *m, const struct emb_logrec *r)
{
    struct lane *l = record_lane(m, r);
    if (l == NULL)
        return;
    uint64_t seq = m->seq++;
    l->pushed++;
    if (turn_now(m, l, r->ts, seq)) {
        m->out(m->arg, r);
        if (complete(m, l))
            drain(m);
        return;
    }
    if (!keep(l, r, seq)) {
        m->failed = true;
        return;
    }
    drain(m);
}

void emb_log_merge_finish(struct emb_log_merge *m)
{
    m->finished = true;
    drain(m);
}
