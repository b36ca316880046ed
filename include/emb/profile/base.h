/* The base profile (SPEC-015 §9): a 32-bit microcontroller. Deferred log over the memory
 * channel or a UART, a snapshot trace ring with the `sched`, `sync` and `irq` classes
 * (and the fault marker and the application's hooks), the v1 crash record in a retained
 * region or `.noinit`, the full descriptor, monitors available. Each default below is
 * overridable on the command line or in EMB_CONFIG_FILE (docs/profiles.md). */
#ifndef EMB_PROFILE_BASE_H
#define EMB_PROFILE_BASE_H

#define CONFIG_EMB_PROFILE_NAME "base"

/* Class bits (catalog/trace_events.yaml): sched 0, sync 3, irq 8; part 11 for the
 * partition_fault marker a port's fault handler leaves in the flight recorder; user 13
 * and frame 14, the application's own hooks; and 16 to 31, the classes of the firmware's
 * own catalogue (emb_add_library(... CATALOG ...)), which the built-in one leaves free. */
#ifndef CONFIG_EMB_TRACE_CLASSES
#define CONFIG_EMB_TRACE_CLASSES                                                             \
    ((1u << 0) | (1u << 3) | (1u << 8) | (1u << 11) | (1u << 13) | (1u << 14) | 0xFFFF0000u)
#endif
#ifndef CONFIG_EMB_CRASH_RECORD_VERSION
#define CONFIG_EMB_CRASH_RECORD_VERSION 1
#endif
#ifndef CONFIG_EMB_FAULT_RECORD_RING
#define CONFIG_EMB_FAULT_RECORD_RING 0
#endif

#endif /* EMB_PROFILE_BASE_H */
