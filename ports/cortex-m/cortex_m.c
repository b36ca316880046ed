/* Cortex-M port: the cycle-counter clock and the CPU's ring. */
#include <emb/cortex_m.h>
#include <emb/log.h>
#include <emb/port.h>

#define EMB_CM_DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define EMB_CM_DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define EMB_CM_DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define EMB_CM_DEMCR_TRCENA (1u << 24)
#define EMB_CM_DWT_CYCCNTENA 1u

struct emb_trace_ring *emb_cm_ring = &emb_trace_unclaimed_ring;
struct emb_log_ring *emb_cm_log_ring = &emb_log_unclaimed_ring;

static uint32_t emb_cm_hz;
static uint32_t emb_cm_high;
static uint32_t emb_cm_last;

/* CYCCNT is 32 bits; a read that finds it lower than the previous one has seen a wrap.
 * Masking interrupts makes the compare-and-extend one step for every context. A wrap is
 * seen as long as something reads the clock at least once per 2^32 cycles. */
uint64_t emb_cm_timestamp(void)
{
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t low = EMB_CM_DWT_CYCCNT;
    if (low < emb_cm_last)
        emb_cm_high++;
    emb_cm_last = low;
    uint64_t now = ((uint64_t)emb_cm_high << 32) | low;
    emb_port_irq_restore(s);
    return now;
}

uint64_t emb_port_timestamp_hz(void)
{
    return emb_cm_hz;
}

int64_t emb_port_clock_offset_ns(void)
{
    return 0;
}

struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    return emb_cm_ring == &emb_trace_unclaimed_ring ? (struct emb_trace_ring *)0 : emb_cm_ring;
}

emb_status emb_cm_init(uint32_t cpu_hz, const uint8_t uuid[16], enum emb_trace_mode mode,
                       uint32_t classes, struct emb_trace_ring *ring, uint8_t *buf,
                       uint32_t *commit, uint32_t packets)
{
    EMB_CM_DEMCR |= EMB_CM_DEMCR_TRCENA;
    EMB_CM_DWT_CYCCNT = 0u;
    EMB_CM_DWT_CTRL |= EMB_CM_DWT_CYCCNTENA;
    emb_cm_hz = cpu_hz;
    emb_trace_init(uuid, mode, classes);
    emb_status status = emb_trace_ring_init(ring, 0u, EMB_CONTEXT_CPU, buf, commit, packets);
    if (status == EMB_OK)
        emb_cm_ring = ring;
    return status;
}

struct emb_log_ring *emb_port_log_ring_claim(void)
{
    return emb_cm_log_ring == &emb_log_unclaimed_ring ? (struct emb_log_ring *)0 : emb_cm_log_ring;
}

emb_status emb_cm_log_init(struct emb_log_ring *ring, uint8_t *buf, uint32_t size)
{
    emb_status status = emb_log_init();
    if (status == EMB_OK)
        status = emb_log_ring_init(ring, 0u, EMB_CONTEXT_CPU, buf, size);
    if (status == EMB_OK)
        emb_cm_log_ring = ring;
    return status;
}
