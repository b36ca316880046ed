/* The Cortex-M port's set-up calls (docs/porting.md).
 *
 *     static _Alignas(1024) uint8_t ring_buf[8 * 1024];
 *     static uint32_t ring_commit[8];
 *     static struct emb_trace_ring ring;
 *     static struct emb_log_ring log_ring;
 *     static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(4096)];
 *     __attribute__((section(".noinit"))) static uint8_t retained[2048];
 *
 *     const struct emb_cm_config cfg = {
 *         .cpu_hz = 25000000, .mode = EMB_TRACE_MODE_SNAPSHOT, .classes = EMB_TRACE_CLASSES_ALL,
 *         .ring = &ring, .ring_buf = ring_buf, .ring_commit = ring_commit, .ring_packets = 8,
 *         .log_ring = &log_ring, .log_buf = log_buf, .log_size = 4096,
 *         .retained = retained, .retained_size = sizeof retained,
 *     };
 *     emb_cm_start(&cfg);
 *
 * The fault handlers are emb_cm_fault_entry (and, unless CONFIG_EMB_CM_CMSIS_HANDLERS is
 * 0, the CMSIS names HardFault_Handler, MemManage_Handler, BusFault_Handler,
 * UsageFault_Handler, which a vector table of weak defaults picks up). The linker script
 * fragments ports/cortex-m/emb.ld (build id note, retained region, log metadata) give the
 * library the build id and the crash region a place no reset or reload touches.
 */
#ifndef EMB_CORTEX_M_H
#define EMB_CORTEX_M_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/status.h>
#include <emb/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

struct emb_log_ring;

struct emb_cm_config {
    uint32_t cpu_hz;               /* the core clock: the trace clock's frequency */
    const uint8_t *uuid;           /* the trace's 16-byte uuid; NULL: made from the build id */
    enum emb_trace_mode mode;
    uint32_t classes;              /* the run-time class mask */
    /* The CPU's trace ring: ring_packets packets of CONFIG_EMB_TRACE_PACKET_SIZE bytes at
     * ring_buf (aligned to the packet size), a commit word per packet. */
    struct emb_trace_ring *ring;
    uint8_t *ring_buf;
    uint32_t *ring_commit;
    uint32_t ring_packets;
    /* The CPU's log ring (optional): log_size bytes (a power of two) at log_buf, which
     * holds EMB_LOG_RING_BUF_SIZE(log_size). */
    struct emb_log_ring *log_ring;
    uint8_t *log_buf;
    uint32_t log_size;
    /* The retained crash region (optional), in a section no start-up code or loader
     * touches (.noinit, ports/cortex-m/emb_retained.ld). Validated here. */
    uint8_t *retained;
    uint32_t retained_size;
    /* The main stack (optional): its lowest address and size, for tools; painted below
     * the current stack pointer when paint_stack is set, for its high-water mark. */
    uintptr_t stack_low;
    uint32_t stack_size;
    bool paint_stack;
    /* A debug probe is the consumer of the streaming rings: a host reading the target over
     * the GDB protocol (`emb capture --gdb`) frees what it took by writing the rings' read
     * positions. Without it the host only reads. Published in the debug descriptor. */
    bool probe_consumer;
    /* Trap integer division by zero (CCR.DIV_0_TRP) as a UsageFault. */
    bool trap_div0;
};

/* Starts the port: chooses the clock (DWT CYCCNT when it counts, else SysTick at cpu_hz
 * with its wrap interrupt), sets up the rings, validates the retained crash region,
 * enables the MemManage, BusFault and UsageFault exceptions, and fills the debug
 * registry (identity with the build id, the CPU's context, the log ring). */
emb_status emb_cm_start(const struct emb_cm_config *config);

/* The older set-up: emb_cm_start() with the trace ring only. */
emb_status emb_cm_init(uint32_t cpu_hz, const uint8_t uuid[16], enum emb_trace_mode mode,
                       uint32_t classes, struct emb_trace_ring *ring, uint8_t *buf,
                       uint32_t *commit, uint32_t packets);

/* Makes `ring` (over `buf`, EMB_LOG_RING_BUF_SIZE(size) bytes) the CPU's log ring, after
 * emb_log_init()'s check of the metadata region. A worker, an idle loop or a debug probe
 * drains it. */
emb_status emb_cm_log_init(struct emb_log_ring *ring, uint8_t *buf, uint32_t size);

/* The clock chosen (enum emb_cm_clock_kind) and its name, "dwt" or "systick". */
uint32_t emb_cm_clock_kind(void);
const char *emb_cm_clock_name(void);

/* The SysTick interrupt's work when SysTick is the clock: counts a wrap. The port defines
 * SysTick_Handler to call it unless CONFIG_EMB_CM_SYSTICK_HANDLER is 0 (an application
 * with its own SysTick handler calls it there). */
void emb_cm_systick_isr(void);

/* Reads the clock, keeping its 64-bit extension current: call at least once per 2^31
 * cycles when nothing else records (a periodic tick, the idle loop). */
void emb_cm_clock_poll(void);

/* The image's GNU build id, from the note the linker fragment places in flash
 * (ports/cortex-m/emb_build_id.ld, symbol emb_build_id_note). Returns its length, 0 when
 * the image has none. */
uint32_t emb_cm_build_id(const uint8_t **id);

/* What a frame link's trace stream header says of this port (emb/frame_link.h): the
 * catalogue, packet size, clock, uuid, build id and port name, and `ring_packets`; and
 * the log's hello identity. For a firmware that sends its rings itself. */
struct emb_tsf_info;
struct emb_log_identity;
void emb_cm_link_identity(struct emb_tsf_info *info, struct emb_log_identity *log_id, uint32_t ring_packets);

/* The fault handler for HardFault, MemManage, BusFault and UsageFault: writes a v1 crash
 * record (stacked frame, CFSR, HFSR, MMFAR, BFAR, the last trace packets) into the
 * retained region and resets the system. */
void emb_cm_fault_entry(void);

/* Called by the fault handler just before it records the fault (handler mode, interrupts
 * masked): a kernel records here what a flight recorder of the last packets needs to name
 * (obj_init of its threads and objects) and returns the faulting thread's index, which
 * the fault event carries. The port's weak default records nothing and returns 0. */
uint16_t emb_cm_fault_announce(void);

/* Resets the system through AIRCR.SYSRESETREQ. */
void emb_cm_reset(void) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif /* EMB_CORTEX_M_H */
