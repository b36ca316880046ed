/* Cortex-M port: the cycle-counter clock and the CPU's ring. */
#include <emb/cortex_m.h>
#include <emb/crash.h>
#include <emb/descriptor.h>
#include <emb/monitor.h>
#include <emb/log.h>
#include <emb/port.h>

#define EMB_CM_DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define EMB_CM_DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define EMB_CM_DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define EMB_CM_DEMCR_TRCENA (1u << 24)
#define EMB_CM_DWT_CYCCNTENA 1u

struct emb_trace_ring *emb_cm_ring = &emb_trace_unclaimed_ring;
struct emb_log_ring *emb_cm_log_ring = &emb_log_unclaimed_ring;

static uint32_t emb_cm_hz;
static uint32_t emb_cm_high;
static uint32_t emb_cm_last;

/* CYCCNT is 32 bits; a read that finds it lower than the previous one has seen a wrap.
 * Masking interrupts makes the compare-and-extend one step for every context. A wrap is
 * seen as long as something reads the clock at least once per 2^32 cycles. */
uint64_t emb_cm_timestamp(void)
{
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t low = EMB_CM_DWT_CYCCNT;
    if (low < emb_cm_last)
        emb_cm_high++;
    emb_cm_last = low;
    uint64_t now = ((uint64_t)emb_cm_high << 32) | low;
    emb_port_irq_restore(s);
    return now;
}

uint64_t emb_port_timestamp_hz(void)
{
    return emb_cm_hz;
}

int64_t emb_port_clock_offset_ns(void)
{
    return 0;
}

struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    return emb_cm_ring == &emb_trace_unclaimed_ring ? (struct emb_trace_ring *)0 : emb_cm_ring;
}

emb_status emb_cm_init(uint32_t cpu_hz, const uint8_t uuid[16], enum emb_trace_mode mode,
                       uint32_t classes, struct emb_trace_ring *ring, uint8_t *buf,
                       uint32_t *commit, uint32_t packets)
{
    EMB_CM_DEMCR |= EMB_CM_DEMCR_TRCENA;
    EMB_CM_DWT_CYCCNT = 0u;
    EMB_CM_DWT_CTRL |= EMB_CM_DWT_CYCCNTENA;
    emb_cm_hz = cpu_hz;
    emb_trace_init(uuid, mode, classes);
    emb_status status = emb_trace_ring_init(ring, 0u, EMB_CONTEXT_CPU, buf, commit, packets);
    if (status == EMB_OK)
        emb_cm_ring = ring;
    /* One context, the CPU, for tools reading the debug descriptor. */
    static struct emb_context_info cpu;
    cpu.ring = ring;
    cpu.state = EMB_CONTEXT_LIVE;
    emb_debug_registry.ring_packets = packets;
    emb_debug_registry.contexts = &cpu;
    emb_debug_registry.context_stride = sizeof cpu;
    emb_debug_registry.context_capacity = 1u;
    emb_debug_registry.context_count = 1u;
    emb_debug_registry_identity(0, 0u, cpu_hz, 0);
    return status;
}

/* ---- Monitors, statistics, faults ---- */

static struct emb_monitor_ctx emb_cm_monitor;

struct emb_monitor_ctx *emb_port_monitor_ctx(void)
{
    return &emb_cm_monitor;
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

#define EMB_CM_SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define EMB_CM_SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define EMB_CM_SCB_MMFAR (*(volatile uint32_t *)0xE000ED34u)
#define EMB_CM_SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)
#define EMB_CM_SCB_AIRCR (*(volatile uint32_t *)0xE000ED0Cu)

/* A fault the library raises (a monitor's FAULT action): a v1 record with the fault
 * registers and the last packets, then a system reset. The exception handlers of a
 * hardware fault fill the stacked frame the same way (emb_crash_write()). */
void emb_port_fault(uint8_t fault_class, uint8_t code, uintptr_t pc)
{
    (void)emb_port_irq_save();
#if CONFIG_EMB_CRASH
    uint32_t status[EMB_CRASH_CM_COUNT] = {0};
    uint32_t xpsr, control;
    __asm__ __volatile__("mrs %0, xpsr" : "=r"(xpsr));
    __asm__ __volatile__("mrs %0, control" : "=r"(control));
    status[EMB_CRASH_CM_LAYOUT] = EMB_CRASH_LAYOUT_CORTEX_M;
    status[EMB_CRASH_CM_XPSR] = xpsr;
    status[EMB_CRASH_CM_CFSR] = EMB_CM_SCB_CFSR;
    status[EMB_CRASH_CM_HFSR] = EMB_CM_SCB_HFSR;
    status[EMB_CRASH_CM_MMFAR] = EMB_CM_SCB_MMFAR;
    status[EMB_CRASH_CM_BFAR] = EMB_CM_SCB_BFAR;
    status[EMB_CRASH_CM_CONTROL] = control;
    uint32_t cap = 0;
    uint8_t *area = emb_crash_flight_area(EMB_CRASH_CM_COUNT, 0u, &cap);
    uint16_t packets = 0;
    uint32_t flight_len = 0;
    if (area != NULL && emb_cm_ring != &emb_trace_unclaimed_ring) {
        emb_trace_flush(emb_cm_ring);
        struct emb_crash_flight_identity id = {.pointer_size = 4u, .port = EMB_PORT_NAME};
        flight_len = emb_crash_flight_collect(area, cap, emb_cm_ring, 0, 0u, &id, &packets);
    }
    struct emb_crash_info info = {
        .uptime_ticks = emb_cm_timestamp(),
        .reset_reason = EMB_RESET_FAULT,
        .fault_class = fault_class,
        .fault_code = code,
        .pc = (uint32_t)pc,
        .lr = (uint32_t)(uintptr_t)__builtin_return_address(0),
        .sp = (uint32_t)(uintptr_t)__builtin_frame_address(0),
        .status_regs = status,
        .status_count = EMB_CRASH_CM_COUNT,
        .flight = area,
        .flight_len = flight_len,
        .flight_packets = packets,
    };
    (void)emb_crash_write(&info);
#else
    (void)fault_class;
    (void)code;
    (void)pc;
#endif
    EMB_CM_SCB_AIRCR = 0x05FA0004u; /* SYSRESETREQ */
    for (;;) {
    }
}

struct emb_log_ring *emb_port_log_ring_claim(void)
{
    return emb_cm_log_ring == &emb_log_unclaimed_ring ? (struct emb_log_ring *)0 : emb_cm_log_ring;
}

emb_status emb_cm_log_init(struct emb_log_ring *ring, uint8_t *buf, uint32_t size)
{
    emb_status status = emb_log_init();
    if (status == EMB_OK)
        status = emb_log_ring_init(ring, 0u, EMB_CONTEXT_CPU, buf, size);
    if (status == EMB_OK)
        emb_cm_log_ring = ring;
    return status;
}
