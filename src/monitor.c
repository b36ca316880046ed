/* Monitors (the slow path of the closing point, thresholds, actions) and the CPU
 * statistics. The fast path is emb_monitor_close() in emb/monitor.h. */
#include <emb/monitor.h>

#include <emb/crash.h>
#include <emb/port.h>
#include <emb/trace_events.h>

#if CONFIG_EMB_MONITOR

/* Zero: no worst case yet (the first nonzero interval takes the slow path), no threshold. */
struct emb_monitor_block emb_monitor_blocks[EMB_MONITOR_COUNT];

static emb_monitor_notify_fn emb__notify;
static void *emb__notify_arg;

/* The closing point's bound: the worst case, or the threshold when that is lower. */
static uint32_t emb__limit(uint32_t worst, uint32_t threshold)
{
    return threshold != 0u && threshold < worst ? threshold : worst;
}

/* Intervals end on every context at once on a multi-core target (or the native port), so
 * the worst case is raised with a compare-and-swap: it only ever grows, and its opener pc
 * is stored after it by the context that raised it. */
void emb_monitor_exceeded(uint8_t category, uint32_t cycles, uintptr_t pc)
{
    struct emb_monitor_block *m = &emb_monitor_blocks[category];
    uint32_t worst = __atomic_load_n(&m->worst, __ATOMIC_RELAXED);
    while (cycles > worst) {
        if (__atomic_compare_exchange_n(&m->worst, &worst, cycles, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            __atomic_store_n(&m->pc, pc, __ATOMIC_RELAXED);
            worst = cycles;
            break;
        }
    }
    uint32_t threshold = __atomic_load_n(&m->threshold, __ATOMIC_RELAXED);
    __atomic_store_n(&m->limit, emb__limit(worst, threshold), __ATOMIC_RELAXED);
    if (threshold == 0u || cycles <= threshold)
        return;
    __atomic_fetch_add(&m->over, 1u, __ATOMIC_RELAXED);
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

emb_status emb_monitor_get(uint8_t category, emb_monitor_t *out)
{
    if (category >= EMB_MONITOR_COUNT || out == NULL)
        return EMB_E_INVALID;
    const struct emb_monitor_block *m = &emb_monitor_blocks[category];
    uint32_t threshold = __atomic_load_n(&m->threshold, __ATOMIC_RELAXED);
    out->worst_cycles = __atomic_load_n(&m->worst, __ATOMIC_RELAXED);
    out->opener_pc = __atomic_load_n(&m->pc, __ATOMIC_RELAXED);
    out->threshold = threshold;
    out->over_count = __atomic_load_n(&m->over, __ATOMIC_RELAXED);
    out->action = (uint8_t)__atomic_load_n(&m->action, __ATOMIC_RELAXED);
    return EMB_OK;
}

emb_status emb_monitor_set_threshold(uint8_t category, uint32_t cycles, uint8_t action)
{
    if (category >= EMB_MONITOR_COUNT ||
        (action & ~(EMB_MONITOR_TRACE | EMB_MONITOR_NOTIFY | EMB_MONITOR_FAULT)) != 0u)
        return EMB_E_INVALID;
    struct emb_monitor_block *m = &emb_monitor_blocks[category];
    __atomic_store_n(&m->action, action, __ATOMIC_RELAXED);
    __atomic_store_n(&m->threshold, cycles, __ATOMIC_RELAXED);
    __atomic_store_n(&m->limit, emb__limit(__atomic_load_n(&m->worst, __ATOMIC_RELAXED), cycles),
                     __ATOMIC_RELAXED);
    return EMB_OK;
}

void emb_monitor_set_notify(emb_monitor_notify_fn fn, void *arg)
{
    emb__notify_arg = arg;
    __atomic_store_n(&emb__notify, fn, __ATOMIC_RELEASE);
}

static void emb__monitors_reset(void)
{
    for (uint32_t i = 0; i < EMB_MONITOR_COUNT; i++) {
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

struct emb_stats_cpu_block emb_stats_cpu;

emb_status emb_stats_cpu_get(uint8_t cpu, emb_stats_cpu_t *out)
{
    if (out == NULL)
        return EMB_E_INVALID;
    if (cpu != 0u)
        return EMB_E_NOTFOUND;
    uint64_t now = emb_port_timestamp();
    uint64_t start = emb_stats_get64(emb_stats_cpu.reset_ts);
    out->uptime_cycles = now - start;
    out->isr_cycles = emb_stats_get64(emb_stats_cpu.isr_cycles);
    out->idle_cycles = emb_stats_get64(emb_stats_cpu.idle_cycles);
    if (__atomic_load_n(&emb_stats_cpu.idle_depth, __ATOMIC_RELAXED) > 0u)
        out->idle_cycles += now - emb_stats_get64(emb_stats_cpu.idle_t0);
    if (out->idle_cycles > out->uptime_cycles)
        out->idle_cycles = out->uptime_cycles;
    out->utilization_permille =
        out->uptime_cycles > 0u
            ? (uint32_t)((out->uptime_cycles - out->idle_cycles) * 1000u / out->uptime_cycles)
            : 0u;
    out->irq_count = __atomic_load_n(&emb_stats_cpu.irq_count, __ATOMIC_RELAXED);
#if CONFIG_EMB_MONITOR
    out->max_critical_cycles = __atomic_load_n(&emb_monitor_blocks[EMB_MONITOR_IRQ_LOCK].worst,
                                               __ATOMIC_RELAXED);
#else
    out->max_critical_cycles = 0u;
#endif
    return EMB_OK;
}

void emb_stats_reset(void)
{
    uint64_t now = emb_port_timestamp();
    __atomic_store_n(&emb_stats_cpu.reset_ts[0], (uint32_t)now, __ATOMIC_RELAXED);
    __atomic_store_n(&emb_stats_cpu.reset_ts[1], (uint32_t)(now >> 32), __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < 2u; i++) {
        __atomic_store_n(&emb_stats_cpu.isr_cycles[i], 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&emb_stats_cpu.idle_cycles[i], 0u, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&emb_stats_cpu.irq_count, 0u, __ATOMIC_RELAXED);
    if (__atomic_load_n(&emb_stats_cpu.idle_depth, __ATOMIC_RELAXED) > 0u) {
        __atomic_store_n(&emb_stats_cpu.idle_t0[0], (uint32_t)now, __ATOMIC_RELAXED);
        __atomic_store_n(&emb_stats_cpu.idle_t0[1], (uint32_t)(now >> 32), __ATOMIC_RELAXED);
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
