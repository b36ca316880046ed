/* The isolated, multicore profile (SPEC-015 §9): partitions on one or more CPUs. Deferred
 * log, every trace class (streaming or snapshot), the v1 crash record plus the retained
 * ring of partition mini-records, the full descriptor, monitors on. Each default below is
 * overridable on the command line or in EMB_CONFIG_FILE (docs/profiles.md). */
#ifndef EMB_PROFILE_ISOLATED_H
#define EMB_PROFILE_ISOLATED_H

#define CONFIG_EMB_PROFILE_NAME "isolated"

#ifndef CONFIG_EMB_TRACE_CLASSES
#define CONFIG_EMB_TRACE_CLASSES 0xFFFFFFFFu
#endif
#ifndef CONFIG_EMB_CRASH_RECORD_VERSION
#define CONFIG_EMB_CRASH_RECORD_VERSION 1
#endif
/* A contained partition fault leaves a 32-byte mini-record here (docs/formats/crash.md). */
#ifndef CONFIG_EMB_FAULT_RECORD_RING
#define CONFIG_EMB_FAULT_RECORD_RING 8
#endif
/* The partition table (emb/partition.h), in the descriptor's partitions section. */
#ifndef CONFIG_EMB_PARTITIONS
#define CONFIG_EMB_PARTITIONS 8
#endif
#ifndef CONFIG_EMB_MONITOR
#define CONFIG_EMB_MONITOR 1
#endif

#endif /* EMB_PROFILE_ISOLATED_H */
