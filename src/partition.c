/* Partitions: the table the descriptor describes, contained faults and restarts
 * (emb/partition.h). */
#include <emb/partition.h>

#include <emb/crash.h>
#include <emb/port.h>
#include <emb/trace_events.h>

#if CONFIG_EMB_PARTITIONS

struct emb_partition_info emb_partitions[CONFIG_EMB_PARTITIONS];

emb_status emb_partition_define(uint8_t id, const char *name)
{
    if (id >= CONFIG_EMB_PARTITIONS || name == NULL)
        return EMB_E_INVALID;
    struct emb_partition_info *p = &emb_partitions[id];
    uint32_t i = 0;
    for (; i + 1u < sizeof p->name && name[i] != '\0'; i++)
        p->name[i] = name[i];
    for (; i < sizeof p->name; i++)
        p->name[i] = '\0';
    p->id = id;
    __atomic_store_n(&p->state, (uint8_t)EMB_PARTITION_RUNNING, __ATOMIC_RELEASE);
    return EMB_OK;
}

/* A partition faults and restarts on the context it runs on; the counts are its own, and
 * a tool reads them while it runs (relaxed stores, no read-modify-write across CPUs). */
emb_status emb_partition_fault(uint8_t id, uint16_t thread, uint8_t fault_class, uint8_t code,
                               uintptr_t pc)
{
    if (id >= CONFIG_EMB_PARTITIONS || emb_partitions[id].state == EMB_PARTITION_UNUSED)
        return EMB_E_INVALID;
    struct emb_partition_info *p = &emb_partitions[id];
    p->last_fault_class = fault_class;
    p->last_fault_code = code;
    p->last_fault_pc = (uint32_t)pc;
    __atomic_store_n(&p->faults, p->faults + 1u, __ATOMIC_RELAXED);
    __atomic_store_n(&p->state, (uint8_t)EMB_PARTITION_RESTARTING, __ATOMIC_RELEASE);
    EMB_TRACE_partition_fault(id, fault_class, thread, code, (uint64_t)pc);
    return emb_crash_mini_write(id, thread, (uint16_t)p->restarts, fault_class, code, (uint32_t)pc);
}

emb_status emb_partition_restarted(uint8_t id, uint32_t duration)
{
    if (id >= CONFIG_EMB_PARTITIONS || emb_partitions[id].state == EMB_PARTITION_UNUSED)
        return EMB_E_INVALID;
    struct emb_partition_info *p = &emb_partitions[id];
    uint32_t restarts = p->restarts + 1u;
    __atomic_store_n(&p->restarts, restarts, __ATOMIC_RELAXED);
    __atomic_store_n(&p->state, (uint8_t)EMB_PARTITION_RUNNING, __ATOMIC_RELEASE);
    EMB_TRACE_partition_restart(id, (uint16_t)restarts, duration);
    return EMB_OK;
}

#else

emb_status emb_partition_define(uint8_t id, const char *name)
{
    (void)id;
    (void)name;
    return EMB_E_STATE;
}

emb_status emb_partition_fault(uint8_t id, uint16_t thread, uint8_t fault_class, uint8_t code,
                               uintptr_t pc)
{
    (void)id;
    (void)thread;
    (void)fault_class;
    (void)code;
    (void)pc;
    return EMB_E_STATE;
}

emb_status emb_partition_restarted(uint8_t id, uint32_t duration)
{
    (void)id;
    (void)duration;
    return EMB_E_STATE;
}

#endif /* CONFIG_EMB_PARTITIONS */
