/* A sensor driver with two bugs, reached on command: the example's crash story. */
#include <emb/log.h>
#include <emb/trace_events.h>

#include "fw.h"
#include "sensor.h"

EMB_LOG_MODULE_DEFINE(sensor, EMB_LOG_LEVEL_DBG);

extern volatile struct fw_stats fw_stats;

/* The averaging step divides by the samples taken: zero when the device never answered.
 * (Kept a function of its own, called as written, so the crash names it.) */
__attribute__((noipa)) static void sensor_average(struct sensor *s)
{
    s->average = s->sum / s->samples;
    s->updates++;
}

uint32_t sensor_driver_poll(struct sensor *s)
{
    EMB_TRACE_user_event(FW_EV_SENSOR, fw_stats.sensor_events++, s->id);
    EMB_LOG_INF(sensor, "sensor %u: polling, status register at %p", (unsigned)s->id, (const void *)s->regs);
    fw_stats.logs_sensor++;
    /* On a board variant without this device the register block is not mapped: the read
     * is a precise bus fault. */
    uint32_t status = s->regs->status;
    if (status & 1u) {
        s->sum += s->regs->data;
        s->samples++;
    }
    sensor_average(s);
    return s->average;
}
