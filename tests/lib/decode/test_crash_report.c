/* The crash report builder without the command, on the golden records (tests/support/golden/,
 * README.md there): the caller it believes, the flight recorder's summary (the last
 * switch, the last interrupt, the lock still held, the reference time), the refusal of
 * another build's record, and the inputs it reads (a record, a retained region, the
 * mini-records alone). The expectations are what tests/support/crash_golden.h wrote into
 * the golden v1 record: a return address found on the stack at sp+24, bias + 0x5678; main
 * (context 3, the faulting thread) switched in at tick 10000, took mutex 0x101 at 10100
 * and kept it, ran irq 11 from 10200 to 10300 and faulted at 10500, on a 1 GHz clock;
 * audio took and gave back mutex 0x102. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/crc.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#include "catalog.h"
#include "crash_report.h"
#include "harness.h"

#define GOLDEN_BIAS 0x0000555555554000ull

static const struct emb_catalog *cat;
static struct emb_elf *self;

static uint8_t *read_golden(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = malloc(1 << 16);
    *len = buf ? fread(buf, 1, 1 << 16, f) : 0;
    fclose(f);
    return buf;
}

/* The golden v1 record made this test program's own: its build id, its flight recorder
 * of today's built-in catalogue (the golden one carries the checksum of the day it was
 * made), its CRC again. */
static void adopt(uint8_t *rec)
{
    uint32_t flight = EMB_CRASH_V1_FLIGHT_OFFSET(rec[EMB_CRASH_V1_OFF_STATUS_COUNT],
                                                 rec[EMB_CRASH_V1_OFF_GPR_COUNT]);
    emb_put_le32(rec + flight + EMB_TSF_OFF_CATALOG, cat->checksum);
    const uint8_t *id;
    size_t n = emb_elf_build_id(self, &id);
    memset(rec + EMB_CRASH_V1_OFF_BUILD_ID, 0, EMB_CRASH_V1_BUILD_ID_SIZE);
    memcpy(rec + EMB_CRASH_V1_OFF_BUILD_ID, id, n < EMB_CRASH_V1_BUILD_ID_SIZE ? n : EMB_CRASH_V1_BUILD_ID_SIZE);
    uint32_t length = emb_get_le16(rec + EMB_CRASH_OFF_LENGTH);
    emb_put_le32(rec + length - 4, emb_crc32(0, rec, length - 4));
}

static struct emb_crash_report *build(const struct emb_crash_input *in, size_t events,
                                      struct emb_problems *ps)
{
    struct emb_crash_report_options opt = {.catalog = cat, .name = "crash_v1.bin",
                                           .events = events};
    return emb_crash_report_build(in, self, &opt, ps);
}

static void test_caller_and_flight(const char *dir)
{
    size_t len;
    uint8_t *rec = read_golden(dir, "crash_v1.bin", &len);
    if (!ok(rec != NULL, "golden crash_v1.bin read"))
        return;
    adopt(rec);
    struct emb_problems ps;
    emb_problems_init(&ps, "crash_v1.bin");
    static struct emb_crash_input in;
    ok(emb_crash_input_open(&in, rec, len, &ps) == 0 && in.has_record && in.nminis == 0,
       "the record is the input, no mini-records");
    struct emb_crash_report *rep = build(&in, 3, &ps);
    if (!ok(rep != NULL && rep->status == EMB_CRASH_REPORT_OK && ps.n == 0,
            "the report builds with no problem (%zu: %s)", ps.n, ps.n ? ps.items[0].message : ""))
        return;
    ok(rep->elf_has_build_id && rep->view.arch == EMB_CRASH_ARCH_X86_64, "x86-64 record of this build");
    /* The caller the native port found on the stack is the one believed. */
    ok(rep->view.ra_source == EMB_CRASH_RA_STACK_SCAN && rep->view.ra_offset == 24,
       "caller: the return address found on the stack at sp+24");
    ok(rep->caller.runtime == GOLDEN_BIAS + 0x5678 && rep->pc.runtime == GOLDEN_BIAS + 0x1234,
       "caller 0x%llx, pc 0x%llx: the record's", (unsigned long long)rep->caller.runtime,
       (unsigned long long)rep->pc.runtime);
    ok(!rep->caller_unknown && rep->ncalls == 0 && !rep->code_partial, "no unwound chain, nothing partial");
    ok(rep->thread_name && !strcmp(rep->thread_name, "main"), "thread 3 is main");
    ok_eq(rep->clock_hz, 1000000000, "the flight recorder's 1 GHz clock");

    const struct emb_crash_flight *f = &rep->flight;
    /* uptime 123456789012 ticks is two minutes after the last event: not the same clock */
    ok(!f->reference_is_fault && f->reference_ts == 10500, "times relative to the last event, the fault at 10500");
    ok(f->nswitches == 1 && f->switches[0]->ts == 10000, "one switch, at 10000");
    ok(f->irq_enter && f->irq == 11 && f->irq_enter->ts == 10200 && f->irq_exit &&
           f->irq_exit->ts == 10300,
       "the last interrupt: irq 11 from 10200 to 10300");
    ok(emb_crash_report_us(rep, f->irq_exit->ts) - emb_crash_report_us(rep, f->irq_enter->ts) > 0.0999 &&
           emb_crash_report_us(rep, f->irq_exit->ts) - emb_crash_report_us(rep, f->irq_enter->ts) < 0.1001,
       "it ran 0.1 us");
    ok(f->nlocks == 1 && f->locks[0].mutex == 0x101 && f->locks[0].context_id == 3 && f->locks[0].ts == 10100 &&
           !f->locks[0].named,
       "one lock held: mutex 0x101 by main since 10100 (0x102 was given back)");
    ok(emb_crash_report_us(rep, f->locks[0].ts) < -0.3999 && emb_crash_report_us(rep, f->locks[0].ts) > -0.4001,
       "taken 0.4 us before the fault");
    size_t n;
    emb_trace_events(rep->trace, &n);
    ok(n == 10 && f->first_event == n - 3, "the last 3 of %zu records (9 events, 1 loss) listed", n);
    emb_crash_report_free(rep);

    /* Everything: --events 0 */
    rep = build(&in, 0, &ps);
    ok(rep && rep->flight.first_event == 0, "events 0: all of them");
    emb_crash_report_free(rep);
    emb_crash_input_close(&in);
    emb_problems_free(&ps);
    free(rec);
}

/* Another build's record is refused at its build id, and nothing of it is worked out. */
static void test_refused(const char *dir)
{
    size_t len;
    uint8_t *rec = read_golden(dir, "crash_v1.bin", &len);
    if (!ok(rec != NULL, "golden crash_v1.bin read"))
        return;
    struct emb_problems ps;
    emb_problems_init(&ps, "crash_v1.bin");
    static struct emb_crash_input in;
    emb_crash_input_open(&in, rec, len, &ps);
    struct emb_crash_report *rep = build(&in, 24, &ps);
    ok(rep && rep->status == EMB_CRASH_REPORT_REFUSED && rep->trace == NULL, "another build: refused");
    ok(ps.n == 1 && ps.items[0].offset == EMB_CRASH_V1_OFF_BUILD_ID &&
           strstr(ps.items[0].message, "the record comes from another build: record build id 101112"),
       "named at byte 8: %s", ps.n ? ps.items[0].message : "");
    emb_crash_report_free(rep);
    emb_crash_input_close(&in);
    emb_problems_free(&ps);
    free(rec);
}

/* A retained region: the record and the mini-records after it; without the record's
 * magic the mini-records alone; bytes that are neither are refused at byte 0. */
static void test_inputs(const char *dir)
{
    size_t len;
    uint8_t *region = read_golden(dir, "retained.bin", &len);
    if (!ok(region != NULL, "golden retained.bin read"))
        return;
    struct emb_problems ps;
    emb_problems_init(&ps, "retained.bin");
    static struct emb_crash_input in;
    ok(emb_crash_input_open(&in, region, len, &ps) == 0 && in.has_record && in.nminis == 8 &&
           in.minis[0].sequence == 3 && in.minis[7].sequence == 10,
       "the region: a record and 8 mini-records, oldest (3) first");
    memset(region, 0, 4);
    ok(emb_crash_input_open(&in, region, len, &ps) == 0 && !in.has_record && in.nminis == 8 && ps.n == 0,
       "no record magic: the mini-records alone, no problem");
    struct emb_crash_report *rep = build(&in, 24, &ps);
    ok(rep && rep->record == NULL && rep->status == EMB_CRASH_REPORT_OK, "a report of mini-records only");
    emb_crash_report_free(rep);
    ok(emb_crash_input_open(&in, region, 64, &ps) != 0 && ps.n == 1 && ps.items[0].offset == 0 &&
           strstr(ps.items[0].message, "not a crash record"),
       "no record and no mini-records: refused at byte 0");
    emb_problems_free(&ps);
    free(region);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/support/golden";
    char err[256];
    cat = emb_catalog_builtin();
    self = emb_elf_open("/proc/self/exe", err, sizeof err);
    if (!ok(cat && self, "catalogue and own ELF (%s)", self ? "" : err))
        return emb_test_done();
    test_caller_and_flight(dir);
    test_refused(dir);
    test_inputs(dir);
    emb_elf_close(self);
    return emb_test_done();
}
