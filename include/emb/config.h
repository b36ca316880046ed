/* Build-time configuration of the target library.
 *
 * Every option has a default here and can be overridden on the compiler command line
 * (-DCONFIG_EMB_X=...) or in a header named by EMB_CONFIG_FILE. Options are tested with
 * `if (CONFIG_EMB_X)` where possible so every branch is compiled in every configuration.
 * Whatever the host must know about a setting travels in the stream header, never as a
 * host flag that has to mirror a target setting.
 */
#ifndef EMB_CONFIG_H
#define EMB_CONFIG_H

#ifdef EMB_CONFIG_FILE
#include EMB_CONFIG_FILE
#endif

/* The profile (SPEC-015 §9, docs/profiles.md): one of the four below, chosen by the build
 * (CMake's EMB_PROFILE sets -DCONFIG_EMB_PROFILE=EMB_PROFILE_<NAME>). Its header sets
 * that profile's defaults, each still overridable; what it leaves alone gets the
 * defaults of this file. Default: native in a hosted build, base in a freestanding one.
 * The descriptor names the profile built (CONFIG_EMB_PROFILE_NAME). */
#define EMB_PROFILE_TINY 1
#define EMB_PROFILE_BASE 2
#define EMB_PROFILE_ISOLATED 3
#define EMB_PROFILE_NATIVE 4
#ifndef CONFIG_EMB_PROFILE
#if defined(__STDC_HOSTED__) && __STDC_HOSTED__
#define CONFIG_EMB_PROFILE EMB_PROFILE_NATIVE
#else
#define CONFIG_EMB_PROFILE EMB_PROFILE_BASE
#endif
#endif
#if CONFIG_EMB_PROFILE == EMB_PROFILE_TINY
#include <emb/profile/tiny.h>
#elif CONFIG_EMB_PROFILE == EMB_PROFILE_BASE
#include <emb/profile/base.h>
#elif CONFIG_EMB_PROFILE == EMB_PROFILE_ISOLATED
#include <emb/profile/isolated.h>
#elif CONFIG_EMB_PROFILE == EMB_PROFILE_NATIVE
#include <emb/profile/native.h>
#else
#error "CONFIG_EMB_PROFILE is EMB_PROFILE_TINY, _BASE, _ISOLATED or _NATIVE"
#endif

/* Compile-time checks in both languages the headers serve. */
#if defined(__cplusplus)
#define EMB_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define EMB_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* Trace classes compiled in, as a bit mask over enum emb_trace_class (generated from
 * catalog/trace_events.yaml). A call site of a class outside the mask expands to nothing
 * and evaluates none of its arguments. Default: every class. Cost: none until enabled at
 * run time, then one load and a branch per call site. */
#ifndef CONFIG_EMB_TRACE_CLASSES
#define CONFIG_EMB_TRACE_CLASSES 0xFFFFFFFFu
#endif

/* Trace emitters: 1, each call site inlines the fast path (fastest); 0, a call site is
 * the class test and a call to the event's one out-of-line emitter (about 16 bytes of
 * code per call site instead of about 130 on Cortex-M, for a call and a return per
 * event). Default: 0 when the build optimises for size (-Os), else 1. Mixing the two in
 * one image is allowed. */
#ifndef CONFIG_EMB_TRACE_INLINE
#if defined(__OPTIMIZE_SIZE__)
#define CONFIG_EMB_TRACE_INLINE 0
#else
#define CONFIG_EMB_TRACE_INLINE 1
#endif
#endif

/* Trace modes beyond snapshot (always there): streaming (a consumer hands packets to a
 * sink; with it the trace stream header's identity and ring blocks) and window. 0
 * compiles a mode out; a ring started in it then records as in snapshot mode. */
#ifndef CONFIG_EMB_TRACE_STREAMING
#define CONFIG_EMB_TRACE_STREAMING 1
#endif
#ifndef CONFIG_EMB_TRACE_WINDOW
#define CONFIG_EMB_TRACE_WINDOW 1
#endif

/* 1: a ring that recycles a packet nobody read (a snapshot ring wrapping, a streaming ring
 * overtaking its consumer) adds that packet's events to events_discarded: on x86-64 each
 * event counts itself in its packet's last word (one add per event), elsewhere the slow
 * path walks the packet with the catalogue's event sizes (emb_trace_event_words, one byte
 * per event id). 0: no count, no walk and no size table in the image; such a loss then
 * shows only as the packet_seq_num gap
 * (docs/formats/trace.md, "What is lost"). Drops (no slot, a closed window) are counted
 * either way. */
#ifndef CONFIG_EMB_TRACE_COUNT_OVERWRITTEN
#define CONFIG_EMB_TRACE_COUNT_OVERWRITTEN 1
#endif

/* Bytes per trace packet (a CTF packet). Power of two, at least 256. */
#ifndef CONFIG_EMB_TRACE_PACKET_SIZE
#define CONFIG_EMB_TRACE_PACKET_SIZE 1024u
#endif

/* Packets per context ring. Power of two, at least 2. RAM cost per context:
 * CONFIG_EMB_TRACE_PACKET_SIZE * CONFIG_EMB_TRACE_RING_PACKETS + 4 * packets + ~64 bytes. */
#ifndef CONFIG_EMB_TRACE_RING_PACKETS
#define CONFIG_EMB_TRACE_RING_PACKETS 16u
#endif

/* Largest event payload in bytes the emitters may reserve. */
#ifndef CONFIG_EMB_TRACE_MAX_PAYLOAD
#define CONFIG_EMB_TRACE_MAX_PAYLOAD 64u
#endif

/* Frames (emb/frame.h): the CRC-16 a byte at a time from a 512-byte table (1) or four
 * bits at a time from a 32-byte one (0, about half the speed). The host tools and the
 * native port use the byte table. */
#ifndef CONFIG_EMB_FRAME_CRC_TABLE256
#define CONFIG_EMB_FRAME_CRC_TABLE256 0
#endif

/* CRC-32 (emb/crc.h, crash records): four bits at a time from a 64-byte table (1), or a
 * bit at a time with none (0: the same CRC at a quarter of the speed, about 60 bytes of
 * flash less; for an image where only the crash path checks a record once per boot). */
#ifndef CONFIG_EMB_CRC32_TABLE
#define CONFIG_EMB_CRC32_TABLE 1
#endif

/* The memory channel (emb/memchan.h): a control block at the symbol `emb_memchan` that a
 * debug probe finds and polls. Cost when enabled: the control block (32 bytes plus 32 per
 * ring) and the ring buffers the application gives it. */
#ifndef CONFIG_EMB_MEMCHAN
#define CONFIG_EMB_MEMCHAN 1
#endif

/* Lay the memory channel's control block out as SEGGER RTT's ("SEGGER RTT" identifier,
 * up and down buffer descriptors of native pointers), so existing probe tooling reads it
 * unchanged. Otherwise the documented native layout (docs/formats/memchan.md). */
#ifndef CONFIG_EMB_MEMCHAN_RTT_COMPAT
#define CONFIG_EMB_MEMCHAN_RTT_COMPAT 0
#endif

/* Up rings (target to host) and down rings (host to target) in the control block. */
#ifndef CONFIG_EMB_MEMCHAN_UP
#define CONFIG_EMB_MEMCHAN_UP 2u
#endif
#ifndef CONFIG_EMB_MEMCHAN_DOWN
#define CONFIG_EMB_MEMCHAN_DOWN 1u
#endif

/* Crash records in a retained region (emb/crash.h): the writer the fault path calls, the
 * validation at start, emb_crash_record_get/clear. 0 compiles them out (the encoders stay:
 * they cost nothing unless called). Cost: about 1.5 KiB of code; the region is the
 * application's (native: a file). */
#ifndef CONFIG_EMB_CRASH
#define CONFIG_EMB_CRASH 1
#endif

/* The record version emb_crash_write() encodes: 1 (registers, SPEC-015 §4) or 2 (small:
 * 16-bit fields, no registers, for the tiny profile). */
#ifndef CONFIG_EMB_CRASH_RECORD_VERSION
#define CONFIG_EMB_CRASH_RECORD_VERSION 1
#endif

/* Entries in the retained ring of partition mini-records; 0 compiles the ring out.
 * Cost: 32 bytes of retained RAM per entry. */
#ifndef CONFIG_EMB_FAULT_RECORD_RING
#define CONFIG_EMB_FAULT_RECORD_RING 0
#endif

/* Partitions (emb/partition.h): the most partitions the table holds, their contained
 * faults and restarts, in the descriptor's partitions section; 0 compiles them out (on
 * by default in the isolated profile). Cost: 32 bytes of RAM per partition. */
#ifndef CONFIG_EMB_PARTITIONS
#define CONFIG_EMB_PARTITIONS 0
#endif
EMB_STATIC_ASSERT(CONFIG_EMB_PARTITIONS <= 255, "CONFIG_EMB_PARTITIONS above 255");

/* Worst-case monitors (emb/monitor.h): interrupt lock, scheduler lock, each interrupt
 * vector, thread run, work handler. 0 compiles them out: the lock hooks still lock.
 * Cost: a timestamp read at each open and close, one compare at each close. */
#ifndef CONFIG_EMB_MONITOR
#define CONFIG_EMB_MONITOR 1
#endif

/* Interrupt vectors with a monitor of their own (vectors 0 .. N-1); at most 240. */
#ifndef CONFIG_EMB_MONITOR_ISR_VECTORS
#define CONFIG_EMB_MONITOR_ISR_VECTORS 32
#endif

/* Statistics (emb/monitor.h): per CPU, per thread and per object counts the port can
 * observe. 0 compiles them out. Cost: a few adds at switches, locks and interrupts. */
#ifndef CONFIG_EMB_STATS
#define CONFIG_EMB_STATS 1
#endif

/* CPUs sharing memory that keep monitors and CPU statistics of their own (emb/monitor.h):
 * with more than 1, each CPU updates only its own blocks, found through the port's
 * emb_port_cpu_index(), with its interrupts masked around a plain load and store: no
 * atomic read-modify-write across CPUs on the recording path. 1: one set of blocks,
 * updated with atomics (the native port's threads, a single core). */
#ifndef CONFIG_EMB_CPUS
#define CONFIG_EMB_CPUS 1
#endif

/* The debug descriptor (emb/descriptor.h): read-only data that tells tools where
 * everything is. 0 leaves it out. Cost: about 1 KiB of read-only data. */
#ifndef CONFIG_EMB_DESCRIPTOR
#define CONFIG_EMB_DESCRIPTOR 1
#endif

/* What the firmware says it is, in the descriptor's identity (and so in every capture a
 * host reads through it): its name and version (at most 31 characters kept), and its
 * build flags as "key=value ..." (at most 160). String literals; emb_add_library() of the
 * CMake package stamps them (NAME, VERSION or `git describe`, OPTIONS). Cost: the two
 * strings in read-only data. */
#ifndef CONFIG_EMB_FIRMWARE_VERSION
#define CONFIG_EMB_FIRMWARE_VERSION ""
#endif
#ifndef CONFIG_EMB_FIRMWARE_CONFIG
#define CONFIG_EMB_FIRMWARE_CONFIG ""
#endif

/* ---- Deferred logging (emb/log.h, docs/formats/log.md) ---- */

/* Logging compiled in at all. 0: every EMB_LOG_* call site expands to nothing. */
#ifndef CONFIG_EMB_LOG
#define CONFIG_EMB_LOG 1
#endif

/* Most verbose level any module may compile in (EMB_LOG_LEVEL_*: 0 none .. 4 debug). A
 * call site above it, or above its module's compile-time level, expands to nothing and
 * evaluates none of its arguments. */
#ifndef CONFIG_EMB_LOG_MAX_LEVEL
#define CONFIG_EMB_LOG_MAX_LEVEL 4
#endif

/* Records carry the low 32 bits of the trace clock. 0 saves 4 bytes and a clock read per
 * record; sync markers still carry the full time. */
#ifndef CONFIG_EMB_LOG_TIMESTAMP
#define CONFIG_EMB_LOG_TIMESTAMP 1
#endif

/* Bytes of a record's id: 0, chosen at link time (2 while the log metadata region and the
 * 4 reserved ids fit in 64 KiB, else 4: the linker fragment ports/cortex-m/emb_log.ld
 * computes the symbol emb_log_id_bytes, which call sites read); or fixed, 2 or 4 (with 2,
 * emb_log_init() and the fragment refuse a region that outgrew it). The default is 0 on an
 * M-profile core, which links statically with the fragment, else 2: a position-independent
 * executable cannot take a link-time constant into its code. Stated in the ELF note. */
#ifndef CONFIG_EMB_LOG_ID_BYTES
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define CONFIG_EMB_LOG_ID_BYTES 0
#else
#define CONFIG_EMB_LOG_ID_BYTES 2
#endif
#endif

/* Longest %s argument copied, in bytes; a longer string is clipped and marked. */
#ifndef CONFIG_EMB_LOG_STR_MAX
#define CONFIG_EMB_LOG_STR_MAX 32
#endif

/* Longest hexdump copied, in bytes; a longer buffer is clipped and marked. */
#ifndef CONFIG_EMB_LOG_HEXDUMP_MAX
#define CONFIG_EMB_LOG_HEXDUMP_MAX 64
#endif

/* Largest record a call site may produce; checked at compile time per call site. Each
 * ring keeps this much (plus a dropped and a sync record) as slack past its end. */
#ifndef CONFIG_EMB_LOG_RECORD_MAX
#define CONFIG_EMB_LOG_RECORD_MAX 256
#endif

/* A sync marker (full time, context) precedes the record after every this many records
 * of a ring, so a decoder that joins mid-stream resynchronises within that many. */
#ifndef CONFIG_EMB_LOG_SYNC_INTERVAL
#define CONFIG_EMB_LOG_SYNC_INTERVAL 64
#endif

/* 1: the call site writes its record to the output itself (early boot, debugging);
 * 0: a worker drains the rings (emb_log_drain()). */
/* Log call sites: 1, each inlines the reservation's fast path; 0, each calls
 * emb_log_reserve() (smaller code, a call per record). Default: 0 when the build
 * optimises for size (-Os), else 1. */
#ifndef CONFIG_EMB_LOG_INLINE
#if defined(__OPTIMIZE_SIZE__)
#define CONFIG_EMB_LOG_INLINE 0
#else
#define CONFIG_EMB_LOG_INLINE 1
#endif
#endif

#ifndef CONFIG_EMB_LOG_IMMEDIATE
#define CONFIG_EMB_LOG_IMMEDIATE 0
#endif

/* 1: call sites format text on the target with emb_vsnprintf() and write it at once
 * (the tiny profile, or a host without the ELF); format strings then live in flash. */
#ifndef CONFIG_EMB_LOG_TEXT
#define CONFIG_EMB_LOG_TEXT 0
#endif

/* Longest line the text backend formats, terminator included; longer lines are cut. */
#ifndef CONFIG_EMB_LOG_TEXT_LINE_MAX
#define CONFIG_EMB_LOG_TEXT_LINE_MAX 160
#endif

/* Ring bytes per data frame the drain writes (docs/formats/log.md). */
#ifndef CONFIG_EMB_LOG_FRAME_DATA_MAX
#define CONFIG_EMB_LOG_FRAME_DATA_MAX 1024
#endif

EMB_STATIC_ASSERT(CONFIG_EMB_LOG_ID_BYTES == 0 || CONFIG_EMB_LOG_ID_BYTES == 2 ||
                      CONFIG_EMB_LOG_ID_BYTES == 4,
                  "CONFIG_EMB_LOG_ID_BYTES is 0 (chosen at link time), 2 or 4");
EMB_STATIC_ASSERT(CONFIG_EMB_LOG_STR_MAX >= 1 && CONFIG_EMB_LOG_STR_MAX <= 127,
               "CONFIG_EMB_LOG_STR_MAX must be 1 to 127 (a u8 length with a clip bit)");
EMB_STATIC_ASSERT(CONFIG_EMB_LOG_HEXDUMP_MAX >= 1 && CONFIG_EMB_LOG_HEXDUMP_MAX <= 4096,
               "CONFIG_EMB_LOG_HEXDUMP_MAX must be 1 to 4096");
EMB_STATIC_ASSERT(CONFIG_EMB_LOG_RECORD_MAX >= 32 && CONFIG_EMB_LOG_RECORD_MAX <= 8192,
               "CONFIG_EMB_LOG_RECORD_MAX must be 32 to 8192");
EMB_STATIC_ASSERT(CONFIG_EMB_LOG_SYNC_INTERVAL >= 1, "CONFIG_EMB_LOG_SYNC_INTERVAL below 1");
EMB_STATIC_ASSERT(CONFIG_EMB_LOG_MAX_LEVEL >= 0 && CONFIG_EMB_LOG_MAX_LEVEL <= 4,
               "CONFIG_EMB_LOG_MAX_LEVEL is 0 to 4");
EMB_STATIC_ASSERT(CONFIG_EMB_LOG_FRAME_DATA_MAX >= 16 && CONFIG_EMB_LOG_FRAME_DATA_MAX <= 16384,
               "CONFIG_EMB_LOG_FRAME_DATA_MAX must be 16 to 16384");

/* EMB_ASSERT checks programmer errors; compiled out unless enabled. */
#ifndef CONFIG_EMB_ASSERT
#define CONFIG_EMB_ASSERT 0
#endif

EMB_STATIC_ASSERT((CONFIG_EMB_TRACE_PACKET_SIZE & (CONFIG_EMB_TRACE_PACKET_SIZE - 1u)) == 0,
               "CONFIG_EMB_TRACE_PACKET_SIZE must be a power of two");
EMB_STATIC_ASSERT(CONFIG_EMB_TRACE_PACKET_SIZE >= 256u && CONFIG_EMB_TRACE_PACKET_SIZE <= 65536u,
               "CONFIG_EMB_TRACE_PACKET_SIZE must be 256 to 65536");
EMB_STATIC_ASSERT((CONFIG_EMB_TRACE_RING_PACKETS & (CONFIG_EMB_TRACE_RING_PACKETS - 1u)) == 0,
               "CONFIG_EMB_TRACE_RING_PACKETS must be a power of two");
EMB_STATIC_ASSERT(CONFIG_EMB_TRACE_RING_PACKETS >= 2u, "a ring needs at least two packets");
EMB_STATIC_ASSERT(CONFIG_EMB_TRACE_MAX_PAYLOAD % 4u == 0, "payloads are 4-byte multiples");
EMB_STATIC_ASSERT(CONFIG_EMB_MEMCHAN_UP >= 1u && CONFIG_EMB_MEMCHAN_UP <= 16u, "1 to 16 up rings");
EMB_STATIC_ASSERT(CONFIG_EMB_MEMCHAN_DOWN >= 1u && CONFIG_EMB_MEMCHAN_DOWN <= 16u, "1 to 16 down rings");

EMB_STATIC_ASSERT(CONFIG_EMB_CRASH_RECORD_VERSION == 1 || CONFIG_EMB_CRASH_RECORD_VERSION == 2,
               "CONFIG_EMB_CRASH_RECORD_VERSION is 1 or 2");
EMB_STATIC_ASSERT(CONFIG_EMB_FAULT_RECORD_RING <= 1024, "CONFIG_EMB_FAULT_RECORD_RING above 1024");
EMB_STATIC_ASSERT(CONFIG_EMB_MONITOR_ISR_VECTORS <= 240, "CONFIG_EMB_MONITOR_ISR_VECTORS above 240");
EMB_STATIC_ASSERT(CONFIG_EMB_CPUS >= 1 && CONFIG_EMB_CPUS <= 32, "CONFIG_EMB_CPUS is 1 to 32");

#if CONFIG_EMB_ASSERT
void emb_assert_failed(const char *file, int line);
#define EMB_ASSERT(cond) ((cond) ? (void)0 : emb_assert_failed(__FILE__, __LINE__))
#else
#define EMB_ASSERT(cond) ((void)0)
#endif

#if defined(__GNUC__)
#define EMB_LIKELY(x) __builtin_expect(!!(x), 1)
#define EMB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define EMB_NOINLINE __attribute__((noinline))
#define EMB_USED __attribute__((used))
#else
#define EMB_LIKELY(x) (x)
#define EMB_UNLIKELY(x) (x)
#define EMB_NOINLINE
#define EMB_USED
#endif

#endif /* EMB_CONFIG_H */
