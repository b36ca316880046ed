/* The MPS2 example firmware's interface to the host: what it counts, and the command
 * word a host writes over the GDB protocol. Tests read `fw_stats` by symbol and compare
 * it with what they captured; docs/porting.md describes the firmware. */
#ifndef FW_H
#define FW_H

#include <stdint.h>

/* Trace user_event ids (field `id`); field `a` carries a per-id sequence number from 0. */
#define FW_EV_FRAME 1u  /* the main loop, once per frame; b = frame */
#define FW_EV_TICK 2u   /* the timer interrupt, each tick */
#define FW_EV_BURST 3u  /* the burst at frame FW_BURST_AT: more than the ring holds */
#define FW_EV_SENSOR 4u /* the sensor driver, before it faults */
#define FW_EV_STALLED 5u /* before FW_CMD_STALL_FAULT's fault; a = the last tick's number */

/* The UART variant (FW_UART_LINK, below) runs fewer frames at a lower tick rate: what it
 * records per second must fit through the line (QEMU's UART moves about 300 KB/s; the
 * default run records about 400 KB/s), else the run only drops more. */
#ifndef FW_UART_LINK
#define FW_UART_LINK 0
#endif
#if FW_UART_LINK
#define FW_FRAMES 1000u     /* frames in a run */
#define FW_TICK_HZ 2000u    /* the timer interrupt's rate */
#else
/* The rate variants (qemu-mps2-m3-steady-NNk.elf, bench/live.sh) set both: a faster tick,
 * as many more frames, the same one-second run. */
#ifndef FW_FRAMES
#define FW_FRAMES 2500u
#endif
#ifndef FW_TICK_HZ
#define FW_TICK_HZ 10000u
#endif
#endif
/* The steady variant (FW_STEADY=1, qemu-mps2-m3-steady.elf) runs without the burst: only
 * the default rate, which a host that reads without halting takes whole (docs/live.md). */
#ifndef FW_STEADY
#define FW_STEADY 0
#endif
#define FW_BURST_AT 500u    /* the frame of the burst */
#define FW_BURST_EVENTS 3000u
#define FW_BURST_LOGS 600u
#define FW_TICKS_PER_FRAME 4u
#define FW_LOG_TICK_EVERY 8u /* the interrupt logs every 8th tick */
#define FW_STALL_TICKS 4000u /* FW_CMD_STALL_FAULT: about six rings of tick events */

enum fw_state {
    FW_STARTING = 0,
    FW_RUNNING = 1,
    FW_DONE = 2, /* the run is over: tracing is off (class mask 0), nothing more is recorded */
};

/* Commands (fw_command): the firmware acts on one and clears it. */
enum fw_command {
    FW_CMD_NONE = 0,
    FW_CMD_FAULT_BUS = 1,   /* the sensor driver reads a register of an absent device */
    FW_CMD_FAULT_DIV0 = 2,  /* the sensor driver divides by a zero sample count */
    FW_CMD_RUN_AGAIN = 3,   /* another run of FW_FRAMES frames (counts go on) */
    FW_CMD_STALL_FAULT = 4, /* with no consumer reading, FW_STALL_TICKS timer ticks (many
                             * rings' worth), then the bus fault */
};

/* What the firmware emitted, for the host to compare with what it captured. */
struct fw_stats {
    uint32_t state;          /* enum fw_state */
    uint32_t boots;          /* starts since power-on (kept in the retained region) */
    uint32_t frames;         /* frames run: frame_start and frame_end, user_event FRAME */
    uint32_t ticks;          /* timer interrupts: irq_enter, user_event TICK, irq_exit */
    uint32_t burst_events;   /* user_event BURST */
    uint32_t sensor_events;  /* user_event SENSOR */
    uint32_t logs_frame;     /* EMB_LOG_INF "frame %u ..." (seq = frame) */
    uint32_t logs_tick;      /* EMB_LOG_DBG "tick %u" (seq counts these) */
    uint32_t logs_burst;     /* EMB_LOG_INF "burst %u of %u" */
    uint32_t logs_sensor;    /* the driver's logs */
    uint32_t crash_status;   /* emb_crash_record_get() at start (0 a record, 5 none, 7 torn) */
    uint32_t crash_length;   /* its length */
    uint32_t lock_worst;     /* the longest interrupt lock, cycles (the monitor's) */
    /* The UART variant (FW_UART_LINK): what went out on UART1 as frames. */
    uint32_t link_state;     /* enum fw_link_state */
    uint32_t link_frames;    /* frames written whole, log and trace */
    uint32_t link_log_frames;
    uint32_t link_trace_frames;
    uint32_t link_bytes;
    uint32_t link_failed;    /* frames lost to a failed write (none: the UART waits) */
    uint32_t link_packets;   /* trace packets sent */
    uint32_t link_packets_dropped; /* trace packets not sent */
    uint32_t link_crash_frames;    /* the crash record found at start, sent as a channel 2
                                    * frame once the host listened (then cleared) */
};

/* The UART variant (qemu-mps2-mN-uart.elf, built with FW_UART_LINK=1) sends its log and
 * trace as frames on UART1 (emb/frame_link.h) instead of leaving them to a debug probe;
 * UART0 keeps the text. It waits for the host before its run: a shell ARM_WINDOW frame on
 * UART1 (`emb capture --serial DEV --arm` sends one), or fw_command RUN_AGAIN. */
enum fw_link_state {
    FW_LINK_NONE = 0,     /* the probe is the consumer (the default build) */
    FW_LINK_WAITING = 1,  /* waiting for the host on UART1 */
    FW_LINK_RUNNING = 2,
    FW_LINK_SENT = 3,     /* the run is over and everything it recorded went out */
};

#endif /* FW_H */
