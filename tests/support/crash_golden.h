/* The inputs of the golden crash records (tests/support/golden/): shared by the program that
 * wrote them (tests/support/make_crash_golden.c) and the test that decodes them
 * (tests/target/test_crash_record.c), so the test can also check that today's encoders
 * still produce the committed bytes. The flight recorders are hand-built trace streams
 * (tests/support/trace_builder.h) with a fixed catalogue checksum. */
#ifndef EMB_TEST_CRASH_GOLDEN_H
#define EMB_TEST_CRASH_GOLDEN_H

#include <emb/crash.h>

#include "trace_builder.h"

#define GOLDEN_CATALOG_CHECKSUM 0x6373D20Bu
#define GOLDEN_BIAS 0x0000555555554000ull

static const uint8_t golden_build_id[20] = {
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
    0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
};

/* A flight recorder: two contexts, 256-byte packets; main holds mutex 0x101, takes an
 * interrupt, records a user event and faults. */
static inline void golden_flight(struct tb *b, const struct emb_catalog *cat)
{
    static const struct tb_ctx ctx[] = {
        {.id = 3, .kind = EMB_CONTEXT_THREAD, .packets = 7, .name = "main"},
        {.id = 4, .kind = EMB_CONTEXT_THREAD, .packets = 2, .discarded = 1, .name = "audio"},
    };
    tb_begin(b, GOLDEN_CATALOG_CHECKSUM, 256, 1000000000u, 0, ctx, 2);
    tb_open(b, 4, EMB_CONTEXT_THREAD, 1, 9000);
    tb_event(b, cat, 9100, 0, "mutex_lock", TB_V(0x102, 0));
    tb_event(b, cat, 9200, 0, "mutex_unlock", TB_V(0x102, 0xFFFF));
    tb_close(b, 9300, 1);
    tb_open(b, 3, EMB_CONTEXT_THREAD, 6, 10000);
    tb_event(b, cat, 10000, 0, "switch", TB_V(0xFFFF, 3, 5));
    tb_event(b, cat, 10100, 0, "mutex_lock", TB_V(0x101, 0));
    tb_event(b, cat, 10200, tb_isr(1), "irq_enter", TB_V(11));
    tb_event(b, cat, 10250, tb_isr(1), "tick", TB_V(42));
    tb_event(b, cat, 10300, tb_isr(1), "irq_exit", TB_V(11, 0));
    tb_event(b, cat, 10400, 0, "user_event", TB_V(6, 17, 0x40));
    tb_event(b, cat, 10500, EMB_EVT_KIND_FAULT, "partition_fault", TB_V(0, 1, 3, 1, 0x1234));
    tb_close(b, 10600, 0);
}

static inline void golden_v1_status(uint32_t status[EMB_CRASH_NAT_COUNT])
{
    memset(status, 0, EMB_CRASH_NAT_COUNT * sizeof status[0]);
    status[EMB_CRASH_NAT_LAYOUT] = EMB_CRASH_LAYOUT_X86_64;
    status[EMB_CRASH_NAT_SIGNO] = 11;
    status[EMB_CRASH_NAT_SI_CODE] = 1;
    status[EMB_CRASH_NAT_BIAS] = (uint32_t)GOLDEN_BIAS;
    status[EMB_CRASH_NAT_BIAS + 1] = (uint32_t)(GOLDEN_BIAS >> 32);
    status[EMB_CRASH_NAT_PC] = (uint32_t)(GOLDEN_BIAS + 0x1234);
    status[EMB_CRASH_NAT_PC + 1] = (uint32_t)((GOLDEN_BIAS + 0x1234) >> 32);
    status[EMB_CRASH_NAT_RA] = (uint32_t)(GOLDEN_BIAS + 0x5678);
    status[EMB_CRASH_NAT_RA + 1] = (uint32_t)((GOLDEN_BIAS + 0x5678) >> 32);
    status[EMB_CRASH_NAT_SP] = 0xffffe0f0u;
    status[EMB_CRASH_NAT_SP + 1] = 0x7fffu;
    status[EMB_CRASH_NAT_ADDR] = 0x10;
    status[EMB_CRASH_NAT_FLAGS] = 0x10246;
    status[EMB_CRASH_NAT_ERR] = 4;
    status[EMB_CRASH_NAT_TRAPNO] = 14;
    status[EMB_CRASH_NAT_STACK_LOW] = 0xff800000u;
    status[EMB_CRASH_NAT_STACK_LOW + 1] = 0x7fffu;
    status[EMB_CRASH_NAT_RA_SOURCE] = EMB_CRASH_RA_STACK_SCAN;
    status[EMB_CRASH_NAT_RA_OFFSET] = 24;
}

/* Encodes the golden v1 record (x86-64 native layout). Returns its length. */
static inline size_t golden_v1(uint8_t *out, size_t cap, const struct emb_catalog *cat)
{
    struct tb flight;
    golden_flight(&flight, cat);
    uint32_t status[EMB_CRASH_NAT_COUNT];
    golden_v1_status(status);
    uint32_t gprs[2 * EMB_CRASH_X86_64_GPRS];
    for (unsigned i = 0; i < 2 * EMB_CRASH_X86_64_GPRS; i++)
        gprs[i] = i % 2 ? 0 : 0x01010101u * (i / 2);
    struct emb_crash_info info = {
        .build_id = golden_build_id,
        .build_id_len = 20,
        .fw_version = "1.2.3",
        .uptime_ticks = 123456789012ull,
        .reset_reason = EMB_RESET_FAULT,
        .fault_class = EMB_FAULT_MEMORY,
        .fault_code = 1,
        .cpu_id = 2,
        .partition_id = 0,
        .thread_index = 3,
        .thread_generation = 1,
        .fault_address = 0x10,
        .pc = 0x1234,
        .lr = 0x5678,
        .sp = 0xffffe0f0u,
        .stack_base = 0xff800000u,
        .stack_size = 0x100000,
        .status_regs = status,
        .status_count = EMB_CRASH_NAT_COUNT,
        .gprs = gprs,
        .gpr_count = 2 * EMB_CRASH_X86_64_GPRS,
        .flight = flight.buf,
        .flight_len = (uint32_t)flight.len,
        .flight_packets = 2,
    };
    size_t n = emb_crash_encode_v1(out, cap, &info);
    free(flight.buf);
    return n;
}

/* The golden v2 record: a small target with word addresses (shift 1), no flight recorder. */
static inline size_t golden_v2(uint8_t *out, size_t cap)
{
    struct emb_crash_info info = {
        .build_id = golden_build_id,
        .build_id_len = 20,
        .uptime_ticks = 0x1122334455ull,
        .reset_reason = EMB_RESET_WATCHDOG,
        .fault_class = EMB_FAULT_WATCHDOG,
        .fault_code = 7,
        .thread_index = 2,
        .fault_address = 0x0200,
        .pc = 0x3a4c,
        .lr = 0x1f00,
        .sp = 0x08f0,
        .stack_base = 0x0800,
        .stack_size = 0x0100,
        .addr_shift = 1,
    };
    return emb_crash_encode_v2(out, cap, &info);
}

#endif /* EMB_TEST_CRASH_GOLDEN_H */
