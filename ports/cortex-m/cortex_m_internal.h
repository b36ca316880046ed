/* What the Cortex-M port's files share. */
#ifndef EMB_CORTEX_M_INTERNAL_H
#define EMB_CORTEX_M_INTERNAL_H

#include <stdint.h>

#include <emb/crash_format.h>
#include <emb_port_impl.h>

/* System control block registers. */
#define EMB_CM_SCB_CPUID (*(volatile uint32_t *)0xE000ED00u)
#define EMB_CM_SCB_VTOR (*(volatile uint32_t *)0xE000ED08u)
#define EMB_CM_SCB_AIRCR (*(volatile uint32_t *)0xE000ED0Cu)
#define EMB_CM_SCB_CCR (*(volatile uint32_t *)0xE000ED14u)
#define EMB_CM_SCB_SHCSR (*(volatile uint32_t *)0xE000ED24u)
#define EMB_CM_SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define EMB_CM_SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define EMB_CM_SCB_MMFAR (*(volatile uint32_t *)0xE000ED34u)
#define EMB_CM_SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)

/* ARMv6-M and ARMv8-M Baseline: the Thumb instructions of ARMv6-M only (no IT blocks,
 * no push of high registers), and none of the configurable fault status registers. */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define EMB_CM_THUMB1 1
#define EMB_CM_HAS_FSR 0
#else
#define EMB_CM_THUMB1 0
#define EMB_CM_HAS_FSR 1
#endif

/* What a fault path hands to the writer: the crash record's fields that depend on how
 * the fault was taken. status[] and gprs[] are in the Cortex-M layout (crash_format.h). */
struct emb__cm_fault {
    uint8_t fault_class;
    uint8_t code;
    uint32_t fault_address;
    uint32_t pc, lr, sp;
    uint32_t status[EMB_CRASH_CM_COUNT + CONFIG_EMB_CM_FAULT_STACK_WORDS];
    uint8_t status_count; /* EMB_CRASH_CM_COUNT and the stack words copied */
    uint32_t gprs[EMB_CRASH_CORTEX_M_GPRS];
    uint8_t gpr_count;
};

/* The CPU's context as the registry publishes it. */
struct emb_context_info;
extern struct emb_context_info emb__cm_cpu;

/* Records the fault in the trace (partition_fault, in fault-handler flags), writes the v1
 * crash record with the last packets, and resets. */
void emb__cm_fault_finish(struct emb__cm_fault *f) __attribute__((noreturn));

#endif /* EMB_CORTEX_M_INTERNAL_H */
