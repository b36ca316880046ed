/* The generic reader of the debug descriptor (docs/formats/descriptor.md): finds
 * "EMBD" in a memory image (by the ELF's symbol, or by scanning for the magic), parses its
 * sections, and reads what they point at: contexts with their rings and statistics,
 * monitors, objects, the CPU statistics, the crash record and the mini-record ring. It
 * knows only the descriptor's format, never the library's structures: every offset comes
 * from the image, so this tool reads images of older and newer library versions.
 *
 * Everything read from the image is bounded before use (counts, strides, sizes, string
 * lengths), every read goes through the memory source's budget, and a problem is a
 * message with the address it concerns, never a crash.
 */
#ifndef EMB_HOST_DESC_READ_H
#define EMB_HOST_DESC_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <emb/descriptor.h>
#include <emb/trace_format.h>

#include "catalog.h"
#include "memsrc.h"
#include "problem.h"

#define EMB_DESC_MAX_SECTIONS 64u
#define EMB_DESC_MAX_WORDS 256u
#define EMB_DESC_MAX_CONTEXTS 4096u
#define EMB_DESC_MAX_MONITORS 1024u
#define EMB_DESC_MAX_OBJECTS 4096u
#define EMB_DESC_MAX_FIELDS 32u
#define EMB_DESC_MAX_RING_BYTES (64u << 20)
#define EMB_DESC_MAX_LOG_RINGS 4096u
#define EMB_DESC_MAX_LOG_SLACK (64u << 10)

/* The descriptor itself: header and section words. */
struct emb_desc_image_section {
    unsigned kind, version;
    uint32_t words;            /* as the image says */
    uint64_t w[EMB_DESC_MAX_WORDS]; /* the first min(words, EMB_DESC_MAX_WORDS) */
};

struct emb_desc_image {
    uint64_t addr;             /* runtime address of the descriptor */
    unsigned version;
    unsigned ptr_size;         /* 2 (the reduced descriptor: 32-bit words), 4 or 8 */
    bool little;
    uint32_t length;
    uint32_t section_count;
    struct emb_desc_image_section sections[EMB_DESC_MAX_SECTIONS];
    size_t nsections;
};

struct emb_desc_stat {
    char name[32];
    uint64_t value;
};

#define EMB_DESC_MAX_CPUS 32u
struct emb_desc_cpu_stats {
    struct emb_desc_stat stats[EMB_DESC_MAX_FIELDS];
    size_t nstats;
};

struct emb_desc_context {
    uint32_t index;
    uint64_t entry_addr;       /* the context registry entry */
    uint32_t state;
    char state_name[16];
    int32_t os_id;
    uint64_t stack_low, entry;
    uint32_t stack_size, stack_painted;
    uint32_t stack_used;       /* high-water mark in bytes; 0 unknown */
    struct emb_desc_stat stats[EMB_DESC_MAX_FIELDS];
    size_t nstats;
    /* its ring */
    uint64_t ring;             /* 0: none */
    char name[24];
    uint16_t context_id, context_kind;
    uint32_t write_pos, base_pos, read_pos, discarded, filled;
    uint32_t buf_mask, slot_mask;
    uint8_t packet_shift, slot_shift;
    uint64_t buf, commit;
    uint32_t packets_opened;   /* since the ring started */
    uint32_t packets_held;     /* complete packets the ring still holds */
    uint32_t open_bytes;       /* bytes in the open packet (0: none) */
    bool ring_ok;              /* the ring's fields are consistent */
    uint32_t partition;        /* the partition that runs on it (contexts v2; 0 none) */
};

/* A partition (descriptor section 15, emb/partition.h). */
struct emb_desc_partition {
    uint32_t id, state, faults, restarts, fault_class, fault_code;
    uint64_t fault_pc;         /* the last contained fault's */
    char name[17], state_name[16];
};

/* A log ring (descriptor section 5, docs/formats/log.md "Ring protocol"). */
struct emb_desc_logring {
    uint32_t index;
    uint64_t addr;
    char name[24];
    uint16_t context_id, context_kind;
    uint32_t write_pos, committed, read_pos, mask, spill_pos, spill;
    uint32_t dropped, pending, draining;
    uint64_t buf;
    bool ok;                   /* its fields are consistent */
};

struct emb_desc_monitor {
    uint32_t category;
    uint32_t cpu;              /* the CPU whose block it is (monitors v2; 0 before) */
    char name[24];
    uint32_t worst, threshold, over, action;
    uint64_t pc;
};

struct emb_desc_object {
    uint32_t handle;
    uint16_t type;
    char type_name[16];
    char name[20];
    struct emb_desc_stat stats[EMB_DESC_MAX_FIELDS];
    size_t nstats;
};

/* ---- What a kernel's layout block describes (descriptor section 11) ---- */
#define EMB_DESC_MAX_THREADS 256u
#define EMB_DESC_MAX_KOBJECTS 256u
#define EMB_DESC_MAX_OWNED 16u
#define EMB_DESC_MAX_FRAME 32u
#define EMB_DESC_MAX_KSTACK (1u << 20)

struct emb_desc_kobject {
    uint64_t addr;
    uint32_t type, handle, lifecycle;
    char type_name[16];
    char name[20];
    uint64_t owner;            /* a mutex's owner (a thread's address), 0 none */
};

struct emb_desc_thread {
    uint64_t addr;             /* its control block */
    uint32_t index;
    char name[24];
    uint32_t state, wait_reason;
    char state_name[16], wait_name[16];
    uint64_t wait_object;      /* 0 none */
    char wait_object_name[20]; /* the object's name when it is a registered object */
    int32_t wake_result;
    uint32_t base_priority, eff_priority;
    uint32_t timeout_armed, timeout_deadline, notify_bits, notify_mask;
    uint64_t sp, entry, stack_low;
    uint32_t stack_size, stack_used; /* stack_used: high-water from the paint; 0 unknown */
    bool running;              /* the CPU's current thread: its saved registers are stale */
    bool has_frame;            /* frame[] read at sp */
    uint64_t frame[EMB_DESC_MAX_FRAME];
    struct emb_desc_kobject owned[EMB_DESC_MAX_OWNED]; /* the locks it holds */
    size_t nowned;
    struct emb_desc_stat stats[EMB_DESC_MAX_FIELDS];
    size_t nstats;
};

struct emb_desc_kernel_view {
    char name[32];
    struct emb_desc_thread *threads;
    size_t nthreads;
    uint32_t frame_words, frame_pc, frame_lr;
    char frame_names[EMB_DESC_MAX_FRAME][8];
    /* the scheduler's per-CPU state (CPU 0) */
    uint64_t current;
    uint32_t irq_nesting, sched_lock, reschedule, switches, tick, ready_bitmap;
    uint32_t priority_count;
    bool urgent_high;
    struct emb_desc_kobject *objects;
    size_t nobjects;
};

struct emb_desc_model {
    /* identity */
    uint32_t config_hash, lib_version, catalog_checksum;
    char port[32], profile[16];
    uint8_t build_id[32];
    uint32_t build_id_len;
    bool ready;
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    /* what the firmware says it is (identity version 2; empty and 0 before) */
    char firmware[33], config[161];
    uint64_t session_id;
    /* rings */
    uint32_t packet_size, ring_packets, class_mask, trace_mode;
    uint8_t uuid[16];
    uint64_t unclaimed;
    struct emb_desc_context *contexts;
    size_t ncontexts;
    uint32_t context_capacity;
    struct emb_desc_monitor *monitors;
    size_t nmonitors;
    struct emb_desc_object *objects;
    size_t nobjects;
    struct emb_desc_stat cpu[EMB_DESC_MAX_FIELDS];
    size_t ncpu;
    /* Statistics v2 and monitors v2: CPUs with blocks of their own (1 before), and every
     * CPU's statistics (cpus[0] is `cpu` above). */
    uint32_t stats_cpus, monitor_cpus;
    struct emb_desc_cpu_stats *cpus;
    /* partitions (section 15) */
    struct emb_desc_partition *partitions;
    size_t npartitions;
    /* crash */
    bool has_crash;
    uint64_t crash_area;
    uint32_t crash_cap, crash_version, crash_found, crash_found_length;
    uint8_t *crash_bytes;      /* crash_cap bytes read from the area (NULL if unreadable) */
    bool has_mini;
    uint64_t mini_area;
    uint32_t mini_entries, mini_entry_size;
    uint8_t *mini_bytes;
    /* arch */
    uint32_t elf_machine, fault_layout, status_count, gpr_count;
    bool has_log;
    unsigned log_version;
    uint32_t log_words;
    struct emb_desc_logring *logrings;
    size_t nlogrings;
    uint32_t log_id_bytes, log_ts_bytes, log_slack;
    /* A debug probe is the consumer of the streaming rings and the log rings. */
    bool probe_consumer;
    /* A kernel's threads, scheduler and objects (NULL: the image has no kernel layout). */
    struct emb_desc_kernel_view *kernel;
};

/* Problems go to a sink (base/problem.h): what cannot be read at all is an error; what is
 * inconsistent, refused or left out while the rest is read is a warning. Messages name the
 * address they concern (offset -1: the addresses are the target's, not the file's). */

/* Parses descriptor bytes that sit at `addr`. Returns 0, or -1 after reporting why not. */
int emb_desc_parse(const uint8_t *bytes, size_t len, uint64_t addr, struct emb_desc_image *d,
                   struct emb_problems *problems);

/* Finds the descriptor: at symbol_addr (a runtime address; 0 to skip) or by scanning the
 * source for the magic (at most scan_max bytes). Returns 0, or -1 after reporting why not
 * (of a scan, the last candidate's reason). */
int emb_desc_find(struct emb_mem *m, uint64_t symbol_addr, uint64_t scan_max, struct emb_desc_image *d,
                  struct emb_problems *problems);

/* Section of a kind, or NULL; word i of it (false when absent). */
const struct emb_desc_image_section *emb_desc_image_section(const struct emb_desc_image *d, unsigned kind);
bool emb_desc_word(const struct emb_desc_image *d, unsigned kind, unsigned i, uint64_t *out);

/* Reads everything the descriptor points at. Problems go to `problems` (NULL: dropped);
 * returns 0 when the model is usable (possibly with problems), -1 when nothing could be
 * read. */
int emb_desc_read(struct emb_mem *m, const struct emb_desc_image *d, struct emb_desc_model *model,
                  struct emb_problems *problems);
void emb_desc_model_free(struct emb_desc_model *model);

/* Writes the rings as a trace stream file (docs/formats/trace.md): the complete packets
 * each ring holds, and the committed part of each open packet with its closing fields
 * patched in the copy (its timestamp_end is its last event's, found with the catalogue).
 * Returns the packets written, or -1 after reporting why. */
long emb_desc_dump_trace(struct emb_mem *m, const struct emb_desc_image *d,
                       const struct emb_desc_model *model, const struct emb_catalog *cat, FILE *out,
                       struct emb_problems *problems);

/* ---- Following the rings of a live target ----
 *
 * Takes what the rings hold, poll after poll, without the target's help: the trace
 * packets completed since the last poll (the snapshot reader's rules of
 * docs/formats/trace.md), and the log bytes committed since (docs/formats/log.md), as
 * data frames. With `consume` (the descriptor says a debug probe is the consumer) it also
 * frees what it took by writing the rings' read positions, so streaming rings never fill
 * while it keeps up. A poll reads the target through the memory source: halt the target
 * around it (a probe) or let it run (a process, read as the snapshot reader allows). */
struct emb_desc_follow;

struct emb_desc_follow_options {
    const struct emb_catalog *cat; /* event sizes, to end an open packet; NULL: built-in */
    bool consume;
    /* The target runs while it is polled (nothing halts it): a consumer claims a streaming
     * ring's read position before it reads (EMB_TRACE_READ_CLAIMED, docs/formats/trace.md),
     * so no producer takes a packet from it while it copies, and frees it after. */
    bool running;
};

struct emb_desc_follow_stats {
    uint64_t polls;
    uint64_t packets;          /* trace packets taken */
    uint64_t packets_lost;     /* overwritten before they were taken */
    uint64_t claims_busy;      /* running: polls that found a producer pushing, retried */
    uint64_t log_bytes;        /* log ring bytes taken */
    uint64_t log_lost;         /* log ring bytes overwritten before they were taken */
    uint64_t log_busy;         /* polls that found a log ring in the middle of a record */
    uint64_t released;         /* read positions written (consume) */
};

struct emb_desc_follow *emb_desc_follow_new(const struct emb_desc_image *d, const struct emb_desc_model *md,
                                        const struct emb_desc_follow_options *o);
/* One poll. Returns 0, or -1 when nothing could be read (the problems say why). */
int emb_desc_follow_poll(struct emb_desc_follow *f, struct emb_mem *m, struct emb_problems *problems);
/* The last poll: also the committed part of each open packet, and a stats frame per log
 * ring. Call once, last. */
int emb_desc_follow_finish(struct emb_desc_follow *f, struct emb_mem *m, struct emb_problems *problems);
/* The trace stream file (header and packets taken, malloc'd; NULL when out of memory), and
 * the log stream (frames: hello, context, data, stats; NULL when there is no log ring). */
uint8_t *emb_desc_follow_trace(struct emb_desc_follow *f, size_t *len);
/* The same in parts, while the follower runs: the stream header as it stands (into
 * `header`, at most cap bytes: EMB_DESC_FOLLOW_HEADER_MAX is always enough; 0 when out of
 * memory), and the packets taken so far, in the order they were (NULL when out of
 * memory). */
#define EMB_DESC_FOLLOW_HEADER_MAX (EMB_TSF_HEADER_BYTES(EMB_TSF_MAX_CONTEXTS) + EMB_TSF_EXT_MAX)
size_t emb_desc_follow_header(const struct emb_desc_follow *f, uint8_t *header, size_t cap);
const uint8_t *emb_desc_follow_packets(const struct emb_desc_follow *f, size_t *len);
const uint8_t *emb_desc_follow_log(const struct emb_desc_follow *f, size_t *len);
const struct emb_desc_follow_stats *emb_desc_follow_stats(const struct emb_desc_follow *f);
void emb_desc_follow_free(struct emb_desc_follow *f);

#endif /* EMB_HOST_DESC_READ_H */
