/* The kernel's layout, declared once for the debug descriptor (docs/formats/descriptor.md,
 * "The kernel's layout block"): where the threads are and the offsets of every field a
 * tool shows, the scheduler's state, the object headers and registries, and the frame a
 * switched-out thread leaves at its saved stack pointer. Nothing in the library names
 * these structures: a tool that reads this block lists the threads of any kernel. */
#include <stddef.h>

#include <emb/descriptor.h>

#include "kernel.h"

#define TF(member, kind) EMB_DESC_FIELD(struct kern_thread, member, kind)
#define OF(member, kind) EMB_DESC_FIELD(struct kern_object, member, kind)
#define MF(member, kind) EMB_DESC_FIELD(struct kern_mutex, member, kind)
#define CF(member) EMB_DESC_FIELD(struct kern_cpu, member, EMB_DESC_UNSIGNED)

/* enum kern_state and enum kern_wait_reason, by value. */
static const char *const state_names[] = {"ready", "running", "blocked", "dead"};
static const char *const wait_names[] = {"mutex", "sem", "queue", "event", "cond", "sleep",
                                         "join", "notify", "none"};
/* PendSV's r4-r11 below the hardware's exception frame. */
static const char *const frame_names[] = {"r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11",
                                          "r0", "r1", "r2", "r3", "r12", "lr", "pc", "xpsr"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

EMB_USED const struct emb_kernel_layout emb_kernel_layout = {
    EMB_KERNEL_LAYOUT_HEADER,
    .kernel = "kernel-cortex-m",
    .threads = {
        .s = EMB_DESC_SECTION_OF(struct emb_desc_threads, EMB_DESC_THREADS, 1),
        .all_threads = &kern_all_threads,
        .f_next_all = TF(next_all, EMB_DESC_POINTER),
        .max_threads = KERN_MAX_THREADS,
        .f_sp = TF(sp, EMB_DESC_POINTER),
        .f_state = TF(state, EMB_DESC_UNSIGNED),
        .state_names = state_names,
        .state_count = COUNT(state_names),
        .f_wait_reason = TF(wait_reason, EMB_DESC_UNSIGNED),
        .wait_names = wait_names,
        .wait_count = COUNT(wait_names),
        .f_wait_object = TF(wait_object, EMB_DESC_POINTER),
        .f_wait_queue = TF(wait_queue, EMB_DESC_POINTER),
        .f_wake_result = TF(wake_result, EMB_DESC_SIGNED),
        .f_base_priority = TF(base_priority, EMB_DESC_UNSIGNED),
        .f_eff_priority = TF(eff_priority, EMB_DESC_UNSIGNED),
        .f_name = TF(name, EMB_DESC_TEXT),
        .f_index = TF(index, EMB_DESC_UNSIGNED),
        .f_owned_head = TF(owned, EMB_DESC_POINTER),
        .f_lock_next_owned = MF(next_owned, EMB_DESC_POINTER),
        .f_lock_owner = MF(owner, EMB_DESC_POINTER),
        .f_timeout_deadline = TF(wake_tick, EMB_DESC_UNSIGNED),
        .f_timeout_armed = TF(timeout_armed, EMB_DESC_UNSIGNED),
        .f_notify_bits = TF(notify_bits, EMB_DESC_UNSIGNED),
        .f_notify_mask = TF(notify_mask, EMB_DESC_UNSIGNED),
        .f_stats = TF(stats, EMB_DESC_BYTES),
        .stats_fields = emb_desc_thread_stats_fields,
        .stats_field_count = 8u,
        .f_stack_low = TF(stack_low, EMB_DESC_POINTER),
        .f_stack_size = TF(stack_size, EMB_DESC_UNSIGNED),
        .stack_paint = EMB_STACK_PAINT,
        .f_entry = TF(entry, EMB_DESC_POINTER),
        .frame_word_count = COUNT(frame_names),
        .frame_names = frame_names,
        .frame_pc_word = 14u,
        .frame_lr_word = 13u,
    },
    .scheduler = {
        .s = EMB_DESC_SECTION_OF(struct emb_desc_scheduler, EMB_DESC_SCHEDULER, 1),
        .ready_kind = EMB_DESC_READY_BITMAP_FIFO,
        .ready = &kern_ready,
        .priority_count = KERN_PRIORITIES,
        .urgent_high = 1u,
        .f_ready_bitmap = EMB_DESC_FIELD(struct kern_ready, bitmap, EMB_DESC_UNSIGNED),
        .f_ready_heads = EMB_DESC_FIELD(struct kern_ready, head[0], EMB_DESC_POINTER),
        .f_next_ready = TF(next_ready, EMB_DESC_POINTER),
        .cpus = &kern_cpu,
        .cpu_count = 1u,
        .cpu_stride = sizeof(struct kern_cpu),
        .f_current_thread = EMB_DESC_FIELD(struct kern_cpu, current, EMB_DESC_POINTER),
        .f_irq_nesting_depth = CF(irq_nesting),
        .f_sched_lock_depth = CF(sched_lock),
        .f_reschedule_pending = CF(reschedule),
        .f_switches = CF(switches),
        .f_tick = CF(tick),
        .all_threads = &kern_all_threads,
    },
    .objects = {
        .s = EMB_DESC_SECTION_OF(struct emb_desc_objects, EMB_DESC_OBJECTS, 1),
        .f_type_tag = OF(type, EMB_DESC_UNSIGNED),
        .f_lifecycle = OF(lifecycle, EMB_DESC_UNSIGNED),
        .f_generation = OF(generation, EMB_DESC_UNSIGNED),
        .f_name = OF(name, EMB_DESC_POINTER),
        .f_registry_next = OF(registry_next, EMB_DESC_POINTER),
        .f_handle = OF(handle, EMB_DESC_UNSIGNED),
        .registry = kern_registry,
        .registry_count = KERN_OBJECT_TYPES,
        .handle_model = EMB_DESC_HANDLE_POINTER,
        .max_objects = 64u,
        .f_mutex_owner = MF(owner, EMB_DESC_POINTER),
        .f_mutex_waiters = MF(waiters, EMB_DESC_POINTER),
        .f_next_wait = TF(next_wait, EMB_DESC_POINTER),
    },
};
