/* Writes RTEMS record item streams for the command-line tests and the fuzz seeds: versions
 * 1, 9 (RTEMS 5) and 10 (RTEMS 6) in all four formats from the simulated target
 * (rtems_stream.h), a version 10 stream that ends with items held on a processor, and a
 * few broken ones. Usage: make_rtems_streams DIR */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rtems_stream.h"

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "make_rtems_streams: %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_rtems_streams DIR\n");
        return 2;
    }
    mkdir(argv[1], 0755);
    static const uint32_t formats[4] = {0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u};
    static const char *const names[4] = {"le32", "le64", "be32", "be64"};
    int rc = 0;
    static const unsigned versions[3] = {1, 9, 10};
    for (unsigned v = 0; v < 3; v++) {
        unsigned version = versions[v];
        for (unsigned f = 0; f < 4; f++) {
            struct rs s;
            rs_init(&s, version, formats[f], 2, 64, 48000000u, 1234567u + version * 10 + f);
            for (unsigned r = 0; r < 30; r++) {
                for (unsigned cpu = 0; cpu < 2; cpu++) {
                    unsigned burst = (r % 7 == 3 && cpu == 1) ? 90 : 6 + r % 9;
                    for (unsigned i = 0; i < burst; i++)
                        rs_step(&s, cpu);
                }
                rs_drain(&s);
            }
            char name[64];
            snprintf(name, sizeof name, "v%u_%s.rec", version, names[f]);
            rc |= write_file(argv[1], name, s.out, s.len);
            if (version == 10 && f == 0) {
                rc |= write_file(argv[1], "bad_truncated.rec", s.out, s.len - 3);
                rc |= write_file(argv[1], "bad_header.rec", s.out, 6);
                s.out[4] ^= 0xFF;
                rc |= write_file(argv[1], "bad_magic.rec", s.out, s.len);
                s.out[4] ^= 0xFF;
                s.out[0] = 0x55;
                rc |= write_file(argv[1], "bad_format.rec", s.out, s.len);
                s.out[0] = 0x11;
                /* VERSION 11 */
                s.out[12] = 11;
                rc |= write_file(argv[1], "bad_version.rec", s.out, s.len);
                s.out[12] = 10;
                /* PROCESSOR_MAXIMUM item (the second) says 0: processor 1 is beyond it */
                s.out[20] = 0;
                rc |= write_file(argv[1], "bad_processor.rec", s.out, s.len);
                s.out[20] = 1;
                /* The FREQUENCY item (the fourth) made EMPTY: the header lacks it */
                s.out[32] = 0;
                rc |= write_file(argv[1], "bad_no_frequency.rec", s.out, s.len);
                s.out[32] = 4;
            }
            rs_free(&s);
        }
    }
    /* Processor 1 still holds items at the end: no uptime pair after its last overflow. */
    struct rs s;
    rs_init(&s, 10, formats[0], 2, 64, 48000000u, 99);
    for (unsigned r = 0; r < 8; r++) {
        for (unsigned cpu = 0; cpu < 2; cpu++)
            for (unsigned i = 0; i < 10; i++)
                rs_step(&s, cpu);
        rs_drain(&s);
    }
    rs_end_holding(&s, 1);
    rc |= write_file(argv[1], "v10_held.rec", s.out, s.len);
    rs_free(&s);
    return rc;
}
