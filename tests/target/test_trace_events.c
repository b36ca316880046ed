/* The generated emitters (emb/trace_events.h) against the catalogue library: every event
 * of the catalogue is recorded once through its EMB_TRACE_<event>() macro (the generated
 * call sites of gen_callsites.c) into a ring over a test buffer, then each record is
 * decoded with the catalogue's offsets and compared with the values passed, padding
 * included. The same call sites compiled with CONFIG_EMB_TRACE_CLASSES=0 record nothing
 * and evaluate nothing.
 *
 *   test_trace_events [CATALOG]
 *
 * Without an argument the catalogue is the built-in one (catalog/trace_events.yaml); with
 * one, the program must have been built against that catalogue's header. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include <emb/trace_events.h>

#include "callsite_values.h"
#include "catalog.h"
#include "harness.h"

/* The test port's state and the two symbols of src/trace.c the emitters use. */
struct emb_trace_ring *emb_test_port_ring;
uint64_t emb_test_port_now;
uint32_t emb_trace_class_mask;
static unsigned slow_calls;

struct emb_trace_slot emb_trace_reserve_slow(struct emb_trace_ring *ring, uint32_t id, uint32_t size)
{
    (void)ring;
    (void)id;
    (void)size;
    slow_calls++;
    return (struct emb_trace_slot){NULL, NULL};
}

unsigned emb_callsites_on(void);
unsigned emb_callsites_off(void);

#define BUF_SIZE 32768u
#define GARBAGE 0xA5u
#define TS0 0x0000000700000100u

static _Alignas(64) uint8_t buf[BUF_SIZE];
static uint32_t commit[BUF_SIZE / CONFIG_EMB_TRACE_PACKET_SIZE];
static struct emb_trace_ring ring;

/* One open packet as large as the buffer, so every event takes the fast path. The
 * buffer is filled with garbage, so a padding byte the emitter failed to zero shows. */
static void ring_reset(void)
{
    memset(buf, GARBAGE, sizeof buf);
    memset(&ring, 0, sizeof ring);
    ring.buf = buf;
    ring.commit = commit;
    ring.commit_open = commit; /* the open packet's counter, as the slow path sets it */
    ring.buf_mask = BUF_SIZE - 1u;
    ring.slot_mask = 0;
    ring.packet_shift = 15;
    ring.packet_end = BUF_SIZE;
    ring.ts_high = (uint32_t)(TS0 >> 32);
    ring.event_flags = 0x0005u << 16; /* an interrupt at depth 1 */
    memset(commit, 0, sizeof commit);
    emb_test_port_ring = &ring;
    emb_test_port_now = TS0;
    slow_calls = 0;
}

/* Records the call sites make for the classes in `classes`: EMB_TEST_PASSES per event, or
 * per event with fields. */
static size_t count_records(const struct emb_catalog *cat, uint32_t classes, bool with_fields)
{
    size_t n = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        for (size_t e = 0; e < cat->classes[c].nevents; e++)
            n += (classes >> cat->classes[c].id & 1u) &&
                 (!with_fields || cat->classes[c].events[e].nfields > 0);
    return n * EMB_TEST_PASSES;
}

/* Checks one record: header, every field, zero padding. */
static bool check_one(const struct emb_catalog_event *ev, unsigned pass, const uint8_t *rec,
                      uint32_t ts)
{
    const uint8_t *payload = rec + 8;
    bool same = emb_get_le32(rec) == ts && emb_get_le16(rec + 4) == ev->id &&
                emb_get_le16(rec + 6) == 0x0005u;
    if (!same)
        diag("%s: header ts 0x%08x id 0x%04x flags 0x%04x", ev->name, emb_get_le32(rec),
             emb_get_le16(rec + 4), emb_get_le16(rec + 6));
    uint8_t covered[64] = {0};
    for (size_t i = 0; i < ev->nfields; i++) {
        const struct emb_catalog_field *f = &ev->fields[i];
        memset(covered + f->offset, 1, f->size);
        if (f->type == EMB_CAT_CHARS) {
            char want[64] = {0};
            emb_test_field_string(ev, i, pass, want, sizeof want);
            if (strlen(want) > f->size)
                want[f->size] = '\0';
            uint8_t expect[32] = {0};
            memcpy(expect, want, strlen(want));
            if (memcmp(payload + f->offset, expect, f->size) != 0) {
                diag("%s.%s pass %u: text differs (want \"%s\")", ev->name, f->name, pass, want);
                same = false;
            }
            continue;
        }
        int64_t got = emb_catalog_field_get_int(f, payload);
        int64_t want = emb_test_field_value(ev, i, pass);
        if (got != want) {
            diag("%s.%s @%u pass %u: got %lld, want %lld", ev->name, f->name,
                 (unsigned)f->offset, pass, (long long)got, (long long)want);
            same = false;
        }
    }
    for (uint32_t b = 0; b < ev->payload_size; b++) {
        if (!covered[b] && payload[b] != 0) {
            diag("%s pass %u: padding byte %u is 0x%02x", ev->name, pass, (unsigned)b,
                 payload[b]);
            same = false;
        }
    }
    return same;
}

/* Walks the buffer in call-site order, checking every record of the enabled classes.
 * Returns the number of records that matched in every byte. */
static size_t check_records(const struct emb_catalog *cat, uint32_t classes, uint32_t *bytes)
{
    uint32_t pos = 0;
    size_t good = 0, seen = 0;
    for (size_t c = 0; c < cat->nclasses; c++) {
        if ((classes >> cat->classes[c].id & 1u) == 0)
            continue;
        for (size_t e = 0; e < cat->classes[c].nevents; e++) {
            const struct emb_catalog_event *ev = &cat->classes[c].events[e];
            for (unsigned pass = 0; pass < EMB_TEST_PASSES; pass++) {
                good += check_one(ev, pass, buf + pos, (uint32_t)(TS0 + seen));
                seen++;
                pos += ev->size;
            }
        }
    }
    /* Nothing past the last event was touched. */
    if (pos < BUF_SIZE && buf[pos] != GARBAGE) {
        diag("byte after the last event was written");
        good = 0;
    }
    *bytes = pos;
    return good;
}

int main(int argc, char **argv)
{
    struct emb_catalog *loaded = NULL;
    const struct emb_catalog *cat = emb_catalog_builtin();
    if (argc > 1) {
        char err[512];
        cat = loaded = emb_catalog_load(argv[1], err, sizeof err);
        if (cat == NULL) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
    }
    size_t nrecords = count_records(cat, 0xFFFFFFFFu, false);
    uint32_t all = 0;
    for (size_t c = 0; c < cat->nclasses; c++)
        all |= 1u << cat->classes[c].id;
    ok_eq(EMB_TRACE_CATALOG_CHECKSUM, cat->checksum, "header checksum is the catalogue's");
    ok_eq(EMB_TRACE_CATALOG_VERSION, cat->version, "header version is the catalogue's");
    ok_eq(EMB_TRACE_CLASSES_ALL, all, "EMB_TRACE_CLASSES_ALL has every class bit");
#ifdef EMB_TRACE_SIZE_SWITCH
    ok_eq(EMB_TRACE_SIZE_SWITCH, emb_catalog_event(cat, EMB_TRACE_ID_SWITCH)->size,
          "EMB_TRACE_SIZE_SWITCH");
    ok_eq(EMB_TRACE_SIZE_OBJ_INIT, 32, "EMB_TRACE_SIZE_OBJ_INIT");
    ok_eq(EMB_TRACE_SWITCH_REASON_BLOCK, 1, "enumeration constants");
#endif
#ifdef EMB_TRACE_SIZE_I64_ODD
    ok_eq(EMB_TRACE_SIZE_I64_ODD, 24, "EMB_TRACE_SIZE_I64_ODD");
    ok_eq(EMB_TRACE_ID_TEXT_MISALIGNED, 0xFFFF, "EMB_TRACE_ID_TEXT_MISALIGNED");
    ok_eq(EMB_TRACE_SIGNED_ENUM_V_NEG, -5, "negative enumeration constant");
    ok_eq(EMB_TRACE_CLASSES_ALL, 0x80000081u, "class ids 0, 7 and 31");
#endif

    /* Run-time mask off: the emitters are called (arguments evaluated) and return. */
    ring_reset();
    emb_trace_class_mask = 0;
    ok_eq(emb_callsites_on(), count_records(cat, 0xFFFFFFFFu, true),
          "mask off: every first argument evaluated once");
    ok_eq(ring.write_pos, 0, "mask off: nothing reserved");
    ok(buf[0] == GARBAGE && buf[BUF_SIZE - 1] == GARBAGE, "mask off: nothing written");

    /* Every class on: one record of each event, byte for byte. */
    ring_reset();
    emb_trace_class_mask = EMB_TRACE_CLASSES_ALL;
    emb_callsites_on();
    uint32_t bytes = 0;
    ok_eq(check_records(cat, 0xFFFFFFFFu, &bytes), nrecords,
          "all classes: all %zu records decode to the values passed", nrecords);
    ok_eq(ring.write_pos, bytes, "write_pos is the sum of the EMB_TRACE_SIZE_* of all events");
    uint32_t committed = 0;
    for (size_t i = 0; i < sizeof commit / sizeof commit[0]; i++)
        committed += commit[i];
    ok_eq(committed, bytes, "every reservation committed");
    ok_eq(slow_calls, 0, "no slow path in an open packet");

    /* The first and last classes on at run time: only their events. */
    ring_reset();
    uint32_t mask = 1u << cat->classes[0].id | 1u << cat->classes[cat->nclasses - 1].id;
    emb_trace_class_mask = mask;
    emb_callsites_on();
    ok_eq(check_records(cat, mask, &bytes), count_records(cat, mask, false),
          "mask 0x%08x: exactly its classes' events, in order", (unsigned)mask);
    ok_eq(ring.write_pos, bytes, "mask 0x%08x: nothing else reserved", (unsigned)mask);

    /* Dropped reservation: the slow path returns NULL and the emitter writes nothing. */
    ring_reset();
    ring.packet_end = 0;
    emb_trace_class_mask = EMB_TRACE_CLASSES_ALL;
    emb_callsites_on();
    ok_eq(slow_calls, nrecords, "full packet: every event goes to the slow path");
    ok(buf[0] == GARBAGE && ring.write_pos == 0, "dropped events write nothing");

    /* Compiled out: no code, no evaluation, no record, whatever the run-time mask. */
    ring_reset();
    emb_trace_class_mask = EMB_TRACE_CLASSES_ALL;
    ok_eq(emb_callsites_off(), 0, "compiled out: no argument evaluated");
    ok_eq(ring.write_pos, 0, "compiled out: nothing reserved");
    ok(buf[0] == GARBAGE, "compiled out: nothing written");

#ifdef EMB_TRACE_SIZE_OBJ_INIT
    /* A char[N] from NULL is empty; an exactly N-long string has no NUL. */
    ring_reset();
    EMB_TRACE_obj_init(1, 0x10002u, NULL);
    EMB_TRACE_obj_init(2, 0x10003u, "abcdefghijklmnop");
    ok(memcmp(buf + 16, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0, "NULL name: zeros");
    ok(memcmp(buf + 32 + 16, "abcdefghijklmnop", 16) == 0, "16-char name: all 16 bytes");
    ok_eq(emb_get_le32(buf + 32 + 12), 0x10003u, "handle beside the name");
#endif
    emb_catalog_free(loaded);
    return emb_test_done();
}
