/* Partitions (SPEC-015 §9, the isolated profile): parts of a firmware whose faults are
 * contained. A partition is a number below CONFIG_EMB_PARTITIONS with a name; contexts
 * say which one runs on them (emb_context_info.partition). When code of a partition
 * faults, the fault handler that contains it calls emb_partition_fault(): the partition's
 * counts, a 32-byte mini-record in the retained ring (CONFIG_EMB_FAULT_RECORD_RING,
 * docs/formats/crash.md) and a `partition_fault` event (class `part`); once the partition
 * runs again, emb_partition_restarted() adds a `partition_restart` event. The table is in
 * the debug descriptor's partitions section (docs/formats/descriptor.md), so `emb desc`
 * shows every partition's state and counts from a memory image.
 *
 * CONFIG_EMB_PARTITIONS=0 (the default outside the isolated profile) compiles it out: the
 * calls return EMB_E_STATE. */
#ifndef EMB_PARTITION_H
#define EMB_PARTITION_H

#include <stdint.h>

#include <emb/config.h>
#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

enum emb_partition_state {
    EMB_PARTITION_UNUSED = 0,     /* not defined */
    EMB_PARTITION_RUNNING = 1,
    EMB_PARTITION_RESTARTING = 2, /* faulted, contained, not running again yet */
};

#define EMB_PARTITION_NAME_MAX 16u

/* One partition as tools see it (the descriptor describes its fields). */
struct emb_partition_info {
    char name[EMB_PARTITION_NAME_MAX];
    uint32_t faults;          /* contained faults */
    uint32_t restarts;
    uint32_t last_fault_pc;
    uint8_t id;
    uint8_t state;            /* enum emb_partition_state */
    uint8_t last_fault_class; /* enum emb_fault_class */
    uint8_t last_fault_code;
};

#if CONFIG_EMB_PARTITIONS
extern struct emb_partition_info emb_partitions[CONFIG_EMB_PARTITIONS];
#endif

/* Defines partition `id` (below CONFIG_EMB_PARTITIONS), running, with `name` (at most 15
 * characters kept). */
emb_status emb_partition_define(uint8_t id, const char *name);

/* A contained fault of partition `id` on context `thread`: counts it, writes the
 * mini-record (its generation: the restarts so far) and records `partition_fault`. */
emb_status emb_partition_fault(uint8_t id, uint16_t thread, uint8_t fault_class, uint8_t code,
                               uintptr_t pc);

/* Partition `id` runs again, `duration` trace clock cycles after its fault: counts it and
 * records `partition_restart` with the restart count. */
emb_status emb_partition_restarted(uint8_t id, uint32_t duration);

#ifdef __cplusplus
}
#endif

#endif /* EMB_PARTITION_H */
