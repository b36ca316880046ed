/* A threaded firmware on the example kernel, for QEMU's MPS2 boards (M3, M4, M7).
 *
 * Threads: the sensor driver (priority 4) waits for the data-ready notification that the
 * sensor interrupt (TIMER0, the more urgent interrupt) sends, reads the sensor over the
 * shared I2C bus (a mutex) and queues the sample; the control loop (3) takes samples from
 * the queue, writes the actuator over the same bus every fourth sample (waiting two ticks
 * for the transfer with the bus held, so the driver finds it held: priority
 * inheritance), wakes the logger every eighth (a semaphore) and then, still holding the
 * bus, waits for the SPI flash the logger holds meanwhile (a chain: the driver waits for
 * i2c held by the control loop, which waits for spi held by the logger, raised two links
 * down), schedules delayed work every sixteenth, and every sixty-fourth puts the sensor
 * in standby for FW_STANDBY_TICKS (every thread blocked: the idle thread sleeps through
 * the ticks, tickless); the logger (2) writes deferred log lines under the scheduler lock
 * and a page to the SPI flash; the work thread (1) runs the delayed work; idle (0) sends
 * the rings out on UART1 and sleeps (kern_idle_sleep). The kernel's tick (TIMER1, the
 * less urgent interrupt) raises the sensor interrupt itself every sixteenth tick
 * interrupt, so the two handlers nest.
 *
 * After FW_SAMPLES samples the control loop ends the run: tracing stops, the rings go out
 * on UART1 (emb/frame_link.h), and UART0 prints the kernel's own accounting (switches,
 * ticks, tick interrupts and tickless sleeps, each thread's run and blocked cycles) for
 * the host to hold the trace against.
 *
 * Started with `-append fault` (semihosting's command line), the sensor driver faults
 * past sample FW_FAULT_AT while it holds the bus, just after the notification woke it
 * (SPEC-015 §11); with `-append chainfault` the logger faults writing its third flash
 * page, holding spi with the control loop and the driver waiting behind it; the next
 * boot sends the crash record on UART1 and exits. With `-append hold` it stays up after
 * the run for a debugger; `-append nochain` leaves out the control loop's wait for
 * the SPI flash, and with it the chain (the good run of tests/qemu/kernel/kernel_diff.sh). */
#include <string.h>

#include <emb/cortex_m.h>
#include <emb/crash.h>
#include <emb/frame_link.h>
#include <emb/log.h>
#include <emb/trace_events.h>

#include "kernel.h"
#include "mps2.h"

EMB_LOG_MODULE_DEFINE(fw, EMB_LOG_LEVEL_INF);

#define FW_SAMPLES 240u
#define FW_FAULT_AT 100u
#define FW_CHAIN_FAULT_AT 2u /* the logger's third page */
#define FW_TICK_HZ 1000u
#define FW_STANDBY_TICKS 20u
#define FW_SENSOR_PERIOD (MPS2_CPU_HZ / 700u)
#define FW_EV_END 0x10u
#define DATA_READY 1u
#define LINK_UART 1u

#define RING_PACKETS 256u
static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[RING_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[RING_PACKETS];
static struct emb_trace_ring ring;
#define LOG_SIZE 8192u
static uint8_t log_buf[EMB_LOG_RING_BUF_SIZE(LOG_SIZE)];
static struct emb_log_ring log_ring;
static __attribute__((section(".noinit"), aligned(8))) uint8_t crash_region[6144];
static __attribute__((section(".noinit"))) uint32_t boot_mark[2];
#define BOOT_MAGIC 0x4B45524Eu

#define NVIC_ISPR0 (*(volatile uint32_t *)0xE000E200u)
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)

static struct kern_thread sensor_t, control_t, logger_t, work_t, idle_t;
static uint32_t sensor_stack[256], control_stack[256], logger_stack[256], work_stack[256],
    idle_stack[256];
static struct kern_mutex i2c, spi;
static struct kern_sem log_sem;
static struct kern_queue samples;
static uint32_t sample_slots[8];
static struct kern_work report;
static volatile uint32_t sample_count, actuator, fault_armed, chain_fault_armed, no_chain;
static struct sensor_bus { volatile uint32_t data; } present_bus;
#define ABSENT_BUS ((struct sensor_bus *)0x50000000u) /* nothing there on MPS2 */

/* ---- The link: frames on UART1, sent from the idle thread ---- */

static struct emb_frame_link link;
static uint8_t link_header[EMB_TSF_HEADER_BYTES(1) + EMB_TSF_EXT_MAX];
static struct emb_tsf_info link_info;
static struct emb_log_identity link_id;

static emb_status uart1_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    mps2_uart_write(LINK_UART, bytes, len);
    return EMB_OK;
}

static void link_start(void)
{
    static const struct emb_tsf_context cpu0 = {.id = 0, .kind = EMB_CONTEXT_CPU, .name = "cpu0"};
    emb_cm_link_identity(&link_info, &link_id, RING_PACKETS);
    const struct emb_frame_link_config c = {
        .write = uart1_write, .trace_ring = &ring, .header = link_header,
        .header_cap = sizeof link_header, .info = &link_info, .contexts = &cpu0, .count = 1u,
        .header_every = 0u, .log_ring = &log_ring, .log_id = &link_id,
    };
    mps2_uart_open(LINK_UART);
    (void)emb_frame_link_init(&link, &c);
}

/* ---- Interrupts ---- */

void TIMER0_Handler(void)
{
    kern_isr_enter(MPS2_TIMER0_IRQ);
    mps2_timer_clear(0);
    kern_notify_isr(&sensor_t, DATA_READY);
    kern_isr_exit(MPS2_TIMER0_IRQ);
}

void TIMER1_Handler(void)
{
    kern_isr_enter(MPS2_TIMER1_IRQ);
    mps2_timer_clear(1);
    kern_tick_isr();
    if (kern_cpu.tick_irqs % 16u == 0u)
        NVIC_ISPR0 = 1u << MPS2_TIMER0_IRQ; /* the sensor interrupt, nested in this one */
    kern_isr_exit(MPS2_TIMER1_IRQ);
}

/* ---- Threads ---- */

static void busy(uint32_t n)
{
    for (volatile uint32_t i = 0; i < n; i++) {
    }
}

/* Reads the sensor over the bus. On the §11 command the bus is the absent device's: a
 * bus fault, with the I2C mutex held. */
__attribute__((noinline)) static uint32_t sensor_read(struct sensor_bus *bus)
{
    busy(1500u);
    return bus->data + sample_count;
}

static void sensor_main(void *arg)
{
    (void)arg;
    for (;;) {
        uint32_t switches = kern_cpu.switches;
        (void)kern_notify_wait(DATA_READY, KERN_FOREVER);
        /* §11 wants the notification to have woken the driver last (not the queue or the
         * bus's handover): the fault comes on the first read past FW_FAULT_AT after a
         * wait for it that blocked (the most urgent thread, the driver is switched out
         * only when it blocks) and finds the bus free. */
        bool woken = kern_cpu.switches != switches, bus_free = i2c.owner == NULL;
        (void)kern_mutex_lock(&i2c, KERN_FOREVER);
        bool fault = fault_armed && woken && bus_free && sample_count >= FW_FAULT_AT;
        uint32_t v = sensor_read(fault ? ABSENT_BUS : &present_bus);
        kern_mutex_unlock(&i2c);
        (void)kern_queue_send(&samples, v, KERN_FOREVER);
    }
}

/* What the firmware logged, for the host to hold the log lines it decodes against: the
 * calls made and the last one's text, as this firmware renders it itself (UART0, at the
 * end). Each call and its note are made under the scheduler lock, so the last noted is
 * the last in the ring. */
static struct {
    uint32_t calls;
    const char *last_what; /* "control" or "report" */
    uint32_t last_samples, last_actuator;
} logged;

static void log_state(const char *what, uint32_t samples, uint32_t act)
{
    kern_sched_lock();
    if (what[0] == 'c')
        EMB_LOG_INF(fw, "control: %u samples, actuator %u", (unsigned)samples, (unsigned)act);
    else
        EMB_LOG_INF(fw, "report: %u samples, actuator %u", (unsigned)samples, (unsigned)act);
    logged.calls++;
    logged.last_what = what;
    logged.last_samples = samples;
    logged.last_actuator = act;
    kern_sched_unlock();
}

static void report_work(struct kern_work *w)
{
    (void)w;
    log_state("report", sample_count, actuator);
}

/* What emb_stats_thread_get() said of each thread at the END event. */
static emb_stats_thread_t end_stats[KERN_MAX_THREADS];
static uint32_t end_switches;
static struct kern_cpu end_cpu;

/* The monitors' worst intervals (SPEC-015 §6): critical sections and handlers. */
static void print_monitors(void)
{
    static const struct { uint8_t category; const char *name; } shown[] = {
        {EMB_MONITOR_IRQ_LOCK, "irq_lock"}, {EMB_MONITOR_SCHED_LOCK, "sched_lock"},
        {EMB_MONITOR_THREAD_RUN, "thread_run"}, {EMB_MONITOR_WORK_HANDLER, "work_handler"},
        {EMB_MONITOR_ISR(MPS2_TIMER0_IRQ), "isr_8"}, {EMB_MONITOR_ISR(MPS2_TIMER1_IRQ), "isr_9"},
    };
    for (unsigned i = 0; i < sizeof shown / sizeof shown[0]; i++) {
        emb_monitor_t m;
        if (emb_monitor_get(shown[i].category, &m) != EMB_OK)
            continue;
        mps2_uart_puts("kern: monitor ");
        mps2_uart_puts(shown[i].name);
        mps2_uart_puts(" worst ");
        mps2_uart_dec(m.worst_cycles);
        mps2_uart_puts("\n");
    }
}

static void print_accounting(void)
{
    print_monitors();
    mps2_uart_puts("kern: switches ");
    mps2_uart_dec(end_switches);
    mps2_uart_puts("\nkern: ticks ");
    mps2_uart_dec(end_cpu.tick);
    mps2_uart_puts(" tick_irqs ");
    mps2_uart_dec(end_cpu.tick_irqs);
    mps2_uart_puts(" tickless ");
    mps2_uart_dec(end_cpu.tickless_sleeps);
    mps2_uart_puts(" slept ");
    mps2_uart_dec(end_cpu.ticks_slept);
    mps2_uart_puts(" longest ");
    mps2_uart_dec(end_cpu.longest_tickless);
    mps2_uart_puts("\n");
    for (struct kern_thread *t = kern_all_threads; t != NULL; t = t->next_all) {
        const emb_stats_thread_t st = end_stats[t->index];
        mps2_uart_puts("kern: thread ");
        mps2_uart_dec(t->index);
        mps2_uart_puts(" ");
        mps2_uart_puts(t->name);
        mps2_uart_puts(" run ");
        mps2_uart_dec((uint32_t)st.run_cycles);
        mps2_uart_puts(" switches ");
        mps2_uart_dec(st.switches);
        mps2_uart_puts(" blocked ");
        mps2_uart_dec((uint32_t)st.blocked_cycles);
        mps2_uart_puts(" stack ");
        mps2_uart_dec(st.stack_high_water);
        mps2_uart_puts(" boost ");
        mps2_uart_dec(st.max_boost);
        mps2_uart_puts(" stack_size ");
        mps2_uart_dec(t->stack_size);
        mps2_uart_puts("\n");
    }
}

/* The end of the run, in the control loop: the timers stop, the kernel's accounting is
 * read at the END event, the trace's last, and tracing stops. The idle thread sends the
 * rest once every other thread has finished what it was doing (a thread preempted in the
 * middle of a log record completes it first). */
static volatile uint32_t run_over;

static void end_run(void)
{
    mps2_timer_stop(0);
    mps2_timer_stop(1);
    emb_port_irq_state s = emb_irq_lock();
    for (struct kern_thread *t = kern_all_threads; t != NULL; t = t->next_all)
        (void)emb_stats_thread_get(t->index, &end_stats[t->index]);
    end_switches = kern_cpu.switches;
    end_cpu = kern_cpu;
    EMB_TRACE_user_event(FW_EV_END, end_switches, sample_count);
    emb_trace_set_classes(0u);
    run_over = 1u;
    emb_irq_unlock(s);
    (void)kern_notify_wait(0x80000000u, KERN_FOREVER); /* never sent: the run is over */
}

static volatile uint32_t hold_at_end;

/* With `-append hold` the system stays up at the end, every thread but idle blocked, for
 * a debugger to look at (tests/qemu/kernel: emb desc --gdb, GDB). */
/* The rings as the firmware counts them, once the link has sent what they held: the
 * trace ring's unread bytes and dropped events, the log ring's unread bytes and dropped
 * records, and what it logged (the host reads the same through the descriptor). */
static void print_rings(void)
{
    mps2_uart_puts("kern: ring cpu0 unread ");
    mps2_uart_dec(ring.write_pos - (ring.read_pos & ~(uint32_t)EMB_TRACE_READ_BUSY));
    mps2_uart_puts(" size ");
    mps2_uart_dec(ring.buf_mask + 1u);
    mps2_uart_puts(" discarded ");
    mps2_uart_dec(ring.discarded);
    mps2_uart_puts("\nkern: log ring unread ");
    mps2_uart_dec(log_ring.committed - log_ring.read_pos);
    mps2_uart_puts(" size ");
    mps2_uart_dec(log_ring.mask + 1u);
    mps2_uart_puts(" dropped ");
    mps2_uart_dec(log_ring.dropped);
    mps2_uart_puts("\nkern: logged ");
    mps2_uart_dec(logged.calls);
    if (logged.calls != 0u) {
        mps2_uart_puts(" last ");
        mps2_uart_puts(logged.last_what);
        mps2_uart_puts(": ");
        mps2_uart_dec(logged.last_samples);
        mps2_uart_puts(" samples, actuator ");
        mps2_uart_dec(logged.last_actuator);
    }
    mps2_uart_puts("\n");
}

static void send_rest_and_exit(void)
{
    print_accounting();
    emb_frame_link_flush(&link);
    print_rings();
    mps2_uart_puts("kern: run done\n");
    if (!hold_at_end)
        mps2_exit(0);
    mps2_uart_puts("kern: holding\n");
    for (;;)
        __asm__ __volatile__("wfi");
}

/* The sensor's standby: its interrupt stops for FW_STANDBY_TICKS while the control loop
 * sleeps, every thread is blocked, and the idle thread sleeps through the ticks
 * (kern_idle_sleep: tickless) until the control loop's timeout. */
static void standby(void)
{
    mps2_timer_stop(0);
    kern_sleep(FW_STANDBY_TICKS);
    mps2_timer_start(0, FW_SENSOR_PERIOD - 1u);
}

static void control_main(void *arg)
{
    (void)arg;
    for (;;) {
        uint32_t v;
        (void)kern_queue_receive(&samples, &v, KERN_FOREVER);
        uint32_t n = ++sample_count;
        busy(6000u); /* the control law */
        bool log_round = n % 8u == 0u, chain = log_round && !no_chain;
        if (log_round)
            kern_sem_give_isr(&log_sem); /* the logger takes the SPI flash while we sleep */
        if (n % 4u == 0u) {
            (void)kern_mutex_lock(&i2c, KERN_FOREVER);
            busy(400u);
            kern_sleep(2u); /* the actuator's transfer: the driver finds the bus held */
            if (chain) {
                /* The actuator's calibration is in the SPI flash, which the logger holds:
                 * the driver waits for i2c held by us, we wait for spi held by the
                 * logger, and inheritance raises the logger two links down. */
                (void)kern_mutex_lock(&spi, KERN_FOREVER);
                busy(200u);
                kern_mutex_unlock(&spi);
            }
            actuator = v;
            kern_mutex_unlock(&i2c);
        }
        if (n % 16u == 0u)
            kern_work_schedule(&report, 3u);
        if (n % 64u == 32u)
            standby();
        if (n == FW_SAMPLES)
            end_run();
    }
}

/* Writes a log page to the SPI flash. On the chain fault command (`-append chainfault`)
 * the flash is the absent device's: a bus fault with spi held, the control loop waiting
 * for it while it holds i2c, and the driver waiting for i2c. */
__attribute__((noinline)) static uint32_t flash_write(struct sensor_bus *flash, uint32_t word)
{
    busy(300u);
    return flash->data ^ word; /* the status word, read back */
}

static void logger_main(void *arg)
{
    (void)arg;
    for (uint32_t n = 0;; n++) {
        (void)kern_sem_take(&log_sem, KERN_FOREVER);
        kern_sched_lock();
        uint32_t count = sample_count, act = actuator;
        kern_sched_unlock();
        log_state("control", count, act);
        (void)kern_mutex_lock(&spi, KERN_FOREVER);
        kern_sleep(4u); /* the flash's page program time */
        bool fault = chain_fault_armed && n == FW_CHAIN_FAULT_AT;
        (void)flash_write(fault ? ABSENT_BUS : &present_bus, count);
        kern_mutex_unlock(&spi);
    }
}

/* Sleeps with interrupts masked between the check and the WFI (the wake-up interrupt
 * runs once they are unmasked): idle_enter and idle_exit bracket the sleep itself. */
static void idle_main(void *arg)
{
    (void)arg;
    for (;;) {
        emb_frame_link_poll(&link);
        if (run_over)
            send_rest_and_exit();
        __asm__ __volatile__("cpsid i" ::: "memory");
        emb_idle_enter();
        EMB_TRACE_state_enter(1u);
        uint64_t t0 = emb_port_timestamp();
        kern_idle_sleep(); /* tickless when nothing falls due in the next two ticks */
        EMB_TRACE_state_exit(1u, emb_monitor_cycles(t0, emb_port_timestamp()));
        emb_idle_exit();
        __asm__ __volatile__("cpsie i" ::: "memory");
    }
}

/* ---- `-append bench`: the cost of a switch, hooks included ----
 * Two threads of one priority yield to each other FW_BENCH_SWITCHES times; UART0 gets
 * the trace clock ticks that took (under QEMU -icount, instructions in fives). Run with
 * tracing on, with `-append bench,notrace` (tracing off at run time: the class mask 0),
 * and on the image built with CONFIG_EMB_TRACE_CLASSES=0 (compiled out). */
#define FW_BENCH_SWITCHES 20000u
static bool cmdline_says(const char *word);
static struct kern_thread bench_a, bench_b;
static volatile uint32_t bench_left = FW_BENCH_SWITCHES;
static uint64_t bench_t0;

static void bench_main(void *arg)
{
    for (;;) {
        if (arg != 0 && bench_t0 == 0u)
            bench_t0 = emb_port_timestamp();
        if (bench_left == 0u) {
            uint64_t ticks = emb_port_timestamp() - bench_t0;
            mps2_uart_puts("kern: bench switches ");
            mps2_uart_dec(kern_cpu.switches);
            mps2_uart_puts(" ticks ");
            mps2_uart_dec((uint32_t)ticks);
            mps2_uart_puts("\n");
            mps2_exit(0);
        }
        bench_left--;
        kern_yield();
    }
}

static void bench(void)
{
    if (cmdline_says("notrace"))
        emb_trace_set_classes(0u);
    kern_thread_create(&idle_t, "idle", 0u, idle_stack, sizeof idle_stack, idle_main, 0);
    kern_thread_create(&bench_a, "a", 5u, sensor_stack, sizeof sensor_stack, bench_main, (void *)1);
    kern_thread_create(&bench_b, "b", 5u, control_stack, sizeof control_stack, bench_main, 0);
    kern_start(1u, 0x00FFFFFFu); /* the tick out of the way */
}

/* ---- Start ---- */

/* Semihosting SYS_GET_CMDLINE: QEMU's -append. */
static bool cmdline_says(const char *word)
{
    static char line[64];
    struct { char *buf; uint32_t len; } block = {line, sizeof line};
    register uint32_t r0 __asm__("r0") = 0x15u;
    register void *r1 __asm__("r1") = &block;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0 == 0u && strstr(line, word) != NULL;
}

static void send_crash_and_exit(void)
{
    const uint8_t *record;
    uint32_t length;
    if (emb_crash_record_get(&record, &length) != EMB_OK)
        return;
    mps2_uart_puts("kern: the crash record found\n");
    if (emb_frame_link_send_crash(&link, record, length) == EMB_OK)
        emb_crash_record_clear();
    boot_mark[0] = 0u;
    mps2_exit(0);
}

static void create_threads(void)
{
    kern_mutex_init(&i2c, "i2c");
    kern_mutex_init(&spi, "spi");
    kern_sem_init(&log_sem, "log", 0u, 8u);
    kern_queue_init(&samples, "samples", sample_slots, 8u);
    kern_work_init(&report, "report", report_work);
    kern_thread_create(&idle_t, "idle", 0u, idle_stack, sizeof idle_stack, idle_main, 0);
    kern_thread_create(&work_t, "work", 1u, work_stack, sizeof work_stack, kern_work_thread, 0);
    kern_work_runner = &work_t;
    kern_thread_create(&logger_t, "logger", 2u, logger_stack, sizeof logger_stack, logger_main, 0);
    kern_thread_create(&control_t, "control", 3u, control_stack, sizeof control_stack, control_main, 0);
    kern_thread_create(&sensor_t, "sensor", 4u, sensor_stack, sizeof sensor_stack, sensor_main, 0);
}

int main(void)
{
    mps2_uart_init();
    bool again = boot_mark[0] == BOOT_MAGIC;
    boot_mark[0] = BOOT_MAGIC;
    const struct emb_cm_config cfg = {
        .cpu_hz = MPS2_CPU_HZ, .mode = EMB_TRACE_MODE_STREAMING, .classes = EMB_TRACE_CLASSES_ALL,
        .ring = &ring, .ring_buf = ring_buf, .ring_commit = ring_commit,
        .ring_packets = RING_PACKETS, .log_ring = &log_ring, .log_buf = log_buf,
        .log_size = LOG_SIZE, .retained = crash_region, .retained_size = sizeof crash_region,
        .stack_low = mps2_stack_low(), .stack_size = mps2_stack_size(), .paint_stack = true,
    };
    if (emb_cm_start(&cfg) != EMB_OK) {
        mps2_uart_puts("kern: emb_cm_start failed\n");
        return 1;
    }
    link_start();
    if (again)
        send_crash_and_exit();
    if (cmdline_says("bench"))
        bench();
    chain_fault_armed = cmdline_says("chainfault");
    no_chain = cmdline_says("nochain");
    fault_armed = !chain_fault_armed && cmdline_says("fault");
    hold_at_end = cmdline_says("hold");
    mps2_uart_puts(fault_armed         ? "kern: start, the driver will fault\n"
                   : chain_fault_armed ? "kern: start, the logger will fault in a chain\n"
                                       : "kern: start\n");
    NVIC_IPR[MPS2_TIMER0_IRQ] = 0x40u; /* the sensor: more urgent than the tick */
    NVIC_IPR[MPS2_TIMER1_IRQ] = 0x80u;
    create_threads();
    mps2_timer_start(0, FW_SENSOR_PERIOD - 1u);
    kern_start(1u, MPS2_CPU_HZ / FW_TICK_HZ - 1u);
}
