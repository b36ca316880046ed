/* Crash record and mini-record decoder (docs/formats/crash.md). */
#include "crash_decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/crc.h>
#include <emb/monitor.h>
#include <emb/wire.h>

/* Where a refusal goes: the sink (or none) and the input's offset of the bytes decoded. */
struct sink {
    struct emb_problems *ps;
    long long base;
};

static int fail(const struct sink *to, long long offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(const struct sink *to, long long offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(to->ps, EMB_ERROR, to->base + offset, fmt, ap);
    va_end(ap);
    return -1;
}

static void text(char *dst, const uint8_t *src, size_t n)
{
    size_t i = 0;
    for (; i < n && src[i]; i++)
        dst[i] = (char)src[i];
    dst[i] = '\0';
}

static int decode_v1(const uint8_t *d, uint32_t len, struct emb_crash_record *r,
                     const struct sink *to)
{
    if (len < EMB_CRASH_V1_FIXED_SIZE + EMB_CRASH_CRC_SIZE)
        return fail(to, EMB_CRASH_OFF_LENGTH, "length %u is below the %u bytes of a v1 record",
                    len, EMB_CRASH_V1_FIXED_SIZE + EMB_CRASH_CRC_SIZE);
    r->status_count = d[EMB_CRASH_V1_OFF_STATUS_COUNT];
    r->gpr_count = d[EMB_CRASH_V1_OFF_GPR_COUNT];
    uint32_t flight_off = EMB_CRASH_V1_FLIGHT_OFFSET(r->status_count, r->gpr_count);
    if (flight_off + EMB_CRASH_CRC_SIZE > len)
        return fail(to, EMB_CRASH_V1_OFF_STATUS_COUNT,
                    "%u status and %u general registers do not fit in a %u-byte record",
                    r->status_count, r->gpr_count, len);
    memcpy(r->build_id, d + EMB_CRASH_V1_OFF_BUILD_ID, EMB_CRASH_V1_BUILD_ID_SIZE);
    r->build_id_len = EMB_CRASH_V1_BUILD_ID_SIZE;
    text(r->fw_version, d + EMB_CRASH_V1_OFF_FW_VERSION, EMB_CRASH_FW_VERSION_SIZE);
    r->uptime_ticks = emb_get_le64(d + EMB_CRASH_V1_OFF_UPTIME);
    r->reset_reason = emb_get_le32(d + EMB_CRASH_V1_OFF_RESET_REASON);
    r->fault_class = d[EMB_CRASH_V1_OFF_FAULT_CLASS];
    r->fault_code = d[EMB_CRASH_V1_OFF_FAULT_CODE];
    r->cpu_id = d[EMB_CRASH_V1_OFF_CPU];
    r->partition_id = d[EMB_CRASH_V1_OFF_PARTITION];
    r->thread_index = emb_get_le16(d + EMB_CRASH_V1_OFF_THREAD);
    r->thread_generation = emb_get_le16(d + EMB_CRASH_V1_OFF_GENERATION);
    r->fault_address = emb_get_le32(d + EMB_CRASH_V1_OFF_FAULT_ADDR);
    r->pc = emb_get_le32(d + EMB_CRASH_V1_OFF_PC);
    r->lr = emb_get_le32(d + EMB_CRASH_V1_OFF_LR);
    r->sp = emb_get_le32(d + EMB_CRASH_V1_OFF_SP);
    r->stack_base = emb_get_le32(d + EMB_CRASH_V1_OFF_STACK_BASE);
    r->stack_size = emb_get_le32(d + EMB_CRASH_V1_OFF_STACK_SIZE);
    r->flight_packets = emb_get_le16(d + EMB_CRASH_V1_OFF_FLIGHT_COUNT);
    r->status_regs = d + EMB_CRASH_V1_FIXED_SIZE;
    r->gprs = r->status_regs + 4u * r->status_count;
    r->flight_offset = flight_off;
    if (r->fault_class == EMB_FAULT_MONITOR) {
        r->monitor_interval = r->fault_address;
        r->monitor_threshold = r->lr;
        r->fault_address = r->lr = 0;
    }
    return 0;
}

static int decode_v2(const uint8_t *d, uint32_t len, struct emb_crash_record *r,
                     const struct sink *to)
{
    if (len < EMB_CRASH_V2_FIXED_SIZE + EMB_CRASH_CRC_SIZE)
        return fail(to, EMB_CRASH_OFF_LENGTH, "length %u is below the %u bytes of a v2 record",
                    len, EMB_CRASH_V2_FIXED_SIZE + EMB_CRASH_CRC_SIZE);
    uint8_t byte = d[EMB_CRASH_V2_OFF_ADDR_SHIFT];
    uint8_t shift = byte & EMB_CRASH_V2_SHIFT_MASK;
    if (shift > 16)
        return fail(to, EMB_CRASH_V2_OFF_ADDR_SHIFT, "address shift %u is above 16", shift);
    if (byte & EMB_CRASH_V2_LOST_RESERVED)
        return fail(to, EMB_CRASH_V2_OFF_ADDR_SHIFT,
                    "unknown flag 0x%02x in the address shift byte 0x%02x",
                    EMB_CRASH_V2_LOST_RESERVED, byte);
    r->addr_lost = byte & (EMB_CRASH_V2_LOST_CODE | EMB_CRASH_V2_LOST_DATA);
    memcpy(r->build_id, d + EMB_CRASH_V2_OFF_BUILD_ID, EMB_CRASH_V2_BUILD_ID_SIZE);
    r->build_id_len = EMB_CRASH_V2_BUILD_ID_SIZE;
    r->uptime_ticks = emb_get_le32(d + EMB_CRASH_V2_OFF_UPTIME);
    r->reset_reason = d[EMB_CRASH_V2_OFF_RESET_REASON];
    r->fault_class = d[EMB_CRASH_V2_OFF_FAULT_CLASS];
    r->fault_code = d[EMB_CRASH_V2_OFF_FAULT_CODE];
    r->addr_shift = shift;
    r->thread_index = emb_get_le16(d + EMB_CRASH_V2_OFF_THREAD);
    r->fault_address = (uint32_t)emb_get_le16(d + EMB_CRASH_V2_OFF_FAULT_ADDR) << shift;
    r->pc = (uint32_t)emb_get_le16(d + EMB_CRASH_V2_OFF_PC) << shift;
    r->lr = (uint32_t)emb_get_le16(d + EMB_CRASH_V2_OFF_LR) << shift;
    r->sp = (uint32_t)emb_get_le16(d + EMB_CRASH_V2_OFF_SP) << shift;
    r->stack_base = (uint32_t)emb_get_le16(d + EMB_CRASH_V2_OFF_STACK_BASE) << shift;
    r->stack_size = emb_get_le16(d + EMB_CRASH_V2_OFF_STACK_SIZE);
    r->flight_packets = emb_get_le16(d + EMB_CRASH_V2_OFF_FLIGHT_COUNT);
    r->flight_offset = EMB_CRASH_V2_FIXED_SIZE;
    if (r->fault_class == EMB_FAULT_MONITOR) {
        /* Cycles, saturated, not shifted addresses. */
        r->monitor_interval = emb_get_le16(d + EMB_CRASH_V2_OFF_FAULT_ADDR);
        r->monitor_threshold = emb_get_le16(d + EMB_CRASH_V2_OFF_LR);
        r->fault_address = r->lr = 0;
    }
    return 0;
}

int emb_crash_decode(const uint8_t *d, size_t size, struct emb_crash_record *r,
                     struct emb_problems *ps)
{
    return emb_crash_decode_at(d, size, 0, r, ps);
}

int emb_crash_decode_at(const uint8_t *d, size_t size, long long base,
                        struct emb_crash_record *r, struct emb_problems *ps)
{
    const struct sink sink = {ps, base}, *to = &sink;
    memset(r, 0, sizeof *r);
    if (size < EMB_CRASH_PREFIX_SIZE)
        return fail(to, (long long)size, "truncated: %zu bytes, a crash record starts with %u",
                    size, EMB_CRASH_PREFIX_SIZE);
    uint32_t magic = emb_get_le32(d);
    if (magic != EMB_CRASH_MAGIC)
        return fail(to, 0, "not a crash record (magic %02x %02x %02x %02x, expected \"EMBC\")",
                    d[0], d[1], d[2], d[3]);
    r->version = emb_get_le16(d + EMB_CRASH_OFF_VERSION);
    r->length = emb_get_le16(d + EMB_CRASH_OFF_LENGTH);
    if (r->version != EMB_CRASH_V1 && r->version != EMB_CRASH_V2)
        return fail(to, EMB_CRASH_OFF_VERSION,
                    "unknown crash record version %u (this tool reads versions 1 and 2)",
                    r->version);
    if (r->length > size)
        return fail(to, (long long)size, "truncated: the record's length is %u bytes, %zu present",
                    r->length, size);
    int rc = r->version == EMB_CRASH_V1 ? decode_v1(d, r->length, r, to)
                                        : decode_v2(d, r->length, r, to);
    if (rc != 0)
        return rc;
    uint32_t crc_off = r->length - EMB_CRASH_CRC_SIZE;
    r->crc = emb_get_le32(d + crc_off);
    uint32_t computed = emb_crc32(0, d, crc_off);
    if (computed != r->crc)
        return fail(to, crc_off, "CRC mismatch: the record says %08x, its bytes give %08x",
                    r->crc, computed);
    r->flight_len = crc_off - r->flight_offset;
    r->flight = r->flight_len ? d + r->flight_offset : NULL;
    if (r->flight_packets && !r->flight_len)
        return fail(to, r->version == EMB_CRASH_V1 ? EMB_CRASH_V1_OFF_FLIGHT_COUNT
                                                    : EMB_CRASH_V2_OFF_FLIGHT_COUNT,
                    "%u flight recorder packets announced, no flight recorder bytes",
                    r->flight_packets);
    return 0;
}

uint32_t emb_crash_status_reg(const struct emb_crash_record *r, unsigned i)
{
    return i < r->status_count ? emb_get_le32(r->status_regs + 4u * i) : 0u;
}

uint32_t emb_crash_gpr(const struct emb_crash_record *r, unsigned i)
{
    return i < r->gpr_count ? emb_get_le32(r->gprs + 4u * i) : 0u;
}

int emb_crash_mini_decode(const uint8_t *d, size_t size, struct emb_crash_mini *m,
                          struct emb_problems *ps)
{
    const struct sink sink = {ps, 0}, *to = &sink;
    memset(m, 0, sizeof *m);
    if (size < EMB_MINI_SIZE)
        return fail(to, (long long)size, "truncated: %zu bytes, a mini-record is %u", size,
                    EMB_MINI_SIZE);
    if (emb_get_le32(d) != EMB_MINI_MAGIC)
        return fail(to, 0, "not a mini-record (expected \"EMBP\")");
    if (d[EMB_MINI_OFF_VERSION] != EMB_MINI_VERSION)
        return fail(to, EMB_MINI_OFF_VERSION, "unknown mini-record version %u",
                    d[EMB_MINI_OFF_VERSION]);
    uint32_t crc = emb_get_le32(d + EMB_MINI_OFF_CRC), computed = emb_crc32(0, d, EMB_MINI_OFF_CRC);
    if (crc != computed)
        return fail(to, EMB_MINI_OFF_CRC, "CRC mismatch: the mini-record says %08x, its bytes give %08x",
                    crc, computed);
    *m = (struct emb_crash_mini){
        .sequence = emb_get_le32(d + EMB_MINI_OFF_SEQUENCE),
        .partition = d[EMB_MINI_OFF_PARTITION],
        .thread = emb_get_le16(d + EMB_MINI_OFF_THREAD),
        .generation = emb_get_le16(d + EMB_MINI_OFF_GENERATION),
        .fault_class = d[EMB_MINI_OFF_FAULT_CLASS],
        .fault_code = d[EMB_MINI_OFF_FAULT_CODE],
        .pc = emb_get_le32(d + EMB_MINI_OFF_PC),
        .uptime_ticks = emb_get_le64(d + EMB_MINI_OFF_UPTIME),
    };
    return 0;
}

static int by_sequence(const void *a, const void *b)
{
    const struct emb_crash_mini *x = a, *y = b;
    int32_t d = (int32_t)(x->sequence - y->sequence);
    return d < 0 ? -1 : d > 0;
}

size_t emb_crash_mini_scan(const uint8_t *data, size_t size, size_t from,
                           struct emb_crash_mini *out, size_t max)
{
    size_t found = 0;
    for (size_t off = (from + EMB_MINI_SIZE - 1) / EMB_MINI_SIZE * EMB_MINI_SIZE;
         off + EMB_MINI_SIZE <= size; off += EMB_MINI_SIZE) {
        struct emb_crash_mini m;
        if (emb_crash_mini_decode(data + off, size - off, &m, NULL) != 0)
            continue;
        m.offset = off;
        if (found < max)
            out[found] = m;
        found++;
    }
    qsort(out, found < max ? found : max, sizeof *out, by_sequence);
    return found;
}

const char *emb_crash_monitor_name(unsigned category, char *buf, size_t len)
{
    static const char *const fixed[] = {
        [EMB_MONITOR_IRQ_LOCK] = "irq_lock",
        [EMB_MONITOR_SCHED_LOCK] = "sched_lock",
        [EMB_MONITOR_THREAD_RUN] = "thread_run",
        [EMB_MONITOR_WORK_HANDLER] = "work_handler",
    };
    if (category < EMB_MONITOR_ISR_FIRST)
        snprintf(buf, len, "%s", fixed[category]);
    else
        snprintf(buf, len, "isr vector %u", category - EMB_MONITOR_ISR_FIRST);
    return buf;
}

const char *emb_crash_fault_class_name(unsigned c)
{
    static const char *const names[] = {
        "none", "memory", "bus", "illegal instruction", "arithmetic", "abort", "stack overflow",
        "watchdog", "monitor", "hard fault", "software",
    };
    return c < sizeof names / sizeof names[0] ? names[c] : "unknown";
}

const char *emb_crash_reset_reason_name(unsigned r)
{
    static const char *const names[] = {
        "unknown", "power-on", "reset pin", "watchdog", "software", "fault", "brown-out",
    };
    return r < sizeof names / sizeof names[0] ? names[r] : "unknown";
}
