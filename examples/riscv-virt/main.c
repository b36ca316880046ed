/* Example firmware for QEMU's RISC-V virt machine, 1 to 4 harts (-smp N): every hart
 * records into its own rings (ports/riscv), its machine timer interrupt a nested producer
 * on each. Hart 0 queues work items in a queue the harts share (a spinlock of the
 * application's, not the recorder's); every hart takes items from it, tracing and logging
 * what it does. Then the stress phase: every hart records as fast as it goes for two
 * seconds of the time base (from its own start of it), its timer interrupt at 5 kHz, while the host (`emb capture
 * --gdb`) reads and frees the rings; after it the last hart runs the worker partition,
 * whose faults the port contains (FW_PART_FAULTS of them, each run restarted). Last, hart 0 disables every class: a host that sees
 * the mask at zero has everything before it. fw_stats says what each hart emitted.
 *
 * Afterwards every hart waits for the host's command in fw_command: with FW_CMD_FAULT the
 * last hart loads from an address no memory backs, with FW_CMD_FAULT_ALL every hart does.
 * The one crash record (cpu_id: the hart that faulted first; the others stopped where
 * they waited, or faulted too) is left in the retained region for `emb capture --gdb` to
 * take through the descriptor. */
#include <emb/crash.h>
#include <emb/log.h>
#include <emb/partition.h>
#include <emb/riscv.h>
#include <emb/trace_events.h>

#include "fw.h"
#include "virt.h"

EMB_LOG_MODULE_DEFINE(work, EMB_LOG_LEVEL_INF);
/* The worker partition's own module: `emb log` shows its records as the partition's. */
EMB_LOG_MODULE_DEFINE_PARTITION(job, EMB_LOG_LEVEL_INF, FW_PARTITION, "worker");

#define RING_PACKETS 16u
#define LOG_SIZE 2048u

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t
    ring_buf[FW_HARTS_MAX][RING_PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[FW_HARTS_MAX][RING_PACKETS];
static struct emb_trace_ring rings[FW_HARTS_MAX];
static _Alignas(8) uint8_t log_buf[FW_HARTS_MAX][LOG_SIZE];
static struct emb_log_ring log_rings[FW_HARTS_MAX];
/* Room for the faulting hart's last packets and one of every other hart's. */
static _Alignas(8) uint8_t crash_region[16384] __attribute__((section(".noinit.crash")));

volatile struct fw_stats fw_stats;
volatile uint32_t fw_command;

/* ---- The shared work queue: an array ring under a spinlock (amoswap) ---- */

#define QUEUE_SIZE 16u
static struct {
    uint32_t lock;
    uint32_t head, tail;
    uint32_t items[QUEUE_SIZE];
} queue;

static void queue_lock(void)
{
    while (__atomic_exchange_n(&queue.lock, 1u, __ATOMIC_ACQUIRE) != 0u) {
    }
}

static void queue_unlock(void)
{
    __atomic_store_n(&queue.lock, 0u, __ATOMIC_RELEASE);
}

static int queue_put(uint32_t item)
{
    queue_lock();
    int ok = queue.tail - queue.head < QUEUE_SIZE;
    if (ok)
        queue.items[queue.tail++ % QUEUE_SIZE] = item;
    queue_unlock();
    return ok;
}

static int queue_take(uint32_t *item)
{
    queue_lock();
    int ok = queue.tail != queue.head;
    if (ok)
        *item = queue.items[queue.head++ % QUEUE_SIZE];
    queue_unlock();
    return ok;
}

/* ---- Per hart ---- */

static uint32_t harts;

static void emit(uint32_t hart, uint16_t id, uint32_t b)
{
    volatile struct fw_hart_stats *s = &fw_stats.hart[hart];
    EMB_TRACE_user_event(id, s->thread_events, b);
    s->thread_events++;
}

/* The machine timer interrupt: a nested producer on its hart's ring. */
void emb_rv_interrupt(uint32_t cause)
{
    if (cause != VIRT_IRQ_MTIMER)
        return;
    uint32_t hart = emb_rv_hart_id();
    volatile struct fw_hart_stats *s = &fw_stats.hart[hart];
    EMB_TRACE_user_event(FW_EV_TICK, s->ticks, hart);
    s->ticks++;
    virt_timer_next(hart, FW_TICK_PERIOD);
}

static uint32_t now_low(void)
{
    uint32_t high;
    return emb_port_timestamp_split(&high);
}

static void work(uint32_t hart)
{
    uint32_t item;
    while (__atomic_load_n(&fw_stats.items_taken, __ATOMIC_ACQUIRE) < FW_ITEMS) {
        if (hart == 0u && fw_stats.items_put < FW_ITEMS && queue_put(fw_stats.items_put)) {
            emit(hart, FW_EV_PUT, fw_stats.items_put);
            __atomic_store_n(&fw_stats.items_put, fw_stats.items_put + 1u, __ATOMIC_RELEASE);
        }
        /* With other harts to do the work, hart 0 only queues it. */
        if ((hart == 0u && harts > 1u) || !queue_take(&item))
            continue;
        emit(hart, FW_EV_TAKE, item);
        fw_stats.hart[hart].taken++;
        if (item % 8u == hart) {
            EMB_LOG_INF(work, "hart %u took item %u", (unsigned)hart, (unsigned)item);
            fw_stats.hart[hart].logs++;
        }
        __atomic_fetch_add(&fw_stats.items_taken, 1u, __ATOMIC_ACQ_REL);
    }
}

/* The worker partition's body: an event and a log record of its module, and while
 * faults are still to be injected a load from an address no memory backs. The counts go
 * up before the load: the fault abandons the rest of the call. */
static void partition_body(void *arg)
{
    uint32_t hart = (uint32_t)(uintptr_t)arg;
    volatile struct fw_hart_stats *s = &fw_stats.hart[hart];
    emit(hart, FW_EV_PART, s->part_restarts);
    EMB_LOG_INF(job, "worker run %u on hart %u", (unsigned)s->part_restarts, (unsigned)hart);
    s->part_logs++;
    if (s->part_faults < FW_PART_FAULTS) {
        s->part_faults++;
        (void)*(volatile uint32_t *)0x00800000u;
    }
}

/* Runs the worker partition until a run returns: each faulted run is restarted. */
static void partition_runs(uint32_t hart)
{
    while (emb_rv_partition_run(FW_PARTITION, partition_body, (void *)(uintptr_t)hart) != EMB_OK)
        fw_stats.hart[hart].part_restarts++;
}

/* From the hart's own start of it, however long the work took on a loaded host. */
static EMB_NOINLINE void stress(uint32_t hart)
{
    uint32_t start = now_low();
    do
        emit(hart, FW_EV_STRESS, hart);
    while (now_low() - start < FW_STRESS_TIME);
}

/* What every hart runs; hart 0 then ends the run. */
static void run(uint32_t hart)
{
    fw_stats.hart[hart].state = FW_WORKING;
    /* A faulting hart's stop request reaches this one from now on. */
    __asm__ __volatile__("csrs mie, %0" ::"r"(VIRT_MIE_MSIE));
    virt_timer_next(hart, FW_TICK_PERIOD);
    __asm__ __volatile__("csrsi mstatus, 8");
    work(hart);
    fw_stats.hart[hart].state = FW_STRESS;
    stress(hart);
    /* After the stress: no later event of this hart overwrites the partition's unread. */
    if (hart + 1u == harts)
        partition_runs(hart);
    virt_timer_stop(hart);
    __atomic_store_n(&fw_stats.hart[hart].state, FW_DONE, __ATOMIC_RELEASE);
}

/* A spin, not wfi: with the timer stopped no interrupt would wake the hart; a faulting
 * hart's stop request finds it here. */
static EMB_NOINLINE void fault_if_asked(uint32_t hart)
{
    for (;;) {
        uint32_t command = fw_command;
        if (command == FW_CMD_FAULT_ALL || (command == FW_CMD_FAULT && hart + 1u == harts))
            break;
    }
    if (fw_command == FW_CMD_FAULT_ALL) {
        /* Every hart faults: masked, so the first fault's stop request cannot stop this
         * one first, and released together once all are masked. */
        __asm__ __volatile__("csrci mstatus, 8");
        __atomic_fetch_add(&fw_stats.faulting, 1u, __ATOMIC_ACQ_REL);
        while (__atomic_load_n(&fw_stats.faulting, __ATOMIC_ACQUIRE) < harts) {
        }
    }
    emit(hart, FW_EV_TAKE, 0xDEADu);
    (void)*(volatile uint32_t *)0x00800000u; /* no device there: a load access fault */
}

void virt_hart_main(uint32_t hart)
{
    while (__atomic_load_n(&fw_stats.state, __ATOMIC_ACQUIRE) != FW_WORKING) {
    }
    if (hart >= harts)
        return;
    run(hart);
    fault_if_asked(hart);
}

static void boot_report(void)
{
    const uint8_t *record;
    uint32_t length = 0;
    fw_stats.crash_status = (uint32_t)emb_crash_record_get(&record, &length);
    fw_stats.crash_length = length;
    virt_uart_puts("riscv-virt: ");
    virt_uart_dec(harts);
    virt_uart_puts(" harts, " EMB_PORT_NAME ", profile " CONFIG_EMB_PROFILE_NAME "\n");
}

void virt_main(const void *fdt)
{
    harts = virt_fdt_harts(fdt);
    if (harts > FW_HARTS_MAX)
        harts = FW_HARTS_MAX;
    struct emb_rv_hart_config hc[FW_HARTS_MAX];
    for (uint32_t h = 0; h < harts; h++)
        hc[h] = (struct emb_rv_hart_config){
            .ring = &rings[h], .ring_buf = ring_buf[h], .ring_commit = ring_commit[h],
            .log_ring = &log_rings[h], .log_buf = log_buf[h], .log_size = LOG_SIZE,
            .stack_low = virt_stack_low(h), .stack_size = virt_stack_size(),
        };
    const struct emb_rv_config cfg = {
        .clock_hz = VIRT_TIMEBASE_HZ, .mode = EMB_TRACE_MODE_STREAMING,
        .classes = EMB_TRACE_CLASSES_ALL, .ring_packets = RING_PACKETS, .harts = harts,
        .hart = hc, .retained = crash_region, .retained_size = sizeof crash_region,
        .probe_consumer = true, .msip = VIRT_CLINT_MSIP,
    };
    fw_stats.boots++;
    fw_stats.harts = harts;
    (void)emb_partition_define(FW_PARTITION, "worker");
    if (emb_rv_start(&cfg) != EMB_OK) {
        virt_uart_puts("riscv-virt: emb_rv_start failed\n");
        virt_exit(1);
    }
    boot_report();
    virt_release();
    __atomic_store_n(&fw_stats.state, FW_WORKING, __ATOMIC_RELEASE);
    run(0);
    for (uint32_t h = 1; h < harts; h++)
        while (__atomic_load_n(&fw_stats.hart[h].state, __ATOMIC_ACQUIRE) != FW_DONE) {
        }
    fw_stats.state = FW_DONE;
    emb_trace_set_classes(0u); /* last: the host sees everything before it */
    virt_uart_puts("riscv-virt: run done\n");
    fault_if_asked(0);
}
