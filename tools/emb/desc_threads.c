#include "desc_threads.h"

#include <inttypes.h>
#include <string.h>

#include "crash_decode.h"
#include "text.h"

static const char *thread_name(const struct emb_desc_kernel_view *k, uint64_t addr)
{
    for (size_t i = 0; i < k->nthreads; i++)
        if (k->threads[i].addr == addr)
            return k->threads[i].name;
    return addr ? "?" : "-";
}

static void print_registers(FILE *out, const struct emb_desc_kernel_view *k, const struct emb_desc_thread *t,
                            emb_desc_symbolise_fn sym, void *arg)
{
    char buf[256];
    fprintf(out, "      registers at sp 0x%08" PRIx64 ":", t->sp);
    for (uint32_t i = 0; i < k->frame_words; i++)
        fprintf(out, "%s %s=%08" PRIx64, i % 8 == 0 ? "\n       " : "", k->frame_names[i], t->frame[i]);
    if (k->frame_pc < k->frame_words)
        fprintf(out, "\n       pc %s", sym(arg, t->frame[k->frame_pc], buf, sizeof buf));
    if (k->frame_lr < k->frame_words)
        fprintf(out, "\n       lr %s", sym(arg, t->frame[k->frame_lr], buf, sizeof buf));
    fputc('\n', out);
}

static void print_thread(FILE *out, const struct emb_desc_kernel_view *k, const struct emb_desc_thread *t,
                         emb_desc_symbolise_fn sym, void *arg)
{
    char wait[48] = "-", timeout[24] = "-", locks[96] = "-", buf[256];
    if (t->state_name[0] && strcmp(t->wait_name, "none") != 0 && t->wait_name[0])
        snprintf(wait, sizeof wait, "%s %s", t->wait_name, t->wait_object_name[0] ? t->wait_object_name : "");
    if (t->timeout_armed)
        snprintf(timeout, sizeof timeout, "tick %" PRIu32, t->timeout_deadline);
    size_t used = 0;
    for (size_t i = 0; i < t->nowned && used + 24 < sizeof locks; i++)
        used += (size_t)snprintf(locks + used, sizeof locks - used, "%s%s", i ? "," : "",
                                 t->owned[i].name[0] ? t->owned[i].name : "?");
    fprintf(out, "  %3" PRIu32 " %-10s %-8s %-16s %2" PRIu32 "/%-2" PRIu32 " %5" PRIu32 "/%-5" PRIu32
                 " %-10s 0x%02" PRIx32 "/0x%02" PRIx32 " %s\n",
            t->index, t->name, t->running ? "running" : t->state_name, wait, t->base_priority,
            t->eff_priority, t->stack_used, t->stack_size, timeout, t->notify_bits, t->notify_mask, locks);
    fprintf(out, "      entry %s\n", sym(arg, t->entry, buf, sizeof buf));
    if (t->has_frame)
        print_registers(out, k, t, sym, arg);
}

void emb_desc_print_threads(FILE *out, const struct emb_desc_model *m, emb_desc_symbolise_fn sym, void *arg)
{
    const struct emb_desc_kernel_view *k = m->kernel;
    if (k == NULL)
        return;
    const char *bold = emb_color_code(out, EMB_C_BOLD), *reset = emb_color_code(out, EMB_C_RESET);
    fprintf(out, "\n%sThreads%s of %s (%zu): current %s, irq nesting %" PRIu32 ", scheduler lock %" PRIu32
                 ", reschedule %" PRIu32 ", %" PRIu32 " switches, tick %" PRIu32 "\n",
            bold, reset, k->name, k->nthreads, thread_name(k, k->current), k->irq_nesting, k->sched_lock,
            k->reschedule, k->switches, k->tick);
    fprintf(out, "  %3s %-10s %-8s %-16s %-5s %11s %-10s %-9s %s\n", "idx", "name", "state", "wait",
            "prio", "stack used", "timeout", "notify", "locks held");
    for (size_t i = 0; i < k->nthreads; i++)
        print_thread(out, k, &k->threads[i], sym, arg);
    if (k->nobjects) {
        fprintf(out, "\n%sKernel objects%s (%zu)\n", bold, reset, k->nobjects);
        for (size_t i = 0; i < k->nobjects; i++) {
            const struct emb_desc_kobject *o = &k->objects[i];
            fprintf(out, "  0x%08" PRIx32 " %-6s %-12s%s%s\n", o->handle, o->type_name, o->name,
                    o->type == 1u ? " held by " : "", o->type == 1u ? thread_name(k, o->owner) : "");
        }
    }
}

/* The runs of fields the JSON takes as they are (the others are written one by one). */
#define THREAD(member, key, kind) EMB_JSON_FIELD(struct emb_desc_thread, member, key, kind)
static const struct emb_json_field THREAD_WAIT_FIELDS[] = {
    THREAD(wait_name, "wait_reason", TEXT),             THREAD(wait_object, "wait_object", UINT),
    THREAD(wait_object_name, "wait_object_name", TEXT), THREAD(wake_result, "wake_result", INT),
    THREAD(base_priority, "base_priority", UINT),       THREAD(eff_priority, "eff_priority", UINT),
    THREAD(sp, "sp", UINT),                             THREAD(stack_low, "stack_low", UINT),
    THREAD(stack_size, "stack_size", UINT),             THREAD(stack_used, "stack_used", UINT),
};
static const struct emb_json_field THREAD_TIMEOUT_FIELDS[] = {
    THREAD(timeout_deadline, "timeout_deadline", UINT), THREAD(notify_bits, "notify_bits", UINT),
    THREAD(notify_mask, "notify_mask", UINT),
};
#undef THREAD
static const struct emb_json_field KERNEL_OBJECT_FIELDS[] = {
    EMB_JSON_FIELD(struct emb_desc_kobject, handle, "handle", UINT),
    EMB_JSON_FIELD(struct emb_desc_kobject, type_name, "type", TEXT),
    EMB_JSON_FIELD(struct emb_desc_kobject, name, "name", TEXT),
};

static void json_thread(struct emb_json *j, const struct emb_desc_kernel_view *k, const struct emb_desc_thread *t,
                        emb_desc_symbolise_fn sym, void *arg)
{
    char buf[256];
    emb_json_begin_object(j, NULL);
    emb_json_uint(j, "index", t->index);
    emb_json_string(j, "name", t->name);
    emb_json_uint(j, "address", t->addr);
    emb_json_string(j, "state", t->running ? "running" : t->state_name);
    emb_json_bool(j, "running", t->running);
    EMB_JSON_FIELDS(j, t, THREAD_WAIT_FIELDS);
    emb_json_bool(j, "timeout_armed", t->timeout_armed != 0);
    EMB_JSON_FIELDS(j, t, THREAD_TIMEOUT_FIELDS);
    emb_json_string(j, "entry", sym(arg, t->entry, buf, sizeof buf));
    emb_json_begin_array(j, "locks_held");
    for (size_t i = 0; i < t->nowned; i++)
        emb_json_string(j, NULL, t->owned[i].name);
    emb_json_end_array(j);
    emb_json_begin_object(j, "registers");
    for (uint32_t i = 0; t->has_frame && i < k->frame_words; i++)
        emb_json_uint(j, k->frame_names[i], t->frame[i]);
    emb_json_end_object(j);
    emb_json_begin_object(j, "stats");
    for (size_t i = 0; i < t->nstats; i++)
        emb_json_uint(j, t->stats[i].name, t->stats[i].value);
    emb_json_end_object(j);
    emb_json_end_object(j);
}

/* The scheduler's per-CPU state, under the names the JSON gives it. */
#define KERNEL(member, key) EMB_JSON_FIELD(struct emb_desc_kernel_view, member, key, UINT)
static const struct emb_json_field SCHEDULER_FIELDS[] = {
    KERNEL(irq_nesting, "irq_nesting_depth"), KERNEL(sched_lock, "sched_lock_depth"),
    KERNEL(reschedule, "reschedule_pending"), KERNEL(switches, "switches"),
    KERNEL(tick, "tick"),                     KERNEL(ready_bitmap, "ready_bitmap"),
};
#undef KERNEL

void emb_desc_json_threads(struct emb_json *j, const struct emb_desc_model *m, emb_desc_symbolise_fn sym,
                           void *arg)
{
    const struct emb_desc_kernel_view *k = m->kernel;
    if (k == NULL)
        return;
    emb_json_begin_object(j, "kernel");
    emb_json_string(j, "name", k->name);
    emb_json_string(j, "current_thread", thread_name(k, k->current));
    EMB_JSON_FIELDS(j, k, SCHEDULER_FIELDS);
    emb_json_begin_array(j, "threads");
    for (size_t i = 0; i < k->nthreads; i++)
        json_thread(j, k, &k->threads[i], sym, arg);
    emb_json_end_array(j);
    emb_json_begin_array(j, "objects");
    for (size_t i = 0; i < k->nobjects; i++) {
        const struct emb_desc_kobject *o = &k->objects[i];
        emb_json_begin_object(j, NULL);
        EMB_JSON_FIELDS(j, o, KERNEL_OBJECT_FIELDS);
        if (o->type == 1u)
            emb_json_string(j, "owner", o->owner ? thread_name(k, o->owner) : "");
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_json_end_object(j);
}

void emb_desc_print_partitions(FILE *out, const struct emb_desc_model *m, emb_desc_symbolise_fn sym, void *arg)
{
    if (!m->npartitions)
        return;
    char buf[256];
    fprintf(out, "\nPartitions (%zu)\n", m->npartitions);
    fprintf(out, "  %-3s %-16s %-10s %7s %8s  %s\n", "id", "name", "state", "faults", "restarts", "last fault");
    for (size_t i = 0; i < m->npartitions; i++) {
        const struct emb_desc_partition *p = &m->partitions[i];
        fprintf(out, "  %-3u %-16s %-10s %7u %8u", p->id, p->name[0] ? p->name : "-", p->state_name, p->faults,
                p->restarts);
        if (p->faults)
            fprintf(out, "  %s, code %u, pc %s", emb_crash_fault_class_name(p->fault_class), p->fault_code,
                    sym(arg, p->fault_pc, buf, sizeof buf));
        fprintf(out, "\n");
    }
}

#define PARTITION(member, key, kind) EMB_JSON_FIELD(struct emb_desc_partition, member, key, kind)
static const struct emb_json_field PARTITION_FIELDS[] = {
    PARTITION(id, "id", UINT),          PARTITION(name, "name", TEXT), PARTITION(state_name, "state", TEXT),
    PARTITION(faults, "faults", UINT), PARTITION(restarts, "restarts", UINT),
};
static const struct emb_json_field PARTITION_FAULT_FIELDS[] = {
    PARTITION(fault_code, "fault_code", UINT),
    PARTITION(fault_pc, "fault_pc", HEX),
};
#undef PARTITION

void emb_desc_json_partitions(struct emb_json *j, const struct emb_desc_model *m, emb_desc_symbolise_fn sym,
                              void *arg)
{
    char buf[256];
    emb_json_begin_array(j, "partitions");
    for (size_t i = 0; i < m->npartitions; i++) {
        const struct emb_desc_partition *p = &m->partitions[i];
        emb_json_begin_object(j, NULL);
        EMB_JSON_FIELDS(j, p, PARTITION_FIELDS);
        emb_json_string(j, "fault_class", p->faults ? emb_crash_fault_class_name(p->fault_class) : "");
        EMB_JSON_FIELDS(j, p, PARTITION_FAULT_FIELDS);
        emb_json_string(j, "fault_at", p->faults ? sym(arg, p->fault_pc, buf, sizeof buf) : "");
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}
