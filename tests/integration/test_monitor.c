/* Monitors and statistics on the native port, with known intervals from known functions:
 * the worst case of each category and its opener, symbolised through the ELF and DWARF
 * the way `emb desc` does it; thresholds and their three actions; nesting; statistics
 * of threads and mutexes; reset. */
#define _GNU_SOURCE

#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <emb/crash.h>
#include <emb/hooks.h>
#include <emb/monitor.h>
#include <emb/native.h>
#include <emb/trace_events.h>

#include "crash_decode.h"
#include "elf_image.h"
#include "harness.h"
#include "trace_decode.h"

static struct emb_elf *self_elf;
static uintptr_t bias;

static int find_bias(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    bias = info->dlpi_addr;
    return 1;
}

static void busy_us(uint32_t us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t.tv_nsec - t0.tv_nsec) <
             (uint64_t)us * 1000u);
}

static double us_of(uint32_t cycles)
{
    return (double)cycles * 1e6 / (double)emb_port_timestamp_hz();
}

/* The outermost function of a runtime pc, through the ELF's DWARF. */
static const char *function_of(uintptr_t pc)
{
    static struct emb_elf_frame f[8];
    size_t n = emb_elf_symbolize(self_elf, pc - bias, f, 8, NULL);
    return n ? f[n - 1].function : "(none)";
}

__attribute__((noinline)) static void hold_irq_lock_for(uint32_t us)
{
    emb_port_irq_state s = emb_irq_lock();
    busy_us(us);
    emb_irq_unlock(s);
}

__attribute__((noinline)) static void hold_nested(uint32_t us)
{
    emb_port_irq_state s = emb_irq_lock();
    hold_irq_lock_for(us / 2);
    busy_us(us / 2);
    emb_irq_unlock(s);
}

__attribute__((noinline)) static void hold_sched_lock_for(uint32_t us)
{
    emb_sched_lock();
    busy_us(us);
    emb_sched_unlock();
}

static unsigned notified, over_expected;
static uint8_t notified_category;
static uintptr_t notified_pc;

static void on_notify(void *arg, uint8_t category, uint32_t cycles, uintptr_t pc)
{
    (void)arg;
    (void)cycles;
    notified++;
    notified_category = category;
    notified_pc = pc;
}

/* The longest of the holds below as seen from outside: the lock's interval lies inside
 * the call, so the monitor can never report more than this, however long the scheduler
 * kept the busy wait off the processor on a loaded machine. */
static double longest_call_us;

/* Calls hold(us) and returns how long the call took, seen from outside. */
static double timed_call_us(void (*hold)(uint32_t), uint32_t us)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hold(us);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
}

static void timed_hold_irq_lock_for(uint32_t us)
{
    double call_us = timed_call_us(hold_irq_lock_for, us);
    if (call_us > longest_call_us)
        longest_call_us = call_us;
}

static void test_irq_lock(void)
{
    timed_hold_irq_lock_for(300);
    timed_hold_irq_lock_for(2000);
    timed_hold_irq_lock_for(500);
    emb_monitor_t m;
    ok(emb_monitor_get(EMB_MONITOR_IRQ_LOCK, &m) == EMB_OK, "IRQ_LOCK monitor read");
    double us = us_of(m.worst_cycles);
    /* At least the hold; at most the longest call around a hold (1% and 2 us for the two
     * clocks' calibration and reading). */
    ok(us >= 2000.0 && us <= longest_call_us * 1.01 + 2.0,
       "worst interrupt lock: %.1f us for a 2000 us hold, inside the longest call's %.1f us", us,
       longest_call_us);
    ok(!strcmp(function_of(m.opener_pc), "hold_irq_lock_for"),
       "its opener is hold_irq_lock_for (%s)", function_of(m.opener_pc));
    ok(m.over_count == 0 && m.threshold == 0, "no threshold, nothing over");

    /* Thresholds: trace and notify at 1 ms. */
    emb_monitor_set_notify(on_notify, NULL);
    uint32_t ms = (uint32_t)(emb_port_timestamp_hz() / 1000u);
    ok(emb_monitor_set_threshold(EMB_MONITOR_IRQ_LOCK, ms, EMB_MONITOR_TRACE | EMB_MONITOR_NOTIFY) == EMB_OK,
       "threshold 1 ms, trace and notify");
    hold_irq_lock_for(1500);
    hold_irq_lock_for(200);
    hold_irq_lock_for(1200);
    emb_monitor_get(EMB_MONITOR_IRQ_LOCK, &m);
    /* Two holds are over 1 ms; the 200 us one too only if the machine preempted it. */
    over_expected = m.over_count;
    ok(m.over_count >= 2 && m.over_count <= 3, "intervals over 1 ms counted: %u", m.over_count);
    ok(notified == m.over_count && notified_category == EMB_MONITOR_IRQ_LOCK &&
           !strcmp(function_of(notified_pc), "hold_irq_lock_for"),
       "notified once each, with the category and the opener");
    ok(us_of(m.worst_cycles) >= 2000.0, "the worst case stays the 2 ms one");
    ok(emb_monitor_set_threshold(EMB_MONITOR_COUNT, 1, 0) == EMB_E_INVALID &&
           emb_monitor_set_threshold(0, 1, 0x80) == EMB_E_INVALID,
       "unknown category or action refused");
    emb_monitor_set_threshold(EMB_MONITOR_IRQ_LOCK, 0, 0);

    /* Nesting: the outermost pair is the interval. */
    emb_stats_reset();
    hold_nested(1000);
    emb_monitor_get(EMB_MONITOR_IRQ_LOCK, &m);
    ok(us_of(m.worst_cycles) >= 1000.0 && !strcmp(function_of(m.opener_pc), "hold_nested"),
       "nested locks: one interval of %.1f us opened by the outer hold_nested (%s)",
       us_of(m.worst_cycles), function_of(m.opener_pc));
}

static void test_sched_lock(void)
{
    /* Bounded by the call seen from outside, as the interrupt lock is: a loaded machine may
     * keep the busy wait off the processor for many milliseconds. */
    double call_us = timed_call_us(hold_sched_lock_for, 700);
    emb_monitor_t m;
    emb_monitor_get(EMB_MONITOR_SCHED_LOCK, &m);
    double us = us_of(m.worst_cycles);
    ok(us >= 700.0 && us <= call_us * 1.01 + 2.0 &&
           !strcmp(function_of(m.opener_pc), "hold_sched_lock_for"),
       "SCHED_LOCK: %.1f us opened by %s, inside the call's %.1f us", us, function_of(m.opener_pc),
       call_us);
}

/* Interrupts the handler itself counted: only the main thread takes the timer's signal
 * (the port's workers block every signal), so after emb_native_timer_stop() returns no
 * handler is half way and the counts are final. */
static volatile uint32_t slow_isr_calls;

static void slow_isr(void *arg)
{
    (void)arg;
    busy_us(300);
    slow_isr_calls++;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs a 2 ms timer on IRQ 9 until it has fired `want` times. A loaded machine delivers
 * the periodic signal late and merges overruns into one, so the test waits for the count
 * it needs; the 20 s deadline only guards against a timer that never fires. */
static uint32_t run_timer_until(struct emb_native_timer *t, uint32_t want)
{
    if (!ok(emb_native_timer_start(t, 9, 2000, slow_isr, NULL) == 0, "timer IRQ 9 every 2 ms"))
        return 0;
    double deadline = seconds_now() + 20.0;
    struct timespec ms = {0, 1000 * 1000};
    while (__atomic_load_n(&t->fired, __ATOMIC_RELAXED) < want && seconds_now() < deadline)
        nanosleep(&ms, NULL);
    emb_native_timer_stop(t);
    return t->fired;
}

static void test_isr(void)
{
    /* Static: a signal already queued when the timer stops still finds it. */
    static struct emb_native_timer t;
    emb_stats_cpu_t before = {0}, cpu = {0};
    emb_stats_cpu_get(0, &before);
    uint32_t fired = run_timer_until(&t, 3);
    emb_monitor_t m;
    emb_monitor_get(EMB_MONITOR_ISR(9), &m);
    double worst_us = us_of(m.worst_cycles);
    ok(fired >= 3 && slow_isr_calls == fired && worst_us >= 300.0,
       "ISR(9): worst %.1f us for a 300 us handler, %u interrupts (%u handler calls)", worst_us,
       fired, slow_isr_calls);
    ok(m.opener_pc != 0 && strstr(function_of(m.opener_pc), "timer"),
       "its opener is the port's timer signal handler (%s)", function_of(m.opener_pc));
    emb_status got = emb_stats_cpu_get(0, &cpu);
    ok(got == EMB_OK && cpu.irq_count - before.irq_count == fired,
       "CPU statistics: %u interrupts entered, as many as the timer fired (%u)",
       cpu.irq_count - before.irq_count, fired);
    /* Every interval is at least the handler's 300 us and at most the worst case, so their
     * sum lies between fired x 300 us and fired x the worst, and holds the worst itself. */
    uint64_t isr_cycles = cpu.isr_cycles - before.isr_cycles;
    double isr_us = us_of(1u) * (double)isr_cycles;
    ok(isr_us >= 300.0 * fired && isr_cycles >= m.worst_cycles &&
           isr_cycles <= (uint64_t)m.worst_cycles * fired,
       "CPU statistics: %.0f us in handlers, between %u x 300 us and %u x the worst %.1f us",
       isr_us, fired, fired, worst_us);
    ok(emb_stats_cpu_get(1, &cpu) == EMB_E_NOTFOUND, "one CPU");
}

static void slow_work(struct emb_native_work *w)
{
    (void)w;
    busy_us(400);
}

static struct emb_native_mutex shared;

__attribute__((noinline)) static void *runner_main(void *arg)
{
    (void)arg;
    volatile uint8_t big[96 * 1024];
    for (size_t i = 0; i < sizeof big; i += 64)
        big[i] = (uint8_t)i;
    busy_us(800);
    emb_native_sleep_us(2000);
    emb_native_mutex_lock(&shared); /* main holds it: contention */
    emb_native_mutex_unlock(&shared);
    return NULL;
}

static void test_threads_and_work(void)
{
    struct emb_native_workq q;
    emb_native_workq_start(&q, "slow-q");
    static struct emb_native_work works[3];
    for (int i = 0; i < 3; i++) {
        works[i].handler = slow_work;
        emb_native_workq_submit(&q, &works[i]);
    }
    emb_native_workq_stop(&q);
    emb_monitor_t m;
    emb_monitor_get(EMB_MONITOR_WORK_HANDLER, &m);
    ok(us_of(m.worst_cycles) >= 400.0 && !strcmp(function_of(m.opener_pc), "slow_work"),
       "WORK_HANDLER: %.1f us, opener %s", us_of(m.worst_cycles), function_of(m.opener_pc));
    emb_stats_object_t os;
    ok(emb_stats_object_get(q.handle, &os) == EMB_OK && os.acquisitions == 3 && os.max_queue >= 1,
       "work queue statistics: 3 submits, longest queue %u", os.max_queue);

    emb_native_mutex_init(&shared, "shared");
    emb_native_mutex_lock(&shared);
    struct emb_native_thread t;
    emb_native_thread_create(&t, "runner", runner_main, NULL);
    /* Until the runner has run, slept and blocked on the mutex; then 5 ms more. */
    struct timespec ms = {0, 1000 * 1000};
    for (int i = 0; i < 20000 && __atomic_load_n(&shared.waiters, __ATOMIC_RELAXED) == 0; i++)
        nanosleep(&ms, NULL);
    struct timespec wait = {0, 5 * 1000 * 1000};
    while (nanosleep(&wait, &wait) != 0) {
    }
    emb_native_mutex_unlock(&shared);
    emb_native_thread_join(&t, NULL);
    emb_monitor_get(EMB_MONITOR_THREAD_RUN, &m);
    ok(us_of(m.worst_cycles) >= 800.0, "THREAD_RUN: %.1f us", us_of(m.worst_cycles));
    emb_stats_thread_t ts;
    ok(emb_stats_thread_get(t.context_id, &ts) == EMB_OK, "thread statistics of runner");
    ok(us_of((uint32_t)ts.run_cycles) >= 800.0 && ts.switches >= 3,
       "run time %.0f us, %u switches", us_of((uint32_t)ts.run_cycles), ts.switches);
    ok(us_of((uint32_t)ts.blocked_cycles) >= 2000.0 + 5000.0,
       "blocked %.0f us (sleep and the mutex)", us_of((uint32_t)ts.blocked_cycles));
    ok(ts.contentions == 1, "one contention");
    ok(ts.stack_high_water >= 96 * 1024 && ts.stack_high_water < EMB_NATIVE_STACK_SIZE,
       "stack high-water %u bytes for a 96 KiB frame", ts.stack_high_water);
    ok(emb_stats_object_get(shared.handle, &os) == EMB_OK && os.contentions == 1 &&
           us_of(os.max_wait_cycles) >= 5000.0 && os.max_queue == 1 && os.acquisitions == 2,
       "mutex statistics: 1 contention, waited %.0f us, 2 locks", us_of(os.max_wait_cycles));
    ok(emb_stats_thread_get(999, &ts) == EMB_E_NOTFOUND && emb_stats_object_get(0xdead, &os) == EMB_E_NOTFOUND,
       "unknown thread and object");

    emb_stats_reset();
    emb_monitor_get(EMB_MONITOR_THREAD_RUN, &m);
    emb_stats_object_get(shared.handle, &os);
    emb_stats_thread_get(t.context_id, &ts);
    ok(m.worst_cycles == 0 && m.opener_pc == 0 && os.contentions == 0 && ts.run_cycles == 0,
       "emb_stats_reset zeroes monitors and statistics");
}

static void test_trace_events(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/monitor.embt", dir);
    ok(emb_native_trace_dump(path) == EMB_OK, "trace dumped");
    struct emb_trace_options o = {.catalog = emb_catalog_builtin()};
    struct emb_trace *t = emb_trace_decode_file(path, &o);
    size_t n, lock_max = 0, good = 0, sched = 0;
    const struct emb_trace_event *const *ev = emb_trace_events(t, &n);
    for (size_t i = 0; i < n; i++) {
        if (!ev[i]->ev)
            continue;
        if (!strcmp(ev[i]->ev->name, "irq_lock_max")) {
            lock_max++;
            uint32_t cycles = (uint32_t)emb_catalog_field_get_uint(&ev[i]->ev->fields[0], ev[i]->payload);
            uintptr_t pc = (uintptr_t)emb_catalog_field_get_uint(&ev[i]->ev->fields[1], ev[i]->payload);
            good += us_of(cycles) >= 1000.0 && !strcmp(function_of(pc), "hold_irq_lock_for");
        }
        sched += !strcmp(ev[i]->ev->name, "sched_unlock");
    }
    ok(lock_max == over_expected && good == lock_max,
       "an irq_lock_max event for each interval over the threshold, with its cycles and opener");
    ok(sched == 1, "sched_lock and sched_unlock(duration) recorded");
    emb_trace_free(t);
}

/* Runs `emb crash` on a record and returns its output (static), or NULL. */
static const char *emb_crash_output(const char *emb, const char *record, const char *extra)
{
    static char out[1 << 16];
    char exe[4096], cmd[8192];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    snprintf(cmd, sizeof cmd, "'%s' crash --elf '%s' --color=never %s '%s' 2>&1", emb, exe, extra,
             record);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return NULL;
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = '\0';
    return pclose(p) == 0 ? out : NULL;
}

/* How `emb crash` names a monitor fault: the monitor, its interval and threshold, and
 * neither the SIGABRT the process ended with nor a trap that was never taken. */
static void check_rendering(const char *emb, const char *record, uint32_t threshold)
{
    const char *text = emb_crash_output(emb, record, "");
    if (!ok(text != NULL, "emb crash renders the monitor's record"))
        return;
    diag("%.600s", text);
    char want[128];
    snprintf(want, sizeof want, "crossed the threshold of %u cycles (100.0 us)", threshold);
    ok(strstr(text, "fault      monitor irq_lock: an interval of ") != NULL && strstr(text, want),
       "text: the fault is monitor irq_lock, its interval and its threshold of %u cycles", threshold);
    ok(strstr(text, "SIGABRT") == NULL && strstr(text, "SI_USER") == NULL &&
           strstr(text, "divide error") == NULL && strstr(text, "trap") == NULL,
       "text: no signal and no trap the fault never had");
    ok(strstr(text, "hold_irq_lock_for") != NULL && strstr(text, "(the code that opened the interval)"),
       "text: pc is the opener, hold_irq_lock_for");
    const char *json = emb_crash_output(emb, record, "--json");
    if (!ok(json != NULL, "emb crash --json"))
        return;
    snprintf(want, sizeof want, "\"threshold_cycles\": %u", threshold);
    ok(strstr(json, "\"category\": \"irq_lock\"") && strstr(json, want) &&
           strstr(json, "\"signal\": null") && strstr(json, "\"interval_cycles\": "),
       "json: fault.monitor names the category, interval and threshold; no signal");
}

/* The FAULT action writes a crash record of class monitor and stops the process. */
static void test_fault_action(const char *dir, const char *emb)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/monitor_retained.bin", dir);
    unlink(path);
    pid_t pid = fork();
    if (pid == 0) {
        struct emb_native_crash_config c = {.retained_path = path};
        if (emb_native_crash_init(&c) != EMB_OK)
            _exit(3);
        emb_monitor_set_threshold(EMB_MONITOR_IRQ_LOCK, (uint32_t)(emb_port_timestamp_hz() / 10000u),
                                  EMB_MONITOR_FAULT);
        hold_irq_lock_for(300);
        _exit(4);
    }
    int st;
    waitpid(pid, &st, 0);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "FAULT action: the process ends with SIGABRT");
    FILE *f = fopen(path, "rb");
    static uint8_t buf[65536];
    size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    struct emb_crash_record r;
    ok(emb_crash_decode(buf, len, &r, NULL) == 0, "its crash record decodes");
    ok(r.fault_class == EMB_FAULT_MONITOR && r.fault_code == EMB_MONITOR_IRQ_LOCK,
       "class monitor, code IRQ_LOCK");
    ok(!strcmp(function_of(bias + r.pc), "hold_irq_lock_for"), "pc: the opener, %s",
       function_of(bias + r.pc));
    uint32_t threshold = (uint32_t)(emb_port_timestamp_hz() / 10000u);
    ok(r.monitor_threshold == threshold, "the record keeps the threshold: %u cycles (set %u)",
       r.monitor_threshold, threshold);
    ok(us_of(r.monitor_interval) >= 300.0, "and the interval that crossed it: %.1f us (held 300)",
       us_of(r.monitor_interval));
    ok(emb_crash_status_reg(&r, EMB_CRASH_NAT_SIGNO) == 0u,
       "no signal in the status words: the library raised it");
    if (emb != NULL)
        check_rendering(emb, path, threshold);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    dl_iterate_phdr(find_bias, NULL);
    char err[256];
    self_elf = emb_elf_open("/proc/self/exe", err, sizeof err);
    if (!ok(self_elf != NULL, "own ELF opened"))
        return emb_test_done();
    struct emb_native_config c = {.mode = EMB_TRACE_MODE_SNAPSHOT, .ring_packets = 64, .stream_fd = -1};
    ok(emb_native_init(&c) == EMB_OK, "native port up");
    test_irq_lock();
    test_sched_lock();
    test_isr();
    test_threads_and_work();
    test_trace_events(dir);
    test_fault_action(dir, argc > 2 ? argv[2] : NULL);
    emb_native_shutdown();
    emb_elf_close(self_elf);
    return emb_test_done();
}
