/* The target's own printf as the oracle for the log decoder's integer widths: a Cortex-M
 * firmware (ILP32: int, long, size_t and ptrdiff_t are 32 bits) logs a table of values
 * through the deferred log, and formats the same calls with newlib's snprintf. The
 * newlib lines go to UART0, one per call; the log stream goes to UART1 as frames.
 * log_widths.sh runs it under QEMU and compares `emb log`'s text with newlib's, line by
 * line: the expectation is what the target's C library prints, not what the host's does
 * (where long is 64 bits). Built twice: with the full newlib (Debian's has no %z, %t or
 * %j: those rows are left out, FW_C99_FORMATS=0) and with picolibc (every row); with
 * FW_BULK, over 64 KiB of call sites, so the link chooses 4-byte ids; and with a fixed
 * CONFIG_EMB_LOG_ID_BYTES=4. */
#include <emb/cortex_m.h>
#include <emb/log.h>

#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mps2.h"

EMB_LOG_MODULE_DEFINE(widths, EMB_LOG_LEVEL_DBG);

#define LOG_SIZE 16384u
static struct emb_log_ring ring;
static uint8_t ring_buf[EMB_LOG_RING_BUF_SIZE(LOG_SIZE)];
/* The port's trace ring, which emb_cm_start() requires; nothing is traced. */
#define TRACE_PACKETS 2u
static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t trace_buf[TRACE_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t trace_commit[TRACE_PACKETS];
static struct emb_trace_ring trace_ring;

static emb_status uart1_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    mps2_uart_write(1u, bytes, len);
    return EMB_OK;
}

static const struct emb_log_output out = {uart1_write, 0};

/* No heap: newlib's string printf never grows its buffer, but links the hook (picolibc
 * does not call it). */
void *_sbrk(ptrdiff_t incr);
void *_sbrk(ptrdiff_t incr)
{
    (void)incr;
    return (void *)-1;
}

/* The same call into the log and through newlib's snprintf onto UART0. */
#define BOTH(...)                                                                             \
    do {                                                                                      \
        EMB_LOG_INF(widths, __VA_ARGS__);                                                     \
        char line[1100];                                                                      \
        snprintf(line, sizeof line, __VA_ARGS__);                                             \
        mps2_uart_puts(line);                                                                 \
        mps2_uart_putc('\n');                                                                 \
        emb_log_drain(&ring, &out, 0);                                                        \
    } while (0)

static void table(void)
{
    static const long longs[] = {-1L, 0L, 1L, LONG_MIN, LONG_MAX, -123456789L};
    for (unsigned i = 0; i < sizeof longs / sizeof longs[0]; i++) {
        long v = longs[i];
        /* A signed long through the unsigned conversions too, as PRIx32 code does. */
        BOTH("long %ld %li %lu %lx %lX %lo %#lx %012lx %+ld %hd %hhx", v, v, v, v, v, v, v, v, v,
             (short)v, (unsigned char)v);
    }
    static const unsigned long ulongs[] = {0xFFFFFFFFul, 0x80000000ul, 0x7FFFFFFFul, 0xDEADBEEFul};
    for (unsigned i = 0; i < sizeof ulongs / sizeof ulongs[0]; i++) {
        unsigned long v = ulongs[i];
        BOTH("unsigned long %lu %lx %ld %lo %+li", v, v, v, v, v);
    }
#if FW_C99_FORMATS /* Debian's newlib is built without %z, %t and %j; picolibc has them */
    static const size_t sizes[] = {(size_t)-1, 0x80000000u, 0u, 4096u};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t v = sizes[i];
        BOTH("size_t %zu %zx %zX %zo", v, v, v, v);
    }
    static const ptrdiff_t diffs[] = {-1, PTRDIFF_MIN, PTRDIFF_MAX, 77};
    for (unsigned i = 0; i < sizeof diffs / sizeof diffs[0]; i++) {
        ptrdiff_t v = diffs[i];
        BOTH("ptrdiff_t %td %ti %+td", v, v, v);
    }
    BOTH("intmax_t %jd %jx %ju", (intmax_t)-1, (intmax_t)-1, (uintmax_t)INTMAX_MIN);
#endif
    /* <inttypes.h> on arm-none-eabi: int32_t is long, so PRIx32 is "lx". */
    static const uint32_t u32s[] = {0x80000000u, 0xFFFFFFFFu, 0x12345678u, 5u};
    for (unsigned i = 0; i < sizeof u32s / sizeof u32s[0]; i++) {
        uint32_t v = u32s[i];
        int32_t s = (int32_t)v;
        BOTH("u32 %" PRIx32 " %" PRIX32 " %" PRIu32 " %" PRId32 " %08" PRIx32, v, v, v, v, v);
        BOTH("i32 %" PRIx32 " %" PRIu32 " %" PRId32 " %" PRIi32, s, s, s, s);
    }
    BOTH("int %d %x %u %i %X", -1, -1, INT_MIN, INT_MIN, 0xFFFFFFFFu);
    BOTH("long long %lld %llx %llu", -1LL, -1LL, 0x8000000000000000ull);
}

#if FW_BULK
/* 70 call sites of 1 KiB formats: over 64 KiB of metadata, so the link chooses 4-byte
 * ids; each is logged, so ids past 64 KiB are decoded too. */
#define S10 "0123456789"
#define S100 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10
#define S1000 S100 S100 S100 S100 S100 S100 S100 S100 S100 S100
#define BULK1(n) BOTH("bulk %d " S1000, (n))
#define BULK10(n)                                                                             \
    BULK1(n); BULK1(n + 1); BULK1(n + 2); BULK1(n + 3); BULK1(n + 4); BULK1(n + 5);           \
    BULK1(n + 6); BULK1(n + 7); BULK1(n + 8); BULK1(n + 9)
static void bulk(void)
{
    BULK10(0); BULK10(10); BULK10(20); BULK10(30); BULK10(40); BULK10(50); BULK10(60);
    BOTH("after the bulk: %ld %lx", -1L, -1L);
}
#endif

int main(void)
{
    mps2_uart_init();
    mps2_uart_open(1u);
    const struct emb_cm_config cfg = {
        .cpu_hz = MPS2_CPU_HZ,
        .mode = EMB_TRACE_MODE_SNAPSHOT,
        .ring = &trace_ring,
        .ring_buf = trace_buf,
        .ring_commit = trace_commit,
        .ring_packets = TRACE_PACKETS,
        .log_ring = &ring,
        .log_buf = ring_buf,
        .log_size = LOG_SIZE,
    };
    if (emb_cm_start(&cfg) != EMB_OK) {
        mps2_uart_puts("log_widths: emb_cm_start failed\n");
        mps2_exit(1);
    }
    const uint8_t *build_id = 0;
    uint32_t n = emb_cm_build_id(&build_id);
    const struct emb_log_identity id = {build_id, (uint8_t)(n < EMB_LOG_BUILD_ID_MAX ? n : EMB_LOG_BUILD_ID_MAX)};
    emb_log_write_hello(&out, &id);
    table();
#if FW_BULK
    bulk();
#endif
    emb_log_write_stats(&out, &ring);
    mps2_exit(0);
}
