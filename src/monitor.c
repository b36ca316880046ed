/* Monitors (the slow path of the closing point, thresholds, actions) and the CPU
 * statistics. The fast path is emb_monitor_close() in emb/monitor.h. */
#include <emb/monitor.h>

#include <emb/crash.h>
#include <emb/port.h>
#include <emb/trace_events.h>

#if CONFIG_EMB_MONITOR

/* Zero: no worst case yet (the first nonzero interval takes the slow path), no threshold.
 * One set of blocks per CPU (CONFIG_EMB_CPUS). */
struct emb_monitor_block emb_monitor_blocks[CONFIG_EMB_CPUS * EMB_MONITOR_COUNT];

static emb_monitor_notify_fn emb__notify;
static void *emb__notify_arg;

/* The closing point's bound: the worst case, or the threshold when that is lower. */
static uint32_t emb__limit(uint32_t worst, uint32_t threshold)
{
    return threshold != 0u && threshold < worst ? threshold : worst;
}

/* Raises the worst case to `cycles` (it only ever grows), its opener pc stored after it by
 * the context that raised it; returns the worst case now. One set of blocks: intervals end
 * on every context at once (the native port's threads), so a compare-and-swap. Per-CPU
 * blocks: only this CPU writes its own, a plain update with its interrupts masked. */
static uint32_t emb__raise_worst(struct emb_monitor_block *m, uint32_t cycles, uintptr_t pc)
{
#if CONFIG_EMB_CPUS > 1
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t worst = m->worst;
    if (cycles > worst) {
        m->worst = worst = cycles;
        m->pc = pc;
    }
    emb_port_irq_restore(s);
    return worst;
#else
    uint32_t worst = __atomic_load_n(&m->worst, __ATOMIC_RELAXED);
    while (cycles > worst) {
        if (__atomic_compare_exchange_n(&m->worst, &worst, cycles, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            __atomic_store_n(&m->pc, pc, __ATOMIC_RELAXED);
            return cycles;
        }
    }
    return worst;
#endif
}

void emb_monitor_exceeded(uint8_t category, uint32_t cycles, uintptr_t pc)
{
    struct emb_monitor_block *m = EMB_MONITOR_BLOCK(category);
    uint32_t worst = emb__raise_worst(m, cycles, pc);
    uint32_t threshold = __atomic_load_n(&m->threshold, __ATOMIC_RELAXED);
    emb_cpu_store32(&m->limit, emb__limit(worst, threshold));
    if (threshold == 0u || cycles <= threshold)
        return;
    (void)emb_cpu_add32(&m->over, 1u);
    uint32_t action = __atomic_load_n(&m->action, __ATOMIC_RELAXED);
    if (action & EMB_MONITOR_TRACE)
        EMB_TRACE_irq_lock_max(cycles, (uint64_t)pc);
    if (action & EMB_MONITOR_NOTIFY) {
        emb_monitor_notify_fn fn = __atomic_load_n(&emb__notify, __ATOMIC_ACQUIRE);
        if (fn != NULL)
            fn(emb__notify_arg, category, cycles, pc);
    }
#if CONFIG_EMB_CRASH
    if (action & EMB_MONITOR_FAULT)
        emb_port_fault(EMB_FAULT_MONITOR, category, pc, cycles, threshold);
#endif
}

/* Every CPU's block of the category: the longest interval of all and its opener, the
 * intervals over the threshold added up. */
emb_status emb_monitor_get(uint8_t category, emb_monitor_t *out)
{
    if (category >= EMB_MONITOR_COUNT || out == NULL)
        return EMB_E_INVALID;
    const struct emb_monitor_block *m = &emb_monitor_blocks[category];
    out->threshold = __atomic_load_n(&m->threshold, __ATOMIC_RELAXED);
    out->action = (uint8_t)__atomic_load_n(&m->action, __ATOMIC_RELAXED);
    out->worst_cycles = 0u;
    out->opener_pc = 0u;
    out->over_count = 0u;
    for (uint32_t cpu = 0; cpu < CONFIG_EMB_CPUS; cpu++, m += EMB_MONITOR_COUNT) {
        uint32_t worst = __atomic_load_n(&m->worst, __ATOMIC_RELAXED);
        if (worst > out->worst_cycles || cpu == 0u) {
            out->worst_cycles = worst;
            out->opener_pc = __atomic_load_n(&m->pc, __ATOMIC_RELAXED);
        }
        out->over_count += __atomic_load_n(&m->over, __ATOMIC_RELAXED);
    }
    return EMB_OK;
}

/* On every CPU's block of the category. */
emb_status emb_monitor_set_threshold(uint8_t category, uint32_t cycles, uint8_t action)
{
    if (category >= EMB_MONITOR_COUNT ||
        (action & ~(EMB_MONITOR_TRACE | EMB_MONITOR_NOTIFY | EMB_MONITOR_FAULT)) != 0u)
        return EMB_E_INVALID;
    for (uint32_t cpu = 0; cpu < CONFIG_EMB_CPUS; cpu++) {
        struct emb_monitor_block *m = &emb_monitor_blocks[cpu * EMB_MONITOR_COUNT + category];
        __atomic_store_n(&m->action, action, __ATOMIC_RELAXED);
        __atomic_store_n(&m->threshold, cycles, __ATOMIC_RELAXED);
        __atomic_store_n(&m->limit, emb__limit(__atomic_load_n(&m->worst, __ATOMIC_RELAXED), cycles),
                         __ATOMIC_RELAXED);
    }
    return EMB_OK;
}

void emb_monitor_set_notify(emb_monitor_notify_fn fn, void *arg)
{
    emb__notify_arg = arg;
    __atomic_store_n(&emb__notify, fn, __ATOMIC_RELEASE);
}

static void emb__monitors_reset(void)
{
    for (uint32_t i = 0; i < CONFIG_EMB_CPUS * EMB_MONITOR_COUNT; i++) {
        struct emb_monitor_block *m = &emb_monitor_blocks[i];
        __atomic_store_n(&m->worst, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&m->pc, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&m->over, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&m->limit, 0u, __ATOMIC_RELAXED); /* the next interval re-derives it */
    }
}

#else

emb_status emb_monitor_get(uint8_t category, emb_monitor_t *out)
{
    (void)category;
    (void)out;
    return EMB_E_STATE;
}

emb_status emb_monitor_set_threshold(uint8_t category, uint32_t cycles, uint8_t action)
{
    (void)category;
    (void)cycles;
    (void)action;
    return EMB_E_STATE;
}

void emb_monitor_set_notify(emb_monitor_notify_fn fn, void *arg)
{
    (void)fn;
    (void)arg;
}

static void emb__monitors_reset(void)
{
}

#endif /* CONFIG_EMB_MONITOR */

#if CONFIG_EMB_STATS

struct emb_stats_cpu_block emb_stats_cpu[CONFIG_EMB_CPUS];

emb_status emb_stats_cpu_get(uint8_t cpu, emb_stats_cpu_t *out)
{
    if (out == NULL)
        return EMB_E_INVALID;
    if (cpu >= CONFIG_EMB_CPUS)
        return EMB_E_NOTFOUND;
    const struct emb_stats_cpu_block *b = &emb_stats_cpu[cpu];
    uint64_t now = emb_port_timestamp();
    uint64_t start = emb_stats_get64(b->reset_ts);
    out->uptime_cycles = now - start;
    out->isr_cycles = emb_stats_get64(b->isr_cycles);
    out->idle_cycles = emb_stats_get64(b->idle_cycles);
    if (__atomic_load_n(&b->idle_depth, __ATOMIC_RELAXED) > 0u)
        out->idle_cycles += now - emb_stats_get64(b->idle_t0);
    if (out->idle_cycles > out->uptime_cycles)
        out->idle_cycles = out->uptime_cycles;
    out->utilization_permille =
        out->uptime_cycles > 0u
            ? (uint32_t)((out->uptime_cycles - out->idle_cycles) * 1000u / out->uptime_cycles)
            : 0u;
    out->irq_count = __atomic_load_n(&b->irq_count, __ATOMIC_RELAXED);
#if CONFIG_EMB_MONITOR
    out->max_critical_cycles = __atomic_load_n(
        &emb_monitor_blocks[cpu * EMB_MONITOR_COUNT + EMB_MONITOR_IRQ_LOCK].worst, __ATOMIC_RELAXED);
#else
    out->max_critical_cycles = 0u;
#endif
    return EMB_OK;
}

void emb_stats_reset(void)
{
    uint64_t now = emb_port_timestamp();
    for (uint32_t cpu = 0; cpu < CONFIG_EMB_CPUS; cpu++) {
        struct emb_stats_cpu_block *b = &emb_stats_cpu[cpu];
        __atomic_store_n(&b->reset_ts[0], (uint32_t)now, __ATOMIC_RELAXED);
        __atomic_store_n(&b->reset_ts[1], (uint32_t)(now >> 32), __ATOMIC_RELAXED);
        for (uint32_t i = 0; i < 2u; i++) {
            __atomic_store_n(&b->isr_cycles[i], 0u, __ATOMIC_RELAXED);
            __atomic_store_n(&b->idle_cycles[i], 0u, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&b->irq_count, 0u, __ATOMIC_RELAXED);
        if (__atomic_load_n(&b->idle_depth, __ATOMIC_RELAXED) > 0u) {
            __atomic_store_n(&b->idle_t0[0], (uint32_t)now, __ATOMIC_RELAXED);
            __atomic_store_n(&b->idle_t0[1], (uint32_t)(now >> 32), __ATOMIC_RELAXED);
        }
    }
    emb__monitors_reset();
    emb_port_stats_reset();
}

#else

emb_status emb_stats_cpu_get(uint8_t cpu, emb_stats_cpu_t *out)
{
    (void)cpu;
    (void)out;
    return EMB_E_STATE;
}

void emb_stats_reset(void)
{
    emb__monitors_reset();
}

#endif /* CONFIG_EMB_STATS */
