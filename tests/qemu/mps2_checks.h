/* Checks shared by the MPS2 firmware's tests (test_qemu_mps2.c over the GDB protocol,
 * test_qemu_uart.c over UART1): a captured trace and log against what the firmware says
 * it emitted (fw_stats). Per event type and log call site, the sequence numbers the
 * firmware put in the arguments rise strictly (none duplicated), and what is missing adds
 * up to exactly the drops the target counted. */
#ifndef EMB_TEST_MPS2_CHECKS_H
#define EMB_TEST_MPS2_CHECKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <emb/wire.h>

#include "catalog.h"
#include "fw.h"
#include "harness.h"
#include "log_decode.h"
#include "trace_decode.h"

/* A sequence: the numbers seen must rise strictly; what is missing below `emitted` is counted. */
struct seq {
    const char *what;
    uint64_t seen, emitted;
    int64_t last;
    uint64_t out_of_order;
};

static void seq_add(struct seq *s, uint64_t v)
{
    if ((int64_t)v <= s->last || v >= s->emitted)
        s->out_of_order++;
    else
        s->last = (int64_t)v;
    s->seen++;
}

static bool seq_ok(const struct seq *s, uint64_t *missing)
{
    *missing += s->emitted - s->seen;
    diag("  %-12s emitted %6llu, received %6llu, missing %6llu", s->what, (unsigned long long)s->emitted,
         (unsigned long long)s->seen, (unsigned long long)(s->emitted - s->seen));
    return s->out_of_order == 0 && s->seen <= s->emitted;
}

static void check_trace(const char *path, const struct fw_stats *st)
{
    const struct emb_catalog *cat = emb_catalog_builtin();
    struct emb_trace_options opt = {.catalog = cat};
    struct emb_trace *t = emb_trace_decode_file(path, &opt);
    const struct emb_trace_summary *sum = t ? emb_trace_summary(t) : NULL;
    ok(sum && !sum->fatal && sum->errors == 0 && sum->lost_packets == 0,
       "the captured trace decodes cleanly, no packet lost on the way (%s)", path);
    if (!sum) {
        emb_trace_free(t);
        return;
    }
    const struct emb_catalog_event *user = emb_catalog_find(cat, "user_event");
    const struct emb_catalog_event *fstart = emb_catalog_find(cat, "frame_start");
    const struct emb_catalog_event *fend = emb_catalog_find(cat, "frame_end");
    const struct emb_catalog_event *ienter = emb_catalog_find(cat, "irq_enter");
    const struct emb_catalog_event *iexit = emb_catalog_find(cat, "irq_exit");
    struct seq frames_s = {"frame_start", 0, st->frames, -1, 0}, frames_e = {"frame_end", 0, st->frames, -1, 0};
    struct seq frame = {"user FRAME", 0, st->frames, -1, 0}, tick = {"user TICK", 0, st->ticks, -1, 0};
    struct seq burst = {"user BURST", 0, st->burst_events, -1, 0};
    uint64_t enters = 0, exits = 0, other = 0, isr_flagged = 0, ticks_in_isr = 0;
    for (size_t c = 0; c < emb_trace_context_count(t); c++) {
        const struct emb_trace_context *ctx = emb_trace_context(t, c);
        for (size_t i = 0; i < ctx->nrecs; i++) {
            const struct emb_trace_event *e = &ctx->recs[i];
            if (e->type != EMB_TREC_EVENT)
                continue;
            const uint8_t *p = e->payload;
            if (e->ev == user) {
                uint16_t id = emb_get_le16(p);
                uint32_t a = emb_get_le32(p + 4);
                if (id == FW_EV_FRAME)
                    seq_add(&frame, a);
                else if (id == FW_EV_TICK) {
                    seq_add(&tick, a);
                    ticks_in_isr += e->kind == EMB_EVT_KIND_ISR && e->depth == 1;
                } else if (id == FW_EV_BURST)
                    seq_add(&burst, a);
                else
                    other++;
            } else if (e->ev == fstart) {
                seq_add(&frames_s, emb_get_le32(p));
            } else if (e->ev == fend) {
                seq_add(&frames_e, emb_get_le32(p));
            } else if (e->ev == ienter) {
                enters++;
                isr_flagged += e->kind == EMB_EVT_KIND_ISR;
            } else if (e->ev == iexit) {
                exits++;
            } else {
                other++;
            }
        }
    }
    uint64_t missing = 0;
    /* Every sequence is checked, even after one fails, so that `missing` counts them all. */
    bool ordered = seq_ok(&frames_s, &missing);
    ordered = seq_ok(&frames_e, &missing) && ordered;
    ordered = seq_ok(&frame, &missing) && ordered;
    ordered = seq_ok(&tick, &missing) && ordered;
    ordered = seq_ok(&burst, &missing) && ordered;
    missing += (st->ticks - enters) + (st->ticks - exits);
    diag("  irq_enter    emitted %6u, received %6llu; irq_exit received %6llu; discarded %llu",
         st->ticks, (unsigned long long)enters, (unsigned long long)exits, (unsigned long long)sum->discarded);
    ok(ordered, "per type, the sequence numbers rise strictly: none duplicated, none out of order");
    ok(other == 0 && enters <= st->ticks && exits <= st->ticks,
       "no event the firmware did not emit (%llu others)", (unsigned long long)other);
    uint64_t emitted = 3ull * st->frames + 3ull * st->ticks + st->burst_events;
    ok(sum->events + sum->discarded == emitted && missing == sum->discarded,
       "every event accounted for: %llu received + %llu discarded = %llu emitted, and the %llu "
       "missing are exactly the discarded", (unsigned long long)sum->events,
       (unsigned long long)sum->discarded, (unsigned long long)emitted, (unsigned long long)missing);
    ok(sum->discarded > 0 && burst.seen > 0 && burst.seen < st->burst_events,
       "the burst overflowed the ring: %llu of %u burst events kept, the rest counted as dropped",
       (unsigned long long)burst.seen, st->burst_events);
    ok(ticks_in_isr == tick.seen && isr_flagged == enters && tick.seen > 1000,
       "the timer interrupt's %llu events carry the interrupt flags, depth 1", (unsigned long long)tick.seen);
    emb_trace_free(t);
}

struct logcheck {
    struct seq frame, tick, burst;
    uint64_t other, resyncs, unknown;
};

static void on_log(void *arg, const struct emb_logrec *rec)
{
    struct logcheck *lc = arg;
    if (rec->type == EMB_LREC_RESYNC)
        lc->resyncs++;
    if (rec->type == EMB_LREC_UNKNOWN)
        lc->unknown++;
    if (rec->type != EMB_LREC_LOG)
        return;
    unsigned a, b;
    if (sscanf(rec->text, "frame %u: %u timer ticks", &a, &b) == 2)
        seq_add(&lc->frame, a);
    else if (sscanf(rec->text, "tick %u", &a) == 1)
        seq_add(&lc->tick, a);
    else if (sscanf(rec->text, "burst %u of %u", &a, &b) == 2)
        seq_add(&lc->burst, a);
    else
        lc->other++;
}

static void on_log_problem(void *arg, uint64_t offset, bool error, const char *message)
{
    (void)arg;
    diag("  log %s at %llu: %s", error ? "error" : "notice", (unsigned long long)offset, message);
}

static void check_log(const char *path, const char *fw, const struct fw_stats *st)
{
    char err[512];
    struct emb_logdb *db = emb_logdb_open(fw, err, sizeof err);
    ok(db != NULL, "the ELF's log metadata: %s", db ? "read" : err);
    FILE *f = fopen(path, "rb");
    static uint8_t stream[4 << 20];
    size_t len = f ? fread(stream, 1, sizeof stream, f) : 0;
    if (f)
        fclose(f);
    if (!db)
        return;
    struct logcheck lc = {.frame = {"log frame", 0, st->logs_frame, -1, 0},
                          .tick = {"log tick", 0, st->logs_tick, -1, 0},
                          .burst = {"log burst", 0, st->logs_burst, -1, 0}};
    struct emb_log_decoder_options opt = {.db = db, .name = path, .record = on_log, .problem = on_log_problem,
                                     .arg = &lc};
    struct emb_log_decoder *d = emb_log_decoder_new(&opt);
    emb_log_decoder_feed(d, stream, len);
    emb_log_decoder_finish(d);
    const struct emb_log_decoder_summary *sum = emb_log_decoder_summary(d);
    ok(len > 0 && !sum->fatal && sum->errors == 0 && sum->bad_frames == 0 && lc.resyncs == 0 &&
           lc.unknown == 0 && emb_log_decoder_hello(d)->seen,
       "the captured log decodes cleanly: hello with the build id, %llu records, no resync",
       (unsigned long long)sum->records);
    uint64_t missing = 0;
    bool ordered = seq_ok(&lc.frame, &missing);
    ordered = seq_ok(&lc.tick, &missing) && ordered;
    ordered = seq_ok(&lc.burst, &missing) && ordered;
    diag("  dropped: %llu announced, %llu in all (stats frame)", (unsigned long long)sum->dropped,
         (unsigned long long)sum->dropped_total);
    ok(ordered && lc.other == 0, "per call site, the sequence numbers rise strictly");
    uint64_t emitted = (uint64_t)st->logs_frame + st->logs_tick + st->logs_burst;
    ok(sum->records + sum->dropped_total == emitted && missing == sum->dropped_total &&
           sum->dropped_total > 0,
       "every log call accounted for: %llu decoded + %llu dropped = %llu emitted, the missing ones "
       "exactly the dropped", (unsigned long long)sum->records, (unsigned long long)sum->dropped_total,
       (unsigned long long)emitted);
    emb_log_decoder_free(d);
    emb_logdb_free(db);
}

#endif /* EMB_TEST_MPS2_CHECKS_H */
