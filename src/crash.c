/* Crash records: the v1 and v2 encoders, validation, the retained region, the flight
 * recorder collector and the mini-record ring (docs/formats/crash.md). Everything here
 * runs in fault handlers: stores into caller memory, atomics, no locks. */
#include <emb/crash.h>

#include <emb/crc.h>
#include <emb/port.h>
#include <emb/trace.h>
#include <emb/trace_events.h>
#include <emb/wire.h>

#include "trace_ring.h"

#define EMB__P CONFIG_EMB_TRACE_PACKET_SIZE

/* Orders the stores before it ahead of the stores after it, for the compiler and the CPU:
 * retained RAM read after a reset, or a shared mapping read after a kill, holds a prefix of
 * the writer's stores in program order across these points. */
#if defined(__SANITIZE_THREAD__)
#define EMB__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EMB__TSAN 1
#endif
#endif

#if defined(EMB__TSAN)
/* ThreadSanitizer does not model fences: a sequentially consistent read-modify-write is
 * the same barrier in a form it understands. */
static uint32_t emb__fence_word;
#endif

static inline void emb__barrier(void)
{
    __asm__ __volatile__("" ::: "memory");
#if defined(EMB__TSAN)
    __atomic_fetch_add(&emb__fence_word, 0u, __ATOMIC_SEQ_CST);
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static void emb__put_text(uint8_t *dst, const char *text, uint32_t field)
{
    uint32_t i = 0;
    if (text != NULL)
        for (; i < field && text[i] != '\0'; i++)
            dst[i] = (uint8_t)text[i];
    for (; i < field; i++)
        dst[i] = 0u;
}

static void emb__put_bytes(uint8_t *dst, const uint8_t *src, uint32_t len, uint32_t field)
{
    uint32_t i = 0;
    if (src != NULL)
        for (; i < len && i < field; i++)
            dst[i] = src[i];
    for (; i < field; i++)
        dst[i] = 0u;
}

/* Step one of every write: whatever the area held stops being a record before any byte
 * of the new one lands, so a torn write can never combine old and new bytes. */
static void emb__unpublish(uint8_t *record)
{
    emb_put_le32(record + EMB_CRASH_OFF_MAGIC, 0u);
    emb__barrier();
}

/* The last step: CRC over every byte before it (the magic counted as written), then
 * the magic, each after a barrier. */
static void emb__seal(uint8_t *record, uint32_t length)
{
    uint8_t magic[4];
    emb_put_le32(magic, EMB_CRASH_MAGIC);
    uint32_t crc = emb_crc32(0u, magic, sizeof magic);
    crc = emb_crc32(crc, record + 4u, length - 4u - EMB_CRASH_CRC_SIZE);
    emb_put_le32(record + length - EMB_CRASH_CRC_SIZE, crc);
    emb__barrier();
    emb_put_le32(record + EMB_CRASH_OFF_MAGIC, EMB_CRASH_MAGIC);
    emb__barrier();
}

static void emb__put_flight(uint8_t *dst, const struct emb_crash_info *in)
{
    if (in->flight_len > 0u && in->flight != dst)
        memcpy(dst, in->flight, in->flight_len);
}

size_t emb_crash_encode_v1(uint8_t *out, size_t cap, const struct emb_crash_info *in)
{
    if (out == NULL || in == NULL || (in->status_count > 0u && in->status_regs == NULL) ||
        (in->gpr_count > 0u && in->gprs == NULL) || (in->flight_len > 0u && in->flight == NULL))
        return 0;
    uint32_t flight_off = EMB_CRASH_V1_FLIGHT_OFFSET(in->status_count, in->gpr_count);
    uint32_t length = flight_off + in->flight_len + EMB_CRASH_CRC_SIZE;
    if (in->flight_len > EMB_CRASH_MAX_SIZE || length > EMB_CRASH_MAX_SIZE || length > cap)
        return 0;
    emb__unpublish(out);
    emb_put_le16(out + EMB_CRASH_OFF_VERSION, EMB_CRASH_V1);
    emb_put_le16(out + EMB_CRASH_OFF_LENGTH, (uint16_t)length);
    emb__put_bytes(out + EMB_CRASH_V1_OFF_BUILD_ID, in->build_id, in->build_id_len,
                   EMB_CRASH_V1_BUILD_ID_SIZE);
    emb__put_text(out + EMB_CRASH_V1_OFF_FW_VERSION, in->fw_version, EMB_CRASH_FW_VERSION_SIZE);
    emb_put_le64(out + EMB_CRASH_V1_OFF_UPTIME, in->uptime_ticks);
    emb_put_le32(out + EMB_CRASH_V1_OFF_RESET_REASON, in->reset_reason);
    out[EMB_CRASH_V1_OFF_FAULT_CLASS] = in->fault_class;
    out[EMB_CRASH_V1_OFF_FAULT_CODE] = in->fault_code;
    out[EMB_CRASH_V1_OFF_CPU] = in->cpu_id;
    out[EMB_CRASH_V1_OFF_PARTITION] = in->partition_id;
    emb_put_le16(out + EMB_CRASH_V1_OFF_THREAD, in->thread_index);
    emb_put_le16(out + EMB_CRASH_V1_OFF_GENERATION, in->thread_generation);
    emb_put_le32(out + EMB_CRASH_V1_OFF_FAULT_ADDR, in->fault_address);
    emb_put_le32(out + EMB_CRASH_V1_OFF_PC, in->pc);
    emb_put_le32(out + EMB_CRASH_V1_OFF_LR, in->lr);
    emb_put_le32(out + EMB_CRASH_V1_OFF_SP, in->sp);
    emb_put_le32(out + EMB_CRASH_V1_OFF_STACK_BASE, in->stack_base);
    emb_put_le32(out + EMB_CRASH_V1_OFF_STACK_SIZE, in->stack_size);
    out[EMB_CRASH_V1_OFF_STATUS_COUNT] = in->status_count;
    out[EMB_CRASH_V1_OFF_GPR_COUNT] = in->gpr_count;
    emb_put_le16(out + EMB_CRASH_V1_OFF_FLIGHT_COUNT, in->flight_packets);
    uint8_t *p = out + EMB_CRASH_V1_FIXED_SIZE;
    for (uint32_t i = 0; i < in->status_count; i++, p += 4)
        emb_put_le32(p, in->status_regs[i]);
    for (uint32_t i = 0; i < in->gpr_count; i++, p += 4)
        emb_put_le32(p, in->gprs[i]);
    emb__put_flight(out + flight_off, in);
    emb__seal(out, length);
    return length;
}

/* An address as a v2 field; a lost bit (above 16 after the shift, or shifted out) is
 * flagged in *lost, so the record never passes a partial address off as the address.
 * Out of line: inlined at each of its five uses it costs about 60 bytes more at -Os. */
__attribute__((noinline)) static uint16_t emb__addr16(uint32_t address, uint8_t shift, uint8_t *lost, uint8_t flag)
{
    uint32_t field = address >> shift;
    if (field > 0xFFFFu || (field << shift) != address)
        *lost |= flag;
    return (uint16_t)field;
}

static uint16_t emb__sat16(uint32_t v)
{
    return (uint16_t)(v > 0xFFFFu ? 0xFFFFu : v);
}

size_t emb_crash_encode_v2(uint8_t *out, size_t cap, const struct emb_crash_info *in)
{
    if (out == NULL || in == NULL || in->addr_shift > 16u ||
        (in->flight_len > 0u && in->flight == NULL))
        return 0;
    uint32_t length = EMB_CRASH_V2_FIXED_SIZE + in->flight_len + EMB_CRASH_CRC_SIZE;
    if (in->flight_len > EMB_CRASH_MAX_SIZE || length > EMB_CRASH_MAX_SIZE || length > cap)
        return 0;
    emb__unpublish(out);
    emb_put_le16(out + EMB_CRASH_OFF_VERSION, EMB_CRASH_V2);
    emb_put_le16(out + EMB_CRASH_OFF_LENGTH, (uint16_t)length);
    emb__put_bytes(out + EMB_CRASH_V2_OFF_BUILD_ID, in->build_id, in->build_id_len,
                   EMB_CRASH_V2_BUILD_ID_SIZE);
    emb_put_le32(out + EMB_CRASH_V2_OFF_UPTIME, (uint32_t)in->uptime_ticks);
    out[EMB_CRASH_V2_OFF_RESET_REASON] = (uint8_t)in->reset_reason;
    out[EMB_CRASH_V2_OFF_FAULT_CLASS] = in->fault_class;
    out[EMB_CRASH_V2_OFF_FAULT_CODE] = in->fault_code;
    const uint8_t shift = in->addr_shift;
    uint8_t lost = 0;
    emb_put_le16(out + EMB_CRASH_V2_OFF_THREAD, in->thread_index);
    if (in->fault_class == EMB_FAULT_MONITOR) {
        /* Cycles, not addresses: the interval and the threshold. */
        emb_put_le16(out + EMB_CRASH_V2_OFF_FAULT_ADDR, emb__sat16(in->fault_address));
        emb_put_le16(out + EMB_CRASH_V2_OFF_LR, emb__sat16(in->lr));
    } else {
        emb_put_le16(out + EMB_CRASH_V2_OFF_FAULT_ADDR,
                     emb__addr16(in->fault_address, shift, &lost, EMB_CRASH_V2_LOST_DATA));
        emb_put_le16(out + EMB_CRASH_V2_OFF_LR,
                     emb__addr16(in->lr, shift, &lost, EMB_CRASH_V2_LOST_CODE));
    }
    emb_put_le16(out + EMB_CRASH_V2_OFF_PC, emb__addr16(in->pc, shift, &lost, EMB_CRASH_V2_LOST_CODE));
    emb_put_le16(out + EMB_CRASH_V2_OFF_SP, emb__addr16(in->sp, shift, &lost, EMB_CRASH_V2_LOST_DATA));
    emb_put_le16(out + EMB_CRASH_V2_OFF_STACK_BASE,
                 emb__addr16(in->stack_base, shift, &lost, EMB_CRASH_V2_LOST_DATA));
    out[EMB_CRASH_V2_OFF_ADDR_SHIFT] = (uint8_t)(shift | lost);
    emb_put_le16(out + EMB_CRASH_V2_OFF_STACK_SIZE,
                 (uint16_t)(in->stack_size > 0xFFFFu ? 0xFFFFu : in->stack_size));
    emb_put_le16(out + EMB_CRASH_V2_OFF_FLIGHT_COUNT, in->flight_packets);
    emb__put_flight(out + EMB_CRASH_V2_FIXED_SIZE, in);
    emb__seal(out, length);
    return length;
}

emb_status emb_crash_validate(const uint8_t *r, size_t cap, uint32_t *length)
{
    if (length != NULL)
        *length = 0;
    if (r == NULL || cap < EMB_CRASH_PREFIX_SIZE || emb_get_le32(r) != EMB_CRASH_MAGIC)
        return EMB_E_NOTFOUND;
    uint32_t version = emb_get_le16(r + EMB_CRASH_OFF_VERSION);
    uint32_t len = emb_get_le16(r + EMB_CRASH_OFF_LENGTH);
    uint32_t min;
    if (version == EMB_CRASH_V1) {
        if (len < EMB_CRASH_V1_FIXED_SIZE + EMB_CRASH_CRC_SIZE || len > cap)
            return EMB_E_CORRUPT;
        min = EMB_CRASH_V1_FLIGHT_OFFSET(r[EMB_CRASH_V1_OFF_STATUS_COUNT],
                                         r[EMB_CRASH_V1_OFF_GPR_COUNT]) + EMB_CRASH_CRC_SIZE;
    } else if (version == EMB_CRASH_V2) {
        min = EMB_CRASH_V2_FIXED_SIZE + EMB_CRASH_CRC_SIZE;
    } else {
        return EMB_E_CORRUPT;
    }
    if (len < min || len > cap)
        return EMB_E_CORRUPT;
    if (emb_crc32(0u, r, len - EMB_CRASH_CRC_SIZE) != emb_get_le32(r + len - EMB_CRASH_CRC_SIZE))
        return EMB_E_CORRUPT;
    if (length != NULL)
        *length = len;
    return EMB_OK;
}

/* ---- Flight recorder ---- */

/* Copies up to `max` of the newest complete packets, oldest first, into `out`, keeping
 * each copy only if no producer reserved into the slot's next use while it was taken
 * (the snapshot reader's check). */
static uint32_t emb__copy_last(const struct emb_trace_ring *r, uint8_t *out, uint32_t max)
{
    const struct emb_ring_geometry g = emb__ring_geometry(r);
    uint32_t pos = emb_port_load32_acquire(&r->write_pos);
    const struct emb_ring_held held =
        emb_ring_held(&g, pos, __atomic_load_n(&r->filled, __ATOMIC_RELAXED));
    uint32_t n = held.count < max ? held.count : max;
    uint32_t count = 0;
    for (uint32_t start = held.open_start - n * EMB__P; start != held.open_start; start += EMB__P) {
        if (!emb_ring_packet_complete(&g, start, emb__ring_commit(r, start)))
            continue;
        uint32_t discarded = __atomic_load_n(&r->discarded, __ATOMIC_ACQUIRE);
        memcpy(out + (size_t)count * EMB__P, r->buf + (start & r->buf_mask), EMB__P);
        if (emb_ring_copy_intact(&g, start, emb_port_load32_acquire(&r->write_pos))) {
            emb_trace_packet_raise_discarded(out + (size_t)count * EMB__P, discarded);
            count++;
        }
    }
    return count;
}

/* Copies the committed part of the open packet when it is a prefix (no reservation in
 * flight), padded with zeros, with its closing fields patched in the copy. */
static uint32_t emb__copy_open(const struct emb_trace_ring *r, uint8_t *out)
{
    const struct emb_ring_geometry g = emb__ring_geometry(r);
    /* Only the open packet matters here, not how many are held behind it. */
    const struct emb_ring_held held = emb_ring_held(&g, emb_port_load32_acquire(&r->write_pos), 0u);
    uint32_t off = held.open_used;
    if (!emb_ring_open_committed(&g, &held, emb__ring_commit(r, held.open_start)))
        return 0;
    memcpy(out, r->buf + (held.open_start & r->buf_mask), off);
    memset(out + off, 0, EMB__P - off);
    if (!emb_ring_copy_intact(&g, held.open_start, emb_port_load32_acquire(&r->write_pos)))
        return 0;
    emb_put_le64(out + EMB_PKT_OFF_TS_END, emb_port_timestamp());
    emb_put_le32(out + EMB_PKT_OFF_CONTENT_SIZE, off * 8u);
    emb_put_le32(out + EMB_PKT_OFF_DISCARDED, __atomic_load_n(&r->discarded, __ATOMIC_RELAXED));
    return 1;
}

static bool emb__ring_usable(const struct emb_trace_ring *r)
{
    return r != NULL && r != &emb_trace_unclaimed_ring && r->buf != NULL && r->commit != NULL;
}

static void emb__context_entry(struct emb_tsf_context *e, const struct emb_trace_ring *r)
{
    uint32_t pos = emb_port_load32_acquire(&r->write_pos);
    e->id = r->context_id;
    e->kind = r->context_kind;
    e->discarded = __atomic_load_n(&r->discarded, __ATOMIC_RELAXED);
    const struct emb_ring_geometry g = emb__ring_geometry(r);
    e->packets = emb_ring_packets_opened(&g, pos);
    e->name = r->name;
}

/* Packets that fit after a header with `contexts` entries. */
static uint32_t emb__room(uint32_t cap, uint32_t contexts)
{
    uint32_t header = (uint32_t)EMB_TSF_HEADER_BYTES(contexts);
    return cap > header ? (cap - header) / EMB__P : 0u;
}

/* Contexts a flight recorder names: its table lives on the fault handler's stack. A
 * port with one context only (EMB_PORT_CONTEXTS_MAX 1) loses the code for the others. */
#if defined(EMB_PORT_CONTEXTS_MAX)
#define EMB__FLIGHT_MAX_CONTEXTS EMB_PORT_CONTEXTS_MAX
#else
#define EMB__FLIGHT_MAX_CONTEXTS (sizeof(void *) == 8u ? 64u : 8u)
#endif

uint32_t emb_crash_flight_collect(uint8_t *out, uint32_t cap, struct emb_trace_ring *faulting,
                                  struct emb_trace_ring *const *others, uint32_t other_count,
                                  const struct emb_crash_flight_identity *id, uint16_t *packets)
{
    if (packets != NULL)
        *packets = 0;
    if (out == NULL || id == NULL || !emb__ring_usable(faulting) || (other_count && !others))
        return 0;
    if (cap > EMB_CRASH_MAX_SIZE)
        cap = EMB_CRASH_MAX_SIZE;
    /* Other contexts get one packet each from at most half of the room. */
    const struct emb_trace_ring *chosen[EMB__FLIGHT_MAX_CONTEXTS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < other_count && n + 1u < EMB__FLIGHT_MAX_CONTEXTS; i++)
        if (emb__ring_usable(others[i]) && others[i] != faulting)
            chosen[n++] = others[i];
    while (n > emb__room(cap, 1u + n) / 2u)
        n = emb__room(cap, 1u + n) / 2u;
    if (emb__room(cap, 1u + n) == 0u)
        return 0;

    struct emb_tsf_context table[EMB__FLIGHT_MAX_CONTEXTS];
    emb__context_entry(&table[0], faulting);
    for (uint32_t i = 0; i < n; i++)
        emb__context_entry(&table[1u + i], chosen[i]);
    struct emb_tsf_info info = {
        .catalog_checksum = EMB_TRACE_CATALOG_CHECKSUM,
        .packet_size = EMB__P,
        .clock_hz = emb_port_timestamp_hz(),
        .clock_offset_ns = emb_port_clock_offset_ns(),
        .build_id = id->build_id,
        .build_id_len = id->build_id_len > EMB_TSF_BUILD_ID_MAX ? (uint8_t)EMB_TSF_BUILD_ID_MAX
                                                                : id->build_id_len,
        .pointer_size = id->pointer_size,
        .port = id->port,
    };
    memcpy(info.uuid, emb_trace_uuid(), sizeof info.uuid);
    uint32_t used = (uint32_t)emb_tsf_encode_header(out, cap, &info, table, (uint16_t)(1u + n));
    if (used == 0u)
        return 0;

    uint32_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *slot = out + used;
        uint32_t got = emb__copy_open(chosen[i], slot);
        if (got == 0u)
            got = emb__copy_last(chosen[i], slot, 1u);
        used += got * EMB__P;
        count += got;
    }
    uint32_t got = emb__copy_last(faulting, out + used, (cap - used) / EMB__P);
    used += got * EMB__P;
    count += got;
    if (packets != NULL)
        *packets = (uint16_t)count;
    return used;
}

/* ---- The retained region ---- */

#if CONFIG_EMB_CRASH

struct emb_crash_region emb_crash_region;

emb_status emb_crash_retained_init(uint8_t *region, uint32_t size)
{
    uint32_t mini = (uint32_t)CONFIG_EMB_FAULT_RECORD_RING * EMB_MINI_SIZE;
    if (region == NULL || size < mini + EMB_CRASH_V2_FIXED_SIZE + EMB_CRASH_CRC_SIZE)
        return EMB_E_INVALID;
    uint32_t record_cap = (size - mini) & ~(EMB_MINI_SIZE - 1u);
    emb_crash_region.record = region;
    emb_crash_region.record_cap = record_cap > EMB_CRASH_MAX_SIZE ? EMB_CRASH_MAX_SIZE : record_cap;
    emb_crash_region.mini = mini > 0u ? region + record_cap : NULL;
    emb_crash_region.mini_entries = CONFIG_EMB_FAULT_RECORD_RING;
    uint32_t length = 0;
    emb_crash_region.found = emb_crash_validate(region, emb_crash_region.record_cap, &length);
    emb_crash_region.found_length = length;
    return EMB_OK;
}

emb_status emb_crash_record_get(const uint8_t **record, uint32_t *length)
{
    if (emb_crash_region.record == NULL)
        return EMB_E_STATE;
    uint32_t len = 0;
    emb_status s = emb_crash_validate(emb_crash_region.record, emb_crash_region.record_cap, &len);
    if (record != NULL)
        *record = s == EMB_OK ? emb_crash_region.record : NULL;
    if (length != NULL)
        *length = len;
    return s;
}

void emb_crash_record_clear(void)
{
    if (emb_crash_region.record == NULL)
        return;
    emb__unpublish(emb_crash_region.record);
    emb_put_le32(emb_crash_region.record + EMB_CRASH_OFF_VERSION, 0u);
    emb__barrier();
}

uint8_t *emb_crash_flight_area(uint8_t status_count, uint8_t gpr_count, uint32_t *cap)
{
    uint32_t offset = CONFIG_EMB_CRASH_RECORD_VERSION == 1
                          ? EMB_CRASH_V1_FLIGHT_OFFSET(status_count, gpr_count)
                          : EMB_CRASH_V2_FIXED_SIZE;
    if (cap != NULL)
        *cap = 0;
    if (emb_crash_region.record == NULL ||
        emb_crash_region.record_cap < offset + EMB_CRASH_CRC_SIZE)
        return NULL;
    if (cap != NULL)
        *cap = emb_crash_region.record_cap - offset - EMB_CRASH_CRC_SIZE;
    /* The write starts here: the old record stops being one before its bytes change. */
    emb__unpublish(emb_crash_region.record);
    return emb_crash_region.record + offset;
}

emb_status emb_crash_write(const struct emb_crash_info *info)
{
    if (emb_crash_region.record == NULL)
        return EMB_E_STATE;
    size_t n = CONFIG_EMB_CRASH_RECORD_VERSION == 1
                   ? emb_crash_encode_v1(emb_crash_region.record, emb_crash_region.record_cap, info)
                   : emb_crash_encode_v2(emb_crash_region.record, emb_crash_region.record_cap, info);
    return n > 0u ? EMB_OK : EMB_E_NOSPACE;
}

/* ---- Mini-records ---- */

#if CONFIG_EMB_FAULT_RECORD_RING

static bool emb__mini_valid(const uint8_t *e)
{
    return emb_get_le32(e + EMB_MINI_OFF_MAGIC) == EMB_MINI_MAGIC &&
           e[EMB_MINI_OFF_VERSION] == EMB_MINI_VERSION &&
           emb_crc32(0u, e, EMB_MINI_OFF_CRC) == emb_get_le32(e + EMB_MINI_OFF_CRC);
}

static const uint8_t *emb__mini_entry(uint32_t i)
{
    return emb_crash_region.mini + (size_t)i * EMB_MINI_SIZE;
}

emb_status emb_crash_mini_write(uint8_t partition, uint16_t thread, uint16_t generation,
                                uint8_t fault_class, uint8_t fault_code, uint32_t pc)
{
    const uint32_t n = emb_crash_region.mini_entries;
    if (n == 0u || emb_crash_region.mini == NULL)
        return EMB_E_STATE;
    emb_port_irq_state irq = emb_port_irq_save();
    uint32_t next = 0;
    bool any = false;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = emb__mini_entry(i);
        if (!emb__mini_valid(e))
            continue;
        uint32_t seq = emb_get_le32(e + EMB_MINI_OFF_SEQUENCE);
        if (!any || (int32_t)(seq - (next - 1u)) > 0)
            next = seq + 1u;
        any = true;
    }
    uint8_t entry[EMB_MINI_SIZE];
    emb_put_le32(entry + EMB_MINI_OFF_MAGIC, EMB_MINI_MAGIC);
    entry[EMB_MINI_OFF_VERSION] = EMB_MINI_VERSION;
    entry[EMB_MINI_OFF_PARTITION] = partition;
    emb_put_le16(entry + EMB_MINI_OFF_THREAD, thread);
    entry[EMB_MINI_OFF_FAULT_CLASS] = fault_class;
    entry[EMB_MINI_OFF_FAULT_CODE] = fault_code;
    emb_put_le16(entry + EMB_MINI_OFF_GENERATION, generation);
    emb_put_le32(entry + EMB_MINI_OFF_SEQUENCE, next);
    emb_put_le32(entry + EMB_MINI_OFF_PC, pc);
    emb_put_le64(entry + EMB_MINI_OFF_UPTIME, emb_port_timestamp());
    emb_put_le32(entry + EMB_MINI_OFF_CRC, emb_crc32(0u, entry, EMB_MINI_OFF_CRC));
    uint8_t *slot = emb_crash_region.mini + (size_t)(next % n) * EMB_MINI_SIZE;
    emb_put_le32(slot, 0u);
    emb__barrier();
    memcpy(slot + 4u, entry + 4u, EMB_MINI_SIZE - 4u);
    emb__barrier();
    emb_put_le32(slot, EMB_MINI_MAGIC);
    emb__barrier();
    emb_port_irq_restore(irq);
    return EMB_OK;
}

uint32_t emb_crash_mini_count(void)
{
    uint32_t count = 0;
    for (uint32_t i = 0; emb_crash_region.mini != NULL && i < emb_crash_region.mini_entries; i++)
        count += emb__mini_valid(emb__mini_entry(i)) ? 1u : 0u;
    return count;
}

emb_status emb_crash_mini_get(uint32_t index, uint8_t out[EMB_MINI_SIZE])
{
    const uint32_t n = emb_crash_region.mini != NULL ? emb_crash_region.mini_entries : 0u;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = emb__mini_entry(i);
        if (!emb__mini_valid(e))
            continue;
        uint32_t seq = emb_get_le32(e + EMB_MINI_OFF_SEQUENCE), older = 0;
        for (uint32_t j = 0; j < n; j++) {
            const uint8_t *f = emb__mini_entry(j);
            if (j != i && emb__mini_valid(f) &&
                (int32_t)(emb_get_le32(f + EMB_MINI_OFF_SEQUENCE) - seq) < 0)
                older++;
        }
        if (older == index) {
            memcpy(out, e, EMB_MINI_SIZE);
            return EMB_OK;
        }
    }
    return EMB_E_NOTFOUND;
}

void emb_crash_mini_clear(void)
{
    for (uint32_t i = 0; emb_crash_region.mini != NULL && i < emb_crash_region.mini_entries; i++)
        emb_put_le32(emb_crash_region.mini + (size_t)i * EMB_MINI_SIZE, 0u);
    emb__barrier();
}

#else /* no mini-record ring */

emb_status emb_crash_mini_write(uint8_t partition, uint16_t thread, uint16_t generation,
                                uint8_t fault_class, uint8_t fault_code, uint32_t pc)
{
    (void)partition;
    (void)thread;
    (void)generation;
    (void)fault_class;
    (void)fault_code;
    (void)pc;
    return EMB_E_STATE;
}

uint32_t emb_crash_mini_count(void)
{
    return 0;
}

emb_status emb_crash_mini_get(uint32_t index, uint8_t out[EMB_MINI_SIZE])
{
    (void)index;
    (void)out;
    return EMB_E_NOTFOUND;
}

void emb_crash_mini_clear(void)
{
}

#endif /* CONFIG_EMB_FAULT_RECORD_RING */

#endif /* CONFIG_EMB_CRASH */
