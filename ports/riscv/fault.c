/* The RISC-V trap dispatch: interrupts between the irq hooks, exceptions into the one
 * crash record of every hart (v1, status layout EM_RISCV version 2: mcause, mepc, mtval,
 * mstatus, then where each other hart was; the caller-saved registers the entry saved),
 * written by the first hart that faulted, with its id as cpu_id. */
#include <emb/crash.h>
#include <emb/descriptor.h>
#include <emb/hooks.h>
#include <emb/port.h>
#include <emb/riscv.h>
#include <emb/trace_events.h>

__attribute__((weak)) void emb_rv_interrupt(uint32_t cause)
{
    (void)cause;
}

__attribute__((weak, noreturn)) void emb_rv_fault_stop(void)
{
    (void)emb_port_irq_save();
    for (;;)
        __asm__ __volatile__("wfi");
}

/* ---- One crash area for every hart ----
 *
 * The first hart to fault claims the area (a compare-and-swap on the fault path, never
 * on the recording path) and writes the one record; it asks every other hart to stop with
 * a machine software interrupt (the CLINT's MSIP word of that hart) and waits, up to
 * CONFIG_EMB_RV_STOP_WAIT_MS, until each has said where it was. A hart that faults after
 * the claim says so and stops without touching the area, so a record is never torn by a
 * second fault. */

static uint32_t emb__rv_crash_owner; /* 0: free; else the claiming hart + 1 */
static volatile uint32_t *emb__rv_msip;

/* What each hart said when it stopped: the state word last, with release. */
static struct {
    uint32_t state, pc, ra, cause;
} emb__rv_stopped[CONFIG_EMB_RV_HARTS];

void emb__rv_crash_setup(volatile uint32_t *msip)
{
    emb__rv_msip = msip;
}

__attribute__((noreturn)) static void emb__rv_say_stopped(uint32_t state, uint32_t cause,
                                                         uint32_t epc, const uint32_t *regs)
{
    struct emb_rv_hart *self = emb_rv_self();
    uint32_t h = self->hart_id;
    emb__rv_stopped[h].pc = epc;
    emb__rv_stopped[h].ra = regs[0];
    emb__rv_stopped[h].cause = cause;
    __atomic_store_n(&emb__rv_stopped[h].state, h | state << 8 | (self->irq_depth & 0xFFu) << 16,
                     __ATOMIC_RELEASE);
    emb_rv_fault_stop();
}

/* The record's class (enum emb_fault_class) from mcause: access faults are memory faults,
 * misaligned accesses bus faults, an illegal instruction illegal. */
static uint8_t emb__rv_class(uint32_t cause)
{
    switch (cause) {
    case 1u: case 5u: case 7u:
        return EMB_FAULT_MEMORY;
    case 0u: case 4u: case 6u:
        return EMB_FAULT_BUS;
    case 2u:
        return EMB_FAULT_ILLEGAL;
    default:
        return EMB_FAULT_SOFTWARE;
    }
}

#if CONFIG_EMB_CRASH

/* The status words: layout, mcause, mepc, mtval, mstatus, then the other harts' words. */
static uint32_t emb__rv_status[EMB_CRASH_RV_COUNT + EMB_CRASH_RV_HART_WORDS * (CONFIG_EMB_RV_HARTS - 1)];

static void emb__rv_stop_others(uint32_t self, uint32_t harts)
{
    for (uint32_t h = 0; emb__rv_msip != NULL && h < harts; h++)
        if (h != self)
            emb__rv_msip[h] = 1u;
    uint64_t wait = emb_port_timestamp_hz() / 1000u * CONFIG_EMB_RV_STOP_WAIT_MS;
    uint64_t start = emb_port_timestamp();
    for (uint32_t h = 0; h < harts; h++)
        while (h != self && __atomic_load_n(&emb__rv_stopped[h].state, __ATOMIC_ACQUIRE) == 0u &&
               emb__rv_msip != NULL && emb_port_timestamp() - start < wait) {
        }
}

static uint8_t emb__rv_status_words(uint32_t self, uint32_t harts, uint32_t cause, uint32_t epc,
                                    uint32_t tval)
{
    uint32_t mstatus;
    __asm__ __volatile__("csrr %0, mstatus" : "=r"(mstatus));
    uint32_t *w = emb__rv_status;
    w[EMB_CRASH_RV_LAYOUT] = EMB_CRASH_LAYOUT_RISCV;
    w[EMB_CRASH_RV_MCAUSE] = cause;
    w[EMB_CRASH_RV_MEPC] = epc;
    w[EMB_CRASH_RV_MTVAL] = tval;
    w[EMB_CRASH_RV_MSTATUS] = mstatus;
    uint32_t n = EMB_CRASH_RV_COUNT;
    for (uint32_t h = 0; h < harts; h++) {
        if (h == self)
            continue;
        uint32_t state = __atomic_load_n(&emb__rv_stopped[h].state, __ATOMIC_ACQUIRE);
        w[n++] = state != 0u ? state : h;
        w[n++] = state != 0u ? emb__rv_stopped[h].pc : 0u;
        w[n++] = state != 0u ? emb__rv_stopped[h].ra : 0u;
        w[n++] = state != 0u ? emb__rv_stopped[h].cause : 0u;
    }
    return (uint8_t)n;
}

/* ra, t0-t2, a0-a7, t3-t6 as the entry saved them. */
#define EMB__RV_SAVED EMB_CRASH_RISCV_GPRS

/* The flight recorder: this hart's last packets, then one of every other hart's. */
static uint32_t emb__rv_flight(uint8_t *area, uint32_t cap, struct emb_trace_ring *ring,
                               uint32_t self, uint32_t harts, uint16_t *packets)
{
    struct emb_trace_ring *others[CONFIG_EMB_RV_HARTS];
    uint32_t n = 0;
    for (uint32_t h = 0; h < harts; h++)
        if (h != self && emb_rv_harts[h].ring != &emb_trace_unclaimed_ring)
            others[n++] = emb_rv_harts[h].ring;
    const uint8_t *build_id = NULL;
    uint32_t build_id_len = emb_rv_build_id(&build_id);
    const struct emb_crash_flight_identity id = {
        .build_id = build_id, .build_id_len = (uint8_t)build_id_len,
        .pointer_size = 4u, .port = EMB_PORT_NAME,
    };
    return emb_crash_flight_collect(area, cap, ring, others, n, &id, packets);
}

static void emb__rv_record(uint32_t self, struct emb_trace_ring *ring, uint32_t cause,
                           uint32_t epc, uint32_t tval, uint32_t *regs)
{
    /* The harts that record (none before emb_rv_start). */
    uint32_t harts = emb_debug_registry.context_count;
    if (harts > CONFIG_EMB_RV_HARTS)
        harts = CONFIG_EMB_RV_HARTS;
    emb__rv_stop_others(self, harts);
    uint8_t status_count = emb__rv_status_words(self, harts, cause, epc, tval);
    const uint8_t *build_id = NULL;
    uint32_t build_id_len = emb_rv_build_id(&build_id);
    uint32_t cap = 0;
    uint8_t *area = emb_crash_flight_area(status_count, EMB__RV_SAVED, &cap);
    uint16_t packets = 0;
    uint32_t flight_len = area != NULL && ring != NULL
                              ? emb__rv_flight(area, cap, ring, self, harts, &packets) : 0u;
    const struct emb_crash_info info = {
        .build_id = build_id, .build_id_len = (uint8_t)build_id_len,
        .uptime_ticks = emb_port_timestamp(), .reset_reason = EMB_RESET_FAULT,
        .fault_class = emb__rv_class(cause), .fault_code = (uint8_t)cause,
        .cpu_id = (uint8_t)self, .thread_index = (uint16_t)self, /* its context */
        .fault_address = tval, .pc = epc,
        .lr = regs[0], .sp = (uint32_t)(uintptr_t)(regs + EMB__RV_SAVED),
        .status_regs = emb__rv_status, .status_count = status_count,
        .gprs = regs, .gpr_count = EMB__RV_SAVED,
        .flight = area, .flight_len = flight_len, .flight_packets = packets,
    };
    (void)emb_crash_write(&info);
}

#endif /* CONFIG_EMB_CRASH */

/* Out of line: the claim's compare-and-swap stays out of the interrupt path. */
static EMB_NOINLINE void emb__rv_fault(uint32_t cause, uint32_t epc, uint32_t tval, uint32_t *regs)
{
    (void)emb_port_irq_save();
    uint32_t self = emb_rv_self()->hart_id;
    struct emb_trace_ring *ring = emb_port_trace_ring_claim();
    if (ring != NULL) {
        emb_trace_enter_handler(ring, EMB_EVT_KIND_FAULT);
        EMB_TRACE_partition_fault(0u, emb__rv_class(cause), 0u, (uint8_t)cause, epc);
        emb_trace_flush(ring);
    }
    uint32_t free_area = 0u;
    if (!__atomic_compare_exchange_n(&emb__rv_crash_owner, &free_area, self + 1u, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        emb__rv_say_stopped(EMB_CRASH_HART_FAULTED, cause, epc, regs);
#if CONFIG_EMB_CRASH
    emb__rv_record(self, ring, cause, epc, tval, regs);
#else
    (void)tval;
#endif
    emb_rv_fault_stop();
}

void emb_rv_trap(uint32_t cause, uint32_t epc, uint32_t tval, uint32_t *regs)
{
    if ((int32_t)cause >= 0) {
        if (!emb__rv_partition_contain(cause, epc, emb__rv_class(cause)))
            emb__rv_fault(cause, epc, tval, regs);
        return;
    }
    uint16_t irq = (uint16_t)(cause & 0x3FFu);
    /* The faulting hart's request to stop: this hart says where it was and parks. */
    if (irq == EMB_RV_IRQ_SOFTWARE && __atomic_load_n(&emb__rv_crash_owner, __ATOMIC_ACQUIRE) != 0u) {
        emb__rv_msip[emb_rv_self()->hart_id] = 0u;
        emb__rv_say_stopped(EMB_CRASH_HART_STOPPED, cause, epc, regs);
    }
    emb_rv_self()->irq_depth++;
    emb_isr_enter(irq);
    emb_rv_interrupt(irq);
    emb_isr_exit(irq, false);
    emb_rv_self()->irq_depth--;
}

void emb_port_fault(uint8_t fault_class, uint8_t code, uintptr_t pc, uint32_t value,
                    uint32_t limit)
{
    (void)fault_class;
    uint32_t regs[EMB_CRASH_RISCV_GPRS] = {limit};
    emb__rv_fault(code, (uint32_t)pc, value, regs);
    for (;;) {
    }
}
