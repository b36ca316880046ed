/* The debug descriptor (SPEC-015 §5): read-only data at the exported symbol
 * `emb_debug_descriptor` that tells a tool where everything is in a memory image, so one
 * generic reader (`emb desc`, a probe plugin) serves every version of the library.
 *
 * It is a header ("EMBD", byte order, pointer size, version, length, section count, its
 * own address) and a list of sections. Every section is a tag word (kind | version << 16),
 * a count of body words, and the body: pointer-sized words holding a number, an address,
 * or a field descriptor (offset | size << 16 | type << 24) of a structure in RAM. Sections
 * and words within a section are only ever appended: a reader skips kinds it does not know
 * and treats words past a section's count as absent. docs/formats/descriptor.md gives
 * every word. Where the port allocates at run time (the native port's context table), the
 * descriptor points at the fixed registry below, which the port fills.
 */
#ifndef EMB_DESCRIPTOR_H
#define EMB_DESCRIPTOR_H

#include <stddef.h>
#include <stdint.h>

#include <emb/config.h>
#include <emb/monitor.h>

#ifdef __cplusplus
extern "C" {
#endif

struct emb_trace_ring;
struct emb_log_ring;

#define EMB_DESC_VERSION 1u
#define EMB_DESC_LITTLE_ENDIAN 1u
#define EMB_DESC_BIG_ENDIAN 2u

enum emb_desc_kind {
    EMB_DESC_IDENTITY = 1,  /* configuration hash, versions, port, build id, clock */
    EMB_DESC_TYPES = 2,     /* object type and context state names */
    EMB_DESC_CONTEXTS = 3,  /* the context (thread) registry and its field offsets */
    EMB_DESC_RINGS = 4,     /* trace rings: packet size, class mask, ring field offsets */
    EMB_DESC_LOG = 5,       /* log rings: where they are, record widths, ring field offsets */
    EMB_DESC_CRASH = 6,     /* crash record area and version */
    EMB_DESC_MINI = 7,      /* partition mini-record ring */
    EMB_DESC_MONITORS = 8,  /* monitor blocks and their layout */
    EMB_DESC_STATS = 9,     /* CPU statistics and the object registry */
    EMB_DESC_ARCH = 10,     /* architecture: ELF machine, fault register layout, frame */
    EMB_DESC_KERNEL = 11,   /* where the kernel's layout block is (0: no kernel) */
    /* Sections of the kernel's layout block (struct emb_kernel_layout below). */
    EMB_DESC_THREADS = 12,  /* TCB field offsets and the all-threads list */
    EMB_DESC_SCHEDULER = 13,/* ready structure, per-CPU state */
    EMB_DESC_OBJECTS = 14,  /* object header offsets and registry heads */
    EMB_DESC_PARTITIONS = 15, /* the partition table (emb/partition.h) */
};

/* Field descriptor types (bits 24-31 of a field word). */
enum emb_desc_field_type {
    EMB_DESC_UNSIGNED = 0,  /* unsigned integer of the field's size */
    EMB_DESC_SIGNED = 1,
    EMB_DESC_POINTER = 2,   /* an address */
    EMB_DESC_TEXT = 3,      /* char[size], NUL-padded */
    EMB_DESC_U64_PAIR = 4,  /* 64-bit value as two 32-bit words: low, high */
    EMB_DESC_BYTES = 5,     /* raw bytes */
};

#define EMB_DESC_FIELD(type, member, kind)                                                  \
    ((uintptr_t)offsetof(type, member) | ((uintptr_t)sizeof(((type *)0)->member) << 16) |  \
     ((uintptr_t)(kind) << 24))

/* Fill pattern of painted stacks (stack high-water). */
#define EMB_STACK_PAINT 0xE5u

enum emb_context_state {
    EMB_CONTEXT_FREE = 0,   /* never used */
    EMB_CONTEXT_LIVE = 1,   /* its thread runs */
    EMB_CONTEXT_EXITED = 2, /* its thread has exited; its ring is flushed */
};

/* One context as tools see it. The port keeps these (for the native port, inside its
 * context table) and publishes where in emb_debug_registry. */
struct emb_context_info {
    struct emb_trace_ring *ring; /* NULL until the context has a ring */
    uintptr_t stack_low;         /* lowest address of its stack; 0 unknown */
    uintptr_t entry;             /* its entry function: the THREAD_RUN monitor's opener */
    uint32_t stack_size;         /* bytes */
    uint32_t stack_painted;      /* bytes from stack_low filled with EMB_STACK_PAINT at start */
    uint32_t state;              /* enum emb_context_state */
    int32_t os_id;               /* the OS thread id; 0 on bare metal */
    emb_stats_thread_t stats;
    uint32_t partition;          /* the partition that runs on it (emb/partition.h); 0 none */
};

/* One object (mutex, work queue) with statistics. */
struct emb_object_info {
    uint32_t handle;             /* as the trace names it */
    uint16_t type;               /* obj_init's type values: 1 mutex, 9 workq, ... */
    uint16_t state;              /* 0 free, 1 live */
    char name[16];
    emb_stats_object_t stats;
};

/* What the port fills at start (and as contexts and objects appear). */
struct emb_debug_registry {
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    uint8_t build_id[32];
    uint8_t uuid[16];            /* the trace's uuid */
    uint32_t build_id_len;
    uint32_t trace_mode;         /* enum emb_trace_mode */
    uint32_t ring_packets;       /* packets per context ring */
    uint32_t ready;              /* 1 once the identity above is written (release) */
    struct emb_context_info *contexts;
    uint32_t context_stride;     /* bytes from one entry to the next */
    uint32_t context_capacity;
    uint32_t context_count;      /* entries in use; grows while the system runs */
    struct emb_object_info *objects;
    uint32_t object_stride;
    uint32_t object_capacity;
    uint32_t object_count;
    /* Log rings (section 5): an array of log_ring_count ring addresses. */
    struct emb_log_ring *const *log_rings;
    uint32_t log_ring_count;
    /* 1: a debug probe is the consumer of the streaming trace rings and of the log rings
     * (it frees what it took by writing their read positions); 0: the target is. */
    uint32_t probe_consumer;
    uint64_t session_id;         /* this run (emb_debug_registry_session); 0 unknown */
};
extern struct emb_debug_registry emb_debug_registry;

/* Publishes the identity: build id, clock, and the trace uuid and mode (from emb/trace.h). */
void emb_debug_registry_identity(const uint8_t *build_id, uint32_t build_id_len,
                                 uint64_t clock_hz, int64_t clock_offset_ns);

/* Names this run (a boot counter, a random number, an RTC reading): the host stamps it on
 * every capture it reads through the descriptor, so two runs of one build stay apart.
 * Call it before the port starts (emb_cm_start()), which publishes the identity as ready:
 * a host that sees it ready then sees the session too. */
void emb_debug_registry_session(uint64_t session_id);

/* ---- The descriptor as C sees it (docs/formats/descriptor.md is the contract) ---- */

struct emb_desc_header {
    char magic[4];               /* "EMBD" */
    uint8_t endianness;          /* EMB_DESC_LITTLE_ENDIAN or EMB_DESC_BIG_ENDIAN */
    uint8_t pointer_size;        /* bytes in a word */
    uint16_t version;
    uint32_t length;             /* bytes of the whole descriptor */
    uint32_t section_count;
    const void *self;            /* the descriptor's own address */
};

struct emb_desc_section {
    uintptr_t tag;               /* kind | version << 16 */
    uintptr_t words;             /* body words that follow */
};

struct emb_desc_identity {
    struct emb_desc_section s;
    uintptr_t config_hash;
    uintptr_t lib_version;       /* major << 16 | minor << 8 | patch */
    const char *port;
    const char *profile;
    const void *build_id;        /* u8[32] */
    const void *build_id_len;    /* u32 */
    const void *ready;           /* u32 */
    const void *clock_hz;        /* u64 */
    const void *clock_offset_ns; /* i64 */
    uintptr_t catalog_checksum;
    /* Version 2: what the firmware says it is (CONFIG_EMB_FIRMWARE_VERSION, _CONFIG). */
    const char *firmware;        /* name and version, text */
    const char *config;          /* build flags, "key=value ...", text */
    const void *session_id;      /* u64: this run; 0 unknown */
};

struct emb_desc_types {
    struct emb_desc_section s;
    uintptr_t object_type_count;
    const char *const *object_type_names;
    uintptr_t context_state_count;
    const char *const *context_state_names;
};

/* A name and a field word: generic statistics tables. */
struct emb_desc_named_field {
    const char *name;
    uintptr_t field;
};

struct emb_desc_contexts {
    struct emb_desc_section s;
    const void *table;           /* address of the pointer to the first entry */
    const void *stride;          /* address of a u32 */
    const void *capacity;        /* address of a u32 */
    const void *count;           /* address of a u32 */
    uintptr_t f_ring, f_state, f_os_id, f_stack_low, f_stack_size, f_stack_painted;
    uintptr_t stack_paint;       /* the painted byte */
    uintptr_t f_entry, f_stats;
    const struct emb_desc_named_field *stats_fields; /* offsets within the stats block */
    uintptr_t stats_field_count;
    uintptr_t f_partition;       /* v2: the partition that runs on the context */
};

struct emb_desc_rings {
    struct emb_desc_section s;
    uintptr_t packet_size;
    const void *ring_packets;    /* u32 */
    const void *class_mask;      /* u32 */
    const void *trace_mode;      /* u32 */
    const void *uuid;            /* u8[16] */
    uintptr_t f_write_pos, f_packet_end, f_ts_high, f_flags, f_context_id, f_buf, f_commit;
    uintptr_t f_buf_mask, f_slot_mask, f_packet_shift, f_slot_shift, f_context_kind;
    uintptr_t f_packet_seq, f_discarded, f_base_pos, f_filled, f_read_pos, f_name;
    const void *unclaimed;       /* the placeholder ring: not a real one */
    const void *consumer;        /* u32: 1 when a debug probe consumes streaming rings (v2) */
};

struct emb_desc_log {
    struct emb_desc_section s;
    const void *rings;           /* address of the pointer to the array of ring addresses */
    const void *count;           /* u32 */
    const void *consumer;        /* u32: 1 when a debug probe consumes the rings */
    uintptr_t id_bytes;          /* a record's id bytes, 2 or 4 */
    uintptr_t ts_bytes;          /* a record's timestamp bytes, 4 or 0 */
    uintptr_t slack;             /* bytes past a ring's end that a record may spill into */
    uintptr_t f_write_pos, f_committed, f_read_pos, f_buf, f_mask, f_spill_pos, f_spill;
    uintptr_t f_dropped, f_pending, f_draining, f_context_id, f_context_kind, f_name;
};

struct emb_desc_crash {
    struct emb_desc_section s;
    const void *record;          /* address of the pointer to the record area */
    const void *record_cap;      /* u32 */
    uintptr_t version;           /* the version the writer encodes */
    const void *found;           /* u32 emb_status of the check at start */
    const void *found_length;    /* u32 */
};

struct emb_desc_mini {
    struct emb_desc_section s;
    const void *ring;            /* address of the pointer to the first entry */
    uintptr_t entries;
    uintptr_t entry_size;
};

struct emb_desc_monitors {
    struct emb_desc_section s;
    const void *blocks;
    uintptr_t count;
    uintptr_t stride;
    uintptr_t f_worst, f_pc, f_threshold, f_over, f_action;
    const char *const *category_names; /* the fixed categories */
    uintptr_t category_name_count;
    uintptr_t isr_first;         /* category of ISR vector 0 */
    uintptr_t cpus;              /* v2: CPUs with blocks of their own, back to back */
};

struct emb_desc_stats {
    struct emb_desc_section s;
    const void *cpu;
    const struct emb_desc_named_field *cpu_fields;
    uintptr_t cpu_field_count;
    const void *objects;         /* address of the pointer to the first entry */
    const void *object_stride, *object_capacity, *object_count; /* u32 each */
    uintptr_t f_handle, f_type, f_name, f_object_state, f_stats;
    const struct emb_desc_named_field *object_stats_fields;
    uintptr_t object_stats_field_count;
    uintptr_t cpus;              /* v2: CPU statistics blocks at `cpu`, one per CPU */
    uintptr_t cpu_stride;        /* v2: bytes from one CPU's block to the next */
};

struct emb_desc_arch {
    struct emb_desc_section s;
    uintptr_t elf_machine;
    uintptr_t fault_layout;      /* the crash record's status_regs[0] */
    uintptr_t status_count;
    uintptr_t gpr_count;
    uintptr_t frame_word_count;  /* registers saved in an exception frame */
    const char *const *frame_names; /* from the saved stack pointer up, one per word */
    const void *irq_stack_low;
    uintptr_t irq_stack_size;
};

/* The partition table (emb/partition.h): where, how many, and its fields. */
struct emb_desc_partitions {
    struct emb_desc_section s;
    const void *table;           /* the first entry (0: no partitions) */
    uintptr_t count;
    uintptr_t stride;
    uintptr_t f_id, f_state, f_name, f_faults, f_restarts;
    uintptr_t f_fault_class, f_fault_code, f_fault_pc;
    const char *const *state_names;
    uintptr_t state_count;
};

/* Where a kernel's own structures are described: the address of its layout block, the
 * weak symbol emb_kernel_layout (0 when no kernel defines one). */
struct emb_desc_kernel {
    struct emb_desc_section s;
    const void *layout;
};

/* ---- A kernel's layout block ----
 *
 * A kernel (or a port with threads) declares the layout of its thread control blocks,
 * scheduler state and object headers once, with offsetof (EMB_DESC_FIELD), as the
 * constant `emb_kernel_layout`; the descriptor points at it (section 11). The block is a
 * header ("EMBK", its length, its section count) and sections shaped like the
 * descriptor's own (tag, word count, body), so a reader parses both the same way. A field
 * word of 0 is a field the kernel does not have. docs/formats/descriptor.md gives every
 * word. */
#define EMB_KERNEL_LAYOUT_VERSION 1u

struct emb_desc_threads {
    struct emb_desc_section s;
    const void *all_threads;     /* address of the pointer to the first thread */
    uintptr_t f_next_all;        /* the all-threads link */
    uintptr_t max_threads;       /* a reader walks at most this many */
    uintptr_t f_sp;              /* the saved stack pointer (a thread not running) */
    uintptr_t f_state;
    const char *const *state_names;
    uintptr_t state_count;
    uintptr_t f_wait_reason;
    const char *const *wait_names;
    uintptr_t wait_count;
    uintptr_t f_wait_object, f_wait_queue, f_wake_result;
    uintptr_t f_base_priority, f_eff_priority;
    uintptr_t f_name;            /* text, or the address of a NUL-terminated name */
    uintptr_t f_index, f_generation, f_partition;
    uintptr_t f_owned_head;      /* the first lock the thread holds */
    uintptr_t f_lock_next_owned; /* in a lock: the next one its owner holds */
    uintptr_t f_lock_owner;      /* in a lock: its owner */
    uintptr_t f_timeout_deadline, f_timeout_armed; /* the timeout node */
    uintptr_t f_notify_bits, f_notify_mask;
    uintptr_t f_stats;           /* an emb_stats_thread_t */
    const struct emb_desc_named_field *stats_fields;
    uintptr_t stats_field_count;
    uintptr_t f_stack_low, f_stack_size;
    uintptr_t stack_paint;
    uintptr_t f_entry;
    uintptr_t frame_word_count;  /* registers saved from the saved sp up */
    const char *const *frame_names;
    uintptr_t frame_pc_word, frame_lr_word; /* which of them are pc and lr */
};

enum emb_desc_ready_kind {
    EMB_DESC_READY_BITMAP_FIFO = 1, /* a bitmap of priorities and a list head per priority */
};

struct emb_desc_scheduler {
    struct emb_desc_section s;
    uintptr_t ready_kind;        /* enum emb_desc_ready_kind */
    const void *ready;           /* the ready structure */
    uintptr_t priority_count;
    uintptr_t urgent_high;       /* 1: a larger priority number is more urgent */
    uintptr_t f_ready_bitmap, f_ready_heads; /* in the ready structure: heads[0] */
    uintptr_t f_next_ready;      /* in a thread */
    const void *cpus;            /* the per-CPU state */
    uintptr_t cpu_count, cpu_stride;
    uintptr_t f_current_thread, f_irq_nesting_depth, f_sched_lock_depth, f_reschedule_pending;
    uintptr_t f_switches, f_tick;
    const void *all_threads;
};

enum emb_desc_handle_model {
    EMB_DESC_HANDLE_POINTER = 1, /* a handle is the object's address */
};

struct emb_desc_objects {
    struct emb_desc_section s;
    uintptr_t f_type_tag, f_lifecycle, f_generation, f_name, f_registry_next, f_handle;
    const void *registry;        /* array of registry heads, indexed by obj_init type */
    uintptr_t registry_count;
    uintptr_t handle_model;      /* enum emb_desc_handle_model */
    uintptr_t max_objects;       /* a reader walks at most this many per type */
    uintptr_t f_mutex_owner, f_mutex_waiters;
    uintptr_t f_next_wait;       /* in a thread: its wait queue link */
};

struct emb_kernel_layout {
    char magic[4];               /* "EMBK" */
    uint32_t length;             /* bytes of the whole block */
    uint32_t section_count;
    uint32_t version;            /* EMB_KERNEL_LAYOUT_VERSION */
    const char *kernel;          /* the kernel's name */
    struct emb_desc_threads threads;
    struct emb_desc_scheduler scheduler;
    struct emb_desc_objects objects;
};

/* Section headers of a kernel layout block, and its header, for the kernel's constant. */
#define EMB_DESC_SECTION_OF(type, kind, version)                                             \
    {(uintptr_t)(kind) | ((uintptr_t)(version) << 16),                                     \
     (sizeof(type) - sizeof(struct emb_desc_section)) / sizeof(uintptr_t)}
#define EMB_KERNEL_LAYOUT_HEADER                                                             \
    .magic = {'E', 'M', 'B', 'K'}, .length = sizeof(struct emb_kernel_layout),               \
    .section_count = 3u, .version = EMB_KERNEL_LAYOUT_VERSION
/* The named fields of emb_stats_thread_t, for a kernel's stats_fields. */
extern const struct emb_desc_named_field emb_desc_thread_stats_fields[8];

/* Defined by a kernel; weak here: an image without a kernel has none. */
extern const struct emb_kernel_layout emb_kernel_layout __attribute__((weak));

struct emb_debug_descriptor {
    struct emb_desc_header header;
    struct emb_desc_identity identity;
    struct emb_desc_types types;
    struct emb_desc_contexts contexts;
    struct emb_desc_rings rings;
    struct emb_desc_log log;
    struct emb_desc_crash crash;
    struct emb_desc_mini mini;
    struct emb_desc_monitors monitors;
    struct emb_desc_stats stats;
    struct emb_desc_arch arch;
    struct emb_desc_kernel kernel;
    struct emb_desc_partitions partitions;
};

/* ---- The reduced descriptor (SPEC-015 §9, the tiny profile) ----
 * A target whose addresses are 16 bits (AVR) cannot pack a section tag or a field
 * descriptor into a pointer-sized word. Its descriptor says pointer size 2 and makes every
 * word, `self` included, 32 bits: a number as it is, an address zero-extended. It carries
 * the identity and the crash record area, and the rings the build records (the contexts
 * and trace rings, the log rings; docs/formats/descriptor.md, "Reduced"). A 32-bit target
 * may choose it too (CONFIG_EMB_DESCRIPTOR_REDUCED=1, the reduced core of a small flash
 * budget): its words are then its own, W = 4, the full layout without the other sections. */
#ifndef CONFIG_EMB_DESCRIPTOR_REDUCED
#define CONFIG_EMB_DESCRIPTOR_REDUCED (UINTPTR_MAX <= 0xFFFFu)
#endif

/* A 32-bit word holding an address: a 16-bit one, then two zero bytes (little-endian);
 * a 32-bit one as it is (the reduced descriptor of a 32-bit core, W = 4). */
struct emb_desc_addr16 {
    const void *p;
#if UINTPTR_MAX <= 0xFFFFu
    uint16_t zero;
#endif
};

/* The reduced descriptor's rings (on by default where the build records them): the
 * contexts and trace rings sections when a trace class is compiled in, the log rings
 * section with the deferred log, so a tool reads the rings out of RAM. */
#ifndef CONFIG_EMB_DESCRIPTOR_REDUCED_RINGS
#define CONFIG_EMB_DESCRIPTOR_REDUCED_RINGS 1
#endif
#define EMB_DESC_REDUCED_TRACE (CONFIG_EMB_DESCRIPTOR_REDUCED_RINGS && CONFIG_EMB_TRACE_CLASSES != 0)
#define EMB_DESC_REDUCED_LOG (CONFIG_EMB_DESCRIPTOR_REDUCED_RINGS && CONFIG_EMB_LOG && !CONFIG_EMB_LOG_TEXT)

/* A field descriptor as a 32-bit word, whatever the pointer size. */
#define EMB_DESC_FIELD32(type, member, kind)                                                \
    ((uint32_t)offsetof(type, member) | ((uint32_t)sizeof(((type *)0)->member) << 16) |    \
     ((uint32_t)(kind) << 24))

struct emb_desc_reduced {
    struct {
        char magic[4];
        uint8_t endianness, pointer_size; /* pointer_size 2 */
        uint16_t version;
        uint32_t length, section_count;
        struct emb_desc_addr16 self;
    } header;
    struct {
        uint32_t tag, words, config_hash, lib_version;
        struct emb_desc_addr16 port, profile, build_id, build_id_len, ready, clock_hz,
            clock_offset_ns;
        uint32_t catalog_checksum;
    } identity; /* the words of struct emb_desc_identity */
    struct {
        uint32_t tag, words;
        struct emb_desc_addr16 record, record_cap;
        uint32_t version;
        struct emb_desc_addr16 found, found_length;
    } crash;    /* the words of struct emb_desc_crash */
#if EMB_DESC_REDUCED_TRACE
    struct {
        uint32_t tag, words;
        struct emb_desc_addr16 table, stride, capacity, count;
        uint32_t f_ring, f_state, f_os_id, f_stack_low, f_stack_size, f_stack_painted;
        uint32_t stack_paint, f_entry, f_stats;
        struct emb_desc_addr16 stats_fields;
        uint32_t stats_field_count;
    } contexts; /* the words of struct emb_desc_contexts (no statistics table) */
    struct {
        uint32_t tag, words, packet_size;
        struct emb_desc_addr16 ring_packets, class_mask, trace_mode, uuid;
        uint32_t f_write_pos, f_packet_end, f_ts_high, f_flags, f_context_id, f_buf, f_commit;
        uint32_t f_buf_mask, f_slot_mask, f_packet_shift, f_slot_shift, f_context_kind;
        uint32_t f_packet_seq, f_discarded, f_base_pos, f_filled, f_read_pos, f_name;
        struct emb_desc_addr16 unclaimed, consumer;
    } rings;    /* the words of struct emb_desc_rings */
#endif
#if EMB_DESC_REDUCED_LOG
    struct {
        uint32_t tag, words;
        struct emb_desc_addr16 rings, count, consumer;
        uint32_t id_bytes, ts_bytes, slack;
        uint32_t f_write_pos, f_committed, f_read_pos, f_buf, f_mask, f_spill_pos, f_spill;
        uint32_t f_dropped, f_pending, f_draining, f_context_id, f_context_kind, f_name;
    } log;      /* the words of struct emb_desc_log */
#endif
};

#if CONFIG_EMB_DESCRIPTOR && CONFIG_EMB_DESCRIPTOR_REDUCED
extern const struct emb_desc_reduced emb_debug_descriptor;
#elif CONFIG_EMB_DESCRIPTOR
extern const struct emb_debug_descriptor emb_debug_descriptor;
#endif

#ifdef __cplusplus
}
#endif

#endif /* EMB_DESCRIPTOR_H */
