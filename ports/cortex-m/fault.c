/* The Cortex-M fault handlers: HardFault, MemManage, BusFault and UsageFault enter at
 * emb_cm_fault_entry, which finds the frame the hardware stacked (on the main or the
 * process stack, as EXC_RETURN says), saves r4-r11, and hands both to the C half. That
 * reads the fault status registers, classifies the fault, and finishes in the port's
 * crash writer (a v1 record with the last trace packets, then a reset; or the record
 * alone, CONFIG_EMB_CM_CRASH_FLIGHT 0; or the small v2 record,
 * CONFIG_EMB_CRASH_RECORD_VERSION 2, without the register words). */
#include <emb/cortex_m.h>
#include <emb/crash.h>
#include <emb/descriptor.h>
#include <emb/trace_events.h>

#include "cortex_m_internal.h"

/* r4-r11 as the entry pushed them: ARMv7-M pushes r4-r11 in order; ARMv6-M and ARMv8-M
 * Baseline (no high registers in push) push r4-r7, then r8-r11 through r4-r7, so r8-r11
 * come first. */
#if EMB_CM_THUMB1
#define EMB__CALLEE(saved, r) ((r) < 8 ? (saved)[(r)-4 + 4] : (saved)[(r)-8])
#else
#define EMB__CALLEE(saved, r) ((saved)[(r)-4])
#endif

void emb__cm_fault(const uint32_t *frame, uint32_t exc_return, const uint32_t *saved)
    __attribute__((noreturn, used));

__attribute__((naked)) void emb_cm_fault_entry(void)
{
#if EMB_CM_THUMB1
    __asm__ __volatile__("movs r0, #4\n\t"
                         "mov r1, lr\n\t"
                         "tst r0, r1\n\t"
                         "beq 1f\n\t"
                         "mrs r0, psp\n\t"
                         "b 2f\n"
                         "1:\n\t"
                         "mrs r0, msp\n"
                         "2:\n\t"
                         "push {r4-r7}\n\t"
                         "mov r4, r8\n\t"
                         "mov r5, r9\n\t"
                         "mov r6, r10\n\t"
                         "mov r7, r11\n\t"
                         "push {r4-r7}\n\t"
                         "mov r2, sp\n\t"
                         "ldr r3, =emb__cm_fault\n\t"
                         "bx r3\n\t"
                         ".ltorg\n");
#else
    __asm__ __volatile__("tst lr, #4\n\t"
                         "ite eq\n\t"
                         "mrseq r0, msp\n\t"
                         "mrsne r0, psp\n\t"
                         "mov r1, lr\n\t"
                         "push {r4-r11}\n\t"
                         "mov r2, sp\n\t"
                         "b emb__cm_fault\n");
#endif
}

#if CONFIG_EMB_CM_CMSIS_HANDLERS
void HardFault_Handler(void) __attribute__((naked, alias("emb_cm_fault_entry")));
void MemManage_Handler(void) __attribute__((naked, alias("emb_cm_fault_entry")));
void BusFault_Handler(void) __attribute__((naked, alias("emb_cm_fault_entry")));
void UsageFault_Handler(void) __attribute__((naked, alias("emb_cm_fault_entry")));
#endif

/* The crash record's class from the status registers; `exception` is 3 (HardFault) to 6
 * (UsageFault), which the record keeps as its code. */
static uint8_t emb__classify(uint32_t exception, uint32_t cfsr)
{
    if (cfsr & 0x18u)                 /* MSTKERR, MUNSTKERR */
        return EMB_FAULT_STACK;
    if (cfsr & 0xFFu)
        return EMB_FAULT_MEMORY;
    if (cfsr & 0x1800u)               /* STKERR, UNSTKERR */
        return EMB_FAULT_STACK;
    if (cfsr & 0xFF00u)
        return EMB_FAULT_BUS;
    if (cfsr & (1u << 25))            /* DIVBYZERO */
        return EMB_FAULT_ARITH;
    if (cfsr & (1u << 24))            /* UNALIGNED */
        return EMB_FAULT_BUS;
    if (cfsr & (1u << 20))            /* STKOF (ARMv8-M) */
        return EMB_FAULT_STACK;
    if (cfsr & 0xFFFF0000u)
        return EMB_FAULT_ILLEGAL;
    return exception == 4u ? EMB_FAULT_MEMORY
           : exception == 5u ? EMB_FAULT_BUS
           : exception == 6u ? EMB_FAULT_ILLEGAL
                             : EMB_FAULT_HARD;
}

#if CONFIG_EMB_CRASH
/* Copies the stack from `sp` up into the record's status words (EMB_CRASH_CM_STACK on),
 * within the registered stack only, so that nothing here reads outside RAM. */
static uint8_t emb__cm_stack_words(uint32_t sp, uint32_t *out)
{
    uint32_t n = 0;
#if CONFIG_EMB_CM_FAULT_STACK_WORDS
    uint32_t low = (uint32_t)emb__cm_cpu.stack_low;
    uint32_t top = low + emb__cm_cpu.stack_size;
    if (emb__cm_cpu.stack_size != 0u && sp >= low && sp < top && (sp & 3u) == 0u) {
        const uint32_t *stack = (const uint32_t *)(uintptr_t)sp;
        for (; n < CONFIG_EMB_CM_FAULT_STACK_WORDS && sp + 4u * n < top; n++)
            out[n] = stack[n];
    }
#else
    (void)sp;
    (void)out;
#endif
    return (uint8_t)(EMB_CRASH_CM_COUNT + n);
}

/* The v2 record's registers: the fault address, lr and the stack pointer before the
 * exception (no room for the register words). */
static void emb__cm_fault_small(struct emb__cm_fault *f, const uint32_t *frame,
                                uint32_t exc_return, uint32_t cfsr)
{
#if EMB_CM_HAS_FSR
    if (cfsr & (1u << 7))
        f->fault_address = EMB_CM_SCB_MMFAR;
    else if (cfsr & (1u << 15))
        f->fault_address = EMB_CM_SCB_BFAR;
#else
    (void)cfsr;
#endif
    f->lr = frame[5];
    uint32_t words = (exc_return & 0x10u) ? 8u : 26u;
    f->sp = (uint32_t)(uintptr_t)(frame + words) + ((frame[7] & (1u << 9)) ? 4u : 0u);
}

/* What the crash record holds beyond the trace event: the fault status registers, the
 * stacked and saved registers, the stack pointer before the exception, the stack's top. */
static void emb__cm_fault_registers(struct emb__cm_fault *f, const uint32_t *frame,
                                    uint32_t exc_return, const uint32_t *saved, uint32_t cfsr)
{
    if (CONFIG_EMB_CRASH_RECORD_VERSION != 1) {
        (void)saved;
        emb__cm_fault_small(f, frame, exc_return, cfsr);
        return;
    }
    uint32_t control;
    __asm__ __volatile__("mrs %0, control" : "=r"(control));
#if EMB_CM_HAS_FSR
    f->status[EMB_CRASH_CM_CFSR] = cfsr;
    f->status[EMB_CRASH_CM_HFSR] = EMB_CM_SCB_HFSR;
    f->status[EMB_CRASH_CM_MMFAR] = EMB_CM_SCB_MMFAR;
    f->status[EMB_CRASH_CM_BFAR] = EMB_CM_SCB_BFAR;
    if (cfsr & (1u << 7))
        f->fault_address = f->status[EMB_CRASH_CM_MMFAR];
    else if (cfsr & (1u << 15))
        f->fault_address = f->status[EMB_CRASH_CM_BFAR];
#else
    (void)cfsr;
#endif
    f->status[EMB_CRASH_CM_XPSR] = frame[7];
    f->status[EMB_CRASH_CM_EXC_RETURN] = exc_return;
    f->status[EMB_CRASH_CM_CONTROL] = control;
    f->lr = frame[5];
    /* The stack pointer before the exception: the basic frame is 8 words, an extended
     * (floating-point) one 26; xPSR bit 9 says a word of padding aligned it. */
    uint32_t words = (exc_return & 0x10u) ? 8u : 26u;
    f->sp = (uint32_t)(uintptr_t)(frame + words) + ((frame[7] & (1u << 9)) ? 4u : 0u);
    for (unsigned r = 0; r < 4; r++)
        f->gprs[r] = frame[r];
    for (unsigned r = 4; r < 12; r++)
        f->gprs[r] = EMB__CALLEE(saved, r);
    f->status_count = emb__cm_stack_words(f->sp, f->status + EMB_CRASH_CM_STACK);
    f->gprs[12] = frame[4];
    f->gprs[13] = f->sp;
    f->gprs[14] = f->lr;
    f->gprs[15] = f->pc;
    f->gpr_count = EMB_CRASH_CORTEX_M_GPRS;
}
#endif

/* A build without the crash record gathers only what the trace's fault event says (its
 * class, the exception, the pc): the registers are for the record alone. */
void emb__cm_fault(const uint32_t *frame, uint32_t exc_return, const uint32_t *saved)
{
    struct emb__cm_fault f;
    memset(&f, 0, sizeof f);
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    uint32_t exception = ipsr & 0x1FFu;
    uint32_t cfsr = 0;
#if EMB_CM_HAS_FSR
    cfsr = EMB_CM_SCB_CFSR;
#endif
    f.fault_class = emb__classify(exception, cfsr);
    f.code = (uint8_t)exception;
    f.pc = frame[6];
#if CONFIG_EMB_CRASH
    emb__cm_fault_registers(&f, frame, exc_return, saved, cfsr);
#else
    (void)exc_return;
    (void)saved;
#endif
    emb__cm_fault_finish(&f);
}

/* Weak: without a kernel, the fault is the CPU's context 0's. */
__attribute__((weak)) uint16_t emb_cm_fault_announce(void)
{
    return 0u;
}

void emb__cm_fault_finish(struct emb__cm_fault *f)
{
    (void)emb__cm_primask_save();
    struct emb_trace_ring *ring = emb_port_trace_ring_claim();
    if (ring != NULL) {
        /* The fault itself ends the trace, marked as fault-handler code. */
        emb_trace_enter_handler(ring, EMB_EVT_KIND_FAULT);
        uint16_t thread = emb_cm_fault_announce();
        EMB_TRACE_partition_fault(0u, f->fault_class, thread, f->code, f->pc);
        emb_trace_flush(ring);
    }
#if CONFIG_EMB_CRASH
    const uint8_t *build_id = NULL;
    uint32_t build_id_len = emb_cm_build_id(&build_id);
    uint32_t cap = 0;
    /* Without the flight recorder the record's encoder alone writes the region. */
    uint8_t *area =
        CONFIG_EMB_CM_CRASH_FLIGHT ? emb_crash_flight_area(f->status_count, f->gpr_count, &cap) : NULL;
    uint16_t packets = 0;
    uint32_t flight_len = 0;
    if (area != NULL && ring != NULL) {
        const struct emb_crash_flight_identity id = {
            .build_id = build_id,
            .build_id_len = (uint8_t)build_id_len,
            .pointer_size = 4u,
            .port = EMB_PORT_NAME,
        };
        flight_len = emb_crash_flight_collect(area, cap, ring, NULL, 0u, &id, &packets);
    }
    f->status[EMB_CRASH_CM_LAYOUT] = EMB_CRASH_LAYOUT_CORTEX_M;
    const struct emb_crash_info info = {
        .build_id = build_id,
        .build_id_len = (uint8_t)build_id_len,
        .uptime_ticks = emb_port_timestamp(),
        .reset_reason = EMB_RESET_FAULT,
        .fault_class = f->fault_class,
        .fault_code = f->code,
        .fault_address = f->fault_address,
        .pc = f->pc,
        .lr = f->lr,
        .sp = f->sp,
        .stack_base = (uint32_t)emb__cm_cpu.stack_low,
        .stack_size = emb__cm_cpu.stack_size,
        .status_regs = f->status,
        .status_count = f->status_count,
        .gprs = f->gprs,
        .gpr_count = f->gpr_count,
        .flight = area,
        .flight_len = flight_len,
        .flight_packets = packets,
    };
    (void)emb_crash_write(&info);
#endif
    emb_cm_reset();
}
