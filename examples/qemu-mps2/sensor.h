/* The example's sensor driver. */
#ifndef SENSOR_H
#define SENSOR_H

#include <stdint.h>

struct sensor_regs {
    uint32_t status; /* bit 0: a sample is ready */
    uint32_t data;
};

struct sensor {
    uint16_t id;
    volatile struct sensor_regs *regs;
    uint32_t sum;
    uint32_t samples;
    uint32_t average;  /* sum / samples, kept up to date by each poll */
    uint32_t updates;
};

/* Reads a sample if one is ready and returns the running average. */
uint32_t sensor_driver_poll(struct sensor *s);

#endif /* SENSOR_H */
