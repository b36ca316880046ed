/* A barectf context whose packets go to a file: the platform the foreign-CTF test programs
 * (barectf_sensor.c, barectf_enum.c) share. Each program is built against the tracer
 * barectf generated from its own configuration, whose data stream type is `default`. */
#ifndef BARECTF_FILE_STREAM_H
#define BARECTF_FILE_STREAM_H

#include <stdint.h>
#include <stdio.h>

#include "barectf.h"

#define BARECTF_FILE_PACKET_BYTES 512u

struct barectf_file_stream {
    struct barectf_default_ctx ctx;
    FILE *file;
    uint8_t buf[BARECTF_FILE_PACKET_BYTES];
};

/* Creates DIR/NAME and opens the first packet; 0, or -1 (said on stderr). */
int barectf_file_stream_open(struct barectf_file_stream *s, const char *dir, const char *name);
/* Writes the open packet if it holds events, and closes the file; 0 or fclose's error. */
int barectf_file_stream_close(struct barectf_file_stream *s);

#endif
