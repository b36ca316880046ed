/* The RISC-V port (machine mode, one context per hart): start-up and what the
 * application calls. The porting guide is docs/porting.md; the profile of a multicore
 * image is `isolated` (docs/profiles.md). */
#ifndef EMB_RISCV_H
#define EMB_RISCV_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/log.h>
#include <emb/status.h>
#include <emb/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One hart's rings and stack. */
struct emb_rv_hart_config {
    struct emb_trace_ring *ring;
    uint8_t *ring_buf;            /* ring_packets * CONFIG_EMB_TRACE_PACKET_SIZE, aligned to it */
    uint32_t *ring_commit;        /* ring_packets words */
    struct emb_log_ring *log_ring; /* NULL: no deferred log on this hart */
    uint8_t *log_buf;
    uint32_t log_size;
    uintptr_t stack_low;
    uint32_t stack_size;
};

struct emb_rv_config {
    uint64_t clock_hz;            /* of the time CSR (QEMU virt: 10 MHz) */
    enum emb_trace_mode mode;
    uint32_t classes;             /* trace classes enabled at start */
    uint32_t ring_packets;        /* per hart, a power of two */
    uint32_t harts;               /* harts that record, 1 to CONFIG_EMB_RV_HARTS */
    const struct emb_rv_hart_config *hart; /* `harts` entries, by hart id */
    uint8_t *retained;            /* the crash record region; NULL: none */
    uint32_t retained_size;
    bool probe_consumer;          /* a debug probe frees the streaming rings */
    /* The machine software interrupt pending words, one per hart (the CLINT's or ACLINT
     * MSWI's MSIP registers): a faulting hart stops the others through them. NULL: the
     * others are not stopped, and the record says they did not answer. */
    volatile uint32_t *msip;
};

/* mcause's interrupt number of the machine software interrupt. */
#define EMB_RV_IRQ_SOFTWARE 3u

/* Sets up the library and every hart's rings and registry entry. Call on one hart before
 * the others record (their rings are the unclaimed placeholder until then, and their
 * events are counted as lost). */
emb_status emb_rv_start(const struct emb_rv_config *config);

/* The id of the hart running the caller (mhartid). */
uint32_t emb_rv_hart_id(void);

/* The machine trap entry the start-up code installs in mtvec: saves the caller-saved
 * registers and calls emb_rv_trap(). */
void emb_rv_trap_entry(void);

/* Called by the trap entry for every trap: interrupts go to emb_rv_interrupt() (the
 * application's, weak default: ignores them) between the irq_enter and irq_exit hooks;
 * an exception stops the hart after the crash record: the first hart to fault writes the
 * one record (cpu_id: that hart) with where every other hart was, the others stopping on
 * its machine software interrupt (a hart answers while mie.MSIE and mstatus.MIE are set);
 * a later fault on another hart only says so to it. `regs` holds ra, t0-t2, a0-a7, t3-t6
 * as the entry saved them. */
void emb_rv_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval, uint32_t *regs);
void emb_rv_interrupt(uint32_t cause);

/* Runs fn(arg) as partition `id` (1 to CONFIG_EMB_PARTITIONS - 1, defined with
 * emb_partition_define(); emb/partition.h) on this hart: the hart's context says so while
 * it runs. An exception in it (not in an interrupt) is contained: the trap records it
 * (emb_partition_fault(): the partition's counts, a mini-record, a `partition_fault`
 * event), abandons the call and returns here with EMB_E_CORRUPT; the hart goes on. The
 * next run of a partition that faulted records `partition_restart` with the cycles since
 * the fault. EMB_OK when fn returned, EMB_E_INVALID for a bad id or a nested run,
 * EMB_E_STATE when partitions are compiled out. */
emb_status emb_rv_partition_run(uint8_t id, void (*fn)(void *), void *arg);

/* The port's own: a synchronous exception inside a partition, contained (true: the trap
 * returns to the partition's caller), or not (false: the crash record follows). */
bool emb__rv_partition_contain(uint32_t cause, uint32_t epc, uint8_t fault_class);

/* What a hart that faulted does after its record is written; weak default: parks the
 * hart with its interrupts off (the others go on). */
void emb_rv_fault_stop(void) __attribute__((noreturn));

/* The port's own: the stop request's registers (emb_rv_start gives them). */
void emb__rv_crash_setup(volatile uint32_t *msip);

/* The build id (GNU note at emb_build_id_note); 0 when the image has none. */
uint32_t emb_rv_build_id(const uint8_t **id);

#ifdef __cplusplus
}
#endif

#endif /* EMB_RISCV_H */
