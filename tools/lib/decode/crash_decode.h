/* The decoder of crash records (v1, v2) and partition mini-records ("EMBP"),
 * docs/formats/crash.md: the one reader of these formats on the host. It checks magic,
 * version, length, the register counts against the length, and the CRC, and refuses
 * anything else with the byte offset where it went wrong. Nothing is copied: pointers
 * point into the caller's bytes.
 */
#ifndef EMB_HOST_CRASH_DECODE_H
#define EMB_HOST_CRASH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/crash_format.h>

#include "problem.h"

/* A decoded record of any version; fields a version lacks are zero. */
struct emb_crash_record {
    uint16_t version;
    uint32_t length;
    uint8_t build_id[EMB_CRASH_V1_BUILD_ID_SIZE];
    uint8_t build_id_len;            /* 20 in v1, 8 (a prefix) in v2 */
    char fw_version[EMB_CRASH_FW_VERSION_SIZE + 1];
    uint64_t uptime_ticks;           /* v2: the low 32 bits */
    uint32_t reset_reason;
    uint8_t fault_class;
    uint8_t fault_code;
    uint8_t cpu_id;
    uint8_t partition_id;
    uint16_t thread_index;
    uint16_t thread_generation;
    uint8_t addr_shift;              /* v2: stored addresses were shifted right by this */
    uint8_t addr_lost;               /* v2: EMB_CRASH_V2_LOST_* bits: fields holding only
                                      * part of their address (the low 16 bits kept) */
    uint32_t fault_address;          /* addresses as stored, shifted back for v2; 0 for a
                                      * monitor fault */
    uint32_t pc;
    uint32_t lr;                     /* 0 for a monitor fault */
    uint32_t sp;
    uint32_t stack_base;
    uint32_t stack_size;
    uint8_t status_count;
    uint8_t gpr_count;
    const uint8_t *status_regs;      /* status_count little-endian u32 words */
    const uint8_t *gprs;             /* gpr_count words */
    uint16_t flight_packets;
    uint32_t flight_offset;          /* byte offset of the flight recorder in the input */
    uint32_t flight_len;
    const uint8_t *flight;           /* an EMBT stream, or NULL when flight_len is 0 */
    uint32_t crc;
    /* A monitor fault (fault_class EMB_FAULT_MONITOR, fault_code its category): the
     * interval that crossed the threshold and the threshold, in trace clock cycles, which
     * the record keeps in its fault_address and lr_or_ra fields. */
    uint32_t monitor_interval;
    uint32_t monitor_threshold;
};

/* Decodes the record at the start of data[0..size). Trailing bytes are ignored (a
 * retained region holds more than the record). Returns 0, or -1 after reporting why to
 * ps (NULL: to no one) as an error at its byte offset in data. */
int emb_crash_decode(const uint8_t *data, size_t size, struct emb_crash_record *out,
                     struct emb_problems *ps);
/* The same for a record that starts `base` bytes into its file (a capture's crash
 * section): the problem's offset counts from the file's start. */
int emb_crash_decode_at(const uint8_t *data, size_t size, long long base,
                        struct emb_crash_record *out, struct emb_problems *ps);

/* Word i of the status registers or general registers. */
uint32_t emb_crash_status_reg(const struct emb_crash_record *r, unsigned i);
uint32_t emb_crash_gpr(const struct emb_crash_record *r, unsigned i);

struct emb_crash_mini {
    uint64_t offset;                 /* in the input */
    uint32_t sequence;
    uint8_t partition;
    uint16_t thread;
    uint16_t generation;
    uint8_t fault_class;
    uint8_t fault_code;
    uint32_t pc;
    uint64_t uptime_ticks;
};

/* Decodes one 32-byte mini-record. Returns 0, or -1 after reporting why to ps (NULL: to
 * no one). */
int emb_crash_mini_decode(const uint8_t *data, size_t size, struct emb_crash_mini *out,
                          struct emb_problems *ps);

/* Valid mini-records at 32-byte steps in data[from..size), sorted oldest first (by
 * sequence). Returns how many were found (at most max are stored). */
size_t emb_crash_mini_scan(const uint8_t *data, size_t size, size_t from,
                           struct emb_crash_mini *out, size_t max);

/* A monitor category (include/emb/monitor.h) in words: "irq_lock", ..., "isr vector 3". */
const char *emb_crash_monitor_name(unsigned category, char *buf, size_t len);

/* Names: "memory", "pin", ...; "unknown" outside the enumerations. */
const char *emb_crash_fault_class_name(unsigned fault_class);
const char *emb_crash_reset_reason_name(unsigned reason);

#endif /* EMB_HOST_CRASH_DECODE_H */
