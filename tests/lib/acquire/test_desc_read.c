/* The descriptor reader: the golden images (64-bit little-endian and 32-bit big-endian,
 * with structure layouts unlike the library's), the trace it pulls out of their rings,
 * hostile images (absurd counts and strides, cyclic and dangling pointers, a spent
 * budget, every descriptor byte flipped), and this very process read through its own
 * descriptor, which checks that the library's structures are what the descriptor says. */
#define _GNU_SOURCE

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <emb/crash.h>
#include <emb/hooks.h>
#include <emb/monitor.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include "crash_decode.h"
#include "desc_golden.h"
#include "desc_read.h"
#include "elf_image.h"
#include "harness.h"
#include "trace_decode.h"

static const struct emb_catalog *cat;

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

struct session {
    struct emb_mem *m;
    struct emb_desc_image d;
    struct emb_desc_model md;
    struct emb_problems is;
    bool found;
};

static void open_image(struct session *s, const uint8_t *img, size_t len)
{
    memset(s, 0, sizeof *s);
    s->m = emb_mem_open_buffer(img, len, DG_BASE);
    s->found = emb_desc_find(s->m, 0, 1 << 20, &s->d, NULL) == 0;
    if (s->found)
        emb_desc_read(s->m, &s->d, &s->md, &s->is);
}

static void close_image(struct session *s)
{
    emb_desc_model_free(&s->md);
    emb_problems_free(&s->is);
    emb_mem_close(s->m);
}

static const char *stat(const struct emb_desc_stat *st, size_t n, const char *name, uint64_t *v)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(st[i].name, name)) {
            *v = st[i].value;
            return name;
        }
    return NULL;
}

static struct emb_trace *dump_and_decode(struct session *s, FILE **keep)
{
    FILE *f = tmpfile();
    long n = emb_desc_dump_trace(s->m, &s->d, &s->md, cat, f, &s->is);
    (void)n;
    fflush(f);
    size_t len = (size_t)ftell(f);
    uint8_t *buf = malloc(len + 1);
    rewind(f);
    if (fread(buf, 1, len, f) != len)
        len = 0;
    fclose(f);
    *keep = (FILE *)buf;
    struct emb_trace_options o = {.catalog = cat, .name = "dump", .ignore_checksum = true};
    return emb_trace_decode(buf, len, &o);
}

static void check_golden_model(const char *what, const uint8_t *img, size_t len, unsigned w, bool little)
{
    struct session s;
    open_image(&s, img, len);
    if (!ok(s.found, "%s: descriptor found by its magic", what))
        return;
    const struct emb_desc_model *m = &s.md;
    ok(s.d.ptr_size == w && s.d.little == little && s.d.version == 1 && s.d.nsections == 10,
       "%s: %u-bit %s-endian, version 1, 10 sections", what, w * 8, little ? "little" : "big");
    ok(emb_problems_at_least(&s.is, EMB_NOTE) == 0, "%s: no problems (%s)", what,
       s.is.n ? s.is.items[0].message : "");
    ok(m->ready && m->config_hash == 0xC0FFEE11u && m->clock_hz == 100000000u && m->packet_size == 256 &&
           m->ring_packets == 4 && m->class_mask == 0x7FFF && m->build_id_len == 20 &&
           !memcmp(m->build_id, golden_build_id, 20),
       "%s: identity (hash, clock, packets, build id)", what);
    ok(!strcmp(m->port, w == 8 ? "synthetic-64" : "synthetic-32be") && !strcmp(m->profile, "base"),
       "%s: port '%s'", what, m->port);
    ok(m->ncontexts == 2 && m->context_capacity == 4, "%s: 2 live contexts of 4", what);
    if (m->ncontexts == 2) {
        const struct emb_desc_context *c0 = &m->contexts[0], *c1 = &m->contexts[1];
        ok(!strcmp(c0->name, "cpu0") && !strcmp(c0->state_name, "live") && c0->os_id == 100 &&
               c0->ring_ok && c0->packets_held == 2 && c0->open_bytes == 120 && c0->packets_opened == 3 &&
               c0->discarded == 3 && c0->context_kind == EMB_CONTEXT_CPU,
           "%s: cpu0: 2 packets held, 120 bytes open, 3 opened, 3 discarded", what);
        ok(!strcmp(c1->name, "worker") && c1->ring_ok && c1->packets_held == 1 && c1->open_bytes == 0 &&
               c1->stack_used == 0x200 && c1->stack_size == 0x800,
           "%s: worker: 1 packet held, 512 of 2048 stack bytes used", what);
        uint64_t v = 0, b = 0;
        ok(stat(c1->stats, c1->nstats, "switches", &v) && v == 11 &&
               stat(c1->stats, c1->nstats, "run_cycles", &b) && b == 5001,
           "%s: thread statistics by name (switches 11, run 5001)", what);
    }
    ok(m->nmonitors == 6 && m->monitors[0].worst == 1234 && m->monitors[0].over == 2 &&
           m->monitors[0].threshold == 1000 && m->monitors[0].pc == 0x8000123u &&
           !strcmp(m->monitors[0].name, "irq_lock") && !strcmp(m->monitors[5].name, "isr 1") &&
           m->monitors[5].worst == 77,
       "%s: monitors with names, worst, over, threshold, opener", what);
    uint64_t v = 0;
    ok(m->nobjects == 2 && !strcmp(m->objects[0].name, "bus-lock") &&
           !strcmp(m->objects[0].type_name, "mutex") &&
           stat(m->objects[0].stats, m->objects[0].nstats, "contentions", &v) && v == 3 &&
           !strcmp(m->objects[1].type_name, "workq") &&
           stat(m->objects[1].stats, m->objects[1].nstats, "max_queue", &v) && v == 6,
       "%s: objects with their type and statistics", what);
    ok(stat(m->cpu, m->ncpu, "irq_count", &v) && v == 55 && stat(m->cpu, m->ncpu, "isr_cycles", &v) &&
           v == 0x189ABCDEFull,
       "%s: CPU statistics, 64-bit pairs", what);
    struct emb_crash_record r;
    ok(m->has_crash && m->crash_cap == 0x1000 && m->crash_bytes &&
           emb_crash_decode(m->crash_bytes, m->crash_cap, &r, NULL) == 0 && r.pc == 0x1234,
       "%s: the crash record area holds the golden record", what);
    struct emb_crash_mini mini[4];
    ok(m->has_mini && m->mini_entries == 4 &&
           emb_crash_mini_scan(m->mini_bytes, 4 * 32, 0, mini, 4) == 2 && mini[1].sequence == 8,
       "%s: two mini-records", what);
    ok(m->has_log && m->log_words == 0, "%s: the log section is there, empty", what);
    FILE *keep;
    struct emb_trace *t = dump_and_decode(&s, &keep);
    const struct emb_trace_summary *ts = emb_trace_summary(t);
    unsigned expected_errors = cat->checksum != GOLDEN_CATALOG_CHECKSUM; /* another day's catalogue */
    ok(!ts->fatal && ts->errors == expected_errors && ts->packets == 4 && ts->events == 18 &&
           ts->discarded == 5,
       "%s: the pulled-out trace: 4 packets, 18 events (3 from the open packet), 5 discarded", what);
    ok(emb_trace_info(t)->end_ts == 1420, "%s: the open packet ends at its last event", what);
    emb_trace_free(t);
    free(keep);
    close_image(&s);
}

static void test_golden(const char *dir)
{
    static struct dg g;
    const char *names[] = {"descriptor_le64.bin", "descriptor_be32.bin"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len = 0;
        uint8_t *img = read_file(path, &len);
        dg_build(&g, i == 0 ? 8 : 4, i == 0, cat);
        if (!ok(img != NULL && len == DG_SIZE, "%s read", names[i]))
            continue;
        ok(!memcmp(img, g.img, DG_SIZE), "%s: the generator still writes the same bytes", names[i]);
        check_golden_model(names[i], img, len, i == 0 ? 8 : 4, i == 0);
        free(img);
    }
}

/* ---- Hostile images ---- */

static void put(struct dg *g, size_t off, unsigned size, uint64_t v)
{
    dg_put(g, off, size, v);
}

/* Runs find, read and dump on a mutated image; reports whether problems were reported. */
static bool hostile(const struct dg *g, const char *what, uint64_t budget)
{
    struct session s;
    memset(&s, 0, sizeof s);
    s.m = emb_mem_open_buffer(g->img, DG_SIZE, DG_BASE);
    if (budget)
        emb_mem_set_budget(s.m, budget);
    bool reported = true;
    if (emb_desc_find(s.m, 0, 1 << 20, &s.d, &s.is) == 0) {
        emb_desc_read(s.m, &s.d, &s.md, &s.is);
        FILE *f = fopen("/dev/null", "wb");
        emb_desc_dump_trace(s.m, &s.d, &s.md, cat, f, &s.is);
        fclose(f);
        reported = emb_problems_at_least(&s.is, EMB_NOTE) > 0;
    }
    (void)what;
    close_image(&s);
    return reported;
}

static void test_hostile(void)
{
    static struct dg g;
    const unsigned w = 8;
    size_t v = DG_VARS;
#define MUTATE(what, stmt)                                                                    \
    do {                                                                                      \
        dg_build(&g, w, true, cat);                                                           \
        stmt;                                                                                 \
        ok(hostile(&g, what, 0), "%s: refused or reported, no crash", what);                  \
    } while (0)
    MUTATE("descriptor length beyond the image", put(&g, 8, 4, 0xFFFFFFFFu));
    MUTATE("a section with 2^40 words", put(&g, g.body[EMB_DESC_IDENTITY] - w, w, 1ull << 40));
    MUTATE("a self address that lies", put(&g, 16, w, DG_BASE + 8));
    MUTATE("pointer size 3", g.img[5] = 3);
    MUTATE("absurd context capacity and count",
           (put(&g, v + DGV_CTX_CAP, 4, 0xFFFFFFFFu), put(&g, v + DGV_CTX_COUNT, 4, 0xFFFFFFFFu)));
    MUTATE("context stride 0", put(&g, v + DGV_CTX_STRIDE, 4, 0));
    MUTATE("context stride 16 MiB", put(&g, v + DGV_CTX_STRIDE, 4, 16u << 20));
    MUTATE("context table pointing at itself",
           (dg_ptr(&g, v + DGV_CTX_TABLE, DGV_CTX_TABLE + DG_VARS), put(&g, v + DGV_CTX_COUNT, 4, 4)));
    MUTATE("context table outside the image", put(&g, v + DGV_CTX_TABLE, w, 0xFFFFFFFFFFFFF000ull));
    MUTATE("a ring of 4 GiB", put(&g, DG_RINGS + 44, 4, 0xFFFFFFFFu));
    MUTATE("a ring whose slots disagree with its size", put(&g, DG_RINGS + 48, 4, 7));
    MUTATE("a ring buffer pointer outside the image", put(&g, DG_RINGS + DG_RG_BUF, w, 0x10));
    MUTATE("a million monitors", put(&g, g.body[EMB_DESC_MONITORS] + w, w, 1000000));
    MUTATE("absurd object count", put(&g, v + DGV_OBJ_COUNT, 4, 0x7FFFFFFFu));
    MUTATE("mini-record ring of 2^30 entries", put(&g, g.body[EMB_DESC_MINI] + w, w, 1u << 30));
    /* A field that lies outside its entry, and a painted stack larger than its stack. */
    MUTATE("a statistics field outside the entry", put(&g, v + DGV_CTX_STRIDE, 4, 24));
    MUTATE("a painted stack of 1 GiB", put(&g, DG_CONTEXTS + DG_CX_STRIDE(w) + DG_CX_PAINTED(w), 4, 1u << 30));
    dg_build(&g, w, true, cat);
    ok(hostile(&g, "budget", 2000), "a budget of 2000 bytes: the reader stops and says so");

    /* Strings without an end: names are bounded. */
    dg_build(&g, w, true, cat);
    memset(g.img + DG_STRINGS, 'A', 0x800);
    struct session s;
    open_image(&s, g.img, DG_SIZE);
    ok(s.found && strlen(s.md.port) < sizeof s.md.port, "unterminated strings are cut at their field");
    close_image(&s);

    /* Every byte of the descriptor flipped, one at a time. */
    size_t flips = 0, survived = 0;
    dg_build(&g, w, true, cat);
    size_t dlen = g.desc_len;
    for (size_t i = 0; i < dlen; i++) {
        dg_build(&g, w, true, cat);
        g.img[i] ^= 0xFF;
        hostile(&g, "flip", 0);
        flips++;
        survived++;
    }
    ok(flips == dlen && survived == flips, "every one of the descriptor's %zu bytes flipped: no crash", dlen);
#undef MUTATE
}

/* ---- This process, through its own descriptor ---- */

__attribute__((noinline)) static void held_here(void)
{
    emb_port_irq_state s = emb_irq_lock();
    for (volatile int i = 0; i < 100000; i++) {
    }
    emb_irq_unlock(s);
}

static void test_self(const char *dir)
{
    struct emb_native_config c = {.mode = EMB_TRACE_MODE_SNAPSHOT, .ring_packets = 8, .stream_fd = -1};
    ok(emb_native_init(&c) == EMB_OK, "native port up");
    char path[4096];
    snprintf(path, sizeof path, "%s/desc_self_retained.bin", dir);
    unlink(path);
    struct emb_native_crash_config cc = {.retained_path = path};
    ok(emb_native_crash_init(&cc) == EMB_OK, "retained region");
    struct emb_native_mutex mx;
    emb_native_mutex_init(&mx, "self-lock");
    for (uint32_t i = 0; i < 100; i++)
        EMB_TRACE_user_event(9, i, 0);
    held_here();

    char err[256];
    struct emb_elf *elf = emb_elf_open("/proc/self/exe", err, sizeof err);
    struct emb_mem *m = emb_mem_open_pid(getpid(), NULL);
    uint64_t sym = 0, bias = 0;
    ok(elf && m && emb_elf_symbol(elf, "emb_debug_descriptor", &sym, NULL) == 0 &&
           emb_mem_bias(m, elf, &bias) == 0,
       "symbol and load bias");
    struct emb_desc_image d;
    struct emb_problems found = {0};
    ok(emb_desc_find(m, sym + bias, 0, &d, &found) == 0 && d.addr == (uintptr_t)&emb_debug_descriptor,
       "found by symbol at its address (%s)", found.n ? found.items[0].message : "");
    emb_problems_free(&found);
    ok(d.length == sizeof emb_debug_descriptor && d.ptr_size == sizeof(void *),
       "length and pointer size agree with the C structure");
    struct emb_desc_model md;
    struct emb_problems is = {0};
    emb_desc_read(m, &d, &md, &is);
    ok(emb_problems_at_least(&is, EMB_NOTE) == 0, "read without problems (%s)",
       is.n ? is.items[0].message : "");
    emb_problems_free(&is);
    struct emb_trace_ring *ring = emb_trace_context_ring();
    const struct emb_desc_context *main_ctx = md.ncontexts ? &md.contexts[0] : NULL;
    ok(main_ctx && !strcmp(main_ctx->name, "main") && main_ctx->os_id == (int32_t)syscall(SYS_gettid) &&
           main_ctx->ring == (uintptr_t)ring && main_ctx->write_pos == ring->write_pos &&
           main_ctx->buf == (uintptr_t)ring->buf && main_ctx->slot_mask == 7 && main_ctx->ring_ok,
       "context 0 is main: tid, ring address, write position, buffer, slots agree");
    emb_monitor_t mon;
    emb_monitor_get(EMB_MONITOR_IRQ_LOCK, &mon);
    ok(md.nmonitors == EMB_MONITOR_COUNT && md.monitors[0].worst == mon.worst_cycles &&
           md.monitors[0].pc == mon.opener_pc,
       "the interrupt-lock monitor agrees");
    struct emb_elf_frame f[4];
    size_t nf = emb_elf_symbolize(elf, md.monitors[0].pc - bias, f, 4, NULL);
    ok(nf && !strcmp(f[nf - 1].function, "held_here"), "its opener symbolises to held_here");
    int found_obj = 0;
    for (size_t i = 0; i < md.nobjects; i++)
        found_obj |= !strcmp(md.objects[i].name, "self-lock") && md.objects[i].handle == mx.handle;
    ok(found_obj, "the mutex is in the object registry");
    ok(md.has_crash && md.crash_area == (uintptr_t)emb_crash_region.record &&
           md.crash_cap == emb_crash_region.record_cap && md.has_mini && md.mini_entries == 8,
       "crash record area and mini ring");
    ok(md.packet_size == CONFIG_EMB_TRACE_PACKET_SIZE && md.ring_packets == 8 &&
           !memcmp(md.uuid, emb_trace_uuid(), 16) && md.clock_hz == emb_port_timestamp_hz(),
       "packet size, ring packets, uuid, clock");
    struct session s = {.m = m, .d = d, .md = md};
    FILE *keep;
    struct emb_trace *t = dump_and_decode(&s, &keep);
    size_t n, mine = 0;
    const struct emb_trace_event *const *ev = emb_trace_events(t, &n);
    for (size_t i = 0; i < n; i++)
        mine += ev[i]->ev && !strcmp(ev[i]->ev->name, "user_event") &&
                emb_catalog_field_get_uint(&ev[i]->ev->fields[0], ev[i]->payload) == 9;
    ok(!emb_trace_summary(t)->fatal && emb_trace_summary(t)->errors == 0 && mine == 100,
       "the trace pulled out of this process holds its 100 events (%zu)", mine);
    emb_trace_free(t);
    free(keep);
    emb_desc_model_free(&md);
    emb_mem_close(m);
    emb_elf_close(elf);
    emb_native_crash_shutdown();
    emb_native_shutdown();
}

int main(int argc, char **argv)
{
    cat = emb_catalog_builtin();
    test_golden(argc > 1 ? argv[1] : "tests/support/golden");
    test_hostile();
    test_self(argc > 2 ? argv[2] : "/tmp");
    return emb_test_done();
}
