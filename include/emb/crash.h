/* Crash records: what a fatal fault leaves in retained memory for the next start.
 *
 * A port's fault path fills a struct emb_crash_info (registers, thread, fault address)
 * and calls emb_crash_write(), which encodes the configured record version into the
 * retained region, last trace packets included, and publishes it by writing the CRC and
 * then the magic after a barrier: a record torn by a reset or a kill is never believed.
 * On the next start emb_crash_retained_init() validates what the region holds and
 * emb_crash_record_get() hands it to the application, which uploads it and calls
 * emb_crash_record_clear(). Contained faults append a 32-byte mini-record to a ring of
 * CONFIG_EMB_FAULT_RECORD_RING entries instead. Formats: docs/formats/crash.md.
 *
 * Everything here is async-signal-safe and callable from a fault handler: no locks, no
 * allocation, only stores into memory the caller or the region provides.
 */
#ifndef EMB_CRASH_H
#define EMB_CRASH_H

#include <stddef.h>
#include <stdint.h>

#include <emb/config.h>
#include <emb/crash_format.h>
#include <emb/status.h>
#include <emb/trace_format.h>

#ifdef __cplusplus
extern "C" {
#endif

struct emb_trace_ring;

/* What the fault path knows. Addresses are as the ELF sees them (see the doc: on a
 * position-independent native image, runtime address minus the load bias). */
struct emb_crash_info {
    const uint8_t *build_id;      /* the image's build id; may be NULL */
    uint8_t build_id_len;
    const char *fw_version;       /* up to 8 characters; may be NULL */
    uint64_t uptime_ticks;        /* trace clock at the fault */
    uint32_t reset_reason;        /* enum emb_reset_reason */
    uint8_t fault_class;          /* enum emb_fault_class */
    uint8_t fault_code;
    uint8_t cpu_id;
    uint8_t partition_id;
    uint16_t thread_index;
    uint16_t thread_generation;
    uint32_t fault_address;
    uint32_t pc;
    uint32_t lr;                  /* link register or return address */
    uint32_t sp;
    uint32_t stack_base;          /* lowest address of the stack */
    uint32_t stack_size;
    uint8_t addr_shift;           /* v2: addresses are stored as (address >> addr_shift) */
    const uint32_t *status_regs;  /* status_count words; [0] names the layout */
    uint8_t status_count;
    const uint32_t *gprs;
    uint8_t gpr_count;
    /* The flight recorder: an EMBT stream header then whole packets. When `flight`
     * points at the record's own flight offset (emb_crash_flight_area()), the bytes
     * are already in place and are not copied. */
    const uint8_t *flight;
    uint32_t flight_len;
    uint16_t flight_packets;
};

/* Encodes a record into `out` (which may be the retained region itself): the magic is
 * cleared first, then the body and the CRC are written, and the magic last, each step
 * after a barrier. Returns the record's length, or 0 when it does not fit in `cap` or
 * an argument is out of range. One encoder per version. */
size_t emb_crash_encode_v1(uint8_t *out, size_t cap, const struct emb_crash_info *info);
size_t emb_crash_encode_v2(uint8_t *out, size_t cap, const struct emb_crash_info *info);

/* Checks a record in memory: magic, a known version, a length within `cap` that agrees
 * with the register counts, and the CRC. Returns EMB_OK and the length, EMB_E_NOTFOUND
 * when there is no magic, EMB_E_CORRUPT otherwise. */
emb_status emb_crash_validate(const uint8_t *record, size_t cap, uint32_t *length);

/* The identity the flight recorder's stream header carries (docs/formats/trace.md). */
struct emb_crash_flight_identity {
    const uint8_t *build_id;
    uint8_t build_id_len;
    uint8_t pointer_size;
    const char *port;
};

/* Collects the last trace packets into `out` as an EMBT stream: the header (with one
 * context entry per ring given), then the faulting ring's newest complete packets
 * (flush it first), then one packet of every other ring: the committed part of its open
 * packet (with content_size patched in the copy), or its newest complete one. The
 * faulting ring gets at least half of the room. Safe while other contexts keep
 * recording. Returns the bytes written (0: nothing fits) and the packets in *packets. */
uint32_t emb_crash_flight_collect(uint8_t *out, uint32_t cap, struct emb_trace_ring *faulting,
                                  struct emb_trace_ring *const *others, uint32_t other_count,
                                  const struct emb_crash_flight_identity *id,
                                  uint16_t *packets);

#if CONFIG_EMB_CRASH

/* The retained region, given at every start: [record area | mini-record ring]. The ring
 * takes CONFIG_EMB_FAULT_RECORD_RING * 32 bytes at the end (32-byte aligned). Validates
 * the record the region holds; the region must stay mapped for the rest of the run. */
emb_status emb_crash_retained_init(uint8_t *region, uint32_t size);

/* The record the previous run left: EMB_OK with its bytes and length, EMB_E_NOTFOUND
 * when there is none, EMB_E_CORRUPT when one was started but not finished (a torn
 * record; its bytes are not returned). */
emb_status emb_crash_record_get(const uint8_t **record, uint32_t *length);

/* Forgets the record: clears its magic (after this, get returns EMB_E_NOTFOUND). */
void emb_crash_record_clear(void);

/* Starts a write: clears the region's record (its magic) and returns where a fault path
 * collects the flight recorder in place, the record area at the flight offset of a
 * record with these register counts, with the room there in *cap. NULL when there is no
 * region. Finish with emb_crash_write(), `flight` pointing here. */
uint8_t *emb_crash_flight_area(uint8_t status_count, uint8_t gpr_count, uint32_t *cap);

/* Encodes `info` as record version CONFIG_EMB_CRASH_RECORD_VERSION into the region.
 * Call from the fault path before any recovery action. */
emb_status emb_crash_write(const struct emb_crash_info *info);

/* Mini-records: a contained fault of partition `partition`. Overwrites the oldest entry
 * when the ring is full. EMB_E_STATE when the ring is compiled out or not set up. */
emb_status emb_crash_mini_write(uint8_t partition, uint16_t thread, uint16_t generation,
                                uint8_t fault_class, uint8_t fault_code, uint32_t pc);
/* Valid mini-records held, and the i-th oldest (32 bytes into out). */
uint32_t emb_crash_mini_count(void);
emb_status emb_crash_mini_get(uint32_t i, uint8_t out[EMB_MINI_SIZE]);
void emb_crash_mini_clear(void);

/* Where the region is, for the debug descriptor and tools. */
struct emb_crash_region {
    uint8_t *record;        /* record area */
    uint32_t record_cap;    /* bytes */
    uint8_t *mini;          /* mini-record ring (entries of 32 bytes) */
    uint32_t mini_entries;
    uint32_t found;         /* emb_status of the validation at start */
    uint32_t found_length;  /* length of the record found at start */
};
extern struct emb_crash_region emb_crash_region;

#endif /* CONFIG_EMB_CRASH */

#ifdef __cplusplus
}
#endif

#endif /* EMB_CRASH_H */
