/* What a crash record's registers mean, per status layout (docs/formats/crash.md): the
 * layout named by status_regs[0], register names, the 64-bit runtime values of the
 * native layouts, and the status registers decoded into words a person reads. */
#ifndef EMB_HOST_CRASH_ARCH_H
#define EMB_HOST_CRASH_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_decode.h"

enum emb_crash_arch {
    EMB_CRASH_ARCH_NONE,    /* no status registers, or a layout this tool does not know */
    EMB_CRASH_ARCH_X86_64,
    EMB_CRASH_ARCH_AARCH64,
    EMB_CRASH_ARCH_CORTEX_M,
    EMB_CRASH_ARCH_RISCV,
};

/* The record seen through its layout. Native layouts carry 64-bit runtime values; for
 * the others the runtime values are the record's 32-bit fields and the bias is 0. */
/* ra_source beyond the record's values: the host unwound the caller with the image's call
 * frame information over the stack words the record kept. */
#define EMB_CRASH_RA_CFI 3u

struct emb_crash_view {
    enum emb_crash_arch arch;
    uint32_t layout;        /* status_regs[0] */
    unsigned elf_machine;   /* 0 when unknown */
    const char *name;       /* "x86-64", "aarch64", "cortex-m", "riscv", "unknown" */
    bool native;
    uint64_t bias;          /* runtime address - ELF address */
    uint64_t pc, ra, sp, fault_address, stack_low; /* runtime values */
    uint32_t stack_size;
    unsigned ra_source;     /* enum emb_crash_ra_source */
    uint32_t ra_offset;
    uint64_t lr;            /* the link register at the fault, where the layout has one */
    unsigned stack_words;   /* Cortex-M: stack words from sp kept in the status words */
    int signo, si_code;     /* native only; 0 otherwise */
    unsigned harts;         /* RISC-V version 2: the other harts the status words tell of */
};

void emb_crash_view(const struct emb_crash_record *r, struct emb_crash_view *v);

/* General registers as (name, value) pairs; returns how many (at most max). */
struct emb_crash_reg {
    const char *name;
    uint64_t value;
};
size_t emb_crash_registers(const struct emb_crash_record *r, const struct emb_crash_view *v,
                           struct emb_crash_reg *out, size_t max);

/* One decoded status register. */
struct emb_crash_status_item {
    const char *name;       /* "rflags", "CFSR", ... */
    uint64_t value;
    char text[256];         /* the set bits or fields in words: "ZF IF", "page fault" */
};
size_t emb_crash_status_decode(const struct emb_crash_record *r, const struct emb_crash_view *v,
                               struct emb_crash_status_item *out, size_t max);

/* Another hart of a RISC-V record (layout version 2): where it was when the record was
 * written. */
struct emb_crash_hart {
    unsigned hart;
    unsigned state;         /* enum emb_crash_hart_state */
    unsigned irq_depth;
    uint32_t pc, ra, cause; /* 0 when it did not answer */
};
size_t emb_crash_harts(const struct emb_crash_record *r, const struct emb_crash_view *v,
                       struct emb_crash_hart *out, size_t max);
/* "stopped", "faulted", "no answer"; "unknown" for a state this tool does not know. */
const char *emb_crash_hart_state_name(unsigned state);
/* mcause in words: "load access fault", "machine timer interrupt", ... */
const char *emb_crash_rv_cause_text(uint32_t mcause);

/* "SIGSEGV" and "address not mapped (SEGV_MAPERR)"; "" when unknown. */
const char *emb_crash_signal_name(int signo);
const char *emb_crash_si_code_text(int signo, int code);

struct emb_elf;

/* The call chain of a Cortex-M fault, unwound with the image's call frame information over
 * the registers and the stack words the record kept (EMB_CRASH_CM_STACK on): return
 * addresses, the faulting function's caller first; at most max. 0 for other layouts, or
 * when the first step already needs memory the record did not keep. */
size_t emb_crash_unwind(const struct emb_crash_record *r, const struct emb_crash_view *v,
                        struct emb_elf *elf, uint64_t *calls, size_t max);

#endif /* EMB_HOST_CRASH_ARCH_H */
