/* The tiny profile (SPEC-015 §9): an 8-bit or very small part. Plain-text log over a UART
 * with the same call sites, trace off (the `sched` class may be compiled in, with the
 * kernel tick as the clock), the small v2 crash record in `.noinit`, the reduced
 * descriptor, no monitors. Each default below is overridable on the command line or in
 * EMB_CONFIG_FILE (docs/profiles.md). */
#ifndef EMB_PROFILE_TINY_H
#define EMB_PROFILE_TINY_H

#define CONFIG_EMB_PROFILE_NAME "tiny"

/* Log: formatted on the target and written at once, short lines and arguments. */
#ifndef CONFIG_EMB_LOG_TEXT
#define CONFIG_EMB_LOG_TEXT 1
#endif
#ifndef CONFIG_EMB_LOG_TEXT_LINE_MAX
#define CONFIG_EMB_LOG_TEXT_LINE_MAX 80
#endif
#ifndef CONFIG_EMB_LOG_STR_MAX
#define CONFIG_EMB_LOG_STR_MAX 16
#endif
#ifndef CONFIG_EMB_LOG_RECORD_MAX
#define CONFIG_EMB_LOG_RECORD_MAX 32
#endif
#ifndef CONFIG_EMB_LOG_HEXDUMP_MAX
#define CONFIG_EMB_LOG_HEXDUMP_MAX 16
#endif

/* Trace: off. To keep the `sched` class, -DCONFIG_EMB_TRACE_CLASSES=0x1u (bit 0). The
 * smallest ring the format allows. */
#ifndef CONFIG_EMB_TRACE_CLASSES
#define CONFIG_EMB_TRACE_CLASSES 0u
#endif
#ifndef CONFIG_EMB_TRACE_PACKET_SIZE
#define CONFIG_EMB_TRACE_PACKET_SIZE 256u
#endif
#ifndef CONFIG_EMB_TRACE_RING_PACKETS
#define CONFIG_EMB_TRACE_RING_PACKETS 2u
#endif
#ifndef CONFIG_EMB_TRACE_MAX_PAYLOAD
#define CONFIG_EMB_TRACE_MAX_PAYLOAD 16u
#endif
#ifndef CONFIG_EMB_TRACE_STREAMING
#define CONFIG_EMB_TRACE_STREAMING 0
#endif
#ifndef CONFIG_EMB_TRACE_WINDOW
#define CONFIG_EMB_TRACE_WINDOW 0
#endif
#ifndef CONFIG_EMB_TRACE_INLINE
#define CONFIG_EMB_TRACE_INLINE 0
#endif
#ifndef CONFIG_EMB_LOG_INLINE
#define CONFIG_EMB_LOG_INLINE 0
#endif

/* Crash: the small v2 record, no partition mini-records. */
#ifndef CONFIG_EMB_CRASH_RECORD_VERSION
#define CONFIG_EMB_CRASH_RECORD_VERSION 2
#endif
#ifndef CONFIG_EMB_FAULT_RECORD_RING
#define CONFIG_EMB_FAULT_RECORD_RING 0
#endif

/* No monitors, statistics or memory channel. */
#ifndef CONFIG_EMB_MONITOR
#define CONFIG_EMB_MONITOR 0
#endif
#ifndef CONFIG_EMB_STATS
#define CONFIG_EMB_STATS 0
#endif
#ifndef CONFIG_EMB_MEMCHAN
#define CONFIG_EMB_MEMCHAN 0
#endif

#endif /* EMB_PROFILE_TINY_H */
