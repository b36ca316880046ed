/* RISC-V port: every hart's rings and registry entry, the clock's frequency, the trap
 * dispatch, and the crash record a faulting hart writes. */
#include <emb/crash.h>
#include <emb/descriptor.h>
#include <emb/hooks.h>
#include <emb/log.h>
#include <emb/monitor.h>
#include <emb/partition.h>
#include <emb/port.h>
#include <emb/riscv.h>
#include <emb/trace_events.h>
#include <emb/wire.h>

_Static_assert(sizeof(struct emb_rv_hart) == 16, "the start-up code indexes emb_rv_harts by hartid << 4");

/* Before emb_rv_start() every hart records into the placeholders (its events counted
 * as lost). */
struct emb_rv_hart emb_rv_harts[CONFIG_EMB_RV_HARTS] = {
    [0 ... CONFIG_EMB_RV_HARTS - 1] = {&emb_trace_unclaimed_ring, &emb_log_unclaimed_ring, 0u, 0u},
};
static struct emb_context_info emb__rv_contexts[CONFIG_EMB_RV_HARTS];
static struct emb_log_ring *emb__rv_log_rings[CONFIG_EMB_RV_HARTS];
static struct emb_monitor_ctx emb__rv_monitors[CONFIG_EMB_RV_HARTS];
static uint64_t emb__rv_hz;

uint64_t emb_port_timestamp_hz(void)
{
    return emb__rv_hz;
}

/* No wall clock on the machine. */
int64_t emb_port_clock_offset_ns(void)
{
    return 0;
}

uint32_t emb_rv_hart_id(void)
{
    uint32_t id;
    __asm__ __volatile__("csrr %0, mhartid" : "=r"(id));
    return id;
}

struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    struct emb_trace_ring *r = emb_rv_self()->ring;
    return r == &emb_trace_unclaimed_ring ? (struct emb_trace_ring *)0 : r;
}

struct emb_log_ring *emb_port_log_ring_claim(void)
{
    struct emb_log_ring *r = emb_rv_self()->log_ring;
    return r == &emb_log_unclaimed_ring ? (struct emb_log_ring *)0 : r;
}

struct emb_monitor_ctx *emb_port_monitor_ctx(void)
{
    return &emb__rv_monitors[emb_rv_self()->hart_id];
}

void emb_port_stats_reset(void)
{
}

emb_status emb_stats_thread_get(emb_thread_t thread, emb_stats_thread_t *out)
{
    (void)thread;
    (void)out;
    return EMB_E_NOTFOUND; /* no threads without a kernel */
}

emb_status emb_stats_object_get(emb_handle_t handle, emb_stats_object_t *out)
{
    (void)handle;
    (void)out;
    return EMB_E_NOTFOUND;
}

/* ---- Build id ---- */

extern const uint8_t emb_build_id_note[] __attribute__((weak));

uint32_t emb_rv_build_id(const uint8_t **id)
{
    const uint8_t *note = emb_build_id_note;
    __asm__("" : "+r"(note)); /* an undefined weak symbol is address 0 */
    if (note == NULL)
        return 0u;
    uint32_t descsz = emb_get_le32(note + 4);
    if (emb_get_le32(note) != 4u || emb_get_le32(note + 8) != 3u /* NT_GNU_BUILD_ID */ ||
        emb_get_le32(note + 12) != 0x00554E47u || descsz == 0u || descsz > EMB_TSF_BUILD_ID_MAX)
        return 0u;
    *id = note + 16;
    return descsz;
}

/* ---- Start ---- */

static emb_status emb__rv_hart_rings(uint32_t h, const struct emb_rv_hart_config *c,
                                     uint32_t packets)
{
    static const char digits[] = "0123456789";
    char name[8] = {'h', 'a', 'r', 't', digits[h / 10u % 10u], digits[h % 10u], 0, 0};
    if (h < 10u) {
        name[4] = digits[h];
        name[5] = 0;
    }
    emb_status s = emb_trace_ring_init(c->ring, (uint16_t)h, EMB_CONTEXT_CPU, c->ring_buf,
                                       c->ring_commit, packets);
    if (s != EMB_OK)
        return s;
    memcpy(c->ring->name, name, sizeof name);
    if (CONFIG_EMB_LOG && c->log_ring != NULL) {
        s = emb_log_ring_init(c->log_ring, (uint16_t)h, EMB_CONTEXT_CPU, c->log_buf, c->log_size);
        if (s != EMB_OK)
            return s;
        memcpy(c->log_ring->name, name, sizeof name);
        emb__rv_log_rings[h] = c->log_ring;
    }
    struct emb_context_info *ctx = &emb__rv_contexts[h];
    ctx->ring = c->ring;
    ctx->stack_low = c->stack_low;
    ctx->stack_size = c->stack_size;
    ctx->os_id = (int32_t)h;
    ctx->state = EMB_CONTEXT_LIVE;
    return EMB_OK;
}

emb_status emb_rv_start(const struct emb_rv_config *c)
{
    if (c == NULL || c->hart == NULL || c->clock_hz == 0u || c->harts == 0u ||
        c->harts > CONFIG_EMB_RV_HARTS)
        return EMB_E_INVALID;
    emb__rv_hz = c->clock_hz;
    emb__rv_crash_setup(c->msip);
    for (uint32_t h = 0; h < CONFIG_EMB_RV_HARTS; h++)
        emb_rv_harts[h].hart_id = h;
    const uint8_t *build_id = NULL;
    uint32_t build_id_len = emb_rv_build_id(&build_id);
    uint8_t uuid[16] = {0};
    if (build_id_len > 0u)
        memcpy(uuid, build_id, build_id_len < 16u ? build_id_len : 16u);
    /* Before a hart's ring is published below, its events are counted as lost. */
    emb_trace_init(uuid, c->mode, c->classes);
    emb_status s = CONFIG_EMB_LOG ? emb_log_init() : EMB_OK;
    for (uint32_t h = 0; s == EMB_OK && h < c->harts; h++)
        s = emb__rv_hart_rings(h, &c->hart[h], c->ring_packets);
    if (s != EMB_OK)
        return s;
#if CONFIG_EMB_CRASH
    if (c->retained != NULL)
        (void)emb_crash_retained_init(c->retained, c->retained_size);
#endif
    struct emb_debug_registry *r = &emb_debug_registry;
    r->ring_packets = c->ring_packets;
    r->contexts = emb__rv_contexts;
    r->context_stride = sizeof emb__rv_contexts[0];
    r->context_capacity = CONFIG_EMB_RV_HARTS;
    r->context_count = c->harts;
    r->log_rings = (struct emb_log_ring *const *)emb__rv_log_rings;
    r->log_ring_count = CONFIG_EMB_LOG ? c->harts : 0u;
    r->probe_consumer = c->probe_consumer ? 1u : 0u;
    emb_debug_registry_identity(build_id, build_id_len, c->clock_hz, 0);
    /* Each hart's rings, published last: a hart that records from now on has its own. */
    for (uint32_t h = 0; h < c->harts; h++) {
        emb_rv_harts[h].log_ring = CONFIG_EMB_LOG && c->hart[h].log_ring != NULL
                                       ? c->hart[h].log_ring : &emb_log_unclaimed_ring;
        __atomic_store_n(&emb_rv_harts[h].ring, c->hart[h].ring, __ATOMIC_RELEASE);
    }
    return EMB_OK;
}

/* ---- Partitions: a contained fault returns to emb_rv_partition_run ---- */

#if CONFIG_EMB_PARTITIONS

struct emb__rv_partition {
    void *jump[5];     /* __builtin_setjmp's buffer: where the run returns after a fault */
    uint32_t id;       /* the partition running on this hart; 0 none */
    uint64_t fault_ts; /* when it last faulted */
};
static struct emb__rv_partition emb__rv_partitions[CONFIG_EMB_RV_HARTS];

static void emb__rv_partition_set(uint32_t hart, uint32_t id)
{
    emb__rv_partitions[hart].id = id;
    __atomic_store_n(&emb__rv_contexts[hart].partition, id, __ATOMIC_RELAXED);
}

/* Where the trap returns to after a contained fault: the hart's registers are the
 * fault's, its stack the partition's; the jump takes both back to the run's frame. */
static __attribute__((noreturn, noinline)) void emb__rv_partition_unwind(void)
{
    __builtin_longjmp(emb__rv_partitions[emb_rv_self()->hart_id].jump, 1);
}

/* Out of line from the run: __builtin_setjmp's caller keeps no value in a register
 * across it, and the frame whose sp the buffer holds outlives fn. */
static EMB_NOINLINE emb_status emb__rv_partition_call(struct emb__rv_partition *p, uint32_t hart,
                                                     uint8_t id, void (*fn)(void *), void *arg)
{
    if (__builtin_setjmp(p->jump) != 0)
        return EMB_E_CORRUPT; /* the trap contained a fault and came back here */
    emb__rv_partition_set(hart, id);
    fn(arg);
    emb__rv_partition_set(hart, 0u);
    return EMB_OK;
}

emb_status emb_rv_partition_run(uint8_t id, void (*fn)(void *), void *arg)
{
    uint32_t hart = emb_rv_self()->hart_id;
    struct emb__rv_partition *p = &emb__rv_partitions[hart];
    if (id == 0u || id >= CONFIG_EMB_PARTITIONS || fn == NULL || p->id != 0u ||
        emb_partitions[id].state == EMB_PARTITION_UNUSED)
        return EMB_E_INVALID;
    if (emb_partitions[id].state == EMB_PARTITION_RESTARTING)
        (void)emb_partition_restarted(id, emb_monitor_cycles(p->fault_ts, emb_port_timestamp()));
    return emb__rv_partition_call(p, hart, id, fn, arg);
}

bool emb__rv_partition_contain(uint32_t cause, uint32_t epc, uint8_t fault_class)
{
    struct emb_rv_hart *self = emb_rv_self();
    struct emb__rv_partition *p = &emb__rv_partitions[self->hart_id];
    uint32_t id = p->id;
    if (id == 0u || self->irq_depth != 0u)
        return false; /* not in a partition, or in an interrupt: the whole system's fault */
    emb__rv_partition_set(self->hart_id, 0u);
    p->fault_ts = emb_port_timestamp();
    struct emb_trace_ring *ring = emb_port_trace_ring_claim();
    if (ring != NULL)
        emb_trace_enter_handler(ring, EMB_EVT_KIND_FAULT);
    (void)emb_partition_fault((uint8_t)id, (uint16_t)self->hart_id, fault_class, (uint8_t)cause, epc);
    if (ring != NULL)
        emb_trace_leave_handler(ring);
    __asm__ __volatile__("csrw mepc, %0" ::"r"((uint32_t)(uintptr_t)emb__rv_partition_unwind));
    return true;
}

#else

emb_status emb_rv_partition_run(uint8_t id, void (*fn)(void *), void *arg)
{
    (void)id;
    (void)fn;
    (void)arg;
    return EMB_E_STATE;
}

bool emb__rv_partition_contain(uint32_t cause, uint32_t epc, uint8_t fault_class)
{
    (void)cause;
    (void)epc;
    (void)fault_class;
    return false;
}

#endif /* CONFIG_EMB_PARTITIONS */
