#include <emb/hooks.h>
#include <emb/monitor.h>
#include <emb/trace_events.h>

#define EMB__MONITORED (CONFIG_EMB_MONITOR || CONFIG_EMB_STATS)

/* The caller of a hook: the code that opened an interval. */
#define EMB__CALLER() ((uintptr_t)__builtin_return_address(0))

void emb_isr_enter(uint16_t irq)
{
    struct emb_trace_ring *ring = emb_trace_context_ring();
    if (ring != NULL)
        emb_trace_enter_handler(ring, EMB_EVT_KIND_ISR);
#if EMB__MONITORED
    struct emb_monitor_ctx *c = emb_port_monitor_ctx();
    uint32_t depth = c->isr_depth++;
    if (depth < EMB_MONITOR_ISR_NEST) {
        c->isr_pc[depth] = EMB__CALLER();
        c->isr_t0[depth] = emb_port_timestamp();
    }
#endif
    EMB_TRACE_irq_enter(irq);
}

void emb_isr_exit(uint16_t irq, bool switched)
{
    EMB_TRACE_irq_exit(irq, switched);
#if EMB__MONITORED
    struct emb_monitor_ctx *c = emb_port_monitor_ctx();
    if (c->isr_depth > 0u && --c->isr_depth < EMB_MONITOR_ISR_NEST) {
        uint32_t depth = c->isr_depth;
        uint32_t cycles = emb_monitor_cycles(c->isr_t0[depth], emb_port_timestamp());
#if CONFIG_EMB_STATS
        struct emb_stats_cpu_block *b = EMB_STATS_CPU();
        emb_stats_add64(b->isr_cycles, cycles);
        (void)emb_cpu_add32(&b->irq_count, 1u);
#endif
        if (irq < CONFIG_EMB_MONITOR_ISR_VECTORS)
            emb_monitor_close(EMB_MONITOR_ISR(irq), cycles, c->isr_pc[depth]);
    }
#endif
    struct emb_trace_ring *ring = emb_trace_context_ring();
    if (ring != NULL)
        emb_trace_leave_handler(ring);
}

void emb_frame_start(uint32_t frame)
{
    if (emb_trace_frame_mark(frame)) {
        struct emb_trace_ring *ring = emb_trace_context_ring();
        EMB_TRACE_window_armed(frame, ring != NULL ? ring->buf_mask + 1u : 0u);
    }
    EMB_TRACE_frame_start(frame);
}

void emb_frame_end(uint32_t frame)
{
    EMB_TRACE_frame_end(frame);
}

EMB_NOINLINE emb_port_irq_state emb_irq_lock(void)
{
    emb_port_irq_state state = emb_port_irq_save();
#if CONFIG_EMB_MONITOR
    struct emb_monitor_ctx *c = emb_port_monitor_ctx();
    if (c->irq_depth++ == 0u) {
        c->irq_pc = EMB__CALLER();
        c->irq_t0 = emb_port_timestamp();
    }
#endif
    return state;
}

void emb_irq_unlock(emb_port_irq_state state)
{
#if CONFIG_EMB_MONITOR
    struct emb_monitor_ctx *c = emb_port_monitor_ctx();
    /* Closed with interrupts still masked: the interval is what they were masked for. */
    if (c->irq_depth > 0u && --c->irq_depth == 0u)
        emb_monitor_close(EMB_MONITOR_IRQ_LOCK, emb_monitor_cycles(c->irq_t0, emb_port_timestamp()),
                          c->irq_pc);
#endif
    emb_port_irq_restore(state);
}

EMB_NOINLINE void emb_sched_lock(void)
{
#if CONFIG_EMB_MONITOR
    struct emb_monitor_ctx *c = emb_port_monitor_ctx();
    if (c->sched_depth++ != 0u)
        return;
    c->sched_pc = EMB__CALLER();
    c->sched_t0 = emb_port_timestamp();
#endif
    EMB_TRACE_sched_lock();
}

void emb_sched_unlock(void)
{
#if CONFIG_EMB_MONITOR
    struct emb_monitor_ctx *c = emb_port_monitor_ctx();
    if (c->sched_depth == 0u || --c->sched_depth != 0u)
        return;
    uint32_t cycles = emb_monitor_cycles(c->sched_t0, emb_port_timestamp());
    EMB_TRACE_sched_unlock(cycles);
    emb_monitor_close(EMB_MONITOR_SCHED_LOCK, cycles, c->sched_pc);
#else
    EMB_TRACE_sched_unlock(0u);
#endif
}

void emb_idle_enter(void)
{
#if CONFIG_EMB_STATS
    /* Idle is per CPU: the interval runs from the first context to enter to the last to
     * leave (one set of blocks: every context's CPU is the one CPU). */
    struct emb_stats_cpu_block *b = EMB_STATS_CPU();
    if (emb_cpu_add32(&b->idle_depth, 1u) == 0u) {
        uint64_t now = emb_port_timestamp();
        __atomic_store_n(&b->idle_t0[0], (uint32_t)now, __ATOMIC_RELAXED);
        __atomic_store_n(&b->idle_t0[1], (uint32_t)(now >> 32), __ATOMIC_RELAXED);
    }
#endif
    EMB_TRACE_idle_enter();
}

void emb_idle_exit(void)
{
    EMB_TRACE_idle_exit();
#if CONFIG_EMB_STATS
    struct emb_stats_cpu_block *b = EMB_STATS_CPU();
    uint32_t depth = __atomic_load_n(&b->idle_depth, __ATOMIC_RELAXED);
    if (depth > 0u && emb_cpu_add32(&b->idle_depth, 0xFFFFFFFFu) == 1u)
        emb_stats_add64(b->idle_cycles, emb_port_timestamp() - emb_stats_get64(b->idle_t0));
#endif
}
