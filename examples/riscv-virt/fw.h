/* What the RISC-V virt example firmware and its test share: the statistics block the
 * host reads over the GDB protocol, the user-event ids, the run's shape. */
#ifndef FW_RISCV_H
#define FW_RISCV_H

#include <stdint.h>

#define FW_HARTS_MAX 4u

/* user_event ids; a = a per-hart sequence number (0, 1, 2, ...), b as said. */
enum {
    FW_EV_PUT = 1,    /* hart 0 queued work item b */
    FW_EV_TAKE = 2,   /* this hart took work item b from the queue */
    FW_EV_TICK = 3,   /* the machine timer interrupt of this hart; b = the hart */
    FW_EV_STRESS = 4, /* the stress phase, as fast as the hart goes; b = the hart */
    FW_EV_PART = 5,   /* the worker partition runs on the last hart; b = its runs so far */
};

/* The last hart runs the worker partition (isolated profile, emb/partition.h) after the
 * stress phase: every run logs through the partition's module; its first FW_PART_FAULTS
 * runs each load from an address no memory backs,
 * a fault the port contains (a mini-record, partition_fault) and the hart restarts it
 * (partition_restart); the run after them returns. */
#define FW_PARTITION 1u
#define FW_PART_FAULTS 3u

#define FW_ITEMS 400u           /* work items hart 0 queues */
#define FW_TICK_PERIOD 2000u    /* time-base ticks (10 MHz) between timer interrupts: 5 kHz */
#define FW_STRESS_TIME 20000000u /* time-base ticks of the stress phase: 2 s */

enum { FW_BOOTING = 0, FW_WORKING = 1, FW_STRESS = 2, FW_DONE = 3 };

struct fw_hart_stats {
    uint32_t thread_events; /* user events the hart's thread code emitted */
    uint32_t ticks;         /* timer interrupts taken: each emits irq_enter, TICK, irq_exit */
    uint32_t taken;         /* work items taken */
    uint32_t logs;          /* log calls */
    uint32_t state;         /* FW_* the hart is in */
    uint32_t part_faults;   /* faults injected in the worker partition on this hart */
    uint32_t part_restarts; /* its runs that came back faulted, and were run again */
    uint32_t part_logs;     /* log calls of the partition's module (job) */
};

struct fw_stats {
    uint32_t state;        /* FW_*: hart 0's */
    uint32_t harts;        /* harts that run */
    uint32_t boots;
    uint32_t crash_status; /* emb_crash_record_get at start */
    uint32_t crash_length;
    uint32_t items_put;
    uint32_t items_taken;
    uint32_t faulting;     /* FW_CMD_FAULT_ALL: harts ready to fault */
    struct fw_hart_stats hart[FW_HARTS_MAX];
};

/* The host's command word: FW_CMD_FAULT makes hart `harts - 1` load from an address no
 * memory backs; its crash record names it and where the others were stopped.
 * FW_CMD_FAULT_ALL makes every hart do it at once: one record, of the hart that claimed
 * the area first, the others saying they faulted too. */
enum { FW_CMD_NONE = 0, FW_CMD_FAULT = 0xFA17u, FW_CMD_FAULT_ALL = 0xFA1Au };

#endif /* FW_RISCV_H */
