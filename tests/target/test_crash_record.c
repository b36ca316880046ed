/* Crash records: the v1 and v2 encoders against the host decoder, every byte of each
 * flipped, every truncation, unknown versions, the retained region (get, clear, torn
 * records), the mini-record ring, the golden files, and the flight recorder collected
 * from live rings. */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <emb/native.h>
#include <emb/crc.h>
#include <emb/trace_events.h>

#include "crash_arch.h"
#include "crash_decode.h"
#include "crash_golden.h"
#include "elf_image.h"
#include "harness.h"
#include "trace_decode.h"

static const struct emb_catalog *cat;

/* A refusal as the decoder reports it to its problem sink: where and what. */
struct refusal {
    long long offset;
    char message[256];
};

static void keep_refusal(void *arg, const struct emb_problem *p)
{
    struct refusal *e = arg;
    e->offset = p->offset;
    snprintf(e->message, sizeof e->message, "%s", p->message);
}

static int decode(const uint8_t *data, size_t size, struct emb_crash_record *r, struct refusal *e)
{
    struct emb_problems ps;
    emb_problems_init_callback(&ps, NULL, keep_refusal, e);
    return emb_crash_decode(data, size, r, &ps);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static uint8_t buf[1 << 20];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    uint8_t *copy = malloc(*len ? *len : 1);
    memcpy(copy, buf, *len);
    return copy;
}

static struct emb_trace *decode_flight(const struct emb_crash_record *r)
{
    struct emb_trace_options o = {.catalog = cat, .name = "flight", .ignore_checksum = true};
    return emb_trace_decode(r->flight, r->flight_len, &o);
}

static void check_v1_fields(const struct emb_crash_record *r, const char *what)
{
    ok_eq(r->version, 1, "%s: version 1", what);
    ok(!memcmp(r->build_id, golden_build_id, 20) && r->build_id_len == 20, "%s: build id", what);
    ok(!strcmp(r->fw_version, "1.2.3"), "%s: firmware version '%s'", what, r->fw_version);
    ok(r->uptime_ticks == 123456789012ull, "%s: uptime", what);
    ok(r->reset_reason == EMB_RESET_FAULT && r->fault_class == EMB_FAULT_MEMORY &&
           r->fault_code == 1 && r->cpu_id == 2 && r->partition_id == 0,
       "%s: reset reason, class, code, cpu, partition", what);
    ok(r->thread_index == 3 && r->thread_generation == 1, "%s: thread and generation", what);
    ok(r->fault_address == 0x10 && r->pc == 0x1234 && r->lr == 0x5678 && r->sp == 0xffffe0f0u,
       "%s: fault address, pc, lr, sp", what);
    ok(r->stack_base == 0xff800000u && r->stack_size == 0x100000, "%s: stack", what);
    ok(r->status_count == EMB_CRASH_NAT_COUNT && r->gpr_count == 34, "%s: register counts", what);
    ok(emb_crash_status_reg(r, 0) == EMB_CRASH_LAYOUT_X86_64 && emb_crash_status_reg(r, 15) == 14 &&
           emb_crash_status_reg(r, EMB_CRASH_NAT_BIAS + 1) == 0x5555,
       "%s: status registers", what);
    ok(emb_crash_gpr(r, 6) == 0x03030303u && emb_crash_gpr(r, 7) == 0, "%s: general registers", what);
    ok_eq(r->flight_packets, 2, "%s: two flight packets", what);
    struct emb_trace *t = decode_flight(r);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    /* The golden flight recorder names the catalogue of its day: only that is reported. */
    unsigned expected_errors = cat->checksum != GOLDEN_CATALOG_CHECKSUM;
    ok(!s->fatal && s->errors == expected_errors && s->events == 9 && s->discarded == 1,
       "%s: the flight recorder decodes: %llu events", what, (unsigned long long)s->events);
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(t, &n);
    ok(n > 0 && ev[n - 1]->ev && !strcmp(ev[n - 1]->ev->name, "partition_fault") &&
           ev[n - 1]->kind == EMB_EVT_KIND_FAULT,
       "%s: the last event is the fault", what);
    emb_trace_free(t);
}

static void test_v1(void)
{
    static uint8_t buf[8192];
    size_t len = golden_v1(buf, sizeof buf, cat);
    ok(len > EMB_CRASH_V1_FIXED_SIZE, "v1 encodes (%zu bytes)", len);
    struct emb_crash_record r;
    struct refusal e;
    if (!ok(decode(buf, len, &r, &e) == 0, "v1 decodes"))
        diag("%s at %lld", e.message, e.offset);
    check_v1_fields(&r, "v1");
    ok_eq(r.length, len, "length field = bytes written");
    uint32_t vlen = 0;
    ok(emb_crash_validate(buf, len, &vlen) == EMB_OK && vlen == len, "the target validates it");
    ok(golden_v1(buf, len - 1, cat) == 0, "an encoder refuses a buffer one byte short");
}

static void test_v2(void)
{
    uint8_t buf[256];
    size_t len = golden_v2(buf, sizeof buf);
    ok_eq(len, EMB_CRASH_V2_FIXED_SIZE + 4, "v2 without a flight recorder is 44 bytes");
    struct emb_crash_record r;
    struct refusal e;
    if (!ok(decode(buf, len, &r, &e) == 0, "v2 decodes"))
        diag("%s at %lld", e.message, e.offset);
    ok(r.version == 2 && r.build_id_len == 8 && !memcmp(r.build_id, golden_build_id, 8),
       "v2: version and build id prefix");
    ok(r.uptime_ticks == 0x22334455u && r.reset_reason == EMB_RESET_WATCHDOG &&
           r.fault_class == EMB_FAULT_WATCHDOG && r.fault_code == 7 && r.thread_index == 2,
       "v2: uptime (low 32 bits), reset, class, code, thread");
    ok(r.addr_shift == 1 && r.pc == 0x3a4c && r.lr == 0x1f00 && r.sp == 0x08f0 &&
           r.fault_address == 0x0200 && r.stack_base == 0x0800 && r.stack_size == 0x100,
       "v2: word addresses shifted back");
    ok(r.status_count == 0 && r.gpr_count == 0 && r.flight == NULL, "v2: no registers, no flight");
}

/* Every byte flipped three ways, every truncation: each rejected by the host decoder and
 * by the target's validation. */
static void test_mutations(const uint8_t *rec, size_t len, const char *what)
{
    static uint8_t copy[65536];
    static const uint8_t masks[] = {0xFF, 0x01, 0x80};
    size_t tried = 0, refused = 0, target_refused = 0;
    for (size_t i = 0; i < len; i++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(copy, rec, len);
            copy[i] ^= masks[m];
            struct emb_crash_record r;
            tried++;
            if (emb_crash_decode(copy, len, &r, NULL) != 0)
                refused++;
            else
                diag("%s: byte %zu ^ %02x accepted", what, i, masks[m]);
            if (emb_crash_validate(copy, len, NULL) != EMB_OK)
                target_refused++;
        }
    }
    ok(refused == tried, "%s: all %zu single-byte mutations refused by the decoder", what, tried);
    ok(target_refused == tried, "%s: and by the target's validation", what);
    size_t cut_refused = 0;
    for (size_t n = 0; n < len; n++) {
        struct emb_crash_record r;
        struct refusal e;
        if (decode(rec, n, &r, &e) != 0 && emb_crash_validate(rec, n, NULL) != EMB_OK)
            cut_refused++;
    }
    ok(cut_refused == len, "%s: all %zu truncations refused", what, len);
}

static void test_bad_input(void)
{
    uint8_t buf[256];
    size_t len = golden_v2(buf, sizeof buf);
    emb_put_le16(buf + EMB_CRASH_OFF_VERSION, 3);
    emb_put_le32(buf + len - 4, emb_crc32(0, buf, len - 4));
    struct emb_crash_record r;
    struct refusal e;
    ok(decode(buf, len, &r, &e) != 0 && e.offset == 4 &&
           strstr(e.message, "unknown crash record version 3"),
       "version 3 (CRC correct) refused at byte 4: %s", e.message);
    ok(emb_crash_validate(buf, len, NULL) == EMB_E_CORRUPT, "the target calls it corrupt");
    len = golden_v2(buf, sizeof buf);
    buf[len - 1] ^= 1;
    ok(decode(buf, len, &r, &e) != 0 && e.offset == (long long)len - 4 &&
           strstr(e.message, "CRC mismatch"),
       "a bad CRC is named at its offset: %s", e.message);
    memset(buf, 0, sizeof buf);
    ok(decode(buf, sizeof buf, &r, &e) != 0 && e.offset == 0 && strstr(e.message, "magic"),
       "zeros: not a crash record");
    ok(emb_crash_validate(buf, sizeof buf, NULL) == EMB_E_NOTFOUND, "zeros: no record for the target");
    /* Register counts that do not fit the length. */
    static uint8_t v1[8192];
    len = golden_v1(v1, sizeof v1, cat);
    v1[EMB_CRASH_V1_OFF_GPR_COUNT] = 255;
    v1[EMB_CRASH_V1_OFF_STATUS_COUNT] = 255;
    emb_put_le16(v1 + EMB_CRASH_OFF_LENGTH, 200);
    emb_put_le32(v1 + 196, emb_crc32(0, v1, 196));
    ok(decode(v1, len, &r, &e) != 0 && e.offset == EMB_CRASH_V1_OFF_STATUS_COUNT,
       "register counts beyond the length refused: %s", e.message);
}

static void test_region(void)
{
    static uint8_t region[8192];
    memset(region, 0, sizeof region);
    ok(emb_crash_retained_init(region, sizeof region) == EMB_OK, "region set up");
    ok_eq(emb_crash_region.found, EMB_E_NOTFOUND, "an empty region holds no record");
    const uint8_t *rec;
    uint32_t len;
    ok(emb_crash_record_get(&rec, &len) == EMB_E_NOTFOUND && rec == NULL, "get: not found");
    size_t n = golden_v1(emb_crash_region.record, emb_crash_region.record_cap, cat);
    ok(emb_crash_retained_init(region, sizeof region) == EMB_OK &&
           emb_crash_region.found == EMB_OK && emb_crash_region.found_length == n,
       "the next start finds the record");
    ok(emb_crash_record_get(&rec, &len) == EMB_OK && rec == region && len == n, "get returns it");
    region[100] ^= 0x40;
    ok(emb_crash_record_get(&rec, &len) == EMB_E_CORRUPT && rec == NULL,
       "a torn record is corrupt, never returned");
    region[100] ^= 0x40;
    emb_crash_record_clear();
    ok(emb_crash_record_get(&rec, &len) == EMB_E_NOTFOUND, "cleared: not found");
    uint32_t status[EMB_CRASH_NAT_COUNT];
    golden_v1_status(status);
    struct emb_crash_info info = {.fault_class = EMB_FAULT_ABORT, .status_regs = status,
                                  .status_count = EMB_CRASH_NAT_COUNT, .pc = 0x42};
    ok(emb_crash_write(&info) == EMB_OK, "emb_crash_write");
    struct emb_crash_record r;
    ok(emb_crash_record_get(&rec, &len) == EMB_OK && emb_crash_decode(rec, len, &r, NULL) == 0 &&
           r.pc == 0x42 && r.fault_class == EMB_FAULT_ABORT,
       "what emb_crash_write wrote decodes");
    uint32_t cap = 0;
    uint8_t *area = emb_crash_flight_area(EMB_CRASH_NAT_COUNT, 4, &cap);
    ok(area == region + EMB_CRASH_V1_FLIGHT_OFFSET(EMB_CRASH_NAT_COUNT, 4) &&
           cap == emb_crash_region.record_cap - EMB_CRASH_V1_FLIGHT_OFFSET(EMB_CRASH_NAT_COUNT, 4) - 4,
       "the flight area is where the record puts it");
}

static void test_mini(void)
{
    static uint8_t region[4096];
    memset(region, 0, sizeof region);
    emb_crash_retained_init(region, sizeof region);
    ok_eq(emb_crash_region.mini_entries, CONFIG_EMB_FAULT_RECORD_RING, "mini ring entries");
    ok(emb_crash_region.mini == region + sizeof region - 8 * 32, "the ring ends the region");
    ok_eq(emb_crash_mini_count(), 0, "empty ring");
    for (unsigned i = 0; i < 11; i++)
        emb_crash_mini_write(2, (uint16_t)(100 + i), 0, EMB_FAULT_BUS, (uint8_t)i, 0x4000u + i);
    ok_eq(emb_crash_mini_count(), 8, "11 writes keep the newest 8");
    uint8_t e[32];
    struct emb_crash_mini m;
    int order_ok = 1;
    for (unsigned i = 0; i < 8; i++) {
        if (emb_crash_mini_get(i, e) != EMB_OK || emb_crash_mini_decode(e, 32, &m, NULL) != 0 ||
            m.sequence != 3 + i || m.thread != 103 + i || m.pc != 0x4003u + i || m.partition != 2)
            order_ok = 0;
    }
    ok(order_ok, "oldest first: sequences 3..10 with their thread and pc");
    ok(emb_crash_mini_get(8, e) == EMB_E_NOTFOUND, "no ninth");
    struct emb_crash_mini all[16];
    ok_eq(emb_crash_mini_scan(region, sizeof region, 0, all, 16), 8, "the host finds the same 8");
    ok(all[0].sequence == 3 && all[7].sequence == 10, "sorted by sequence");
    /* A torn entry (sequence 10, in slot 2) drops out; the next write follows the newest
     * valid one (9) and takes its slot. */
    emb_crash_region.mini[32 * 2 + 20] ^= 1;
    ok_eq(emb_crash_mini_count(), 7, "a torn entry is not counted");
    emb_crash_mini_write(3, 1, 0, EMB_FAULT_BUS, 0, 0x5000);
    ok(emb_crash_mini_count() == 8 && emb_crash_mini_get(7, e) == EMB_OK &&
           emb_crash_mini_decode(e, 32, &m, NULL) == 0 && m.sequence == 10 && m.pc == 0x5000,
       "the next record is sequence 10, the newest, in the torn one's slot");
    emb_crash_mini_clear();
    ok_eq(emb_crash_mini_count(), 0, "cleared");
}

static void test_golden(const char *dir)
{
    char path[4096];
    size_t len, want_len;
    static uint8_t want[8192];

    snprintf(path, sizeof path, "%s/crash_v1.bin", dir);
    uint8_t *v1 = read_file(path, &len);
    want_len = golden_v1(want, sizeof want, cat);
    if (ok(v1 != NULL, "golden crash_v1.bin read")) {
        ok(len == want_len && !memcmp(v1, want, len), "today's v1 encoder writes the golden bytes");
        struct emb_crash_record r;
        ok(emb_crash_decode(v1, len, &r, NULL) == 0, "golden v1 decodes");
        check_v1_fields(&r, "golden v1");
        test_mutations(v1, len, "v1");
        free(v1);
    }
    snprintf(path, sizeof path, "%s/crash_v2.bin", dir);
    uint8_t *v2 = read_file(path, &len);
    want_len = golden_v2(want, sizeof want);
    if (ok(v2 != NULL, "golden crash_v2.bin read")) {
        ok(len == want_len && !memcmp(v2, want, len), "today's v2 encoder writes the golden bytes");
        struct emb_crash_record r;
        ok(emb_crash_decode(v2, len, &r, NULL) == 0 && r.pc == 0x3a4c, "golden v2 decodes");
        test_mutations(v2, len, "v2");
        free(v2);
    }
    snprintf(path, sizeof path, "%s/retained.bin", dir);
    uint8_t *ret = read_file(path, &len);
    if (ok(ret != NULL && len == 4096, "golden retained.bin read")) {
        struct emb_crash_record r;
        ok(emb_crash_decode(ret, len, &r, NULL) == 0, "the region's record decodes");
        check_v1_fields(&r, "retained");
        struct emb_crash_mini m[16];
        size_t n = emb_crash_mini_scan(ret, len, r.length, m, 16);
        int good = n == 8;
        for (size_t i = 0; good && i < 8; i++) {
            unsigned k = 3 + (unsigned)i;
            good = m[i].sequence == k && m[i].partition == 1 + k % 3 && m[i].thread == 10 + k &&
                   m[i].fault_class == EMB_FAULT_MEMORY && m[i].fault_code == k &&
                   m[i].pc == 0x2000u + 4 * k && (i == 0 || m[i].uptime_ticks >= m[i - 1].uptime_ticks);
        }
        ok(good, "its ring holds mini-records 3..10 of 11, in order");
        free(ret);
    }
}

/* ---- Registers per architecture ---- */

static const char *status_text(const struct emb_crash_status_item *it, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(it[i].name, name))
            return it[i].text;
    return "(absent)";
}

static void test_arch(void)
{
    static uint8_t buf[8192];
    size_t len = golden_v1(buf, sizeof buf, cat);
    struct emb_crash_record r;
    struct emb_crash_view v;
    emb_crash_decode(buf, len, &r, NULL);
    emb_crash_view(&r, &v);
    ok(v.arch == EMB_CRASH_ARCH_X86_64 && v.native && v.elf_machine == 62 && v.bias == GOLDEN_BIAS &&
           v.pc == GOLDEN_BIAS + 0x1234 && v.ra == GOLDEN_BIAS + 0x5678 && v.signo == 11 && v.si_code == 1 &&
           v.ra_source == EMB_CRASH_RA_STACK_SCAN && v.ra_offset == 24,
       "x86-64 view: bias, runtime pc and return address, signal");
    struct emb_crash_status_item st[16];
    size_t n = emb_crash_status_decode(&r, &v, st, 16);
    ok(!strcmp(status_text(st, n, "rflags"), "PF ZF IF RF"), "rflags 0x10246: %s", status_text(st, n, "rflags"));
    ok(!strcmp(status_text(st, n, "trap"), "page fault (#PF)"), "trap 14: %s", status_text(st, n, "trap"));
    ok(!strcmp(status_text(st, n, "error"), "page not present read user mode"), "error 4: %s",
       status_text(st, n, "error"));
    struct emb_crash_reg regs[64];
    n = emb_crash_registers(&r, &v, regs, 64);
    ok(n == 17 && !strcmp(regs[6].name, "rbp") && regs[6].value == 0x06060606u && !strcmp(regs[16].name, "rip"),
       "17 registers in DWARF order, 64-bit");
    ok(!strcmp(emb_crash_signal_name(11), "SIGSEGV") &&
           strstr(emb_crash_si_code_text(11, 1), "SEGV_MAPERR") && strstr(emb_crash_si_code_text(8, 1), "FPE_INTDIV"),
       "signal and si_code names");

    /* Cortex-M: the fault status registers in words. */
    uint32_t cm[EMB_CRASH_CM_COUNT] = {EMB_CRASH_LAYOUT_CORTEX_M, 0x61000003u, (1u << 1) | (1u << 7) | (1u << 25),
                                       1u << 30, 0x20001000u, 0, 0xFFFFFFFDu, 0};
    uint32_t gprs[16];
    for (unsigned i = 0; i < 16; i++)
        gprs[i] = 0x100u + i;
    struct emb_crash_info info = {.fault_class = EMB_FAULT_HARD, .pc = 0x0800123Cu, .lr = 0x08000401u,
                                  .status_regs = cm, .status_count = EMB_CRASH_CM_COUNT, .gprs = gprs,
                                  .gpr_count = 16};
    len = emb_crash_encode_v1(buf, sizeof buf, &info);
    ok(emb_crash_decode(buf, len, &r, NULL) == 0, "a Cortex-M record decodes");
    emb_crash_view(&r, &v);
    ok(v.arch == EMB_CRASH_ARCH_CORTEX_M && !v.native && v.bias == 0 && v.pc == 0x0800123Cu && v.elf_machine == 40,
       "Cortex-M view: no bias, pc as recorded");
    n = emb_crash_status_decode(&r, &v, st, 16);
    ok(!strcmp(status_text(st, n, "xPSR"), "exception 3 Z C T"), "xPSR: %s", status_text(st, n, "xPSR"));
    ok(!strcmp(status_text(st, n, "CFSR"), "DACCVIOL MMARVALID DIVBYZERO"), "CFSR: %s", status_text(st, n, "CFSR"));
    ok(!strcmp(status_text(st, n, "HFSR"), "FORCED") && !strcmp(status_text(st, n, "MMFAR"), "valid") &&
           !strcmp(status_text(st, n, "BFAR"), "not valid"),
       "HFSR forced, MMFAR valid, BFAR not");
    ok(!strcmp(status_text(st, n, "EXC_RETURN"), "return to thread mode, process stack"), "EXC_RETURN: %s",
       status_text(st, n, "EXC_RETURN"));
    n = emb_crash_registers(&r, &v, regs, 64);
    ok(n == 16 && !strcmp(regs[15].name, "pc") && regs[15].value == 0x10F, "r0-r12 sp lr pc");

    /* AArch64: ESR of a data abort on a write. */
    uint32_t a64[EMB_CRASH_NAT_COUNT] = {EMB_CRASH_LAYOUT_AARCH64, 11, 2};
    a64[EMB_CRASH_NAT_ERR] = (0x25u << 26) | (1u << 6);
    a64[EMB_CRASH_NAT_FLAGS] = 0x60000000u;
    struct emb_crash_info ai = {.status_regs = a64, .status_count = EMB_CRASH_NAT_COUNT};
    len = emb_crash_encode_v1(buf, sizeof buf, &ai);
    emb_crash_decode(buf, len, &r, NULL);
    emb_crash_view(&r, &v);
    n = emb_crash_status_decode(&r, &v, st, 16);
    ok(v.arch == EMB_CRASH_ARCH_AARCH64 && !strcmp(status_text(st, n, "esr"), "EC 0x25 data abort, write") &&
           !strcmp(status_text(st, n, "pstate"), "EL0 Z C"),
       "AArch64: %s; %s", status_text(st, n, "esr"), status_text(st, n, "pstate"));
    /* An unknown layout: registers shown raw, nothing decoded. */
    uint32_t odd[2] = {0x00090063u, 7};
    struct emb_crash_info oi = {.status_regs = odd, .status_count = 2, .gprs = odd, .gpr_count = 2};
    len = emb_crash_encode_v1(buf, sizeof buf, &oi);
    emb_crash_decode(buf, len, &r, NULL);
    emb_crash_view(&r, &v);
    ok(v.arch == EMB_CRASH_ARCH_NONE && emb_crash_status_decode(&r, &v, st, 16) == 0 &&
           emb_crash_registers(&r, &v, regs, 64) == 2 && !strcmp(regs[1].name, "w1"),
       "an unknown layout: raw words");
}

/* ---- The flight recorder from live rings ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int stage;
static struct emb_trace_ring *other_ring;

static void *other_main(void *arg)
{
    (void)arg;
    emb_native_context_name("other");
    for (uint32_t i = 0; i < 5; i++)
        EMB_TRACE_user_event(2, i, 0);
    other_ring = emb_trace_context_ring();
    pthread_mutex_lock(&lock);
    stage = 1;
    pthread_cond_broadcast(&cond);
    while (stage != 2)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void test_flight_collect(void)
{
    struct emb_native_config c = {.mode = EMB_TRACE_MODE_SNAPSHOT, .ring_packets = 8, .stream_fd = -1};
    ok(emb_native_init(&c) == EMB_OK, "native port up");
    pthread_t th;
    pthread_create(&th, NULL, other_main, NULL);
    pthread_mutex_lock(&lock);
    while (stage != 1)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    for (uint32_t i = 0; i < 300; i++)
        EMB_TRACE_user_event(1, i, 7);
    struct emb_trace_ring *mine = emb_trace_context_ring();
    emb_trace_flush(mine);
    static uint8_t area[32768];
    struct emb_trace_ring *others[] = {other_ring, &emb_trace_unclaimed_ring, NULL};
    uint8_t id[20] = {1, 2, 3};
    struct emb_crash_flight_identity ident = {.build_id = id, .build_id_len = 20, .pointer_size = 8,
                                              .port = "test"};
    uint16_t packets = 0;
    uint32_t len = emb_crash_flight_collect(area, sizeof area, mine, others, 3, &ident, &packets);
    ok(len == EMB_TSF_HEADER_BYTES(2) + (size_t)packets * CONFIG_EMB_TRACE_PACKET_SIZE,
       "header with two contexts and %u whole packets (%u bytes)", packets, len);
    struct emb_trace_options o = {.catalog = cat, .name = "flight"};
    struct emb_trace *t = emb_trace_decode(area, len, &o);
    const struct emb_trace_summary *s = emb_trace_summary(t);
    ok(!s->fatal && s->errors == 0, "it decodes cleanly (catalogue checksum and all)");
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(t, &n);
    uint32_t last_mine = 0, other_events = 0, mine_events = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ev[i]->ev || strcmp(ev[i]->ev->name, "user_event"))
            continue;
        uint32_t a = (uint32_t)emb_catalog_field_get_uint(&ev[i]->ev->fields[1], ev[i]->payload);
        if (emb_catalog_field_get_uint(&ev[i]->ev->fields[0], ev[i]->payload) == 1) {
            mine_events++;
            last_mine = a;
        } else {
            other_events++;
        }
    }
    ok(mine_events > 0 && last_mine == 299, "the faulting ring's newest event is there (%u events)",
       mine_events);
    ok_eq(other_events, 5, "the other context's open packet, committed part, all 5 events");
    ok(emb_trace_context_count(t) == 2 && !strcmp(emb_trace_context(t, 1)->name, "other"),
       "context table names the other context");
    emb_trace_free(t);

    /* Room for two packets: the other context gets one, the faulting ring one. */
    len = emb_crash_flight_collect(area, EMB_TSF_HEADER_BYTES(2) + 2 * CONFIG_EMB_TRACE_PACKET_SIZE + 100,
                                   mine, others, 3, &ident, &packets);
    ok(packets == 2, "a small area: one packet each (%u)", packets);
    len = emb_crash_flight_collect(area, EMB_TSF_HEADER_BYTES(2) + CONFIG_EMB_TRACE_PACKET_SIZE,
                                   mine, others, 3, &ident, &packets);
    ok(packets == 1 && len == EMB_TSF_HEADER_BYTES(1) + CONFIG_EMB_TRACE_PACKET_SIZE,
       "room for one packet: the faulting ring's, alone in the table");
    ok(emb_crash_flight_collect(area, 100, mine, others, 3, &ident, &packets) == 0 && packets == 0,
       "no room: nothing");

    pthread_mutex_lock(&lock);
    stage = 2;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(th, NULL);
    emb_native_shutdown();
}

/* A record the Cortex-M port's bus fault handler wrote on QEMU's mps2-an385 (the MPS2
 * example, fw_command 1): the layout with stack words, as the target writes it. */
static void test_golden_cortex_m(const char *dir)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/crash_cortex_m.bin", dir);
    uint8_t *b = read_file(path, &len);
    if (!ok(b != NULL, "golden crash_cortex_m.bin read"))
        return;
    struct emb_crash_record r;
    struct emb_crash_view v;
    ok(emb_crash_decode(b, len, &r, NULL) == 0, "the Cortex-M record decodes");
    emb_crash_view(&r, &v);
    ok(v.arch == EMB_CRASH_ARCH_CORTEX_M && r.fault_class == EMB_FAULT_BUS && r.fault_address == 0x50000000u &&
           r.pc == 0x84eu && r.sp == 0x2000dca8u && r.gpr_count == EMB_CRASH_CORTEX_M_GPRS,
       "cortex-m: a bus fault at 0x50000000, pc 0x84e, sp 0x2000dca8, 16 registers");
    /* sp to the top of its 16 KiB main stack is 160 bytes: 40 words kept, not 64. */
    ok(r.status_count == EMB_CRASH_CM_STACK + 40 && v.stack_words == 40,
       "cortex-m: the stack words from sp to the top of the stack (%u)", v.stack_words);
    struct emb_crash_status_item st[16];
    size_t n = emb_crash_status_decode(&r, &v, st, 16);
    const char *cfsr = status_text(st, n, "CFSR");
    ok(cfsr && strstr(cfsr, "PRECISERR") && strstr(cfsr, "BFARVALID"), "cortex-m: CFSR says %s", cfsr ? cfsr : "?");
    struct emb_trace_options o = {.catalog = cat, .name = "flight", .ignore_checksum = true,
                                  .base_offset = r.flight_offset};
    struct emb_trace *t = r.flight ? emb_trace_decode(r.flight, r.flight_len, &o) : NULL;
    uint64_t events = t ? emb_trace_summary(t)->events : 0;
    ok(t != NULL && events > 100, "cortex-m: its flight recorder decodes (%llu events)", (unsigned long long)events);
    if (t)
        emb_trace_free(t);
    test_mutations(b, len, "cortex-m");
    free(b);
}

/* The v2 record of a real fault whose addresses do not fit its 16-bit fields: the bus
 * fault the MPS2 firmware recorded on QEMU (fault address 0x50000000, sp 0x2000dca8; pc
 * 0x84e fits), written as the small record by today's encoder, must say which addresses
 * it holds only in part. */
static void test_v2_lost_cortex_m(const char *dir)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/crash_cortex_m.bin", dir);
    uint8_t *b = read_file(path, &len);
    struct emb_crash_record cm;
    if (!ok(b != NULL && emb_crash_decode(b, len, &cm, NULL) == 0, "the Cortex-M fault to write as v2"))
        return;
    struct emb_crash_info info = {
        .build_id = cm.build_id, .build_id_len = 20, .uptime_ticks = cm.uptime_ticks,
        .reset_reason = cm.reset_reason, .fault_class = cm.fault_class, .fault_code = cm.fault_code,
        .thread_index = cm.thread_index, .fault_address = cm.fault_address, .pc = cm.pc,
        .lr = cm.lr, .sp = cm.sp, .stack_base = cm.stack_base, .stack_size = cm.stack_size,
    };
    uint8_t v2[64];
    struct emb_crash_record r;
    size_t n = emb_crash_encode_v2(v2, sizeof v2, &info);
    ok(n > 0 && emb_crash_decode(v2, n, &r, NULL) == 0, "cortex-m fault as v2: decodes");
    ok(r.addr_lost == EMB_CRASH_V2_LOST_DATA,
       "cortex-m as v2: the data addresses (0x%08x, sp 0x%08x) are flagged lost, pc 0x%x is whole",
       cm.fault_address, cm.sp, cm.pc);
    ok(r.pc == cm.pc && r.sp == (cm.sp & 0xFFFFu), "and what the fields kept: pc whole, sp's low 16 bits");
    /* A word-address record (shift 1) cannot hold an odd byte address either. */
    info.addr_shift = 1;
    n = emb_crash_encode_v2(v2, sizeof v2, &info);
    ok(n > 0 && emb_crash_decode(v2, n, &r, NULL) == 0 && r.addr_shift == 1 &&
           (r.addr_lost & EMB_CRASH_V2_LOST_DATA),
       "shift 1: decodes with its shift and the flag");
    free(b);
}

/* Runs `emb crash` on a record with this program as the ELF; its output (static) or NULL. */
static const char *run_emb_crash(const char *emb, const char *record, const char *extra)
{
    static char out[1 << 15];
    char exe[4096], cmd[9000];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    snprintf(cmd, sizeof cmd, "'%s' crash --color=never --elf '%s' %s '%s' 2>&1", emb, exe, extra, record);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = '\0';
    return pclose(p) == 0 ? out : NULL;
}

/* A v2 record of this very process, with the code and stack addresses it really has (a
 * 64-bit process's: none fits 16 bits), shown by `emb crash`: the loss is said in the
 * text and in --json, and a partial pc is never symbolised as if it were whole. */
static void test_v2_lost_rendered(const char *emb, const char *scratch)
{
    char err[256];
    struct emb_elf *elf = emb_elf_open("/proc/self/exe", err, sizeof err);
    const uint8_t *id = NULL;
    size_t idn = elf ? emb_elf_build_id(elf, &id) : 0;
    if (!ok(idn >= 8, "own build id for a v2 record"))
        return;
    int local = 0;
    struct emb_crash_info info = {
        .build_id = id, .build_id_len = (uint8_t)idn, .fault_class = EMB_FAULT_MEMORY,
        .fault_address = (uint32_t)(uintptr_t)&local, .pc = (uint32_t)(uintptr_t)&test_v2_lost_rendered,
        .lr = (uint32_t)(uintptr_t)__builtin_return_address(0), .sp = (uint32_t)(uintptr_t)&local,
    };
    uint8_t v2[64];
    size_t n = emb_crash_encode_v2(v2, sizeof v2, &info);
    struct emb_crash_record r;
    ok(n > 0 && emb_crash_decode(v2, n, &r, NULL) == 0 &&
           r.addr_lost == (EMB_CRASH_V2_LOST_CODE | EMB_CRASH_V2_LOST_DATA),
       "this process's addresses as v2: code and data flagged lost");
    char path[4096];
    snprintf(path, sizeof path, "%s/crash_v2_lost.bin", scratch);
    FILE *f = fopen(path, "wb");
    ok(f && fwrite(v2, 1, n, f) == n && fclose(f) == 0, "saved to %s", path);
    const char *text = run_emb_crash(emb, path, "");
    if (ok(text != NULL, "emb crash shows it")) {
        diag("%.500s", text);
        ok(strstr(text, "pc or lr and fault address, sp or stack base did not fit the v2 record's 16-bit fields"),
           "text: says which addresses did not fit");
        ok(strstr(text, "\npc ") && strstr(text, "PARTIAL") && !strstr(text, "test_v2_lost_rendered"),
           "text: pc shown as partial, not symbolised");
    }
    const char *json = run_emb_crash(emb, path, "--json");
    ok(json && strstr(json, "\"code_addresses_partial\": true") &&
           strstr(json, "\"data_addresses_partial\": true") && strstr(json, "\"partial\": true"),
       "json: record.code/data_addresses_partial and pc.partial");
    /* A record with the reserved flag is refused, naming the byte. */
    v2[EMB_CRASH_V2_OFF_ADDR_SHIFT] |= EMB_CRASH_V2_LOST_RESERVED;
    emb_put_le32(v2 + n - 4, emb_crc32(0, v2, n - 4));
    struct refusal e;
    ok(decode(v2, n, &r, &e) != 0 && e.offset == EMB_CRASH_V2_OFF_ADDR_SHIFT,
       "the reserved flag bit is refused at byte 23: %s", e.message);
    emb_elf_close(elf);
}

int main(int argc, char **argv)
{
    cat = emb_catalog_builtin();
    test_v1();
    test_v2();
    test_bad_input();
    test_region();
    test_mini();
    test_arch();
    test_golden(argc > 1 ? argv[1] : "tests/support/golden");
    test_golden_cortex_m(argc > 1 ? argv[1] : "tests/support/golden");
    test_v2_lost_cortex_m(argc > 1 ? argv[1] : "tests/support/golden");
    if (argc > 3)
        test_v2_lost_rendered(argv[2], argv[3]);
    test_flight_collect();
    return emb_test_done();
}
