/* The MPS2 example firmware: the Cortex-M port on QEMU's mps2-an385 (Cortex-M3),
 * mps2-an386 (Cortex-M4) and mps2-an500 (Cortex-M7), read by a host over the GDB protocol
 * through the debug descriptor (docs/porting.md, "The MPS2 example").
 *
 * A run is FW_FRAMES frames of the main loop, paced by a timer interrupt at FW_TICK_HZ
 * that records into the same ring (the nested producer: it preempts the main loop in the
 * middle of its records). Each frame records frame_start, a user_event and frame_end, logs
 * a line, and updates a queue under the interrupt lock (the IRQ_LOCK monitor keeps the
 * longest). At frame FW_BURST_AT the main loop records and logs more than the rings hold,
 * so some of it is dropped, and counted. Every event and log line carries a sequence
 * number, and fw_stats counts what was emitted: a host that captured the run checks that
 * nothing is missing, nothing duplicated and every drop counted. At the end tracing is
 * turned off (the class mask is zero: `emb capture --until-closed` stops there).
 *
 * The trace ring streams with the debug probe as its consumer: `emb capture --gdb` frees
 * what it took. A host command (fw_command) makes the sensor driver fault; the crash
 * record, with the last trace packets, survives the reset in the retained region, and the
 * next start validates it (fw_stats.crash_status).
 *
 * Built with FW_UART_LINK=1 (qemu-mps2-mN-uart.elf), the firmware is its rings' consumer
 * itself: its idle loop sends the log and the trace as frames on UART1 (emb/frame_link.h),
 * which `emb capture --serial` reads; UART0 keeps the text. It waits for the host's
 * ARM_WINDOW frame on UART1 before its run, so the reader has the log's hello frame and
 * the trace header from the start; a crash record found at start goes first, as a
 * channel 2 frame, and is cleared once sent. */
#include <emb/cortex_m.h>
#include <emb/crash.h>
#include <emb/frame_link.h>
#include <emb/hooks.h>
#include <emb/log.h>
#include <emb/monitor.h>
#include <emb/shell.h>
#include <emb/trace_events.h>

#include "fw.h"
#include "mps2.h"
#include "sensor.h"

EMB_LOG_MODULE_DEFINE(app, EMB_LOG_LEVEL_INF);
EMB_LOG_MODULE_DEFINE(timer, EMB_LOG_LEVEL_DBG);

#define RING_PACKETS 32u
#define LOG_SIZE 4096u

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[RING_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[RING_PACKETS];
static struct emb_trace_ring ring;
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(LOG_SIZE)];
static struct emb_log_ring log_ring;

/* The retained region (ports/cortex-m/emb_retained.ld): the crash record area, and the
 * boot count. */
static __attribute__((section(".noinit"), aligned(8))) uint8_t crash_region[6144];
static __attribute__((section(".noinit"))) uint32_t boot_count[2]; /* magic, count */
#define BOOT_MAGIC 0xB007C0DEu

__attribute__((used)) volatile struct fw_stats fw_stats;
/* Written by the host (enum fw_command). */
__attribute__((used)) volatile uint32_t fw_command;

#define FW_LINK_UART 1u

static volatile uint32_t ticks_now;
static volatile uint32_t running;

/* A device that is there (the sensor's registers as RAM: never ready) and one that is not. */
static struct sensor_regs present_regs;
#define ABSENT_REGS ((volatile struct sensor_regs *)0x50000000u) /* nothing there on MPS2 */

void TIMER0_Handler(void)
{
    mps2_timer_clear(0);
    ticks_now++;
    if (!running)
        return;
    emb_isr_enter(MPS2_TIMER0_IRQ);
    uint32_t tick = fw_stats.ticks++;
    EMB_TRACE_user_event(FW_EV_TICK, tick, ticks_now);
    if (tick % FW_LOG_TICK_EVERY == 0u) {
        EMB_LOG_DBG(timer, "tick %u", (unsigned)fw_stats.logs_tick);
        fw_stats.logs_tick++;
    }
    emb_isr_exit(MPS2_TIMER0_IRQ, false);
}

/* Wakes the idle loop to look at fw_command. */
void TIMER1_Handler(void)
{
    mps2_timer_clear(1);
}

/* A queue shared with interrupt handlers, updated under the interrupt lock; how long it
 * holds the lock varies with the frame, and the IRQ_LOCK monitor keeps the worst. */
static uint32_t queue[16];

__attribute__((noinline)) static void queue_update(uint32_t frame)
{
    emb_port_irq_state s = emb_irq_lock();
    for (uint32_t i = 0; i < 1u + frame % 23u; i++)
        queue[(frame + i) & 15u] += i;
    emb_irq_unlock(s);
}

/* ---- The UART variant: log and trace as frames on UART1 ---- */

#if FW_UART_LINK
static struct emb_frame_link link;
static uint8_t link_header[EMB_TSF_HEADER_BYTES(1) + EMB_TSF_EXT_MAX];

static emb_status uart1_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    mps2_uart_write(FW_LINK_UART, bytes, len);
    return EMB_OK;
}

static void link_start(void)
{
    static struct emb_tsf_info info;
    static struct emb_log_identity id;
    static const struct emb_tsf_context cpu0 = {.id = 0, .kind = EMB_CONTEXT_CPU, .name = "cpu0"};
    emb_cm_link_identity(&info, &id, RING_PACKETS);
    const struct emb_frame_link_config c = {
        .write = uart1_write,
        .trace_ring = &ring,
        .header = link_header,
        .header_cap = sizeof link_header,
        .info = &info,
        .contexts = &cpu0,
        .count = 1u,
        .header_every = 16u,
        .log_ring = &log_ring,
        .log_id = &id,
    };
    mps2_uart_open(FW_LINK_UART);
    if (emb_frame_link_init(&link, &c) != EMB_OK)
        mps2_uart_puts("qemu-mps2: emb_frame_link_init failed\n");
}

/* Waits until the host listens: its ARM_WINDOW frame on UART1 (bytes before it, a
 * delimiter of the host's, are skipped), or the RUN_AGAIN command. */
static void link_wait_for_host(void)
{
    static uint8_t in[64], frame[64];
    uint32_t n = 0;
    fw_stats.link_state = FW_LINK_WAITING;
    mps2_uart_puts("qemu-mps2: waiting for the host on UART1\n");
    mps2_timer_start(1, MPS2_CPU_HZ / 100u - 1u);
    for (;;) {
        int c;
        while ((c = mps2_uart_getc(FW_LINK_UART)) >= 0) {
            if (c != 0) {
                if (n < sizeof in)
                    in[n++] = (uint8_t)c;
                continue;
            }
            uint8_t channel;
            size_t len;
            int arm = n > 0u && n < sizeof in &&
                      emb_frame_decode_one(in, n, frame, &channel, &len) == EMB_FRAME_OK &&
                      channel == EMB_FRAME_CH_SHELL && len >= 1u && frame[1] == EMB_SHELL_ARM_WINDOW;
            n = 0;
            if (arm)
                goto go;
        }
        if (fw_command == FW_CMD_RUN_AGAIN) {
            fw_command = FW_CMD_NONE;
            goto go;
        }
        __asm__ __volatile__("wfi");
    }
go:
    mps2_timer_stop(1);
    fw_stats.link_state = FW_LINK_RUNNING;
}

static void link_poll(void)
{
    emb_frame_link_poll(&link);
}

/* The product's upload: the record the previous run left goes to the host that listens
 * now, and is forgotten once the link took it. */
static void link_send_crash(void)
{
    const uint8_t *record;
    uint32_t length;
    if (emb_crash_record_get(&record, &length) != EMB_OK)
        return;
    if (emb_frame_link_send_crash(&link, record, length) == EMB_OK) {
        emb_crash_record_clear();
        fw_stats.link_crash_frames = link.stats.crash_frames;
        mps2_uart_puts("qemu-mps2: uart1: the crash record sent\n");
    }
}

/* Everything the run recorded goes out; the counts are the host's to compare. */
static void link_end_of_run(void)
{
    emb_frame_link_flush(&link);
    fw_stats.link_frames = link.stats.frames;
    fw_stats.link_log_frames = link.stats.log_frames;
    fw_stats.link_trace_frames = link.stats.trace_frames;
    fw_stats.link_bytes = link.stats.bytes;
    fw_stats.link_failed = link.stats.failed;
    fw_stats.link_packets = link.trace.packets;
    fw_stats.link_packets_dropped = link.trace.dropped;
    fw_stats.link_state = FW_LINK_SENT;
    mps2_uart_puts("qemu-mps2: uart1: ");
    mps2_uart_dec(link.stats.frames);
    mps2_uart_puts(" frames (");
    mps2_uart_dec(link.stats.log_frames);
    mps2_uart_puts(" log, ");
    mps2_uart_dec(link.stats.trace_frames);
    mps2_uart_puts(" trace), ");
    mps2_uart_dec(link.stats.bytes);
    mps2_uart_puts(" bytes, ");
    mps2_uart_dec(link.stats.failed);
    mps2_uart_puts(" lost\n");
}
#else
static void link_poll(void)
{
}
#endif

static void burst(void)
{
    for (uint32_t i = 0; i < FW_BURST_EVENTS; i++)
        EMB_TRACE_user_event(FW_EV_BURST, fw_stats.burst_events++, i);
    for (uint32_t i = 0; i < FW_BURST_LOGS; i++) {
        EMB_LOG_INF(app, "burst %u of %u", (unsigned)fw_stats.logs_burst, FW_BURST_LOGS);
        fw_stats.logs_burst++;
    }
}

static void run(void)
{
    fw_stats.state = FW_RUNNING;
    emb_trace_set_classes(EMB_TRACE_CLASSES_ALL);
    uint32_t first = fw_stats.frames;
    ticks_now = 0;
    running = 1;
    mps2_timer_start(0, MPS2_CPU_HZ / FW_TICK_HZ - 1u);
    for (uint32_t n = 0; n < FW_FRAMES; n++) {
        uint32_t frame = fw_stats.frames;
        emb_frame_start(frame);
        EMB_TRACE_user_event(FW_EV_FRAME, frame, frame);
        EMB_LOG_INF(app, "frame %u: %u timer ticks", (unsigned)frame, (unsigned)ticks_now);
        fw_stats.logs_frame++;
        queue_update(frame);
        if (!FW_STEADY && frame - first == FW_BURST_AT)
            burst();
        emb_frame_end(frame);
        fw_stats.frames = frame + 1u;
        while (ticks_now < (n + 1u) * FW_TICKS_PER_FRAME) {
            link_poll(); /* the idle loop: the UART variant sends its frames here */
            if (ticks_now < (n + 1u) * FW_TICKS_PER_FRAME)
                __asm__ __volatile__("wfi");
        }
    }
    running = 0;
    mps2_timer_stop(0);
    emb_monitor_t lock;
    if (emb_monitor_get(EMB_MONITOR_IRQ_LOCK, &lock) == EMB_OK)
        fw_stats.lock_worst = lock.worst_cycles;
    fw_stats.state = FW_DONE;
    /* Last: a host that sees the mask at zero has everything before it. */
    emb_trace_set_classes(0u);
    mps2_uart_puts("qemu-mps2: run done: ");
    mps2_uart_dec(fw_stats.frames);
    mps2_uart_puts(" frames, ");
    mps2_uart_dec(fw_stats.ticks);
    mps2_uart_puts(" ticks\n");
#if FW_UART_LINK
    link_end_of_run();
#endif
}

static void fault(uint32_t command)
{
    static struct sensor sensor = {.id = 3};
    sensor.regs = command == FW_CMD_FAULT_BUS ? ABSENT_REGS : &present_regs;
    emb_trace_set_classes(EMB_TRACE_CLASSES_ALL);
    mps2_uart_puts("qemu-mps2: polling the sensor\n");
    (void)sensor_driver_poll(&sensor);
    mps2_uart_puts("qemu-mps2: the sensor driver did not fault\n");
}

/* The consumer has stopped (no host reads the ring now): the timer records many rings'
 * worth of ticks, then the driver faults. The crash record's flight recorder must hold
 * the last of them, not the first ones after the consumer stopped. */
static void stall_then_fault(void)
{
    emb_trace_set_classes(EMB_TRACE_CLASSES_ALL);
    uint32_t until = fw_stats.ticks + FW_STALL_TICKS;
    running = 1;
    mps2_timer_start(0, MPS2_CPU_HZ / FW_TICK_HZ - 1u);
    while (fw_stats.ticks < until)
        __asm__ __volatile__("wfi");
    running = 0;
    mps2_timer_stop(0);
    EMB_TRACE_user_event(FW_EV_STALLED, fw_stats.ticks - 1u, FW_STALL_TICKS);
    fault(FW_CMD_FAULT_BUS);
}

int main(void)
{
    mps2_uart_init();
    if (boot_count[0] != BOOT_MAGIC) {
        boot_count[0] = BOOT_MAGIC;
        boot_count[1] = 0;
    }
    fw_stats.boots = ++boot_count[1];
    const struct emb_cm_config cfg = {
        .cpu_hz = MPS2_CPU_HZ,
        .mode = EMB_TRACE_MODE_STREAMING,
        .classes = 0u,
        .ring = &ring,
        .ring_buf = ring_buf,
        .ring_commit = ring_commit,
        .ring_packets = RING_PACKETS,
        .log_ring = &log_ring,
        .log_buf = log_buf,
        .log_size = LOG_SIZE,
        .retained = crash_region,
        .retained_size = sizeof crash_region,
        .stack_low = mps2_stack_low(),
        .stack_size = mps2_stack_size(),
        .paint_stack = true,
        .probe_consumer = !FW_UART_LINK,
        .trap_div0 = true,
    };
    if (emb_cm_start(&cfg) != EMB_OK) {
        mps2_uart_puts("qemu-mps2: emb_cm_start failed\n");
        return 1;
    }
    const uint8_t *record;
    uint32_t length = 0;
    fw_stats.crash_status = (uint32_t)emb_crash_record_get(&record, &length);
    fw_stats.crash_length = length;
    mps2_uart_puts("qemu-mps2: boot ");
    mps2_uart_dec(fw_stats.boots);
    mps2_uart_puts(", ");
    mps2_uart_puts(emb_cm_port_name);
    if (fw_stats.crash_status == EMB_OK) {
        mps2_uart_puts(", a crash record of ");
        mps2_uart_dec(length);
        mps2_uart_puts(" bytes from the previous run");
    }
    mps2_uart_puts("\n");

#if FW_UART_LINK
    link_start();
    link_wait_for_host();
    link_send_crash();
#endif
    run();
    mps2_timer_start(1, MPS2_CPU_HZ / 100u - 1u);
    for (;;) {
        uint32_t command = fw_command;
        if (command != FW_CMD_NONE) {
            fw_command = FW_CMD_NONE;
            if (command == FW_CMD_RUN_AGAIN)
                run();
            else if (command == FW_CMD_FAULT_BUS || command == FW_CMD_FAULT_DIV0)
                fault(command);
            else if (command == FW_CMD_STALL_FAULT)
                stall_then_fault();
        }
        __asm__ __volatile__("wfi");
    }
}
