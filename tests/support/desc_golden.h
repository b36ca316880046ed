/* Synthetic memory images holding a debug descriptor and everything it points at, written
 * byte by byte from docs/formats/descriptor.md, not from the library's structures: the
 * context entries, rings, monitors and objects have layouts of their own (different from
 * the native port's), so a reader that passes on these relies on the descriptor alone.
 * Two targets: 64-bit little-endian and 32-bit big-endian. Shared by the program that
 * wrote tests/support/golden/descriptor_*.bin and the test that reads them. */
#ifndef EMB_TEST_DESC_GOLDEN_H
#define EMB_TEST_DESC_GOLDEN_H

#include <emb/descriptor.h>

#include <emb/crc.h>

#include "crash_golden.h"

#define DG_BASE 0x20000000ull
#define DG_SIZE 0x8000u
#define DG_PACKET 256u

/* Where things are, as offsets from DG_BASE. */
enum {
    DG_DESC = 0x0000,
    DG_STRINGS = 0x0800,
    DG_VARS = 0x1000,
    DG_CONTEXTS = 0x1400,
    DG_RINGS = 0x1800,
    DG_BUF0 = 0x2000, /* 4 packets */
    DG_BUF1 = 0x2400, /* 2 packets */
    DG_COMMIT0 = 0x2600,
    DG_COMMIT1 = 0x2620,
    DG_MONITORS = 0x2800,
    DG_OBJECTS = 0x2A00,
    DG_CPU = 0x2C00,
    DG_CRASH = 0x3000, /* 0x1000 bytes */
    DG_MINI = 0x4000,  /* 4 entries */
    DG_STACK = 0x5000, /* context 1's painted stack: 0x800 bytes */
};

/* Registry variables inside DG_VARS. */
enum {
    DGV_BUILD_ID = 0x00, DGV_BUILD_ID_LEN = 0x20, DGV_READY = 0x24, DGV_CLOCK_HZ = 0x28,
    DGV_CLOCK_OFFSET = 0x30, DGV_UUID = 0x38, DGV_RING_PACKETS = 0x48, DGV_CLASS_MASK = 0x4C,
    DGV_MODE = 0x50, DGV_CTX_TABLE = 0x58, DGV_CTX_STRIDE = 0x60, DGV_CTX_CAP = 0x64,
    DGV_CTX_COUNT = 0x68, DGV_OBJ_TABLE = 0x70, DGV_OBJ_STRIDE = 0x78, DGV_OBJ_CAP = 0x7C,
    DGV_OBJ_COUNT = 0x80, DGV_CRASH_PTR = 0x88, DGV_CRASH_CAP = 0x90, DGV_CRASH_FOUND = 0x94,
    DGV_CRASH_FOUND_LEN = 0x98, DGV_MINI_PTR = 0xA0, DGV_NAMES = 0x100, /* string pointer arrays */
};

struct dg {
    uint8_t img[DG_SIZE];
    unsigned w;   /* pointer size */
    bool little;
    size_t desc_len;
    size_t body[11]; /* offset of each section's body, by kind */
};

static inline void dg_put(struct dg *g, size_t off, unsigned size, uint64_t v)
{
    for (unsigned i = 0; i < size; i++)
        g->img[off + (g->little ? i : size - 1 - i)] = (uint8_t)(v >> (8 * i));
}

static inline void dg_ptr(struct dg *g, size_t off, uint64_t addr_off)
{
    dg_put(g, off, g->w, addr_off ? DG_BASE + addr_off : 0);
}

static inline uint64_t dg_field(unsigned off, unsigned size, unsigned type)
{
    return off | (uint64_t)size << 16 | (uint64_t)type << 24;
}

/* Layouts of this image's own structures (W = pointer size). */
#define DG_CX_RING 8u
#define DG_CX_STACK_LOW(w) (8u + (w))
#define DG_CX_ENTRY(w) (8u + 2u * (w))
#define DG_CX_STACK_SIZE(w) (8u + 3u * (w))
#define DG_CX_PAINTED(w) (12u + 3u * (w))
#define DG_CX_STATS(w) (16u + 3u * (w))
#define DG_CX_STRIDE(w) ((DG_CX_STATS(w) + 40u + 7u) & ~7u)
#define DG_RG_BUF 72u
#define DG_RG_COMMIT(w) (72u + (w))
#define DG_MO_STRIDE(w) (16u + (w))
#define DG_OB_STRIDE 48u

/* Strings: writes s at *at, returns its offset. */
static inline size_t dg_string(struct dg *g, size_t *at, const char *s)
{
    size_t off = *at, n = strlen(s) + 1;
    memcpy(g->img + off, s, n);
    *at += (n + 3) & ~(size_t)3;
    return off;
}

/* The descriptor: header, then sections as (tag, words, body). */
static inline void dg_section(struct dg *g, size_t *off, unsigned kind, unsigned version,
                              const uint64_t *body, const bool *is_ptr, size_t n)
{
    dg_put(g, *off, g->w, kind | (uint64_t)version << 16);
    dg_put(g, *off + g->w, g->w, n);
    *off += 2 * g->w;
    if (kind < 11)
        g->body[kind] = *off;
    for (size_t i = 0; i < n; i++, *off += g->w) {
        if (is_ptr && is_ptr[i])
            dg_ptr(g, *off, body[i]);
        else
            dg_put(g, *off, g->w, body[i]);
    }
}

/* Packets for the rings, built as a trace stream and copied out of it. */
static inline void dg_packets(struct dg *g, const struct emb_catalog *cat, uint32_t checksum)
{
    struct tb b;
    static const struct tb_ctx ctx[] = {{.id = 0, .kind = EMB_CONTEXT_CPU, .name = "cpu0"}};
    tb_begin(&b, checksum, DG_PACKET, 100000000u, 0, ctx, 1);
    size_t p0 = tb_open(&b, 0, EMB_CONTEXT_CPU, 0, 1000);
    for (unsigned i = 0; i < 8; i++)
        tb_event(&b, cat, 1000 + 10 * i, 0, "user_event", TB_V(1, i, 0));
    tb_close(&b, 1100, 0);
    size_t p1 = tb_open(&b, 0, EMB_CONTEXT_CPU, 1, 1200);
    tb_event(&b, cat, 1200, tb_isr(1), "irq_enter", TB_V(7));
    tb_event(&b, cat, 1210, tb_isr(1), "irq_exit", TB_V(7, 0));
    tb_event(&b, cat, 1220, 0, "mutex_lock", TB_V(0x11, 0));
    tb_close(&b, 1300, 0);
    size_t p2 = tb_open(&b, 0, EMB_CONTEXT_CPU, 2, 1400);
    tb_event(&b, cat, 1400, 0, "user_event", TB_V(2, 100, 0));
    tb_event(&b, cat, 1410, 0, "user_event", TB_V(2, 101, 0));
    tb_event(&b, cat, 1420, 0, "mutex_unlock", TB_V(0x11, 0xFFFF));
    uint32_t open_used = b.pos; /* left open: no closing fields */
    size_t q0 = tb_open(&b, 1, EMB_CONTEXT_THREAD, 0, 900);
    tb_event(&b, cat, 900, 0, "thread_start", TB_V(1));
    tb_event(&b, cat, 910, 0, "frame_start", TB_V(5));
    tb_event(&b, cat, 920, 0, "frame_end", TB_V(5));
    tb_event(&b, cat, 930, 0, "thread_exit", TB_V(1, 0));
    tb_close(&b, 950, 2);
    memcpy(g->img + DG_BUF0, b.buf + p0, DG_PACKET);
    memcpy(g->img + DG_BUF0 + DG_PACKET, b.buf + p1, DG_PACKET);
    memcpy(g->img + DG_BUF0 + 2 * DG_PACKET, b.buf + p2, open_used);
    memcpy(g->img + DG_BUF1, b.buf + q0, DG_PACKET);
    /* Commits in the target's byte order: two whole packets and the open one's bytes. */
    dg_put(g, DG_COMMIT0, 4, DG_PACKET);
    dg_put(g, DG_COMMIT0 + 4, 4, DG_PACKET);
    dg_put(g, DG_COMMIT0 + 8, 4, open_used);
    dg_put(g, DG_COMMIT1, 4, DG_PACKET);
    /* Ring 0: CPU context, 4 slots, write position in the open packet. */
    size_t r0 = DG_RINGS, r1 = DG_RINGS + 0x100;
    memcpy(g->img + r0, "cpu0", 5);
    dg_put(g, r0 + 20, 2, 0);
    dg_put(g, r0 + 22, 2, EMB_CONTEXT_CPU);
    dg_put(g, r0 + 24, 4, 2 * DG_PACKET + open_used);
    dg_put(g, r0 + 32, 4, 3); /* discarded */
    dg_put(g, r0 + 44, 4, 4 * DG_PACKET - 1);
    dg_put(g, r0 + 48, 4, 3);
    g->img[r0 + 52] = 8;
    g->img[r0 + 53] = 2;
    dg_ptr(g, r0 + DG_RG_BUF, DG_BUF0);
    dg_ptr(g, r0 + DG_RG_COMMIT(g->w), DG_COMMIT0);
    /* Ring 1: a thread, one packet, nothing open. */
    memcpy(g->img + r1, "worker", 7);
    dg_put(g, r1 + 20, 2, 1);
    dg_put(g, r1 + 22, 2, EMB_CONTEXT_THREAD);
    dg_put(g, r1 + 24, 4, DG_PACKET);
    dg_put(g, r1 + 32, 4, 2);
    dg_put(g, r1 + 44, 4, 2 * DG_PACKET - 1);
    dg_put(g, r1 + 48, 4, 1);
    g->img[r1 + 52] = 8;
    g->img[r1 + 53] = 1;
    dg_ptr(g, r1 + DG_RG_BUF, DG_BUF1);
    dg_ptr(g, r1 + DG_RG_COMMIT(g->w), DG_COMMIT1);
    free(b.buf);
}

/* Builds the whole image for a target of pointer size w and the given byte order. */
static inline void dg_build(struct dg *g, unsigned w, bool little, const struct emb_catalog *cat)
{
    memset(g, 0, sizeof *g);
    g->w = w;
    g->little = little;
    const uint32_t checksum = GOLDEN_CATALOG_CHECKSUM;
    size_t at = DG_STRINGS;
    size_t s_port = dg_string(g, &at, w == 8 ? "synthetic-64" : "synthetic-32be");
    size_t s_profile = dg_string(g, &at, "base");
    static const char *const types[] = {"thread", "mutex", "sem", "queue", "pipe", "pool",
                                        "timer", "event", "cond", "workq", "work", "irq"};
    static const char *const states[] = {"free", "live", "exited"};
    static const char *const mons[] = {"irq_lock", "sched_lock", "thread_run", "work_handler"};
    static const char *const tstats[] = {"switches", "contentions", "run_cycles", "blocked_cycles",
                                         "stack_high_water"};
    const uint64_t tfields[] = {dg_field(0, 4, 0), dg_field(4, 4, 0), dg_field(8, 8, 0),
                                       dg_field(16, 8, 0), dg_field(24, 4, 0)};
    static const char *const ostats[] = {"acquisitions", "contentions", "max_wait_cycles", "max_queue",
                                         "wait_cycles"};
    const uint64_t ofields[] = {dg_field(0, 4, 0), dg_field(4, 4, 0), dg_field(8, 4, 0),
                                       dg_field(12, 4, 0), dg_field(16, 8, 0)};
    static const char *const cstats[] = {"irq_count", "isr_cycles", "idle_cycles", "reset_ts"};
    const uint64_t cfields[] = {dg_field(0, 4, 0), dg_field(8, 8, 4), dg_field(16, 8, 4),
                                       dg_field(24, 8, 4)};
    /* String pointer arrays at DG_VARS + DGV_NAMES. */
    size_t arrays = DG_VARS + DGV_NAMES, a_types = arrays;
    for (size_t i = 0; i < 12; i++)
        dg_ptr(g, arrays + i * w, dg_string(g, &at, types[i]));
    size_t a_states = arrays + 12 * w;
    for (size_t i = 0; i < 3; i++)
        dg_ptr(g, a_states + i * w, dg_string(g, &at, states[i]));
    size_t a_mons = a_states + 3 * w;
    for (size_t i = 0; i < 4; i++)
        dg_ptr(g, a_mons + i * w, dg_string(g, &at, mons[i]));
    size_t t_threads = a_mons + 4 * w;
    for (size_t i = 0; i < 5; i++) {
        dg_ptr(g, t_threads + 2 * i * w, dg_string(g, &at, tstats[i]));
        dg_put(g, t_threads + (2 * i + 1) * w, w, tfields[i]);
    }
    size_t t_objects = t_threads + 10 * w;
    for (size_t i = 0; i < 5; i++) {
        dg_ptr(g, t_objects + 2 * i * w, dg_string(g, &at, ostats[i]));
        dg_put(g, t_objects + (2 * i + 1) * w, w, ofields[i]);
    }
    size_t t_cpu = t_objects + 10 * w;
    for (size_t i = 0; i < 4; i++) {
        dg_ptr(g, t_cpu + 2 * i * w, dg_string(g, &at, cstats[i]));
        dg_put(g, t_cpu + (2 * i + 1) * w, w, cfields[i]);
    }

    /* Registry variables. */
    size_t v = DG_VARS;
    for (unsigned i = 0; i < 20; i++)
        g->img[v + DGV_BUILD_ID + i] = golden_build_id[i];
    dg_put(g, v + DGV_BUILD_ID_LEN, 4, 20);
    dg_put(g, v + DGV_READY, 4, 1);
    dg_put(g, v + DGV_CLOCK_HZ, 8, 100000000u);
    dg_put(g, v + DGV_CLOCK_OFFSET, 8, 0);
    for (unsigned i = 0; i < 16; i++)
        g->img[v + DGV_UUID + i] = (uint8_t)(0xA0 + i);
    dg_put(g, v + DGV_RING_PACKETS, 4, 4);
    dg_put(g, v + DGV_CLASS_MASK, 4, 0x7FFF);
    dg_put(g, v + DGV_MODE, 4, 0);
    dg_ptr(g, v + DGV_CTX_TABLE, DG_CONTEXTS);
    dg_put(g, v + DGV_CTX_STRIDE, 4, DG_CX_STRIDE(w));
    dg_put(g, v + DGV_CTX_CAP, 4, 4);
    dg_put(g, v + DGV_CTX_COUNT, 4, 3);
    dg_ptr(g, v + DGV_OBJ_TABLE, DG_OBJECTS);
    dg_put(g, v + DGV_OBJ_STRIDE, 4, DG_OB_STRIDE);
    dg_put(g, v + DGV_OBJ_CAP, 4, 8);
    dg_put(g, v + DGV_OBJ_COUNT, 4, 2);
    dg_ptr(g, v + DGV_CRASH_PTR, DG_CRASH);
    dg_put(g, v + DGV_CRASH_CAP, 4, 0x1000);
    dg_put(g, v + DGV_CRASH_FOUND, 4, 0);
    dg_put(g, v + DGV_MINI_PTR, w, 0);
    dg_ptr(g, v + DGV_MINI_PTR, DG_MINI);

    /* Contexts: 0 the CPU, 1 a worker with a painted stack (both live), 2 free. */
    size_t stride = DG_CX_STRIDE(w);
    for (unsigned i = 0; i < 2; i++) {
        size_t e = DG_CONTEXTS + i * stride;
        dg_put(g, e + 0, 4, EMB_CONTEXT_LIVE);
        dg_put(g, e + 4, 4, 100 + i);
        dg_ptr(g, e + DG_CX_RING, DG_RINGS + 0x100 * i);
        size_t st = e + DG_CX_STATS(w);
        dg_put(g, st + 0, 4, 10 + i);       /* switches */
        dg_put(g, st + 4, 4, i);            /* contentions */
        dg_put(g, st + 8, 8, 5000 + i);     /* run_cycles */
        dg_put(g, st + 16, 8, 700 + i);     /* blocked_cycles */
        dg_put(g, st + 24, 4, 0);
    }
    size_t e1 = DG_CONTEXTS + stride;
    dg_ptr(g, e1 + DG_CX_STACK_LOW(w), DG_STACK);
    dg_put(g, e1 + DG_CX_STACK_SIZE(w), 4, 0x800);
    dg_put(g, e1 + DG_CX_PAINTED(w), 4, 0x700);
    memset(g->img + DG_STACK, EMB_STACK_PAINT, 0x600); /* 0x200 of 0x800 used */
    dg_packets(g, cat, checksum);

    /* Monitors: 6 blocks (4 fixed categories, 2 interrupt vectors). */
    size_t ms = DG_MO_STRIDE(w);
    dg_put(g, DG_MONITORS + 0 * ms + 0, 4, 1234);  /* irq_lock worst */
    dg_put(g, DG_MONITORS + 0 * ms + 4, 4, 2);     /* over */
    dg_put(g, DG_MONITORS + 0 * ms + 8, 4, 1000);  /* threshold */
    dg_put(g, DG_MONITORS + 0 * ms + 12, 4, 1);    /* action */
    dg_put(g, DG_MONITORS + 0 * ms + 16, w, 0x8000123u);
    dg_put(g, DG_MONITORS + 5 * ms + 0, 4, 77);    /* isr 1 */
    dg_put(g, DG_MONITORS + 5 * ms + 16, w, 0x8000456u);

    /* Objects. */
    dg_put(g, DG_OBJECTS + 0, 4, 0x11);
    dg_put(g, DG_OBJECTS + 4, 2, 1);
    dg_put(g, DG_OBJECTS + 6, 2, 1);
    memcpy(g->img + DG_OBJECTS + 8, "bus-lock", 9);
    dg_put(g, DG_OBJECTS + 24, 4, 40);
    dg_put(g, DG_OBJECTS + 28, 4, 3);
    dg_put(g, DG_OBJECTS + DG_OB_STRIDE + 0, 4, 0x22);
    dg_put(g, DG_OBJECTS + DG_OB_STRIDE + 4, 2, 9);
    dg_put(g, DG_OBJECTS + DG_OB_STRIDE + 6, 2, 1);
    memcpy(g->img + DG_OBJECTS + DG_OB_STRIDE + 8, "jobs", 5);
    dg_put(g, DG_OBJECTS + DG_OB_STRIDE + 36, 4, 6); /* max_queue */

    /* CPU statistics: irq_count, then 64-bit pairs (low word first, each in target order). */
    dg_put(g, DG_CPU + 0, 4, 55);
    dg_put(g, DG_CPU + 8, 4, 0x89ABCDEFu);
    dg_put(g, DG_CPU + 12, 4, 1);

    /* The crash record and two mini-records (little-endian on every target). */
    golden_v1(g->img + DG_CRASH, 0x1000, cat);
    for (unsigned i = 0; i < 2; i++) {
        uint8_t *m = g->img + DG_MINI + 32 * i;
        emb_put_le32(m, EMB_MINI_MAGIC);
        m[4] = EMB_MINI_VERSION;
        m[5] = 1;
        emb_put_le16(m + 6, (uint16_t)(3 + i));
        m[8] = EMB_FAULT_MEMORY;
        emb_put_le32(m + 12, 7 + i);
        emb_put_le32(m + 16, 0x400 + i);
        emb_put_le64(m + 20, 9000 + i);
        emb_put_le32(m + 28, emb_crc32(0, m, 28));
    }

    /* The descriptor. */
    size_t off = DG_DESC;
    memcpy(g->img, "EMBD", 4);
    g->img[4] = little ? EMB_DESC_LITTLE_ENDIAN : EMB_DESC_BIG_ENDIAN;
    g->img[5] = (uint8_t)w;
    dg_put(g, 6, 2, 1);
    dg_put(g, 12, 4, 10);
    dg_put(g, 16, w, DG_BASE + DG_DESC);
    off = 16 + w;
    uint64_t id[] = {0xC0FFEE11u, 0x000100u, s_port, s_profile, v + DGV_BUILD_ID, v + DGV_BUILD_ID_LEN,
                     v + DGV_READY, v + DGV_CLOCK_HZ, v + DGV_CLOCK_OFFSET, checksum};
    bool idp[] = {0, 0, 1, 1, 1, 1, 1, 1, 1, 0};
    dg_section(g, &off, EMB_DESC_IDENTITY, 1, id, idp, 10);
    uint64_t ty[] = {12, a_types, 3, a_states};
    bool typ[] = {0, 1, 0, 1};
    dg_section(g, &off, EMB_DESC_TYPES, 1, ty, typ, 4);
    uint64_t cx[] = {v + DGV_CTX_TABLE, v + DGV_CTX_STRIDE, v + DGV_CTX_CAP, v + DGV_CTX_COUNT,
                     dg_field(DG_CX_RING, w, 2), dg_field(0, 4, 0), dg_field(4, 4, 1),
                     dg_field(DG_CX_STACK_LOW(w), w, 2), dg_field(DG_CX_STACK_SIZE(w), 4, 0),
                     dg_field(DG_CX_PAINTED(w), 4, 0), EMB_STACK_PAINT, dg_field(DG_CX_ENTRY(w), w, 2),
                     dg_field(DG_CX_STATS(w), 40, 5), t_threads, 5};
    bool cxp[] = {1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
    dg_section(g, &off, EMB_DESC_CONTEXTS, 1, cx, cxp, 15);
    uint64_t rg[] = {DG_PACKET, v + DGV_RING_PACKETS, v + DGV_CLASS_MASK, v + DGV_MODE, v + DGV_UUID,
                     dg_field(24, 4, 0), dg_field(56, 4, 0), dg_field(60, 4, 0), dg_field(54, 2, 0),
                     dg_field(20, 2, 0), dg_field(DG_RG_BUF, w, 2), dg_field(DG_RG_COMMIT(w), w, 2),
                     dg_field(44, 4, 0), dg_field(48, 4, 0), dg_field(52, 1, 0), dg_field(53, 1, 0),
                     dg_field(22, 2, 0), dg_field(64, 4, 0), dg_field(32, 4, 0), dg_field(28, 4, 0),
                     dg_field(36, 4, 0), dg_field(40, 4, 0), dg_field(0, 20, 3), 0};
    bool rgp[24] = {0, 1, 1, 1, 1};
    dg_section(g, &off, EMB_DESC_RINGS, 1, rg, rgp, 24);
    dg_section(g, &off, EMB_DESC_LOG, 0, NULL, NULL, 0);
    uint64_t cr[] = {v + DGV_CRASH_PTR, v + DGV_CRASH_CAP, 1, v + DGV_CRASH_FOUND, v + DGV_CRASH_FOUND_LEN};
    bool crp[] = {1, 1, 0, 1, 1};
    dg_section(g, &off, EMB_DESC_CRASH, 1, cr, crp, 5);
    uint64_t mi[] = {v + DGV_MINI_PTR, 4, 32};
    bool mip[] = {1, 0, 0};
    dg_section(g, &off, EMB_DESC_MINI, 1, mi, mip, 3);
    uint64_t mo[] = {DG_MONITORS, 6, ms, dg_field(0, 4, 0), dg_field(16, w, 2), dg_field(8, 4, 0),
                     dg_field(4, 4, 0), dg_field(12, 4, 0), a_mons, 4, 4};
    bool mop[] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
    dg_section(g, &off, EMB_DESC_MONITORS, 1, mo, mop, 11);
    uint64_t st[] = {DG_CPU, t_cpu, 4, v + DGV_OBJ_TABLE, v + DGV_OBJ_STRIDE, v + DGV_OBJ_CAP,
                     v + DGV_OBJ_COUNT, dg_field(0, 4, 0), dg_field(4, 2, 0), dg_field(8, 16, 3),
                     dg_field(6, 2, 0), dg_field(24, 24, 5), t_objects, 5};
    bool stp[] = {1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0};
    dg_section(g, &off, EMB_DESC_STATS, 1, st, stp, 14);
    uint64_t ar[] = {w == 8 ? 62 : 40, w == 8 ? EMB_CRASH_LAYOUT_X86_64 : EMB_CRASH_LAYOUT_CORTEX_M,
                     w == 8 ? 20 : 8, w == 8 ? 34 : 16, 0, 0, 0, 0};
    dg_section(g, &off, EMB_DESC_ARCH, 1, ar, NULL, 8);
    g->desc_len = off;
    dg_put(g, 8, 4, off);
}

#endif /* EMB_TEST_DESC_GOLDEN_H */
