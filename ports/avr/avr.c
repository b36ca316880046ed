/* AVR port: the tick clock, the one context's rings and registry entry, USART0 as the
 * plain-text log's output, the crash record region in `.noinit`, and the fault path that
 * writes the v2 record and resets through the watchdog. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/wdt.h>

#include <emb/avr.h>
#include <emb/crash.h>
#include <emb/descriptor.h>
#include <emb/log.h>
#include <emb/port.h>
#include <emb/trace_events.h>

volatile uint32_t emb_avr_ticks;
struct emb_trace_ring *emb_avr_ring = &emb_trace_unclaimed_ring;
struct emb_log_ring *emb_avr_log_ring = &emb_log_unclaimed_ring;

/* The v2 record's region: not cleared by the start-up code, so a watchdog reset keeps it
 * (the 64 bytes hold the 40-byte fixed part, the CRC and no flight packets). */
#define EMB__AVR_RECORD_SIZE 64u
static uint8_t emb__avr_record[EMB__AVR_RECORD_SIZE] __attribute__((section(".noinit"), aligned(4)));
static uint8_t emb__avr_reset_cause;

uint64_t emb_port_timestamp_hz(void)
{
    return EMB_AVR_TICK_HZ;
}

int64_t emb_port_clock_offset_ns(void)
{
    return 0; /* no wall clock */
}

struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    return emb_avr_ring == &emb_trace_unclaimed_ring ? (struct emb_trace_ring *)0 : emb_avr_ring;
}

struct emb_log_ring *emb_port_log_ring_claim(void)
{
    return emb_avr_log_ring == &emb_log_unclaimed_ring ? (struct emb_log_ring *)0 : emb_avr_log_ring;
}

struct emb_monitor_ctx *emb_port_monitor_ctx(void)
{
    return (struct emb_monitor_ctx *)0; /* tiny: no monitors */
}

void emb_port_stats_reset(void)
{
}

emb_status emb_stats_thread_get(emb_thread_t thread, emb_stats_thread_t *out)
{
    (void)thread;
    (void)out;
    return EMB_E_NOTFOUND; /* no threads without a kernel */
}

emb_status emb_stats_object_get(emb_handle_t handle, emb_stats_object_t *out)
{
    (void)handle;
    (void)out;
    return EMB_E_NOTFOUND;
}

uint8_t emb_avr_reset_cause(void)
{
    return emb__avr_reset_cause;
}

/* ---- USART0 ---- */

void emb_avr_uart_write(const uint8_t *bytes, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        while ((UCSR0A & (1u << UDRE0)) == 0u) {
        }
        UDR0 = bytes[i];
    }
}

static emb_status emb__avr_log_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    emb_avr_uart_write(bytes, len);
    return EMB_OK;
}

static const struct emb_log_output emb__avr_log_output = {emb__avr_log_write, (void *)0};

/* ---- The tick: timer 0, CTC, prescaler 64 ---- */

ISR(TIMER0_COMPA_vect)
{
    emb_avr_ticks++;
}

static void emb__avr_tick_start(uint32_t cpu_hz)
{
    TCCR0A = (uint8_t)(1u << WGM01);
    OCR0A = (uint8_t)(cpu_hz / 64u / EMB_AVR_TICK_HZ - 1u);
    TIMSK0 = (uint8_t)(1u << OCIE0A);
    TCCR0B = (uint8_t)((1u << CS01) | (1u << CS00));
}

/* ---- The registry: the one context (this CPU) and its rings, for the reduced
 * descriptor's contexts, rings and log sections (a tool reads them out of RAM) ---- */

#if EMB_DESC_REDUCED_TRACE
static struct emb_context_info emb__avr_context;
#endif
#if EMB_DESC_REDUCED_LOG
static struct emb_log_ring *emb__avr_log_rings[1];
#endif

static void emb__avr_registry(struct emb_trace_ring *ring)
{
#if EMB_DESC_REDUCED_TRACE
    emb__avr_context.ring = ring;
    emb__avr_context.state = EMB_CONTEXT_LIVE;
    emb_debug_registry.contexts = &emb__avr_context;
    emb_debug_registry.context_stride = sizeof emb__avr_context;
    emb_debug_registry.context_capacity = 1u;
    emb_debug_registry.context_count = ring != (struct emb_trace_ring *)0 ? 1u : 0u;
#else
    (void)ring;
#endif
}

void emb_avr_set_log_ring(struct emb_log_ring *ring)
{
    emb_avr_log_ring = ring;
#if EMB_DESC_REDUCED_LOG
    emb__avr_log_rings[0] = ring;
    emb_debug_registry.log_rings = emb__avr_log_rings;
    emb_debug_registry.log_ring_count = 1u;
#endif
}

/* ---- Start ---- */

emb_status emb_avr_start(const struct emb_avr_config *c)
{
    if (c == (const struct emb_avr_config *)0 || c->cpu_hz / 64u / EMB_AVR_TICK_HZ - 1u > 255u ||
        c->baud == 0u)
        return EMB_E_INVALID;
    emb__avr_reset_cause = MCUSR;
    MCUSR = 0;
    wdt_disable(); /* a watchdog reset leaves the watchdog running */
    uint16_t ubrr = (uint16_t)((c->cpu_hz + 8u * c->baud) / (16u * c->baud) - 1u);
    UBRR0H = (uint8_t)(ubrr >> 8);
    UBRR0L = (uint8_t)ubrr;
    UCSR0C = (uint8_t)((1u << UCSZ01) | (1u << UCSZ00));
    UCSR0B = (uint8_t)(1u << TXEN0);
    emb_log_set_output(&emb__avr_log_output);
    const uint8_t uuid[16] = {0};
    emb_trace_init(uuid, EMB_TRACE_MODE_SNAPSHOT, c->classes);
    if (c->ring != (struct emb_trace_ring *)0) {
        emb_status s = emb_trace_ring_init(c->ring, 0u, EMB_CONTEXT_CPU, c->ring_buf,
                                           c->ring_commit, c->ring_packets);
        if (s != EMB_OK)
            return s;
        emb_avr_ring = c->ring;
    }
#if CONFIG_EMB_CRASH
    (void)emb_crash_retained_init(emb__avr_record, sizeof emb__avr_record);
#endif
    emb_debug_registry.ring_packets = c->ring_packets;
    emb__avr_registry(c->ring);
    emb_debug_registry_identity((const uint8_t *)0, 0u, EMB_AVR_TICK_HZ, 0);
    emb__avr_tick_start(c->cpu_hz);
    sei();
    return EMB_OK;
}

/* ---- Faults ---- */

static void emb__avr_fault_at(uint8_t fault_class, uint8_t code, uint32_t pc)
    __attribute__((noreturn));

/* The caller's call instruction, as a byte address: the return address (the AVR stacks
 * word addresses) less one word, inside the call, so it names the caller's line (a
 * noreturn call may be its function's last instruction). */
#if defined(__AVR_3_BYTE_PC__)
#define EMB__AVR_CALLER() 0u /* a 3-byte return address: GCC gives only 2 of its bytes */
#else
#define EMB__AVR_CALLER() ((uint32_t)(uintptr_t)__builtin_return_address(0) * 2u - 2u)
#endif

void emb_avr_fault(uint8_t fault_class, uint8_t code)
{
    emb__avr_fault_at(fault_class, code, EMB__AVR_CALLER());
}

static void emb__avr_fault_at(uint8_t fault_class, uint8_t code, uint32_t pc)
{
    cli();
    struct emb_trace_ring *ring = emb_port_trace_ring_claim();
    if (ring != (struct emb_trace_ring *)0) {
        emb_trace_enter_handler(ring, EMB_EVT_KIND_FAULT);
        EMB_TRACE_partition_fault(0u, fault_class, 0u, code, pc);
        emb_trace_flush(ring);
    }
#if CONFIG_EMB_CRASH
    uint8_t sp_low = SPL, sp_high = SPH;
    const struct emb_crash_info info = {
        .uptime_ticks = emb_avr_ticks, .reset_reason = EMB_RESET_WATCHDOG,
        .fault_class = fault_class, .fault_code = code, .pc = pc,
        .sp = (uint32_t)sp_low | (uint32_t)sp_high << 8,
        .stack_base = RAMSTART, .stack_size = RAMEND + 1u - RAMSTART,
    };
    (void)emb_crash_write(&info);
#endif
    wdt_enable(WDTO_15MS);
    for (;;) {
    }
}

void emb_port_fault(uint8_t fault_class, uint8_t code, uintptr_t pc, uint32_t value,
                    uint32_t limit)
{
    (void)value;
    (void)limit;
    emb__avr_fault_at(fault_class, code, (uint32_t)pc);
}
