/* A barectf tracer (generated at build time from enum_barectf.yaml) writing one `reading`
 * event per value below to the stream file DIR/readings: `level` is a 64-bit unsigned
 * enumeration whose one label, WIDE, names the range [1, 2^40], so values on both sides of
 * INT32_MAX fall inside it and two fall outside; `mode` is an enumeration whose labels each
 * name one value. The trace's `metadata` is barectf's, copied beside the stream by the test.
 *
 * usage: barectf_enum DIR */
#include <stdint.h>
#include <stdio.h>

#include "barectf_file_stream.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: barectf_enum DIR\n");
        return 2;
    }
    static const uint64_t levels[] = {
        0u, 1u, 2u, 5u, UINT64_C(0x7FFFFFFF), UINT64_C(0x80000000), UINT64_C(0x100000000),
        UINT64_C(1) << 40, (UINT64_C(1) << 40) + 1u};
    struct barectf_file_stream s;
    if (barectf_file_stream_open(&s, argv[1], "readings") != 0)
        return 1;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        barectf_default_trace_reading(&s.ctx, levels[i], (uint8_t)(i & 1u));
    return barectf_file_stream_close(&s) != 0;
}
