/* A log module's partition, from the metadata the target's own macros put into this
 * program's ELF (EMB_LOG_MODULE_DEFINE_PARTITION, emb/log.h) and the library's src/log.c
 * compiled beside them with the same CONFIG_EMB_PARTITIONS: the reader (tools/lib/decode/
 * log_elf.c) must give every call site of module `radio_rx` partition 2 "radio", and no
 * other site a partition; the records on the wire are those of a module without one (the
 * partition costs no byte there); a note of version 1 over module records, a damaged
 * module record (a name past the section's end, or with a control byte) and a note
 * version from the future are refused with what and where.
 * Built twice (tests/CMakeLists.txt): with CONFIG_EMB_PARTITIONS 4, and 0, where the same
 * macro leaves no partition metadata at all: note version 1, no module record. */
#define _GNU_SOURCE
#include <emb/log.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_decode.h"

/* The test port's (tests/target/testport): the log ring, a clock that stands still. */
uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
void (*emb_test_preempt)(enum emb_test_point point);
struct emb_log_ring *emb_test_log_ring;
struct emb_log_ring *emb_port_log_ring_claim(void) { return NULL; }
uint64_t emb_port_timestamp_hz(void) { return 1000000000u; }
int64_t emb_port_clock_offset_ns(void) { return 0; }

EMB_LOG_MODULE_DEFINE_PARTITION(radio_rx, EMB_LOG_LEVEL_DBG, 2, "radio");
EMB_LOG_MODULE_DEFINE(plain, EMB_LOG_LEVEL_DBG);

static uint8_t ring_buf[EMB_LOG_RING_BUF_SIZE(1024u)];
static struct emb_log_ring ring;

/* The ring bytes of a record of each module, same arguments: alike. The first record
 * of the ring may bring its sync marker, so it is not among those measured. */
static bool records_alike(void)
{
    emb_log_ring_init(&ring, 1, 1, ring_buf, 1024u);
    emb_test_log_ring = &ring;
    EMB_LOG_INF(plain, "frame %u rssi %d", 7u, -60);
    uint32_t a = ring.write_pos;
    EMB_LOG_INF(radio_rx, "frame %u rssi %d", 7u, -60);
    uint32_t b = ring.write_pos;
    EMB_LOG_INF(plain, "frame %u rssi %d", 7u, -60);
    uint32_t c = ring.write_pos;
    EMB_LOG_HEXDUMP_DBG(radio_rx, ring_buf, 4u, "rx");
    diag("record bytes: radio_rx %u, plain %u", b - a, c - b);
    return b - a == c - b && b - a == EMB_LOG_RECORD_HEADER + 8u;
}

static const struct emb_log_site *site_of(const struct emb_logdb *db, const char *module,
                                          uint8_t kind)
{
    for (size_t i = 0; i < db->nsites; i++)
        if (strcmp(db->sites[i].module, module) == 0 && db->sites[i].kind == kind)
            return &db->sites[i];
    return NULL;
}

static void test_reader(const struct emb_logdb *db)
{
    const struct emb_log_site *radio = site_of(db, "radio_rx", EMB_LOG_SITE_PRINTF);
    const struct emb_log_site *dump = site_of(db, "radio_rx", EMB_LOG_SITE_HEXDUMP);
    const struct emb_log_site *plain = site_of(db, "plain", EMB_LOG_SITE_PRINTF);
    ok(radio != NULL && dump != NULL && plain != NULL, "the three call sites are read");
    if (radio == NULL || dump == NULL || plain == NULL)
        return;
    ok(plain->partition_name == NULL, "a module defined without a partition has none");
    if (CONFIG_EMB_PARTITIONS) {
        ok_eq(db->note_version, 2, "the note says version 2");
        ok_eq(db->nmodules, 1, "one module record");
        ok(radio->partition_name && strcmp(radio->partition_name, "radio") == 0 &&
               radio->partition == 2u, "radio_rx's printf site: partition 2 radio");
        ok(dump->partition_name && strcmp(dump->partition_name, "radio") == 0 &&
               dump->partition == 2u, "radio_rx's hexdump site: partition 2 radio");
        ok_eq(db->partition_width, 5, "the partition column is as wide as its name");
    } else {
        ok_eq(db->note_version, 1, "compiled out: the note says version 1");
        ok(db->nmodules == 0 && radio->partition_name == NULL && db->partition_width == 0,
           "compiled out: no module record, no site has a partition");
    }
    ok(strcmp(radio->fmt, plain->fmt) == 0 && radio->level == plain->level &&
           strcmp(radio->sig, plain->sig) == 0, "the sites are otherwise alike");
}

/* ---- This ELF, patched: where a byte pattern is, and a reading of the copy ---- */

static uint8_t *self;
static size_t self_len;

static size_t find(const void *pattern, size_t n)
{
    for (size_t i = 0; i + n <= self_len; i++)
        if (memcmp(self + i, pattern, n) == 0)
            return i;
    return SIZE_MAX;
}

/* Opens this ELF with byte `at` set to `value`; the first problem's text in `why`. */
static struct emb_logdb *open_patched(size_t at, uint8_t value, char *why, size_t size)
{
    char path[] = "/tmp/emb-log-partition-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (f == NULL)
        return NULL;
    uint8_t was = self[at];
    self[at] = value;
    fwrite(self, 1, self_len, f);
    fclose(f);
    self[at] = was;
    struct emb_problems ps;
    emb_problems_init(&ps, path);
    struct emb_logdb *db = emb_logdb_open(path, &ps);
    snprintf(why, size, "%s", ps.n > 0 ? ps.items[0].message : "");
    emb_problems_free(&ps);
    remove(path);
    return db;
}

static void test_versions(void)
{
    FILE *f = fopen("/proc/self/exe", "rb");
    self = malloc(64u << 20);
    self_len = f != NULL && self != NULL ? fread(self, 1, 64u << 20, f) : 0u;
    if (f != NULL)
        fclose(f);
    /* The note: namesz 4, descsz, type 1, "EMB", then the version (little-endian host). */
    const uint8_t note[] = {4, 0, 0, 0, EMB_LOG_NOTE_DESC_SIZE, 0, 0, 0, 1, 0, 0, 0, 'E', 'M', 'B', 0};
    size_t at = find(note, sizeof note);
    ok(at != SIZE_MAX, "the note is in the file");
    if (at == SIZE_MAX)
        return;
    char why[512];
    struct emb_logdb *db = open_patched(at + sizeof note, 9, why, sizeof why);
    ok(db == NULL && strstr(why, "log note version 9; this emb reads versions 1 and 2"),
       "a note from the future is refused: %s", why);
    emb_logdb_free(db);
    const uint8_t record[] = {EMB_LOG_SITE_MODULE, 2, sizeof "radio_rx", sizeof "radio", 'r', 'a', 'd', 'i', 'o', '_', 'r', 'x', 0};
    size_t rec = find(record, sizeof record);
    if (!CONFIG_EMB_PARTITIONS) {
        ok(rec == SIZE_MAX, "compiled out: no module record in the file");
        return;
    }
    ok(rec != SIZE_MAX, "the module record is in the file");
    if (rec == SIZE_MAX)
        return;
    db = open_patched(at + sizeof note, 1, why, sizeof why);
    ok(db == NULL && strstr(why, "malformed call site at offset"),
       "a version-1 note over module records: refused, not misread: %s", why);
    emb_logdb_free(db);
    db = open_patched(rec + EMB_LOG_MODULE_OFF_NAME_LEN, 0xF0, why, sizeof why);
    ok(db == NULL && strstr(why, "malformed module record at offset"),
       "a module record whose name runs past the section: %s", why);
    emb_logdb_free(db);
    db = open_patched(rec + sizeof record, 0x1B, why, sizeof why); /* "\x1badio" */
    ok(db == NULL && strstr(why, "malformed module record at offset"),
       "a partition name with a control byte (a terminal escape): %s", why);
    emb_logdb_free(db);
    free(self);
}

int main(void)
{
    struct emb_problems ps;
    emb_problems_init(&ps, "/proc/self/exe");
    struct emb_logdb *db = emb_logdb_open("/proc/self/exe", &ps);
    ok(db != NULL, "this test's log metadata: %s", db ? "read" : ps.n ? ps.items[0].message : "?");
    emb_problems_free(&ps);
    ok(records_alike(), "a record of the partition's module takes the bytes of one without");
    if (db != NULL)
        test_reader(db);
    emb_logdb_free(db);
    test_versions();
    return emb_test_done();
}
