/* The RISC-V trap dispatch: interrupts between the irq hooks, exceptions into the crash
 * record (v1, the Generic register layout: mcause, mepc, mtval, mstatus; the caller-saved
 * registers the entry saved), written by the hart that faulted with its id as cpu_id. */
#include <emb/crash.h>
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

/* The status words' layout: ELF e_machine EM_RISCV (243), version 1: mcause, mepc,
 * mtval, mstatus (docs/porting.md). */
#define EMB__RV_LAYOUT EMB_CRASH_LAYOUT(243u, 1u)

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

/* ra, t0-t2, a0-a7, t3-t6 as the entry saved them (16 words). */
#define EMB__RV_SAVED 16u

static void emb__rv_fault(uint32_t cause, uint32_t epc, uint32_t tval, uint32_t *regs)
{
    (void)emb_port_irq_save();
    struct emb_rv_hart *self = emb_rv_self();
    struct emb_trace_ring *ring = emb_port_trace_ring_claim();
    if (ring != NULL) {
        emb_trace_enter_handler(ring, EMB_EVT_KIND_FAULT);
        EMB_TRACE_partition_fault(0u, emb__rv_class(cause), 0u, (uint8_t)cause, epc);
        emb_trace_flush(ring);
    }
#if CONFIG_EMB_CRASH
    uint32_t mstatus;
    __asm__ __volatile__("csrr %0, mstatus" : "=r"(mstatus));
    const uint32_t status[] = {EMB__RV_LAYOUT, cause, epc, tval, mstatus};
    const uint8_t *build_id = NULL;
    uint32_t build_id_len = emb_rv_build_id(&build_id);
    uint32_t cap = 0;
    uint8_t *area = emb_crash_flight_area(sizeof status / 4u, EMB__RV_SAVED, &cap);
    uint16_t packets = 0;
    uint32_t flight_len = 0;
    if (area != NULL && ring != NULL) {
        const struct emb_crash_flight_identity id = {
            .build_id = build_id, .build_id_len = (uint8_t)build_id_len,
            .pointer_size = 4u, .port = EMB_PORT_NAME,
        };
        flight_len = emb_crash_flight_collect(area, cap, ring, NULL, 0u, &id, &packets);
    }
    const struct emb_crash_info info = {
        .build_id = build_id, .build_id_len = (uint8_t)build_id_len,
        .uptime_ticks = emb_port_timestamp(), .reset_reason = EMB_RESET_FAULT,
        .fault_class = emb__rv_class(cause), .fault_code = (uint8_t)cause,
        .cpu_id = (uint8_t)self->hart_id, .fault_address = tval, .pc = epc,
        .lr = regs[0], .sp = (uint32_t)(uintptr_t)(regs + EMB__RV_SAVED),
        .status_regs = status, .status_count = sizeof status / 4u,
        .gprs = regs, .gpr_count = EMB__RV_SAVED,
        .flight = area, .flight_len = flight_len, .flight_packets = packets,
    };
    (void)emb_crash_write(&info);
#else
    (void)self;
    (void)tval;
    (void)regs;
#endif
    emb_rv_fault_stop();
}

void emb_rv_trap(uint32_t cause, uint32_t epc, uint32_t tval, uint32_t *regs)
{
    if ((int32_t)cause >= 0) {
        emb__rv_fault(cause, epc, tval, regs);
        return;
    }
    uint16_t irq = (uint16_t)(cause & 0x3FFu);
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
    uint32_t regs[EMB__RV_SAVED] = {limit};
    emb__rv_fault(code, (uint32_t)pc, value, regs);
    for (;;) {
    }
}
