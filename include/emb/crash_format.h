/* The crash record wire formats: record v1 (SPEC-015 §4), the small v2, and the 32-byte
 * partition mini-record "EMBP". Shared by the target's encoders (src/crash.c) and the
 * host's decoder (tools/lib/decode/crash_decode.c); depends on no port. docs/formats/crash.md is
 * the prose version of this header. All integers are little-endian.
 */
#ifndef EMB_CRASH_FORMAT_H
#define EMB_CRASH_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EMB_CRASH_MAGIC 0x43424D45u        /* "EMBC" read as a little-endian u32 */
#define EMB_CRASH_CRC_SIZE 4u              /* the u32 CRC-32 that ends every record */

/* ---- Common prefix of every version ---- */
#define EMB_CRASH_OFF_MAGIC 0u             /* u32 */
#define EMB_CRASH_OFF_VERSION 4u           /* u16 */
#define EMB_CRASH_OFF_LENGTH 6u            /* u16 bytes of the record, CRC included */
#define EMB_CRASH_PREFIX_SIZE 8u

/* ---- Version 1 ---- */
#define EMB_CRASH_V1 1u
#define EMB_CRASH_V1_OFF_BUILD_ID 8u       /* u8[20] GNU build id of the image */
#define EMB_CRASH_V1_OFF_FW_VERSION 28u    /* u8[8] firmware version text, NUL-padded */
#define EMB_CRASH_V1_OFF_UPTIME 36u        /* u64 trace clock ticks at the fault */
#define EMB_CRASH_V1_OFF_RESET_REASON 44u  /* u32 enum emb_reset_reason */
#define EMB_CRASH_V1_OFF_FAULT_CLASS 48u   /* u8 enum emb_fault_class */
#define EMB_CRASH_V1_OFF_FAULT_CODE 49u    /* u8 class-specific */
#define EMB_CRASH_V1_OFF_CPU 50u           /* u8 */
#define EMB_CRASH_V1_OFF_PARTITION 51u     /* u8 */
#define EMB_CRASH_V1_OFF_THREAD 52u        /* u16 thread (context) index */
#define EMB_CRASH_V1_OFF_GENERATION 54u    /* u16 */
#define EMB_CRASH_V1_OFF_FAULT_ADDR 56u    /* u32 */
#define EMB_CRASH_V1_OFF_PC 60u            /* u32 as an ELF address (see the doc) */
#define EMB_CRASH_V1_OFF_LR 64u            /* u32 link register or return address */
#define EMB_CRASH_V1_OFF_SP 68u            /* u32 */
#define EMB_CRASH_V1_OFF_STACK_BASE 72u    /* u32 lowest address of the stack */
#define EMB_CRASH_V1_OFF_STACK_SIZE 76u    /* u32 bytes */
#define EMB_CRASH_V1_OFF_STATUS_COUNT 80u  /* u8 */
#define EMB_CRASH_V1_OFF_GPR_COUNT 81u     /* u8 */
#define EMB_CRASH_V1_OFF_FLIGHT_COUNT 82u  /* u16 packets in the flight recorder */
#define EMB_CRASH_V1_FIXED_SIZE 84u        /* then status_regs[], gprs[], flight, crc */
#define EMB_CRASH_V1_BUILD_ID_SIZE 20u
#define EMB_CRASH_FW_VERSION_SIZE 8u

/* Bytes before the flight recorder of a v1 record with these register counts. */
#define EMB_CRASH_V1_FLIGHT_OFFSET(status_count, gpr_count)                                \
    (EMB_CRASH_V1_FIXED_SIZE + 4u * ((uint32_t)(status_count) + (uint32_t)(gpr_count)))

/* ---- Version 2: the small record (16-bit fields, no registers) ---- */
#define EMB_CRASH_V2 2u
#define EMB_CRASH_V2_OFF_BUILD_ID 8u       /* u8[8] first bytes of the build id */
#define EMB_CRASH_V2_OFF_UPTIME 16u        /* u32 low half of the clock at the fault */
#define EMB_CRASH_V2_OFF_RESET_REASON 20u  /* u8 */
#define EMB_CRASH_V2_OFF_FAULT_CLASS 21u   /* u8 */
#define EMB_CRASH_V2_OFF_FAULT_CODE 22u    /* u8 */
#define EMB_CRASH_V2_OFF_ADDR_SHIFT 23u    /* u8 bits 0-4: addresses below are (address >> shift);
                                            * bits 5-7: EMB_CRASH_V2_LOST_* */
#define EMB_CRASH_V2_OFF_THREAD 24u        /* u16 */
#define EMB_CRASH_V2_OFF_FAULT_ADDR 26u    /* u16 */
#define EMB_CRASH_V2_OFF_PC 28u            /* u16 */
#define EMB_CRASH_V2_OFF_LR 30u            /* u16 */
#define EMB_CRASH_V2_OFF_SP 32u            /* u16 */
#define EMB_CRASH_V2_OFF_STACK_BASE 34u    /* u16 */
#define EMB_CRASH_V2_OFF_STACK_SIZE 36u    /* u16 */
#define EMB_CRASH_V2_OFF_FLIGHT_COUNT 38u  /* u16 packets in the flight recorder */
#define EMB_CRASH_V2_FIXED_SIZE 40u        /* then flight, crc */
#define EMB_CRASH_V2_BUILD_ID_SIZE 8u
/* The addr_shift byte: the shift in its low 5 bits (at most 16), and which addresses the
 * 16-bit fields could not hold exactly (bits above 16 after the shift, or low bits the
 * shift dropped): the decoder then shows them as partial, never as the address. */
#define EMB_CRASH_V2_SHIFT_MASK 0x1Fu
#define EMB_CRASH_V2_LOST_CODE 0x20u       /* pc or lr_or_ra */
#define EMB_CRASH_V2_LOST_DATA 0x40u       /* fault_address, sp or stack_base */
#define EMB_CRASH_V2_LOST_RESERVED 0x80u   /* 0; a record with it set is refused */

/* Largest record: the length field is 16 bits. */
#define EMB_CRASH_MAX_SIZE 0xFFFFu

/* ---- Partition mini-record "EMBP" (32 bytes, CRC-32 of its first 28 bytes last) ---- */
#define EMB_MINI_MAGIC 0x50424D45u         /* "EMBP" */
#define EMB_MINI_VERSION 1u
#define EMB_MINI_OFF_MAGIC 0u              /* u32 */
#define EMB_MINI_OFF_VERSION 4u            /* u8 */
#define EMB_MINI_OFF_PARTITION 5u          /* u8 */
#define EMB_MINI_OFF_THREAD 6u             /* u16 */
#define EMB_MINI_OFF_FAULT_CLASS 8u        /* u8 */
#define EMB_MINI_OFF_FAULT_CODE 9u         /* u8 */
#define EMB_MINI_OFF_GENERATION 10u        /* u16 */
#define EMB_MINI_OFF_SEQUENCE 12u          /* u32 mini-records written before this one */
#define EMB_MINI_OFF_PC 16u                /* u32 as an ELF address */
#define EMB_MINI_OFF_UPTIME 20u            /* u64 trace clock ticks */
#define EMB_MINI_OFF_CRC 28u               /* u32 */
#define EMB_MINI_SIZE 32u

/* What went wrong: the record's fault_class. */
enum emb_fault_class {
    EMB_FAULT_NONE = 0,
    EMB_FAULT_MEMORY = 1,    /* access to memory that is not there or not allowed */
    EMB_FAULT_BUS = 2,       /* bus error, misaligned access */
    EMB_FAULT_ILLEGAL = 3,   /* undefined or privileged instruction, bad state */
    EMB_FAULT_ARITH = 4,     /* division by zero, floating-point trap */
    EMB_FAULT_ABORT = 5,     /* the software gave up: abort(), a failed assertion */
    EMB_FAULT_STACK = 6,     /* stack overflow detected */
    EMB_FAULT_WATCHDOG = 7,  /* a watchdog expired */
    EMB_FAULT_MONITOR = 8,   /* a monitor threshold with the FAULT action: code = category,
                              * fault_address = the interval, lr_or_ra = the threshold
                              * (trace clock cycles; v2: saturated at 65535, not shifted):
                              * a monitor fault has no faulting address, and its link
                              * register would be the library's own code */
    EMB_FAULT_HARD = 9,      /* an escalated fault (HardFault) */
    EMB_FAULT_SOFTWARE = 10, /* requested by the application */
    EMB_FAULT_CLASS_COUNT
};

/* Why the previous reset happened, as far as the writer knows. */
enum emb_reset_reason {
    EMB_RESET_UNKNOWN = 0,
    EMB_RESET_POWER_ON = 1,
    EMB_RESET_PIN = 2,
    EMB_RESET_WATCHDOG = 3,
    EMB_RESET_SOFTWARE = 4,
    EMB_RESET_FAULT = 5,     /* the reset that follows the fault this record describes */
    EMB_RESET_BROWN_OUT = 6,
    EMB_RESET_REASON_COUNT
};

/* Status register layouts: status_regs[0] names the layout of the rest as
 * (layout version << 16) | ELF e_machine. docs/formats/crash.md lists every word. */
#define EMB_CRASH_EM_ARM 40u
#define EMB_CRASH_EM_X86_64 62u
#define EMB_CRASH_EM_AARCH64 183u
#define EMB_CRASH_EM_RISCV 243u
#define EMB_CRASH_LAYOUT(machine, version) (((uint32_t)(version) << 16) | (uint32_t)(machine))
#define EMB_CRASH_LAYOUT_X86_64 EMB_CRASH_LAYOUT(EMB_CRASH_EM_X86_64, 1u)
#define EMB_CRASH_LAYOUT_AARCH64 EMB_CRASH_LAYOUT(EMB_CRASH_EM_AARCH64, 1u)
#define EMB_CRASH_LAYOUT_CORTEX_M EMB_CRASH_LAYOUT(EMB_CRASH_EM_ARM, 1u)

/* Native (x86-64 and AArch64) layout, version 1: 64-bit values as low word, high word. */
enum {
    EMB_CRASH_NAT_LAYOUT = 0,      /* EMB_CRASH_LAYOUT_X86_64 or _AARCH64 */
    EMB_CRASH_NAT_SIGNO = 1,       /* the signal; 0: none, the library raised the fault
                                    * itself (emb_port_fault), and words 2, 13-15 are 0 */
    EMB_CRASH_NAT_SI_CODE = 2,     /* its si_code */
    EMB_CRASH_NAT_BIAS = 3,        /* 3-4: load bias of the executable (runtime - ELF address) */
    EMB_CRASH_NAT_PC = 5,          /* 5-6: runtime pc */
    EMB_CRASH_NAT_RA = 7,          /* 7-8: runtime return address (0: not found) */
    EMB_CRASH_NAT_SP = 9,          /* 9-10: runtime sp */
    EMB_CRASH_NAT_ADDR = 11,       /* 11-12: si_addr */
    EMB_CRASH_NAT_FLAGS = 13,      /* rflags (x86-64) or pstate (AArch64), low word */
    EMB_CRASH_NAT_ERR = 14,        /* x86-64: page-fault error code; AArch64: ESR */
    EMB_CRASH_NAT_TRAPNO = 15,     /* x86-64: trap number; AArch64: 0 */
    EMB_CRASH_NAT_STACK_LOW = 16,  /* 16-17: lowest address of the thread's stack (0 unknown) */
    EMB_CRASH_NAT_RA_SOURCE = 18,  /* enum emb_crash_ra_source */
    EMB_CRASH_NAT_RA_OFFSET = 19,  /* stack scan: bytes above sp where the address was found */
    EMB_CRASH_NAT_COUNT = 20
};

enum emb_crash_ra_source {
    EMB_CRASH_RA_NONE = 0,         /* not found */
    EMB_CRASH_RA_REGISTER = 1,     /* the link register */
    EMB_CRASH_RA_STACK_SCAN = 2,   /* first word above sp that is a return address into the image */
};

/* General registers of the native layouts, in DWARF register order, 64-bit each as low
 * word, high word: x86-64 rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip (17); AArch64
 * x0-x30 sp pc (33). */
#define EMB_CRASH_X86_64_GPRS 17u
#define EMB_CRASH_AARCH64_GPRS 33u

/* Cortex-M layout, version 1 (written by the Cortex-M port's fault handlers). */
enum {
    EMB_CRASH_CM_LAYOUT = 0,       /* EMB_CRASH_LAYOUT_CORTEX_M */
    EMB_CRASH_CM_XPSR = 1,
    EMB_CRASH_CM_CFSR = 2,
    EMB_CRASH_CM_HFSR = 3,
    EMB_CRASH_CM_MMFAR = 4,
    EMB_CRASH_CM_BFAR = 5,
    EMB_CRASH_CM_EXC_RETURN = 6,
    EMB_CRASH_CM_CONTROL = 7,
    EMB_CRASH_CM_COUNT = 8,
    /* Words 8 to S-1, when present: the stack from sp upward, as the handler found it, so
     * a host can unwind the faulting function's frame with the image's call frame
     * information (the link register at a fault is often not the caller: a function that
     * saved it may reuse it). */
    EMB_CRASH_CM_STACK = 8
};
/* Cortex-M general registers: r0-r12, sp, lr, pc (16). */
#define EMB_CRASH_CORTEX_M_GPRS 16u

/* RISC-V layout (the RISC-V port). Version 1 is words 0-4; version 2 adds
 * EMB_CRASH_RV_HART_WORDS words for every other hart that records, in hart order: what it
 * was doing when the faulting hart wrote the record. */
#define EMB_CRASH_LAYOUT_RISCV EMB_CRASH_LAYOUT(EMB_CRASH_EM_RISCV, 2u)
enum {
    EMB_CRASH_RV_LAYOUT = 0,
    EMB_CRASH_RV_MCAUSE = 1,
    EMB_CRASH_RV_MEPC = 2,
    EMB_CRASH_RV_MTVAL = 3,
    EMB_CRASH_RV_MSTATUS = 4,
    EMB_CRASH_RV_COUNT = 5,       /* version 1 ends here */
    /* Per other hart: [hart id | state << 8 | interrupt depth << 16], then pc (mepc), ra
     * and mcause as the trap that stopped it (or its own fault) found them. */
    EMB_CRASH_RV_HART_WORDS = 4
};
enum emb_crash_hart_state {
    EMB_CRASH_HART_NO_ANSWER = 0, /* did not take the stop request in time: pc unknown */
    EMB_CRASH_HART_STOPPED = 1,   /* stopped by the faulting hart's request */
    EMB_CRASH_HART_FAULTED = 2,   /* faulted too, after the record's hart claimed the area */
};
/* RISC-V general registers: ra, t0-t2, a0-a7, t3-t6 (16), as the trap entry saved them. */
#define EMB_CRASH_RISCV_GPRS 16u

#ifdef __cplusplus
}
#endif

#endif /* EMB_CRASH_FORMAT_H */
