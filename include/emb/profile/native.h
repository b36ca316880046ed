/* The native profile (SPEC-015 §9): the library in a host process. Deferred log to a host
 * pipe decoded live, every trace class streamed, crash records in a host file (with the
 * partition mini-record ring), the full descriptor, monitors on. Each default below is
 * overridable on the command line or in EMB_CONFIG_FILE (docs/profiles.md). */
#ifndef EMB_PROFILE_NATIVE_H
#define EMB_PROFILE_NATIVE_H

#define CONFIG_EMB_PROFILE_NAME "native"

#ifndef CONFIG_EMB_TRACE_CLASSES
#define CONFIG_EMB_TRACE_CLASSES 0xFFFFFFFFu
#endif
#ifndef CONFIG_EMB_FAULT_RECORD_RING
#define CONFIG_EMB_FAULT_RECORD_RING 8
#endif
#ifndef CONFIG_EMB_MONITOR
#define CONFIG_EMB_MONITOR 1
#endif

#endif /* EMB_PROFILE_NATIVE_H */
