/* The merge of a log stream's contexts by time (tools/lib/decode/log_merge.h) against
 * what `emb log` did before it, on thousands of random streams: a sort of every record
 * kept, by time, then arrival (the order emb log printed when it held them all). The
 * streams interleave up to five contexts in random bursts, some silent for long
 * stretches, with times that tie across contexts, one context in some streams going back
 * in time, and the pieces of input the walks are cut into at random; each is merged
 * planned (two walks) and unplanned (a pipe, one walk). Counts, not times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_merge.h"

#define MAX_RECORDS 600

struct rec {
    uint16_t ctx;
    uint64_t ts;
    unsigned seq;
    bool piece_before; /* a new piece of input starts at this record */
};

static struct rec recs[MAX_RECORDS], sorted[MAX_RECORDS];
static unsigned nrecs, got[MAX_RECORDS], ngot;
static const char *const names[] = {"main", "worker", "isr", "net", "a-long-context-name"};

static int cmp_rec(const void *x, const void *y)
{
    const struct rec *a = x, *b = y;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void on_out(void *arg, const struct emb_logrec *r)
{
    (void)arg;
    unsigned seq = 0;
    sscanf(r->text, "%u", &seq);
    if (ngot < MAX_RECORDS && !strcmp(r->ctx_name, names[r->ctx]) && r->data_len == 1u &&
        r->data[0] == (uint8_t)seq)
        got[ngot] = seq;
    else
        got[ngot % MAX_RECORDS] = ~0u; /* a record's bytes not carried whole */
    ngot++;
}

/* A random stream: bursts of one context at a time, each context's times rising. */
static void make_stream(unsigned contexts, bool back_in_time)
{
    uint64_t clock[5] = {0};
    nrecs = 100u + (unsigned)rand() % (MAX_RECORDS - 100u);
    for (unsigned i = 0; i < nrecs;) {
        uint16_t c = (uint16_t)((unsigned)rand() % contexts);
        unsigned burst = 1u + (unsigned)rand() % (rand() % 8 == 0 ? 120u : 12u);
        for (unsigned k = 0; k < burst && i < nrecs; k++, i++) {
            clock[c] += (unsigned)rand() % 4u; /* ties, within and across contexts */
            recs[i] = (struct rec){c, clock[c] * 10u, i, rand() % 16 == 0};
        }
        for (unsigned o = 0; o < contexts; o++) /* the others' time passes too */
            if (clock[o] < clock[c] && rand() % 2)
                clock[o] = clock[c] - (unsigned)rand() % 3u;
    }
    if (back_in_time)
        recs[nrecs / 2u].ts = recs[nrecs / 2u].ts > 500u ? recs[nrecs / 2u].ts - 500u : 0u;
}

static void walk(struct emb_log_merge *m, bool plan)
{
    for (unsigned i = 0; i < nrecs; i++) {
        char text[16];
        uint8_t data = (uint8_t)recs[i].seq;
        snprintf(text, sizeof text, "%u", recs[i].seq);
        struct emb_logrec r = {.type = EMB_LREC_HEXDUMP, .ctx = recs[i].ctx,
                               .ctx_name = names[recs[i].ctx], .has_ts = true, .ts = recs[i].ts,
                               .text = text, .text_len = strlen(text) + 1u, .data = &data,
                               .data_len = 1};
        if (i == 0 || recs[i].piece_before)
            emb_log_merge_next_piece(m);
        if (plan)
            emb_log_merge_plan(m, &r);
        else
            emb_log_merge_push(m, &r);
    }
}

static bool merged_as_sorted(bool planned)
{
    struct emb_log_merge *m = emb_log_merge_new(on_out, NULL);
    ngot = 0;
    if (planned)
        walk(m, true);
    walk(m, false);
    emb_log_merge_finish(m);
    bool failed = emb_log_merge_failed(m);
    emb_log_merge_free(m);
    if (failed || ngot != nrecs)
        return false;
    for (unsigned i = 0; i < nrecs; i++)
        if (got[i] != sorted[i].seq)
            return false;
    return true;
}

int main(void)
{
    srand(17);
    unsigned bad_planned = 0, bad_unplanned = 0, streams = 3000;
    for (unsigned n = 0; n < streams; n++) {
        make_stream(1u + n % 5u, n % 7u == 3u);
        memcpy(sorted, recs, nrecs * sizeof *recs);
        qsort(sorted, nrecs, sizeof *sorted, cmp_rec);
        bad_planned += !merged_as_sorted(true);
        bad_unplanned += !merged_as_sorted(false);
    }
    ok_eq(bad_planned, 0, "planned (two walks): every stream in the sort's order, bytes whole");
    ok_eq(bad_unplanned, 0, "unplanned (one walk, a pipe): every stream in the sort's order");

    /* The plan's widest name, for the text's context column before anything is printed. */
    struct emb_log_merge *m = emb_log_merge_new(on_out, NULL);
    make_stream(5, false);
    walk(m, true);
    ok_eq(emb_log_merge_plan_name_width(m), (int)strlen(names[4]), "the widest planned name");
    emb_log_merge_free(m);
    return emb_test_done();
}
