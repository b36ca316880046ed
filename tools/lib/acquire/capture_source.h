/* Capture sources (SPEC-015 §7): everything a target's bytes can arrive through, turned
 * into a trace stream file ("EMBT") and the log stream, for `emb capture` to seal.
 *
 *   file     a file: a trace stream as is, or the framed bytes a transport recorded
 *   tcp      HOST:PORT: the native port's record server over TCP (frames), after its token
 *   unix     PATH: the native port's record server on its owner-only AF_UNIX socket
 *   serial   a serial line (raw, 8N1, at a baud rate), frames; joined mid-stream
 *   swo      a raw SWO capture (ITM packets): stimulus port 1 trace, port 0 log
 *   gdb      HOST:PORT of a GDB server, the target halted for a moment at each poll:
 *            its rings read through the debug descriptor (the firmware's ELF names
 *            it), or its memory channel
 *   qmp      a QEMU guest's QMP socket (and its qtest socket, to write): the rings read
 *            through the debug descriptor while the guest runs, never halted
 *   pid      a live process of the native port: its memory channel, read without
 *            stopping it
 *   retained a memory image holding a retained ring (the native port's region file, a
 *            dump of a target's .noinit region): its frames, oldest first
 *
 * Frames on channel 1 rebuild the trace stream (trace_assemble.h); channel 0 frames are
 * the log stream, kept as frames (what `emb log` reads; over SWO, the bytes of stimulus
 * port 0 as they are); channel 2 frames are crash records the target sent (found at its
 * start), the newest kept for the capture's crash section; channel 3 carries shell replies. A capture stops at the end of its source,
 * after a number of packets, a duration, when the target's window has closed, or when
 * *stop becomes nonzero (Ctrl-C); whatever arrived until then is the result, and the
 * statistics say what was lost on the way.
 */
#ifndef EMB_HOST_CAPTURE_SOURCE_H
#define EMB_HOST_CAPTURE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "problem.h"

enum emb_source_kind {
    EMB_SOURCE_FILE,
    EMB_SOURCE_TCP,
    EMB_SOURCE_SERIAL,
    EMB_SOURCE_SWO,
    EMB_SOURCE_GDB,
    EMB_SOURCE_PID,
    EMB_SOURCE_RETAINED,
    EMB_SOURCE_UNIX,
    EMB_SOURCE_QMP,
};

/* How a GDB source reads the target. */
enum emb_gdb_via {
    EMB_GDB_VIA_AUTO,        /* the descriptor when the ELF has one and no memory channel */
    EMB_GDB_VIA_DESCRIPTOR,  /* the rings, log rings and crash record, through the descriptor */
    EMB_GDB_VIA_MEMCHAN,     /* the frames the firmware writes to its memory channel */
};

struct emb_source_stats {
    uint64_t bytes;          /* read from the source */
    uint64_t frames;         /* good frames */
    uint64_t bad_frames;     /* damaged frames dropped (CRC, COBS, length) */
    uint64_t packets;        /* trace packets kept */
    uint64_t headers;        /* stream headers seen */
    uint64_t foreign;        /* packets of another run (the target restarted) */
    uint64_t resyncs;        /* trace bytes skipped to find the next packet (SWO) */
    uint64_t log_bytes;
    uint64_t overflows;      /* SWO overflow packets */
    uint64_t replies;        /* shell replies */
    uint64_t crash_records;  /* crash records that came as channel 2 frames */
    uint64_t bad_crash_records; /* channel 2 frames that were no whole crash record */
    uint64_t polls;          /* gdb, pid */
    uint32_t retained_dropped, retained_cut, retained_lost; /* retained: the ring's counters */
    uint32_t retained_starts;
    uint64_t halts;
    double halt_ms_avg, halt_ms_max;
    /* gdb through the descriptor */
    bool via_descriptor;
    uint64_t packets_lost;   /* overwritten before a poll took them */
    uint64_t log_lost;       /* log ring bytes overwritten before a poll took them */
    uint64_t log_busy;       /* polls that found a log record half-written (taken later) */
    uint64_t released;       /* read positions written back: the host consumed */
    uint64_t round_trips, bytes_read;
    bool no_halt_refused;    /* gdb --no-halt: the server stopped the target to serve a read */
    /* qmp, gdb --no-halt: read while the target ran */
    bool live;
    uint64_t live_reads, live_writes;
    double access_ms_avg, access_ms_max; /* per read or write, request to reply */
    double poll_gap_ms_max;  /* through the descriptor: the longest the rings went unread
                              * (from the start of reading to the first poll, then between
                              * polls) */
    uint64_t elapsed_ms;
    bool window_closed;      /* the target said its window closed */
    char stop_reason[48];    /* "end of source", "duration", "count", "window closed", ... */
};

struct emb_source_options {
    enum emb_source_kind kind;
    const char *target;          /* path, HOST:PORT, device or PID */
    uint32_t baud;               /* serial; 0: 115200 */
    const char *token;           /* tcp: the record server's secret, sent before anything */
    const char *elf;             /* gdb, qmp: the firmware (its descriptor, or emb_memchan) */
    const char *qtest;           /* qmp: QEMU's qtest socket (writes), or NULL: read only */
    bool resume;                 /* qmp: resume a guest started paused (-S) */
    enum emb_gdb_via via;        /* gdb */
    bool no_halt;                /* gdb through the descriptor: read while the target runs,
                                  * never an interrupt, where the server serves that (halting
                                  * at each poll where it does not: stats.no_halt_refused) */
    uint64_t memchan_addr;       /* gdb, pid: the control block, when known */
    uint64_t ram_start, ram_end; /* gdb: where rings may lie; 0, 0: 0x20000000..+4 MB */
    unsigned pointer_size;       /* gdb: for an RTT-layout block; 0: 4 */
    double duration_s;           /* stop after this long; 0: no limit */
    uint64_t max_packets;        /* stop after this many trace packets; 0: no limit */
    bool arm;                    /* send ARM_WINDOW when the capture starts */
    bool until_window_closed;    /* stop once the window has closed and been sent */
    int poll_ms;                 /* gdb, pid: between polls; 0: 10 */
    volatile int *stop;          /* set nonzero to stop (a signal handler) */
    void (*progress)(void *arg, const struct emb_source_stats *stats);
    void *progress_arg;
    /* Called as the trace stream grows, at every read of the source (every poll, every
     * chunk a link delivered): the stream's header as it stands and the whole packets
     * that arrived since the last call, in order, the first call with the first packets.
     * NULL: none. A live view (emb top) decodes only those. */
    void (*on_packets)(void *arg, const uint8_t *header, size_t header_len,
                       const uint8_t *packets, size_t packets_len);
    /* Likewise for the log stream (struct emb_source_result.log): the bytes that arrived
     * since the last call, with packets_arg. NULL: none. */
    void (*on_log)(void *arg, const uint8_t *bytes, size_t len);
    void *packets_arg;
};

struct emb_source_result {
    uint8_t *trace;  /* a trace stream file, or NULL when no stream header arrived */
    size_t trace_len;
    uint8_t *log;    /* the log stream: channel-0 frames in order (SWO: port 0 bytes), or NULL */
    size_t log_len;
    uint8_t *crash;  /* the crash record the target holds (gdb through the descriptor) or sent
                      * (a channel 2 frame, the newest), or NULL */
    size_t crash_len;
    struct emb_source_stats stats;
};

/* Captures until a stop condition. Returns 0 when the source could be read (even if it
 * gave nothing, or stopped early: see stats.stop_reason), -1 when it could not be opened
 * or failed before anything arrived. What went wrong, and what the reader noticed on the
 * way, goes to `problems` (errors; messages never name the source, which is the sink's
 * `file`, except a connection failure's, which names the address it tried). */
int emb_source_capture(const struct emb_source_options *opt, struct emb_source_result *res,
                       struct emb_problems *problems);
void emb_source_result_free(struct emb_source_result *res);

/* Parses a source option value: "tcp" etc. Returns -1 for an unknown name. */
int emb_source_kind_parse(const char *name);

#endif /* EMB_HOST_CAPTURE_SOURCE_H */
