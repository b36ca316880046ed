/* A sensor on a bus, polled once per frame. The register read is a small inline helper,
 * so a fault in it shows in `emb crash` as an inlined frame inside the driver. */
#define _GNU_SOURCE
#include "driver.h"

#include <emb/hooks.h>
#include <emb/native.h>
#include <emb/trace_events.h>

static struct emb_native_mutex bus_lock;
static uint32_t sensor_regs[4] = {0x40, 0x41, 0x42, 0x43};
static uint32_t fault_from = UINT32_MAX;

void sensor_driver_init(uint32_t fault_frame)
{
    emb_native_mutex_init(&bus_lock, "i2c-bus");
    fault_from = fault_frame;
}

/* Always inlined, in every build, so the crash report shows the inlined frame. */
__attribute__((always_inline)) static inline uint32_t sensor_read_register(const volatile uint32_t *regs,
                                                                           uint32_t reg)
{
    return regs[reg]; /* the seeded fault: regs is a bad pointer */
}

/* The register window: which bank the frame's poll reads. A seeded fault hands out a
 * pointer to nowhere, as a driver with a stale device handle would. */
static const volatile uint32_t *sensor_bank(uint32_t frame)
{
    if (frame >= fault_from)
        return (const volatile uint32_t *)(uintptr_t)0x10u;
    return sensor_regs;
}

uint32_t sensor_driver_poll(uint32_t frame)
{
    emb_native_mutex_lock(&bus_lock);
    uint32_t reg = frame % 4u;
    EMB_TRACE_user_event(CONSOLE_EV_SENSOR_POLL, frame, reg);
    uint32_t value = sensor_read_register(sensor_bank(frame), reg);
    /* Acknowledge with interrupts masked: a short critical section the IRQ_LOCK monitor
     * sees, opened here. */
    emb_port_irq_state irq = emb_irq_lock();
    sensor_regs[reg] = value + 1u;
    emb_irq_unlock(irq);
    emb_native_mutex_unlock(&bus_lock);
    return value;
}
