/* What the capture sources share (capture_source.c, capture_links.c, capture_memory.c):
 * one capture's state, what arrives from any source (frames, a raw trace stream), when to
 * stop, and how a problem reaches the caller's sink. */
#ifndef EMB_HOST_CAPTURE_SOURCE_INTERNAL_H
#define EMB_HOST_CAPTURE_SOURCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "capture_source.h"
#include "problem.h"

/* Splits a raw trace stream that may have lost bytes (SWO) into its header and whole
 * packets for the assembler, skipping to the next packet magic after a loss. */
struct emb_source_splitter {
    struct emb_buf buf;
    bool have_header;
    uint32_t packet_size;
};

/* One capture in progress. */
struct emb_source_run {
    const struct emb_source_options *o;
    struct emb_source_stats *st;
    struct emb_source_result *res;
    struct emb_problems *problems;
    struct emb_frame_dec *dec;
    struct emb_trace_assembler *tasm;
    struct emb_buf log;
    struct emb_buf crash;       /* the newest whole crash record that came on channel 2 */
    struct emb_source_splitter sp;
    struct emb_buf down;        /* command frames waiting to go to the target */
    uint64_t start_ms, last_progress_ms, last_ping_ms, last_packet_ms, closed_ms;
    uint64_t last_packets;
    size_t packets_given;       /* bytes of packets handed to o->on_packets */
    size_t log_given;           /* log bytes handed to o->on_log */
    uint32_t cookie;
    bool direct;                /* the trace and log arrive whole, not as frames */
};

/* How long a target must stay quiet after its window closed (or its tracing went off)
 * before the capture stops: what it sent before is still on its way. */
#define EMB_SOURCE_IDLE_AFTER_CLOSE_MS 300u

/* The sources, each returning 0 when it could be read, -1 after reporting why not. */
int emb_source_file(struct emb_source_run *c);
int emb_source_tcp(struct emb_source_run *c);
int emb_source_unix(struct emb_source_run *c);
int emb_source_serial(struct emb_source_run *c);
int emb_source_swo(struct emb_source_run *c);
int emb_source_retained(struct emb_source_run *c);
int emb_source_gdb(struct emb_source_run *c);
int emb_source_pid(struct emb_source_run *c);
int emb_source_qmp(struct emb_source_run *c);

struct emb_elf;
struct emb_mem;
/* Follows the firmware's rings through its debug descriptor over `mem` while the target
 * runs (nothing holds it between polls); with `read_only`, no read position is written
 * back. 0, or -1 after reporting why not. */
int emb_source_descriptor(struct emb_source_run *c, struct emb_elf *elf, struct emb_mem *mem,
                          bool read_only);

/* Updates the statistics (and the progress callback), then returns a reason to stop, or
 * NULL to go on. */
const char *emb_source_should_stop(struct emb_source_run *c);
/* Hands the packets past those given before to o->on_packets, if any (the stream so
 * far: its header, and every packet in order). */
void emb_source_give_packets(struct emb_source_run *c, const uint8_t *header, size_t header_len,
                             const uint8_t *packets, size_t packets_len);
/* Likewise the log stream's bytes past those given before to o->on_log (the stream so
 * far). */
void emb_source_give_log(struct emb_source_run *c, const uint8_t *log, size_t len);
/* Records why the capture stopped. */
void emb_source_stopped(struct emb_source_run *c, const char *why);

/* An error about the source, to the caller's sink. The message never names the source:
 * the sink's `file` does. */
void emb_source_error(struct emb_source_run *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* An error from a layer whose message names the address it could not reach already (the
 * connection helpers): reported without the sink's file, so the name appears once. */
void emb_source_error_named(struct emb_source_run *c, const char *message);

void emb_source_sleep_ms(int ms);

#endif /* EMB_HOST_CAPTURE_SOURCE_INTERNAL_H */
