/* The debug descriptor and the registry ports fill (docs/formats/descriptor.md). */
#include <emb/descriptor.h>

#include <emb/crash.h>
#include <emb/log.h>
#include <emb/partition.h>
#include <emb/port.h>
#include <emb/trace.h>
#include <emb/trace_events.h>

struct emb_debug_registry emb_debug_registry;

void emb_debug_registry_identity(const uint8_t *build_id, uint32_t build_id_len,
                                 uint64_t clock_hz, int64_t clock_offset_ns)
{
    struct emb_debug_registry *r = &emb_debug_registry;
    if (build_id_len > sizeof r->build_id)
        build_id_len = sizeof r->build_id;
    if (build_id != NULL && build_id_len > 0u)
        memcpy(r->build_id, build_id, build_id_len);
    r->build_id_len = build_id_len;
    r->clock_hz = clock_hz;
    r->clock_offset_ns = clock_offset_ns;
    memcpy(r->uuid, emb_trace_uuid(), sizeof r->uuid);
    r->trace_mode = (uint32_t)emb_trace_mode();
    __atomic_store_n(&r->ready, 1u, __ATOMIC_RELEASE);
#if CONFIG_EMB_DESCRIPTOR
    /* A reference from code every port runs at start: an image linked with
     * --gc-sections keeps the descriptor, which nothing else refers to. */
    __asm__ __volatile__("" : : "r"(&emb_debug_descriptor));
#endif
}

void emb_debug_registry_session(uint64_t session_id)
{
    emb_debug_registry.session_id = session_id;
}

#if CONFIG_EMB_DESCRIPTOR

_Static_assert(sizeof(uintptr_t) == sizeof(const void *), "a descriptor word holds a pointer");

#define EMB__TAG(kind, version) ((uintptr_t)(kind) | ((uintptr_t)(version) << 16))
#define EMB__SECTION(type, kind, version)                                                    \
    {EMB__TAG(kind, version), (sizeof(type) - sizeof(struct emb_desc_section)) / sizeof(uintptr_t)}
#define EMB__COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* FNV-1a over the configuration, as a constant expression: two images with the same hash
 * were built with the same options. */
#define EMB__FNV(h, v) ((uint32_t)(((uint32_t)(h) ^ (uint32_t)(v)) * 16777619u))
#define EMB__CONFIG_HASH                                                                     \
    EMB__FNV(EMB__FNV(EMB__FNV(EMB__FNV(EMB__FNV(EMB__FNV(EMB__FNV(EMB__FNV(EMB__FNV(          \
        EMB__FNV(2166136261u, CONFIG_EMB_TRACE_CLASSES), CONFIG_EMB_TRACE_PACKET_SIZE),      \
        CONFIG_EMB_TRACE_RING_PACKETS), CONFIG_EMB_TRACE_MAX_PAYLOAD), CONFIG_EMB_CRASH),    \
        CONFIG_EMB_CRASH_RECORD_VERSION), CONFIG_EMB_FAULT_RECORD_RING), CONFIG_EMB_MONITOR), \
        CONFIG_EMB_MONITOR_ISR_VECTORS), CONFIG_EMB_STATS)

#ifndef EMB_LIB_VERSION
#define EMB_LIB_VERSION 0x000100u /* 0.1.0 */
#endif

#if CONFIG_EMB_DESCRIPTOR_REDUCED

#if UINTPTR_MAX <= 0xFFFFu
#define EMB__A16(address) {(address), 0u}
#else
#define EMB__A16(address) {(address)}
#endif
#define EMB__RSECTION(member, kind, version)                                                 \
    (uint32_t)(kind) | (uint32_t)(version) << 16,                                             \
        (sizeof(((struct emb_desc_reduced *)0)->member) - 8u) / 4u

#define EMB__CI32(member, kind) EMB_DESC_FIELD32(struct emb_context_info, member, kind)
#define EMB__RF32(member, kind) EMB_DESC_FIELD32(struct emb_trace_ring, member, kind)
#define EMB__LF32(member, kind) EMB_DESC_FIELD32(struct emb_log_ring, member, kind)
/* A 16-bit target states a fixed log id width; a 32-bit one the width chosen at link
 * time as well (the full descriptor's word: the symbol's address is the width). */
_Static_assert(!EMB_DESC_REDUCED_LOG || CONFIG_EMB_LOG_ID_BYTES != 0 || UINTPTR_MAX > 0xFFFFu,
               "the reduced descriptor of a 16-bit target states a fixed log id width");
#if CONFIG_EMB_LOG_ID_BYTES == 0
#define EMB__LOG_ID_BYTES ((uintptr_t)emb_log_id_bytes_linked)
#else
#define EMB__LOG_ID_BYTES CONFIG_EMB_LOG_ID_BYTES
#endif

/* 4-byte aligned: a reader scanning for "EMBD" looks at aligned addresses only. */
EMB_USED _Alignas(4) const struct emb_desc_reduced emb_debug_descriptor = {
    .header = {
        .magic = {'E', 'M', 'B', 'D'},
        .endianness = EMB_WIRE_NATIVE_LE ? EMB_DESC_LITTLE_ENDIAN : EMB_DESC_BIG_ENDIAN,
        .pointer_size = sizeof(void *),
        .version = EMB_DESC_VERSION,
        .length = sizeof(struct emb_desc_reduced),
        .section_count = 2u + (EMB_DESC_REDUCED_TRACE ? 2u : 0u) + (EMB_DESC_REDUCED_LOG ? 1u : 0u),
        .self = EMB__A16(&emb_debug_descriptor),
    },
    .identity = {
        EMB__RSECTION(identity, EMB_DESC_IDENTITY, 1), EMB__CONFIG_HASH, EMB_LIB_VERSION,
        EMB__A16(EMB_PORT_NAME), EMB__A16(CONFIG_EMB_PROFILE_NAME),
        EMB__A16(emb_debug_registry.build_id), EMB__A16(&emb_debug_registry.build_id_len),
        EMB__A16(&emb_debug_registry.ready), EMB__A16(&emb_debug_registry.clock_hz),
        EMB__A16(&emb_debug_registry.clock_offset_ns), EMB_TRACE_CATALOG_CHECKSUM,
    },
#if CONFIG_EMB_CRASH
    .crash = {
        EMB__RSECTION(crash, EMB_DESC_CRASH, 1), EMB__A16(&emb_crash_region.record),
        EMB__A16(&emb_crash_region.record_cap), CONFIG_EMB_CRASH_RECORD_VERSION,
        EMB__A16(&emb_crash_region.found), EMB__A16(&emb_crash_region.found_length),
    },
#else
    .crash = {EMB__RSECTION(crash, EMB_DESC_CRASH, 1), EMB__A16(NULL), EMB__A16(NULL), 0u,
              EMB__A16(NULL), EMB__A16(NULL)},
#endif
#if EMB_DESC_REDUCED_TRACE
    .contexts = {
        EMB__RSECTION(contexts, EMB_DESC_CONTEXTS, 1), EMB__A16(&emb_debug_registry.contexts),
        EMB__A16(&emb_debug_registry.context_stride), EMB__A16(&emb_debug_registry.context_capacity),
        EMB__A16(&emb_debug_registry.context_count), EMB__CI32(ring, EMB_DESC_POINTER),
        EMB__CI32(state, EMB_DESC_UNSIGNED), EMB__CI32(os_id, EMB_DESC_SIGNED),
        EMB__CI32(stack_low, EMB_DESC_POINTER), EMB__CI32(stack_size, EMB_DESC_UNSIGNED),
        EMB__CI32(stack_painted, EMB_DESC_UNSIGNED), EMB_STACK_PAINT,
        EMB__CI32(entry, EMB_DESC_POINTER), 0u, EMB__A16(NULL), 0u,
    },
    .rings = {
        EMB__RSECTION(rings, EMB_DESC_RINGS, 2), CONFIG_EMB_TRACE_PACKET_SIZE,
        EMB__A16(&emb_debug_registry.ring_packets), EMB__A16(&emb_trace_class_mask),
        EMB__A16(&emb_debug_registry.trace_mode), EMB__A16(emb_debug_registry.uuid),
        EMB__RF32(write_pos, EMB_DESC_UNSIGNED), EMB__RF32(packet_end, EMB_DESC_UNSIGNED),
        EMB__RF32(ts_high, EMB_DESC_UNSIGNED), EMB__RF32(event_flags, EMB_DESC_UNSIGNED),
        EMB__RF32(context_id, EMB_DESC_UNSIGNED), EMB__RF32(buf, EMB_DESC_POINTER),
        EMB__RF32(commit, EMB_DESC_POINTER), EMB__RF32(buf_mask, EMB_DESC_UNSIGNED),
        EMB__RF32(slot_mask, EMB_DESC_UNSIGNED), EMB__RF32(packet_shift, EMB_DESC_UNSIGNED),
        EMB__RF32(slot_shift, EMB_DESC_UNSIGNED), EMB__RF32(context_kind, EMB_DESC_UNSIGNED),
        EMB__RF32(packet_seq, EMB_DESC_UNSIGNED), EMB__RF32(discarded, EMB_DESC_UNSIGNED),
        EMB__RF32(base_pos, EMB_DESC_UNSIGNED), EMB__RF32(filled, EMB_DESC_UNSIGNED),
        EMB__RF32(read_pos, EMB_DESC_UNSIGNED), EMB__RF32(name, EMB_DESC_TEXT),
        EMB__A16(&emb_trace_unclaimed_ring), EMB__A16(&emb_debug_registry.probe_consumer),
    },
#endif
#if EMB_DESC_REDUCED_LOG
    .log = {
        EMB__RSECTION(log, EMB_DESC_LOG, 1), EMB__A16(&emb_debug_registry.log_rings),
        EMB__A16(&emb_debug_registry.log_ring_count), EMB__A16(&emb_debug_registry.probe_consumer),
        EMB__LOG_ID_BYTES, CONFIG_EMB_LOG_TIMESTAMP ? 4u : 0u, EMB_LOG_RESERVE_MAX,
        EMB__LF32(write_pos, EMB_DESC_UNSIGNED), EMB__LF32(committed, EMB_DESC_UNSIGNED),
        EMB__LF32(read_pos, EMB_DESC_UNSIGNED), EMB__LF32(buf, EMB_DESC_POINTER),
        EMB__LF32(mask, EMB_DESC_UNSIGNED), EMB__LF32(spill_pos, EMB_DESC_UNSIGNED),
        EMB__LF32(spill, EMB_DESC_UNSIGNED), EMB__LF32(dropped, EMB_DESC_UNSIGNED),
        EMB__LF32(pending, EMB_DESC_UNSIGNED), EMB__LF32(draining, EMB_DESC_UNSIGNED),
        EMB__LF32(context_id, EMB_DESC_UNSIGNED), EMB__LF32(context_kind, EMB_DESC_UNSIGNED),
        EMB__LF32(name, EMB_DESC_TEXT),
    },
#endif
};
_Static_assert(sizeof(struct emb_desc_reduced) ==
                   20u + 4u * (2u + 10u) + 4u * (2u + 5u) +
                       (EMB_DESC_REDUCED_TRACE ? 4u * (2u + 15u) + 4u * (2u + 25u) : 0u) +
                       (EMB_DESC_REDUCED_LOG ? 4u * (2u + 19u) : 0u),
               "every word of the reduced descriptor is 32 bits");

#else /* the full descriptor */

#if defined(__x86_64__)
#define EMB__MACHINE EMB_CRASH_EM_X86_64
#define EMB__LAYOUT EMB_CRASH_LAYOUT_X86_64
#define EMB__STATUS EMB_CRASH_NAT_COUNT
#define EMB__GPRS (2u * EMB_CRASH_X86_64_GPRS)
#elif defined(__aarch64__)
#define EMB__MACHINE EMB_CRASH_EM_AARCH64
#define EMB__LAYOUT EMB_CRASH_LAYOUT_AARCH64
#define EMB__STATUS EMB_CRASH_NAT_COUNT
#define EMB__GPRS (2u * EMB_CRASH_AARCH64_GPRS)
#elif defined(__arm__)
#define EMB__MACHINE EMB_CRASH_EM_ARM
#define EMB__LAYOUT EMB_CRASH_LAYOUT_CORTEX_M
#define EMB__STATUS EMB_CRASH_CM_COUNT
#define EMB__GPRS EMB_CRASH_CORTEX_M_GPRS
#else
#define EMB__MACHINE 0u
#define EMB__LAYOUT 0u
#define EMB__STATUS 0u
#define EMB__GPRS 0u
#endif

#if defined(__arm__)
/* The frame the Cortex-M hardware stacks on exception entry, from the saved sp up. */
static const char *const emb__frame[] = {"r0", "r1", "r2", "r3", "r12", "lr", "pc", "xpsr"};
#define EMB__FRAME_COUNT EMB__COUNT(emb__frame)
#define EMB__FRAME emb__frame
#else
#define EMB__FRAME_COUNT 0u
#define EMB__FRAME NULL
#endif

/* obj_init's type values (catalog/trace_events.yaml). */
static const char *const emb__object_types[] = {
    "thread", "mutex", "sem", "queue", "pipe", "pool", "timer", "event", "cond", "workq", "work", "irq",
};
static const char *const emb__context_states[] = {"free", "live", "exited"};
#if CONFIG_EMB_MONITOR
static const char *const emb__monitor_names[] = {"irq_lock", "sched_lock", "thread_run", "work_handler"};
#endif

#define EMB__TF(member, kind) {#member, EMB_DESC_FIELD(emb_stats_thread_t, member, kind)}
const struct emb_desc_named_field emb_desc_thread_stats_fields[8] = {
    EMB__TF(run_cycles, EMB_DESC_UNSIGNED),      EMB__TF(blocked_cycles, EMB_DESC_UNSIGNED),
    EMB__TF(switches, EMB_DESC_UNSIGNED),        EMB__TF(stack_high_water, EMB_DESC_UNSIGNED),
    EMB__TF(deadline_misses, EMB_DESC_UNSIGNED), EMB__TF(budget_overruns, EMB_DESC_UNSIGNED),
    EMB__TF(max_boost, EMB_DESC_UNSIGNED),       EMB__TF(contentions, EMB_DESC_UNSIGNED),
};
#define EMB__OF(member) {#member, EMB_DESC_FIELD(emb_stats_object_t, member, EMB_DESC_UNSIGNED)}
static const struct emb_desc_named_field emb__object_stats[] = {
    EMB__OF(acquisitions), EMB__OF(contentions), EMB__OF(max_wait_cycles), EMB__OF(wait_cycles),
    EMB__OF(max_queue),
};
#if CONFIG_EMB_STATS
#define EMB__CF(name, member, kind) {name, EMB_DESC_FIELD(struct emb_stats_cpu_block, member, kind)}
static const struct emb_desc_named_field emb__cpu_stats[] = {
    EMB__CF("reset_ts", reset_ts, EMB_DESC_U64_PAIR),
    EMB__CF("isr_cycles", isr_cycles, EMB_DESC_U64_PAIR),
    EMB__CF("idle_cycles", idle_cycles, EMB_DESC_U64_PAIR),
    EMB__CF("irq_count", irq_count, EMB_DESC_UNSIGNED),
};
#endif

#define EMB__RF(member, kind) EMB_DESC_FIELD(struct emb_trace_ring, member, kind)
#define EMB__LF(member, kind) EMB_DESC_FIELD(struct emb_log_ring, member, kind)
#define EMB__CI(member, kind) EMB_DESC_FIELD(struct emb_context_info, member, kind)
#define EMB__OI(member, kind) EMB_DESC_FIELD(struct emb_object_info, member, kind)
#if CONFIG_EMB_PARTITIONS
#define EMB__PI(member, kind) EMB_DESC_FIELD(struct emb_partition_info, member, kind)
static const char *const emb__partition_states[] = {"unused", "running", "restarting"};
#endif
#define EMB__MB(member) EMB_DESC_FIELD(struct emb_monitor_block, member, EMB_DESC_UNSIGNED)

EMB_USED const struct emb_debug_descriptor emb_debug_descriptor = {
    .header = {
        .magic = {'E', 'M', 'B', 'D'},
        .endianness = EMB_WIRE_NATIVE_LE ? EMB_DESC_LITTLE_ENDIAN : EMB_DESC_BIG_ENDIAN,
        .pointer_size = sizeof(void *),
        .version = EMB_DESC_VERSION,
        .length = sizeof(struct emb_debug_descriptor),
        .section_count = 12u,
        .self = &emb_debug_descriptor,
    },
    .identity = {
        .s = EMB__SECTION(struct emb_desc_identity, EMB_DESC_IDENTITY, 2),
        .config_hash = EMB__CONFIG_HASH,
        .lib_version = EMB_LIB_VERSION,
        .port = EMB_PORT_NAME,
        .profile = CONFIG_EMB_PROFILE_NAME,
        .build_id = emb_debug_registry.build_id,
        .build_id_len = &emb_debug_registry.build_id_len,
        .ready = &emb_debug_registry.ready,
        .clock_hz = &emb_debug_registry.clock_hz,
        .clock_offset_ns = &emb_debug_registry.clock_offset_ns,
        .catalog_checksum = EMB_TRACE_CATALOG_CHECKSUM,
        .firmware = CONFIG_EMB_FIRMWARE_VERSION,
        .config = CONFIG_EMB_FIRMWARE_CONFIG,
        .session_id = &emb_debug_registry.session_id,
    },
    .types = {
        .s = EMB__SECTION(struct emb_desc_types, EMB_DESC_TYPES, 1),
        .object_type_count = EMB__COUNT(emb__object_types),
        .object_type_names = emb__object_types,
        .context_state_count = EMB__COUNT(emb__context_states),
        .context_state_names = emb__context_states,
    },
    .contexts = {
        .s = EMB__SECTION(struct emb_desc_contexts, EMB_DESC_CONTEXTS, 2),
        .table = &emb_debug_registry.contexts,
        .stride = &emb_debug_registry.context_stride,
        .capacity = &emb_debug_registry.context_capacity,
        .count = &emb_debug_registry.context_count,
        .f_ring = EMB__CI(ring, EMB_DESC_POINTER),
        .f_state = EMB__CI(state, EMB_DESC_UNSIGNED),
        .f_os_id = EMB__CI(os_id, EMB_DESC_SIGNED),
        .f_stack_low = EMB__CI(stack_low, EMB_DESC_POINTER),
        .f_stack_size = EMB__CI(stack_size, EMB_DESC_UNSIGNED),
        .f_stack_painted = EMB__CI(stack_painted, EMB_DESC_UNSIGNED),
        .stack_paint = EMB_STACK_PAINT,
        .f_entry = EMB__CI(entry, EMB_DESC_POINTER),
        .f_stats = EMB__CI(stats, EMB_DESC_BYTES),
        .stats_fields = emb_desc_thread_stats_fields,
        .stats_field_count = EMB__COUNT(emb_desc_thread_stats_fields),
        .f_partition = EMB__CI(partition, EMB_DESC_UNSIGNED),
    },
    .rings = {
        .s = EMB__SECTION(struct emb_desc_rings, EMB_DESC_RINGS, 2),
        .packet_size = CONFIG_EMB_TRACE_PACKET_SIZE,
        .ring_packets = &emb_debug_registry.ring_packets,
        .class_mask = &emb_trace_class_mask,
        .trace_mode = &emb_debug_registry.trace_mode,
        .uuid = emb_debug_registry.uuid,
        .f_write_pos = EMB__RF(write_pos, EMB_DESC_UNSIGNED),
        .f_packet_end = EMB__RF(packet_end, EMB_DESC_UNSIGNED),
        .f_ts_high = EMB__RF(ts_high, EMB_DESC_UNSIGNED),
        .f_flags = EMB__RF(event_flags, EMB_DESC_UNSIGNED),
        .f_context_id = EMB__RF(context_id, EMB_DESC_UNSIGNED),
        .f_buf = EMB__RF(buf, EMB_DESC_POINTER),
        .f_commit = EMB__RF(commit, EMB_DESC_POINTER),
        .f_buf_mask = EMB__RF(buf_mask, EMB_DESC_UNSIGNED),
        .f_slot_mask = EMB__RF(slot_mask, EMB_DESC_UNSIGNED),
        .f_packet_shift = EMB__RF(packet_shift, EMB_DESC_UNSIGNED),
        .f_slot_shift = EMB__RF(slot_shift, EMB_DESC_UNSIGNED),
        .f_context_kind = EMB__RF(context_kind, EMB_DESC_UNSIGNED),
        .f_packet_seq = EMB__RF(packet_seq, EMB_DESC_UNSIGNED),
        .f_discarded = EMB__RF(discarded, EMB_DESC_UNSIGNED),
        .f_base_pos = EMB__RF(base_pos, EMB_DESC_UNSIGNED),
        .f_filled = EMB__RF(filled, EMB_DESC_UNSIGNED),
        .f_read_pos = EMB__RF(read_pos, EMB_DESC_UNSIGNED),
        .f_name = EMB__RF(name, EMB_DESC_TEXT),
        .unclaimed = &emb_trace_unclaimed_ring,
        .consumer = &emb_debug_registry.probe_consumer,
    },
    .log = {
        .s = EMB__SECTION(struct emb_desc_log, EMB_DESC_LOG, 1),
        .rings = &emb_debug_registry.log_rings,
        .count = &emb_debug_registry.log_ring_count,
        .consumer = &emb_debug_registry.probe_consumer,
#if CONFIG_EMB_LOG_ID_BYTES == 0
        .id_bytes = (uintptr_t)emb_log_id_bytes_linked, /* chosen at link time */
#else
        .id_bytes = CONFIG_EMB_LOG_ID_BYTES,
#endif
        .ts_bytes = CONFIG_EMB_LOG_TIMESTAMP ? 4u : 0u,
        .slack = EMB_LOG_RESERVE_MAX,
        .f_write_pos = EMB__LF(write_pos, EMB_DESC_UNSIGNED),
        .f_committed = EMB__LF(committed, EMB_DESC_UNSIGNED),
        .f_read_pos = EMB__LF(read_pos, EMB_DESC_UNSIGNED),
        .f_buf = EMB__LF(buf, EMB_DESC_POINTER),
        .f_mask = EMB__LF(mask, EMB_DESC_UNSIGNED),
        .f_spill_pos = EMB__LF(spill_pos, EMB_DESC_UNSIGNED),
        .f_spill = EMB__LF(spill, EMB_DESC_UNSIGNED),
        .f_dropped = EMB__LF(dropped, EMB_DESC_UNSIGNED),
        .f_pending = EMB__LF(pending, EMB_DESC_UNSIGNED),
        .f_draining = EMB__LF(draining, EMB_DESC_UNSIGNED),
        .f_context_id = EMB__LF(context_id, EMB_DESC_UNSIGNED),
        .f_context_kind = EMB__LF(context_kind, EMB_DESC_UNSIGNED),
        .f_name = EMB__LF(name, EMB_DESC_TEXT),
    },
    .crash = {
        .s = EMB__SECTION(struct emb_desc_crash, EMB_DESC_CRASH, 1),
#if CONFIG_EMB_CRASH
        .record = &emb_crash_region.record,
        .record_cap = &emb_crash_region.record_cap,
        .version = CONFIG_EMB_CRASH_RECORD_VERSION,
        .found = &emb_crash_region.found,
        .found_length = &emb_crash_region.found_length,
#endif
    },
    .mini = {
        .s = EMB__SECTION(struct emb_desc_mini, EMB_DESC_MINI, 1),
#if CONFIG_EMB_CRASH
        .ring = &emb_crash_region.mini,
        .entries = CONFIG_EMB_FAULT_RECORD_RING,
        .entry_size = EMB_MINI_SIZE,
#endif
    },
    .monitors = {
        .s = EMB__SECTION(struct emb_desc_monitors, EMB_DESC_MONITORS, 2),
#if CONFIG_EMB_MONITOR
        .blocks = emb_monitor_blocks,
        .count = EMB_MONITOR_COUNT,
        .stride = sizeof(struct emb_monitor_block),
        .f_worst = EMB__MB(worst),
        .f_pc = EMB_DESC_FIELD(struct emb_monitor_block, pc, EMB_DESC_POINTER),
        .f_threshold = EMB__MB(threshold),
        .f_over = EMB__MB(over),
        .f_action = EMB__MB(action),
        .category_names = emb__monitor_names,
        .category_name_count = EMB__COUNT(emb__monitor_names),
        .isr_first = EMB_MONITOR_ISR_FIRST,
        .cpus = CONFIG_EMB_CPUS,
#endif
    },
    .stats = {
        .s = EMB__SECTION(struct emb_desc_stats, EMB_DESC_STATS, 2),
#if CONFIG_EMB_STATS
        .cpu = emb_stats_cpu,
        .cpus = CONFIG_EMB_CPUS,
        .cpu_stride = sizeof(struct emb_stats_cpu_block),
        .cpu_fields = emb__cpu_stats,
        .cpu_field_count = EMB__COUNT(emb__cpu_stats),
#endif
        .objects = &emb_debug_registry.objects,
        .object_stride = &emb_debug_registry.object_stride,
        .object_capacity = &emb_debug_registry.object_capacity,
        .object_count = &emb_debug_registry.object_count,
        .f_handle = EMB__OI(handle, EMB_DESC_UNSIGNED),
        .f_type = EMB__OI(type, EMB_DESC_UNSIGNED),
        .f_name = EMB__OI(name, EMB_DESC_TEXT),
        .f_object_state = EMB__OI(state, EMB_DESC_UNSIGNED),
        .f_stats = EMB__OI(stats, EMB_DESC_BYTES),
        .object_stats_fields = emb__object_stats,
        .object_stats_field_count = EMB__COUNT(emb__object_stats),
    },
    .arch = {
        .s = EMB__SECTION(struct emb_desc_arch, EMB_DESC_ARCH, 1),
        .elf_machine = EMB__MACHINE,
        .fault_layout = EMB__LAYOUT,
        .status_count = EMB__STATUS,
        .gpr_count = EMB__GPRS,
        .frame_word_count = EMB__FRAME_COUNT,
        .frame_names = EMB__FRAME,
    },
    .kernel = {
        .s = EMB__SECTION(struct emb_desc_kernel, EMB_DESC_KERNEL, 1),
        .layout = &emb_kernel_layout,
    },
    .partitions = {
        .s = EMB__SECTION(struct emb_desc_partitions, EMB_DESC_PARTITIONS, 1),
#if CONFIG_EMB_PARTITIONS
        .table = emb_partitions,
        .count = CONFIG_EMB_PARTITIONS,
        .stride = sizeof(struct emb_partition_info),
        .f_id = EMB__PI(id, EMB_DESC_UNSIGNED),
        .f_state = EMB__PI(state, EMB_DESC_UNSIGNED),
        .f_name = EMB__PI(name, EMB_DESC_TEXT),
        .f_faults = EMB__PI(faults, EMB_DESC_UNSIGNED),
        .f_restarts = EMB__PI(restarts, EMB_DESC_UNSIGNED),
        .f_fault_class = EMB__PI(last_fault_class, EMB_DESC_UNSIGNED),
        .f_fault_code = EMB__PI(last_fault_code, EMB_DESC_UNSIGNED),
        .f_fault_pc = EMB__PI(last_fault_pc, EMB_DESC_POINTER),
        .state_names = emb__partition_states,
        .state_count = EMB__COUNT(emb__partition_states),
#endif
    },
};

#endif /* CONFIG_EMB_DESCRIPTOR_REDUCED */
#endif /* CONFIG_EMB_DESCRIPTOR */
