/* A control loop traced with a barectf tracer (generated at build time from
 * sensor_barectf.yaml), for the foreign-CTF tests. Two barectf contexts write their
 * packets to two stream files of DIR: `sampler` (cycle_start, then three samples a cycle,
 * with jitter in settle_ns) and `controller` (actuate, every cycle). With SEED_AT >= 0,
 * cycle SEED_AT's actuation has another duty: the difference `emb diff` must name first.
 * The trace's `metadata` is barectf's, copied beside the streams by the test.
 *
 * usage: barectf_sensor DIR CYCLES SEED_AT JITTER */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "barectf_file_stream.h"

static unsigned next_random(unsigned *r)
{
    *r = *r * 1103515245u + 12345u;
    return *r >> 16;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: barectf_sensor DIR CYCLES SEED_AT JITTER\n");
        return 2;
    }
    long cycles = atol(argv[2]), seed_at = atol(argv[3]);
    unsigned jitter = (unsigned)strtoul(argv[4], NULL, 10) | 1u;
    struct barectf_file_stream sampler, controller;
    if (barectf_file_stream_open(&sampler, argv[1], "sampler") != 0 ||
        barectf_file_stream_open(&controller, argv[1], "controller") != 0)
        return 1;
    static const char *const units[3] = {"mV", "mA", "degC"};
    for (long c = 0; c < cycles; c++) {
        barectf_default_trace_cycle_start(&sampler.ctx, (uint32_t)c);
        for (uint8_t ch = 0; ch < 3; ch++)
            barectf_default_trace_sample(&sampler.ctx, (uint32_t)c, ch, (int16_t)((c * 37 + ch * 11) % 200 - 100),
                                         units[ch], 800u + next_random(&jitter) % 400u);
        uint16_t duty = (uint16_t)(500 + (c * 13) % 100 + (c == seed_at ? 250 : 0));
        barectf_default_trace_actuate(&controller.ctx, (uint32_t)c, duty);
    }
    return barectf_file_stream_close(&sampler) != 0 || barectf_file_stream_close(&controller) != 0;
}
